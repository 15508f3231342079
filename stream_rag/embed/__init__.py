"""Embeddings: the local MiniLM, remote embedders, batched queries, sentence vectors."""
