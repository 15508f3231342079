"""`stream-rag eval retrieval|gate|answers`: the evaluations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import Settings


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`eval` and its kinds."""
    evaluate = commands.add_parser(
        "eval",
        help="measure retrieval, the citation gate or whole answers",
        description="Evaluations.",
    )
    kinds = evaluate.add_subparsers(dest="kind", required=True, metavar="KIND")
    retrieval = kinds.add_parser(
        "retrieval",
        help="nDCG@10, MRR@10, Recall@10/100 and latency per retrieval mode",
        description="Index a BEIR-layout data set (corpus.jsonl, queries.jsonl, "
        "qrels/<split>.tsv) into a throwaway index and print one row per mode.",
    )
    retrieval.add_argument("--beir", type=Path, required=True, metavar="DIR")
    retrieval.add_argument("--mode", choices=["dense", "bm25", "hybrid", "all"], default="all")
    retrieval.add_argument("--split", default="test", help="qrels split (default: test)")
    # Defaults: the service's (STREAM_RAG_DENSE_WEIGHT, _BM25_WEIGHT, _TITLE_WEIGHT).
    retrieval.add_argument("--dense-weight", type=float)
    retrieval.add_argument("--bm25-weight", type=float)
    retrieval.add_argument("--title-weight", type=float, help="FAQ question matching")
    retrieval.add_argument("--fusion", choices=["weighted", "rrf"], default="weighted")
    gate = kinds.add_parser(
        "gate",
        help="supported-pass and unsupported-reject rates of the citation gate",
        description="Judge labelled sentences with the gate. FILE: JSONL, one object a line, "
        '{"sentence", "blocks": [texts], "cited": [1-based numbers], "label": bool}.',
    )
    gate.add_argument("--data", type=Path, required=True, metavar="FILE")
    gate.add_argument("--threshold", type=float, help="substance threshold (default: tuned)")
    gate.add_argument("--curve", action="store_true", help="also sweep thresholds 0.30..0.90")
    gate.add_argument(
        "--mode",
        choices=["strict", "balanced"],
        help="the gate's operating point (default: STREAM_RAG_GATE_MODE, strict)",
    )
    gate.add_argument(
        "--verdicts",
        type=Path,
        metavar="OUT",
        help="also write each sentence's verdict to OUT (JSONL: label, ok, reason, stage, "
        "detail, scores), to see which check decided what",
    )
    gate.add_argument(
        "--stages",
        choices=["lexical", "all"],
        default="all",
        help="lexical stage only, or every configured stage (default: all)",
    )
    answers = kinds.add_parser(
        "answers",
        help="answered, gold-cited, refusal and conflict rates of whole answers",
        description="Ingest a knowledge base into a throwaway data directory and ask every "
        'question through the /v1/answer code path. FILE: JSONL, {"question", "history"?: '
        '[{"question", "answer"}], "gold": [file names] | null, "expect": '
        '"answer"|"refuse"|"conflict", "left_out"?: bool (a part no source covers is named), '
        '"phrases"?: [phrase | [alternatives]] (each in the answer), "avoid"?: [phrase], '
        '"first"?: phrase | [alternatives] (in the first sentence, which must cite gold), '
        '"stale"?: file name (a conflict refusal names it the older side)}.',
    )
    answers.add_argument("--kb", type=Path, metavar="DIR")
    answers.add_argument("--questions", type=Path, metavar="FILE")
    answers.add_argument(
        "--sets",
        type=Path,
        metavar="FILE",
        help='JSON list of {"name", "kb", "questions", "held_out"?}: one row per set',
    )
    answers.add_argument("--only", nargs="+", metavar="NAME", help="only these sets of --sets")
    answers.add_argument("--verbose", action="store_true", help="list every missed expectation")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.kind == "gate":
        return _eval_gate(settings, args)
    if args.kind == "answers":
        from ..answer.evaluate import main as eval_answers

        return eval_answers(settings, args)
    from ..embed.backends import at_precision, build_embedder
    from ..retrieve.evaluate import MODES, evaluate_retrieval, format_reports
    from ..retrieve.metrics import load_beir

    data = load_beir(args.beir, args.split)
    modes = list(MODES) if args.mode == "all" else [args.mode]
    embedder, status = (
        (None, "dense branch not needed") if modes == ["bm25"] else build_embedder(settings)
    )
    if embedder is None and modes != ["bm25"]:
        print(f"stream-rag: {status}; evaluating bm25 only", file=sys.stderr)
        modes = ["bm25"]
    weights = {
        "dense": settings.dense_weight if args.dense_weight is None else args.dense_weight,
        "bm25": settings.bm25_weight if args.bm25_weight is None else args.bm25_weight,
        "title": settings.title_weight if args.title_weight is None else args.title_weight,
    }
    print(
        f"# {args.beir}: {len(data.corpus)} documents, {len(data.queries)} judged queries; "
        f"{status}; fusion {args.fusion} "
        + " ".join(f"{k} {v}" for k, v in weights.items())
        + f"; precision: queries {settings.embed_query_precision},"
        f" passages {settings.embed_passage_precision}"
    )
    passages = queries = embedder
    if embedder is not None:
        passages = at_precision(embedder, settings.embed_passage_precision)
        queries = at_precision(embedder, settings.embed_query_precision)
    reports = evaluate_retrieval(
        data,
        modes,
        passages,
        query_embedder=queries,
        weights=weights,
        fusion=args.fusion,
        progress=lambda message: print(f"# {message}", file=sys.stderr),
    )
    print(format_reports(reports))
    return 0


def _eval_gate(settings: Settings, args: argparse.Namespace) -> int:
    from ..gate.evaluate import curve, judge, load, report, score
    from ..gate.lexical import DEFAULT_MAX_UNSUPPORTED, DEFAULT_THRESHOLD

    examples = load(args.data)
    if not examples:
        print(f"stream-rag: error: no examples in {args.data}", file=sys.stderr)
        return 1
    threshold = args.threshold or settings.gate_threshold or DEFAULT_THRESHOLD
    stages = None
    if args.stages == "all":
        from ..gate.evaluate import eval_stages

        stages, status = eval_stages(settings)
        print(status)
    mode = args.mode or settings.gate_mode
    print(f"operating point: {mode}")
    verdicts = judge(examples, threshold, DEFAULT_MAX_UNSUPPORTED, stages, mode)
    print(report(score(examples, verdicts), threshold, DEFAULT_MAX_UNSUPPORTED))
    if args.verdicts is not None:
        from ..gate.evaluate import verdict_lines

        try:
            args.verdicts.write_text("".join(verdict_lines(examples, verdicts)), encoding="utf-8")
        except OSError as exc:
            print(
                f"stream-rag: error: cannot write {args.verdicts}: {exc.strerror}", file=sys.stderr
            )
            return 1
    if args.curve:
        print(curve(examples, DEFAULT_MAX_UNSUPPORTED, mode))
    return 0
