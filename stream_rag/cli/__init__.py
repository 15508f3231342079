"""The `stream-rag` command line."""

from .commands import main

__all__ = ["main"]
