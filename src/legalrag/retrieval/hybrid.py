"""HybridRetriever: several retrievers (BM25 and one or more dense ones) fused by RRF or weighted scores.

As an index component (``hybrid/``) it stores only its parameters (``hybrid.json``); members are sibling
components of the same index, loaded by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.retrieval.base import DocumentFilter, retrieve_many
from legalrag.retrieval.fusion import fuse
from legalrag.types import Hit

PARAMS_FILE = "hybrid.json"


class HybridRetriever:
    """Fuse the top ``depth`` hits of each member. ``weights`` maps member names (``bm25``,
    ``dense:e5-small``) to weights; ``method`` is ``rrf`` (with ``rrf_k``) or ``wsf`` (with ``normalisation``)."""

    def __init__(self, retrievers: Sequence[Any], *, method: str = "rrf", rrf_k: int = 60,
                 weights: Mapping[str, float] | None = None, normalisation: str = "minmax", depth: int = 100):
        if not retrievers:
            raise InputError("a hybrid retriever needs at least one member retriever")
        if method not in ("rrf", "wsf"):
            raise InputError(f"unknown fusion method {method!r}; use rrf or wsf")
        self.retrievers = list(retrievers)
        self.method, self.rrf_k, self.normalisation, self.depth = method, rrf_k, normalisation, depth
        self.weights = dict(weights or {})
        names = [r.name for r in self.retrievers]
        unknown = set(self.weights) - set(names)
        if unknown:
            raise InputError(f"hybrid weights name retrievers that are not members: {sorted(unknown)}; "
                             f"members: {names}")
        self.name = "hybrid"

    def member_runs(self, queries: Sequence[str], k: int, filter: DocumentFilter | None = None) -> list[list[list[Hit]]]:
        """For each member, its hit lists for ``queries`` (depth ``max(k, self.depth)``)."""
        depth = max(k, self.depth)
        return [retrieve_many(r, list(queries), k=depth, filter=filter) for r in self.retrievers]

    def fuse_runs(self, runs: Sequence[Sequence[Hit]], k: int | None) -> list[Hit]:
        names = [r.name for r in self.retrievers]
        kw: dict[str, Any] = {"weights": self.weights or None, "names": names, "name": self.name, "limit": k}
        if self.method == "rrf":
            kw["k"] = self.rrf_k
        else:
            kw["normalisation"] = self.normalisation
        return fuse(runs, self.method, **kw)

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.retrieve_batch([query], k=k, filter=filter)[0]

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                       progress: bool = False) -> list[list[Hit]]:
        per_member = self.member_runs(queries, k, filter)
        return [self.fuse_runs([m[i] for m in per_member], k) for i in range(len(queries))]


def build_component(ctx, directory: Path, *, members: Sequence[str] | None = None, method: str = "rrf",
                    rrf_k: int = 60, weights: Mapping[str, float] | None = None, normalisation: str = "minmax",
                    depth: int = 100) -> dict[str, Any]:
    """Members default to every component built before this one (e.g. ``bm25`` and ``dense-e5-small``)."""
    if method not in ("rrf", "wsf"):
        raise InputError(f"unknown fusion method {method!r}; use rrf (reciprocal rank) or wsf (weighted min-max scores)")
    members = list(members) if members is not None else [n for n in ctx.built if n != directory.name]
    missing = [m for m in members if m not in ctx.built]
    if missing:
        raise InputError(f"hybrid members {missing} are not components of this index (built: {list(ctx.built)}); "
                         "build them first, e.g. --retriever hybrid builds bm25 and dense together")
    if not members:
        raise InputError("a hybrid component needs member components; build bm25 and dense first")
    params = {"members": members, "method": method, "rrf_k": rrf_k, "weights": dict(weights or {}),
              "normalisation": normalisation, "depth": depth}
    (directory / PARAMS_FILE).write_text(json.dumps(params, ensure_ascii=False, indent=2), encoding="utf-8")
    return params


def load_component(index, directory: Path, params: dict[str, Any], **options: Any) -> HybridRetriever:
    """``options`` override the stored fusion parameters (method, rrf_k, weights, normalisation, depth)."""
    p = {**params, **options}
    retrievers = [index.retriever(m) for m in p["members"]]
    return HybridRetriever(retrievers, method=p.get("method", "rrf"), rrf_k=p.get("rrf_k", 60),
                           weights=p.get("weights") or None, normalisation=p.get("normalisation", "minmax"),
                           depth=p.get("depth", 100))
