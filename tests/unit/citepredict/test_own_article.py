"""The citation list puts the charge's own article (the criminal law's specific part) before the general part's."""

from __future__ import annotations

from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.pipeline import CitationPredictor, CiteConfig, specific_part
from legalrag.citepredict.rules import learn_rules
from legalrag.corpora.statutes import statute_document
from legalrag.retrieval.index import build_index

LAW = "中华人民共和国刑法"
DOCS = [
    statute_document("a264", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃的，处三年以下有期徒刑。", LAW + "第二百六十四条"),
    statute_document("a67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。", LAW + "第六十七条"),
    statute_document("a52", "判处罚金，应当根据犯罪情节决定罚金数额。", LAW + "第五十二条"),
    statute_document("a133", "违反交通运输管理法规，因而发生重大交通事故，致人重伤、死亡。", LAW + "第一百三十三条"),
]
# every training decision cites 67 and 52 (always added at score 1.0, like the retrieved article)
TRAIN = {"t1": {"a264", "a67", "a52"}, "t2": {"a264", "a67", "a52"}, "t3": {"a133", "a67", "a52"}}


def test_the_charges_own_article_comes_first(tmp_path):
    index = build_index(tmp_path / "i", DOCS, ["bm25"], lang="zh")
    rules = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.6)
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(TRAIN),
                          config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0, use_cocitation=False))
    r = p.predict("被告人入户盗窃公私财物，数额较大。")
    scores = {c.provision: c.score for c in r.predictions}
    assert "a264" in scores and scores["a264"] <= scores["a67"] == scores["a52"]  # scores alone put it last
    assert r.provisions[0] == "a264" and {"a67", "a52"} <= set(r.provisions)


def test_specific_part():
    by = {d.id: d for d in DOCS}
    assert specific_part(by["a264"]) and specific_part(by["a133"])
    assert not specific_part(by["a67"]) and not specific_part(None)
