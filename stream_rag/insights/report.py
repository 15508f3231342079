"""The Insights report over the question log's rows: questions over time, refusals by reason
and topic (the knowledge base's gaps), answers rated down, conflicts between documents, and
the documents cited most. Pure: rows in, one JSON-ready dict out."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Sequence

from ..store.questions import Asked, Cited
from .topics import Vectors, cluster

EXPORT_COLUMNS = (
    "id",
    "asked_at",
    "collection",
    "conversation",
    "question",
    "outcome",
    "reason",
    "sentences",
    "dropped",
    "citations",
    "conflicts",
    "rating",
    "comment",
)


# Refused questions the topics are made of, the newest: embedding a busy month's (the report
# reads up to 50,000 rows) took minutes; 2,000 take seconds.
TOPIC_QUESTIONS = 2000


def report(
    rows: Sequence[Asked],
    embed: Callable[[Sequence[str]], Vectors] | None = None,
    *,
    top: int = 10,
    topic_questions: int = TOPIC_QUESTIONS,
) -> dict[str, object]:
    """`rows` newest first (as `QuestionLog.rows` gives them)."""
    days: dict[str, Counter[str]] = {}
    for row in rows:
        days.setdefault(row.asked_at[:10], Counter())[row.outcome] += 1
    refused = [r for r in rows if r.outcome == "refused"]
    reasons = Counter(r.reason or "unknown" for r in refused)
    cited: Counter[tuple[str, str]] = Counter()
    for row in rows:
        for c in row.citations:
            cited[(c.doc_id, c.name)] += 1
    pairs: Counter[tuple[Cited, Cited]] = Counter()
    for row in rows:
        for a, b in row.conflicts:
            pairs[_pair(a, b)] += 1
    down = [r for r in rows if r.rating == -1]
    topical = [r.question for r in refused[:topic_questions]]
    return {
        "questions": len(rows),
        "outcomes": dict(Counter(r.outcome for r in rows)),
        "feedback": {
            "up": sum(1 for r in rows if r.rating == 1),
            "down": len(down),
        },
        "by_day": [
            {"day": day, "asked": sum(c.values()), **dict(c)} for day, c in sorted(days.items())
        ],
        "refused": {
            "by_reason": [
                {
                    "reason": reason,
                    "count": count,
                    "examples": [r.question for r in refused if (r.reason or "unknown") == reason][
                        :5
                    ],
                }
                for reason, count in reasons.most_common()
            ],
            "topics": [t.data() for t in cluster(topical, embed, limit=top)],
            "topics_of": len(topical),
        },
        "rated_down": [
            {
                "id": r.id,
                "conversation": r.conversation,
                "asked_at": r.asked_at,
                "question": r.question,
                "comment": r.comment,
                "outcome": r.outcome,
                "citations": [c.data() for c in r.citations],
            }
            for r in down[:50]
        ],
        "conflicts": [
            {"a": a.data(), "b": b.data(), "stale": _stale(a, b), "count": n}
            for (a, b), n in pairs.most_common(top)
        ],
        "top_cited": [
            {"doc_id": doc_id, "name": name, "count": n}
            for (doc_id, name), n in cited.most_common(top)
        ],
    }


def _pair(a: Cited, b: Cited) -> tuple[Cited, Cited]:
    """A conflict between two documents is the same whichever side came first."""
    return (a, b) if (a.doc_id, a.version) <= (b.doc_id, b.version) else (b, a)


def export_json(rows: Sequence[Asked]) -> str:
    return json.dumps({"questions": [r.data() for r in rows]}, ensure_ascii=False)


def export_csv(rows: Sequence[Asked]) -> str:
    """One line per question; citations and conflicts as `name (doc_id v2)` lists. Cells a
    spreadsheet would run as a formula are prefixed with a quote (CSV injection)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(EXPORT_COLUMNS)
    for row in rows:
        data = row.data()
        data["citations"] = "; ".join(_named(c) for c in row.citations)
        data["conflicts"] = "; ".join(f"{_named(a)} vs {_named(b)}" for a, b in row.conflicts)
        writer.writerow([_cell(data[c]) for c in EXPORT_COLUMNS])
    return out.getvalue()


def _stale(a: Cited, b: Cited) -> str | None:
    """The side whose document says it was updated first ("a" or "b"), when both say."""
    if not a.dated or not b.dated or a.dated == b.dated:
        return None
    return "a" if a.dated < b.dated else "b"


def _named(c: Cited) -> str:
    dated = f", updated {c.dated}" if c.dated else ""
    return f"{c.name} ({c.doc_id} v{c.version}{dated})"


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
