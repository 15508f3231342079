"""What the question log keeps of one streamed answer: its events seen as they go out, then
one `Asked` row (store/questions.py), written before the stream's last event so a rating can
follow at once."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidFieldError
from ..events import Done, Dropped, Error, Event, Refusal, SentenceOut
from ..store.questions import Asked, Cited

# A conversation id is the visitor's tab's random id (crypto.randomUUID in the widget).
CONVERSATION_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def conversation_of(body: Mapping[str, object]) -> str | None:
    value = body.get("conversation")
    if value is None:
        return None
    if not isinstance(value, str) or not CONVERSATION_ID.fullmatch(value):
        raise InvalidFieldError("'conversation' must be 8-64 letters, digits, '-' or '_'")
    return value


class AnswerRecord:
    """Collects an answer's outcome from its events."""

    def __init__(
        self,
        answer_id: str,
        *,
        collection: str,
        question: str,
        conversation: str | None,
        key_id: str | None,
    ) -> None:
        self.answer_id = answer_id
        self.collection = collection
        self.question = question
        self.conversation = conversation
        self.key_id = key_id
        self.sentences = 0
        self.dropped = 0
        self.citations: dict[tuple[str, int], Cited] = {}
        self.conflicts: list[tuple[Cited, Cited]] = []
        self.outcome: str | None = None
        self.reason: str | None = None

    def see(self, event: Event) -> None:
        if isinstance(event, SentenceOut):
            self.sentences += 1
            for block in event.citations:
                key = (block.doc_id, block.version)
                self.citations.setdefault(key, Cited(block.doc_id, block.version, block.name))
        elif isinstance(event, Dropped):
            self.dropped += 1
        elif isinstance(event, Refusal):
            self.outcome, self.reason = "refused", event.reason
            for detail in event.details:
                a, b = Cited.of(detail.get("a")), Cited.of(detail.get("b"))
                if a is not None and b is not None:
                    self.conflicts.append((a, b))
        elif isinstance(event, Error):
            self.outcome, self.reason = "failed", event.code
        elif isinstance(event, Done) and self.outcome is None:
            if self.sentences:
                self.outcome = "answered"
            else:  # every sentence withheld: the knowledge base did not support an answer
                self.outcome, self.reason = "refused", "nothing_verified"

    def asked(self) -> Asked:
        """The row; an answer whose stream ended without `done` or `error` was stopped."""
        return Asked(
            id=self.answer_id,
            collection=self.collection,
            question=self.question,
            outcome=self.outcome or "stopped",
            conversation=self.conversation,
            key_id=self.key_id,
            reason=self.reason,
            sentences=self.sentences,
            dropped=self.dropped,
            citations=tuple(self.citations.values()),
            conflicts=tuple(self.conflicts),
        )
