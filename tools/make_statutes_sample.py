"""Rebuild the demo's statute sample, src/legalrag/data/statutes_sample.jsonl, from the STARD corpus.

The sample covers the questions laypeople ask most: labour contracts, consumer rights, leases, loans,
marriage/divorce and inheritance, traffic accidents. It holds whole chapters (not single articles), so that
retrieval in the demo has to pick the right article among its neighbours, plus every article of the related
judicial interpretations that a STARD training query on these topics cites as gold.

    python tools/make_statutes_sample.py [--data ../shared/data] [--check]

``--check`` prints how many STARD training queries have all their gold articles in the sample.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
from legalrag.corpora.statutes import split_article_name

CIVIL_CODE = "中华人民共和国民法典"
# (law title, first article, last article); None = the whole law
CHAPTERS = [
    ("劳动合同法", None, None),
    ("消费者权益保护法", None, None),
    (CIVIL_CODE, 667, 680),  # 借款合同
    (CIVIL_CODE, 703, 734),  # 租赁合同
    (CIVIL_CODE, 1040, 1118),  # 婚姻家庭
    (CIVIL_CODE, 1119, 1163),  # 继承
    (CIVIL_CODE, 1208, 1217),  # 机动车交通事故责任
    ("道路交通安全法", 70, 78),  # 交通事故处理
]
# judicial interpretations: only the articles that training queries on these topics cite
INTERPRETATIONS = [
    "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
    "最高人民法院关于审理劳动争议案件适用法律问题的解释（一）",
    "最高人民法院关于审理城镇房屋租赁合同纠纷案件具体应用法律若干问题的解释",
    "劳动合同法实施条例",
]


def article_no(article: str | None) -> int | None:
    return int(article.split("-")[0]) if article else None


def select(corpus: list[dict], train: list[dict]) -> list[dict]:
    by_id = {r["id"]: r for r in corpus}
    cited = {g for q in train for g in q["gold_ids"]}
    keep = []
    for r in corpus:
        law, article, _ = split_article_name(r["name"])
        n = article_no(article)
        in_chapter = any(law == t and (lo is None or (n is not None and lo <= n <= hi)) for t, lo, hi in CHAPTERS)
        if in_chapter or (law in INTERPRETATIONS and r["id"] in cited):
            keep.append(r)
    assert all(r["id"] in by_id for r in keep)
    return keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=REPO / "src" / "legalrag" / "data" / "statutes_sample.jsonl")
    ap.add_argument("--check", action="store_true", help="only report coverage of STARD training queries")
    args = ap.parse_args()
    corpus = [json.loads(x) for x in (args.data / "stard" / "corpus.jsonl").open(encoding="utf-8")]
    train = [json.loads(x) for x in (args.data / "stard" / "train.jsonl").open(encoding="utf-8")]
    keep = select(corpus, train)
    ids = {r["id"] for r in keep}
    covered = [q for q in train if set(q["gold_ids"]) <= ids]
    text = "".join(json.dumps({"id": r["id"], "name": r["name"], "content": r["content"].strip()},
                              ensure_ascii=False) + "\n" for r in keep)
    print(f"{len(keep)} articles, {len(text.encode('utf-8'))} bytes; {len(covered)} of {len(train)} STARD training "
          "queries have all their gold articles in the sample")
    if not args.check:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
