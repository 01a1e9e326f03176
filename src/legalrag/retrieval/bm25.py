"""BM25 on bm25s: bm25s builds and stores the document x term score matrix (.npy + JSON, no pickle);
queries are scored as one sparse product over that matrix (see ``retrieval/lexical.py``).

Parameters: ``k1``, ``b`` and ``method`` (bm25s's ``lucene`` (default), ``robertson`` or ``atire``).
``title_mode`` says which title is indexed with the text (none, law, full; see ``lexical.document_text``);
``dedupe_query`` counts a repeated query term once.
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

METHODS = ("lucene", "robertson", "atire")  # the bm25s variants whose scores are zero for non-matching docs
PARAMS_FILE = "legalrag.json"


class BM25Retriever:
    name = "bm25"

    def __init__(self, model: Any, documents: Sequence[Document], tokenizer: Tokenizer, *,
                 title_mode: str = "law", dedupe_query: bool = False):
        import scipy.sparse as sp

        self.model = model
        self.documents = documents
        self.tokenizer = tokenizer
        self.title_mode = title_mode
        self.dedupe_query = dedupe_query
        n_docs = int(model.scores["num_docs"])
        if n_docs != len(documents):
            raise IndexError_(f"the BM25 matrix has {n_docs} documents but {len(documents)} were given; "
                              "rebuild the index")
        s = model.scores
        # bm25s stores documents x terms in CSC form; the same arrays read as CSR are terms x documents.
        self._weights_t = sp.csr_matrix((s["data"], s["indices"], s["indptr"]),
                                        shape=(len(s["indptr"]) - 1, n_docs))
        self._masks = MaskCache(documents)

    @property
    def params(self) -> dict[str, Any]:
        return {"k1": float(self.model.k1), "b": float(self.model.b), "method": self.model.method,
                "title_mode": self.title_mode, "dedupe_query": self.dedupe_query,
                "tokenizer": self.tokenizer.config.to_dict()}

    @classmethod
    def from_documents(cls, documents: Sequence[Document], tokenizer: Tokenizer | None = None, *,
                       lang: str = "auto", k1: float = 1.2, b: float = 0.75, method: str = "lucene",
                       title_mode: str = "law", dedupe_query: bool = False,
                       tokens: TokenizedCorpus | None = None, progress: bool = False) -> "BM25Retriever":
        """Index ``documents``; pass ``tokens`` to reuse a tokenisation shared with other components."""
        bm25s = _bm25s()
        if method not in METHODS:
            raise InputError(f"unknown BM25 method {method!r}; use one of {', '.join(METHODS)}")
        if not documents:
            raise InputError("cannot build a BM25 index over no documents")
        if tokenizer is None:
            tokenizer = tokenizer_for(lang, sample=(d.text for d in documents))
        if tokens is None:
            tokens = TokenizedCorpus.build(documents, tokenizer, title_mode, progress)
        if not tokens.vocab:
            raise InputError("the documents contain no indexable words (after stop-word removal)")
        model = bm25s.BM25(k1=k1, b=b, method=method)
        model.index((tokens.ids, dict(tokens.vocab)), create_empty_token=False, show_progress=progress)
        return cls(model, documents, tokenizer, title_mode=title_mode, dedupe_query=dedupe_query)

    def save(self, directory: str | Path) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.model.save(str(d), allow_pickle=False, show_progress=False)
        (d / PARAMS_FILE).write_text(json.dumps({**self.params, "n_documents": len(self.documents)},
                                                ensure_ascii=False, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, documents: Sequence[Document], mmap: bool = False) -> "BM25Retriever":
        bm25s = _bm25s()
        d = Path(directory)
        if not (d / PARAMS_FILE).exists():
            raise IndexError_(f"{d} is not a legalrag BM25 component ({PARAMS_FILE} is missing); rebuild the index")
        params = json.loads((d / PARAMS_FILE).read_text(encoding="utf-8"))
        model = bm25s.BM25.load(str(d), mmap=mmap, allow_pickle=False, show_progress=False)
        tokenizer = Tokenizer(TokenizerConfig.from_dict(params["tokenizer"]))
        return cls(model, documents, tokenizer, title_mode=params.get("title_mode", "law"),
                   dedupe_query=params.get("dedupe_query", False))

    def scores(self, query: str) -> np.ndarray:
        """Dense BM25 scores of every document for ``query`` (for inspection and tests)."""
        q = query_matrix([self.tokenizer(query)], self.model.vocab_dict, self.dedupe_query)
        return np.asarray((q @ self._weights_t).todense()).ravel()

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.retrieve_batch([query], k=k, filter=filter)[0]

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                       progress: bool = False) -> list[list[Hit]]:
        """Top ``k`` documents with a positive score for each query; ``filter`` masks documents first."""
        k = check_k(k)
        mask = self._masks.mask(filter)
        token_lists = self.tokenizer.tokenize_many(list(queries), progress=progress, desc="tokenize queries")
        out: list[list[Hit]] = []
        for start in range(0, len(token_lists), QUERY_CHUNK):
            q = query_matrix(token_lists[start:start + QUERY_CHUNK], self.model.vocab_dict, self.dedupe_query)
            s = (q @ self._weights_t).tocsr()
            for row in range(s.shape[0]):
                lo, hi = s.indptr[row], s.indptr[row + 1]
                idx, sc = s.indices[lo:hi], s.data[lo:hi]
                pos = sc > 0
                idx, sc = top_k_row(idx[pos], sc[pos], k, mask)
                out.append(make_hits(self.documents, idx, sc, self.name))
        return out


def _bm25s():
    import bm25s  # a core dependency, imported lazily to keep `import legalrag` light

    return bm25s


def build_component(ctx, directory: Path, *, k1: float = 1.2, b: float = 0.75, method: str = "lucene",
                    title_mode: str = "law", dedupe_query: bool = False, stopwords: bool = True,
                    jieba_mode: str = "search") -> dict[str, Any]:
    """Index component builder (see ``retrieval/index.py``): streamed from the spilled tokenisation."""
    if method not in METHODS:
        raise InputError(f"unknown BM25 method {method!r}; use one of {', '.join(METHODS)}")
    tokenizer = ctx.tokenizer(stopwords=stopwords, jieba_mode=jieba_mode)
    save_streamed(ctx.postings(tokenizer, title_mode), directory, k1=k1, b=b, method=method)
    params = {"k1": float(k1), "b": float(b), "method": method, "title_mode": title_mode,
              "dedupe_query": dedupe_query, "tokenizer": tokenizer.config.to_dict()}
    (directory / PARAMS_FILE).write_text(json.dumps({**params, "n_documents": ctx.n_documents},
                                                    ensure_ascii=False, indent=2), encoding="utf-8")
    return params


def save_streamed(postings, directory: Path, *, k1: float, b: float, method: str) -> None:
    """Write bm25s's files for ``postings`` (a ``build.SpilledPostings``) one merge block at a time.

    The scores are bm25s's own formulas (its scoring functions, called on whole blocks with the same dtypes),
    so every stored float32 is bit-identical to ``BM25Retriever.from_documents`` on the same corpus."""
    from bm25s import scoring

    from legalrag.retrieval.build import NpyWriter

    if not postings.vocab:
        raise InputError("the documents contain no indexable words (after stop-word removal)")
    model = _bm25s().BM25(k1=k1, b=b, method=method)
    n_docs, n_terms, nnz = postings.n_documents, len(postings.vocab), postings.n_postings
    idx = np.dtype(model.int_dtype)  # bm25s's dtypes: int32 document indices, int64 indptr
    # bm25s writes its params and vocabulary as usual; its three arrays are then replaced by the streamed ones
    model.scores = {"data": np.zeros(0, model.dtype), "indices": np.zeros(0, idx), "indptr": np.zeros(1, np.int64),
                    "num_docs": n_docs}
    model.vocab_dict = postings.vocab
    model.nonoccurrence_array = None  # (only bm25l and bm25+ have one; METHODS excludes them)
    model.save(str(directory), allow_pickle=False, show_progress=False)
    idf = scoring._build_idf_array(doc_frequencies=dict(enumerate(postings.df.tolist())), n_docs=n_docs,
                                   compute_idf_fn=scoring._select_idf_scorer(model.idf_method), dtype=model.dtype)
    tfc = scoring._select_tfc_scorer(method)
    avg_doc_len = postings.doc_len.mean()
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(postings.df, out=indptr[1:])
    np.save(directory / "indptr.csc.index.npy", indptr, allow_pickle=False)
    del indptr
    with NpyWriter(directory / "data.csc.index.npy", model.dtype, nnz) as data, \
            NpyWriter(directory / "indices.csc.index.npy", idx, nnz) as indices:
        for terms, docs, tf in postings.blocks():
            scores = idf[terms] * tfc(tf_array=tf.astype(model.dtype), l_d=postings.doc_len[docs], l_avg=avg_doc_len,
                                      k1=k1, b=b, delta=model.delta)
            data.write(scores)
            indices.write(docs)


def load_component(index, directory: Path, params: dict[str, Any], mmap: bool = True) -> BM25Retriever:
    """Memory-mapped by default: the score matrix stays on disk, pages read as queries touch their terms."""
    return BM25Retriever.load(directory, index.documents, mmap=mmap)
