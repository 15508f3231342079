"""Upload to text to chunks: streaming multipart, extraction in worker processes, chunking."""
