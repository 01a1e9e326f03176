"""Which component of an index answers by default: the strongest by what was measured on STARD and JuDGE.

The rule, strongest first: a dense component with a trained encoder (``stard-e5``, ``judge-e5`` or one you
trained), then the hybrid, then BM25 / QLD, then a dense component with an untrained encoder. On JuDGE the
untrained e5-small measured Recall@10 0.210 against BM25's 0.365, so an untrained encoder never answers alone
over BM25; where it is all there is besides BM25, the hybrid (BM25 fused with it) answers. Fusing BM25 into a
trained encoder costs Recall@10 on both benchmarks, which is why the trained dense component wins over the
hybrid. A manifest with ``default_chosen: true`` keeps the ``default`` its builder chose.
"""

from __future__ import annotations

from typing import Any, Mapping

RANKS = {"trained-dense": 4, "hybrid": 3, "lexical": 2, "untrained-dense": 1}
WHY = {
    "trained-dense": "a dense component with a trained encoder: the strongest measured on STARD and JuDGE",
    "hybrid": "the hybrid (BM25 fused with dense): above BM25, and above an untrained encoder alone",
    "lexical": "BM25 / QLD: no trained dense component or hybrid in this index",
    "untrained-dense": "an untrained dense component: the only one in this index (BM25 measured better)",
}


def _class(kind: str, params: Mapping[str, Any]) -> str | None:
    if kind == "dense":
        return "trained-dense" if params.get("trained") else "untrained-dense"
    if kind == "hybrid":
        return "hybrid"
    if kind in ("bm25", "qld"):
        return "lexical"
    return None


def component_strength(kind: str, params: Mapping[str, Any]) -> int:
    """How good a component is expected to be (higher is better; 0: unknown kind), by the rule above."""
    c = _class(kind, params)
    return RANKS[c] if c else 0


def default_component(components: Mapping[str, Mapping[str, Any]]) -> str:
    """The strongest component (the first built among equals)."""
    names = list(components)
    return max(names, key=lambda n: (component_strength(components[n]["kind"], components[n].get("params") or {}),
                                     -names.index(n)))


def default_reason(manifest: Mapping[str, Any], default: str) -> str:
    """Why ``default`` answers when no ``--retriever`` is given, in words for `legalrag index info`."""
    if manifest.get("default_chosen"):
        return "chosen when the index was built (default_chosen in its manifest)"
    entry = manifest["components"][default]
    c = _class(entry["kind"], entry.get("params") or {})
    return WHY.get(c, "the first component built") if c else "the first component built"
