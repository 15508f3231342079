"""Token ids of a short plain-ASCII text without the tokenizers library's per-call work.

For an uncased BERT tokenizer (BertNormalizer lowercasing, BertPreTokenizer, WordPiece,
[CLS] ... [SEP]), ASCII text splits into lowercase runs of letters and digits and single
punctuation characters, and each word's pieces do not depend on its neighbours: a question's
ids are its words' pieces, remembered per word. `encode` costs ~140 us of a search's CPU on
this machine between requests (cold caches) against ~30 us here (docs/decisions/); the ids
are the tokenizer's own (each new word is asked of it; tests compare whole texts).
"""

from __future__ import annotations

import json
import re

from tokenizers import Tokenizer

__all__ = ["WordPieceMemo"]

# Printable ASCII and the whitespace BERT splits on; anything else (control characters, which
# BertNormalizer drops, and all of Unicode) goes to the tokenizer.
_PLAIN = re.compile(r"[\x20-\x7e\t\n\r]*")
# After lowercasing: BERT's words and its ASCII punctuation (every printable ASCII character
# that is not a letter, digit or space), one character each.
_WORDS = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def _uncased_bert(config: dict[str, object]) -> bool:
    normalizer = config.get("normalizer")
    pre = config.get("pre_tokenizer")
    model = config.get("model")
    post = config.get("post_processor")
    return (
        isinstance(normalizer, dict)
        and normalizer.get("type") == "BertNormalizer"
        and normalizer.get("lowercase") is True
        and normalizer.get("clean_text") is True
        and isinstance(pre, dict)
        and pre.get("type") == "BertPreTokenizer"
        and isinstance(model, dict)
        and model.get("type") == "WordPiece"
        and isinstance(post, dict)
        and post.get("type") in ("TemplateProcessing", "BertProcessing")
    )


class WordPieceMemo:
    """`ids(text)`: what `tokenizer.encode(text).ids` gives, or None when the text is not
    plain ASCII, names an added token ([CLS], [MASK], ...) or would be truncated."""

    def __init__(self, tokenizer: Tokenizer, max_length: int, limit: int = 20_000) -> None:
        self._tokenizer = tokenizer
        config = json.loads(tokenizer.to_str())
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        self.enabled = _uncased_bert(config) and cls is not None and sep is not None
        self._cls = cls if cls is not None else 0
        self._sep = sep if sep is not None else 0
        self._added = [str(t["content"]).lower() for t in config.get("added_tokens") or []]
        self._room = max_length - 2
        self.limit = limit
        self._pieces: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int] | None:
        if not self.enabled or not text.isascii() or not _PLAIN.fullmatch(text):
            return None
        lower = text.lower()
        if any(token in lower for token in self._added):
            return None
        pieces = self._pieces
        ids = [self._cls]
        for word in _WORDS.findall(lower):
            known = pieces.get(word)
            if known is None:
                if len(pieces) >= self.limit:
                    pieces.clear()
                known = self._tokenizer.encode(word, add_special_tokens=False).ids
                pieces[word] = known
            ids += known
        if len(ids) > self._room + 1:
            return None  # truncation is the tokenizer's business
        ids.append(self._sep)
        return ids
