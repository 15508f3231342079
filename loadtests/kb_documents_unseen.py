"""The DOCX and PDF text of the telecom, airline and permits knowledge bases, written for the
hostile benchmark on domains no gate rule was tuned on (kinds as in `kb_files.DocxBlock`)."""

from __future__ import annotations

from .kb_files import DocxBlock, KbFile, Page

TELECOM_BROADBAND: list[DocxBlock] = [
    ("h1", "Home broadband"),
    (
        "p",
        "Brightwave fibre broadband is available to homes where the street cabinet has been "
        "upgraded. Check your postcode on our coverage page before you order.",
    ),
    ("h2", "Getting connected"),
    ("p", "To get connected, follow these steps:"),
    ("num", "Order online and choose an installation date at least 10 days ahead."),
    ("num", "Wait for the router, which we post 3 days before that date."),
    ("num", "Make sure an adult is at home between 8:00 and 13:00 on the day."),
    ("num", "Plug in the router once the engineer has tested the line."),
    ("h2", "Broadband prices"),
    (
        "table",
        [
            ["Speed", "Monthly price", "Setup fee"],
            ["150 Mbps", "25 pounds", "Free"],
            ["500 Mbps", "32 pounds", "^"],
            ["900 Mbps", "45 pounds", "30 pounds"],
        ],
    ),
    (
        "p",
        "Mobile customers get 5 pounds off any broadband plan. The router stays ours and must "
        "be returned within 30 days of leaving, or we charge 60 pounds.",
    ),
]

AIRLINE_SPECIAL_PDF: list[Page] = [
    [
        "Special items",
        "Sports equipment",
        "One set of golf clubs or one pair of skis with boots counts as a checked bag and",
        "is carried at the normal checked bag price. Bicycles must be packed in a box or",
        "bag with the pedals removed and cost 75 euros per flight.",
        "Musical instruments",
        "A guitar or violin may come into the cabin instead of a cabin bag if it fits in",
        "the overhead locker. Larger instruments need a seat of their own, bought at the",
        "same fare as the passenger's ticket.",
    ],
    [
        "Mobility aids",
        "Wheelchairs and walking frames are carried free and do not count towards the",
        "allowance. Passengers with a battery-powered wheelchair must tell us at least",
        "48 hours before departure, so that the battery can be checked.",
        "Items we do not carry",
        "Fireworks, gas canisters and lithium batteries over 160 Wh are not allowed on",
        "board or in the hold. Knives with a blade longer than 6 cm may travel only in",
        "checked bags.",
    ],
]

PERMITS_BUILDING_WORKS: list[DocxBlock] = [
    ("h1", "Skips, scaffolding and building materials on the road"),
    (
        "p",
        "A skip, scaffolding or a pile of building materials on a road or pavement needs a "
        "licence from the council before it is put there. The company that owns the skip or "
        "scaffolding applies, not the householder.",
    ),
    ("h2", "How to apply"),
    ("p", "To get a licence, the company must:"),
    ("num", "Apply online at least 5 working days before the start date."),
    ("num", "Send a copy of its public liability insurance of at least 10 million pounds."),
    ("num", "Pay the fee; the licence is emailed once the fee is paid."),
    ("num", "Keep a copy of the licence on site for as long as the skip or scaffolding stays."),
    ("h2", "Licence fees"),
    (
        "table",
        [
            ["Licence", "Fee", "Lasts"],
            ["Skip", "45 pounds", "28 days"],
            ["Scaffolding or hoarding", "120 pounds", "^"],
            ["Building materials", "60 pounds", "14 days"],
        ],
    ),
    (
        "p",
        "A licence can be extended once by the same period for the same fee. Skips must have "
        "lights at each corner at night and must not block a drain, a fire hydrant or a bus "
        "stop. Work without a licence can be fined up to 1,000 pounds.",
    ),
]

COURIER_ABROAD: list[DocxBlock] = [
    ("h1", "Sending abroad and restricted items"),
    (
        "p",
        "Larkfield Parcels delivers to 40 countries through its partners. An international "
        "parcel may weigh up to 20 kg, and every parcel leaving the customs union needs a "
        "customs declaration.",
    ),
    ("h2", "Filling in a customs declaration"),
    ("p", "For a parcel leaving the customs union, the sender must:"),
    ("num", "Describe each item in plain words; 'gift' or 'sample' alone is not accepted."),
    ("num", "Give the value and the country of origin of each item."),
    ("num", "Attach the three printed copies to the outside of the parcel in the clear pouch."),
    ("h2", "International prices"),
    (
        "table",
        [
            ["Zone", "Price up to 2 kg", "Price up to 20 kg", "Delivered within"],
            ["Zone 1: neighbouring countries", "14 euros", "32 euros", "3 to 4 working days"],
            ["Zone 2: rest of Europe", "19 euros", "45 euros", "^"],
            ["Zone 3: rest of the world", "35 euros", "110 euros", "7 to 12 working days"],
        ],
    ),
    (
        "p",
        "Lithium batteries may be sent only inside the device they power, at most two per "
        "parcel, and never by air to Zone 3. Perfume and nail varnish are accepted within the "
        "mainland but not abroad. Live animals, firearms and fireworks are never accepted.",
    ),
]

# Where each is written, under loadtests/answers.
FILES = (
    KbFile.docx("telecom_kb/broadband.docx", TELECOM_BROADBAND),
    KbFile.docx("permits_kb/building-works.docx", PERMITS_BUILDING_WORKS),
    KbFile.docx("courier_kb/abroad.docx", COURIER_ABROAD),
    KbFile.pdf("airline_kb/special-items.pdf", AIRLINE_SPECIAL_PDF),
)
