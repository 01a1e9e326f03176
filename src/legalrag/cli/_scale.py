"""Scale-out options of `index build` and `eval retrieval`: the Milvus backend and Ray workers.

`index build -o backend=milvus [-o uri=URI] [-o collection=NAME]` turns the requested components into Milvus
ones (dense -> a ``milvus`` collection per encoder, bm25 -> ``milvus-bm25`` on it, hybrid fuses them as
usual); `-o workers=N` / `-o ray_address=ADDR` encode the corpus on Ray workers into the vector cache first;
`eval retrieval -o workers=N` shards the queries over Ray workers. The keys are checked by ``cli/_options.py``.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, Sequence

import typer

from legalrag.errors import InputError


class Backend(str, enum.Enum):
    """Where an index's retrieval components live: local files (FAISS, bm25s) or a Milvus engine."""

    LOCAL = "local"
    MILVUS = "milvus"


ENGINE_INDEX = {"flat": "FLAT", "hnsw": "HNSW", "ivf": "IVF_FLAT"}


def milvus_components(components: Sequence[Any], uri: str | None, collection: str, *,
                      index_params: dict | None = None, search_params: dict | None = None) -> list:
    """Local component choices -> Milvus ones with the same names, so `--retriever dense|bm25|hybrid` and
    every command that takes them work unchanged on the engine."""
    from legalrag.retrieval.index import ComponentSpec

    dense = [c for c in components if isinstance(c, ComponentSpec) and c.kind == "dense"]
    names = [c.dirname if isinstance(c, ComponentSpec) else c for c in components]
    unsupported = [n for n in names if n in ("qld", "ranker")]
    if unsupported:
        raise InputError(f"{', '.join(unsupported)} has no Milvus equivalent; build it with -o backend=local",
                         field="--retriever")
    out: list = []
    for i, spec in enumerate(dense):
        params = {"uri": uri, "collection": collection if i == 0 else f"{collection}_{i}",
                  "encoder": spec.params["encoder"], "max_chars": spec.params.get("max_chars", 512),
                  "engine_index": ENGINE_INDEX[spec.params.get("index_type", "flat")]}
        if index_params:
            params["index_params"] = dict(index_params)
        if search_params:
            params["search_params"] = dict(search_params)
        out.append(ComponentSpec("milvus", params, name=spec.dirname))
    if "bm25" in names:
        if not dense:
            out.append(ComponentSpec("milvus", {"uri": uri, "collection": collection}, name="milvus"))
        out.append(ComponentSpec("milvus-bm25", {"of": out[0].dirname}, name="bm25"))
    for c in components:
        if (c.kind if isinstance(c, ComponentSpec) else c) == "hybrid":
            out.append(c)
    return out


def prefill_encodings(docs, components: Sequence[Any], *, workers: int | None, address: str | None,
                      threads: int | None = None, progress: bool = True) -> None:
    """Encode the corpus for every dense or Milvus component on Ray workers, into the vector cache the build
    then reads (so the build is the single-process one)."""
    from legalrag.distributed import prefill_vector_cache
    from legalrag.retrieval.dense import passage_text
    from legalrag.retrieval.index import ComponentSpec
    from legalrag.wiring import make_encoder

    for c in components:
        if not (isinstance(c, ComponentSpec) and c.kind in ("dense", "milvus") and c.params.get("encoder")):
            continue
        spec = c.params["encoder"]
        cache = make_encoder(spec, progress=False).vector_cache()
        if cache is None:
            typer.echo(f"{spec}: no vector cache, encoding on this process")
            continue
        texts = [passage_text(d, c.params.get("max_chars", 512)) for d in docs]
        factory = functools.partial(make_encoder, spec, cache=False, progress=False, threads=threads or 1)
        r = prefill_vector_cache(texts, factory, cache, workers=workers, address=address, progress=progress)
        typer.echo(f"{spec}: {r['encoded']} passages encoded on {r['workers']} Ray workers in {r['seconds']:.1f} s "
                   f"({r['cached']} already cached, {r['retries']} crashed batches retried)")


def _pipeline(index: str, retriever: str | None, rerank: str | None):
    from legalrag.wiring import Root

    r = Root()
    return r.build_pipeline(r.index(index), retriever, rerank)


def distributed_searcher(index, retriever: str | None, rerank: str | None, name: str, *, workers: int | None,
                         address: str | None):
    from legalrag.distributed import DistributedSearcher

    return DistributedSearcher(functools.partial(_pipeline, str(index), retriever, rerank), name, workers=workers,
                               address=address)
