"""The DOCX and PDF text of a service dev knowledge base written for issue 28 (an invoicing
software subscription with a help centre), kept apart from `kb_documents` so each module stays
short."""

from __future__ import annotations

from .kb_files import DocxBlock, KbFile, Page

INVOICING_CLIENTS: list[DocxBlock] = [
    ("h1", "Clients and invoices"),
    (
        "p",
        "Each client in Tallybook holds a name, an address, a VAT number and the payment terms "
        "you agreed with them.",
    ),
    ("h2", "Importing clients from a spreadsheet"),
    ("p", "To import your clients from a spreadsheet, do the following:"),
    ("num", "Save the spreadsheet as a CSV file with one client on each row."),
    ("num", "Open Clients and choose Import from the menu at the top right."),
    ("num", "Match each column of your file to a Tallybook field, such as name or email."),
    ("num", "Check the preview and click Import to add the clients."),
    ("h2", "Sending invoices by post"),
    (
        "p",
        "Some clients still want paper. We print your invoice, put it in an envelope and post it "
        "for 1.20 euros per letter within the EU.",
    ),
    ("h2", "What each plan includes"),
    (
        "table",
        [
            ["Plan", "Users", "Invoices a month", "File storage"],
            ["Starter", "1", "20", "1 GB"],
            ["Pro", "Up to 3", "Unlimited", "25 GB"],
        ],
    ),
    (
        "p",
        "Storage holds the receipts and attachments you upload; invoices themselves do not count.",
    ),
]

INVOICING_START_PDF: list[Page] = [
    [
        "Getting started with Tallybook",
        "Connecting your bank",
        "To connect your bank account, open Settings, choose Bank accounts and click",
        "Add bank. Pick your bank from the list and sign in with your own bank's app.",
        "Tallybook can only read your transactions; it can never move money.",
        "Your first invoice",
        "Invoice numbers follow on from each other automatically. You can choose the",
        "number to start from once, before you send your first invoice.",
    ],
    [
        "When something goes wrong",
        "If payments from your bank stop showing up in Tallybook, the connection to",
        "your bank has most likely expired. Banks ask you to sign in again every 90 days;",
        "open Settings, choose Bank accounts and click Reconnect.",
        "If your clients say they never got an invoice email, ask them to check their",
        "spam folder and add invoices@tallybook.example to their contacts.",
    ],
]

# Where each is written, under loadtests/answers.
FILES = (
    KbFile.docx("invoicing_kb/clients.docx", INVOICING_CLIENTS),
    KbFile.pdf("invoicing_kb/getting-started.pdf", INVOICING_START_PDF),
)
