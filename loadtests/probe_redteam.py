"""Which red-team families the gate shows today, judged directly (no server): triage before a
knob's benchmark run (bench_hostile drives the real routes).

    python -m loadtests.probe_redteam [--kb DIR ...] [--families a,b] [--examples N]

Each document of each knowledge base (default: the sample, railway, the gym fixture and the
French/German/Spanish polyglot KB) is cut into blocks as ingest cuts it (`chunk_spans`); all of
a document's blocks are issued together. Every sentence of a block goes through each family
(model/redteam_*.py, the fake's knobs and the candidate ones); each option, normalised as the
routes normalise it, is judged citing its block by the lexical stage and, in the grey zone, the
semantic stage (local MiniLM). Prints per family and variant: false written / shown, controls
written / shown, and examples shown.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

import anyio

from stream_rag.gate.judge import Stages
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.normalise import normalise_unit
from stream_rag.ingest.chunking import chunk_spans
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Family, Scene, options_for
from stream_rag.model.redteam_knobs import FAMILIES as KNOBS
from stream_rag.model.redteam_lang import LANG
from stream_rag.model.redteam_shifts import SHIFTS

ROOT = Path(__file__).parent
DEFAULT_KBS = (
    ROOT.parent / "stream_rag" / "sample_kb",
    ROOT / "answers" / "railway_faq",
    ROOT.parent / "tests" / "fixtures" / "gym_kb",
    ROOT / "answers" / "polyglot_kb",
)
CANDIDATES: dict[str, Family] = {**SHIFTS, **LANG}


def documents(kb: Path) -> list[list[str]]:
    """Each text document's blocks, cut at about 700 characters as ingest cuts them."""
    out = []
    for path in sorted(kb.iterdir()):
        if path.suffix not in (".md", ".txt"):
            continue
        text = path.read_text()
        blocks = [text[a:b] for a, b in chunk_spans(text, 700, 0)]
        out.append([b for b in blocks if block_sentences(b)])
    return [d for d in out if d]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, action="append", help="a folder of documents")
    parser.add_argument("--families", help="comma-separated (default: every family)")
    parser.add_argument("--examples", type=int, default=3, help="shown examples per variant")
    parser.add_argument("--lexical", action="store_true", help="no semantic stage")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    families = {**KNOBS, **CANDIDATES}
    if args.families:
        families = {k: families[k] for k in args.families.split(",")}
    stages = Stages()
    if not args.lexical:
        from stream_rag.embed.minilm import MiniLMEmbedder
        from stream_rag.gate.semantic import SemanticStage

        stages = Stages(SemanticStage(MiniLMEmbedder(), None))
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    shown: dict[tuple[str, str], list[str]] = defaultdict(list)
    rng = random.Random(args.seed)
    for kb in args.kb or DEFAULT_KBS:
        for blocks in documents(kb):
            judge = stages.judge(GateContext(blocks))
            issued = dict(enumerate(blocks, start=1))
            for n, block in issued.items():
                own = block_sentences(block)
                for sentence in own:
                    for name, family in families.items():
                        scene = Scene(n, sentence, own, issued, rng)
                        for option in options_for(family, scene):
                            raw = option.text if option.cites else f"{option.text} [{n}]"
                            seen = normalise_unit(raw, blocks)
                            ok = seen.refused is None and anyio.run(judge, seen.text).ok
                            key = (name, option.variant)
                            kind = "false" if option.false else "true"
                            counts[key][f"{kind}_written"] += 1
                            if ok:
                                counts[key][f"{kind}_shown"] += 1
                                if option.false:
                                    shown[key].append(f"{option.text}  <=  {sentence}")
    print(f"{'family':<16} {'variant':<20} {'false shown/written':>20} {'true shown/written':>19}")
    totals: Counter[str] = Counter()
    for (name, variant), c in sorted(counts.items()):
        false = f"{c['false_shown']}/{c['false_written']}" if c["false_written"] else "-"
        true = f"{c['true_shown']}/{c['true_written']}" if c["true_written"] else "-"
        print(f"{name:<16} {variant:<20} {false:>20} {true:>19}")
        totals.update({k: v for k, v in c.items()})
    print(
        f"all: false {totals['false_shown']}/{totals['false_written']}, "
        f"true {totals['true_shown']}/{totals['true_written']}"
    )
    for key, texts in sorted(shown.items()):
        print(f"\n{key[0]} / {key[1]}:")
        for text in rng.sample(texts, min(args.examples, len(texts))):
            print(f"  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
