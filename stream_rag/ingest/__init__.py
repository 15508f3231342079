"""Bytes to text to chunks: extraction in worker processes (with limits), chunking, progress."""
