"""Server-Sent Events (sse.py): the reader's HTML-spec line rules, text cut anywhere; the
writer's bytes, read back by the reader whatever the chunking."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.events import (
    Done,
    Dropped,
    Error,
    Event,
    Refusal,
    SentenceOut,
    Sources,
    to_sse,
)
from stream_rag.retrieve.hybrid import Block
from stream_rag.sse import EventStreamParser, ReceivedEvent, ServerSentEvent, parse_lines


def fed(chunks: list[str]) -> tuple[list[ReceivedEvent], EventStreamParser]:
    parser = EventStreamParser()
    return [event for chunk in chunks for event in parser.feed(chunk)], parser


def test_data_lines_join_with_newlines_and_unnamed_events_are_messages() -> None:
    events, _ = fed(["data: first\ndata:second\ndata\n\n"])
    assert events == [ReceivedEvent("message", "first\nsecond\n")]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    events, _ = fed(["event:  spaced\ndata:  two\n\n"])
    assert events == [ReceivedEvent(" spaced", " two")]


def test_comments_are_counted_and_dispatch_nothing() -> None:
    events, parser = fed([": ping\n\n:\n\nevent: done\ndata: {}\n\n"])
    assert events == [ReceivedEvent("done", "{}")]
    assert parser.comments == 2


def test_an_event_without_data_is_not_dispatched_and_its_name_does_not_leak() -> None:
    events, _ = fed(["event: lost\n\ndata: x\n\n"])
    assert events == [ReceivedEvent("message", "x")]


def test_the_last_id_carries_over_and_retry_is_read() -> None:
    events, parser = fed(["id: 7\nretry: 1500\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"])
    assert [(e.data, e.id) for e in events] == [("a", "7"), ("b", "7"), ("c", "")]
    assert parser.retry_ms == 1500
    fed_bad, parser = fed(["retry: soon\nid: a\0b\ndata: d\n\n"])
    assert parser.retry_ms is None
    assert fed_bad[0].id is None


def test_unknown_fields_are_ignored_and_a_leading_bom_is_dropped() -> None:
    events, _ = fed(["\ufeffdata: x\nfoo: bar\n\n"])
    assert events == [ReceivedEvent("message", "x")]


def test_crlf_split_between_chunks_ends_one_line_only() -> None:
    # A CR at the end of one chunk and the LF at the start of the next are one line end: the
    # LF must not count as the blank line that dispatches.
    events, _ = fed(["data: a\r", "\ndata: b\r", "\n\r", "\n"])
    assert events == [ReceivedEvent("message", "a\nb")]


def test_an_event_ended_by_cr_is_dispatched_without_waiting_for_more_text() -> None:
    events, _ = fed(["data: a\r\r"])
    assert events == [ReceivedEvent("message", "a")]


def test_an_unfinished_event_is_dropped_at_the_end() -> None:
    assert list(parse_lines(["event: sentence", "data: {}", "", "data: half"])) == [
        ReceivedEvent("sentence", "{}")
    ]


texts = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"))
names = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)


@settings(deadline=None, max_examples=200)
@given(
    items=st.lists(
        st.tuples(st.lists(texts, min_size=1, max_size=3), st.one_of(st.none(), names)),
        max_size=5,
    ),
    sep=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_what_the_writer_writes_reads_back_whatever_the_chunking(
    items: list[tuple[list[str], str | None]], sep: str, cuts: list[int]
) -> None:
    wire = ":" + sep + sep  # a ping first
    for lines, name in items:
        wire += ServerSentEvent(data="\n".join(lines), event=name).encode(sep).decode()
    bounds = sorted({0, len(wire), *(c for c in cuts if c < len(wire))})
    events, parser = fed([wire[a:b] for a, b in itertools.pairwise(bounds)])
    expected = [ReceivedEvent(name or "message", "\n".join(lines)) for lines, name in items]
    assert events == expected
    assert parser.comments == 1


@settings(deadline=None, max_examples=200)
@given(
    data=st.text(max_size=40),
    event=st.sampled_from(["sentence", "done"]),
    # An id is the server's own or a Last-Event-ID header's: UTF-8 text, no lone surrogates.
    id=st.one_of(
        st.none(), st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n\0"))
    ),
    comment=st.one_of(st.none(), st.text(max_size=20)),
)
def test_every_event_reads_back_as_written(
    data: str, event: str, id: str | None, comment: str | None
) -> None:
    wire = ServerSentEvent(data=data, event=event, id=id, comment=comment).encode().decode()
    events, parser = fed([wire])
    lines = data.replace("\r\n", "\n").replace("\r", "\n")
    assert events == [ReceivedEvent(event, lines, id)]
    assert parser.comments == (0 if comment is None else len(re.split(r"\r\n|\r|\n", comment)))


def test_the_bytes_on_the_wire() -> None:
    # What clients have always been sent (sse-starlette's layout): CRLF line ends, id first.
    sent = ServerSentEvent(data='{"a": 1}', event="sentence", id="r.1").encode()
    assert sent == b'id: r.1\r\nevent: sentence\r\ndata: {"a": 1}\r\n\r\n'
    two = ServerSentEvent(data="a\nb", event="note", retry=5).encode()
    assert two == b"event: note\r\ndata: a\r\ndata: b\r\nretry: 5\r\n\r\n"
    assert ServerSentEvent(comment="ping").encode() == b": ping\r\n\r\n"


def test_a_line_break_in_a_name_or_id_is_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        ServerSentEvent(data="x", event="a\nb")
    with pytest.raises(ValueError, match="line break"):
        ServerSentEvent(data="x", id="a\rb")


def test_every_answer_event_reads_back_as_its_data() -> None:
    block = Block(1, "c1", "d1", 2, "0" * 64, "Refunds", "r.md", 0, 9, "Text\nhere", {})
    events: list[Event] = [
        Sources([block], "fake"),
        SentenceOut(0, "Line\nbreak and\r\nCRLF \u2028 [1].", [block]),
        Dropped(1, "unsupported"),
        Refusal("no_sources", "None."),
        Done(1, 1, 12.5, 40.0, 9, {"total_tokens": 3}, "req_1"),
        Error("upstream_error", "it\nfailed", None),
    ]
    for event in events:
        sent = to_sse(event, id="abc.1")
        (received,) = fed([sent.encode().decode()])[0]
        assert received.event == event.name
        assert received.id == "abc.1"
        assert received.json() == json.loads(json.dumps(event.data()))
        assert "\n" not in (sent.data or "")  # one data line of JSON
