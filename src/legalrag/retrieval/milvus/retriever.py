"""Search on a Milvus alias as a legalrag Retriever (dense or BM25), filters, and idempotent updates."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Sequence

from legalrag.errors import InputError
from legalrag.retrieval.base import DocumentFilter
from legalrag.retrieval.encoders import unit_rows
from legalrag.retrieval.milvus.rows import doc_sha, rows_for
from legalrag.retrieval.milvus.store import MilvusStore
from legalrag.types import Document, Hit

QUERY_BATCH = 64  # queries per search call


class FilterTranslator:
    """Turns a Python ``DocumentFilter`` into a Milvus filter expression over the documents the index knows.

    A filter that keeps whole laws becomes ``law in [...]`` (pushed into the engine's scalar index); any other
    becomes ``id in [...]``. Each filter object is evaluated over the documents once and remembered."""

    def __init__(self, documents: Sequence[Document]):
        self.documents = documents
        self._cache: dict[int, tuple[Any, str | None]] = {}

    def __call__(self, flt: DocumentFilter | None) -> str | None:
        if flt is None:
            return None
        cached = self._cache.get(id(flt))
        if cached is not None and cached[0] is flt:
            return cached[1]
        per_law: dict[str, list[int]] = {}  # law -> [documents, kept]
        kept_ids: list[str] = []
        for d in self.documents:
            counts = per_law.setdefault(str(d.metadata.get("law", "") or ""), [0, 0])
            counts[0] += 1
            if flt(d):
                counts[1] += 1
                kept_ids.append(d.id)
        laws = sorted(law for law, (n, kept) in per_law.items() if kept)
        if len(kept_ids) == len(self.documents):
            expr = None
        elif not kept_ids:
            expr = 'id == ""'  # nothing passes
        elif all(per_law[law][0] == per_law[law][1] for law in laws):
            expr = f"law in {json.dumps(laws, ensure_ascii=False)}"
        else:
            expr = f"id in {json.dumps(kept_ids, ensure_ascii=False)}"
        self._cache[id(flt)] = (flt, expr)
        return expr


class MilvusRetriever:
    """Dense (``mode='dense'``, needs the collection's encoder) or BM25 (``mode='bm25'``) search on an alias.

    Hits carry the index's own ``Document`` objects (``lookup``); documents added after the index was built
    (``add``/``sync``) are rebuilt from the engine's stored fields. Scores: cosine for dense, the engine's BM25
    score (positive) for full text. ``search_params``: the dense index's search parameters (``nprobe`` for
    IVF_FLAT, ``ef`` for HNSW); none means the engine's defaults."""

    def __init__(self, store: MilvusStore, mode: str, *, encoder: Any = None, max_chars: int = 512,
                 lookup: Callable[[str], Document | None] | None = None, filters: FilterTranslator | None = None,
                 name: str | None = None, search_params: dict[str, Any] | None = None):
        if mode not in ("dense", "bm25"):
            raise InputError(f"unknown Milvus search mode {mode!r}; use dense or bm25")
        if mode == "dense" and encoder is None:
            raise InputError("dense search on Milvus needs the encoder the collection was built with")
        meta = store.check(getattr(encoder, "model_id", None), getattr(encoder, "dimension", None))
        if mode == "bm25" and not meta["full_text"]:
            raise InputError(f"the Milvus collection {store.alias!r} at {store.uri} has no BM25 field (Milvus "
                             f"{store.version} has no server-side BM25): search it with --retriever dense, or use "
                             "the index's local bm25 component")
        self.store, self.mode, self.encoder, self.max_chars = store, mode, encoder, max_chars
        self.dimension = meta["dimension"]
        bad = {k: v for k, v in (search_params or {}).items() if isinstance(v, bool) or not isinstance(v, (int, float))}
        if bad:
            raise InputError(f"Milvus search parameters must be numbers (nprobe, ef), got {bad}")
        self.search_params = dict(search_params or {})  # dense only: nprobe (IVF_FLAT), ef (HNSW)
        self.lookup = lookup or (lambda _id: None)
        self.filters = filters
        self.name = name or (f"dense:{encoder.model_id}" if mode == "dense" else "bm25")
        store.client.load_collection(store.alias)

    def __len__(self) -> int:
        return self.store.count()

    def _expr(self, flt: DocumentFilter | None) -> str:
        if flt is None:
            return ""
        if self.filters is None:
            raise InputError("this Milvus retriever has no document list to translate a filter with")
        return self.filters(flt) or ""

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.retrieve_batch([query], k=k, filter=filter)[0]

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                       progress: bool = False) -> list[list[Hit]]:
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        queries = list(queries)
        if not queries:
            return []
        expr = self._expr(filter)
        if self.mode == "dense":
            data: list[Any] = [v.tolist() for v in unit_rows(self.encoder.encode_queries(queries))]
            field, params = "vec", {"metric_type": "IP"}
            if self.search_params:
                params["params"] = dict(self.search_params)
        else:
            data = [q if q.strip() else " " for q in queries]
            field, params = "sparse", {"metric_type": "BM25"}
        out: list[list[Hit]] = []
        for start in range(0, len(data), QUERY_BATCH):
            try:
                res = self.store.client.search(self.store.alias, data=data[start:start + QUERY_BATCH],
                                               anns_field=field, limit=k, filter=expr, search_params=params,
                                               output_fields=["id", "law", "article", "title", "content"])
            except Exception as exc:  # the engine went away or refused: name it, never return partial results
                from legalrag.errors import IndexError_

                raise IndexError_(f"Milvus search on {self.store.alias!r} at {self.store.uri} failed: "
                                  f"{' '.join(str(exc).split())[:300]}; check that the server is up") from None
            out.extend(self._hits(row) for row in res)
        return out

    def _hits(self, row) -> list[Hit]:
        hits = []
        for r in row:
            ent = r.get("entity", {})
            doc_id = str(r.get("id", ent.get("id")))
            doc = self.lookup(doc_id) or _from_entity(doc_id, ent)
            # Milvus Lite returns BM25 relevance negated (smaller is better); a server returns it positive.
            score = abs(float(r["distance"])) if self.mode == "bm25" else float(r["distance"])
            hits.append(Hit(document=doc, score=score, rank=len(hits) + 1, retriever=self.name))
        return hits

    # -- incremental updates (idempotent) ----------------------------------------------------------------------
    def _rows(self, documents: Sequence[Document]) -> list[dict[str, Any]]:
        vectors = None
        if self.dimension:
            if self.encoder is None:
                raise InputError("this collection holds vectors: open it with its encoder to add documents")
            from legalrag.retrieval.dense import passage_text

            vectors = unit_rows(self.encoder.encode_documents([passage_text(d, self.max_chars) for d in documents]))
        return rows_for(documents, vectors)

    def add(self, documents: Sequence[Document]) -> int:
        """Insert new documents and replace changed ones (same id); running it twice changes nothing."""
        documents = list(documents)
        if documents:
            self.store.client.upsert(self.store.alias, self._rows(documents))
        return len(documents)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Remove documents by id; unknown ids are ignored. Returns how many were present."""
        ids = [str(i) for i in doc_ids]
        if not ids:
            return 0
        present = self.store.client.query(self.store.alias, filter=f"id in {json.dumps(ids, ensure_ascii=False)}",
                                          output_fields=["id"], consistency_level="Strong")
        if present:
            self.store.client.delete(self.store.alias, ids=[r["id"] for r in present])
        return len(present)

    def sync(self, documents: Sequence[Document]) -> dict[str, int]:
        """Make the collection hold exactly ``documents``: upsert the added and changed ones (by content hash),
        delete the rest. Returns the counts; a second run with the same documents reports zeros."""
        have = self.store.hashes()
        want = {d.id: d for d in documents}
        changed = [d for i, d in want.items() if i in have and have[i] != doc_sha(d)]
        added = [d for i, d in want.items() if i not in have]
        removed = [i for i in have if i not in want]
        self.add(added + changed)
        if removed:
            self.store.client.delete(self.store.alias, ids=removed)
        return {"added": len(added), "changed": len(changed), "removed": len(removed),
                "unchanged": len(want) - len(added) - len(changed)}


def _from_entity(doc_id: str, ent: dict[str, Any]) -> Document:
    meta = {k: ent[k] for k in ("law", "article") if ent.get(k)}
    law = meta.get("law", "")
    text = ent.get("content", "")
    if law and text.startswith(law + "\n"):
        text = text[len(law) + 1:]
    return Document(id=doc_id, text=text, title=ent.get("title", ""), metadata=meta)
