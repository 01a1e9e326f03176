"""Per-form citation resolution: every usual way of citing Chinese law, in Chinese and in English.

Reads the citation-forms set (``bench/data/citation-forms.jsonl``, data written here by
``bench/citecheck/make_forms_set.py``: our sentence frames around real articles of the shipped national corpus)
and resolves every sentence's citations against the shipped corpus with ``CitationResolver`` (the resolver
``legalrag check`` uses). For a form whose citations name an article:

- ``resolved``: the share of gold citations found in the sentence and resolved to their gold document, with the
  paragraph (款) and item (项) as cited;
- ``wrong``: citations resolved to another document, or to another paragraph or item (target 0);
- ``missed``: gold citations not found or not resolved; ``extra``: citations read that the sentence does not make.

For a form whose right outcome is a reason (a paragraph the article lacks, a local regulation, a title that fits
several laws, an unknown English title, another jurisdiction's law), ``correct`` is the share of sentences whose
one citation gets that reason, and ``mark`` the marks ``check`` gives them. Targets: each form resolved >= 0.95,
wrong = 0.

    python bench/citecheck/bench_forms.py --out bench/results/citations-forms.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path

from legalrag.citecheck.english import EnglishTitles
from legalrag.citecheck.marks import mark_citations
from legalrag.citecheck.resolve import CitationResolver
from legalrag.corpora.statutes import statute_document, split_article_name
from legalrag.evaluation.record import write_result
from legalrag.national import national_law

PAGE = {"section": "citations", "rows": [{
    "configuration": "citation resolution per form, Chinese and English (data we wrote: {metrics[n_sentences]} "
                     "sentences around real corpus articles)",
    "result": "worst form resolved {metrics[worst_resolved]:.2f} ({metrics[worst_form]}); {metrics[wrong]} resolved to "
              "the wrong article; reasons right {metrics[reasons_correct]:.2f}; English title table: "
              "{metrics[english_titles]} laws",
    "cost": "{metrics[ms_per_sentence]:.2f} ms a sentence", "needs": "CPU", "anchor": "check.md"}]}


NOTE = ("Both sets were written by the people who wrote the parser, and the framed set and the first 70 hand-written "
        "sentences were used while fixing it, so they are not held out. The 29 sentences under 'hand-written, after "
        "the parser was fixed' were written after those fixes and run once before any further change: English 26 of "
        "29 citations resolved (0.897), 0 to a wrong article; of the 3 misses one was a parser miss ('Food Safety Law "
        "the State', a title followed by a capitalised word, fixed since), one a gold error of ours (the 政府信息公开条例's "
        "article 21 has no items: the resolver's 'no items' was right; the row is now scored as that reason) and one a "
        "sentence of ours citing an article that does not exist (dropped). The 20 sentences under 'hand-written, loose "
        "styles' (lowercase 'article', 'para 2', a note in brackets after the title) were then written and run once: "
        "18 of 22 citations resolved (0.818), 0 to a wrong article; the 4 misses were fixed in the parser after that "
        "run, and one gold of ours was wrong ('Article 39 para 2 of the Labor Contract Law': article 39 has one "
        "paragraph, so 'no paragraph 2' is right; the row is now scored as that reason). stard_train_answers is real text (lawyers' "
        "answers of the STARD train part) with no per-citation gold: the share of their citations that resolve and "
        "why the others do not.")


class _Fixed:
    """A scorer that is never consulted for unresolved citations; marks of the reason forms need no model."""

    threshold = 0.5

    def scores(self, pairs):
        return [1.0] * len(pairs)


def _resolver() -> CitationResolver:
    law = national_law()
    return CitationResolver.from_documents(statute_document(str(r["id"]), r["content"], r["name"])
                                           for _, r in law.records())


def _stard_coverage(titles: EnglishTitles) -> dict | None:
    """The share of the STARD train part's gold citations whose law the English title table covers."""
    root = os.environ.get("LEGALRAG_DATA")
    path = Path(root) / "stard" / "train.jsonl" if root else None
    if path is None or not path.is_file():
        return None
    covered = {t for ts in titles.keys.values() for t in ts}
    n = hit = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        for name in json.loads(line)["gold_names"]:
            n += 1
            hit += split_article_name(name)[0] in covered
    return {"gold_citations": n, "covered": round(hit / n, 4) if n else 0.0}


def _stard_answers(resolver: CitationResolver) -> dict | None:
    """How the citations in the STARD train part's lawyers' answers (real text, no per-citation gold) resolve:
    the share resolved, and why the others do not."""
    root = os.environ.get("LEGALRAG_DATA")
    path = Path(root) / "stard" / "train.jsonl" if root else None
    if path is None or not path.is_file():
        return None
    from legalrag.citecheck.repealed import RepealedTable

    repealed = RepealedTable.load()
    why: collections.Counter = collections.Counter()
    gold_hit = gold_n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not isinstance(row.get("answer"), str):
            continue
        found = {r.document.id for r in (resolver.lookup(m.citation) for m in resolver.extract(row["answer"]))
                 if r.ok}
        for m in resolver.extract(row["answer"]):
            r = resolver.lookup(m.citation)
            if r.ok:
                why["resolved"] += 1
            elif r.citation.law and repealed.lookup(r.citation.law) is not None:
                why["repealed law"] += 1
            else:
                why[r.reason.value] += 1
        gold_n += len(row["gold_ids"])
        gold_hit += sum(str(g) in found for g in row["gold_ids"])
    n = sum(why.values())
    return {"citations": n, "resolved": round(why["resolved"] / n, 4), "outcomes": dict(why.most_common()),
            "gold_articles_cited_and_resolved": round(gold_hit / gold_n, 4)}


def _by_name(row: dict, resolver: CitationResolver) -> dict:
    """A hand-written row's gold names (``劳动合同法第四十条``) as the corpus documents they name."""
    from legalrag.citecheck.chinese import ChineseCitation

    gold = []
    for g in row["gold"]:
        if "reason" in g:
            gold.append(g)
            continue
        law, article, _ = split_article_name(g["name"])
        base, _, sub = article.partition("-")
        doc = resolver.resolve(ChineseCitation(law, int(base), int(sub) if sub else None))
        if doc is None:
            raise SystemExit(f"gold article {g['name']!r} of {row['text']!r} is not in the corpus")
        gold.append({"doc_id": doc.id, "paragraph": g["paragraph"], "item": g["item"]})
    return {**row, "gold": gold}


def measure(rows: list[dict], resolver: CitationResolver) -> dict:
    per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    marks: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures: dict[str, list[str]] = collections.defaultdict(list)
    t0 = time.perf_counter()
    for row in rows:
        form, gold = row["form"], row["gold"]
        found = resolver.extract(row["text"])
        res = [resolver.lookup(m.citation) for m in found]
        c = per[form]
        if "reason" in gold[0]:
            c["n"] += 1
            ok = len(res) == 1 and res[0].reason is not None and res[0].reason.value == gold[0]["reason"]
            if ok and "paragraphs" in gold[0]:  # the message gives the article's real paragraphs
                ok = f"has {gold[0]['paragraphs']} paragraph" in res[0].message
            if ok and "items" in gold[0]:
                ok = (f"has {gold[0]['items']} item" if gold[0]["items"] else "has no items") in res[0].message
            c["correct"] += ok
            if not ok and len(failures[form]) < 3:
                failures[form].append(f"{row['text']!r}: {[r.message for r in res]}")
            for cit in mark_citations(row["text"], resolver, _Fixed()):
                marks[form][cit.mark] += 1
            continue
        c["n"] += len(gold)
        c["extra"] += max(0, len(res) - len(gold))
        for g, r in zip(gold, res + [None] * max(0, len(gold) - len(res))):
            if r is None or not r.ok:
                c["missed"] += 1
                if len(failures[form]) < 3:
                    failures[form].append(f"{row['text']!r}: {r.message if r else 'not read'}")
                continue
            same = (r.document.id == g["doc_id"] and getattr(r.citation, "paragraph", None) == g["paragraph"]
                    and getattr(r.citation, "item", None) == g["item"])
            c["resolved" if same else "wrong"] += 1
            if not same and len(failures[form]) < 3:
                failures[form].append(f"{row['text']!r}: {r.message}")
    seconds = time.perf_counter() - t0
    forms = {}
    for form, c in per.items():
        if "correct" in c or form.endswith(("lacks", "(no corpus)", "several laws", "table lacks")):
            forms[form] = {"sentences": c["n"], "correct": round(c["correct"] / c["n"], 4),
                           "marks": dict(marks[form])}
        else:
            forms[form] = {"citations": c["n"], "resolved": round(c["resolved"] / c["n"], 4), "wrong": c["wrong"],
                           "missed": c["missed"], "extra": c["extra"]}
        if failures[form]:
            forms[form]["examples_failed"] = failures[form]
    resolving = {f: v for f, v in forms.items() if "resolved" in v}
    reasons = [v for v in forms.values() if "correct" in v]
    worst = min(resolving, key=lambda f: resolving[f]["resolved"])
    return {
        "forms": forms, "n_sentences": len(rows), "worst_form": worst, "worst_resolved": resolving[worst]["resolved"],
        "wrong": sum(v["wrong"] for v in resolving.values()),
        "all_forms_at_target": all(v["resolved"] >= 0.95 and v["wrong"] == 0 for v in resolving.values()),
        "reasons_correct": round(sum(v["correct"] * v["sentences"] for v in reasons) / sum(v["sentences"] for v in reasons), 4),
        "ms_per_sentence": round(1000 * seconds / len(rows), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="bench/data/citation-forms.jsonl")
    ap.add_argument("--hand", default="bench/data/citation-forms-hand.jsonl",
                    help="sentences written one by one here, gold given by article name")
    ap.add_argument("--out", default="bench/results/citations-forms.json")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()]
    resolver = _resolver()
    hand = [json.loads(line) for line in Path(args.hand).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows += [_by_name(r, resolver) for r in hand]
    metrics = measure(rows, resolver)
    titles = EnglishTitles.load()
    metrics["english_titles"] = titles.n_laws
    metrics["english_titles_repealed"] = len(titles.repealed)
    answers = _stard_answers(resolver)
    if answers is not None:
        metrics["stard_train_answers"] = answers
        print("STARD train answers:", answers)
    coverage = _stard_coverage(titles)
    if coverage is not None:
        metrics["english_titles_stard_train_coverage"] = coverage
    for form, v in metrics["forms"].items():
        print(f"{form:45s} " + ", ".join(f"{k} {v[k]}" for k in v if k != "examples_failed"))
    print(f"worst {metrics['worst_form']} {metrics['worst_resolved']}; wrong {metrics['wrong']}; "
          f"reasons {metrics['reasons_correct']}; {metrics['english_titles']} English titles")
    from legalrag.evaluation.record import command

    cmd = command(env=["LEGALRAG_DATA"] if coverage is not None else [])  # LEGALRAG_DATA: the STARD train figures
    write_result(args.out, metrics, name="Citation resolution per form, Chinese and English", command=cmd,
                 data=f"{args.set} ({len(rows) - len(hand)} sentences from our frames, bench/citecheck/make_forms_set.py, "
                      f"seed 0) and {args.hand} ({len(hand)} sentences written one by one): all data written here, "
                      "around articles of the shipped national corpus (2023-06 snapshot); not a held-out set of real texts",
                 page=PAGE, source="docs/lab/citation-forms.md", note=NOTE)


if __name__ == "__main__":
    main()
