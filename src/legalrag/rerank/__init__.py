"""Rerankers reorder a candidate list: learned ranker, LLM listwise, LLM pointwise."""

from legalrag.rerank.base import Reranker

__all__ = ["Reranker"]
