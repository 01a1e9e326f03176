"""The one support model, judged on clauses: an article's own words are supported and the clause is named; an
unrelated article is not, with the closest clause and why; a claim of one character or of 5,000 gets a clear
result; answers and ``check`` give the same mark for the same claim and citation; every path's scorer is one, passed
in from the composition root, and a caller that passes none gets the lexical model."""

from __future__ import annotations

import pytest

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.checker import check_text
from legalrag.citecheck.support import MAX_CLAIM_CHARS, SupportScorer
from legalrag.corpora.statutes import statute_document
from legalrag.wiring import Root, make_support_scorer

THEFT = ("盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；"
         "数额巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处罚金；数额特别巨大或者有其他特别严重情节的，处十年以上有期徒刑"
         "或者无期徒刑，并处罚金或者没收财产。")
WAGES = "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"
DOCS = [statute_document("264", THEFT, "中华人民共和国刑法第二百六十四条"),
        statute_document("82", WAGES, "中华人民共和国劳动合同法第八十二条")]
OWN_WORDS = "盗窃公私财物，数额较大的，处三年以下有期徒刑"


@pytest.fixture(scope="module")
def scorer():
    return make_support_scorer()


@pytest.fixture(scope="module")
def resolver():
    return CitationResolver.from_documents(DOCS)


def test_every_builder_gives_the_one_model(scorer):
    assert scorer is make_support_scorer("stard-e5") is make_support_scorer("full") is Root().make_support_scorer()
    assert scorer.model.name == "full" and scorer.model.needs_cosine and scorer.encoder is not None
    lexical = make_support_scorer("lexical")
    assert lexical is not scorer and lexical.model.name == "lexical" and not lexical.model.needs_cosine
    with pytest.raises(Exception, match="unknown support model 'nope'"):
        make_support_scorer("nope")


def test_the_articles_own_words_are_supported_by_the_clause_that_says_them(scorer, resolver):
    [j] = scorer.judge([(OWN_WORDS, DOCS[0])])
    assert j.supported and j.probability >= scorer.threshold and j.reason == ""
    assert j.clause.startswith("盗窃公私财物，数额较大的") and THEFT[j.clause_start:j.clause_end] == j.clause
    [c] = check_text(f"{OWN_WORDS}（《中华人民共和国刑法》第二百六十四条）。", resolver, scorer).citations
    assert c.mark == "supported" and c.clause == j.clause and c.clause_reason == ""


def test_an_unrelated_article_is_not_supported_and_the_closest_clause_says_why(scorer, resolver):
    [j] = scorer.judge([(OWN_WORDS, DOCS[1])])
    assert not j.supported and j.probability < scorer.threshold
    assert j.clause == WAGES and "no clause of the article says what the claim says" in j.reason
    [c] = check_text(f"{OWN_WORDS}（《中华人民共和国劳动合同法》第八十二条）。", resolver, scorer).citations
    assert c.mark == "exists" and c.mark_reason == "does_not_bear" and c.clause == WAGES and c.clause_reason


def test_scores_of_question_article_pairs_keep_working(scorer):
    right, wrong = scorer.scores([("偷东西数额较大会判几年？", DOCS[0]), ("偷东西数额较大会判几年？", DOCS[1])])
    assert 0.0 <= wrong < right <= 1.0
    assert scorer.scores([]) == [] and scorer.judge([]) == []


def test_a_claim_of_one_character_or_of_5000_gets_a_clear_result(scorer, resolver):
    short, long_, empty = scorer.judge([("盗", DOCS[0]), ("盗窃他人财物数额较大" * 500, DOCS[0]), ("", DOCS[0])])
    assert not short.supported and "too few" in short.reason
    assert not empty.supported and "too few" in empty.reason
    assert long_.note == f"the claim has 5,000 characters; it was judged on its first {MAX_CLAIM_CHARS:,}"
    assert isinstance(long_.supported, bool) and long_.clause
    [c] = check_text(f"{'盗窃他人财物数额较大' * 500}（《中华人民共和国刑法》第二百六十四条）", resolver, scorer).citations
    assert c.mark in ("supported", "exists") and "it was judged on its first 1,000" in c.note
    [c] = check_text("盗（《中华人民共和国刑法》第二百六十四条）。", resolver, scorer).citations
    assert c.mark == "exists" and c.mark_reason == "no_claim"  # one character states nothing to check
    [blank] = scorer.judge([(OWN_WORDS, "")])
    assert not blank.supported and blank.clause == "" and "no text" in blank.reason


REPLY = f"结论：{OWN_WORDS}（《中华人民共和国刑法》第二百六十四条）。\n怎么做：报警并保存证据。"


@pytest.mark.parametrize("given", [True, False], ids=["root's scorer", "none: lexical"])
def test_answers_and_check_give_the_same_mark_for_the_same_claim_and_citation(resolver, scorer, given):
    """An answer citing an article among its evidence is marked as `check` marks the same text: one model, no
    second path. Both get the root's scorer; given none, both use the lexical model."""
    from legalrag.answer.engine import engine_for
    from legalrag.testing import ScriptedLLM
    from legalrag.types import Hit

    hits = [Hit(DOCS[0], 1.0, 1), Hit(DOCS[1], 0.5, 2)]
    engine = engine_for(ScriptedLLM([REPLY] * 3), documents=DOCS, support=scorer if given else None)
    assert engine.support.model.name == ("full" if given else "lexical")
    answer = engine.answer("偷东西数额较大会判几年？", hits=hits)
    checked = check_text(answer.text, resolver, scorer if given else None).citations
    if not given:  # no scorer is the lexical model, never a model looked up elsewhere
        lexical = check_text(answer.text, resolver, SupportScorer()).citations
        assert [(c.mark, c.support) for c in checked] == [(c.mark, c.support) for c in lexical]
    judged = [c for c in answer.citations if c.in_retrieved and c.mark_reason != "quoted"]
    assert judged, answer.text  # the model's own citation, judged by the support model
    for c in judged:
        [other] = [o for o in checked if o.canonical == c.canonical and o.claim == c.claim]
        assert (c.mark, c.support, c.clause, c.clause_reason) == (other.mark, other.support, other.clause,
                                                                   other.clause_reason)
    for c in answer.citations:  # a quoted basis line is the article's own words: `check` says so as well
        if c.mark_reason == "quoted":
            assert any(o.canonical == c.canonical and o.mark == "supported" and o.mark_reason == "quoted"
                       for o in checked), c.canonical


def test_a_citation_quoting_its_article_word_for_word_is_supported_as_quoted(resolver, scorer):
    [c] = check_text(f"《中华人民共和国刑法》第二百六十四条：“{THEFT[:20]}…{THEFT[-10:]}”", resolver, scorer).citations
    assert c.mark == "supported" and c.mark_reason == "quoted" and c.support is None
    [bad] = check_text("《中华人民共和国刑法》第二百六十四条：“盗窃公私财物的，一律判处死刑”", resolver, scorer).citations
    assert bad.mark_reason != "quoted"  # a quote the article does not hold is judged like any claim
    [more] = check_text(f"依照《中华人民共和国刑法》第二百六十四条：“{THEFT[:20]}”，应当判处死刑。", resolver, scorer).citations
    assert more.mark_reason != "quoted"  # a true quote followed by a claim of its own: the claim is judged


def test_the_lexical_option_names_a_clause_too():
    [j] = SupportScorer().judge([(OWN_WORDS, DOCS[0])])
    assert j.clause.startswith("盗窃公私财物") and j.threshold == SupportScorer().threshold
