"""Where the sentences of extracted text start and end: blingfire's sentence breaks, read
through its C entry with offsets mapped in numpy, and each list item a sentence of its own."""

from __future__ import annotations

import ctypes
import re

import blingfire
import numpy as np

# A line that starts a list item starts a sentence too: blingfire runs unpunctuated items
# together and reads "steps:\n1. Log in." as "steps: 1." and "Log in." (the number is put
# back with its item).
ITEM_LINE = re.compile(r"\n(?=[ \t]*(?:[-*+\u2022]|\d{1,3}[.)]|[a-z][.)])[ \t]+\S)")

_MARK_ONLY = re.compile(r"\s*(?:\d{1,3}|[a-z])[.)]\s*")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans inside `text[start:end]`, in absolute offsets (blingfire); a list item
    is always a sentence of its own."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    at = start
    for cut in [m.start() for m in ITEM_LINE.finditer(text, start, end)] + [end]:
        piece = text[at:cut]
        if piece.strip():
            spans = [(at + s, at + e) for s, e in sentence_offsets(piece) if e > s]
            for k, (s, e) in enumerate(spans):
                if k and _MARK_ONLY.fullmatch(text, *spans[k - 1]):
                    out[-1] = (out[-1][0], e)  # "1." and the item it numbers are one sentence
                else:
                    out.append((s, e))
        at = cut + 1
    return out


# blingfire's ctypes entry (its module's library handle, not public API): a blingfire
# without it takes blingfire's own function.
_TO_SENTENCES = getattr(getattr(blingfire, "blingfire", None), "TextToSentencesWithOffsets", None)


def sentence_offsets(piece: str) -> list[tuple[int, int]]:
    """`blingfire.text_to_sentences_and_offsets(piece)[1]`, the same values: the same C call,
    but its UTF-8 offsets mapped to string offsets in numpy. blingfire maps them in a Python
    loop over every byte, which was ~85% of chunking a large document (docs/decisions/).
    Anything that loop would treat specially (an offset inside a character, out of order or
    past the end) goes to blingfire's own function."""
    data = piece.encode("utf-8")
    if not data or _TO_SENTENCES is None:
        return _blingfire_offsets(piece)
    capacity = len(data) * 2
    out = ctypes.create_string_buffer(capacity)
    starts = (ctypes.c_int32 * capacity)()
    ends = (ctypes.c_int32 * capacity)()
    written = _TO_SENTENCES(
        ctypes.c_char_p(data),
        ctypes.c_int(len(data)),
        ctypes.byref(out),
        ctypes.byref(starts),
        ctypes.byref(ends),
        ctypes.c_int(capacity),
    )
    if written == -1 or written > capacity:
        return []
    count = out.value.count(b"\n") + 1
    if count > capacity:
        return _blingfire_offsets(piece)
    # The byte where each sentence starts, and the byte after each one's last.
    at = np.empty(2 * count, np.int64)
    at[0::2] = np.frombuffer(memoryview(starts), np.int32, count)
    at[1::2] = np.frombuffer(memoryview(ends), np.int32, count)
    at[1::2] += 1
    head, last = at[:-1], int(at[-1])
    if head.min() < 0 or head.max() >= len(data) or (np.diff(head) < 0).any():
        return _blingfire_offsets(piece)
    # blingfire's loop gives the last offset only if it is in order and a character's start
    # inside the text; otherwise the text's length.
    last_found = int(head[-1]) <= last < len(data)
    if len(data) == len(piece):  # ASCII: a byte is a character
        chars = head
    else:
        is_lead = (np.frombuffer(data, np.uint8) & 0xC0) != 0x80
        if not is_lead[head].all():
            return _blingfire_offsets(piece)
        before = np.cumsum(is_lead) - 1  # at a character's first byte: the characters before
        chars = before[head]
        last_found = last_found and bool(is_lead[last])
        last = int(before[last]) if last_found else last
    if not last_found:
        last = len(piece)
    flat = [*chars.tolist(), last]
    return list(zip(flat[0::2], flat[1::2], strict=True))


def _blingfire_offsets(piece: str) -> list[tuple[int, int]]:
    offsets: list[tuple[int, int]] = blingfire.text_to_sentences_and_offsets(piece)[1]
    return offsets
