"""Tests for gate/markup.py, through the sentence buffer: headings, list items, rules, table
rows and code blocks as units, and where a line break does or does not end one."""

from __future__ import annotations

from stream_rag.gate.segment import Segment, split_segments

from .test_segment import released, texts

MARKDOWN = """# Refund policy

Refunds take 30 days. [1] Monthly plans renew.

- First item. It has two sentences
- Second item without a full stop
* Star item
1. Numbered one
2. Numbered two

```python
x = 1. Not a sentence. [1]

print(x)
```
## Next steps
No punctuation at the end

---
Last line"""


def test_markdown_units() -> None:
    assert split_segments(MARKDOWN) == [
        Segment("# Refund policy", "heading"),
        Segment("Refunds take 30 days. [1]", "sentence"),
        Segment("Monthly plans renew.", "sentence"),
        Segment("- First item.", "list_item"),
        Segment("It has two sentences", "sentence"),
        Segment("- Second item without a full stop", "list_item"),
        Segment("* Star item", "list_item"),
        Segment("1. Numbered one", "list_item"),
        Segment("2. Numbered two", "list_item"),
        Segment("```python\nx = 1. Not a sentence. [1]\n\nprint(x)\n```", "code"),
        Segment("## Next steps", "heading"),
        Segment("No punctuation at the end", "sentence"),
        Segment("---", "heading"),
        Segment("Last line", "sentence"),
    ]


def test_code_block_released_when_closing_fence_line_ends() -> None:
    tokens = ["Intro:\n", "```", "\nx = 1\n", "``", "`", "\n", "Done."]
    assert released(tokens) == [[], ["Intro:"], [], [], [], ["```\nx = 1\n```"], [], ["Done."]]


def test_unclosed_code_block_is_one_unit() -> None:
    assert split_segments("~~~\na. b. C\n") == [Segment("~~~\na. b. C", "code")]


def test_heading_and_item_released_at_line_end() -> None:
    assert released(["# Title", "\n", "- item", "\n", "- ", "- -\n"]) == [
        [],
        ["# Title"],
        [],
        [],
        ["- item"],
        ["- - -"],
        [],
    ]


def test_blank_line_ends_unit() -> None:
    assert released(["No full stop here", "\n", "\n", "Next"]) == [
        [],
        [],
        ["No full stop here"],
        [],
        ["Next"],
    ]


def test_soft_line_break_continues_sentence() -> None:
    assert texts(split_segments("A sentence that\nwraps. Next one")) == [
        "A sentence that\nwraps.",
        "Next one",
    ]


def test_table_rows() -> None:
    text = "| Plan | Refund |\n|---|---|\n| Monthly | 30 days. [1] |\n| Annual | none. |\nAfter."
    assert texts(split_segments(text)) == [
        "| Plan | Refund |\n|---|---|",  # the header row keeps its rule line
        "| Monthly | 30 days. [1] |",
        "| Annual | none. |",
        "After.",
    ]
    assert released(["| A |\n", "| B", " |\n", "|-", "--|\n", "x"]) == [
        [],
        ["| A |"],
        [],
        [],
        ["| B |\n|---|"],
        [],
        ["x"],
    ]


def test_hashtag_and_bold_are_text() -> None:
    assert split_segments("#hashtag here\n**Bold** text.") == [
        Segment("#hashtag here\n**Bold** text.", "sentence")
    ]
