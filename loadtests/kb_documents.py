"""The DOCX and PDF text of the bikeshop, cowork, waste, hotel and library knowledge bases,
written by `loadtests.kb_fixtures` (kinds as in `kb_files.DocxBlock`)."""

from __future__ import annotations

from .kb_files import DocxBlock, KbFile, Page

BIKESHOP_WORKSHOP: list[DocxBlock] = [
    ("h1", "Workshop and servicing"),
    (
        "p",
        "Our workshop in the Old Town store services every make of bike, not only the ones "
        "we sell.",
    ),
    ("h2", "Booking a service"),
    ("p", "To book a service, follow these steps:"),
    ("num", "Choose a service from the price list below."),
    ("num", "Pick a drop-off day in the online booking calendar."),
    ("num", "Bring the bike to the Old Town store before 10 am on that day."),
    ("num", "Wait for our text message telling you the bike is ready, usually the same day."),
    ("num", "Pay and collect the bike before the store closes."),
    ("p", "Bookings cancelled less than 24 hours before the drop-off day are charged 15 euros."),
    ("h2", "Service prices"),
    (
        "table",
        [
            ["Service", "Price", "How long it takes"],
            ["Puncture repair", "12 euros", "30 minutes"],
            ["Basic service", "59 euros", "Same day"],
            ["Full service", "119 euros", "1 to 2 days"],
            ["E-bike service", "139 euros", "^"],
            ["Hydraulic brake bleed", "35 euros per brake", "Same day"],
        ],
    ),
    ("p", "Parts are charged on top of the service price."),
]

BIKESHOP_WARRANTY_PDF: list[Page] = [
    [
        "Warranty",
        "Frames",
        "Every bike frame we sell has a 5-year warranty against breaks and cracks.",
        "Gears, brakes, wheels and other parts are covered for 2 years from the date",
        "of purchase.",
        "Electric bikes",
        "The battery and motor of an e-bike are covered for 2 years or 500 charge",
        "cycles, whichever comes first.",
    ],
    [
        "What the warranty does not cover",
        "Normal wear of tyres, brake pads, chains and cables is not covered.",
        "Damage from a crash, from racing, or from a repair done outside an authorised",
        "workshop is not covered either.",
        "Making a warranty claim",
        "Bring the bike and your receipt to either store. We inspect it within 5",
        "working days and repair or replace the faulty part free of charge.",
    ],
]

COWORK_ROOMS: list[DocxBlock] = [
    ("h1", "Meeting rooms"),
    ("p", "Hive Works has three meeting rooms on the first floor, all with whiteboards."),
    ("h2", "How to book a meeting room"),
    ("p", "Booking a room takes five steps:"),
    ("num", "Sign in to the Hive Works member app."),
    ("num", "Open the Rooms tab and pick a date."),
    ("num", "Choose a room that fits your group."),
    ("num", "Confirm the booking; the hours come out of your plan's monthly allowance first."),
    (
        "num",
        "Check in on the tablet beside the door within 15 minutes of the start, or the room "
        "is released.",
    ),
    ("h2", "Rooms and prices"),
    (
        "table",
        [
            ["Room", "Seats", "Price per hour", "Equipment"],
            ["Atlas", "4", "20 euros", "TV screen"],
            ["Borealis", "8", "35 euros", "Projector"],
            ["Cosmos", "16", "60 euros", "Projector and video conference kit"],
        ],
    ),
    (
        "p",
        "Hours beyond your plan's allowance are charged at the room's hourly price. A booking "
        "cancelled less than two hours before it starts is charged in full.",
    ),
]

COWORK_HANDBOOK_PDF: list[Page] = [
    [
        "Member handbook",
        "Key cards",
        "Your key card opens the front door and the lift. A lost key card costs 15",
        "euros to replace.",
        "Guests",
        "Members can bring up to two guests a day for free. Guests are signed in at",
        "reception and wear a visitor badge.",
        "Kitchen",
        "Coffee and tea are free for members and their guests. Put your cups in the",
        "dishwasher before you leave.",
    ],
    [
        "Printing",
        "Printing costs 10 cents a page in black and white and 30 cents a page in colour.",
        "Send your print jobs to the printer called Hive-Print from the member Wi-Fi.",
        "Quiet floor",
        "The second floor is a quiet zone. Take phone calls in the phone booths on the",
        "first floor.",
    ],
]

WASTE_BULKY: list[DocxBlock] = [
    ("h1", "Bulky waste collection"),
    (
        "p",
        "Furniture, mattresses, fridges and other large household items that do not fit in "
        "a bin are collected from your home on a booked day.",
    ),
    ("h2", "How to book"),
    ("p", "To book a bulky waste collection:"),
    ("num", "Make a list of the items, with their sizes."),
    ("num", "Book online or call 0800 123 456 and choose a collection date."),
    ("num", "Pay the fee when you book."),
    ("num", "Put the items outside your front door by 7 am on the collection day."),
    ("num", "Keep the booking number in case the crew needs to call you."),
    ("h2", "Fees"),
    (
        "table",
        [
            ["What is collected", "Fee"],
            ["Up to 3 items", "25 euros"],
            ["4 to 6 items", "40 euros"],
            ["Fridge or freezer", "35 euros each"],
        ],
    ),
    ("p", "We do not collect building rubble, car parts or asbestos."),
]

WASTE_GARDEN_PDF: list[Page] = [
    [
        "Garden waste subscription 2026/27",
        "Garden waste is collected in a green bin every two weeks, for households that",
        "subscribe. The subscription costs 55 euros a year and runs from 1 April to",
        "31 March.",
        "How to subscribe",
        "Subscribe online or at the town hall. Your green bin is delivered within",
        "3 weeks, and collections start on the next collection day after that.",
    ],
    [
        "What can go in the green bin",
        "Grass cuttings, leaves, flowers, hedge trimmings and branches up to 10 cm thick.",
        "Soil, stones, turf and food waste cannot go in the green bin.",
    ],
]

HOTEL_STAY: list[DocxBlock] = [
    ("h1", "During your stay"),
    ("p", "You can check in online before you travel and go straight to your room."),
    ("h2", "Checking in online"),
    ("p", "To check in online, follow these steps:"),
    ("num", "Open the link in your booking confirmation email."),
    ("num", "Enter the names of all guests and the number plate of your car."),
    ("num", "Pay the city tax of 2.50 euros per adult and night by card."),
    ("num", "Take your key card from the key box at the entrance with the code we text you."),
    ("p", "Online check-in closes at 12:00 on the day you arrive."),
    ("h2", "Meals"),
    (
        "table",
        [
            ["Meal", "Where", "When"],
            ["Breakfast", "Garden room", "7:00 to 10:30"],
            ["Lunch", "Terrace, May to September only", "12:00 to 14:00"],
            ["Dinner", "Restaurant", "18:00 to 21:30"],
        ],
    ),
    ("p", "The restaurant is closed on Mondays."),
    ("p", "Visitors who are not staying at the hotel are welcome at breakfast for 18 euros."),
]

HOTEL_SPA_PDF: list[Page] = [
    [
        "Spa and pool",
        "Opening hours",
        "The indoor pool and the sauna are open every day from 7:00 to 21:00.",
        "Children under 14 may swim only with an adult and may not use the sauna.",
        "Towels and bathrobes",
        "Every room has bathrobes and spa towels, so you need not bring your own.",
        "Please do not take them to the lake beach.",
    ],
    [
        "Treatments",
        "A 50-minute massage costs 75 euros. Book it at reception at least one",
        "day ahead.",
        "Treatments cancelled less than 6 hours ahead are charged in full.",
    ],
]

# The car club: an outdated fee sheet (a table, saved in May 2023) beside the current fees
# page (fees.html, a list), and the current membership terms as a PDF (saved January 2026).
CARCLUB_FEES_2023: list[DocxBlock] = [
    ("h1", "Pebble Car Club fees"),
    ("p", "These fees apply from 1 June 2023."),
    (
        "table",
        [
            ["Fee", "Amount", "When"],
            [
                "Late return",
                "15 euros per started half hour",
                "The car is returned after the booking ends",
            ],
            ["Cleaning fee", "40 euros", "The car is returned dirty"],
            ["Lost key card", "25 euros", "The key card is not returned"],
            [
                "Parking fine handling",
                "15 euros plus the fine",
                "We receive a parking fine for your booking",
            ],
        ],
    ),
    ("p", "Fees are charged to the card registered in your account."),
]
CARCLUB_FEES_2023_SAVED = "2023-05-02T09:30:00"

CARCLUB_MEMBERSHIP_PDF: list[Page] = [
    [
        "Pebble Car Club membership terms",
        "Who can join",
        "Members must be at least 21 years old and have held a full driving licence",
        "for at least 2 years.",
        "Joining",
        "Joining costs a one-off registration fee of 25 euros. There is no deposit.",
        "Cancelling",
        "You can cancel your membership at any time with 30 days' notice in the app.",
    ],
]
CARCLUB_MEMBERSHIP_SAVED = "D:20260120103000Z"

LIBRARY_CARDS: list[DocxBlock] = [
    ("h1", "Library cards"),
    (
        "p",
        "A library card lets you borrow from every Millbrook library and use our computers "
        "and e-books.",
    ),
    ("h2", "Getting your card"),
    ("p", "To join the library, follow these steps:"),
    ("num", "Fill in the joining form online or at any desk."),
    ("num", "Show a photo ID and a letter or bill with your current address."),
    ("num", "Choose a four-digit PIN for the self-service machines and the app."),
    ("num", "Collect your card at the desk; you can borrow straight away."),
    ("p", "Children under 16 need a parent or carer to sign the form with them."),
    ("h2", "Card types"),
    (
        "table",
        [
            ["Card", "Who it is for", "Price"],
            ["Resident card", "People who live, work or study in Millbrook", "Free"],
            ["Visitor card", "Anyone else, for 12 months", "15 euros"],
            ["Replacement card", "If your card is lost or stolen", "3 euros"],
        ],
    ),
    ("p", "Tell us as soon as your card is lost, so that nobody else can borrow on it."),
]

LIBRARY_ROOMS_PDF: list[Page] = [
    [
        "Printing, copying and scanning",
        "Printing and copying cost 10 cents a page in black and white and 50 cents a",
        "page in colour. Scanning to a USB stick or to email is free.",
        "To print from your own laptop or phone, send the file to print@millbrook.example",
        "and release it at any printer with your library card within 24 hours.",
    ],
    [
        "Study rooms",
        "Central Library has six study rooms for one to four people.",
        "Rooms can be booked online up to 7 days ahead, for at most 3 hours a day.",
        "A room that nobody has checked in to after 15 minutes is released to the next person.",
        "Quiet floor",
        "The second floor of Central Library is a silent study area. Phone calls are not",
        "allowed there.",
    ],
]

# Where each is written, under loadtests/answers.
FILES = (
    KbFile.docx("bikeshop_kb/workshop.docx", BIKESHOP_WORKSHOP),
    KbFile.docx("cowork_kb/meeting-rooms.docx", COWORK_ROOMS),
    KbFile.docx("waste_kb/bulky-waste.docx", WASTE_BULKY),
    KbFile.docx("hotel_kb/your-stay.docx", HOTEL_STAY),
    KbFile.docx("library_kb/cards.docx", LIBRARY_CARDS),
    KbFile.docx("carclub_kb/fees-2023.docx", CARCLUB_FEES_2023, CARCLUB_FEES_2023_SAVED),
    KbFile.pdf("bikeshop_kb/warranty.pdf", BIKESHOP_WARRANTY_PDF),
    KbFile.pdf("cowork_kb/member-handbook.pdf", COWORK_HANDBOOK_PDF),
    KbFile.pdf("waste_kb/garden-waste.pdf", WASTE_GARDEN_PDF),
    KbFile.pdf("hotel_kb/spa.pdf", HOTEL_SPA_PDF),
    KbFile.pdf("library_kb/rooms-and-printing.pdf", LIBRARY_ROOMS_PDF),
    KbFile.pdf("carclub_kb/membership.pdf", CARCLUB_MEMBERSHIP_PDF, CARCLUB_MEMBERSHIP_SAVED),
)
