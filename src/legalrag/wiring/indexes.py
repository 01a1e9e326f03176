"""What index directories need from the composition root: the Milvus component kinds registered, and CLI
retriever choices turned into components. ``Root`` (:mod:`legalrag.wiring.root`) opens, builds and extends
indexes with them and with the encoder factory of :mod:`legalrag.wiring.encoders`."""

from __future__ import annotations

from typing import Any

from legalrag.wiring.encoders import make_encoder


def register_backends() -> None:
    """Index component kinds beyond the built-in ones: the Milvus backend (``milvus``, ``milvus-bm25``).
    Registering imports only the module; pymilvus is imported when such a component is built or loaded."""
    from legalrag.retrieval import milvus
    from legalrag.retrieval.index import COMPONENT_KINDS, ComponentKind, register_component_kind

    if "milvus" not in COMPONENT_KINDS:
        register_component_kind(ComponentKind("milvus", milvus.build_component, milvus.load_component))
        register_component_kind(ComponentKind("milvus-bm25", milvus.build_bm25_component,
                                              milvus.load_bm25_component))


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
