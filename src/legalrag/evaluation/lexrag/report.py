"""Scoring, saving and plotting generation and judge runs (the files `eval consultation-*` write).

A generation run directory holds ``generations.jsonl`` (one row per turn x setting, with the history, the
reference and the keywords the judge and the metrics need), ``metrics.json`` (per-setting means and per-turn
keyword accuracy) and ``manifest.json``. A judge run holds ``judgements.jsonl`` (failures keep their raw
replies), ``summary.json`` and ``manifest.json``. Files are written atomically.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.evaluation.lexrag.data import ConsultTurn
from legalrag.evaluation.lexrag.generate import ConsultationResponse, prompt_history, response_row
from legalrag.errors import InputError

SELF = "reference-self"
GEN_COLUMNS = ("keyword_accuracy", "rouge1", "rouge2", "rougeL", "bleu", "meteor", "cites_gold")


def score_generations(turns: Sequence[ConsultTurn], responses: Sequence[ConsultationResponse], *,
                      tokenizer: str = "word", embedder: Any = None) -> dict[str, Any]:
    """Per-response scores, per-setting means (with corpus BLEU and seconds per answer), and per-turn
    keyword accuracy."""
    by_id = {t.id: t for t in turns}
    return _score([{"turn_id": r.turn_id, "turn": by_id[r.turn_id].turn, "setting": r.setting,
                    "reference": by_id[r.turn_id].reference, "keywords": by_id[r.turn_id].keywords,
                    "response": r.text, "timings": r.timings, "gold": list(by_id[r.turn_id].gold_ids),
                    "cited": [c.document_id for c in r.citations if c.resolved]} for r in responses],
                  tokenizer, embedder)


def _score(items: Sequence[Mapping[str, Any]], tokenizer: str, embedder: Any) -> dict[str, Any]:
    """``items``: dicts with turn_id, turn, setting, reference, keywords, response, timings."""
    from legalrag.evaluation.lexrag.metrics import answer_scores
    from legalrag.evaluation.generation import corpus_bleu, mean_scores

    per_item, by_setting = [], {}
    for x in items:
        scores = answer_scores(x["reference"], x["response"], x["keywords"], tokenizer=tokenizer, embedder=embedder)
        if x.get("gold") and x.get("cited") is not None:  # the answer cites a gold article (resolved in the corpus)
            scores["cites_gold"] = float(bool(set(x["cited"]) & set(x["gold"])))
        per_item.append({"turn_id": x["turn_id"], "turn": x["turn"], "setting": x["setting"], **scores})
        by_setting.setdefault(x["setting"], []).append((x, scores))
    table, by_turn = [], {}
    for setting, pairs in by_setting.items():
        means = mean_scores(s for _, s in pairs)
        row = {"setting": setting, "answers": len(pairs), **{c: means.get(c, 0.0) for c in GEN_COLUMNS}}
        if embedder is not None:
            row["bertscore_f1"] = means.get("bertscore_f1", 0.0)
        row["corpus_bleu"] = corpus_bleu([x["reference"] for x, _ in pairs], [x["response"] for x, _ in pairs],
                                         tokenizer)
        for key, former in (("retrieval_s", "retrieval"), ("generation_s", "generation"),
                            ("model_seconds", "model_seconds")):  # every row has each column, so tables line up
            values = [_timing(x["timings"], key, former) for x, _ in pairs]
            values = [v for v in values if v is not None]
            row[key] = statistics.fmean(values) if values else 0.0
        table.append(row)
        by_turn[setting] = {n: mean_scores(s for x, s in pairs if x["turn"] == n).get("keyword_accuracy", 0.0)
                            for n in sorted({x["turn"] for x, _ in pairs})}
    return {"per_item": per_item, "table": table, "keyword_accuracy_by_turn": by_turn}


def _timing(timings: dict, key: str, former: str) -> float | None:
    """``timings[key]``; a run saved before the timings took one spelling gave the benchmark's own measure
    under ``former`` (beside the engine's, under ``key``), which is the one reported."""
    return timings.get(former, timings.get(key))


def rescore_generation_run(run_dir: str | Path, *, tokenizer: str = "word", embedder: Any = None) -> dict[str, Any]:
    """Score a saved generation run again (another tokenizer, or the BERTScore-style F1 with ``embedder``)
    without calling a model; rewrites its ``generations.jsonl`` scores and ``metrics.json`` in place."""
    from legalrag.io import atomic_dir

    run = Path(run_dir)
    rows = load_generations(run)
    scored = _score([{**r, "turn": int(r.get("turn", 0)), "keywords": tuple(r.get("keywords", ())),
                      "timings": r.get("timings", {})} for r in rows], tokenizer, embedder)
    for row, s in zip(rows, scored["per_item"]):
        row["scores"] = {k: v for k, v in s.items() if k not in ("turn_id", "turn", "setting")}
    old = json.loads((run / "metrics.json").read_text(encoding="utf-8")) if (run / "metrics.json").is_file() else {}
    metrics = {"table": scored["table"], "keyword_accuracy_by_turn": scored["keyword_accuracy_by_turn"],
               "gold": old.get("gold", {}), "rescored": {"tokenizer": tokenizer, "bertscore": embedder is not None}}
    with atomic_dir(run) as tmp:
        for f in run.iterdir():  # the manifest and anything else stay as they were
            if f.is_file() and f.name not in ("generations.jsonl", "metrics.json"):
                shutil.copy2(f, tmp / f.name)
        (tmp / "generations.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows),
                                               encoding="utf-8")
        (tmp / "metrics.json").write_text(json.dumps(metrics, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return scored


def save_generation_run(out_dir: str | Path, turns: Sequence[ConsultTurn], responses: Sequence[ConsultationResponse],
                        scored: Mapping[str, Any], params: Mapping[str, Any],
                        gold_report: Mapping[str, Any] | None = None) -> Path:
    from legalrag.evaluation.runs import run_manifest
    from legalrag.io import atomic_dir

    by_id = {t.id: t for t in turns}
    scores = {(s["turn_id"], s["setting"]): s for s in scored["per_item"]}
    rows = []
    for r in responses:
        t = by_id[r.turn_id]
        s = scores[(r.turn_id, r.setting)]
        rows.append({**response_row(r), "dialogue_id": t.dialogue_id, "history": prompt_history(t.history),
                     "reference": t.reference, "keywords": list(t.keywords), "gold_ids": list(t.gold_ids),
                     "scores": {k: v for k, v in s.items() if k not in ("turn_id", "turn", "setting")}})
    with atomic_dir(out_dir) as tmp:
        (tmp / "generations.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows),
                                               encoding="utf-8")
        metrics = {"table": scored["table"], "keyword_accuracy_by_turn": scored["keyword_accuracy_by_turn"],
                   "gold": dict(gold_report or {})}
        (tmp / "metrics.json").write_text(json.dumps(metrics, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(run_manifest(params), ensure_ascii=False, indent=2) + "\n",
                                           encoding="utf-8")
    return Path(out_dir)


def load_generations(run_dir: str | Path) -> list[dict[str, Any]]:
    from legalrag.io import read_jsonl

    path = Path(run_dir) / "generations.jsonl"
    if not path.is_file():
        raise InputError("not a generation run (generations.jsonl missing); write one with "
                         "`legalrag eval consultation-generate`", path=str(run_dir))
    rows = [row for _, row in read_jsonl(path)]
    for i, row in enumerate(rows, 1):
        for key in ("turn_id", "setting", "question", "reference", "response", "history"):
            if key not in row:
                raise InputError("missing field", path=str(path), line=i, field=key)
    return rows


def compare_generation_runs(a_dir: str | Path, b_dir: str | Path, *,
                            metrics: Sequence[str] = GEN_COLUMNS) -> list[dict[str, Any]]:
    """Two generation runs answered the same turns differently (another model, prompt, evidence budget):
    per setting and metric, the mean of each over the turns both answered, the difference B - A and a paired
    randomization test's p-value. Both runs must share at least one (turn, setting) pair, and each pair's
    question must be the same (else they are not the same turns)."""
    from legalrag.evaluation.compare import paired_randomization_test, sign_flips

    runs = []
    for d in (a_dir, b_dir):
        rows = load_generations(d)
        for i, r in enumerate(rows, 1):
            if not isinstance(r.get("scores"), Mapping):
                raise InputError("row has no scores; score the run with `legalrag eval consultation-score`",
                                 path=str(Path(d) / "generations.jsonl"), line=i, field="scores")
        runs.append({(r["turn_id"], r["setting"]): r for r in rows})
    a, b = runs
    common = [key for key in a if key in b]
    if not common:
        raise InputError(f"{a_dir} and {b_dir} share no (turn, setting) pair: compare runs made from the same "
                         "data, sample and settings")
    for key in common:
        if a[key]["question"] != b[key]["question"]:
            raise InputError(f"turn {key[0]} asks different questions in {a_dir} and {b_dir}: the runs were made "
                             "from different data", field="question")
    out = []
    for setting in dict.fromkeys(s for _, s in common):
        keys = [k for k in common if k[1] == setting]
        signs = sign_flips(len(keys))  # one set of permutations for every metric of the setting
        for metric in metrics:
            xs = [float(a[k]["scores"].get(metric, 0.0)) for k in keys]
            ys = [float(b[k]["scores"].get(metric, 0.0)) for k in keys]
            mean_a, mean_b = statistics.fmean(xs), statistics.fmean(ys)
            out.append({"setting": setting, "metric": metric, "turns": len(keys), "a": mean_a, "b": mean_b,
                        "b_minus_a": mean_b - mean_a, "p": paired_randomization_test(ys, xs, signs=signs)})
    return out


def load_judgements(run_dir: str | Path) -> list:
    from legalrag.evaluation.lexrag.judge import Judgement
    from legalrag.io import read_jsonl

    path = Path(run_dir) / "judgements.jsonl"
    if not path.is_file():
        raise InputError("not a judge run (judgements.jsonl missing)", path=str(run_dir))
    return [Judgement.from_dict(row) for _, row in read_jsonl(path)]


def run_judge(generations: str | Path, llm: Any, *, self_check: bool = False, against: str | Path | None = None,
              limit_turns: int | None = None, progress: bool = False, **options: Any) -> dict[str, Any]:
    """Judge every generation (and, with ``self_check``, every reference against itself); summarise per
    setting with failures, score spread, the reference's self-score and agreement with ``against``.
    ``limit_turns`` keeps the first N turns of the run, each in every setting."""
    from legalrag.evaluation.lexrag.judge import DIMENSIONS, agreement, judge_many, spread, summarise_judgements

    rows = load_generations(generations)
    if limit_turns is not None:
        keep = set(list(dict.fromkeys(r["turn_id"] for r in rows))[:limit_turns])
        rows = [r for r in rows if r["turn_id"] in keep]
    items = [{"item_id": f"{r['turn_id']}|{r['setting']}", "history": r["history"], "question": r["question"],
              "reference": r["reference"], "response": r["response"]} for r in rows]
    if self_check:
        seen = {}
        for r in rows:
            seen.setdefault(r["turn_id"], {"item_id": f"{r['turn_id']}|{SELF}", "history": r["history"],
                                           "question": r["question"], "reference": r["reference"],
                                           "response": r["reference"]})
        items += list(seen.values())
    judgements = judge_many(items, llm, progress=progress, **options)
    groups: dict[str, list] = {}
    for j in judgements:
        groups.setdefault(j.item_id.rsplit("|", 1)[1], []).append(j)
    generated = [j for j in judgements if not j.item_id.endswith(f"|{SELF}")]
    summary: dict[str, Any] = {"settings": {s: summarise_judgements(js) for s, js in groups.items() if s != SELF},
                               "all": summarise_judgements(generated), "spread": spread(generated),
                               "failures": sum(j.failed for j in judgements),
                               "failed_items": [j.item_id for j in judgements if j.failed],
                               "seconds_per_item": statistics.fmean(j.seconds for j in judgements) if judgements else 0}
    if SELF in groups:
        summary["reference_self_score"] = summarise_judgements(groups[SELF])
    if against is not None:
        summary["agreement"] = agreement(generated, [j for j in load_judgements(against)
                                                     if not j.item_id.endswith(f"|{SELF}")])
    table = []
    for s, js in groups.items():
        m = summarise_judgements(js)
        # A setting whose every reply failed shows None (printed "-"), never a score of 0.
        table.append({"setting": s, **{d: m[d] for d in DIMENSIONS}, "overall": m["overall"],
                      "judged": m["judged"], "failures": m["failures"]})
    return {"judgements": judgements, "summary": summary, "table": table}


def save_judge_run(out_dir: str | Path, result: Mapping[str, Any], params: Mapping[str, Any]) -> Path:
    from legalrag.evaluation.runs import run_manifest
    from legalrag.io import atomic_dir

    with atomic_dir(out_dir) as tmp:
        (tmp / "judgements.jsonl").write_text("".join(json.dumps(j.to_dict(), ensure_ascii=False) + "\n"
                                                      for j in result["judgements"]), encoding="utf-8")
        (tmp / "summary.json").write_text(json.dumps({"table": result["table"], **result["summary"]},
                                                     ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(run_manifest(params), ensure_ascii=False, indent=2) + "\n",
                                           encoding="utf-8")
    return Path(out_dir)


def plot_judge(result: Mapping[str, Any], path: str | Path) -> Path:
    """Grouped bars: one group per setting, one bar per dimension (mean score 1-10)."""
    from legalrag.evaluation.lexrag.judge import DIMENSIONS
    from legalrag.evaluation.plots import plot_bars

    rows = {row["setting"]: {d: row[d] for d in DIMENSIONS} for row in result["table"] if row["judged"]}
    return plot_bars(rows, path, title="judge scores per dimension and setting", ylabel="mean score (1-10)",
                     ylim=(0, 10))
