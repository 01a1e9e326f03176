"""A search pipeline over an index: one retriever, optionally followed by a reranker.

``build_pipeline(index, retriever=None, rerank=None)`` is what the CLI (``search``, ``eval retrieval``,
``demo``) calls. Extension points for other areas:

- retrievers are the index's components (``index.retriever(name)``); ``"dense"`` picks the single
  ``dense-<encoder>`` component when there is exactly one. New kinds register in ``retrieval/index.py``.
- rerankers register in :data:`RERANKERS` as ``name -> "module:function"``; the factory is called as
  ``factory(index, **options)`` and returns a ``rerank.base.Reranker``.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Sequence

from legalrag.errors import InputError
from legalrag.retrieval.base import DocumentFilter, Retriever, retrieve_many
from legalrag.types import Hit

# name -> "module:function" returning a Reranker; issues 3 and 5 add theirs here.
RERANKERS: dict[str, str] = {
    # issue 5: LLM rerankers (factory(index, llm=None, **options))
    "llm-listwise": "legalrag.rerank.llm_factories:listwise",
    "llm-pointwise": "legalrag.rerank.llm_factories:pointwise",
    "llm-yesno": "legalrag.rerank.llm_factories:yesno",
    "learned": "legalrag.rerank.learned:from_index",  # issue 3: LightGBM lambdarank (`legalrag ranker train`)
}


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


def build_pipeline(index: Any, retriever: str | None = None, rerank: str | None = None,
                   rerank_depth: int = 50, **rerank_options: Any) -> Pipeline:
    r = index.retriever(resolve_component(index, retriever))
    reranker = None
    if rerank and rerank != "none":
        ref = RERANKERS.get(rerank)
        if ref is None:
            known = ", ".join(sorted(RERANKERS)) or "none installed"
            raise InputError(f"unknown reranker {rerank!r}; known: {known}")
        module, _, func = ref.partition(":")
        reranker = getattr(importlib.import_module(module), func)(index, **rerank_options)
    return Pipeline(retriever=r, reranker=reranker, rerank_depth=rerank_depth)


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


def citation_label(doc: Any) -> str:
    """How a hit is cited to a reader: 《中华人民共和国民法典》第五百七十七条, else the title or id."""
    law, label = doc.metadata.get("law"), doc.metadata.get("article_label")
    if law and label:
        return f"《{law}》{label}"
    return doc.title or doc.id
