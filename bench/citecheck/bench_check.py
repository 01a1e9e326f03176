"""The citation checker on texts with known citation errors: catch rate per error kind, false alarms on correct
citations, and speed.

The texts are written by this script (data we wrote) from the STARD test part of the frozen split: for each
question with a lawyer's answer, a short opinion "法律依据：《X》第N条。\\n结论：<the lawyer's answer>" citing one
gold article (correct), and four corrupted copies:

- ``wrong_article``: the article number moved to another article of the same law that exists (N+1..N+5);
- ``repealed``: a 民法典 citation rewritten as the repealed law it replaced (合同法, 物权法, 婚姻法, ...) where the
  article falls in that law's book; other laws are skipped for this kind;
- ``invented``: an article number the law does not have (N + 3000) or a law that does not exist;
- ``wrong_claim``: the right article of another question cited for this answer (a real article, wrong claim).

Caught means: ``wrong_article`` / ``wrong_claim`` not marked supported; ``repealed`` marked repealed;
``invented`` marked not found. A false alarm is a correct citation not marked supported.

    python bench/citecheck/bench_check.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl --split runs/stard-split \
        --out bench/results/check-errors.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.checker import check_text
from legalrag.citecheck.chinese import ChineseCitation
from legalrag.evaluation.record import write_result

PAGE = {"section": "citations", "rows": [{"configuration": "legalrag check on texts with known errors (data we wrote from STARD test answers)", "result": "caught: wrong article {metrics[wrong_article][catch_rate]:.2f}, repealed {metrics[repealed][catch_rate]:.2f}, invented {metrics[invented][catch_rate]:.2f}, right article for the wrong claim {metrics[wrong_claim][catch_rate]:.2f}; correct citations not shown supported {metrics[correct][false_alarm_rate]:.2f}", "cost": "{metrics[speed][citations_per_s]:.0f} citations/s", "needs": "CPU", "anchor": "check.md"}]}  # the results page rows
# 民法典 article ranges of the books that replaced each repealed law (the book's articles; 总则 for 民法总则)
CIVIL_CODE_BOOKS = (("中华人民共和国民法总则", 1, 204), ("中华人民共和国物权法", 205, 462), ("中华人民共和国合同法", 463, 988),
                    ("中华人民共和国婚姻法", 1040, 1092), ("中华人民共和国收养法", 1093, 1118),
                    ("中华人民共和国继承法", 1119, 1163), ("中华人民共和国侵权责任法", 1164, 1258))


def opinion(cite: str, answer: str) -> str:
    return f"法律依据：{cite}。\n结论：{answer.strip()[:300]}\n"


def command() -> str:
    """This run's command line, with the data folder written as $LEGALRAG_DATA."""
    from legalrag.evaluation.record import command as this_command

    return this_command()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--part", default="test")
    ap.add_argument("--support", default="full", choices=("full", "lexical"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--document-only", action="store_true",
                    help="time only the 100-page document (run with LEGALRAG_HOME set to an empty folder for a cold "
                         "vector cache)")
    args = ap.parse_args()
    from legalrag.corpora.statutes import load_statutes
    from legalrag.wiring import make_support_scorer

    docs = load_statutes(args.corpus)
    by_id = {d.id: d for d in docs}
    resolver = CitationResolver.from_documents(docs)
    scorer = make_support_scorer("stard-e5" if args.support == "full" else None)
    rows = [json.loads(l) for l in open(Path(args.split) / f"{args.part}.jsonl", encoding="utf-8")]
    rows = [r for r in rows if isinstance(r.get("answer"), str) and r["answer"].strip()]
    rng = random.Random(13)
    cases = []  # (kind, text, question_id)
    golds = []
    for r in rows:
        gold = [by_id[str(g)] for g in r["gold_ids"] if str(g) in by_id and by_id[str(g)].metadata.get("article")]
        gold = [d for d in gold if "-" not in str(d.metadata["article"])]
        if gold:
            golds.append((r, gold[0]))
    for i, (r, doc) in enumerate(golds):
        law, art = doc.metadata["law"], int(doc.metadata["article"])
        cite = lambda l, a: ChineseCitation(l, a).canonical(brackets=True)
        cases.append(("correct", opinion(cite(law, art), r["answer"]), r["query_id"]))
        near = [a for a in range(art + 1, art + 6) if resolver.resolve(ChineseCitation(law, a)) is not None]
        if near:
            cases.append(("wrong_article", opinion(cite(law, rng.choice(near)), r["answer"]), r["query_id"]))
        if law == "中华人民共和国民法典":
            book = next((b for b in CIVIL_CODE_BOOKS if b[1] <= art <= b[2]), None)
            if book:
                cases.append(("repealed", opinion(cite(book[0], art), r["answer"]), r["query_id"]))
        invented = cite(law, art + 3000) if i % 2 == 0 else cite("中华人民共和国民事赔偿保障法", art)
        cases.append(("invented", opinion(invented, r["answer"]), r["query_id"]))
        other = golds[(i + len(golds) // 2) % len(golds)][1]
        if other.metadata["law"] != law or other.metadata["article"] != doc.metadata["article"]:
            cases.append(("wrong_claim", opinion(cite(other.metadata["law"], int(other.metadata["article"])),
                                                 r["answer"]), r["query_id"]))
    expected = {"correct": "supported", "repealed": "repealed", "invented": "not_found"}
    results: dict[str, dict] = {}
    n_cits, t0 = 0, time.perf_counter()
    for kind, text, _ in ([] if args.document_only else cases):
        report = check_text(text, resolver, scorer)
        marks = [i.citation.mark for i in report.items]
        n_cits += len(marks)
        mark = marks[0] if marks else "none"
        if kind == "correct":
            ok = mark == "supported"
        elif kind in expected:
            ok = mark == expected[kind]
        else:
            ok = mark != "supported"
        res = results.setdefault(kind, {"n": 0, "ok": 0, "marks": {}})
        res["n"] += 1
        res["ok"] += ok
        res["marks"][mark] = res["marks"].get(mark, 0) + 1
    seconds = max(time.perf_counter() - t0, 1e-9)
    metrics = {k: {"n": v["n"], ("false_alarm_rate" if k == "correct" else "catch_rate"):
                   round(1 - v["ok"] / v["n"], 4) if k == "correct" else round(v["ok"] / v["n"], 4),
                   "marks": v["marks"]} for k, v in results.items()}
    # a 100-page document: the opinions one after another until ~50,000 characters (500 a page)
    doc_text, k = "", 0
    while len(doc_text) < 50_000:
        doc_text += cases[k % len(cases)][1] + "\n"
        k += 1
    t1 = time.perf_counter()
    big = check_text(doc_text, resolver, scorer)
    big_s = time.perf_counter() - t1
    if args.document_only:
        out = {"name": "Citation checker: a 100-page document (50,000 characters), cold vector cache",
               "command": "LEGALRAG_HOME=$(mktemp -d) " + command(), "machine_note": "shared with other jobs",
               "data": "the opinions bench/citecheck/bench_check.py writes (data we wrote), "
               "one after another", "metrics": {"characters": len(doc_text), "citations": len(big.items),
                                               "seconds": round(big_s, 2),
                                               "citations_per_s": round(len(big.items) / big_s, 2),
                                               "support_model": args.support}}
        write_result(args.out, **out)
        print(json.dumps(out["metrics"]))
        return
    out = {"name": f"Citation checker: catch rate per error kind and false alarms ({args.support} support model)",
           "command": command(), "machine_note": "shared with other jobs", "data": f"texts written by bench/citecheck/bench_check.py (data we wrote) from the {len(golds)} STARD {args.part}-part "
                   "questions (frozen split) with a lawyer's answer and a gold article; corpus: the 55,515-article "
                   "STARD corpus",
           "metrics": {**metrics, "speed": {"citations": n_cits, "seconds": round(seconds, 2),
                                            "citations_per_s": round(n_cits / seconds, 2),
                                            "hundred_page_document": {"vector_cache": "warm: the same opinions "
                                                                      "were checked just before",
                                                                      "characters": len(doc_text),
                                                                      "citations": len(big.items),
                                                                      "seconds": round(big_s, 2)}}}}
    out["page"] = PAGE
    write_result(args.out, **out)
    print(json.dumps(out["metrics"], ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
