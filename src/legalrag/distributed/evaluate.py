"""Retrieval evaluation over Ray workers: a searcher whose ``search_batch`` shards the queries.

``evaluation.runs.evaluate_retrieval`` takes it like any pipeline, so metrics, run files and comparisons are
computed exactly as for a single-process run; only the searching is spread out. Each worker builds its pipeline
once with the given factory (opening the index there), then serves every shard sent to it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from legalrag.distributed.cluster import BatchReport, once_per_process, run_batches

def _search_shard(queries: Sequence[str], make_pipeline: Callable[[], Any], k: int, filter: Any) -> list:
    pipe = once_per_process(make_pipeline)  # the index opens once per worker
    return pipe.search_batch(list(queries), k=k, filter=filter)


class DistributedSearcher:
    """``search_batch(queries, k, filter)`` on Ray workers. ``make_pipeline`` must be picklable (a module-level
    function or ``functools.partial`` of one); ``name`` is the pipeline's name, for run files."""

    def __init__(self, make_pipeline: Callable[[], Any], name: str, *, workers: int | None = None,
                 address: str | None = None, shard_size: int = 64, max_retries: int = 3):
        self.make_pipeline, self.name = make_pipeline, name
        self.workers, self.address, self.shard_size, self.max_retries = workers, address, shard_size, max_retries
        self.report = BatchReport()

    def search(self, query: str, k: int = 10, filter: Any = None) -> list:
        return self.search_batch([query], k=k, filter=filter)[0]

    def search_batch(self, queries: Sequence[str], k: int = 10, filter: Any = None, progress: bool = False) -> list:
        queries = list(queries)
        shards = [queries[i:i + self.shard_size] for i in range(0, len(queries), self.shard_size)]
        parts, self.report = run_batches(_search_shard, shards, self.make_pipeline, k, filter, workers=self.workers,
                                         address=self.address, max_retries=self.max_retries, progress=progress,
                                         desc=f"search (ray, {self.name})")
        return [hits for part in parts for hits in part]
