"""The citation gate: a streamed sentence reaches the user only if the blocks it cites support it.

Pure and per request: `GateContext` digests the issued blocks once; `check` then costs one
tokenisation of the sentence. A failed check is data (a `Verdict` with a reason), not an error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..index.features import ChunkFeatures, SemanticTerms, text_keys
from ..language.quantities import Stated, canonical, scan
from ..language.statements import Statement, read_statements, statement_spans
from ..language.terms import NEGATION, content_terms, term_keys
from .citations import Citation, extract
from .claimcheck import Clause, Rules, clauses
from .claimcheck import check as check_claims
from .compared import conversed, orders
from .consistency import polarity as check_polarity
from .consistency import unvouched_quantity
from .frames import unframed
from .links import unconditioned, unlinked
from .quoted import folded, statement_runs
from .rates import rated
from .scope import widened
from .statement_rules import statement_rules
from .support import Span, block_names, block_spans
from .verdict import Reason, Stage, Verdict
from .voice import not_a_claim
from .weights import IDF_MIN_BLOCKS, TermWeights, substance

__all__ = [
    "DEFAULT_MAX_UNSUPPORTED",
    "DEFAULT_THRESHOLD",
    "IDF_MIN_BLOCKS",
    "GateContext",
    "Reason",
    "Stage",
    "Verdict",
    "check_sentence",
]

# Tuned on BEGIN (WoW dev, the only split); see NOTES.md for the curve.
DEFAULT_THRESHOLD = 0.70
# A sentence with this much unsupported weight (in units of one term absent from every block)
# fails whatever its share: long sentences must not smuggle in several new claim terms.
DEFAULT_MAX_UNSUPPORTED = 3.0


@dataclass(frozen=True, slots=True)
class _Evidence:
    """What one block can vouch for: its terms, the quantities it states, its statements."""

    terms: frozenset[str]
    stated: Stated
    statements: tuple[Statement, ...]


def _evidence(text: str) -> _Evidence:
    found, words = scan(canonical(text))
    statements = read_statements(text, statement_spans(text))
    return _Evidence(frozenset(content_terms(words)), Stated.of(found, words), statements)


# --- the gate ---------------------------------------------------------------------------------


def _quote(items: Iterable[str], limit: int = 6) -> str:
    items = list(items)
    shown = ", ".join(f"'{item}'" for item in items[:limit])
    return shown + (f" (+{len(items) - limit})" if len(items) > limit else "")


def _refs(numbers: Iterable[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


_MAX_VERDICTS = 256  # per context


class GateContext:
    """The issued blocks of one request (block n is `blocks[n - 1]`), digested once: terms,
    document frequencies, IDF, the terms dropped for being in most blocks, and quantities."""

    def __init__(
        self,
        blocks: Sequence[str],
        doc_ids: Sequence[str] | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        max_unsupported: float | None = DEFAULT_MAX_UNSUPPORTED,
        features: Sequence[ChunkFeatures | None] | None = None,
        mode: str = "strict",
    ) -> None:
        if doc_ids is not None and len(doc_ids) != len(blocks):
            raise ValueError(f"{len(blocks)} blocks but {len(doc_ids)} document ids")
        self.doc_ids = tuple(doc_ids) if doc_ids is not None else None
        self.threshold = threshold
        self.max_unsupported = max_unsupported
        self.mode = mode
        self.rules = Rules.of(mode)
        self._spans: dict[int, tuple[Span, ...]] = {}
        self._runs: dict[int, frozenset[str]] = {}
        self._names: frozenset[str] | None = None
        self.blocks = tuple(blocks)
        # Stored features, where given, spare tokenising and scanning the block again.
        given = features if features is not None else [None] * len(blocks)
        self._evidence = tuple(
            _evidence(block) if f is None else _Evidence(f.terms, f.stated, f.statements)
            for block, f in zip(blocks, given, strict=True)
        )
        self._term_weights = TermWeights.of([evidence.terms for evidence in self._evidence])
        self.weights = self._term_weights.weights
        self.unseen_weight = self._term_weights.unseen
        self.dropped = self._term_weights.dropped
        self._unions: dict[tuple[int, ...], frozenset[str]] = {}
        self._key_unions: dict[tuple[int, ...], frozenset[str]] = {}
        self._tokens: dict[int, tuple[str, ...]] = {}
        # A context may serve several requests over the same blocks (`ContextCache`): a
        # sentence judged before gets the same verdict (the check is a pure function of it).
        self._verdicts: dict[
            tuple[str, tuple[Citation, ...], tuple[Clause, ...] | None], Verdict
        ] = {}
        # The semantic stage's stored terms, where given (else computed on first use).
        self._semantic: tuple[SemanticTerms | None, ...] = tuple(
            None if f is None else f.semantic for f in given
        )

    @property
    def n_blocks(self) -> int:
        return len(self._evidence)

    def read(self, raw: str) -> tuple[str, list[Citation], tuple[Clause, ...]]:
        """`raw` (markers kept) as the gate judges it: its text without markers, the blocks it
        cites (a marker quoted from a block's own text cites nothing) and its clauses."""
        units = tuple(clauses(raw, self.blocks, self.n_blocks))
        text, written = extract(raw)
        kept = {n for unit in units for n in unit.cited}
        return text, [c for c in written if c.n in kept], units

    def check(
        self,
        sentence: str,
        citations: Sequence[Citation],
        units: Sequence[Clause] | None = None,
    ) -> Verdict:
        """Judge `sentence` (markers already stripped) against the blocks it cites; `units`
        are its clauses with their own citations (by default every clause cites them all).
        A frame that adds nothing ("Note that ...") is judged as the claim it holds."""
        sentence, units = unframed(sentence, units)
        key = (sentence, tuple(citations), None if units is None else tuple(units))
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._check(sentence, citations, units)
            if len(self._verdicts) >= _MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    def _check(
        self, sentence: str, citations: Sequence[Citation], units: Sequence[Clause] | None
    ) -> Verdict:
        verdict = self.overlap(sentence, citations)
        if not verdict.ok and not verdict.grey:
            return verdict
        evidence = [self.block_text(n) for n in verdict.cited]
        why = not_a_claim(sentence, evidence) or unlinked(sentence, evidence)
        why = why or statement_rules(sentence, evidence)
        why = why or unconditioned(*self._leading(sentence, units, verdict.cited))
        wider = None if why else widened(sentence, evidence)
        if wider:
            why = f"says {_quote(wider)}, which {_refs(verdict.cited)} never says (nor its like)"
        if why:
            return Verdict(False, "claim_mismatch", verdict.cited, verdict.score, why)
        if units is None:
            marks = "".join(f"[{n}]" for n in verdict.cited)
            units = clauses(f"{sentence} {marks}", (), self.n_blocks)
        if self.quotes_whole_statements(sentence, units):
            return verdict
        if self._converse(sentence, units):
            # It says what its statement says, with the same words: its word of order is none
            # the overlap should count against it ("behind" of "ahead").
            detail = f"overlap {verdict.score:.2f}; says a cited statement from its other side"
            return Verdict(True, "ok", verdict.cited, verdict.score, detail)
        why = check_claims(
            units,
            self.spans,
            self.weight,
            self.is_name,
            self.rules,
            self.n_blocks,
        )
        # After the clause checks, whose reasons name the span's words more closely.
        why = why or rated(sentence, evidence)
        if why:
            return Verdict(False, "claim_mismatch", verdict.cited, verdict.score, why)
        if verdict.grey and not self.rules.ranged_second_look and any(u.ranged for u in units):
            detail = f"{verdict.detail}; a range or every-block citation gets no second look"
            return Verdict(False, verdict.reason, verdict.cited, verdict.score, detail)
        return verdict

    def quotes_whole_statements(self, sentence: str, units: Sequence[Clause]) -> bool:
        """Whether `sentence` is, word for word, one or more whole consecutive statements of a
        block that every clause cites: it then says exactly what that block says there, and
        the claim checks (which read a clause's attachments, not its words) have nothing to
        add. A statement cut short ("Refunds are available" of "... only for annual plans")
        or a clause citing another block is judged clause by clause as before."""
        if any(u.ranged for u in units):
            return False
        wanted = folded(sentence)
        if not wanted:
            return False
        common = set.intersection(*(set(u.cited) for u in units)) if units else set()
        for n in sorted(common):
            if 1 <= n <= self.n_blocks and wanted in self.statement_runs(n):
                return True
        return False

    def _converse(self, sentence: str, units: Sequence[Clause]) -> bool:
        """Whether `sentence`, one clause, says a statement of a block it cites from its other
        side ("B costs less than A" of "A costs more than B"): it says what that one says."""
        if len(units) != 1 or units[0].ranged or not orders(sentence):
            return False
        return any(conversed(sentence, s.text) for n in units[0].cited for s in self.spans(n))

    def statement_runs(self, n: int) -> frozenset[str]:
        """Block n's runs of whole consecutive statements, folded (`quoted.statement_runs`)."""
        found = self._runs.get(n)
        if found is None:
            found = self._runs[n] = statement_runs(self.blocks[n - 1])
        return found

    def spans(self, n: int) -> tuple[Span, ...]:
        """Block n's statements and pairs of adjacent ones, read on first use."""
        found = self._spans.get(n)
        if found is None:
            found = self._spans[n] = (
                () if not 1 <= n <= self.n_blocks else block_spans(n, self.blocks[n - 1])
            )
        return found

    def weight(self, key: str) -> float:
        return self.weights.get(key, self.unseen_weight)

    def is_name(self, key: str) -> bool:
        """Whether an issued block writes the word capitalised mid-sentence (a name)."""
        if self._names is None:
            self._names = (
                frozenset().union(*(block_names(block) for block in self.blocks))
                if all(len(b.casefold()) == len(b) for b in self.blocks)
                else frozenset()
            )
        return key in self._names

    def overlap(self, sentence: str, citations: Sequence[Citation]) -> Verdict:
        """The overlap stage alone (citations, terms, numbers, polarity over the cited
        blocks), before the claim checks hold each clause to a span: grey when a later stage
        may judge it."""
        cited = tuple(dict.fromkeys(c.n for c in citations))
        stated, words = scan(canonical(sentence))
        terms = content_terms(words)
        if not terms and not stated:
            return Verdict(False, "empty", cited, 0.0, "no content terms to verify")
        if not cited:
            return Verdict(False, "uncited", cited, 0.0, "cites no block")
        n = self.n_blocks
        unknown = [c for c in cited if not 1 <= c <= n]
        if unknown:
            issued = f"only [1]..[{n}] were" if n else "no block was"
            return Verdict(
                False,
                "unknown_citation",
                cited,
                0.0,
                f"cites {_refs(unknown)} but {issued} issued",
            )
        if self.doc_ids is not None:
            for citation in citations:
                expected = self.doc_ids[citation.n - 1]
                if citation.claimed_id is not None and citation.claimed_id.strip() != expected:
                    return Verdict(
                        False,
                        "id_mismatch",
                        cited,
                        0.0,
                        f"[{citation.n}] is {expected!r}, not {citation.claimed_id!r}",
                    )
        blocks = [self._evidence[c - 1] for c in cited]
        score, missing = substance(terms, self._cited_terms(cited), self._term_weights)
        unsupported = sum(self.weights.get(t, self.unseen_weight) for t in missing)
        unsupported /= self.unseen_weight
        # Polarity is checked against the statements the sentence matches, not anywhere in
        # the block; only when there is a negation to check.
        polarity = ""
        if NEGATION in terms or any(NEGATION in b.terms for b in blocks):
            statements = [s for b in blocks for s in b.statements]
            polarity = check_polarity(terms, words, statements, self.weights, self.unseen_weight)
        if score < self.threshold:
            why = f"overlap {score:.2f} < {self.threshold:.2f}"
        elif NEGATION in missing:  # "X is not Y" shares every word with "X is Y"
            why = f"it negates, {_refs(cited)} has no negation"
        elif self.max_unsupported is not None and unsupported > self.max_unsupported - 1e-9:
            why = f"unsupported weight {unsupported:.1f} >= {self.max_unsupported:.1f}"
        else:
            why = polarity
        unvouched = None
        if stated:
            unvouched = unvouched_quantity(stated, words, blocks, self.weights, self.unseen_weight)
        if why:
            # Only a sentence that fails on overlap alone may get a second opinion: a
            # changed number or a flipped polarity stays a hard failure.
            grey = unvouched is None and NEGATION not in missing and not polarity
            detail = f"{why}; not in {_refs(cited)}: {_quote(missing)}" if why != polarity else why
            if not grey and score < self.threshold:
                # Said, so that a count of drops by cause (loadtests/gate_drops.py) can tell.
                if unvouched is not None:
                    held = f"{unvouched.text!r} is in no cited block"
                else:
                    held = "its negation is in no cited block" if NEGATION in missing else polarity
                detail += f"; no second look: {held}"
            return Verdict(False, "low_overlap", cited, score, detail, grey=grey)
        if unvouched is not None:
            detail = f"{unvouched.text!r} is not in {_refs(cited)}"
            if any(b.stated.vouches_for(unvouched) for b in blocks):
                detail = f"{unvouched.text!r} replaces the number of the statement it copies"
                detail += f" in {_refs(cited)}"
            return Verdict(False, "number_mismatch", cited, score, detail)
        return Verdict(True, "ok", cited, score, f"overlap {score:.2f}")

    def _leading(
        self, sentence: str, units: Sequence[Clause] | None, cited: Sequence[int]
    ) -> tuple[str, list[str]]:
        """The sentence's opening clauses that one marker cites, and those blocks' texts (a later
        clause citing other blocks is a claim of its own)."""
        if units:
            first = units[0].cited
            lead = list(itertools.takewhile(lambda c: c.cited == first, units))
            if len(lead) < len(units):
                blocks = [n for n in first if 1 <= n <= self.n_blocks]
                return " ".join(c.text for c in lead), [self.block_text(n) for n in blocks]
        return sentence, [self.block_text(n) for n in cited]

    def block_text(self, n: int) -> str:
        return self.blocks[n - 1]

    def block_keys(self, cited: tuple[int, ...]) -> frozenset[str]:
        """Every stem and lemma key of the cited blocks (built on first use: grey zone only)."""
        key = tuple(sorted(cited))
        union = self._key_unions.get(key)
        if union is None:
            parts = [self.keys_of(n) for n in key]
            union = parts[0] if len(parts) == 1 else frozenset().union(*parts)
            self._key_unions[key] = union
        return union

    def keys_of(self, n: int) -> frozenset[str]:
        """Block n's stem and lemma keys (stored, else computed once per context)."""
        stored = self._semantic[n - 1]
        if stored is not None:
            return stored.keys
        keys = self._key_unions.get((n,))
        if keys is None:
            keys = self._key_unions[(n,)] = self.text_keys(self.blocks[n - 1])
        return keys

    def block_tokens(self, n: int) -> tuple[str, ...]:
        """Block n's distinct content tokens (surface forms), built on first use."""
        tokens = self._tokens.get(n)
        if tokens is None:
            stored = self._semantic[n - 1]
            if stored is not None:
                tokens = stored.words
            else:
                _, words = scan(canonical(self.blocks[n - 1]))
                tokens = tuple(surface for _, _, surface in term_keys(words))
            self._tokens[n] = tokens
        return tokens

    def window_keys(self, n: int, start: int, end: int) -> frozenset[str]:
        """The keys of `block_text(n)[start:end]`, a window of one or two of its sentences."""
        stored = self._semantic[n - 1]
        keys = None if stored is None else stored.windows.get((start, end))
        return self.text_keys(self.blocks[n - 1][start:end]) if keys is None else keys

    @staticmethod
    def text_keys(text: str) -> frozenset[str]:
        return text_keys(text)

    def _cited_terms(self, cited: tuple[int, ...]) -> frozenset[str]:
        key = tuple(sorted(cited))
        union = self._unions.get(key)
        if union is None:
            union = frozenset().union(*(self._evidence[n - 1].terms for n in key))
            self._unions[key] = union
        return union


def check_sentence(raw_sentence: str, ctx: GateContext) -> Verdict:
    """Strip the citation markers from `raw_sentence` and check it, clause by clause."""
    text, citations, units = ctx.read(raw_sentence)
    return ctx.check(text, citations, units)
