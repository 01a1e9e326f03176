"""Yes/no LLM reranker: P(yes) / (P(yes) + P(no)) from first-token log-probabilities.

It shares its machinery with the digit-scoring reranker, so it lives in ``llm_pointwise``; this module is the
name people look for.
"""

from legalrag.rerank.llm_pointwise import LLMYesNoReranker

__all__ = ["LLMYesNoReranker"]
