"""Which component of an index answers by default: the strongest by what was measured on STARD and JuDGE."""

from __future__ import annotations

from typing import Any, Mapping


def component_strength(kind: str, params: Mapping[str, Any]) -> int:
    """How good a component is expected to be, by what was measured on STARD and JuDGE: a dense component with a
    trained encoder (4) over an untrained one (3) over the hybrid (2) over a lexical one (1). Fusing BM25 into a
    trained encoder costs Recall@10 on both benchmarks, which is why the trained dense component wins over the
    hybrid. A manifest with ``default_chosen: true`` keeps its ``default`` when components are added."""
    if kind == "dense":
        return 4 if params.get("trained") else 3
    if kind == "hybrid":
        return 2
    return 1 if kind in ("bm25", "qld") else 0


def default_component(components: Mapping[str, Mapping[str, Any]]) -> str:
    """The strongest component (the first built among equals)."""
    names = list(components)
    return max(names, key=lambda n: (component_strength(components[n]["kind"], components[n].get("params") or {}),
                                     -names.index(n)))
