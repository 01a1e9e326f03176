"""The data the judgment models are trained on: JuDGE's split (the first 200 test cases by ``text_id`` train, the
other 301 are evaluated) and the CAIL2018 split (``cail-split.json``: cases overlapping a JuDGE evaluation case
dropped, a hold-out of 20% per main charge set apart before anything is trained).

A JuDGE folder holds ``data/test.json`` (facts), ``expected.jsonl`` (reference judgments),
``data/law_corpus.jsonl`` (the Criminal Law) and ``data/qrels_file_train`` (citation lists of the training
decisions); a CAIL folder holds ``data_train.jsonl`` and ``data_test.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

from legalrag.errors import InputError

N_TRAIN = 200
CAIL_FILES = ("data_train.jsonl", "data_test.jsonl")
# judge-e5's own training split (training/data.split_by_id with its settings): the cases it optimised on
SEEN_SEED, SEEN_DEV_SHARE = 13, 0.2


class JudgeData(NamedTuple):
    """JuDGE's cases split by sorted ``text_id`` (a tuple, so ``facts, gold, ... = load_judge(dir)`` reads it)."""

    facts: Mapping[str, str]
    gold: Mapping[str, str]
    train_ids: list[str]
    eval_ids: list[str]
    labels: Any  # judgment.labels.LabelReport of the training cases
    statutes: list
    data: Path

    @property
    def train_citations(self) -> Path:
        return self.data / "data" / "qrels_file_train"


def _need(path: Path, what: str, fix: str) -> Path:
    if not path.exists():
        raise InputError(f"{what} not found; {fix}", path=str(path))
    return path


def load_judge(data: str | Path, n_train: int = N_TRAIN) -> JudgeData:
    """The JuDGE folder ``data``: facts, reference judgments, the first ``n_train`` ids labelled, the statutes."""
    from legalrag.corpora.statutes import load_statutes
    from legalrag.judgment.io import load_judgments
    from legalrag.judgment.labels import label_cases, load_facts, sorted_split

    data = Path(data)
    fix = "pass --data a JuDGE folder (data/test.json, expected.jsonl, data/law_corpus.jsonl, data/qrels_file_train)"
    facts = load_facts(_need(data / "data" / "test.json", "JuDGE facts", fix))
    gold = load_judgments(_need(data / "expected.jsonl", "JuDGE reference judgments", fix))
    statutes = load_statutes(_need(data / "data" / "law_corpus.jsonl", "JuDGE statute corpus", fix))
    _need(data / "data" / "qrels_file_train", "JuDGE training citation lists", fix)
    train_ids, eval_ids = sorted_split([i for i in facts if i in gold], n_train)
    if not train_ids:
        raise InputError("no case id is in both data/test.json and expected.jsonl", path=str(data))
    return JudgeData(facts, gold, train_ids, eval_ids, label_cases(facts, gold, train_ids), statutes, data)


def seen_by_judge_e5(train_ids: Sequence[str]) -> set[str]:
    """The JuDGE training cases judge-e5 optimised on (its training split minus its inner dev share): they give
    the citation signal's set decision no rows (their retrieval scores are better than a new case's)."""
    return {i for i in train_ids
            if int(hashlib.sha256(f"{SEEN_SEED}:{i}".encode()).hexdigest()[:12], 16) / 16 ** 12 >= SEEN_DEV_SHARE}


def capped(ids: Sequence[str], by_id: Mapping[str, Any], cap: int) -> list[str]:
    """At most ``cap`` cases per main charge, in rounds (the first case of every charge, then the second ...),
    so that a prefix of the list is itself balanced across charges."""
    groups: dict[str, list[str]] = {}
    for i in sorted(ids):
        groups.setdefault(by_id[i].charges[0], []).append(i)
    return [g[r] for r in range(cap) for _, g in sorted(groups.items()) if r < len(g)]


def _read_cail(cail_dir: Path, judge: JudgeData):
    from legalrag.judgment.cail import load_cail, overlapping

    files = [_need(Path(cail_dir) / f, "CAIL2018 file", "pass --cail the CAIL2018 folder "
                   f"({', '.join(CAIL_FILES)})") for f in CAIL_FILES]
    rep = load_cail(files)
    over_eval = overlapping(rep.cases, {i: judge.facts[i] for i in judge.eval_ids})
    over_train = overlapping(rep.cases, {i: judge.facts[i] for i in judge.train_ids})
    return rep, over_eval, over_train


def prepare_cail_split(cail_dir: str | Path, judge: JudgeData) -> dict:
    """Read every CAIL line (the unusable ones listed by line), drop the cases overlapping a JuDGE evaluation
    case, and split off the hold-out (20% per main charge) before anything is trained: the ``cail-split.json``
    record, its cases named by the first 16 hex digits of the SHA-256 of their facts."""
    from legalrag.judgment.cail import OVERLAP, SHINGLE, split_holdout

    rep, over_eval, over_train = _read_cail(Path(cail_dir), judge)
    kept = [c for c in rep.cases if c.id not in over_eval]
    train, hold = split_holdout(kept)
    by_id = {c.id: c for c in kept}
    return {
        "source": "CAIL2018 ($LEGALRAG_DATA/cail2018/data_train.jsonl and data_test.jsonl), ids are cail- + the "
                  "first 16 hex of the SHA-256 of the facts",
        "lines_read": len(rep.cases) + len(rep.skipped) + rep.duplicates,
        "skipped": [{"file": f, "line": n, "why": w} for f, n, w in rep.skipped],
        "duplicates_dropped": rep.duplicates,
        "charges_mapped": dict(sorted(rep.mapped.items())),
        "overlap_rule": f"share of the CAIL case's {SHINGLE}-character shingles found in one JuDGE case >= {OVERLAP}",
        "dropped_overlapping_judge_eval": [{"cail": c, "judge": j, "share": s} for c, (j, s) in sorted(over_eval.items())],
        "overlapping_judge_train_kept": len(over_train),
        "cases": len(kept), "train": len(train), "holdout": len(hold),
        "holdout_charges": len({by_id[i].charges[0] for i in hold}),
        "train_ids": train, "holdout_ids": hold,
    }


@dataclass(frozen=True)
class CailSplit:
    """The CAIL cases of a ``cail-split.json``: ``train`` without the copies of JuDGE training cases (a copy
    would be that case's own nearest neighbour), ``holdout`` as written; ``dropped`` counts the cases the split
    left out for overlapping a JuDGE evaluation case."""

    train: tuple
    holdout: tuple
    dropped: int
    path: Path


def load_cail_split(cail_dir: str | Path, split_file: str | Path, judge: JudgeData) -> CailSplit:
    rep, over_eval, over_train = _read_cail(Path(cail_dir), judge)
    split_path = _need(Path(split_file), "CAIL split file", "write it with `legalrag train cail-split`")
    split = json.loads(split_path.read_text(encoding="utf-8"))
    if not isinstance(split, dict) or not {"train_ids", "holdout_ids"} <= set(split):
        raise InputError("the CAIL split file needs train_ids and holdout_ids; write it with `legalrag train "
                         "cail-split`", path=str(split_path))
    by_id = {c.id: c for c in rep.cases}
    missing = [i for i in split["train_ids"] + split["holdout_ids"] if i not in by_id]
    if missing:
        raise InputError(f"{len(missing)} ids of the split are not in the CAIL files (first: {missing[0]}); "
                         "rewrite it with `legalrag train cail-split`", path=str(split_path))
    return CailSplit(tuple(by_id[i] for i in split["train_ids"] if i not in over_train),
                     tuple(by_id[i] for i in split["holdout_ids"]), len(over_eval), split_path)


class FactsAsGiven:
    """An encoder fed each case's facts as ``test.json`` gives them (case files are read stripped), so the query
    vectors earlier runs computed for the same texts come from the vector cache."""

    def __init__(self, inner, data: Path):
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        rows = (json.loads(x) for x in (Path(data) / "data" / "test.json").read_text(encoding="utf-8").splitlines()
                if x.strip())
        self.raw = {r["text"].strip(): r["text"] for r in rows if isinstance(r.get("text"), str)}

    def encode_queries(self, texts):
        return self.inner.encode_queries([self.raw.get(t, t) for t in texts])

    def encode_documents(self, texts):
        return self.inner.encode_documents(texts)

    def vector_cache(self):
        own = getattr(self.inner, "vector_cache", None)
        return own() if callable(own) else None


def first_stage(index, retriever: str, data: Path):
    """The index's component ``retriever``, its encoder (if dense) wrapped in :class:`FactsAsGiven`."""
    first = index.retriever(retriever)
    if hasattr(first, "encoder") and not isinstance(first.encoder, FactsAsGiven):
        first.encoder = FactsAsGiven(first.encoder, data)
    return first
