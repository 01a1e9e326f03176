"""The decisive-article selector: a tiny selector trained by the recipe's own functions ranks the decisive
article of a fixture first; its calibration lies in [0, 1] and never falls as the score rises; a model file
with a wrong hash is refused with its path; bad input gets a clear result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from legalrag.answer.select import (FEATURES, ArticleSelector, ClauseBM25, Priors, SelectorModel,
                                    feature_matrix, law_of, load_selector, shipped_selector_dir, write_model)
from legalrag.citecheck.support import SupportScorer
from legalrag.errors import ModelError
from legalrag.training.recipes.selector import (choose_threshold, fit_logistic, fit_platt, hits_at,
                                                retrieval_order)
from legalrag.types import Document, Hit

ARTICLES = {
    "wage": ("劳动合同法", "第八十二条", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
             "应当向劳动者每月支付二倍的工资。"),
    "repair": ("民法典", "第七百一十二条", "出租人应当履行租赁物的维修义务，但是当事人另有约定的除外。"),
    "drunk": ("刑法", "第一百三十三条之一", "在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。"),
    "period": ("民法典", "第一百八十八条", "向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。"),
    "deposit": ("民法典", "第五百八十七条", "债务人履行债务的，定金应当抵作价款或者收回。"),
    "neighbour": ("民法典", "第二百九十六条", "不动产权利人因用水、排水、通行、铺设管线等利用相邻不动产的，"
                  "应当尽量避免对相邻的不动产权利人造成损害。"),
    "probation": ("劳动合同法", "第十九条", "劳动合同期限三个月以上不满一年的，试用期不得超过一个月。"),
    "ecommerce": ("电子商务法", "第七十八条", "电子商务经营者违反本法规定，未向消费者明示押金退还的方式、程序的，"
                  "由有关主管部门责令限期改正。"),
}
# question -> its decisive article; each is retrieved behind two distractors, so the retrieval order is wrong
TRAIN = [
    ("公司没和我签书面劳动合同，能要二倍工资吗？", "wage"),
    ("租的房子漏水了，出租人不维修怎么办？", "repair"),
    ("醉酒驾驶机动车被查了会怎样处罚？", "drunk"),
    ("欠款多久不要就过了诉讼时效？", "period"),
    ("交了定金后对方不履行债务怎么办？", "deposit"),
    ("邻居排水经过我家土地造成损害怎么办？", "neighbour"),
    ("一年的劳动合同试用期最长多久？", "probation"),
    ("电子商务经营者不退押金怎么办？", "ecommerce"),
]
HELD_OUT = ("入职半年没有签订书面劳动合同，可以要求每月二倍工资吗？", "wage")


def _doc(key: str) -> Document:
    law, label, text = ARTICLES[key]
    return Document(id=key, text=text, title=f"{law}{label}", metadata={"law": law, "article_label": label})


def _hits(decisive: str) -> list[Hit]:
    """The decisive article third, behind two others (the order a retriever got wrong), then the rest."""
    others = [k for k in ARTICLES if k != decisive]
    order = others[:2] + [decisive] + others[2:]
    return [Hit(_doc(k), 1.0 - 0.05 * i, i + 1) for i, k in enumerate(order)]


@pytest.fixture(scope="module")
def support():
    return SupportScorer()  # the lexical support model: no encoder


@pytest.fixture(scope="module")
def tiny(support):
    """A selector fitted on the fixture by the recipe's own functions (logistic model, Platt, threshold)."""
    priors = Priors()
    cb = ClauseBM25()
    xs, ys = [], []
    for q, gold in TRAIN:
        hits = _hits(gold)
        sup = support.scores([(q, h.document) for h in hits])
        xs.append(feature_matrix(q, hits, support_scores=sup, priors=priors, clause_bm25=cb))
        ys.append(np.array([1.0 if h.id == gold else 0.0 for h in hits]))
    scorer = fit_logistic(np.vstack(xs), np.concatenate(ys), l2=1.0)
    scores = [scorer.score(x) for x in xs]
    platt = fit_platt(np.concatenate(scores), np.concatenate(ys))
    probs = [platt(s) for s in scores]
    t = choose_threshold(probs, ys, [1] * len(ys), k=3, max_empty=0.25)["threshold"]
    return ArticleSelector(SelectorModel(scorer, platt, t, priors, {"trained_on": "the test fixture"}),
                           support=support)


def test_a_tiny_trained_selector_ranks_the_decisive_article_first(tiny):
    q, gold = HELD_OUT
    hits = _hits(gold)
    assert hits[0].id != gold  # the retrieval order is wrong ...
    sel = tiny.select(q, hits, k=3)
    assert sel.ranked[0].hit.id == gold  # ... and the selector puts the decisive article first
    assert sel.ranked[0].rank == 2 and sel.chosen and sel.chosen[0].hit.id == gold
    assert len(sel.ranked) == len(hits) and len(sel.chosen) <= 3
    assert all(d.probability >= sel.threshold for d in sel.chosen)
    assert [d.probability for d in sel.ranked] == sorted((d.probability for d in sel.ranked), reverse=True)
    assert sel.seconds > 0


def test_without_a_model_the_retrieval_order_is_kept():
    hits = _hits("wage")
    sel = ArticleSelector().select("公司不签劳动合同", hits, k=2)
    assert [d.hit.id for d in sel.ranked] == [h.id for h in hits]
    assert [d.rank for d in sel.chosen] == [0, 1] and sel.threshold == 0.0
    assert all(0 < d.probability <= 1 for d in sel.ranked)


def test_the_calibration_lies_in_the_unit_interval_and_never_falls_as_the_score_rises():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    y = (s + rng.normal(scale=1.0, size=400) > 0.8).astype(float)
    platt = fit_platt(s, y)
    grid = np.linspace(-50, 50, 2001)
    p = platt(grid)
    assert platt.a > 0 and np.all((p >= 0) & (p <= 1)) and np.all(np.diff(p) >= 0)
    assert abs(platt(s).mean() - y.mean()) < 0.02  # calibrated on its own data: mean probability = base rate
    backwards = fit_platt(s, 1.0 - (s > 0).astype(float))  # labels that fall with the score: a flat curve, not a falling one
    assert backwards.a == 0.0 and np.all(np.diff(backwards(grid)) >= 0)


def test_a_written_selector_loads_back_and_scores_the_same(tiny, tmp_path, support):
    d = write_model(tmp_path / "sel", tiny.model, {"origin": "test"})
    again = load_selector(d, support=support)
    q, gold = HELD_OUT
    a, b = tiny.select(q, _hits(gold)), again.select(q, _hits(gold))
    assert [x.hit.id for x in a.ranked] == [x.hit.id for x in b.ranked]
    assert np.allclose([x.probability for x in a.ranked], [x.probability for x in b.ranked])
    assert load_selector(d / "selector.json", support=support).threshold == tiny.threshold


def test_a_file_with_a_wrong_hash_is_refused_with_its_path(tiny, tmp_path, support):
    d = write_model(tmp_path / "sel", tiny.model, {"origin": "test"})
    spec = d / "selector.json"
    data = json.loads(spec.read_text(encoding="utf-8"))
    data["threshold"] = 0.0
    spec.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ModelError) as err:
        load_selector(d, support=support)
    assert str(spec) in str(err.value) and "SHA-256" in str(err.value) and "legalrag train selector" in str(err.value)
    spec.unlink()
    with pytest.raises(ModelError, match="missing"):
        load_selector(d, support=support)
    with pytest.raises(ModelError, match="no selector there"):
        load_selector(tmp_path / "nowhere", support=support)


@pytest.mark.parametrize("question", ["", "   ", "My landlord will not return the deposit. What can I do?",
                                      "房东不退押金" * 1700])
def test_bad_input_gets_a_clear_result(tiny, question):
    hits = _hits("deposit")
    sel = tiny.select(question, hits)
    assert len(sel.ranked) == len(hits) and len(sel.chosen) <= 3
    assert all(0.0 <= d.probability <= 1.0 for d in sel.ranked)
    if not question.strip():
        assert sel.chosen == ()  # an empty question decides nothing
    assert tiny.select(question, []).ranked == () and tiny.select(question, []).chosen == ()
    one = tiny.select(question, hits[:1])
    assert len(one.ranked) == 1 and one.ranked[0].rank == 0


def test_features_and_measures():
    hits = _hits("period")
    m = feature_matrix("诉讼时效是几年？", hits, support_scores=[0.1] * len(hits), priors=Priors(),
                       clause_bm25=ClauseBM25())
    assert m.shape == (len(hits), len(FEATURES)) and np.isfinite(m).all()
    best = FEATURES.index("clause_bm25")
    assert int(np.argmax(m[:, best])) == 2  # the limitation-period article matches the question best
    assert law_of(Document("x", "", "中华人民共和国民法典第一百八十八条")) == "中华人民共和国民法典"
    ys = [np.array([0.0, 1.0, 0.0])]
    assert hits_at(retrieval_order(ys), ys, 1) == [0.0] and hits_at(retrieval_order(ys), ys, 3) == [1.0]
    p = Priors.from_gold([["a"], ["a", "b"]], {"a": "民法典", "b": "刑法"})
    assert p.article_prior("a") > p.article_prior("b") > p.article_prior("c") == 0.0
    assert p.law_prior("民法典") > p.law_prior("刑法") > p.law_prior("未见法")


@pytest.mark.skipif(not (shipped_selector_dir() / "legalrag_model.json").exists(), reason="no shipped selector yet")
def test_the_shipped_selector_passes_its_hash_check(support):
    sel = load_selector(support=support)
    assert sel.calibrated and 0.0 < sel.threshold < 1.0
    q, gold = HELD_OUT
    out = sel.select(q, _hits(gold))
    assert all(0.0 <= d.probability <= 1.0 for d in out.ranked)


def test_the_neighbour_memory_votes_and_travels_with_the_model(tiny, tmp_path, support):
    from dataclasses import replace

    from legalrag.rerank.neighbours import NeighbourMemory, NeighbourSettings
    from legalrag.testing import FakeEncoder

    encoder = FakeEncoder()
    memory = NeighbourMemory([str(i) for i in range(len(TRAIN))], [[g] for _, g in TRAIN],
                             encoder.encode_queries([q for q, _ in TRAIN]), NeighbourSettings(k=3, expand=0), "fake")
    q, gold = HELD_OUT
    hits = _hits(gold)
    votes = memory.votes(encoder.encode_queries([q])[0])
    m = feature_matrix(q, hits, support_scores=[0.1] * len(hits), priors=Priors(), clause_bm25=ClauseBM25(),
                       votes=votes)
    vote = m[:, FEATURES.index("nb_vote")]
    assert int(np.argmax(vote)) == 2 and vote[2] > 0  # the training question on double wages voted for its article
    d = write_model(tmp_path / "sel", replace(tiny.model, memory=memory), {"origin": "test"})
    card = json.loads((d / "legalrag_model.json").read_text(encoding="utf-8"))
    assert {"selector.json", "neighbours.jsonl", "neighbours.npy"} <= set(card["files_sha256"])
    again = load_selector(d, support=support, encoder=encoder)
    assert len(again.model.memory) == len(TRAIN) and again.select(q, hits).ranked[0].hit.id == gold
    vec = d / "neighbours.npy"
    vec.write_bytes(vec.read_bytes()[:-8])
    with pytest.raises(ModelError, match="neighbours.npy: SHA-256 differs"):
        load_selector(d, support=support, encoder=encoder)


def test_a_selector_given_no_support_model_uses_the_lexical_one_or_the_full_one_over_its_encoder(tiny, tmp_path):
    """No support model looked up behind the caller's back: none and no encoder is the lexical model; an encoder
    alone is the full model over that encoder (the root passes its one scorer instead)."""
    from legalrag.testing import FakeEncoder

    d = write_model(tmp_path / "sel", tiny.model, {"origin": "test"})
    lexical = load_selector(d)
    assert lexical.support.model.name == "lexical" and lexical.support.encoder is None
    encoder = FakeEncoder()
    full = load_selector(d, encoder=encoder)
    assert full.support.model.name == "full" and full.support.encoder is encoder
    q, gold = HELD_OUT
    assert [x.hit.id for x in lexical.select(q, _hits(gold)).ranked] == \
        [x.hit.id for x in load_selector(d, support=SupportScorer()).select(q, _hits(gold)).ranked]


def test_the_support_scores_read_the_articles_vectors_from_the_index():
    from legalrag.answer.select import IndexedSupport
    from legalrag.citecheck.support import SupportModel
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.testing import FakeEncoder

    encoder = FakeEncoder()
    docs = [_doc(k) for k in ARTICLES]
    dense = DenseRetriever.build(docs, encoder)
    plain = SupportScorer(encoder, SupportModel.load("full"))
    indexed = IndexedSupport(plain, dense)
    q = HELD_OUT[0]
    pairs = [(q, d) for d in docs]
    want = plain.scores(pairs)
    before = encoder.calls
    got = indexed.scores(pairs)
    assert encoder.calls - before == 1  # the question only: every article's vector came from the index
    assert np.allclose(got, want, atol=1e-4)
    other = Document("new", "出租人应当按照约定将租赁物交付承租人。", "民法典第七百零八条")  # not in the index: encoded
    assert np.allclose(indexed.scores([(q, other)]), plain.scores([(q, other)]), atol=1e-4)


@pytest.mark.skipif(not (shipped_selector_dir() / "legalrag_model.json").exists(), reason="no shipped selector yet")
def test_the_shipped_selector_was_trained_with_the_shipped_support_model():
    from legalrag.citecheck.support import SupportModel
    from legalrag.training.recipes.selector import support_model_digest

    spec = json.loads((shipped_selector_dir() / "selector.json").read_text(encoding="utf-8"))
    assert spec.get("support_model") == support_model_digest(SupportModel.load("full")), (
        "the support pair model changed since the selector was trained; retrain it (docs/lab/selector.md, "
        "'Re-running'): legalrag train selector --split bench/data/stard-split.json --queries "
        "$LEGALRAG_DATA/stard/train.jsonl --out src/legalrag/data/models/selector")
