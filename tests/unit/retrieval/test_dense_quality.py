"""Dense and hybrid retrieval quality on real data, small enough for every test run.

The first STARD training queries and a corpus of their gold articles plus each gold's neighbouring articles
of the same law (hard distractors), articles cut to MAX_CHARS characters; the index is built through the
composition root exactly as `legalrag index build --retriever hybrid --encoder SPEC` builds it, with a fresh
vector cache (a cached vector would hide a change to the encoder). The floors sit just under the measured
figures (docs/lab/tests-quality.md), so a broken encoder role prefix, normalisation, passage text, FAISS
ordering or fusion fails them; a random ranking scores about 10 / len(corpus).

Another encoder is one more ``FLOORS`` entry (its spec as `--encoder` takes it), with floors just under
what it measures here.
"""

from __future__ import annotations

import json

import pytest

from support.paths import SHARED_DATA

N_QUERIES = 40
NEIGHBOURS = 1  # articles on each side of a gold article, from the same corpus file
MAX_CHARS = 96

# encoder spec -> component -> metric -> floor, each just under the figure measured on this subset (2-core x86-64
# CPU): e5-small dense R@10 0.9292 MRR@10 0.6832 nDCG@10 0.7248; BM25 0.8500 / 0.7146; RRF hybrid 0.9292 / 0.7692.
FLOORS = {
    "e5-small": {"dense": {"recall@10": 0.92, "mrr@10": 0.665, "ndcg@10": 0.71},
                 "hybrid": {"recall@10": 0.92, "mrr@10": 0.755},
                 "bm25": {"recall@10": 0.84, "mrr@10": 0.70}},
}


@pytest.fixture(scope="module")
def stard_subset():
    """(documents, queries): the first N_QUERIES STARD training queries, their gold articles and neighbours."""
    stard = SHARED_DATA / "stard"
    if not (stard / "corpus.jsonl").is_file() or not (stard / "train.jsonl").is_file():
        pytest.skip(f"STARD not found at {stard}; set LEGALRAG_SHARED_DATA to the folder that holds stard/")
    from legalrag.corpora.statutes import statute_document
    from legalrag.types import Query

    with (stard / "train.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line, _ in zip(fh, range(N_QUERIES))]
    queries = [Query(text=r["query"], id=str(r["query_id"]), gold_ids=tuple(str(g) for g in r["gold_ids"]))
               for r in rows]
    wanted = {int(g) + d for q in queries for g in q.gold_ids for d in range(-NEIGHBOURS, NEIGHBOURS + 1)}
    articles = {}
    with (stard / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in wanted:
                articles[r["id"]] = r
    docs = [statute_document(str(i), articles[i]["content"], articles[i]["name"]) for i in sorted(articles)]
    assert {g for q in queries for g in q.gold_ids} <= {d.id for d in docs}
    return docs, queries


@pytest.fixture(scope="module", params=sorted(FLOORS))
def figures(request, stard_subset, tmp_path_factory):
    """encoder spec -> {component kind: metrics} for bm25, the encoder's dense component and their RRF hybrid."""
    from legalrag.evaluation.runs import evaluate_retrieval
    from legalrag.wiring import Root, expand_components

    spec = request.param
    docs, queries = stard_subset
    tmp = tmp_path_factory.mktemp("quality")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LEGALRAG_HOME", str(tmp / "home"))  # a fresh vector cache
        index = Root().build_index(tmp / "idx", docs, expand_components(["hybrid"], [spec], max_chars=MAX_CHARS),
                            lang="zh", progress=False)
        out = {}
        for name in index.names:
            kind = "dense" if name.startswith("dense") else name
            out[kind] = evaluate_retrieval(index.retriever(name), queries, k=10).metrics
    shown = ("recall@10", "mrr@10", "ndcg@10")
    print(f"\n{spec} on {len(queries)} STARD queries / {len(docs)} articles:",
          {kind: {m: round(ms[m], 4) for m in shown} for kind, ms in out.items()})
    return spec, out


@pytest.mark.shared_data
@pytest.mark.parametrize("kind", ["dense", "hybrid", "bm25"])
def test_retrieval_quality_on_stard_is_at_least_the_measured_figure(figures, kind):
    spec, out = figures
    for metric, floor in FLOORS[spec][kind].items():
        assert out[kind][metric] >= floor, (spec, kind, metric, out[kind][metric])
