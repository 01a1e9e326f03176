"""Query likelihood with Dirichlet smoothing (Zhai & Lafferty, 2001) on scipy sparse matrices.

    log p(q|d) = sum_{w in q} c(w,q) * log((c(w,d) + mu * p(w|C)) / (|d| + mu))

which we compute, for the documents sharing at least one term with the query, as

    sum_{w in q and d} c(w,q) * log(1 + c(w,d) / (mu * p(w|C)))     (one sparse product for all queries)
  + |q| * log(mu / (|d| + mu)) + sum_{w in q} c(w,q) * log p(w|C)    (vectors)

so the score *is* the log query likelihood (out-of-vocabulary query terms are ignored). Only raw counts are
stored (``counts.*.npy``, ``doc_len.npy``, ``coll_freq.npy``, ``vocab.json``): ``mu`` can change at load time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from legalrag.errors import IndexError_, InputError
from legalrag.retrieval.base import DocumentFilter
from legalrag.retrieval.lexical import (QUERY_CHUNK, MaskCache, TokenizedCorpus, check_k, make_hits,
                                        query_matrix, top_k_row)
from legalrag.retrieval.tokenize import Tokenizer, TokenizerConfig, tokenizer_for
from legalrag.types import Document, Hit

PARAMS_FILE = "legalrag.json"
# Statute articles are short (about 60 tokens on STARD), so a prior much smaller than the usual 1000-2000 for
# news/web documents fits better: on STARD's training queries mu=200 beat mu=1000 (docs/lab/notebook.md).
DEFAULT_MU = 200.0
_WEIGHT_STEP = 1 << 20  # matrix entries whose weights are computed at a time when loading


class QLDRetriever:
    name = "qld"

    def __init__(self, counts: Any, vocab: dict[str, int], documents: Sequence[Document], tokenizer: Tokenizer,
                 *, mu: float = DEFAULT_MU, title_mode: str = "law"):
        """``counts``: documents x vocabulary term counts, a scipy CSC matrix."""
        import scipy.sparse as sp

        if mu <= 0:
            raise InputError(f"mu must be positive, got {mu}")
        if counts.shape[0] != len(documents):
            raise IndexError_(f"the QLD matrix has {counts.shape[0]} documents but {len(documents)} were given; "
                              "rebuild the index")
        self.counts = sp.csc_matrix(counts)
        self.vocab = vocab
        self.documents = documents
        self.tokenizer = tokenizer
        self.mu = float(mu)
        self.title_mode = title_mode
        self.doc_len = np.asarray(self.counts.sum(axis=1)).ravel().astype(np.float64)
        coll_freq = np.asarray(self.counts.sum(axis=0)).ravel().astype(np.float64)
        total = coll_freq.sum()
        if total <= 0:
            raise InputError("the documents contain no indexable words (after stop-word removal)")
        self.p_coll = coll_freq / total
        # terms x documents: log(1 + c(w,d) / (mu p(w|C))), the CSC column layout read as CSR rows
        c = self.counts
        data = np.empty(c.nnz, dtype=np.float32)
        for a in range(0, c.nnz, _WEIGHT_STEP):  # in slices: no float64 temporaries the size of the matrix
            b = min(a + _WEIGHT_STEP, c.nnz)
            term_of_entry = np.searchsorted(c.indptr, np.arange(a, b), side="right") - 1
            data[a:b] = np.log1p(c.data[a:b] / (self.mu * self.p_coll[term_of_entry]))
        self._weights_t = sp.csr_matrix((data, c.indices, c.indptr), shape=(c.shape[1], c.shape[0]))
        self._log_len_norm = np.log(self.mu / (self.doc_len + self.mu))
        with np.errstate(divide="ignore"):
            self._log_p_coll = np.log(self.p_coll)
        self._masks = MaskCache(documents)

    @property
    def params(self) -> dict[str, Any]:
        return {"mu": self.mu, "title_mode": self.title_mode, "tokenizer": self.tokenizer.config.to_dict()}

    @classmethod
    def from_documents(cls, documents: Sequence[Document], tokenizer: Tokenizer | None = None, *,
                       lang: str = "auto", mu: float = DEFAULT_MU, title_mode: str = "law",
                       tokens: TokenizedCorpus | None = None, progress: bool = False) -> "QLDRetriever":
        if not documents:
            raise InputError("cannot build a QLD index over no documents")
        if tokenizer is None:
            tokenizer = tokenizer_for(lang, sample=(d.text for d in documents))
        if tokens is None:
            tokens = TokenizedCorpus.build(documents, tokenizer, title_mode, progress)
        return cls(tokens.counts_matrix(), dict(tokens.vocab), documents, tokenizer, mu=mu, title_mode=title_mode)

    def save(self, directory: str | Path) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        c = self.counts
        np.save(d / "counts.data.npy", c.data.astype(np.int32), allow_pickle=False)
        np.save(d / "counts.indices.npy", c.indices.astype(np.int32), allow_pickle=False)
        np.save(d / "counts.indptr.npy", c.indptr.astype(np.int64), allow_pickle=False)
        (d / "vocab.json").write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")
        (d / PARAMS_FILE).write_text(json.dumps({**self.params, "n_documents": len(self.documents),
                                                 "n_terms": c.shape[1]}, ensure_ascii=False, indent=2),
                                     encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, documents: Sequence[Document], mu: float | None = None,
             mmap: bool = False) -> "QLDRetriever":
        """``mmap``: map the count arrays instead of reading them (the weights are still computed in memory)."""
        import scipy.sparse as sp

        d = Path(directory)
        if not (d / PARAMS_FILE).exists():
            raise IndexError_(f"{d} is not a legalrag QLD component ({PARAMS_FILE} is missing); rebuild the index")
        params = json.loads((d / PARAMS_FILE).read_text(encoding="utf-8"))
        mode = "r" if mmap else None
        data = np.load(d / "counts.data.npy", allow_pickle=False, mmap_mode=mode)
        indices = np.load(d / "counts.indices.npy", allow_pickle=False, mmap_mode=mode)
        indptr = np.load(d / "counts.indptr.npy", allow_pickle=False, mmap_mode=mode)
        counts = sp.csc_matrix((data, indices, indptr), shape=(params["n_documents"], params["n_terms"]))
        vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer(TokenizerConfig.from_dict(params["tokenizer"]))
        return cls(counts, vocab, documents, tokenizer, mu=params["mu"] if mu is None else mu,
                   title_mode=params.get("title_mode", "law"))

    def log_likelihood(self, query: str) -> np.ndarray:
        """log p(query | d) for every document (dense; for inspection and tests)."""
        q = query_matrix([self.tokenizer(query)], self.vocab, dedupe=False)
        matched = np.asarray((q @ self._weights_t).todense()).ravel()
        return matched + self._constant_terms(q)[0]

    def _constant_terms(self, q) -> np.ndarray:
        """queries x documents: |q| log(mu/(|d|+mu)) + sum c(w,q) log p(w|C) (dense, one row per query)."""
        qlen = np.asarray(q.sum(axis=1)).ravel()
        coll = np.asarray(q @ self._log_p_coll).ravel()
        return qlen[:, None] * self._log_len_norm[None, :] + coll[:, None]

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.retrieve_batch([query], k=k, filter=filter)[0]

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                       progress: bool = False) -> list[list[Hit]]:
        """Top ``k`` documents sharing a term with each query, by log query likelihood."""
        k = check_k(k)
        mask = self._masks.mask(filter)
        token_lists = self.tokenizer.tokenize_many(list(queries), progress=progress, desc="tokenize queries")
        out: list[list[Hit]] = []
        for start in range(0, len(token_lists), QUERY_CHUNK):
            q = query_matrix(token_lists[start:start + QUERY_CHUNK], self.vocab, dedupe=False)
            s = (q @ self._weights_t).tocsr()
            qlen = np.asarray(q.sum(axis=1)).ravel()
            coll = np.asarray(q @ self._log_p_coll).ravel()
            for row in range(s.shape[0]):
                lo, hi = s.indptr[row], s.indptr[row + 1]
                idx = s.indices[lo:hi]
                sc = s.data[lo:hi].astype(np.float64) + qlen[row] * self._log_len_norm[idx] + coll[row]
                idx, sc = top_k_row(idx, sc, k, mask)
                out.append(make_hits(self.documents, idx, sc, self.name))
        return out


def build_component(ctx, directory: Path, *, mu: float = DEFAULT_MU, title_mode: str = "law", stopwords: bool = True,
                    jieba_mode: str = "search") -> dict[str, Any]:
    """Index component builder (see ``retrieval/index.py``): streamed from the spilled tokenisation."""
    from legalrag.retrieval.build import NpyWriter

    if mu <= 0:
        raise InputError(f"mu must be positive, got {mu}")
    tokenizer = ctx.tokenizer(stopwords=stopwords, jieba_mode=jieba_mode)
    postings = ctx.postings(tokenizer, title_mode)
    if not postings.vocab:
        raise InputError("the documents contain no indexable words (after stop-word removal)")
    nnz = postings.n_postings
    np.save(directory / "counts.indptr.npy", np.concatenate(([0], np.cumsum(postings.df))).astype(np.int64),
            allow_pickle=False)
    with NpyWriter(directory / "counts.data.npy", np.int32, nnz) as data, \
            NpyWriter(directory / "counts.indices.npy", np.int32, nnz) as indices:
        for _, docs, tf in postings.blocks():
            data.write(tf)
            indices.write(docs)
    (directory / "vocab.json").write_text(json.dumps(postings.vocab, ensure_ascii=False), encoding="utf-8")
    params = {"mu": float(mu), "title_mode": title_mode, "tokenizer": tokenizer.config.to_dict()}
    (directory / PARAMS_FILE).write_text(json.dumps({**params, "n_documents": ctx.n_documents,
                                                     "n_terms": len(postings.vocab)}, ensure_ascii=False, indent=2),
                                         encoding="utf-8")
    return params


def load_component(index, directory: Path, params: dict[str, Any], mu: float | None = None,
                   mmap: bool = True) -> QLDRetriever:
    return QLDRetriever.load(directory, index.documents, mu=mu, mmap=mmap)
