"""The charge catalogue, the circumstance extractor and the judgments built on them, on JuDGE.

    python bench/judgment/bench_judgment_catalogue.py catalogue
    python bench/judgment/bench_judgment_catalogue.py circumstances [--data $LEGALRAG_DATA/judge]
    python bench/judgment/bench_judgment_catalogue.py structure [--model-dir judge-structure]
    python bench/judgment/bench_judgment_catalogue.py law-search
    python bench/judgment/bench_judgment_catalogue.py law [--cail $LEGALRAG_DATA/cail2018 --limit N] [--save DIR]
    python bench/judgment/bench_judgment_catalogue.py law-combined [--cail $LEGALRAG_DATA/cail2018] [--save DIR]

``catalogue`` counts the charge table built from the charge-name rules. ``circumstances`` measures the
extractor (``judgment/circumstances.py``) per circumstance against what the gold judgment's reasoning finds
(``stated_in_reasoning``: the circumstance stated and not denied, or its provision cited): its rules were written
looking at the first 200 cases by text_id (the structure model's training cases); the figures are on the
other 301, whose errors were not looked at (only the aggregate figures). ``structure`` predicts the 301 with the shipped structure model and scores
the drafts (template reasoning) before (no circumstance extractor: the citing clause of the predicted articles)
and after (the extractor's circumstances: their provisions cited with the paragraph they decide), with paired
tests, and the precision of the circumstances the drafts state. ``law-search`` times the free drafter's law search
over the shipped national law. ``law`` compares the shipped model with its charge model refitted on the
catalogue's law-text candidates: candidate recall, JuDGE 301 (paired tests) and the CAIL hold-out, each split into
charges the training labels carry (seen) or not (unseen).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_DATA", REPO.parent / "shared" / "data"))
RESULTS = REPO / "bench" / "results"
SOURCE = "docs/lab/judgment-catalogue.md"


def _judge(data: Path):
    rows = [json.loads(x) for x in (data / "data" / "test.json").read_text(encoding="utf-8").splitlines() if x.strip()]
    rows.sort(key=lambda r: r["text_id"])
    return rows[:200], rows[200:]


def _pr(found: dict, gold: dict, names) -> dict:
    out = {}
    for n in names:
        tp = sum(1 for i in gold if n in found[i] and n in gold[i])
        fp = sum(1 for i in gold if n in found[i] and n not in gold[i])
        fn = sum(1 for i in gold if n not in found[i] and n in gold[i])
        out[n] = {"precision": round(tp / (tp + fp), 4) if tp + fp else None,
                  "recall": round(tp / (tp + fn), 4) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn,
                  "gold": tp + fn}
    tp = sum(v["tp"] for v in out.values())
    fp = sum(v["fp"] for v in out.values())
    fn = sum(v["fn"] for v in out.values())
    out["all"] = {"precision": round(tp / (tp + fp), 4) if tp + fp else None,
                  "recall": round(tp / (tp + fn), 4) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn}
    return out


def cmd_catalogue(args) -> None:
    from legalrag.evaluation.record import write_result
    from legalrag.judgment.charges import EXPECTED_COUNT, build_catalogue, load_catalogue

    built = build_catalogue(args.data.parent / "laws-2025" / "司法解释")
    shipped = load_catalogue()
    sources = Counter(c.source for c in shipped)
    print(f"{len(built)} charges built, {len(shipped)} shipped; by rule: {dict(sources)}")
    write_result(RESULTS / "judge-charge-catalogue.json", {"charges": len(shipped), "expected": EXPECTED_COUNT,
                 "built_equals_shipped": [c.name for c in built] == [c.name for c in shipped],
                 "with_former_names": sum(1 for c in shipped if c.former),
                 "without_article": [c.name for c in shipped if not c.refs], "by_rule": dict(sources)},
                 name="The charge catalogue built from the charge-name rules (1997 list, 补充规定 to （八）)",
                 data="laws-2025/司法解释 (the charge-name rules) and laws-2025/刑法", source=SOURCE + "#figures")


def cmd_circumstances(args) -> None:
    from legalrag.evaluation.record import write_result
    from legalrag.judgment.circumstances import NAMES, find_circumstances, stated_in_reasoning
    from legalrag.judgment.sections import split_sections

    seen, held = _judge(args.data)
    out = {}
    for label, rows in (("written_on_first_200", seen), ("held_out_301", held)):
        gold = {r["text_id"]: stated_in_reasoning(split_sections(r["fd"]).reasoning) for r in rows}
        found = {r["text_id"]: {c.name for c in find_circumstances(r["text"])} for r in rows}
        out[label] = _pr(found, gold, NAMES)
        print(label, json.dumps(out[label]["all"]))
        for n in NAMES:
            print(f"  {n}: {out[label][n]}")
    write_result(RESULTS / "judge-circumstances.json", out,
                 name="Circumstance extractor per circumstance on JuDGE (rules written on the first 200 cases by "
                      "text_id; figures on the other 301, not looked at)",
                 data="JuDGE data/test.json (501 cases): facts (text) against the gold judgment's reasoning (fd)",
                 note="gold: stated_in_reasoning (the circumstance stated in 本院认为 and not denied there, or its "
                      "provision cited: 第六十七条第一款 自首, 第三款 坦白, 第六十五条 累犯, 第六十八条 立功, "
                      "第二十七条 从犯, 第二十三条 未遂); one set per case, not per defendant",
                 source=SOURCE + "#figures",
                 page={"section": "judgment", "order": 20, "rows": [{
                     "configuration": "circumstance extractor (自首, 坦白, 立功, 累犯, 从犯, 未遂, 认罪认罚), JuDGE 301 held out",
                     "result": "precision {metrics[held_out_301][all][precision]:.3f}, recall "
                               "{metrics[held_out_301][all][recall]:.3f} (自首 {metrics[held_out_301][自首][precision]:.2f} / "
                               "{metrics[held_out_301][自首][recall]:.2f}, 坦白 {metrics[held_out_301][坦白][precision]:.2f} / "
                               "{metrics[held_out_301][坦白][recall]:.2f})",
                     "cost": "rules, milliseconds", "needs": "CPU", "anchor": "gold: the court's reasoning"}]})


def cmd_structure(args) -> None:
    import legalrag.judgment.compose as compose
    from legalrag.evaluation.record import paired_tests, write_result
    from legalrag.judgment.circumstances import NAMES, stated_in_reasoning
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.sections import split_sections
    from legalrag.shipped import model_dir
    from legalrag.training.recipes import load_judge
    from legalrag.wiring import make_encoder

    judge = load_judge(args.data)
    facts, gold, eval_ids, statutes = judge.facts, judge.gold, judge.eval_ids, judge.statutes
    path = model_dir(args.model_dir, "judgment-model")
    man = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    encoder = make_encoder(man.get("encoder_spec")) if man.get("encoder") else None
    model = StructurePredictor.load(path, statutes, encoder)
    ids = eval_ids[: args.n] if args.n else eval_ids
    t0 = time.perf_counter()
    structs = {i: model.predict(facts[i], i) for i in ids}
    secs = (time.perf_counter() - t0) / len(ids)
    docs = {"before": {}, "after": {}, "after_add_articles": {}}
    for i, s in structs.items():
        docs["after"][i] = compose.compose_document(facts[i], compose.template_reasoning(s), s)
        bare = replace(s, circumstances=())
        docs["before"][i] = compose.compose_document(facts[i], compose.template_reasoning(bare), bare)
    compose.CITE_CIRCUMSTANCE_ARTICLES = True  # the variant that cites every found circumstance's provision
    for i, s in structs.items():
        docs["after_add_articles"][i] = compose.compose_document(facts[i], compose.template_reasoning(s), s)
    compose.CITE_CIRCUMSTANCE_ARTICLES = False
    g = {i: gold[i] for i in ids}
    reps = {k: evaluate_judgments(v, g) for k, v in docs.items()}

    def rows(rep):
        def f1(p, r):
            return 2 * p * r / (p + r) if p + r else 0.0
        return {d.id: {"prison": d.prison, "fine": d.fine, "charge_f1": f1(d.charge_precision, d.charge_recall),
                       "article_f1": f1(d.article_precision, d.article_recall)} for d in rep.documents}

    keys = ("prison", "fine", "charge_f1", "article_f1")
    tests = {"after_vs_before": paired_tests(rows(reps["before"]), rows(reps["after"]), keys),
             "after_add_articles_vs_before": paired_tests(rows(reps["before"]), rows(reps["after_add_articles"]),
                                                          keys)}
    summary = {k: {m: round(reps[k].summary()[m], 4) for m in keys} for k in reps}
    # the circumstances the drafts state, against the gold reasoning's
    gold_c = {i: stated_in_reasoning(split_sections(gold[i]).reasoning) for i in ids}
    stated = {i: {n for n in NAMES if n in set(structs[i].circumstance_names)} for i in ids}
    tp = sum(len(stated[i] & gold_c[i]) for i in ids)
    n_stated = sum(len(stated[i]) for i in ids)
    by = {n: {"stated": sum(n in stated[i] for i in ids), "correct": sum(n in stated[i] and n in gold_c[i] for i in ids)}
          for n in NAMES}
    found_c = {i: {c.name for c in structs[i].circumstances} for i in ids}
    out = {"before": summary["before"], "after": summary["after"], "after_add_articles": summary["after_add_articles"],
           "n": len(ids), "seconds_per_case": round(secs, 3),
           "extractor_found": {"found": sum(map(len, found_c.values())),
                               "correct": sum(len(found_c[i] & gold_c[i]) for i in ids)},
           "draft_stated_circumstances": {"stated": n_stated, "correct": tp,
                                          "precision": round(tp / n_stated, 4) if n_stated else None, "by": by}}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    print(json.dumps(tests, ensure_ascii=False))
    write_result(RESULTS / "judge-structure-circumstances.json", out, paired=tests,
                 name="JuDGE 301: the shipped structure model's drafts before and after the circumstance extractor "
                      "(its provisions cited with their paragraph), and the precision of the circumstances they state",
                 data="JuDGE data/test.json: trained on the first 200 by text_id, evaluated on the other 301",
                 protocol="train on the first 200 cases by text_id, evaluate on the other 301", source=SOURCE + "#figures")


def _charge_scores(pairs, seen: set[str]) -> dict:
    """Charge micro and macro F1 over (gold charges, predicted charges) pairs, all and split by gold charges the
    training labels carry (seen) or not (unseen): a part's micro F1 counts its gold charges' hits and misses and
    the predictions of its charges."""
    tp, fp, fn = Counter(), Counter(), Counter()
    for gold, pred in pairs:
        for ch in set(gold) | set(pred):
            tp[ch] += ch in pred and ch in gold
            fp[ch] += ch in pred and ch not in gold
            fn[ch] += ch in gold and ch not in pred

    def f1(t, p, n):
        return 2 * t / (2 * t + p + n) if t else 0.0

    out = {}
    gold_labels = {ch for g, _ in pairs for ch in g}
    for part, keep in (("all", lambda c: True), ("seen", lambda c: c in seen), ("unseen", lambda c: c not in seen)):
        labels = [c for c in gold_labels if keep(c)]
        pred_labels = [c for c in set(tp) | set(fp) if keep(c)]
        t = sum(tp[c] for c in pred_labels)
        out[part] = {"gold_charges": len(labels), "gold": sum(tp[c] + fn[c] for c in labels),
                     "micro_f1": round(f1(t, sum(fp[c] for c in pred_labels), sum(fn[c] for c in labels)), 4),
                     "macro_f1": round(sum(f1(tp[c], fp[c], fn[c]) for c in labels) / len(labels), 4) if labels else None}
    return out


def cmd_law(args) -> None:
    """The learned charge model over the catalogue: the shipped model (before) against the same model with its
    charge model refitted on the law-text candidates (after), on JuDGE 301 and the CAIL hold-out."""
    from legalrag.evaluation.record import paired_tests, write_result
    from legalrag.judgment.compose import compose_document, template_reasoning
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.law_candidates import LawCandidates, recall
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.shipped import model_dir
    from legalrag.training.recipes import load_cail_split, load_judge
    from legalrag.wiring import make_encoder

    judge = load_judge(args.data)
    path = model_dir(args.model_dir, "judgment-model")
    man = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    encoder = make_encoder(man.get("encoder_spec")) if man.get("encoder") else None
    model = StructurePredictor.load(path, judge.statutes, encoder)
    seen = set(model.charge_counts)
    labels = {c.id: c for c in label_cases(judge.facts, judge.gold, judge.eval_ids).cases}
    ids = [i for i in judge.eval_ids if i in labels][: args.n or None]
    cail = []
    if args.cail:
        cail = load_cail_split(args.cail, REPO / "bench" / "data" / "cail-split.json", judge).holdout
        cail = sorted(cail, key=lambda c: c.id)[: args.limit or None]
    last: list = [[]]
    original = model._charge_candidates

    def recording(ctx):
        c = original(ctx)
        last[0] = list(c)
        return c

    model._charge_candidates = recording

    def run(tag):
        t0 = time.perf_counter()
        docs, cands, preds = {}, {"judge": {}, "cail": {}}, {"judge": {}, "cail": {}}
        for i in ids:
            s = model.predict(judge.facts[i], i)
            docs[i] = compose_document(judge.facts[i], template_reasoning(s), s)
            cands["judge"][i], preds["judge"][i] = last[0], [c.name for c in s.charges if c.listed]
        for c in cail:
            try:
                s = model.predict(c.facts)
            except Exception as exc:  # a refusal is a prediction of no charge
                print("refused", c.id, str(exc)[:80])
                cands["cail"][c.id], preds["cail"][c.id] = [], []
                continue
            cands["cail"][c.id], preds["cail"][c.id] = last[0], [x.name for x in s.charges if x.listed]
        print(tag, f"{time.perf_counter() - t0:.0f} s", flush=True)
        return docs, cands, preds

    combined = args.what == "law-combined"
    manager = []
    if combined:  # the showcase facts of bench/laws/bench_in_force.py (our own written case: never tuned on)
        sys.path.insert(0, str(REPO / "bench" / "laws"))
        from bench_in_force import MANAGER

        manager = [MANAGER.format(when=w) for w in ("2023年5月至2023年11月", "2024年4月至2024年10月")]
    showcase = {"before": [[c.name for c in model.predict(f).charges] for f in manager]}
    before = run("before")
    t0 = time.perf_counter()
    if combined:
        model.add_law_model(LawCandidates(encoder, known=seen), judge.facts, progress=False)
    else:
        model.retrain_charges(LawCandidates(encoder, known=seen), judge.facts, progress=False)
    retrain_s = time.perf_counter() - t0
    showcase["after"] = [[c.name for c in model.predict(f).charges] for f in manager]
    model._charge_candidates = recording
    original = type(model)._charge_candidates.__get__(model)
    after = run("after")
    g = {i: judge.gold[i] for i in ids}
    reps = {"before": evaluate_judgments(before[0], g), "after": evaluate_judgments(after[0], g)}

    def rows(rep):
        def f1(p, r):
            return 2 * p * r / (p + r) if p + r else 0.0
        return {d.id: {"prison": d.prison, "fine": d.fine, "charge_f1": f1(d.charge_precision, d.charge_recall),
                       "article_f1": f1(d.article_precision, d.article_recall)} for d in rep.documents}

    keys = ("prison", "fine", "charge_f1", "article_f1")
    gold_j = {i: list(labels[i].charges) for i in ids}
    gold_c = {c.id: list(c.charges) for c in cail}
    out = {"n_judge": len(ids), "n_cail": len(cail), "seen_charges": len(seen), "retrain_seconds": round(retrain_s, 1),
           "cv_f1_charge_after": round(model.cv_f1["charge_law" if combined else "charge"], 4),
           "threshold_charge_after": model.thresholds["charge_law" if combined else "charge"],
           **({"combination": {k: model.thresholds[k] for k in ("charge_law_gate", "charge_law_margin",
                                                                "charge_law_add")},
               "showcase_manager_165": showcase} if combined else {}),
           "judge_301": {k: {m: round(reps[k].summary()[m], 4) for m in keys} for k in reps},
           "candidate_recall": {
               "judge_301": {"before": recall(before[1]["judge"], gold_j, seen),
                             "after": recall(after[1]["judge"], gold_j, seen)},
               "cail_holdout": {"before": recall(before[1]["cail"], gold_c, seen),
                                "after": recall(after[1]["cail"], gold_c, seen)} if cail else None},
           "judge_301_charges": {k: _charge_scores([(gold_j[i], r[2]["judge"][i]) for i in ids], seen)
                                 for k, r in (("before", before), ("after", after))},
           "cail_holdout_charges": {k: _charge_scores([(gold_c[c.id], r[2]["cail"][c.id]) for c in cail], seen)
                                    for k, r in (("before", before), ("after", after))} if cail else None}
    tests = paired_tests(rows(reps["before"]), rows(reps["after"]), keys)
    print(json.dumps(out, ensure_ascii=False, indent=1))
    print(json.dumps(tests, ensure_ascii=False))
    result = write_result(RESULTS / ("judge-structure-law-combined.json" if combined
                                     else "judge-structure-law-candidates.json"), out, paired=tests,
                 name="The structure model deciding over the charge catalogue: the shipped model against " + (
                      "the combined decision (the shipped charge model for seen charges, a law-text charge model for "
                      "the unseen ones)" if combined else "its charge model refitted with the law-text candidates")
                      + " (judge-e5 over the 483 charges' articles)",
                 data="JuDGE data/test.json (the 301 evaluation cases"
                      + (f", first {len(ids)} by text_id" if args.n else "") + "); CAIL2018 hold-out of "
                      f"bench/data/cail-split.json ({len(cail)} cases, the first by id)",
                 protocol="the charge model refitted on JuDGE's first 200 cases only, as shipped; nothing tuned on the "
                          "evaluation cases", source=SOURCE + "#figures")
    if args.save:
        try:
            model.save(args.save, {"trained_on": man.get("trained_on"), "command": result["command"]},
                       case_texts=False)
        except Exception as exc:  # the figures are written; a model that cannot be saved is reported
            print(f"could not save the refitted model: {exc}")


THEFT = ("公诉机关指控：2023年5月1日，被告人张某在某超市窃取洗发水等商品，价值人民币800元，后被民警抓获。"
         "案发后如实供述。")


def cmd_law_search(args) -> None:
    """The free drafter's law search over the shipped national law (55,515 articles): the Criminal Law alone,
    the charges' own articles and the circumstances' provisions first; first call (building the Criminal Law's
    bigram index) and warm calls, on the theft facts of the drafting page."""
    from legalrag.evaluation.record import write_result
    from legalrag.judgment.draft import JudgmentDrafter
    from legalrag.testing import ScriptedLLM
    from legalrag.wiring import Root

    t0 = time.perf_counter()
    docs = list(Root().index(snapshot=True).documents)
    open_s = time.perf_counter() - t0
    drafter = JudgmentDrafter(ScriptedLLM(["x"]), docs)
    t0 = time.perf_counter()
    hits = drafter.retrieve_laws(THEFT)
    first = time.perf_counter() - t0
    warm = []
    for _ in range(5):
        t0 = time.perf_counter()
        drafter.retrieve_laws(THEFT)
        warm.append(time.perf_counter() - t0)
    out = {"documents": len(docs), "open_index_s": round(open_s, 2), "first_search_s": round(first, 3),
           "warm_search_s": round(sorted(warm)[len(warm) // 2], 3),
           "hits": [{"rank": h.rank, "title": h.document.title, "stage": h.retriever} for h in hits]}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    write_result(RESULTS / "judge-draft-law-search.json", out,
                 name="The free drafter's law search on the drafting page's theft facts (shipped national law)",
                 data="the shipped national law (src/legalrag/data/cn-law)", facts=THEFT, source=SOURCE + "#figures")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["catalogue", "circumstances", "structure", "law", "law-combined", "law-search"])
    ap.add_argument("--save", type=Path, default=None, help="law: write the refitted model here")
    ap.add_argument("--cail", type=Path, default=None, help="law: the CAIL2018 folder (its hold-out too)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA / "judge")
    ap.add_argument("--model-dir", default="judge-structure")
    ap.add_argument("--n", type=int, default=0)
    args = ap.parse_args()
    {"catalogue": cmd_catalogue, "circumstances": cmd_circumstances, "structure": cmd_structure,
     "law": cmd_law, "law-combined": cmd_law,
     "law-search": cmd_law_search}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
