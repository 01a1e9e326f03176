"""Milvus as an index backend: dense vectors and BM25 full-text in one collection, behind the Retriever API.

One client API (pymilvus) covers both the embedded engine (Milvus Lite: a ``*.db`` path) and a standalone or
distributed Milvus server (``http://host:19530``), so the same component serves tests and production.

Collection layout (schema version :data:`SCHEMA_VERSION`, recorded in the collection's properties with the
encoder's model id and dimension): ``id`` (primary key, the document id), ``law`` and ``article``
(filterable scalars), ``title``, ``content`` (law title + text, analysed with jieba for BM25), ``sparse``
(filled by the engine's BM25 function), ``sha`` (content hash, so a sync skips unchanged documents) and, when
an encoder is given, ``vec`` (L2-normalised, inner product = cosine).

Atomic rebuilds: every build writes a new physical collection ``<alias>__<timestamp>`` and only when it is
complete (all rows inserted, counted and loaded) moves the alias to it and drops the previous one. A build
that fails leaves the alias, and so every reader, on the previous collection. Readers query the alias.

Index components (see ``retrieval/index.py``): ``milvus`` builds the collection (dense retrieval when it has
an encoder, else BM25) and ``milvus-bm25`` searches the full-text field of a sibling ``milvus`` component's
collection, so a ``hybrid`` component fuses the two exactly as it fuses local ``bm25`` and ``dense``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import IndexError_, InputError
from legalrag.retrieval.base import DocumentFilter
from legalrag.types import Document, Hit

SCHEMA_VERSION = 1
EMBEDDED = "milvus.db"  # the Milvus Lite database inside the index directory when no URI is given
VARCHAR_MAX = 65535  # bytes, Milvus's largest VARCHAR
PROP_SCHEMA, PROP_MODEL, PROP_DIM = "legalrag.schema", "legalrag.model_id", "legalrag.dimension"
INSERT_BATCH = 500
QUERY_BATCH = 64
ENGINE_INDEXES = ("FLAT", "HNSW", "IVF_FLAT")


def _pymilvus():
    return require("pymilvus", "scale")


def is_embedded(uri: str) -> bool:
    """A Milvus Lite database path (pymilvus's own rule: a local path ending in ``.db``)."""
    return uri.endswith(".db") and "://" not in uri


def connect(uri: str, *, token: str = "", timeout: float = 10.0):
    """A ``MilvusClient`` for ``uri``; an engine that cannot be reached is an IndexError_ naming the URI."""
    pm = _pymilvus()
    if is_embedded(uri):
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    try:
        return pm.MilvusClient(uri=uri, token=token, timeout=timeout)
    except Exception as exc:  # pymilvus raises MilvusException, grpc errors or OSError for a dead address
        hint = ("check that the path is writable and not used by another process (Milvus Lite locks it)"
                if is_embedded(uri) else "check that the Milvus server is running and the URI (host:port) is right")
        raise IndexError_(f"cannot reach Milvus at {uri}: {_short(exc)}; {hint}") from None


def release(uri: str) -> None:
    """Stop this process's Milvus Lite server for ``uri`` (needed before its directory is renamed)."""
    if is_embedded(uri):
        try:
            from milvus_lite import server_manager_instance
        except ImportError:
            return
        server_manager_instance.release_server(uri)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]


def doc_sha(doc: Document) -> str:
    return hashlib.sha256(json.dumps(doc.to_dict(), ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def _cut_bytes(text: str, limit: int) -> str:
    raw = text.encode("utf-8")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", errors="ignore")


def content_text(doc: Document) -> str:
    """What the engine's BM25 indexes: the law title and the text (as the local BM25's default title mode)."""
    law = str(doc.metadata.get("law", "") or "")
    return _cut_bytes(f"{law}\n{doc.text}" if law and not doc.text.startswith(law) else doc.text, VARCHAR_MAX)


class MilvusStore:
    """One alias on one Milvus: creating, filling and swapping its collections, reading its metadata."""

    def __init__(self, uri: str, alias: str, *, token: str = "", timeout: float = 10.0, client: Any = None):
        self.uri, self.alias = uri, alias
        self.client = client if client is not None else connect(uri, token=token, timeout=timeout)

    # -- metadata ------------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.alias in self._aliases() or self.client.has_collection(self.alias)

    def _aliases(self) -> list[str]:
        try:
            return list(self.client.list_aliases().get("aliases", []))
        except Exception:
            return []

    def current(self) -> str | None:
        """The physical collection the alias points to (None when there is none)."""
        if self.alias in self._aliases():
            return self.client.describe_alias(self.alias)["collection_name"]
        return None

    def meta(self) -> dict[str, Any]:
        """The legalrag properties of the collection behind the alias (schema version, model id, dimension)."""
        if not self.exists():
            raise IndexError_(f"Milvus at {self.uri} has no collection {self.alias!r}; build it with "
                              f"`legalrag index build --backend milvus --uri {self.uri} --collection {self.alias}`")
        info = self.client.describe_collection(self.alias)
        props = dict(info.get("properties") or {})
        dim = next((int(f["params"]["dim"]) for f in info["fields"] if f["name"] == "vec"), None)
        return {"schema": props.get(PROP_SCHEMA), "model_id": props.get(PROP_MODEL) or None, "dimension": dim,
                "collection": info.get("collection_name", self.alias)}

    def check(self, model_id: str | None, dimension: int | None) -> dict[str, Any]:
        """Refuse a collection of another schema version, encoder or dimension, naming both sides."""
        meta = self.meta()
        if str(meta["schema"]) != str(SCHEMA_VERSION):
            raise IndexError_(
                f"the Milvus collection {self.alias!r} at {self.uri} has legalrag schema version {meta['schema']!r}, "
                f"this legalrag reads version {SCHEMA_VERSION}; migrate it by rebuilding: `legalrag index build "
                f"--backend milvus --uri {self.uri} --collection {self.alias} --corpus FILE --out DIR` (the alias "
                "keeps serving the old collection until the new one is complete)")
        if model_id is not None and meta["model_id"] != model_id:
            raise InputError(f"the Milvus collection {self.alias!r} at {self.uri} was built with encoder "
                             f"{meta['model_id']!r}, not {model_id!r}; use --encoder for {meta['model_id']!r} or "
                             "rebuild the collection with the encoder you want")
        if dimension is not None and meta["dimension"] != int(dimension):
            raise InputError(f"the Milvus collection {self.alias!r} at {self.uri} holds {meta['dimension']}-d "
                             f"vectors, the encoder {model_id!r} gives {dimension}-d vectors; rebuild the collection")
        return meta

    # -- building -------------------------------------------------------------------------------------------
    def create(self, *, model_id: str | None, dimension: int | None, engine_index: str = "FLAT",
               analyzer: dict[str, Any] | None = None, bm25_k1: float = 1.2, bm25_b: float = 0.75) -> str:
        """A new, empty physical collection for this alias (not yet serving); returns its name."""
        pm = _pymilvus()
        if engine_index not in ENGINE_INDEXES:
            raise InputError(f"unknown Milvus index type {engine_index!r}; use one of {', '.join(ENGINE_INDEXES)}")
        name = f"{self.alias}__{time.time_ns() // 1_000_000}"
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False,
                                           description="legalrag index collection")
        schema.add_field("id", pm.DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("law", pm.DataType.VARCHAR, max_length=1024)
        schema.add_field("article", pm.DataType.VARCHAR, max_length=128)
        schema.add_field("title", pm.DataType.VARCHAR, max_length=4096)
        schema.add_field("sha", pm.DataType.VARCHAR, max_length=64)
        schema.add_field("content", pm.DataType.VARCHAR, max_length=VARCHAR_MAX, enable_analyzer=True,
                         analyzer_params=analyzer or {"tokenizer": {"type": "jieba", "mode": "search"}})
        schema.add_field("sparse", pm.DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(pm.Function(name="content_bm25", function_type=pm.FunctionType.BM25,
                                        input_field_names=["content"], output_field_names=["sparse"]))
        index_params = self.client.prepare_index_params()
        index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                               params={"bm25_k1": bm25_k1, "bm25_b": bm25_b})
        if dimension:
            schema.add_field("vec", pm.DataType.FLOAT_VECTOR, dim=int(dimension))
            params = {"M": 32, "efConstruction": 200} if engine_index == "HNSW" else {}
            index_params.add_index(field_name="vec", index_type=engine_index, metric_type="IP", params=params)
        props = {PROP_SCHEMA: str(SCHEMA_VERSION), PROP_MODEL: model_id or "", PROP_DIM: str(dimension or 0)}
        self.client.create_collection(name, schema=schema, index_params=index_params, properties=props)
        return name

    def insert(self, collection: str, rows: Sequence[dict[str, Any]], progress: bool = False) -> int:
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(rows), desc=f"milvus insert ({collection})", unit="doc")
        for start in range(0, len(rows), INSERT_BATCH):
            chunk = rows[start:start + INSERT_BATCH]
            self.client.insert(collection, list(chunk))
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return len(rows)

    def publish(self, collection: str, expected: int) -> None:
        """Check ``collection`` holds ``expected`` rows, load it, point the alias at it, drop the old one."""
        self.client.flush(collection)
        self.client.load_collection(collection)
        count = self.count(collection)
        if count != expected:
            raise IndexError_(f"the new Milvus collection {collection!r} at {self.uri} holds {count} rows, "
                              f"{expected} were written; the alias {self.alias!r} still serves the previous one")
        old = self.current()
        if old is None:
            if self.client.has_collection(self.alias):
                raise InputError(f"Milvus at {self.uri} has a collection named {self.alias!r} that is not a "
                                 "legalrag alias; choose another --collection name")
            self.client.create_alias(collection, self.alias)
        else:
            self.client.alter_alias(collection, self.alias)
            self.client.drop_collection(old)

    def discard(self, collection: str) -> None:
        try:
            self.client.drop_collection(collection)
        except Exception:  # the engine went away: nothing more to clean up from here
            pass

    def count(self, collection: str | None = None) -> int:
        res = self.client.query(collection or self.alias, filter="", output_fields=["count(*)"])
        return int(res[0]["count(*)"])

    def hashes(self) -> dict[str, str]:
        """Every document id in the collection and its content hash."""
        out: dict[str, str] = {}
        it = self.client.query_iterator(self.alias, batch_size=1000, filter='id != ""', output_fields=["id", "sha"])
        while True:
            page = it.next()
            if not page:
                it.close()
                return out
            out.update({r["id"]: r["sha"] for r in page})


def rows_for(documents: Sequence[Document], vectors: np.ndarray | None) -> list[dict[str, Any]]:
    rows = []
    for i, d in enumerate(documents):
        row = {"id": d.id, "law": _cut_bytes(str(d.metadata.get("law", "") or ""), 1024),
               "article": _cut_bytes(str(d.metadata.get("article", "") or ""), 128),
               "title": _cut_bytes(d.title, 4096), "sha": doc_sha(d), "content": content_text(d)}
        if vectors is not None:
            row["vec"] = vectors[i].tolist()
        rows.append(row)
    return rows


def build_collection(store: MilvusStore, documents: Sequence[Document], encoder: Any = None, *,
                     max_chars: int = 512, engine_index: str = "FLAT", bm25_k1: float = 1.2, bm25_b: float = 0.75,
                     progress: bool = False) -> str:
    """Encode (when ``encoder`` is given) and write ``documents`` to a new collection, then swap the alias to it.

    On any failure the new collection is dropped and the alias keeps serving the previous one."""
    from legalrag.retrieval.dense import passage_text

    vectors = None
    if encoder is not None:  # encode first: a long encoding failure then leaves nothing in the engine
        vectors = encoder.encode_documents([passage_text(d, max_chars) for d in documents])
        if vectors.ndim != 2 or vectors.shape[1] != int(encoder.dimension):
            raise InputError(f"encoder {encoder.model_id!r} gave vectors of shape {tuple(vectors.shape)}, "
                             f"expected (n, {encoder.dimension})")
    name = store.create(model_id=getattr(encoder, "model_id", None),
                        dimension=int(encoder.dimension) if encoder is not None else None,
                        engine_index=engine_index, bm25_k1=bm25_k1, bm25_b=bm25_b)
    try:
        store.insert(name, rows_for(documents, vectors), progress=progress)
        store.publish(name, len(documents))
    except BaseException:
        store.discard(name)
        raise
    return name


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
    score (positive) for full text."""

    def __init__(self, store: MilvusStore, mode: str, *, encoder: Any = None, max_chars: int = 512,
                 lookup: Callable[[str], Document | None] | None = None, filters: FilterTranslator | None = None,
                 name: str | None = None):
        if mode not in ("dense", "bm25"):
            raise InputError(f"unknown Milvus search mode {mode!r}; use dense or bm25")
        if mode == "dense" and encoder is None:
            raise InputError("dense search on Milvus needs the encoder the collection was built with")
        meta = store.check(getattr(encoder, "model_id", None), getattr(encoder, "dimension", None))
        self.store, self.mode, self.encoder, self.max_chars = store, mode, encoder, max_chars
        self.dimension = meta["dimension"]
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
            data: list[Any] = [v.tolist() for v in self.encoder.encode_queries(queries)]
            field, params = "vec", {"metric_type": "IP"}
        else:
            data = [q if q.strip() else " " for q in queries]
            field, params = "sparse", {"metric_type": "BM25"}
        out: list[list[Hit]] = []
        for start in range(0, len(data), QUERY_BATCH):
            res = self.store.client.search(self.store.alias, data=data[start:start + QUERY_BATCH], anns_field=field,
                                           limit=k, filter=expr, search_params=params,
                                           output_fields=["id", "law", "article", "title", "content"])
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

            vectors = self.encoder.encode_documents([passage_text(d, self.max_chars) for d in documents])
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
                                          output_fields=["id"])
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


# -- index components (see retrieval/index.py) --------------------------------------------------------------

def _uri(params: dict[str, Any], root: Path) -> str:
    return params.get("uri") or str(root / EMBEDDED)


def _token(params: dict[str, Any]) -> str:
    import os

    env = params.get("token_env") or "LEGALRAG_MILVUS_TOKEN"
    return os.environ.get(env, "")


def build_component(ctx, directory: Path, *, uri: str | None = None, collection: str = "legalrag",
                    encoder: str | None = None, max_chars: int = 512, engine_index: str = "FLAT",
                    bm25_k1: float = 1.2, bm25_b: float = 0.75, token_env: str | None = None,
                    connect_timeout: float = 10.0, threads: int = 1) -> dict[str, Any]:
    """Write the index's documents to a new collection behind the alias ``collection`` at ``uri`` (default: an
    embedded Milvus Lite database inside the index directory). Records where it is, never a secret."""
    enc = ctx.encoder(encoder, progress=ctx.progress, threads=threads) if encoder else None
    params: dict[str, Any] = {"uri": uri or "", "collection": collection, "encoder": encoder,
                              "model_id": getattr(enc, "model_id", None),
                              "dimension": int(enc.dimension) if enc is not None else None,
                              "max_chars": max_chars, "engine_index": engine_index, "bm25_k1": bm25_k1,
                              "bm25_b": bm25_b, "schema": SCHEMA_VERSION}
    if token_env:
        params["token_env"] = token_env
    where = _uri(params, ctx.root)
    store = MilvusStore(where, collection, token=_token(params), timeout=connect_timeout)
    try:
        params["physical"] = build_collection(store, ctx.documents, enc, max_chars=max_chars,
                                              engine_index=engine_index, bm25_k1=bm25_k1, bm25_b=bm25_b,
                                              progress=ctx.progress)
    finally:
        store.client.close()
        if not uri:  # the embedded database moves with the index directory: stop serving it from here
            release(where)
    (directory / "milvus.json").write_text(json.dumps(params, ensure_ascii=False, indent=2), encoding="utf-8")
    return params


def build_bm25_component(ctx, directory: Path, *, of: str | None = None) -> dict[str, Any]:
    """Full-text search on the collection of the sibling ``milvus`` component ``of`` (default: the only one)."""
    siblings = [n for n, p in ctx.built.items() if "collection" in p and "schema" in p]
    if of is None:
        if len(siblings) != 1:
            raise InputError("a milvus-bm25 component needs exactly one milvus component built before it "
                             f"(found {siblings or 'none'}); name it with of=NAME")
        of = siblings[0]
    if of not in siblings:
        raise InputError(f"milvus-bm25: {of!r} is not a milvus component of this index (have {siblings})")
    return {"of": of}


def _lookup(index) -> Callable[[str], Document | None]:
    def get(doc_id: str) -> Document | None:
        try:
            return index.get(doc_id)
        except KeyError:
            return None

    return get


def _open(index, params: dict[str, Any], mode: str, encoder: Any, threads: int, name: str | None):
    if mode == "dense":
        if encoder is None or isinstance(encoder, str):
            encoder = index.encoder(encoder or params["encoder"], threads=threads)
    else:
        encoder = None
    store = MilvusStore(_uri(params, index.path), params["collection"], token=_token(params))
    return MilvusRetriever(store, mode, encoder=encoder, max_chars=params.get("max_chars", 512),
                           lookup=_lookup(index), filters=FilterTranslator(index.documents), name=name)


def load_component(index, directory: Path, params: dict[str, Any], mode: str | None = None, encoder: Any = None,
                   threads: int = 1) -> MilvusRetriever:
    """Dense search when the collection has an encoder, else BM25 (``mode`` overrides)."""
    mode = mode or ("dense" if params.get("encoder") else "bm25")
    return _open(index, params, mode, encoder, threads, None)


def load_bm25_component(index, directory: Path, params: dict[str, Any]) -> MilvusRetriever:
    return _open(index, index.component_params(params["of"]), "bm25", None, 1, None)
