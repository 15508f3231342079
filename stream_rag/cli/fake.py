"""`stream-rag fake-llm`: the scripted OpenAI-compatible chat server (model/fake.py)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.fake import FakeConfig


# The red team's knobs (model/redteam_knobs.py's RED_TEAM; a test holds the two equal), named
# here so that the CLI starts without importing the model.
RED_TEAM = (
    "bound_flip",
    "quantifier",
    "modal_flip",
    "antonym_swap",
    "drop_condition",
    "restate",
    "double_negation",
    "not_only",
    "exaggerate",
    "unit_swap",
    "number_words",
    "calendar",
    "range_shift",
    "separators",
    "cross_block",
    "lookalike",
    "smuggle",
    "subject_swap",
    "predicate_join",
    "list_extend",
    "novel_word",
    "qualifier",
    "scope_widen",
    "causal_link",
    "condition_add",
    "sides_swap",
    "bound_drop",
    "fraction",
    "due_to",
    "role_swap",
    "weaken",
    "certain",
    "comparative",
    "foreign",
    "parts_mix",
    "condition_flip",
    "obligation",
    "unit_change",
    "only_shift",
    "rates",
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fake-llm`."""
    fake = commands.add_parser(
        "fake-llm",
        help="run a scripted OpenAI-compatible chat server (for tests and load tests)",
        description="An OpenAI-compatible /v1/chat/completions that answers from the prompt's "
        "blocks and fabricates at the given rates (0..1), deterministically per seed. What it "
        "wrote, and which sentences are false, is at GET /fake/ledger?after=N.",
    )
    fake.add_argument("--host", default="127.0.0.1")
    fake.add_argument("--port", type=_port, default=8001)
    fake.add_argument("--seed", type=int, default=0)
    for behaviour in (
        "unissued",
        "wrong-block",
        "changed-number",
        "extra-claim",
        "negate",
        "swap-numbers",
        "swap-entities",
        "append-clause",
        "move-markers",
        "markup",
        "invisible",
        *(name.replace("_", "-") for name in RED_TEAM),
        "paraphrase",
        "split-markers",
        "label-markers",
    ):
        fake.add_argument(f"--{behaviour}", type=_rate, default=0.0, metavar="RATE")
    fake.add_argument("--tokens-per-second", type=_at_least_0, default=0.0, help="0: no pacing")
    fake.add_argument("--stall-after", type=int, help="pause after this many tokens")
    fake.add_argument("--stall-s", type=_at_least_0, default=0.0, help="length of that pause")
    fake.add_argument("--error-after", type=int, help="break the stream after this many tokens")
    fake.add_argument("--fix-on-retry", action="store_true", help="answer retries faithfully")
    fake.add_argument(
        "--revise-on-retry",
        action="store_true",
        help="answer a retry with the same draft less the sentences its feedback says failed",
    )
    fake.add_argument(
        "--reject-field",
        action="append",
        default=[],
        metavar="NAME",
        help="refuse requests carrying this field with 400, as strict servers do (repeatable)",
    )


def config_of(args: argparse.Namespace) -> FakeConfig:
    """The fake's configuration from `fake-llm`'s flags."""
    from ..model.fake import FakeConfig

    return FakeConfig(
        seed=args.seed,
        unissued=args.unissued,
        wrong_block=args.wrong_block,
        changed_number=args.changed_number,
        extra_claim=args.extra_claim,
        negate=args.negate,
        swap_numbers=args.swap_numbers,
        swap_entities=args.swap_entities,
        append_clause=args.append_clause,
        move_markers=args.move_markers,
        markup=args.markup,
        invisible=args.invisible,
        **{name: getattr(args, name) for name in RED_TEAM},
        paraphrase=args.paraphrase,
        split_markers=args.split_markers,
        label_markers=args.label_markers,
        tokens_per_second=args.tokens_per_second,
        stall_after=args.stall_after,
        stall_s=args.stall_s,
        error_after=args.error_after,
        fix_on_retry=args.fix_on_retry,
        revise_on_retry=args.revise_on_retry,
        reject_fields=tuple(args.reject_field),
    )


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..model.fake import create_fake_llm

    config = config_of(args)
    print(f"fake-llm on http://{args.host}:{args.port}/v1", file=sys.stderr)
    # uvicorn's default picks httptools where installed (the `load` extra): the fake shares the
    # cores with what it load-tests, and h11's per-chunk work is most of a token's send.
    uvicorn.run(create_fake_llm(config), host=args.host, port=args.port, log_level="warning")
    return 0


def _port(value: str) -> int:
    """A TCP port, as STREAM_RAG_PORT is checked (99999 hung with no message)."""
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a TCP port number (0-65535)")
    return port


def _number(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite number")
    return number


def _rate(value: str) -> float:
    """A share of sentences, 0..1 (1.5 behaved as 1)."""
    rate = _number(value)
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a rate between 0 and 1")
    return rate


def _at_least_0(value: str) -> float:
    """A pace or a pause: -5 tokens a second ran unpaced, as 0 does."""
    number = _number(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is negative")
    return number
