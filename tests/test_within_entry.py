"""Which sentence of the chosen FAQ entry leads: the one saying what the question asks beyond
the entry's own question, and the opening of a yes/no entry for a yes/no question."""

from __future__ import annotations

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.language.question import kind_words
from stream_rag.language.terms import stem
from stream_rag.model.extractive import SentenceVectors, select

BINS = (
    "# Bins and collections\n\n"
    "## What goes in the garden waste bin?\n"
    "Grass cuttings, leaves and hedge trimmings go in the garden waste bin. "
    "Soil, stones and rubble do not.\n\n"
    "## Can I order a bigger bin?\n"
    "Yes, households of six or more people can ask for a larger bin. "
    "A bigger bin is delivered within ten working days.\n"
)
GARDENS = (
    "# Visiting the gardens\n\n"
    "## Can I bring my dog into the gardens?\n"
    "No, dogs are not allowed in the gardens, apart from assistance dogs. There is a dog "
    "walking field next to the car park, where dogs can run off the lead.\n\n"
    "## Can I take photos in the glasshouses?\n"
    "Yes, photos for personal use are welcome everywhere. Professional photo shoots and "
    "wedding photography need a permit from the estate office.\n\n"
    "## Is there a cafe in the gardens?\n"
    "Yes, the Orangery cafe serves hot drinks, lunches and cakes. Picnic tables stand on the "
    "lawn beside the lake for visitors who bring their own food.\n\n"
    "## Do children need a ticket?\n"
    "No, children under 5 go free. Older children pay the child price of 6 pounds, and a "
    "family ticket for two adults and three children costs 30 pounds.\n"
)


def test_the_sentence_saying_what_the_question_adds_leads(minilm: MiniLMEmbedder) -> None:
    # Beyond "What goes in the garden waste bin?" it asks about stones: the entry's second
    # sentence answers, its first only repeats the bin's name.
    chosen = select(
        "Can I put stones in the garden waste bin?", {1: BINS}, dense=SentenceVectors(minilm)
    )
    assert chosen
    assert chosen[0].text.startswith("Soil, stones"), [c.text for c in chosen]


def test_a_yes_no_question_leads_with_the_entrys_yes_or_no(minilm: MiniLMEmbedder) -> None:
    # "photography" is nearer the permit sentence; the entry asks what the question asks,
    # and its opening says whether.
    chosen = select(
        "Is photography ok inside the glasshouses?", {1: GARDENS}, dense=SentenceVectors(minilm)
    )
    assert chosen
    assert chosen[0].text.startswith("Yes, photos"), [c.text for c in chosen]
    dogs = select(
        "Are dogs on leads welcome in the garden?", {1: GARDENS}, dense=SentenceVectors(minilm)
    )
    assert dogs
    assert dogs[0].text.startswith("No, dogs"), [d.text for d in dogs]


FERRY = (
    "# Travelling with us\n\n"
    "## Are bikes allowed on board?\n"
    "Bikes are allowed on board on every crossing except the first morning sailing. "
    "Folding bikes can be stored in the luggage racks beside the cabin doors.\n\n"
    "## Can dogs catch the virus?\n"
    "Cases in dogs are rare. Almost all were in dogs that ate infected birds, and it has never "
    "spread from one dog to another.\n\n"
    "## Do I need to print my ticket?\n"
    "No, you can show the ticket on your phone. Printed tickets are also accepted at the gate.\n"
)


def test_an_opening_stating_the_entrys_question_says_whether(minilm: MiniLMEmbedder) -> None:
    # "cabin" is in the second sentence only; the opening says whether bikes are allowed.
    chosen = select(
        "Can I take my scooter into the cabin?", {1: FERRY}, dense=SentenceVectors(minilm)
    )
    assert chosen
    assert chosen[0].text.startswith("Bikes are allowed"), [c.text for c in chosen]
    printed = select("Do I have to print the booking?", {1: FERRY}, dense=SentenceVectors(minilm))
    assert printed
    assert printed[0].text.startswith("No, you can show"), [p.text for p in printed]


def test_an_opening_saying_nothing_of_whether_does_not_lead(minilm: MiniLMEmbedder) -> None:
    # "Cases in dogs are rare." opens a yes/no entry but says not whether it spreads.
    for question in ("Does the virus spread from dog to dog?", "Will my dog pass the virus on?"):
        chosen = select(question, {1: FERRY}, dense=SentenceVectors(minilm))
        assert chosen
        assert chosen[0].text.startswith("Almost all"), (question, [c.text for c in chosen])


def test_the_words_asking_the_kind_are_not_what_is_asked_about() -> None:
    assert kind_words("Do you charge a restocking fee?") >= {stem("charge"), stem("fee")}
    assert stem("restocking") not in kind_words("Do you charge a restocking fee?")
    assert kind_words("How long does delivery take?") >= {stem("long")}
    assert kind_words("Tell me about the garden.") == frozenset()
