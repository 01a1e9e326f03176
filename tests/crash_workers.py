"""Crash-consistency fault injection: a forked child writes an index, cache or model over and over, the parent
kills it with a real SIGKILL at a random moment, then checks what is on disk.

Each fault kind is a :class:`Fault` with ``setup`` (write the first state, in the parent), ``work`` (the
child's endless loop; after each completed write it appends the generation to ``committed.log``) and ``check``
(after the kill: does the state open, is it exactly one complete generation at least as new as the last one
the child reported, is every committed cache entry still there and correct). Used by
``tests/test_crash_consistency.py`` (a handful of kills per kind) and ``bench/bench_faults.py`` (hundreds).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from legalrag.types import Document

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
    except Exception as exc:  # noqa: BLE001 - any failure to open is what this check counts
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
    except Exception as exc:  # noqa: BLE001
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
        except BaseException:  # noqa: BLE001
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
