"""Counts in what the CLI prints agree with their noun: "1 version", "2 versions"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, plural unless the count is one ("1 key", "0 keys", "3 matches")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
