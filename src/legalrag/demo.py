"""The statute sample (a BM25 index over 397 articles of 8 laws, kept for tests and installs without the
national-law data) and the demo's retrieval step.

``demo_hits(question)`` is the reusable retrieval step (the LLM layer builds its answer on it). The index is
built once into ``<cache dir>/demo-index`` and rebuilt when the sample or the index format changes.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from legalrag.errors import IndexError_
from legalrag.io import cache_dir, sha256_file
from legalrag.types import Hit

SAMPLE_QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
SAMPLE_FILE = "statutes_sample.jsonl"
_BUILD = 1


def sample_path() -> Path:
    return Path(str(resources.files("legalrag").joinpath("data", SAMPLE_FILE)))


def demo_index(directory: str | Path | None = None, progress: bool = False):
    """Open the demo index, building it first when missing or stale."""
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index, open_index

    path = Path(directory) if directory is not None else cache_dir() / "demo-index"
    sample = sample_path()
    # bump _BUILD when the demo index settings change, so cached demo indexes are rebuilt
    source = f"legalrag/data/{SAMPLE_FILE} sha256={sha256_file(sample)} build={_BUILD}"
    try:
        index = open_index(path)
        if index.manifest["corpus"].get("source") == source:
            return index
    except IndexError_:
        pass
    return build_index(path, load_statutes(sample), retrievers=["bm25"], lang="zh", progress=progress,
                       source=source)


def describe_index(index) -> str:
    """One line saying what an index searched: the national-law snapshot, or the sample, or any corpus."""
    corpus = index.manifest["corpus"]
    n = corpus["n_documents"]
    if corpus.get("law_over_time"):
        day = getattr(index, "day", None) or corpus["snapshot"]
        return (f"Searched the national law in force on {day}, as published up to {corpus['snapshot']} "
                f"({corpus['articles_in_force']:,} articles of {corpus['laws_in_force']:,} laws, regulations and "
                f"judicial interpretations; {corpus['superseded_versions']} superseded versions held for --as-of) "
                f"with {index.default}")
    if corpus.get("national"):
        return (f"Searched {n:,} articles of {corpus['n_laws']:,} national laws, regulations and judicial "
                f"interpretations (snapshot {corpus['snapshot']}) with {index.default}")
    if "statutes_sample" in str(corpus.get("source", "")):
        return (f"Searched {n} sample articles (labour, consumer, lease, loan, family, inheritance, traffic) "
                f"with {index.default}; index at {index.path}")
    return f"Searched {n:,} documents with {index.default}; index at {index.path}"


def demo_hits(question: str = SAMPLE_QUESTION, k: int = 5, index=None) -> list[Hit]:
    """The demo's retrieval step: the top ``k`` sample articles for ``question``."""
    from legalrag.retrieval.pipeline import build_pipeline

    return build_pipeline(index if index is not None else demo_index()).search(question, k=k)
