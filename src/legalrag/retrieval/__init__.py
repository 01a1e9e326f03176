"""Retrievers: lexical (BM25, QLD), dense, and fusion of several."""

from legalrag.retrieval.base import Retriever

__all__ = ["Retriever"]
