import math

import numpy as np
import pytest

from legalrag.errors import InputError
from legalrag.retrieval.base import law_title_filter, retrieve_many
from legalrag.retrieval.bm25 import BM25Retriever
from legalrag.retrieval.tokenize import tokenizer_for
from legalrag.types import Document

EN = [
    ("a1", "Lease", "the landlord shall repair the leased house"),
    ("a2", "Lease", "the tenant shall pay rent on time every month"),
    ("b1", "Labour", "an employer shall sign a written labour contract with the worker"),
    ("b2", "Labour", "wages shall be paid monthly to the worker in money"),
    ("c1", "Loan", "a borrower shall repay the loan and interest on time"),
    ("c2", "Loan", "interest on a private loan above the legal cap is not protected"),
    ("d1", "Traffic", "a driver who causes a traffic accident shall compensate the victim"),
]
ZH = [
    ("1", "劳动合同法", "用人单位自用工之日起即与劳动者建立劳动关系，应当订立书面劳动合同。"),
    ("2", "劳动合同法", "劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。"),
    ("3", "民法典", "出租人应当履行租赁物的维修义务，但是当事人另有约定的除外。"),
    ("4", "民法典", "借款人应当按照约定的期限返还借款并支付利息。"),
    ("5", "道路交通安全法", "机动车发生交通事故造成人身伤亡、财产损失的，由保险公司在责任限额范围内予以赔偿。"),
]


def docs(rows):
    return [Document(id=i, text=t, title=f"{law}第{n}条", metadata={"law": law}) for n, (i, law, t) in
            enumerate(rows, 1)]


def brute_force_lucene(token_docs, query_tokens, k1, b):
    n = len(token_docs)
    avgdl = sum(map(len, token_docs)) / n
    scores = []
    for d in token_docs:
        s = 0.0
        for t in query_tokens:
            df = sum(1 for x in token_docs if t in x)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = d.count(t)
            # Lucene's form (since Lucene 8): no (k1 + 1) factor, which does not change the ranking
            s += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
        scores.append(s)
    return np.array(scores)


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_scores_match_a_brute_force_lucene_bm25(k1, b):
    tok = tokenizer_for("en", stemmer=None)
    d = docs(EN)
    r = BM25Retriever.from_documents(d, tok, k1=k1, b=b, title_mode="none")
    token_docs = [tok(x.text) for x in d]
    for query in ["the worker signs a labour contract", "loan interest loan", "repair house rent"]:
        expected = brute_force_lucene(token_docs, tok(query), k1, b)
        np.testing.assert_allclose(r.scores(query), expected, rtol=1e-5, atol=1e-6)
        # and our sparse-product scoring agrees with bm25s's own scorer
        np.testing.assert_allclose(r.scores(query), r.model.get_scores(tok(query)), rtol=1e-6)


def test_robertson_matches_rank_bm25_okapi():
    from rank_bm25 import BM25Okapi

    tok = tokenizer_for("en", stemmer=None)
    d = docs(EN)
    token_docs = [tok(x.text) for x in d]
    # every query term occurs in fewer than half of the documents, so rank_bm25's idf floor never applies
    ref = BM25Okapi(token_docs, k1=1.5, b=0.75)
    r = BM25Retriever.from_documents(d, tok, k1=1.5, b=0.75, method="robertson", title_mode="none")
    for query in ["labour contract worker", "private loan cap", "traffic accident victim"]:
        # bm25s drops the constant (k1 + 1) factor of the Okapi form; scores are otherwise identical
        np.testing.assert_allclose(r.scores(query) * (1.5 + 1), ref.get_scores(tok(query)), rtol=1e-5, atol=1e-6)


def test_retrieve_ranks_and_only_matching_documents():
    r = BM25Retriever.from_documents(docs(ZH), lang="zh")
    hits = r.retrieve("我想辞职，要提前多久通知公司解除劳动合同？", k=10)
    assert hits[0].id == "2"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.score > 0 and h.retriever == "bm25" for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert "4" not in {h.id for h in hits}  # shares no term with the query
    assert r.retrieve("完全无关的词语乌鸦", k=3) == []


def test_filter_masks_before_top_k():
    d = docs(EN)
    r = BM25Retriever.from_documents(d, lang="en")
    query = "worker wages monthly money labour interest"
    unfiltered = [h.id for h in r.retrieve(query, k=2)]
    flt = law_title_filter(["Loan"])
    hits = r.retrieve(query, k=2, filter=flt)
    assert {h.id for h in hits} == {"c1", "c2"}  # both loan articles, though neither is in the unfiltered top 2
    assert not set(unfiltered) & {"c1", "c2"}
    assert [h.rank for h in hits] == [1, 2]
    assert r.retrieve(query, k=5, filter=law_title_filter(["Nothing"])) == []


def test_batch_equals_single_queries():
    r = BM25Retriever.from_documents(docs(ZH), lang="zh")
    qs = ["解除劳动合同", "房东不修房子", "借钱不还利息", "交通事故赔偿", "劳动关系"]
    batch = r.retrieve_batch(qs, k=3)
    assert batch == [r.retrieve(q, k=3) for q in qs]
    assert retrieve_many(r, qs, k=3) == batch


def test_save_and_load_round_trip(tmp_path):
    d = docs(ZH)
    r = BM25Retriever.from_documents(d, lang="zh", k1=1.0, b=0.5, dedupe_query=True)
    r.save(tmp_path / "bm25")
    again = BM25Retriever.load(tmp_path / "bm25", d)
    assert again.params == r.params and again.params["k1"] == 1.0
    assert again.retrieve("交通事故赔偿", k=3) == r.retrieve("交通事故赔偿", k=3)
    assert not list((tmp_path / "bm25").glob("*.pkl"))


def test_bad_inputs():
    with pytest.raises(InputError, match="method"):
        BM25Retriever.from_documents(docs(EN), lang="en", method="bm25l")
    with pytest.raises(InputError, match="no documents"):
        BM25Retriever.from_documents([], lang="en")
    with pytest.raises(InputError, match="no indexable words"):
        BM25Retriever.from_documents([Document(id="x", text="the a of")], lang="en")
    with pytest.raises(ValueError):
        BM25Retriever.from_documents(docs(EN), lang="en").retrieve("worker", k=0)


def test_title_modes():
    from legalrag.retrieval.lexical import document_text

    d = Document(id="1", text="正文", title="劳动合同法第十条", metadata={"law": "劳动合同法"})
    assert document_text(d, "none") == "正文"
    assert document_text(d, "law") == "劳动合同法\n正文"
    assert document_text(d, "full") == "劳动合同法第十条\n正文"
    assert document_text(Document(id="2", text="正文", title="笔记"), "law") == "笔记\n正文"
    with pytest.raises(InputError, match="title mode"):
        BM25Retriever.from_documents([d], lang="zh", title_mode="yes")
    # the law title makes a question that names the law find it
    r = BM25Retriever.from_documents(docs(ZH), lang="zh", title_mode="law")
    assert {h.id for h in r.retrieve("民法典", k=5)} == {"3", "4"}
    assert BM25Retriever.from_documents(docs(ZH), lang="zh", title_mode="none").retrieve("民法典", k=5) == []


def test_judge_facts_to_criminal_law_articles(shared_data):
    """Real data, kept small: 452 Criminal Law articles, the first 100 JuDGE test cases."""
    import itertools
    import json

    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.metrics import evaluate_rankings

    docs = load_statutes(shared_data / "judge" / "data" / "law_corpus.jsonl")
    r = BM25Retriever.from_documents(docs, lang="auto")
    assert r.tokenizer.config.lang == "zh"
    with (shared_data / "judge" / "data" / "test.json").open(encoding="utf-8") as fh:
        cases = [json.loads(line) for line in itertools.islice(fh, 100)]
    results = r.retrieve_batch([c["text"] for c in cases], k=10)
    m = evaluate_rankings({c["text_id"]: [h.id for h in hs] for c, hs in zip(cases, results)},
                          {c["text_id"]: {str(x) for x in c["la"]} for c in cases}, ks=(5, 10))
    # these 100 cases measure P@5 0.184 and R@10 0.389 (the full 501-case run: 0.194 / 0.370, docs/benchmarks.md;
    # the JuDGE paper's BM25: 0.150 / 0.265); the floors sit just under, so a tokenizer or scoring change shows
    assert m["precision@5"] >= 0.181 and m["recall@10"] >= 0.385, m
