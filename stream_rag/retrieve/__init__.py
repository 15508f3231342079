"""Retrieval: dense and BM25 branches fused, optional rerank, and its evaluation."""
