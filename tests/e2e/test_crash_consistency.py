"""A real SIGKILL at random moments while an index, a folder index, a dense index, the vector cache, the LLM
call cache, a learned ranker, a citation model or a training checkpoint is being written: afterwards the state opens and is exactly
the previous or the new generation, and nothing committed is lost. A few kills per kind here (seconds);
``bench/robustness/bench_faults.py`` runs hundreds. Concurrent writers: one wins, the others get a clear lock error."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from legalrag.errors import WriteLockError
from legalrag.io import atomic_dir, recover_dir

_spec = importlib.util.spec_from_file_location(  # the fault kinds: shared with the benchmark that runs hundreds
    "bench_faults", Path(__file__).resolve().parents[2] / "bench" / "robustness" / "bench_faults.py")
_faults = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # its dataclasses look it up there
_spec.loader.exec_module(_faults)
FAULTS, corpus_version, index_check, index_setup, run_fault = (
    _faults.FAULTS, _faults.corpus_version, _faults.index_check, _faults.index_setup, _faults.run_fault)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fault injection forks a child to kill")


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize("kind", list(FAULTS))
def test_sigkill_leaves_previous_or_new_state(kind, tmp_path):
    outcomes = run_fault(kind, tmp_path / "work", kills=4, seed=7, max_delay=0.3)
    bad = [o.detail for o in outcomes if not o.valid or o.lost]
    assert not bad, bad


def test_a_kill_between_the_two_renames_is_recovered(tmp_path):
    """Where the atomic exchange is unavailable the old directory is moved aside first; a kill right then
    leaves it under its side name, and the next writer (or recover_dir) puts it back."""
    target = tmp_path / "idx"
    with atomic_dir(target) as d:
        (d / "a").write_text("old")
    os.replace(target, tmp_path / ".idx.old-999999")  # the state a kill between the renames leaves
    (tmp_path / ".idx.999999.abc.tmp").mkdir()  # and the dead writer's temp directory
    recover_dir(target)
    assert (target / "a").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_second_writer_gets_a_lock_error(tmp_path):
    target = tmp_path / "idx"
    with atomic_dir(target) as d:
        (d / "a").write_text("first")
        with pytest.raises(WriteLockError, match="being written by another legalrag process"):
            with atomic_dir(target):
                pass
    assert (target / "a").read_text() == "first"
    with atomic_dir(target) as d:  # the lock is released with the first writer
        (d / "a").write_text("second")
    assert (target / "a").read_text() == "second"


def test_concurrent_index_builds_one_wins_or_lock_error(tmp_path):
    """Four processes build different corpora into one index at the same moment: each either finishes or
    gets WriteLockError, and the index is exactly the corpus of one that finished."""
    from legalrag.retrieval.index import build_index

    work = tmp_path / "work"
    work.mkdir()
    index_setup(work)
    for attempt in range(3):
        start = time.time() + 0.3
        pids = {}
        for v in range(4):
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    time.sleep(max(0.0, start - time.time()))
                    build_index(work / "index", corpus_version(v), ["bm25", "qld"], lang="zh", source=str(v))
                except WriteLockError:
                    code = 10
                except BaseException:  # noqa: BLE001
                    code = 3
                finally:
                    os._exit(code)
            pids[pid] = v
        codes = {pids[p]: os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids}
        assert set(codes.values()) <= {0, 10}, codes
        winners = [v for v, c in codes.items() if c == 0]
        assert winners
        outcome = index_check(work)
        assert outcome.valid, outcome.detail
        from legalrag.retrieval.index import open_index

        assert int(open_index(work / "index").manifest["corpus"]["source"]) in winners


def test_killed_build_through_the_cli_keeps_the_old_index(tmp_path):
    """`legalrag index build` itself, killed while it runs, leaves the previous index answering."""
    import json
    import subprocess

    corpus = tmp_path / "corpus.jsonl"
    big = [{"id": f"a{i}", "text": f"第{i}条 关于{i % 97}号事项的规定，当事人应当依照约定履行。" * 3} for i in range(20000)]
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in big), encoding="utf-8")
    small = tmp_path / "small.jsonl"
    small.write_text('{"id": "x1", "text": "租金的规定"}\n{"id": "x2", "text": "工资的规定"}\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    cmd = [sys.executable, "-m", "legalrag", "index", "build", "--out", str(tmp_path / "idx"),
           "-o", "fields=id=id,text=text"]
    subprocess.run(cmd + ["--corpus", str(small)], check=True, env=env, capture_output=True)
    from legalrag.retrieval.index import open_index

    rng = random.Random(3)
    for _ in range(2):
        proc = subprocess.Popen(cmd + ["--corpus", str(corpus)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(1.0, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        idx = open_index(tmp_path / "idx")
        n = idx.manifest["corpus"]["n_documents"]
        assert n in (2, 20000)
        assert len(idx.documents) == n and idx.retriever().retrieve("租金", k=1)
