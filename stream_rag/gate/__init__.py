"""The citation gate: segmentation, citations, the lexical and semantic stages."""
