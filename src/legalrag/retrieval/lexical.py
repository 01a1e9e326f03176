"""Shared machinery of the sparse lexical retrievers (BM25, QLD).

Both score a batch of queries as one sparse product ``Q @ W.T`` (queries x vocabulary times
vocabulary x documents): the non-zeros of each result row are exactly the documents that share a term
with the query, so top-k selection, metadata filters and "matching documents only" come from the same
compressed row without a dense score array per query. Filters are applied as a boolean mask over all
documents before selection (never by post-filtering a short list), so a filtered search still returns
``k`` hits when ``k`` matching documents exist.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from legalrag.retrieval.base import DocumentFilter
from legalrag.retrieval.tokenize import Tokenizer
from legalrag.types import Document, Hit

QUERY_CHUNK = 128  # queries per sparse product; bounds the memory of one product


TITLE_MODES = ("none", "law", "full")


def check_title_mode(title_mode: str) -> str:
    if title_mode not in TITLE_MODES:
        from legalrag.errors import InputError

        raise InputError(f"unknown title mode {title_mode!r}; use one of {', '.join(TITLE_MODES)}")
    return title_mode


def document_text(doc: Document, title_mode: str) -> str:
    """The text that is indexed: ``none`` = the text only; ``law`` = the law title (``metadata['law']``, else
    the document title) and the text; ``full`` = the whole title (with the article number) and the text.

    ``law`` is the default: on STARD, article numbers in Chinese numerals add noise tokens (第一, 一百...)
    for layperson questions, while the law's name helps questions that mention it."""
    if title_mode == "none":
        return doc.text
    head = doc.title if title_mode == "full" else (doc.metadata.get("law") or doc.title)
    return f"{head}\n{doc.text}" if head else doc.text


@dataclass
class TokenizedCorpus:
    """Token ids per document and the vocabulary (token -> id), shared by the components of one build."""

    vocab: dict[str, int]
    ids: list[list[int]]

    @classmethod
    def build(cls, documents: Sequence[Document], tokenizer: Tokenizer, title_mode: str,
              progress: bool = False) -> "TokenizedCorpus":
        check_title_mode(title_mode)
        vocab: dict[str, int] = {}
        ids = []
        texts = [document_text(d, title_mode) for d in documents]
        for toks in _iter_tokens(tokenizer, texts, progress):
            ids.append([vocab.setdefault(t, len(vocab)) for t in toks])
        return cls(vocab, ids)

    def counts_matrix(self):
        """Documents x vocabulary term counts as a scipy CSC matrix (int32)."""
        import scipy.sparse as sp

        lengths = np.fromiter((len(x) for x in self.ids), dtype=np.int64, count=len(self.ids))
        rows = np.repeat(np.arange(len(self.ids), dtype=np.int32), lengths)
        cols = np.fromiter((t for doc in self.ids for t in doc), dtype=np.int32, count=int(lengths.sum()))
        data = np.ones(len(cols), dtype=np.int32)
        m = sp.csc_matrix((data, (rows, cols)), shape=(len(self.ids), max(len(self.vocab), 1)), dtype=np.int32)
        m.sum_duplicates()
        return m


def _iter_tokens(tokenizer: Tokenizer, texts: Sequence[str], progress: bool):
    if progress:
        from tqdm import tqdm

        texts = tqdm(texts, desc="tokenize", unit="doc")
    for t in texts:
        yield tokenizer(t)


def query_matrix(token_lists: Sequence[Sequence[str]], vocab: dict[str, int], dedupe: bool):
    """Queries x vocabulary matrix of query-term counts (CSR, float32); out-of-vocabulary tokens dropped."""
    import scipy.sparse as sp

    rows, cols = [], []
    for i, toks in enumerate(token_lists):
        ids = [vocab[t] for t in toks if t in vocab]
        if dedupe:
            ids = list(dict.fromkeys(ids))
        rows.extend([i] * len(ids))
        cols.extend(ids)
    data = np.ones(len(cols), dtype=np.float32)
    m = sp.csr_matrix((data, (np.asarray(rows, dtype=np.int32), np.asarray(cols, dtype=np.int32))),
                      shape=(len(token_lists), max(len(vocab), 1)), dtype=np.float32)
    m.sum_duplicates()
    return m


class MaskCache:
    """Remembers the boolean mask of the last filter seen, so a batch or repeated filter costs one pass."""

    def __init__(self, documents: Sequence[Document]):
        self.documents = documents
        self._filter_ref: Callable[[], object] | None = None
        self._mask: np.ndarray | None = None

    def mask(self, filter: DocumentFilter | None) -> np.ndarray | None:
        if filter is None:
            return None
        if self._filter_ref is not None and self._filter_ref() is filter:
            return self._mask
        mask = np.fromiter((bool(filter(d)) for d in self.documents), dtype=bool, count=len(self.documents))
        try:
            self._filter_ref = weakref.ref(filter)
        except TypeError:  # not weak-referenceable: do not cache
            self._filter_ref = None
            return mask
        self._mask = mask
        return mask


def top_k_row(doc_idx: np.ndarray, scores: np.ndarray, k: int, mask: np.ndarray | None):
    """Best ``k`` of the (document, score) pairs of one row; ties broken by corpus order."""
    if mask is not None:
        keep = mask[doc_idx]
        doc_idx, scores = doc_idx[keep], scores[keep]
    if len(doc_idx) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        # keep every document tied with the k-th score so the tie-break below is by corpus order
        kth = scores[part].min()
        part = np.flatnonzero(scores >= kth)
        doc_idx, scores = doc_idx[part], scores[part]
    order = np.lexsort((doc_idx, -scores))[:k]
    return doc_idx[order], scores[order]


def make_hits(documents: Sequence[Document], doc_idx: np.ndarray, scores: np.ndarray, name: str) -> list[Hit]:
    return [Hit(document=documents[int(i)], score=float(s), rank=r, retriever=name)
            for r, (i, s) in enumerate(zip(doc_idx, scores), 1)]


def check_k(k: int) -> int:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return int(k)
