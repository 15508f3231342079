"""The document store: documents by id, numbered versions, chunks and original bytes."""
