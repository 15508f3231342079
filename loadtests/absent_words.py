"""For each question of a dev set that passes the pre-checks (no follow-ups): its subject words
(`subject_words` less how it asks) that no retrieved block has, in its text or its document's
name. Measures whether "a subject word in no block" separates near-topic off-topic questions
from answerable ones (docs/decisions.md, answers lane, eleventh session).

    python -m loadtests.absent_words --kb loadtests/answers/rental_faq \
        --questions loadtests/answers/rental_questions.jsonl
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

import anyio

from stream_rag.answer.evaluate import load_questions
from stream_rag.answer.pipeline import Options
from stream_rag.config import Settings
from stream_rag.index.folders import ingest_paths
from stream_rag.language.coverage import has_word
from stream_rag.language.followups import _ASKING, subject_words
from stream_rag.services import open_services


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = replace(Settings.from_env(), data_dir=Path(tmp), qdrant_url=None)
        services = open_services(settings)
        ingest_paths(services.store, [args.kb], settings, indexer=services.indexer, quiet=True)

        async def run() -> None:
            try:
                for item in load_questions(args.questions):
                    if item.history:
                        continue
                    prepared = await services.answerer.prepare(item.question, Options())
                    if prepared.refusal is not None:
                        continue
                    texts = [f"{b.text}\n{b.name}" for b in prepared.blocks]
                    words = [w for w in subject_words(item.question) if w.casefold() not in _ASKING]
                    absent = [w for w in words if not any(has_word(t, w) for t in texts)]
                    print(f"{item.expect:8} {len(absent)}/{len(words)} {absent} | {item.question}")
            finally:
                await services.aclose()

        try:
            anyio.run(run)
        finally:
            services.close()


if __name__ == "__main__":
    main()
