"""Dense retrieval: an Encoder plus a faiss inner-product index over L2-normalised vectors (cosine).

Index types: ``flat`` (exact, default), ``hnsw`` (graph, for large corpora; deletions are tombstoned and
over-fetched), ``ivf`` (inverted lists; trained on the corpus). Vectors live in a faiss ``IndexIDMap2`` whose
ids are row numbers, so documents can be added and deleted without a rebuild. On disk (``dense-<slug>/``):
``index.faiss`` (faiss.write_index), ``ids.npy`` (document ids, unicode), ``rows.npy`` (their faiss ids) and
``meta.json`` (encoder model id, dimension, passage cut, index type, tombstones). Never pickle.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import IndexError_, InputError
from legalrag.retrieval.base import DocumentFilter
from legalrag.retrieval.encoders import unit_rows
from legalrag.types import Document, Hit

class IndexType(str, enum.Enum):
    """The FAISS index of a dense component: exact inner product, HNSW graph or inverted lists."""

    FLAT = "flat"
    HNSW = "hnsw"
    IVF = "ivf"


INDEX_TYPES = tuple(t.value for t in IndexType)
META = "meta.json"
FORMAT = "legalrag-dense"


def passage_text(doc: Document, max_chars: int = 512) -> str:
    """What a document is encoded as: its title (article name) and text, cut to ``max_chars`` characters."""
    text = f"{doc.title}\n{doc.text}" if doc.title and not doc.text.startswith(doc.title) else doc.text
    return text[:max_chars] if max_chars > 0 else text


def _faiss():
    return require("faiss", "dense")


def _new_index(dimension: int, index_type: str, n_train: int, hnsw_m: int = 32, ivf_nlist: int | None = None):
    faiss = _faiss()
    if index_type == "flat":
        base = faiss.IndexFlatIP(dimension)
    elif index_type == "hnsw":
        base = faiss.IndexHNSWFlat(dimension, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        base.hnsw.efSearch = 128
    elif index_type == "ivf":
        nlist = ivf_nlist or max(1, min(4096, int(4 * np.sqrt(max(n_train, 1)))))
        base = faiss.IndexIVFFlat(faiss.IndexFlatIP(dimension), dimension, nlist, faiss.METRIC_INNER_PRODUCT)
        base.nprobe = min(nlist, 16)
    else:
        raise InputError(f"unknown dense index type {index_type!r}; use one of {', '.join(INDEX_TYPES)}")
    return faiss.IndexIDMap2(base)


class DenseRetriever:
    """``DenseRetriever.build(documents, encoder)``; ``retrieve(query, k, filter)``; ``add``/``delete``; ``save``/``load``.

    ``name`` is ``dense:<model id>`` (the key used in fused hits' ``sources``).
    """

    def __init__(self, encoder: Any, faiss_index: Any, documents: Sequence[Document], rows: np.ndarray, *,
                 max_chars: int = 512, index_type: str = "flat", deleted: Iterable[int] = (), threads: int = 1):
        self.encoder = encoder
        self.name = f"dense:{encoder.model_id}"
        self.index = faiss_index
        self.max_chars = max_chars
        self.index_type = index_type
        self.threads = threads
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) != len(documents):
            raise IndexError_(f"dense index: {len(rows)} row ids for {len(documents)} documents; rebuild the index")
        self._docs: dict[int, Document] = {int(r): d for r, d in zip(rows, documents)}
        self._row_of: dict[str, int] = {d.id: int(r) for r, d in zip(rows, documents)}
        self._deleted: set[int] = set(int(x) for x in deleted)
        self._next = int(rows.max()) + 1 if len(rows) else 0

    # -- construction -----------------------------------------------------------------------------------
    @classmethod
    def build(cls, documents: Sequence[Document], encoder: Any, *, max_chars: int = 512, index_type: str = "flat",
              hnsw_m: int = 32, ivf_nlist: int | None = None, threads: int = 1) -> "DenseRetriever":
        documents = list(documents)
        if not documents:
            raise InputError("cannot build a dense index over no documents")
        if index_type not in INDEX_TYPES:
            raise InputError(f"unknown dense index type {index_type!r}; use one of {', '.join(INDEX_TYPES)}")
        vectors = unit_rows(encoder.encode_documents([passage_text(d, max_chars) for d in documents]))
        cls._check_vectors(vectors, encoder.dimension, encoder.model_id)
        index = _new_index(encoder.dimension, index_type, len(documents), hnsw_m, ivf_nlist)
        if index_type == "ivf":
            ivf = _faiss().extract_index_ivf(index)
            nlist = ivf.nlist
            if len(documents) < nlist:
                raise InputError(f"an IVF index with {nlist} lists needs at least {nlist} documents "
                                 f"({len(documents)} given); use a flat index (`legalrag index build -o index_type=flat`)")
            ivf.train(vectors)
        rows = np.arange(len(documents), dtype=np.int64)
        index.add_with_ids(vectors, rows)
        return cls(encoder, index, documents, rows, max_chars=max_chars, index_type=index_type, threads=threads)

    @staticmethod
    def _check_vectors(vectors: np.ndarray, dimension: int, model_id: str) -> None:
        if vectors.ndim != 2 or vectors.shape[1] != dimension:
            raise InputError(f"vectors of shape {tuple(vectors.shape)} do not match the dense index "
                             f"(encoder {model_id!r}, dimension {dimension})")

    # -- persistence ------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Write into ``directory`` (callers make it atomic: ``legalrag.io.atomic_dir`` or the index builder)."""
        faiss = _faiss()
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        rows = np.array(sorted(self._docs), dtype=np.int64)
        ids = np.array([self._docs[int(r)].id for r in rows], dtype=np.str_)
        faiss.write_index(self.index, str(d / "index.faiss"))
        np.save(d / "rows.npy", rows, allow_pickle=False)
        np.save(d / "ids.npy", ids, allow_pickle=False)
        meta = {"format": FORMAT, "version": 1, "model_id": self.encoder.model_id,
                "dimension": int(self.encoder.dimension), "max_chars": self.max_chars,
                "index_type": self.index_type, "n_vectors": int(self.index.ntotal),
                "deleted": sorted(self._deleted)}
        (d / META).write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")

    @staticmethod
    def read_meta(directory: str | Path) -> dict[str, Any]:
        d = Path(directory)
        if not (d / META).exists():
            raise IndexError_(f"{d} is not a legalrag dense index ({META} is missing); rebuild it")
        meta = json.loads((d / META).read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise IndexError_(f"{d / META}: not a legalrag dense index (field 'format')")
        return meta

    @classmethod
    def load(cls, directory: str | Path, documents: Sequence[Document], encoder: Any,
             threads: int = 1) -> "DenseRetriever":
        """Load from ``directory``; ``documents`` must contain every id the index holds; ``encoder`` must be
        the one it was built with (same model id and dimension), else an InputError says which to use."""
        faiss = _faiss()
        d = Path(directory)
        meta = cls.read_meta(d)
        if encoder.model_id != meta["model_id"]:
            raise InputError(f"the dense index at {d} was built with encoder {meta['model_id']!r}, not "
                             f"{encoder.model_id!r}; query it with --encoder {meta['model_id']} or rebuild it "
                             "with the encoder you want")
        if int(encoder.dimension) != int(meta["dimension"]):
            raise InputError(f"the dense index at {d} holds {meta['dimension']}-d vectors but encoder "
                             f"{encoder.model_id!r} gives {encoder.dimension}-d vectors; rebuild the index")
        index = faiss.read_index(str(d / "index.faiss"))
        if index.d != int(meta["dimension"]):
            raise IndexError_(f"{d / 'index.faiss'} holds {index.d}-d vectors, {META} says {meta['dimension']}; "
                              "the index is damaged: rebuild it")
        rows = np.load(d / "rows.npy", allow_pickle=False)
        ids = np.load(d / "ids.npy", allow_pickle=False)
        by_id = {doc.id: doc for doc in documents}
        missing = [i for i in ids[:1000] if str(i) not in by_id]
        if missing:
            raise IndexError_(f"the dense index at {d} refers to document {missing[0]!r} that is not in the "
                              "index's documents; rebuild the index")
        docs = [by_id[str(i)] for i in ids]
        return cls(encoder, index, docs, rows, max_chars=meta.get("max_chars", 512),
                   index_type=meta.get("index_type", "flat"), deleted=meta.get("deleted", ()), threads=threads)

    # -- incremental updates ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._docs)

    @property
    def documents(self) -> list[Document]:
        return [self._docs[r] for r in sorted(self._docs)]

    def add(self, documents: Sequence[Document]) -> int:
        """Add new documents and replace changed ones (same id); returns how many vectors were added."""
        documents = list(documents)
        if not documents:
            return 0
        replaced = [d.id for d in documents if d.id in self._row_of]
        if replaced:
            self.delete(replaced)
        vectors = unit_rows(self.encoder.encode_documents([passage_text(d, self.max_chars) for d in documents]))
        self._check_vectors(vectors, self.index.d, self.encoder.model_id)
        rows = np.arange(self._next, self._next + len(documents), dtype=np.int64)
        self.index.add_with_ids(vectors, rows)
        for r, doc in zip(rows, documents):
            self._docs[int(r)] = doc
            self._row_of[doc.id] = int(r)
        self._next += len(documents)
        return len(documents)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Remove documents by id (unknown ids are ignored); returns how many were removed."""
        rows = [self._row_of.pop(str(i)) for i in doc_ids if str(i) in self._row_of]
        if not rows:
            return 0
        for r in rows:
            del self._docs[r]
        if self.index_type == "hnsw":  # faiss HNSW cannot remove vectors: tombstone them
            self._deleted.update(rows)
        else:
            self.index.remove_ids(np.asarray(rows, dtype=np.int64))
        return len(rows)

    # -- search ------------------------------------------------------------------------------------------
    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        vecs = unit_rows(self.encoder.encode_queries(list(queries)))
        self._check_vectors(vecs, self.index.d, self.encoder.model_id)
        return vecs

    def _selector(self, filter: DocumentFilter | None):
        faiss = _faiss()
        if filter is None and not self._deleted:
            return None, len(self._docs)
        cached = getattr(self, "_last_selector", None)  # the same filter object again (a dated view's day)
        if cached is not None and cached[0]() is filter and cached[1] == (len(self._deleted), len(self._docs)):
            return cached[2], cached[3]
        keep = np.array([r for r, doc in self._docs.items() if r not in self._deleted
                         and (filter is None or filter(doc))], dtype=np.int64)
        selector = faiss.IDSelectorBatch(keep)
        try:
            import weakref

            self._last_selector = (weakref.ref(filter), (len(self._deleted), len(self._docs)), selector, len(keep)) \
                if filter is not None else None
        except TypeError:  # not weak-referenceable: not cached
            self._last_selector = None
        return selector, len(keep)

    def search_vectors(self, vectors: np.ndarray, k: int = 10, filter: DocumentFilter | None = None) -> list[list[Hit]]:
        faiss = _faiss()
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._check_vectors(vectors, self.index.d, self.encoder.model_id)
        selector, n_allowed = self._selector(filter)
        kk = min(k, n_allowed)
        if kk == 0 or self.index.ntotal == 0:
            return [[] for _ in range(len(vectors))]
        faiss.omp_set_num_threads(self.threads)
        params = None
        if selector is not None:
            if self.index_type == "hnsw":
                params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(128, kk))
            elif self.index_type == "ivf":
                params = faiss.SearchParametersIVF(sel=selector, nprobe=faiss.extract_index_ivf(self.index).nprobe)
            else:
                params = faiss.SearchParameters(sel=selector)
        scores, rows = self.index.search(vectors, kk, params=params)
        out = []
        for srow, rrow in zip(scores, rows):
            hits = []
            for s, r in zip(srow, rrow):
                if r < 0 or int(r) not in self._docs:
                    continue
                hits.append(Hit(document=self._docs[int(r)], score=float(s), rank=len(hits) + 1,
                                retriever=self.name))
            out.append(hits)
        return out

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.retrieve_batch([query], k=k, filter=filter)[0]

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                       progress: bool = False) -> list[list[Hit]]:
        if not queries:
            return []
        return self.search_vectors(self.encode_queries(queries), k=k, filter=filter)

    def similarity(self, query_vector: np.ndarray, doc_ids: Sequence[str]) -> np.ndarray:
        """Cosine of one query vector with the given documents (NaN for ids not in the index): a ranker feature."""
        out = np.full(len(doc_ids), np.nan, dtype=np.float32)
        q = np.asarray(query_vector, dtype=np.float32).ravel()
        for j, doc_id in enumerate(doc_ids):
            r = self._row_of.get(str(doc_id))
            if r is not None and r not in self._deleted:
                out[j] = float(self.index.reconstruct(r) @ q)
        return out


# -- index component (see retrieval/index.py) --------------------------------------------------------------

def component_name(encoder: Any) -> str:
    """The directory name of a dense component for an encoder (or its model id): ``dense-<model slug>``."""
    from legalrag.retrieval.vector_cache import model_slug

    return "dense-" + model_slug(encoder if isinstance(encoder, str) else encoder.model_id)


def build_component(ctx, directory: Path, *, encoder: str = "e5-small", max_chars: int = 512,
                    index_type: str = "flat", hnsw_m: int = 32, ivf_nlist: int | None = None,
                    base_url: str | None = None, threads: int = 1) -> dict[str, Any]:
    enc = ctx.encoder(encoder, progress=ctx.progress, threads=threads, base_url=base_url)
    r = DenseRetriever.build(ctx.documents, enc, max_chars=max_chars, index_type=index_type, hnsw_m=hnsw_m,
                             ivf_nlist=ivf_nlist, threads=threads)
    r.save(directory)
    params = {"encoder": encoder, "model_id": enc.model_id, "dimension": int(enc.dimension),
              "trained": bool(getattr(enc, "trained", False)),
              "max_chars": max_chars, "index_type": index_type}
    if base_url:
        params["base_url"] = base_url
    return params


def load_component(index, directory: Path, params: dict[str, Any], encoder: Any = None,
                   threads: int = 1) -> DenseRetriever:
    """``encoder``: an Encoder or a spec to use instead of the recorded one (it must be the same model); a spec
    becomes an encoder through the index's encoder factory."""
    if encoder is None or isinstance(encoder, str):
        encoder = index.encoder(encoder or params["encoder"], base_url=params.get("base_url"), threads=threads)
    return DenseRetriever.load(directory, index.documents, encoder, threads=threads)
