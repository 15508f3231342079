"""`python -m stream_rag.cli`: the same command line as `stream-rag`."""

from .commands import main

raise SystemExit(main())
