"""The index: vector backends, BM25 weights, per-chunk features, the indexing queue, folders."""
