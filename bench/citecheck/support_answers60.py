"""The marks a reader sees on lawyers' answers: 60 answers of the STARD test part (frozen split), each written once
citing its gold article and once citing the best-ranked article the default index retrieved for the question that
is not gold, as a short opinion ("法律依据：《X》第N条。\\n结论：<the lawyer's answer>"), checked by ``check_text``
with the support model shipped now and with the two shipped before (``bench/data/support_model_before.json``):
precision and recall of ✓ (a ✓ on the gold citation is right, on the other wrong):

    LEGALRAG_DATA=... python bench/citecheck/support_answers60.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl \
        --split bench/data/stard-split.json --cache runs/support-cache.json --out bench/results/support-answers60.json

The opinions are written by this script (data we wrote) from the lawyers' answers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = {"section": "citations", "rows": [
    {"configuration": "60 lawyers' answers (test part), each citing its gold article and the best-ranked retrieved "
                      "non-gold one (opinions we wrote)",
     "result": "✓ precision {metrics[now][precision]:.2f}, recall {metrics[now][recall]:.2f}; before: full "
               "{metrics[before_full][precision]:.2f} / {metrics[before_full][recall]:.2f}, lexical "
               "{metrics[before_lexical][precision]:.2f} / {metrics[before_lexical][recall]:.2f}",
     "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}]}


class BeforeScorer:
    """The support model shipped before (whole-article features), as a scorer the marks take."""

    def __init__(self, path: Path, name: str, encoder):
        self.m = json.loads(path.read_text(encoding="utf-8"))["models"][name]
        self.threshold = self.m["threshold"]
        self.encoder = encoder if "cosine" in self.m["features"] else None

    def scores(self, pairs):
        from legalrag.citecheck.support import BigramIdf, SupportScorer, lexical_features
        from legalrag.training.recipes.support import prob

        idf = BigramIdf.load()
        rows = [lexical_features(c, a.text, idf) for c, a in pairs]
        if self.encoder is not None:
            cos = SupportScorer(self.encoder).features(pairs, cosine=True)
            for r, x in zip(rows, cos):
                r["cosine"] = x["cosine"]
        return [prob(self.m, r) for r in rows]


def opinion(cite: str, answer: str) -> str:
    return f"法律依据：{cite}。\n结论：{answer.strip()[:300]}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", default=str(ROOT / "bench" / "data" / "stard-split.json"))
    ap.add_argument("--cache", default=None, help="the support recipe's cache (each question's retrieved ids)")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--before", default=str(ROOT / "bench" / "data" / "support_model_before.json"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from legalrag.citecheck import CitationResolver
    from legalrag.citecheck.checker import check_text
    from legalrag.citecheck.chinese import ChineseCitation
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.record import write_result
    from legalrag.training.recipes.support import read_parts
    from legalrag.wiring import Root, make_encoder, make_support_scorer

    docs = load_statutes(args.corpus)
    by_id = {d.id: d for d in docs}
    resolver = CitationResolver.from_documents(docs)
    hits = json.loads(Path(args.cache).read_text(encoding="utf-8"))["hits"] if args.cache else {}
    pipeline = None

    def cite(d) -> str:
        a = str(d.metadata["article"])
        n, sub = (int(a.split("-")[0]), int(a.split("-")[1])) if "-" in a else (int(a), None)
        return ChineseCitation(d.metadata["law"], n, sub).canonical(brackets=True)

    cases = []
    for r in read_parts(Path(args.corpus).with_name("train.jsonl"), args.split)["test"]:
        if not isinstance(r.get("answer"), str) or not r["answer"].strip():
            continue
        gold = [by_id[str(g)] for g in r["gold_ids"] if str(g) in by_id and by_id[str(g)].metadata.get("article")]
        if str(r["query_id"]) not in hits:
            if pipeline is None:
                from legalrag.retrieval.pipeline import build_pipeline

                pipeline = build_pipeline(Root().index(snapshot=True))
            hits[str(r["query_id"])] = [h.id for h in pipeline.search(r["query"], k=10)]
        golds = {str(g) for g in r["gold_ids"]}
        other = next((by_id[h] for h in hits[str(r["query_id"])] if h not in golds and h in by_id
                      and by_id[h].metadata.get("article")), None)
        if not gold or other is None:
            continue
        cases.append((r["query_id"], opinion(cite(gold[0]), r["answer"]), opinion(cite(other), r["answer"])))
        if len(cases) >= args.n:
            break
    encoder = make_encoder("stard-e5", progress=False)
    scorers = {"now": make_support_scorer(), "now_lexical": make_support_scorer("lexical"),
               "before_full": BeforeScorer(Path(args.before), "full", encoder),
               "before_lexical": BeforeScorer(Path(args.before), "lexical", encoder)}
    metrics = {}
    for name, scorer in scorers.items():
        marks = {"gold": {}, "other": {}}
        right = wrong = 0
        for _, good, bad in cases:
            for side, text in (("gold", good), ("other", bad)):
                items = check_text(text, resolver, scorer).items
                mark = items[0].citation.mark if items else "none"
                marks[side][mark] = marks[side].get(mark, 0) + 1
                if mark == "supported":
                    right += side == "gold"
                    wrong += side == "other"
        metrics[name] = {"precision": round(right / (right + wrong), 4) if right + wrong else None,
                         "recall": round(right / len(cases), 4), "supported_gold": right, "supported_other": wrong,
                         "n": len(cases), "marks": marks}
        print(name, metrics[name], flush=True)
    write_result(args.out, metrics, name="Support marks on 60 lawyers' answers citing the gold or a retrieved "
                 "non-gold article", machine_note="shared with other jobs",
                 data=f"{len(cases)} answers of the STARD test part (frozen split), opinions written by this script "
                      "(data we wrote): each once with its gold article, once with the best-ranked non-gold article "
                      "the default index retrieved", page=PAGE)


if __name__ == "__main__":
    main()
