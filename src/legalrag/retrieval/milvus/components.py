"""The ``milvus`` and ``milvus-bm25`` index components (see ``retrieval/index.py``): build and load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from legalrag.errors import InputError
from legalrag.retrieval.milvus.retriever import FilterTranslator, MilvusRetriever
from legalrag.retrieval.milvus.store import (EMBEDDED, SCHEMA_VERSION, MilvusStore, build_collection,
                                             index_params_for, release, token_from_env)
from legalrag.types import Document


def _uri(params: dict[str, Any], root: Path) -> str:
    return params.get("uri") or str(root / EMBEDDED)


def _token(params: dict[str, Any]) -> str:
    return token_from_env(params.get("token_env"))


def build_component(ctx, directory: Path, *, uri: str | None = None, collection: str = "legalrag",
                    encoder: str | None = None, max_chars: int = 512, engine_index: str = "FLAT",
                    index_params: dict[str, Any] | None = None, search_params: dict[str, Any] | None = None,
                    bm25_k1: float = 1.2, bm25_b: float = 0.75, token_env: str | None = None,
                    connect_timeout: float = 10.0, threads: int = 1) -> dict[str, Any]:
    """Write the index's documents to a new collection behind the alias ``collection`` at ``uri`` (default: an
    embedded Milvus Lite database inside the index directory). Records where it is, never a secret.

    ``index_params``: the vector index's build parameters over its type's defaults (e.g. ``{"nlist": 2048}`` for
    IVF_FLAT, ``{"M": 16, "efConstruction": 100}`` for HNSW); ``search_params``: what every dense search on it
    passes (``{"nprobe": 32}``, ``{"ef": 64}``). Both are recorded in the manifest; a search uses the recorded
    ones."""
    effective = index_params_for(engine_index, index_params)  # refused before anything is encoded
    enc = ctx.encoder(encoder, progress=ctx.progress, threads=threads) if encoder else None
    params: dict[str, Any] = {"uri": uri or "", "collection": collection, "encoder": encoder,
                              "model_id": getattr(enc, "model_id", None),
                              "dimension": int(enc.dimension) if enc is not None else None,
                              "max_chars": max_chars, "engine_index": engine_index, "index_params": effective,
                              "search_params": dict(search_params or {}), "bm25_k1": bm25_k1,
                              "bm25_b": bm25_b, "schema": SCHEMA_VERSION}
    if token_env:
        params["token_env"] = token_env
    where = _uri(params, ctx.root)
    store = MilvusStore(where, collection, token=_token(params), timeout=connect_timeout)
    params["server_version"], params["full_text"] = store.version, store.full_text
    try:
        params["physical"] = build_collection(store, ctx.documents, enc, max_chars=max_chars,
                                              engine_index=engine_index, index_params=index_params,
                                              bm25_k1=bm25_k1, bm25_b=bm25_b,
                                              progress=ctx.progress)
    finally:
        store.client.close()
        if not uri:  # the embedded database moves with the index directory: stop serving it from here
            release(where)
    (directory / "milvus.json").write_text(json.dumps(params, ensure_ascii=False, indent=2), encoding="utf-8")
    return params


def build_bm25_component(ctx, directory: Path, *, of: str | None = None) -> dict[str, Any]:
    """Full-text search on the collection of the sibling ``milvus`` component ``of`` (default: the only one).

    A Milvus server without BM25 (before 2.5) cannot search full text: the component then holds a local bm25s
    index of the same documents (with the sibling's k1 and b), says so on stderr and records why."""
    siblings = [n for n, p in ctx.built.items() if "collection" in p and "schema" in p]
    if of is None:
        if len(siblings) != 1:
            raise InputError("a milvus-bm25 component needs exactly one milvus component built before it "
                             f"(found {siblings or 'none'}); name it with of=NAME")
        of = siblings[0]
    if of not in siblings:
        raise InputError(f"milvus-bm25: {of!r} is not a milvus component of this index (have {siblings})")
    sibling = ctx.built[of]
    if sibling.get("full_text", True):
        return {"of": of}
    import sys

    from legalrag.retrieval import bm25

    reason = (f"Milvus {sibling.get('server_version')} at {sibling.get('uri')} has no server-side BM25 (Milvus 2.5 "
              "adds it): BM25 runs locally (bm25s) on the same documents; dense search stays on the server")
    print(f"milvus-bm25: {reason}", file=sys.stderr)
    local = bm25.build_component(ctx, directory, k1=sibling.get("bm25_k1", 1.2), b=sibling.get("bm25_b", 0.75))
    return {"of": of, "local": local, "reason": reason}


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
                           lookup=_lookup(index), filters=FilterTranslator(index.documents), name=name,
                           search_params=params.get("search_params") if mode == "dense" else None)


def load_component(index, directory: Path, params: dict[str, Any], mode: str | None = None, encoder: Any = None,
                   threads: int = 1) -> MilvusRetriever:
    """Dense search when the collection has an encoder, else BM25 (``mode`` overrides)."""
    mode = mode or ("dense" if params.get("encoder") else "bm25")
    return _open(index, params, mode, encoder, threads, None)


def load_bm25_component(index, directory: Path, params: dict[str, Any]):
    if "local" in params:  # built on a server without BM25: the local bm25s index beside it
        from legalrag.retrieval import bm25

        return bm25.load_component(index, directory, params["local"])
    return _open(index, index.component_params(params["of"]), "bm25", None, 1, None)
