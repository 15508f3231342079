"""`stream-rag loadtest`: users, baselines and the report."""
