"""Ray fan-out against a real local Ray cluster: encoding equal to the single-process run (through the vector
cache, so the index built afterwards is the same), a worker killed mid-batch retried and counted, and a
sharded retrieval evaluation equal to the single-process one."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="pip install 'legalrag[scale]'")

from legalrag.distributed import DistributedSearcher, encode_parallel, prefill_vector_cache  # noqa: E402
from legalrag.distributed.cluster import shutdown  # noqa: E402
from legalrag.evaluation.runs import evaluate_retrieval  # noqa: E402
from legalrag.retrieval.index import ComponentSpec, build_index, open_index  # noqa: E402
from legalrag.retrieval.pipeline import build_pipeline  # noqa: E402
from legalrag.retrieval.vector_cache import VectorCache  # noqa: E402
from legalrag.testing import FakeEncoder  # noqa: E402
from legalrag.types import Document, Query  # noqa: E402

pytestmark = pytest.mark.ray

# Workers unpickle this module's helpers by value (they cannot import a test module).
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

TEXTS = [f"第{i}条 {'盗窃 抢劫 合同 离婚 工资 交通 赔偿 租赁'.split()[i % 8]} 条文 {i}" for i in range(200)]


def fake_encoder():
    return FakeEncoder(dimension=32)


class CrashOnceEncoder(FakeEncoder):
    """An external failure: the worker process dies the first time it meets the text "CRASH"."""

    def __init__(self, marker: str):
        super().__init__(dimension=32)
        self.marker = marker

    def encode_documents(self, texts):
        if "CRASH" in texts and not os.path.exists(self.marker):
            Path(self.marker).write_text("crashed once")
            os._exit(1)
        return super().encode_documents(texts)


@pytest.fixture(scope="module", autouse=True)
def cluster():
    from legalrag.distributed.cluster import ensure_ray

    ensure_ray(workers=2)
    yield
    shutdown()


def test_encoding_on_workers_equals_the_single_process_run():
    single = FakeEncoder(dimension=32).encode_documents(TEXTS)
    vectors, report = encode_parallel(TEXTS, fake_encoder, batch_size=32)
    assert report.batches == 7 and report.retries == 0 and report.workers == 2
    np.testing.assert_array_equal(vectors, single)


class CountingEncoder(FakeEncoder):
    """Records each construction (one file per process and load), to check models load once per worker."""

    def __init__(self, folder: str):
        super().__init__(dimension=32)
        Path(folder, f"{os.getpid()}-{len(list(Path(folder).iterdir()))}").write_text("loaded")


def test_each_worker_loads_the_encoder_once(tmp_path):
    loads = tmp_path / "loads"
    loads.mkdir()
    _, report = encode_parallel(TEXTS, functools.partial(CountingEncoder, str(loads)), batch_size=10)
    assert report.batches == 20
    pids = [p.name.split("-")[0] for p in loads.iterdir()]
    assert len(pids) == len(set(pids)) <= 2  # one load per worker process, not one per batch


def test_a_killed_worker_batch_is_retried_and_counted(tmp_path):
    texts = TEXTS[:50] + ["CRASH"] + TEXTS[50:100]
    factory = functools.partial(CrashOnceEncoder, str(tmp_path / "crashed"))
    vectors, report = encode_parallel(texts, factory, batch_size=20)
    assert (tmp_path / "crashed").exists() and report.retries == 1 and report.batches == 6
    assert "WorkerCrashedError" in report.errors[0]
    np.testing.assert_array_equal(vectors, FakeEncoder(dimension=32).encode_documents(texts))


def test_prefilled_cache_gives_the_single_process_index(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    docs = [Document(id=str(i), text=t, metadata={"law": "法"}) for i, t in enumerate(TEXTS[:60])]
    from legalrag.retrieval.dense import passage_text

    cache = VectorCache("fake-hash-encoder", 32, root=tmp_path / "vectors")
    first = prefill_vector_cache([passage_text(d) for d in docs], fake_encoder, cache, batch_size=16)
    assert first["encoded"] == 60 and first["cached"] == 0 and first["batches"] == 4
    again = prefill_vector_cache([passage_text(d) for d in docs], fake_encoder, cache, batch_size=16)
    assert again["encoded"] == 0 and again["cached"] == 60  # resumable: nothing left to do

    class CacheOnly(FakeEncoder):  # reads the cache the workers filled; encodes nothing itself
        def encode_documents(self, texts):
            from legalrag.io import sha256_text

            found = cache.get("passage", [sha256_text(t) for t in texts])
            return np.stack([found[sha256_text(t)] for t in texts])

    spec = [ComponentSpec("dense", {"encoder": "fake"})]
    from_cache = build_index(tmp_path / "a", docs, spec, make_encoder=lambda s, **_: CacheOnly(dimension=32))
    direct = build_index(tmp_path / "b", docs, spec, make_encoder=lambda s, **_: FakeEncoder(dimension=32))
    q = "盗窃 条文"
    assert [(h.id, h.score) for h in from_cache.retriever().retrieve(q, k=10)] == \
        [(h.id, h.score) for h in direct.retriever().retrieve(q, k=10)]


def _pipeline(path: str):
    return build_pipeline(open_index(path), "bm25")


def test_sharded_evaluation_equals_the_single_process_run(tmp_path):
    words = "theft robbery contract divorce wages traffic damages lease".split()
    texts = [f"article {i} on {words[i % 8]} and {words[i % 5]} number{i}" for i in range(200)]
    docs = [Document(id=str(i), text=t, metadata={"law": "code"}) for i, t in enumerate(texts)]
    build_index(tmp_path / "idx", docs, ["bm25"], lang="en")  # English: no jieba dictionary to load per worker
    queries = [Query(text=f"{words[i % 8]} number{i}", id=f"q{i}", gold_ids=(str(i),)) for i in range(0, 200, 7)]
    single = evaluate_retrieval(_pipeline(str(tmp_path / "idx")), queries, k=10)
    searcher = DistributedSearcher(functools.partial(_pipeline, str(tmp_path / "idx")), "bm25", shard_size=5)
    spread = evaluate_retrieval(searcher, queries, k=10)
    assert spread.metrics == single.metrics and searcher.report.batches == 6
    assert {q: [(h.id, h.score) for h in hs] for q, hs in spread.hits.items()} == \
        {q: [(h.id, h.score) for h in hs] for q, hs in single.hits.items()}


def test_cli_eval_retrieval_with_workers_equals_the_single_process_run(tmp_path, test_data, monkeypatch, capsys):
    import json

    from support.cli_runner import lexical_eval_args, run_cli

    args = lexical_eval_args(monkeypatch, capsys, tmp_path, test_data)
    code, single, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "r1")
    assert code == 0, err
    code, spread, err = run_cli(monkeypatch, capsys, *args, "-o", "workers=2", "--out", tmp_path / "r2")
    assert code == 0, err
    assert json.loads(spread) == json.loads(single)
    assert (tmp_path / "r1" / "run.trec").read_text() == (tmp_path / "r2" / "run.trec").read_text()
