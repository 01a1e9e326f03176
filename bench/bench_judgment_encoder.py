"""The judgment structure predictor on an encoder's signal, and the 5-fold protocol over all 501 JuDGE cases.

    python bench/bench_judgment_encoder.py train --index indexes/judge-ft --retriever DENSE --exclude-seen models/judge-e5 \
        --model-dir models/judge/structure
    python bench/bench_judgment_encoder.py eval --model-dir models/judge/structure --encoder models/judge-e5 \
        --out runs/judge/structure-after.jsonl --before runs/judge/structure-before-eval.jsonl --json-out FILE
    python bench/bench_judgment_encoder.py folds --index indexes/judge/e5fp32 --retriever dense-... --json-out FILE

``train``: the first 200 JuDGE test cases by ``text_id`` train (as ``bench_judgment_structure.py train``), with the
citation signal trained on them (``judgment/citesignal.train_cite``: the index component ``--retriever`` as first
stage, similar cases by the same encoder, the set decision cross-fitted, ``--exclude-seen`` cases giving it no
rows) and the structure model's neighbours found by the same encoder. ``eval``: the other 301, with paired
randomization tests against ``--before`` (a prediction file of the previous model on the same cases).

``folds`` is a different protocol from the paper's: 5-fold cross-validation over all 501 cases (each case
predicted by models that never saw it, ~400 training cases per fold), once with the previous configuration
(BM25 citation signal and neighbours) and once with ``--retriever``'s encoder; it needs an encoder that learned
from none of the 501 (the untrained e5-small).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"


def build(labels_cases, statutes, data: Path, index=None, retriever=None, exclude=(), neighbours=True,
          select=True, cite_cases=None, lexical=None):
    """An untrained StructurePredictor: BM25 signal (``index`` None) or the encoder of ``index``'s ``retriever``.
    ``cite_cases``: the cases the citation signal learns from (default: all; cases with partial labels, such as
    CAIL's specific-only article lists, would teach its set decision that the general part is never cited)."""
    from legalrag.judgment.citesignal import build_cite, train_cite
    from legalrag.judgment.predict import StructurePredictor

    qrels = data / "data" / "qrels_file_train"
    if index is None:
        return StructurePredictor(labels_cases, statutes, cite=build_cite(statutes, train_citations=qrels),
                                  select=select)
    from bench_judgment_cite import facts_as_given

    first = facts_as_given(index, retriever)
    encoder = getattr(first, "encoder", None)  # None: a BM25 component (BM25 similar cases and neighbours)
    cite = train_cite(statutes, cite_cases if cite_cases is not None else labels_cases, train_citations=qrels, retriever=first, encoder=encoder,
                      exclude=exclude, progress=True)
    return StructurePredictor(labels_cases, statutes, cite=cite, encoder=encoder if neighbours else None,
                              select=select, lexical=lexical)


def cmd_train(args):
    from bench_judgment_cite import seen_by_encoder
    from bench_judgment_structure import load_data

    from legalrag.wiring import open_index

    facts, gold, train_ids, eval_ids, labels, statutes = load_data(args.data)
    index = open_index(args.index)
    exclude = seen_by_encoder(args.exclude_seen, args.train_queries) if args.exclude_seen else set()
    t0 = time.perf_counter()
    model = build(labels.cases, statutes, args.data, index, args.retriever, exclude,
                  neighbours=not args.bm25_neighbours, select=not args.no_select)
    model.skipped = list(labels.skipped)
    model.train(progress=True)
    secs = time.perf_counter() - t0
    spec = index.component_params(args.retriever).get("encoder")
    model.save(args.model_dir, {"trained_on": "JuDGE data/test.json, first 200 text_ids", "train_seconds": secs,
                                "encoder_spec": spec, "excluded_from_set_model": len(exclude),
                                "command": "python " + " ".join(sys.argv)}, case_texts=not args.no_case_texts)
    print(f"trained in {secs:.1f} s on {len(model.cases)} cases; thresholds {model.thresholds}; out-of-fold F1 "
          f"{model.cv_f1}; citation signal {model.cite.describe() if hasattr(model.cite, 'describe') else None}; "
          f"saved to {args.model_dir}")


def cmd_eval(args):
    from bench_judgment_structure import KEYS, TARGETS, load_data, paired_p, per_doc, predict_docs

    from legalrag.judgment.metrics import evaluate
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.wiring import make_encoder

    from legalrag.cli.judgment import structure_model_dir

    facts, gold, train_ids, eval_ids, labels, statutes = load_data(args.data)
    args.model_dir = structure_model_dir(args.model_dir)  # a directory or a shipped model's name
    man = json.loads((args.model_dir / "manifest.json").read_text(encoding="utf-8"))
    spec = args.encoder or man.get("encoder_spec")
    encoder = make_encoder(spec) if man.get("encoder") else None
    model = StructurePredictor.load(args.model_dir, statutes, encoder)
    t0 = time.perf_counter()
    docs, structs = predict_docs(model, facts, eval_ids)
    secs = (time.perf_counter() - t0) / len(eval_ids)
    g = {i: gold[i] for i in eval_ids}
    rep = evaluate(docs, g)
    s = rep.summary()
    out = {"protocol": "train on the first 200 cases by text_id, evaluate on the other 301", "machine": MACHINE,
           "command": "python " + " ".join(sys.argv), "after": {k: round(s[k], 4) for k in KEYS},
           "n": rep.n, "prison_n": rep.prison_n, "fine_n": rep.fine_n, "seconds_per_case": round(secs, 3),
           "targets": TARGETS}
    if args.before:
        recs = [json.loads(x) for x in args.before.read_text(encoding="utf-8").split("\n") if x.strip()]
        before = evaluate({r["id"]: r["document"] for r in recs}, g)
        b = before.summary()
        out["before"] = {k: round(b[k], 4) for k in KEYS}
        out["p"] = {k: round(v, 4) for k, v in paired_p(per_doc(before), per_doc(rep)).items()}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    if args.out:
        from legalrag.io import write_jsonl

        write_jsonl(args.out, [{"id": i, "document": docs[i], "structure": structs[i].to_dict()} for i in eval_ids])
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def cmd_folds(args):
    """5-fold cross-validation over all 501 cases, previous configuration and encoder configuration."""
    from bench_judgment_structure import KEYS, paired_p, per_doc, predict_docs

    from legalrag.judgment.io import load_judgments
    from legalrag.judgment.labels import label_cases, load_facts
    from legalrag.judgment.metrics import evaluate
    from legalrag.corpora.statutes import load_statutes
    from legalrag.wiring import open_index

    facts = load_facts(args.data / "data" / "test.json")
    gold = load_judgments(args.data / "expected.jsonl")
    statutes = load_statutes(args.data / "data" / "law_corpus.jsonl")
    ids = sorted(i for i in facts if i in gold)
    labels = {c.id: c for c in label_cases(facts, gold, ids).cases}
    index = open_index(args.index) if args.retriever else None
    fold = {cid: k % 5 for k, cid in enumerate(ids)}
    docs = {"before": {}, "after": {}}
    t0 = time.perf_counter()
    for f in range(5):
        train = [labels[i] for i in ids if fold[i] != f and i in labels]
        test = [i for i in ids if fold[i] == f]
        for name in ("before", "after"):
            if name == "after" and index is None:
                continue
            model = build(train, statutes, args.data, index if name == "after" else None, args.retriever,
                          select=not args.no_select)
            model.train(progress=False)
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
            reps[name] = evaluate(docs[name], g)
            out[name] = {k: round(reps[name].summary()[k], 4) for k in KEYS}
            print(name, out[name], flush=True)
    if len(reps) == 2:
        out["p"] = {k: round(v, 4) for k, v in paired_p(per_doc(reps["before"]), per_doc(reps["after"])).items()}
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["train", "eval", "folds"])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared"
                                                                     / "data")) / "judge")
    ap.add_argument("--index", type=Path, default=None)
    ap.add_argument("--retriever", default=None, help="the dense index component whose encoder gives the signal")
    ap.add_argument("--exclude-seen", type=Path, default=None)
    ap.add_argument("--train-queries", type=Path, default=REPO / "runs" / "judge-split" / "train.jsonl")
    ap.add_argument("--bm25-neighbours", action="store_true", help="train: the structure model's neighbours by BM25")
    ap.add_argument("--model-dir", type=Path, default=None)
    ap.add_argument("--encoder", default=None, help="eval: encoder spec (default: the one the manifest records)")
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--no-case-texts", action="store_true", help="train: save the labelled cases without their "
                    "facts (digests, circumstance keys and encoder vectors instead), as a shipped model is")
    ap.add_argument("--no-select", action="store_true", help="train/folds: no feature-group selection (faster)")
    args = ap.parse_args()
    {"train": cmd_train, "eval": cmd_eval, "folds": cmd_folds}[args.what](args)


if __name__ == "__main__":
    main()
