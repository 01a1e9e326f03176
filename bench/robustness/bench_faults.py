"""Crash-consistency fault injection at scale: for each fault kind, fork a writer, SIGKILL it at a random
moment, check the state on disk; repeat. Prints per kind: injected, valid afterwards, data lost (target 0).

    python bench/robustness/bench_faults.py --kills 100            # about 2 minutes on 2 cores
    python bench/robustness/bench_faults.py --kinds "index build,LLM call cache" --kills 300 --json out.json
    python bench/robustness/bench_faults.py --memory 20000,80000,240000   # peak RSS and time of `index build` and a search
    python bench/robustness/bench_faults.py --memory 20000 --retrievers bm25,qld --chunk-docs 5000
    python bench/robustness/bench_faults.py --search-memory INDEX --retrievers qld   # what opening and searching holds

The fault kinds and their checks are the first part of this file; tests/e2e/test_crash_consistency.py loads it for a
handful of kills per kind.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from legalrag.types import Document

# -- the fault kinds ----------------------------------------------------------------------------------------
# Crash-consistency fault injection: a forked child writes an index, cache or model over and over, the parent
# kills it with a real SIGKILL at a random moment, then checks what is on disk.
#
# Each fault kind is a :class:`Fault` with ``setup`` (write the first state, in the parent), ``work`` (the
# child's endless loop; after each completed write it appends the generation to ``committed.log``) and ``check``
# (after the kill: does the state open, is it exactly one complete generation at least as new as the last one
# the child reported, is every committed cache entry still there and correct).

LOG = "committed.log"
TOPICS = ["租金", "工资", "押金", "借款", "房屋", "车辆", "保险", "利息", "违约金", "定金", "赠与", "继承"]


@dataclass
class Outcome:
    valid: bool  # the state opens and is one complete generation
    lost: int  # committed generations or entries that are gone or wrong
    detail: str = ""


@dataclass(frozen=True)
class Fault:
    name: str
    setup: Callable[[Path], None]
    work: Callable[[Path], None]
    check: Callable[[Path], Outcome]


def _commit(work: Path, gen: int) -> None:
    with open(work / LOG, "a", encoding="utf-8") as fh:
        fh.write(f"{gen}\n")


def _last_committed(work: Path) -> int:
    p = work / LOG
    lines = p.read_text(encoding="utf-8").split() if p.exists() else []
    return int(lines[-1]) if lines else 0


def _committed(work: Path) -> list[int]:
    p = work / LOG
    return [int(x) for x in p.read_text(encoding="utf-8").split()] if p.exists() else []


# -- index build (bm25 + qld over a JSONL-shaped corpus) ------------------------------------------------------

def corpus_version(v: int) -> list[Document]:
    """Four corpora that differ in documents and texts, so a mix of two would show in documents or results."""
    docs = [Document(id=f"d{i}", text=f"关于{t}的规定，版本{v}，依照本法第{i + v}条处理。", title=f"法{i}条")
            for i, t in enumerate(TOPICS) if (i + v) % 4 != 0]
    docs.append(Document(id=f"extra{v}", text=f"{TOPICS[v]}{TOPICS[v]}特别事项第{v}版。", title=f"附则{v}"))
    return docs


QUERIES = [f"{t}如何处理" for t in TOPICS[:6]]


def _results(index) -> list[list[tuple[str, float]]]:
    out = []
    for name in ("bm25", "qld"):
        r = index.retriever(name)
        out += [[(h.id, round(float(h.score), 5)) for h in r.retrieve(q, k=5)] for q in QUERIES]
    return out


_REFERENCE: dict[tuple[str, int], tuple] = {}


def _reference_index(work: Path, v: int):
    from legalrag.retrieval.index import build_index

    key = (str(work), v)
    if key not in _REFERENCE:
        idx = build_index(work / "ref" / f"v{v}", corpus_version(v), ["bm25", "qld"], lang="zh")
        _REFERENCE[key] = ([d.to_dict() for d in idx.documents], _results(idx))
    return _REFERENCE[key]


def index_setup(work: Path) -> None:
    from legalrag.retrieval.index import build_index

    for v in range(4):
        _reference_index(work, v)
    build_index(work / "index", corpus_version(0), ["bm25", "qld"], lang="zh", source="0")


def index_work(work: Path) -> None:
    from legalrag.retrieval.index import build_index

    gen = _last_committed(work)
    while True:
        gen += 1
        build_index(work / "index", corpus_version(gen % 4), ["bm25", "qld"], lang="zh", source=str(gen))
        _commit(work, gen)


def index_check(work: Path) -> Outcome:
    from legalrag.retrieval.index import open_index

    try:
        idx = open_index(work / "index")
        gen = int(idx.manifest["corpus"]["source"])
        docs, results = [d.to_dict() for d in idx.documents], _results(idx)
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    want_docs, want_results = _reference_index(work, gen % 4)
    if docs != want_docs or results != want_results:
        return Outcome(False, 0, f"generation {gen} differs from a clean build of its corpus")
    last = _last_committed(work)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


# -- incremental rebuild of a documents folder -----------------------------------------------------------

def folder_state(v: int) -> dict[str, str]:
    """Files of the folder in state ``v``: files are added, changed and removed from one state to the next."""
    files = {f"{t}.md": f"# {t}\n\n关于{t}的约定以本文件为准。第{v // 3}稿。\n" for t in TOPICS[:4]}
    files[f"{TOPICS[v % 4]}.md"] += f"补充条款{v}：{TOPICS[(v + 1) % 12]}另行约定。\n"
    if v % 3:
        files[f"附件{v % 3}.txt"] = f"附件{v % 3}：{TOPICS[v % 12]}清单。\n"
    return files


def _write_folder(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for p in folder.iterdir():
        if p.name not in files:
            p.unlink()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _doc_set(documents) -> list[tuple[str, str]]:
    return sorted((d.id, d.text) for d in documents)


def _folder_build(work: Path, gen: int) -> None:
    from legalrag.retrieval.index import build_index, read_corpus

    docs, info = read_corpus(work / "docs", previous=work / "index")
    build_index(work / "index", docs, ["bm25"], lang="zh", source=str(gen), corpus_info=info)


def folder_setup(work: Path) -> None:
    from legalrag.corpora.documents import load_folder

    ref = {}
    for v in range(6):
        tmp = work / "ref" / f"s{v}"
        tmp.mkdir(parents=True)
        _write_folder(tmp, folder_state(v))
        ref[v] = _doc_set(load_folder(tmp)[0])
    (work / "ref.json").write_text(json.dumps({k: v for k, v in ref.items()}, ensure_ascii=False), encoding="utf-8")
    _write_folder(work / "docs", folder_state(0))
    _folder_build(work, 0)


def folder_work(work: Path) -> None:
    gen = _last_committed(work)
    while True:
        gen += 1
        _write_folder(work / "docs", folder_state(gen % 6))
        _folder_build(work, gen)
        _commit(work, gen)


def folder_check(work: Path) -> Outcome:
    from legalrag.corpora.documents import load_folder
    from legalrag.retrieval.index import open_index

    ref = {int(k): [tuple(x) for x in v] for k, v in json.loads((work / "ref.json").read_text(encoding="utf-8")).items()}
    try:
        idx = open_index(work / "index")
        gen = int(idx.manifest["corpus"]["source"])
        got = _doc_set(idx.documents)
        idx.retriever("bm25").retrieve("租金", k=3)
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    if got != ref[gen % 6]:
        return Outcome(False, 0, f"generation {gen} holds windows of no complete folder state")
    last = _last_committed(work)
    # the next incremental rebuild over this index (as the next writer would run it) equals a full read
    nxt = max(gen, last) + 1
    try:
        _write_folder(work / "docs", folder_state(nxt % 6))
        _folder_build(work, nxt)
        again = _doc_set(open_index(work / "index").documents)
    except Exception as exc:
        return Outcome(False, 0, f"the next incremental rebuild fails: {exc}")
    if again != _doc_set(load_folder(work / "docs")[0]) or again != ref[nxt % 6]:
        return Outcome(False, 0, "the next incremental rebuild differs from a full read of the folder")
    _commit(work, nxt)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


# -- dense add / delete, saved with atomic_dir ------------------------------------------------------------

DENSE_DOCS = [Document(id=f"p{i}", text=f"{TOPICS[i % 12]} 条款 {i} clause {i} about {TOPICS[(i * 5) % 12]}")
              for i in range(24)]


def dense_ids(gen: int) -> set[str]:
    return {d.id for i, d in enumerate(DENSE_DOCS) if (i + gen) % 3 != 0}


def _dense_save(retriever, directory: Path, gen: int) -> None:
    from legalrag.io import atomic_dir

    with atomic_dir(directory) as tmp:
        retriever.save(tmp)
        (tmp / "generation.json").write_text(json.dumps({"generation": gen}), encoding="utf-8")


def dense_setup(work: Path) -> None:
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.testing import FakeEncoder

    r = DenseRetriever.build([d for d in DENSE_DOCS if d.id in dense_ids(0)], FakeEncoder())
    _dense_save(r, work / "dense", 0)


def dense_work(work: Path) -> None:
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.testing import FakeEncoder

    gen = _last_committed(work)
    while True:
        gen += 1
        r = DenseRetriever.load(work / "dense", DENSE_DOCS, FakeEncoder())
        have, want = {d.id for d in r.documents}, dense_ids(gen)
        r.delete(sorted(have - want))
        r.add([d for d in DENSE_DOCS if d.id in want - have])
        _dense_save(r, work / "dense", gen)
        _commit(work, gen)


def dense_check(work: Path) -> Outcome:
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.testing import FakeEncoder

    try:
        r = DenseRetriever.load(work / "dense", DENSE_DOCS, FakeEncoder())
        gen = json.loads((work / "dense" / "generation.json").read_text(encoding="utf-8"))["generation"]
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    ids = {d.id for d in r.documents}
    if ids != dense_ids(gen) or r.index.ntotal != len(ids):
        return Outcome(False, 0, f"generation {gen} holds {len(ids)} ids / {r.index.ntotal} vectors, not its set")
    for d in DENSE_DOCS:  # every stored vector still belongs to its document
        if d.id in ids and r.retrieve(d.text, k=1)[0].id != d.id:
            return Outcome(False, 0, f"{d.id} is not its own nearest neighbour: ids and vectors are mixed")
    last = _last_committed(work)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


# -- the vector cache (SQLite) -------------------------------------------------------------------------------

def _vc_texts(batch: int) -> list[str]:
    return [f"passage {batch} {j} {TOPICS[(batch + j) % 12]}" for j in range(32)]


def vectors_setup(work: Path) -> None:
    (work / "vectors").mkdir()


def vectors_work(work: Path) -> None:
    from legalrag.retrieval.vector_cache import VectorCache, encode_cached
    from legalrag.testing import FakeEncoder

    enc = FakeEncoder()
    cache = VectorCache(enc.model_id, enc.dimension, root=work / "vectors")
    batch = _last_committed(work)
    while True:
        batch += 1
        encode_cached(enc.encode_documents, _vc_texts(batch), cache=cache, role="passage", batch_size=8)
        _commit(work, batch)


def vectors_check(work: Path) -> Outcome:
    from legalrag.io import sha256_text
    from legalrag.retrieval.vector_cache import VectorCache
    from legalrag.testing import FakeEncoder

    enc = FakeEncoder()
    committed = _committed(work)
    try:
        cache = VectorCache(enc.model_id, enc.dimension, root=work / "vectors")
        texts = [t for b in range(1, (max(committed) if committed else 0) + 2) for t in _vc_texts(b)]
        by_sha = {sha256_text(t): t for t in texts}
        stored = cache._db.execute("SELECT sha, vec FROM vectors").fetchall()
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    for sha, blob in stored:
        if sha not in by_sha or not np.allclose(np.frombuffer(blob, np.float32), enc.encode_documents([by_sha[sha]])[0]):
            return Outcome(False, 0, "a stored vector is not the vector of its text")
    want = [sha256_text(t) for b in committed for t in _vc_texts(b)]
    lost = len(set(want) - set(cache.get("passage", want)))
    cache.close()
    return Outcome(True, lost, f"{len(stored)} vectors, {len(want)} committed")


# -- the LLM call cache (SQLite) -----------------------------------------------------------------------------

def _ask(i: int):
    from legalrag.llm.base import ChatRequest

    return ChatRequest(messages=({"role": "user", "content": f"question {i}: {TOPICS[i % 12]}?"},), temperature=0.0)


def llmcache_setup(work: Path) -> None:
    pass


def llmcache_work(work: Path) -> None:
    from legalrag.llm.cache import CachedLLM
    from legalrag.testing import ScriptedLLM

    llm = CachedLLM(ScriptedLLM(lambda req: "reply to " + req.messages[0]["content"] * 20), work / "calls.sqlite")
    i = _last_committed(work)
    while True:
        i += 1
        llm.chat(_ask(i))
        _commit(work, i)


def llmcache_check(work: Path) -> Outcome:
    from legalrag.llm.cache import CallCache, request_key

    committed = _committed(work)
    if not (work / "calls.sqlite").exists():
        return Outcome(True, len(committed), "no cache file yet")
    try:
        store = CallCache(work / "calls.sqlite")
        rows = dict(store._conn.execute("SELECT key, result FROM calls").fetchall())
        texts = {k: json.loads(r)["text"] for k, r in rows.items()}
        store.close()
    except Exception as exc:
        return Outcome(False, 1, f"does not open or holds a torn row: {exc}")
    # every committed call is there under its key, with its own reply (read as CachedLLM reads it)
    lost = 0
    for i in committed:
        req = _ask(i)
        want = "reply to " + req.messages[0]["content"] * 20
        lost += texts.get(request_key("scripted", "scripted", req)) != want
    return Outcome(True, lost, f"{len(rows)} entries, {len(committed)} committed")


# -- learned ranker and citation model saves -----------------------------------------------------------------

def _booster(rounds: int):
    import lightgbm as lgb

    rng = np.random.default_rng(rounds)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(float)
    params = {"objective": "lambdarank", "num_leaves": 3, "min_data_in_leaf": 2, "min_data_in_bin": 1,
              "verbose": -1, "num_threads": 1}
    return lgb.train(params, lgb.Dataset(x, y, group=[10] * 6), num_boost_round=rounds)


def _ranker(gen: int):
    from legalrag.rerank.features import Prior
    from legalrag.rerank.learned import LearnedRanker

    rounds = 1 + gen % 4
    return LearnedRanker(None, _booster(rounds), Prior({f"a{gen}": gen}, {}), {"generation": gen, "rounds": rounds})


def ranker_setup(work: Path) -> None:
    _ranker(0).save(work / "ranker")


def ranker_work(work: Path) -> None:
    models = [_ranker(g) for g in range(4)]
    gen = _last_committed(work)
    while True:
        gen += 1
        m = models[gen % 4]
        m.spec["generation"] = gen
        m.prior.article = {f"a{gen}": gen}
        m.save(work / "ranker")
        _commit(work, gen)


def ranker_check(work: Path) -> Outcome:
    import lightgbm as lgb

    d = work / "ranker"
    try:
        spec = json.loads((d / "spec.json").read_text(encoding="utf-8"))
        prior = json.loads((d / "prior.json").read_text(encoding="utf-8"))
        booster = lgb.Booster(model_file=str(d / "model.txt"))
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    gen = spec["generation"]
    if booster.num_trees() != spec["rounds"] or prior["article"] != {f"a{gen}": gen}:
        return Outcome(False, 0, f"model, spec and prior of generation {gen} do not belong together")
    last = _last_committed(work)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


def _cite_parts(gen: int):
    from legalrag.citepredict.cocitation import CoCitationGraph
    from legalrag.citepredict.pipeline import CiteConfig
    from legalrag.citepredict.rules import learn_rules

    sets = {f"c{j}": {f"Art. {1 + (j + gen) % 7}", f"Art. {100 + gen}"} for j in range(12)}
    return learn_rules(sets, min_support=2), CoCitationGraph.build(sets), CiteConfig(candidates=10 + gen)


def cite_setup(work: Path) -> None:
    from legalrag.citepredict.model import save_model

    save_model(work / "citemodel", *_cite_parts(0))


def cite_work(work: Path) -> None:
    from legalrag.citepredict.model import save_model

    gen = _last_committed(work)
    while True:
        gen += 1
        save_model(work / "citemodel", *_cite_parts(gen))
        _commit(work, gen)


def cite_check(work: Path) -> Outcome:
    from legalrag.citepredict.model import load_model

    try:
        rules, graph, config = load_model(work / "citemodel")
    except Exception as exc:
        return Outcome(False, 1, f"does not open: {exc}")
    gen = config.candidates - 10
    if f"Art. {100 + gen}" not in graph.provisions:
        return Outcome(False, 0, f"config of generation {gen} with a graph of another one")
    last = _last_committed(work)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


# -- training checkpoints (legalrag.training.checkpoint: model + optimiser + scheduler + progress, and the best) --

class _TinyModel:
    """A torch module with sentence-transformers' ``save(path)``: weights that say which generation wrote them."""

    def __init__(self, gen: int):
        import torch

        self.net = torch.nn.Linear(4, 2)
        with torch.no_grad():
            self.net.weight.fill_(float(gen))
            self.net.bias.fill_(float(gen))

    def save(self, path: str) -> None:
        import torch

        Path(path).mkdir(parents=True, exist_ok=True)
        torch.save(self.net.state_dict(), Path(path) / "weights.pt")


def _train_state(gen: int):
    import torch

    model = _TinyModel(gen)
    opt = torch.optim.AdamW(model.net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)
    sched.last_epoch = gen  # the step the checkpoint was taken at
    return model, opt, sched


def train_setup(work: Path) -> None:
    from legalrag.training.checkpoint import save_best, save_checkpoint

    model, opt, sched = _train_state(0)
    save_checkpoint(work / "run", model, opt, sched, {"fingerprint": "fp", "generation": 0})
    save_best(work / "run", model)


def train_work(work: Path) -> None:
    import torch

    from legalrag.training.checkpoint import save_best, save_checkpoint

    torch.set_num_threads(1)
    gen = _last_committed(work)
    while True:
        gen += 1
        model, opt, sched = _train_state(gen)
        save_checkpoint(work / "run", model, opt, sched, {"fingerprint": "fp", "generation": gen})
        save_best(work / "run", model)
        _commit(work, gen)


def train_check(work: Path) -> Outcome:
    import torch

    from legalrag.training.checkpoint import load_checkpoint, restore_optimiser

    run = work / "run"
    try:
        state = load_checkpoint(run, "fp")
        weights = torch.load(run / "checkpoint" / "model" / "weights.pt", weights_only=True)
        best = torch.load(run / "best" / "weights.pt", weights_only=True)
        _, opt, sched = _train_state(0)
        restore_optimiser(run, opt, sched)
    except Exception as exc:
        return Outcome(False, 1, f"does not resume: {exc}")
    gen = state["generation"]
    if not (bool((weights["weight"] == gen).all()) and sched.last_epoch == gen):
        return Outcome(False, 0, f"progress of generation {gen} with weights or optimiser of another one")
    best_gen = int(best["weight"][0, 0])
    if not bool((best["weight"] == best_gen).all()) or best_gen not in (gen, gen - 1):
        return Outcome(False, 0, f"best model of generation {best_gen} beside checkpoint {gen}")
    last = _last_committed(work)
    return Outcome(True, int(gen < last), f"generation {gen}, last committed {last}")


FAULTS = {f.name: f for f in [
    Fault("index build", index_setup, index_work, index_check),
    Fault("folder rebuild", folder_setup, folder_work, folder_check),
    Fault("dense add/delete", dense_setup, dense_work, dense_check),
    Fault("vector cache", vectors_setup, vectors_work, vectors_check),
    Fault("LLM call cache", llmcache_setup, llmcache_work, llmcache_check),
    Fault("ranker save", ranker_setup, ranker_work, ranker_check),
    Fault("citation model save", cite_setup, cite_work, cite_check),
    Fault("training checkpoint", train_setup, train_work, train_check),
]}


def _private_tqdm_locks() -> None:
    """tqdm guards its bars with a multiprocessing semaphore that forked children share with their parent: a
    child killed while holding it would hang the parent's next progress bar (bm25s draws bars). Replace it by
    per-process thread locks, in the parent before forking and in each child."""
    from tqdm import std

    std.TqdmDefaultWriteLock.mp_lock = None
    classes, todo = [], [std.tqdm]
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo.extend(cls.__subclasses__())
    for cls in classes:
        if "_lock" in cls.__dict__ or cls is std.tqdm:
            cls._lock = std.TqdmDefaultWriteLock()


def kill_once(fault: Fault, work: Path, rng: random.Random, max_delay: float = 0.4) -> Outcome:
    """Fork a child running ``fault.work``, SIGKILL it after a random delay, then check the state on disk."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller
        code = 0
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _private_tqdm_locks()
            fault.work(work)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 3
        finally:
            os._exit(code)
    time.sleep(rng.uniform(0.0, max_delay))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        return Outcome(False, 0, f"the writer stopped on its own (status {status}) before it was killed")
    return fault.check(work)


def run_fault(name: str, work: Path, kills: int, seed: int = 0, max_delay: float = 0.4) -> list[Outcome]:
    fault = FAULTS[name]
    _private_tqdm_locks()
    work.mkdir(parents=True, exist_ok=True)
    fault.setup(work)
    rng = random.Random(seed)
    return [kill_once(fault, work, rng, max_delay) for _ in range(kills)]


# -- the benchmark -------------------------------------------------------------------------------------------

_BUILD = """
import inspect, resource, sys, time
from legalrag.retrieval.index import build_index, read_corpus
from legalrag.corpora.statutes import FieldMap
retrievers, chunk = sys.argv[3].split(","), int(sys.argv[4])
extra = {"chunk_docs": chunk} if chunk and "chunk_docs" in inspect.signature(build_index).parameters else {}
t = time.perf_counter()
docs, _ = read_corpus(sys.argv[1], FieldMap.parse("id=id,text=text,name=name"))
idx = build_index(sys.argv[2], docs, retrievers, lang="zh", **extra)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, round(time.perf_counter() - t, 1))
"""

# A fresh process opens the index, asks for 10 hits (what a search holds), then for 100,000 (what a huge request adds).
_SEARCH = """
import resource, sys, time
from legalrag.retrieval.index import open_index
q = "当事人应当依照约定履行合同义务"
t = time.perf_counter()
r = open_index(sys.argv[1]).retriever(sys.argv[2])
r.retrieve(q, k=10)
k10_kb, k10_s = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t
# resident now: anonymous (heap: what the process holds) and file-backed (mapped index pages the kernel can drop)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
anon_kb, file_kb = int(status["RssAnon"].split()[0]), int(status["RssFile"].split()[0])
t = time.perf_counter()
hits = r.retrieve(q, k=100_000)
print(anon_kb, file_kb, k10_kb, round(k10_s, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(hits),
      round(time.perf_counter() - t, 2))
"""


def search_memory(index: Path, retriever: str) -> dict:
    """Peak RSS of a fresh process that opens ``index`` and searches it (10 hits, then 100,000)."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    out = subprocess.run([sys.executable, "-c", _SEARCH, str(index), retriever], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return {"open_and_10_hits_peak_rss_mib": round(int(out[-5]) / 1024, 1),
            "then_rss_anon_mib": round(int(out[-7]) / 1024, 1), "then_rss_file_mib": round(int(out[-6]) / 1024, 1),
            "open_and_10_hits_s": float(out[-4]),
            "100k_hits_peak_rss_mib": round(int(out[-3]) / 1024, 1), "hits_returned": int(out[-2]),
            "100k_hits_s": float(out[-1])}


def memory_table(sizes: list[int], tmp: Path, retrievers: str = "bm25", chunk_docs: int = 0,
                 keep: Path | None = None) -> list[dict]:
    """Peak RSS and time of building an index over synthetic Chinese corpora (one fresh process per size), then
    of a 100k-hit request in another fresh process. ``chunk_docs``: the streamed build's chunk (0: its default)."""
    import json as _json
    import os as _os
    import random
    import subprocess

    rng = random.Random(0)
    words = ["当事人", "合同", "履行", "义务", "违约", "赔偿", "损失", "人民法院", "依照", "规定", "租金", "借款", "利息",
             "担保", "物权", "侵权", "责任", "期限", "解除", "通知", "书面", "约定", "法律", "行政", "处罚"]
    env = {**_os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    rows = []
    for n in sizes:
        corpus = tmp / f"corpus-{n}.jsonl"
        with corpus.open("w", encoding="utf-8") as fh:
            for i in range(n):
                text = "，".join("".join(rng.choice(words) for _ in range(4)) for _ in range(8)) + "。"
                fh.write(_json.dumps({"id": f"a{i}", "text": text, "name": f"某法第{i + 1}条"}, ensure_ascii=False) + "\n")
        out = subprocess.run([sys.executable, "-c", _BUILD, str(corpus), str(tmp / f"idx-{n}"), retrievers,
                              str(chunk_docs)], env=env, capture_output=True, text=True, check=True).stdout.split()
        build_kb, build_s = int(out[-2]), float(out[-1])
        mb = corpus.stat().st_size / 2**20
        rows.append({"documents": n, "corpus_mib": round(mb, 1), "build_peak_rss_mib": round(build_kb / 1024, 1),
                     "build_s": build_s, **search_memory(tmp / f"idx-{n}", retrievers.split(",")[0])})
        print(rows[-1], file=sys.stderr, flush=True)
        corpus.unlink()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(keep / f"idx-{n}", ignore_errors=True)
            shutil.move(str(tmp / f"idx-{n}"), str(keep / f"idx-{n}"))
        shutil.rmtree(tmp / f"idx-{n}", ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100, help="kills per fault kind")
    ap.add_argument("--kinds", default=",".join(FAULTS), help="comma-separated fault kinds")
    ap.add_argument("--max-delay", type=float, default=0.5, help="kill within this many seconds of the start")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the table here as JSON")
    ap.add_argument("--memory", default=None, help="comma-separated corpus sizes (documents): measure peak RSS "
                                                    "of index build and a 100k-hit request instead of killing")
    ap.add_argument("--search-memory", type=Path, default=None, metavar="INDEX",
                    help="peak RSS of opening INDEX and searching it (its first --retrievers component)")
    ap.add_argument("--keep", type=Path, default=None, help="with --memory: keep the indexes here (idx-N)")
    ap.add_argument("--retrievers", default="bm25", help="with --memory: the index components to build")
    ap.add_argument("--chunk-docs", type=int, default=0,
                    help="with --memory: documents per chunk of the streamed build (0: its default)")
    args = ap.parse_args()
    from rich.console import Console
    from rich.table import Table

    if args.search_memory:
        row = {"index": args.search_memory.name, **search_memory(args.search_memory, args.retrievers.split(",")[0])}
        print(json.dumps(row))
        return
    if args.memory:
        with tempfile.TemporaryDirectory(prefix="legalrag-memory-") as tmp:
            rows = memory_table([int(x) for x in args.memory.split(",")], Path(tmp), args.retrievers,
                                args.chunk_docs, args.keep)
        table = Table(title=f"Peak RSS of `index build` ({args.retrievers}) and of a 100k-hit request, by corpus size")
        for col in rows[0]:
            table.add_column(col.replace("_", " "))
        for r in rows:
            table.add_row(*[str(v) for v in r.values()])
        Console().print(table)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
        return

    rows = []
    with tempfile.TemporaryDirectory(prefix="legalrag-faults-") as tmp:
        os.environ["LEGALRAG_HOME"] = str(Path(tmp) / "home")
        for i, kind in enumerate(k.strip() for k in args.kinds.split(",") if k.strip()):
            t0 = time.perf_counter()
            outcomes = run_fault(kind, Path(tmp) / f"k{i}", args.kills, seed=args.seed + i, max_delay=args.max_delay)
            bad = [o.detail for o in outcomes if not o.valid or o.lost]
            rows.append({"fault": kind, "injected": len(outcomes), "valid": sum(o.valid for o in outcomes),
                         "data_lost": sum(o.lost for o in outcomes), "seconds": round(time.perf_counter() - t0, 1),
                         "examples_of_failures": bad[:3]})
            print(f"{kind}: {rows[-1]}", file=sys.stderr)
    table = Table(title=f"SIGKILL fault injection ({args.kills} kills per kind, kill within {args.max_delay} s)")
    for col in ("fault kind", "injected", "valid afterwards", "data lost", "seconds"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["fault"], str(r["injected"]), str(r["valid"]), str(r["data_lost"]), str(r["seconds"]))
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
