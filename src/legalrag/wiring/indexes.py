"""Index directories: opened, built and extended with the encoder factory of :mod:`legalrag.wiring.encoders`
(for dense components) and the Milvus component kinds registered; CLI retriever choices turned into components;
corpora read with the saved largest document size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legalrag.settings import Settings
from legalrag.wiring.base import current_settings
from legalrag.wiring.encoders import encoder_factory, make_encoder


def register_backends() -> None:
    """Index component kinds beyond the built-in ones: the Milvus backend (``milvus``, ``milvus-bm25``).
    Registering imports only the module; pymilvus is imported when such a component is built or loaded."""
    from legalrag.retrieval import milvus
    from legalrag.retrieval.index import COMPONENT_KINDS, ComponentKind, register_component_kind

    if "milvus" not in COMPONENT_KINDS:
        register_component_kind(ComponentKind("milvus", milvus.build_component, milvus.load_component))
        register_component_kind(ComponentKind("milvus-bm25", milvus.build_bm25_component,
                                              milvus.load_bm25_component))

def open_index(path: str | Path, *, threads: int | None = None, settings: Settings | None = None):
    """An index directory whose dense components load their encoders through :func:`make_encoder`."""
    from legalrag.retrieval.index import open_index as _open

    register_backends()
    return _open(path, encoder_factory(threads, settings))

def build_index(out: str | Path, documents, retrievers=("bm25",), *, threads: int | None = None,
                settings: Settings | None = None, **options: Any):
    """``retrieval.index.build_index`` with this root's encoder factory (for dense components)."""
    from legalrag.retrieval.index import build_index as _build

    register_backends()
    return _build(out, documents, retrievers, make_encoder=encoder_factory(threads, settings), **options)

def add_components(path: str | Path, retrievers, *, threads: int | None = None, settings: Settings | None = None,
                   **options: Any):
    from legalrag.retrieval.index import add_components as _add

    register_backends()
    return _add(path, retrievers, make_encoder=encoder_factory(threads, settings), **options)

def read_corpus(path: str | Path, fields: Any = None, previous: str | Path | None = None, progress: bool = False,
                settings: Settings | None = None):
    """``retrieval.index.read_corpus`` with the ``documents.max_file_mb`` setting for folders of documents."""
    from legalrag.retrieval.index import read_corpus as _read

    return _read(path, fields, previous, progress, max_file_mb=current_settings(settings).max_file_mb)

def expand_components(retrievers, encoders=(), *, max_chars: int | None = None, index_type: str | None = None,
                      method: str | None = None) -> list:
    """Turn CLI choices into index components: ``dense`` -> one ``dense-<slug>`` per encoder (default
    e5-small); ``hybrid`` -> ``bm25`` + the dense components + ``hybrid``; anything else passes through."""
    from legalrag.retrieval.dense import component_name
    from legalrag.retrieval.index import ComponentSpec

    encoders = list(encoders) or ["e5-small"]
    dense_params: dict[str, Any] = {}
    if max_chars is not None:
        dense_params["max_chars"] = max_chars
    if index_type is not None:
        dense_params["index_type"] = str(getattr(index_type, "value", index_type))
    method = str(getattr(method, "value", method)) if method is not None else None
    needs_dense = any(r in ("dense", "hybrid") for r in retrievers)
    dense = [ComponentSpec("dense", {"encoder": e, **dense_params},
                           name=component_name(make_encoder(e, cache=False, progress=False)))
             for e in encoders] if needs_dense else []
    out: list = []

    def add(x) -> None:
        key = x.dirname if isinstance(x, ComponentSpec) else x
        if key not in [o.dirname if isinstance(o, ComponentSpec) else o for o in out]:
            out.append(x)

    for r in retrievers:
        if r == "dense":
            for d in dense:
                add(d)
        elif r == "hybrid":
            add("bm25")
            for d in dense:
                add(d)
            add(ComponentSpec("hybrid", {"method": method}) if method and method != "rrf" else "hybrid")
        else:
            add(r)
    return out
