"""Judgment structure prediction and structure-first drafting on JuDGE.

    legalrag train judge-structure --data $LEGALRAG_DATA/judge --out MODEL ...   # the recipe: first 200 cases
    python bench/judgment/bench_judgment_structure.py eval   --model-dir MODEL --json-out FILE [--before B.jsonl]
    python bench/judgment/bench_judgment_structure.py ablate --json-out FILE     # drop one group / signal at a time
    python bench/judgment/bench_judgment_structure.py folds  --index IDX --retriever DENSE --json-out FILE
    python bench/judgment/bench_judgment_structure.py compare --pred A.jsonl --against B.jsonl  # paired, B vs A
    python bench/judgment/bench_judgment_structure.py draft  --model-dir MODEL --out DRAFTS.jsonl [--until HH:MM]
    python bench/judgment/bench_judgment_structure.py score  --drafts DRAFTS.jsonl --json-out FILE

``eval`` scores a model directory (or a shipped model's name: ``judge-structure``) on the other 301 cases, with
the encoder its manifest records, against ``--before`` (a prediction file of another model on the same cases) by
paired randomization. ``ablate`` and ``folds`` train the variants they compare with the recipe's
``legalrag.training.recipes.build_structure``: ``ablate`` the BM25-signal model without one feature group or
signal at a time; ``folds`` (not the paper's protocol) 5-fold cross-validation over all 501 cases, once with the
BM25 signal and once with ``--retriever``'s encoder (which must have learned from none of the 501: the untrained
e5-small).

Data: ``--data`` (default ``$LEGALRAG_SHARED_DATA/judge`` or ``../shared/data/judge``): ``data/test.json``
(facts), ``expected.jsonl`` (gold judgments), ``data/law_corpus.jsonl`` (statutes), ``data/qrels_file_train``
(training citation sets for the citation pipeline; 2,004 decisions without facts, disjoint from the test set).
Training never sees the evaluated cases: the split is by sorted ``text_id`` (first 200 / other 301).

``draft`` appends one JSON line per case to ``--out`` and skips the ids already there, so it resumes; LLM calls go
through the call cache. ``score`` scores whatever drafts exist against the gold judgments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"

PAPER_QWEN7B_RAG = {"prison": 0.680, "fine": 0.551, "charge_f1": 0.961, "article_f1": 0.773}
TODAY_DRAFTER = {"prison": 0.346, "fine": 0.294, "charge_precision": 0.700, "charge_recall": 0.700, "charge_f1": 0.700,
                 "article_precision": 0.429, "article_recall": 0.382, "article_f1": 0.404}
TARGETS = {"prison": 0.70, "fine": 0.58, "charge_f1": 0.97, "article_f1": 0.78}
KEYS = ("prison", "fine", "charge_precision", "charge_recall", "charge_f1", "article_precision", "article_recall",
        "article_f1")


def load_data(data: Path):
    from legalrag.training.recipes import load_judge

    return load_judge(data)


def train_variant(judge, cases=None, index=None, retriever=None, **options):
    """A variant the benchmark compares, trained by the recipe's builder (the BM25 signal without an index)."""
    from legalrag.training.recipes import build_structure

    model = build_structure(cases if cases is not None else judge.labels.cases, judge, index, retriever, **options)
    model.skipped = [list(s) for s in judge.labels.skipped]
    t0 = time.perf_counter()
    model.train(progress=options.get("progress", True))
    return model, time.perf_counter() - t0


def predict_docs(model, facts, ids, progress=True, reader=None):
    from legalrag.judgment.compose import compose_document, template_reasoning

    it = ids
    if progress:
        from tqdm import tqdm

        it = tqdm(ids, desc="predicting", unit="case")
    docs, structs = {}, {}
    for i in it:
        s = model.predict(facts[i], i, charge_reader=reader)
        structs[i] = s
        docs[i] = compose_document(facts[i], template_reasoning(s), s)
    return docs, structs


def per_doc(report):
    """Per-document scores for paired tests (None where the benchmark leaves the document out)."""
    def f1(p, r):
        return 2 * p * r / (p + r) if p + r else 0.0

    return {"prison": [d.prison for d in report.documents], "fine": [d.fine for d in report.documents],
            "charge_f1": [f1(d.charge_precision, d.charge_recall) for d in report.documents],
            "article_f1": [f1(d.article_precision, d.article_recall) for d in report.documents]}


def _table(title, rows, columns):
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c, justify="left" if c == columns[0] else "right")
    for r in rows:
        t.add_row(*[f"{v:.4f}" if isinstance(v, float) else ("-" if v is None else str(v)) for v in r])
    Console().print(t)


def cmd_eval(args):
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.shipped import model_dir
    from legalrag.wiring import make_encoder

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_data(args.data)
    path = model_dir(args.model_dir, "judgment-model")  # a directory or a shipped model's name
    man = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    encoder = make_encoder(args.encoder or man.get("encoder_spec")) if man.get("encoder") else None
    model = StructurePredictor.load(path, statutes, encoder)
    reader = charge_reader(args)
    t0 = time.perf_counter()
    docs, structs = predict_docs(model, facts, eval_ids, reader=reader)
    secs = (time.perf_counter() - t0) / len(eval_ids)
    g = {i: gold[i] for i in eval_ids}
    rep = evaluate_judgments(docs, g)
    s = rep.summary()
    _table(f"Structure alone on {rep.n} evaluation cases ({secs:.2f} s per case)",
           [(k, TARGETS.get(k), PAPER_QWEN7B_RAG.get(k), TODAY_DRAFTER.get(k), s[k]) for k in KEYS],
           ["metric", "target", "paper 7B + retrieval", "today's drafter (1.5B, 20 cases)", "structure alone"])
    low = sum(st.low_confidence for st in structs.values())
    print(f"parsed: {rep.n - len(rep.unparsed)} of {rep.n}; low-confidence predictions: {low}")
    checked = [st for st in structs.values() if any("llm_check" in c.evidence for c in st.charges)]
    if reader is not None:
        changed = sum(1 for st in checked if [c.name for c in st.charges] != st.charges[0].evidence["model_choice"])
        print(f"LLM charge check: {len(checked)} cases used the charges the LLM named, {changed} of them changed")
    if args.out:
        from legalrag.io import write_jsonl

        write_jsonl(args.out, [{"id": i, "document": docs[i], "structure": structs[i].to_dict()} for i in eval_ids])
    out = {"protocol": "train on the first 200 cases by text_id, evaluate on the other 301", "machine": MACHINE,
           "command": "python " + " ".join(sys.argv), "model_dir": str(args.model_dir),
           "after": {k: round(s[k], 4) for k in KEYS}, "n": rep.n, "prison_n": rep.prison_n, "fine_n": rep.fine_n,
           "unparsed": len(rep.unparsed), "low_confidence": low, "seconds_per_case": round(secs, 3),
           "charge_checked": len(checked), "targets": TARGETS}
    if args.before:
        recs = [json.loads(x) for x in args.before.read_text(encoding="utf-8").split("\n") if x.strip()]
        before = evaluate_judgments({r["id"]: r["document"] for r in recs}, g)
        b = before.summary()
        out["before"] = {k: round(b[k], 4) for k in KEYS}
        out["p"] = {k: round(v, 4) for k, v in paired_p(per_doc(before), per_doc(rep)).items()}
        print(json.dumps({"before": out["before"], "p": out["p"]}, ensure_ascii=False))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def cmd_folds(args):
    """5-fold cross-validation over all 501 cases, the BM25 signal and ``--retriever``'s encoder."""
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.wiring import Root

    judge = load_data(args.data)
    facts, gold = judge.facts, judge.gold
    ids = sorted(i for i in facts if i in gold)
    labels = {c.id: c for c in label_cases(facts, gold, ids).cases}
    index = Root().index(args.index, snapshot=True) if args.retriever else None
    fold = {cid: k % 5 for k, cid in enumerate(ids)}
    docs = {"before": {}, "after": {}}
    t0 = time.perf_counter()
    for f in range(5):
        train = [labels[i] for i in ids if fold[i] != f and i in labels]
        test = [i for i in ids if fold[i] == f]
        for name in ("before", "after"):
            if name == "after" and index is None:
                continue
            model, _ = train_variant(judge, train, index if name == "after" else None, args.retriever,
                                     select=not args.no_select, progress=False)
            docs[name].update(predict_docs(model, facts, test, progress=False)[0])
            print(f"fold {f} {name}: trained on {len(train)}, predicted {len(test)}; {time.perf_counter() - t0:.0f} s",
                  flush=True)
    g = {i: gold[i] for i in ids}
    out = {"protocol": "5-fold cross-validation over all 501 JuDGE test cases (not the paper's protocol: each case "
                       "is predicted by models trained on the other ~400)", "machine": MACHINE,
           "command": "python " + " ".join(sys.argv)}
    reps = {}
    for name in docs:
        if docs[name]:
            reps[name] = evaluate_judgments(docs[name], g)
            out[name] = {k: round(reps[name].summary()[k], 4) for k in KEYS}
            print(name, out[name], flush=True)
    if len(reps) == 2:
        out["p"] = {k: round(v, 4) for k, v in paired_p(per_doc(reps["before"]), per_doc(reps["after"])).items()}
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def paired_p(before, after, flips: int = 10_000):
    """Two-sided paired randomization p per metric over per-document scores (cases where either side counts)."""
    import numpy as np

    from legalrag.evaluation.compare import paired_randomization_test, sign_flips

    out = {}
    for metric in ("prison", "fine", "charge_f1", "article_f1"):
        pairs = [(x or 0.0, y or 0.0) for x, y in zip(before[metric], after[metric]) if not (x is None and y is None)]
        out[metric] = paired_randomization_test(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]),
                                                signs=sign_flips(len(pairs), flips, 0))
    return out


def cmd_compare(args):
    """Score two prediction files (``eval --out``) on the evaluation cases and test B against A, pairing cases."""
    from legalrag.judgment.metrics import evaluate_judgments

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_data(args.data)
    gold_eval = {i: gold[i] for i in eval_ids}
    reps = []
    for path in (args.pred, args.against):
        recs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        reps.append(evaluate_judgments({r["id"]: r["document"] for r in recs}, gold_eval))
    a, b = (r.summary() for r in reps)
    p = paired_p(per_doc(reps[0]), per_doc(reps[1]))
    multi = args.subset_defendants
    rows = [(k, a[k], b[k], p.get(k)) for k in KEYS]
    _table(f"{args.against.name} vs {args.pred.name} on {reps[0].n} cases (p: paired randomization, 10,000 flips)",
           rows, ["metric", args.pred.name, args.against.name, "p"])
    out = {"a": {k: a[k] for k in KEYS}, "b": {k: b[k] for k in KEYS}, "p": p}
    if multi:  # the cases whose gold result sentences several defendants
        from legalrag.judgment.defendants import sentenced_defendants

        ids = [i for i in eval_ids if len(sentenced_defendants(gold[i])) > 1]
        sub = []
        for rep in reps:
            docs = [d for d in rep.documents if d.id in set(ids)]
            sub.append(sum(d.prison for d in docs if d.prison is not None) / max(1, sum(d.prison is not None for d in docs)))
        print(f"cases sentencing several defendants in the gold result: {len(ids)}; prison {sub[0]:.4f} -> {sub[1]:.4f}")
        out["several_defendants"] = {"n": len(ids), "prison_a": sub[0], "prison_b": sub[1]}
    if args.json_out:
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")


class _Probe:
    """A charge reader that records why the predictor asked and what the LLM said, and uses every name."""

    max_charges = 99

    def __init__(self, reader):
        self.reader, self.reason, self.reading = reader, "", None

    def applies(self, reason: str) -> bool:
        self.reason = reason
        return True

    def read(self, facts: str):
        self.reading = self.reader.read(facts)
        return self.reading


def cmd_check_cv(args):
    """Choose the LLM charge check's rule on the training cases only: 5-fold cross-fitting of the charge model
    (the low-confidence decision depends on it alone), one LLM reading per out-of-fold low-confidence case, and
    the out-of-fold charge F1 of each rule (which cases to send, how many of the named charges to use)."""
    from legalrag.judgment.boosting import FOLDS
    from legalrag.judgment.charge_llm import WHEN, ChargeReader
    from legalrag.judgment.metrics import _f1, recall_precision
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.wiring import make_llm

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_data(args.data)
    cases = sorted(labels.cases, key=lambda c: c.id)
    reader = ChargeReader(make_llm(args.model or None, args.endpoint, args.endpoint_model, threads=args.threads))
    rows = []
    for f in range(FOLDS):
        held = [c for k, c in enumerate(cases) if k % FOLDS == f]
        model = StructurePredictor([c for k, c in enumerate(cases) if k % FOLDS != f], statutes, select=False,
                                   per_defendant=False).train()
        for c in held:
            probe = _Probe(reader)
            s = model.predict(c.facts, c.id, charge_reader=probe)
            own = s.charges[0].evidence.get("model_choice", s.charge_names) if probe.reading else s.charge_names
            rows.append({"id": c.id, "gold": list(c.charges), "model": list(own), "reason": probe.reason,
                         "llm": list(probe.reading.names) if probe.reading else [],
                         "reply": probe.reading.text if probe.reading else ""})
        print(f"fold {f + 1}/{FOLDS}: {sum(1 for r in rows if r['reason'])} low-confidence cases so far", flush=True)

    def f1_of(rule):  # as the evaluator aggregates: F1 of the mean precision and the mean recall
        when, k = rule
        recs, precs = [], []
        for r in rows:
            pred = r["model"]
            if r["reason"] and r["llm"] and (when == "low" or r["reason"] == when):
                pred = r["llm"][:k]
            rec, prec = recall_precision(pred, r["gold"])
            recs.append(rec)
            precs.append(prec)
        return _f1(sum(precs) / len(precs), sum(recs) / len(recs))

    rules = [("none", 0)] + [(w, k) for w in WHEN for k in (1, 2)]
    table = [(f"{w} / {k or '-'}", f1_of((w, k)) if w != "none" else f1_of(("never", 1))) for w, k in rules]
    _table(f"LLM charge check, out-of-fold per-case charge F1 on the {len(rows)} training cases "
           f"({sum(1 for r in rows if r['reason'])} low-confidence)", table, ["when / max charges", "charge F1"])
    if args.json_out:
        args.json_out.write_text(json.dumps({"rules": dict(table), "rows": rows}, ensure_ascii=False, indent=2),
                                 encoding="utf-8")


def cmd_ablate(args):
    from legalrag.judgment.features import GROUPS
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.predict import SIGNALS

    judge = load_data(args.data)
    facts, gold, train_ids, eval_ids, labels, statutes, _ = judge
    gold_eval = {i: gold[i] for i in eval_ids}
    variants = [()] + [(s,) for s in SIGNALS] + [(g,) for g in GROUPS]
    results, per, pvals = {}, {}, {}
    for dis in variants:
        name = "full" if not dis else "- " + dis[0]
        model, _ = train_variant(judge, disabled=dis, progress=False, select=not args.no_select)
        docs, _ = predict_docs(model, facts, eval_ids, progress=False)
        rep = evaluate_judgments(docs, gold_eval)
        results[name] = {k: rep.summary()[k] for k in KEYS}
        per[name] = per_doc(rep)
        if name != "full":
            pvals[name] = paired_p(per["full"], per[name])
        print(name, {k: round(v, 4) for k, v in results[name].items()}, pvals.get(name), flush=True)
        if args.json_out:  # written after every variant, so a cut-off run keeps what it finished
            args.json_out.write_text(json.dumps({"results": results, "p_values": pvals}, ensure_ascii=False,
                                                indent=2), encoding="utf-8")
    rows = [(name, r["prison"], r["fine"], r["charge_f1"], r["article_f1"],
             " ".join(f"{m[:4]}={v:.3f}" for m, v in pvals.get(name, {}).items())) for name, r in results.items()]
    _table("Ablations on the 301 evaluation cases (p: paired randomization vs full, 10,000 sign flips)", rows,
           ["variant", "prison", "fine", "charge F1", "statute F1", "p (vs full)"])


def charge_reader(args, llm=None):
    """``--check-charges``: the LLM charge check for low-confidence charges (``judgment/charge_llm.py``), on
    ``llm`` when one is already open, else on the one ``--model`` / ``--endpoint`` name."""
    if not args.check_charges:
        return None
    from legalrag.judgment.charge_llm import ChargeReader
    from legalrag.wiring import make_llm

    return ChargeReader(llm or make_llm(args.model or None, args.endpoint, args.endpoint_model, threads=args.threads))


def cmd_draft(args):
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.reasoned import ReasonedDrafter
    from legalrag.wiring import make_llm

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_data(args.data)
    model = StructurePredictor.load(args.model_dir, statutes)
    llm = None if args.no_llm else make_llm(args.model or None, args.endpoint, args.endpoint_model,
                                            threads=args.threads)
    drafter = ReasonedDrafter(model, llm, max_tokens=args.max_tokens, charge_reader=charge_reader(args, llm))
    done = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()}
    todo = [i for i in eval_ids if i not in done][: args.n or None]
    print(f"{len(done)} drafts already in {args.out}; {len(todo)} to go", flush=True)
    deadline = None
    if args.until:
        hh, mm = map(int, args.until.split(":"))
        now = time.gmtime()
        deadline = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
    for n, i in enumerate(todo, 1):
        if deadline and time.time() > deadline:
            print(f"deadline {args.until} UTC reached after {n - 1} new drafts", flush=True)
            break
        t0 = time.perf_counter()
        d = drafter.draft(facts[i], i)
        secs = time.perf_counter() - t0
        rec = {"id": i, "document": d.document, "reasoning": d.reasoning, "source": d.source,
               "disagreement": d.disagreement, "error": d.error, "parsed": d.parsed, "seconds": round(secs, 2)}
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"[{n}/{len(todo)}] {i} {secs:.1f}s source={d.source} parsed={d.parsed} "
              f"disagree={bool(d.disagreement)}", flush=True)


def cmd_score(args):
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.textmetrics import text_scores

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_data(args.data)
    recs = [json.loads(line) for line in args.drafts.read_text(encoding="utf-8").splitlines() if line.strip()]
    recs = [r for r in recs if r["id"] in set(eval_ids)]
    if args.same_as:  # score only the cases drafted in another file (a side-by-side on the same cases)
        keep = {json.loads(line)["id"] for line in args.same_as.read_text(encoding="utf-8").splitlines() if line.strip()}
        recs = [r for r in recs if r["id"] in keep]
    preds = {r["id"]: r["document"] for r in recs}
    g = {i: gold[i] for i in preds}
    rep = evaluate_judgments(preds, g)
    s = rep.summary()
    out = {**{k: s[k] for k in KEYS}, "n": rep.n, "prison_n": rep.prison_n, "fine_n": rep.fine_n,
           "parsed": rep.n - len(rep.unparsed),
           "disagree_share": sum(bool(r.get("disagreement")) for r in recs) / len(recs),
           "disagree_fields": [r["disagreement"]["field"] for r in recs if r.get("disagreement")],
           "sources": {k: sum(r.get("source", "template") == k for r in recs)
                       for k in ("llm", "template", "template-fallback")},
           "seconds_mean": sum(r.get("seconds", 0.0) for r in recs) / len(recs),
           "seconds_max": max(r.get("seconds", 0.0) for r in recs)}
    if not args.no_text_metrics:
        ts = text_scores(preds, g, progress=True)
        out.update(ts.to_dict())
    _table(f"Drafts scored: {args.drafts.name} ({rep.n} cases)", [(k, v) for k, v in out.items()
                                                                 if isinstance(v, (int, float))], ["metric", "value"])
    if args.json_out:
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["eval", "ablate", "folds", "draft", "score", "compare", "check-cv"])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared"
                                                                     / "data")) / "judge")
    ap.add_argument("--model-dir", type=Path, default=None, help="a model directory or a shipped model's name")
    ap.add_argument("--encoder", default=None, help="eval: encoder spec (default: the one the manifest records)")
    ap.add_argument("--before", type=Path, default=None, help="eval: another model's predictions (eval --out), "
                    "tested against by paired randomization")
    ap.add_argument("--index", type=Path, default=None, help="folds: the index of the encoder's first stage")
    ap.add_argument("--retriever", default=None, help="folds: its dense component")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--drafts", type=Path, default=None)
    ap.add_argument("--pred", type=Path, default=None, help="compare: the baseline predictions (eval --out)")
    ap.add_argument("--against", type=Path, default=None, help="compare: the predictions tested against --pred")
    ap.add_argument("--subset-defendants", action="store_true",
                    help="compare: also report prison on the cases whose gold result sentences several defendants")
    ap.add_argument("--same-as", type=Path, default=None, help="score: only the ids present in this JSONL file")
    ap.add_argument("--model", default="", help="embedded model name or GGUF path (default: the 1.5B)")
    ap.add_argument("--endpoint", default=None)
    ap.add_argument("--endpoint-model", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=320)
    ap.add_argument("--n", type=int, default=0, help="draft at most N new cases (0: all)")
    ap.add_argument("--until", default=None, help="stop starting new drafts at HH:MM UTC")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--check-charges", action="store_true",
                    help="eval/draft: the LLM (--model / --endpoint) names the charge where the model is not confident")
    ap.add_argument("--no-text-metrics", action="store_true")
    ap.add_argument("--no-select", action="store_true",
                    help="ablate/folds: offer every feature group to every model (no cross-validated selection)")
    args = ap.parse_args()
    {"eval": cmd_eval, "ablate": cmd_ablate, "folds": cmd_folds, "draft": cmd_draft, "score": cmd_score,
     "compare": cmd_compare, "check-cv": cmd_check_cv}[args.what](args)


if __name__ == "__main__":
    main()
