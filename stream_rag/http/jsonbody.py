"""Strict JSON request bodies: anything the handlers could choke on later is a 400 here.

`json.loads` alone accepts `NaN` and `Infinity`, turns `1e999` into `inf`, raises
RecursionError (not ValueError) on deep nesting, and keeps lone surrogates (`"\\ud800"`) in
strings, which then fail to encode deep inside the tokeniser or the response. All of these
are refused before a handler sees the body.
"""

from __future__ import annotations

import codecs
import json
import math

from ..errors import InputError

MAX_DEPTH = 32


def parse_object(raw: bytes) -> dict[str, object]:
    """The body as a JSON object, or an `InputError` saying what is wrong with it."""
    body = parse(raw)
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def parse(raw: bytes) -> object:
    """Any JSON value, strictly (see the module docstring). One leading UTF-8 byte order
    mark is skipped, as RFC 8259 lets a parser do: some Windows tools write one."""
    try:
        text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the request body is not UTF-8 (byte {exc.start})") from None
    try:
        body = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise InputError(f"the JSON body is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, over-long integers
        raise InputError(f"the request body must be JSON ({exc})") from None
    check_value(body)
    return body


def check_value(value: object) -> None:
    """Refuse nesting deeper than `MAX_DEPTH` and strings with lone surrogates (iteratively:
    a recursive walk would itself overflow on the inputs it exists to refuse)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            check_text(item)
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise InputError(f"the JSON body is nested more than {MAX_DEPTH} levels deep")
            if isinstance(item, dict):
                for key, child in item.items():
                    check_text(key)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)


def check_text(text: str) -> None:
    """A string must encode as UTF-8: a lone surrogate (`\\ud800`) cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"a string in the request has a lone surrogate at character {exc.start}"
        ) from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"the number {literal[:40]} is out of range")
    return value
