"""Batch work fanned out over Ray workers: corpus encoding into the vector cache and retrieval evaluation.

Ray runs as a local cluster on one machine (``workers=N``) or connects to an existing cluster
(``address="ray://head:10001"`` or ``"auto"``) with the same code. Work is cut into batches; a batch whose
worker dies is submitted again (counted in the report) up to ``max_retries`` times. Results are put back in
input order, so they are identical to the single-process run.

This package receives its collaborators as picklable factories (``functools.partial(make_encoder, spec)``,
a pipeline factory), built by the composition root; workers call them once per process.
"""

from legalrag.distributed.cluster import BatchReport, run_batches
from legalrag.distributed.encode import encode_parallel, prefill_vector_cache
from legalrag.distributed.evaluate import DistributedSearcher

__all__ = ["BatchReport", "run_batches", "encode_parallel", "prefill_vector_cache", "DistributedSearcher"]
