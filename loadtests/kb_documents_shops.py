"""The DOCX and PDF text of two small-shop dev knowledge bases written for issue 28 (a tea and
coffee shop with a subscription club, a phone repair shop with a membership), kept apart from
`kb_documents` so each module stays short."""

from __future__ import annotations

from .kb_files import DocxBlock, KbFile, Page

TEASHOP_TEAWARE: list[DocxBlock] = [
    ("h1", "Kettles and teaware"),
    (
        "p",
        "We sell electric kettles, glass teapots and cast-iron teapots, tested in our tea room "
        "before they go on sale.",
    ),
    ("h2", "Guarantee"),
    (
        "p",
        "Every electric kettle we sell has a two-year guarantee. If the kettle stops heating, "
        "does not switch itself off when the water boils, or leaks from the base, we repair or "
        "replace it free of charge.",
    ),
    ("p", "The guarantee does not cover limescale damage or a kettle that has been dropped."),
    ("h2", "Descaling your kettle"),
    ("p", "To descale a kettle, follow these steps:"),
    ("num", "Fill the kettle halfway with equal parts of water and white vinegar."),
    ("num", "Bring it to the boil and leave it to stand for one hour."),
    ("num", "Pour the liquid away and scrub the base gently with a soft brush."),
    ("num", "Boil fresh water twice and pour it away before you make tea again."),
    ("h2", "Our kettles"),
    (
        "table",
        [
            ["Kettle", "Capacity", "Temperature settings", "Price"],
            ["Classic steel kettle", "1.7 litres", "None", "39 euros"],
            ["Gooseneck pour-over kettle", "0.8 litres", "60 to 100 degrees", "69 euros"],
            ["Glass tea kettle", "1.2 litres", "Five presets", "55 euros"],
        ],
    ),
]

TEASHOP_BREWING_PDF: list[Page] = [
    [
        "Brewing guide",
        "Green tea",
        "Brew green tea with water at 75 to 80 degrees for 2 to 3 minutes.",
        "Boiling water makes green tea bitter.",
        "Black tea",
        "Black tea needs freshly boiled water and 3 to 5 minutes. Use one teaspoon",
        "of leaves for every cup.",
    ],
    [
        "Coffee at home",
        "For a French press, use coarsely ground coffee, 60 grams for every litre of water,",
        "and let it brew for four minutes before you press.",
        "Ground coffee keeps its flavour for about two weeks once the pack is open.",
    ],
]

PHONEFIX_POST: list[DocxBlock] = [
    ("h1", "Repairs by post and prices"),
    (
        "p",
        "If you cannot come to the shop, you can send us your phone. We repair it within two "
        "working days of receiving it and send it back insured.",
    ),
    ("h2", "Sending us your phone"),
    ("p", "To send your phone for repair, do the following:"),
    ("num", "Fill in the repair form on our website and print the confirmation."),
    ("num", "Remove the SIM card and any memory card from the phone."),
    ("num", "Pack the phone in bubble wrap with the printed confirmation."),
    ("num", "Post it to FixPoint, Station Square 7, with tracked delivery."),
    ("p", "Return postage is 7 euros, added to the repair price."),
    ("h2", "Repair prices"),
    (
        "table",
        [
            ["Phone", "Screen replacement", "Battery replacement"],
            ["iPhone 13", "189 euros", "89 euros"],
            ["iPhone 15", "279 euros", "99 euros"],
            ["Samsung Galaxy S23", "229 euros", "79 euros"],
            ["Google Pixel 8", "199 euros", "75 euros"],
        ],
    ),
    ("p", "Prices include fitting and the 6-month repair warranty."),
]

PHONEFIX_CARE_PDF: list[Page] = [
    [
        "Looking after your phone",
        "If your phone gets wet",
        "Switch the phone off at once and do not try to charge it.",
        "Do not put it in rice; bring it to us within 24 hours so that we can dry",
        "and clean the inside before it corrodes.",
    ],
    [
        "Battery care",
        "A phone battery lasts about 500 full charges. When the battery health",
        "shown in the settings falls below 80 percent, a new battery is worth it.",
        "Keep your phone out of hot cars; heat wears the battery faster than anything else.",
    ],
]

# Where each is written, under loadtests/answers.
FILES = (
    KbFile.docx("teashop_kb/teaware.docx", TEASHOP_TEAWARE),
    KbFile.docx("phonefix_kb/post-and-prices.docx", PHONEFIX_POST),
    KbFile.pdf("teashop_kb/brewing-guide.pdf", TEASHOP_BREWING_PDF),
    KbFile.pdf("phonefix_kb/phone-care.pdf", PHONEFIX_CARE_PDF),
)
