"""A search pipeline over an index: one retriever, optionally followed by a reranker.

``build_pipeline(index, retriever=None, reranker=None)`` takes the reranker as an object (any
``rerank.base.Reranker``); ``legalrag.wiring.make_reranker`` turns a name such as ``learned`` or
``llm-pointwise`` into one. Retrievers are the index's components (``index.retriever(name)``); ``"dense"``
picks the single ``dense-<encoder>`` component when there is exactly one.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Sequence

from legalrag.errors import InputError
from legalrag.retrieval.base import DocumentFilter, Retriever, retrieve_many
from legalrag.types import Hit

@dataclass
class Pipeline:
    retriever: Retriever
    reranker: Any = None  # a rerank.base.Reranker
    rerank_depth: int = 50  # candidates handed to the reranker

    @property
    def name(self) -> str:
        return self.retriever.name + (f"+{self.reranker.name}" if self.reranker is not None else "")

    def search(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        return self.search_batch([query], k=k, filter=filter)[0]

    def search_batch(self, queries: Sequence[str], k: int = 10, filter: DocumentFilter | None = None,
                     progress: bool = False) -> list[list[Hit]]:
        depth = max(k, self.rerank_depth) if self.reranker is not None else k
        batch = getattr(self.retriever, "retrieve_batch", None)
        if batch is not None and "progress" in inspect.signature(batch).parameters:
            results = batch(list(queries), k=depth, filter=filter, progress=progress)
        else:
            results = retrieve_many(self.retriever, queries, k=depth, filter=filter, progress=progress)
        if self.reranker is None:
            return results
        it = zip(queries, results)
        if progress:
            from tqdm import tqdm

            it = tqdm(it, total=len(results), desc=f"rerank ({self.reranker.name})", unit="q")
        return [self.reranker.rerank(q, hits, k=k) for q, hits in it]


def resolve_component(index: Any, name: str | None) -> str:
    """The index component for ``name``: exact, or the one ``name-...`` component (e.g. dense -> dense-e5)."""
    if name is None:
        return index.default
    if name in index.names:
        return name
    prefixed = [n for n in index.names if n.startswith(name + "-")]
    if len(prefixed) == 1:
        return prefixed[0]
    have = ", ".join(index.names)
    if prefixed:
        raise InputError(f"{name!r} is ambiguous in the index at {index.path}: {', '.join(prefixed)}; name one")
    raise InputError(f"the index at {index.path} has no {name!r} retriever (it has: {have}); rebuild it with "
                     f"`legalrag index build --retriever {name}`")


def build_pipeline(index: Any, retriever: str | None = None, reranker: Any = None,
                   rerank_depth: int = 50) -> Pipeline:
    """The index's retriever ``retriever``, then ``reranker`` if given. Default retriever: the one whose
    candidates the reranker was trained on (a learned ranker's ``candidates``), else the index's default
    (its strongest component, :mod:`legalrag.retrieval.strength`)."""
    if retriever is None:
        retriever = getattr(reranker, "candidates", None)
    return Pipeline(retriever=index.retriever(resolve_component(index, retriever)), reranker=reranker,
                    rerank_depth=rerank_depth)


def _law_key(title: str) -> str:
    t = "".join(ch for ch in title if ch not in "《》 \u3000")
    return t.removeprefix("中华人民共和国")


def law_filter(index: Any, titles: Sequence[str]) -> DocumentFilter:
    """Keep documents whose law title is one of ``titles``; 《》 and a leading 中华人民共和国 are ignored, so
    ``劳动合同法`` selects 中华人民共和国劳动合同法. A title that matches no document is an InputError."""
    wanted = {_law_key(t) for t in titles if t.strip()}
    laws = {_law_key(str(d.metadata.get("law", ""))) for d in index.documents}
    missing = sorted(wanted - laws)
    if missing:
        import difflib

        close = difflib.get_close_matches(missing[0], sorted(laws), n=3, cutoff=0.4)
        hint = f"; close titles: {', '.join(close)}" if close else ""
        raise InputError(f"no document in the index has law title {missing[0]!r}{hint}", field="--filter-law")

    def keep(doc) -> bool:
        return _law_key(str(doc.metadata.get("law", ""))) in wanted

    return keep
