"""What a follow-up question is searched with, pinned where mutation testing found it unpinned: the texts and
weights of each search, the fusion's scores, order and sources, the law prior, the follow-up detector's decisions
and reasons, the elliptical rule, the bounded caches, the trace shown to the user, and the options refused."""

from __future__ import annotations

import pytest

from legalrag.answer.carry import (LEGAL_NOUNS, FollowUp, FollowUpTrace, SearchCache, cited_documents,
                                   content_chars, elliptical, fuse_turns, legal_nouns, questions_answers)
from legalrag.errors import InputError
from legalrag.types import Document, Hit, Turn

LAW_A, LAW_B = "中华人民共和国劳动合同法", "中华人民共和国民法典"
DOCS = {i: Document(i, f"条文{i}", f"{law}第{n}条", metadata={"law": law})
        for i, law, n in (("a1", LAW_A, 1), ("a2", LAW_A, 2), ("a3", LAW_A, 3), ("b1", LAW_B, 1),
                          ("b2", LAW_B, 2), ("b3", LAW_B, 3), ("x", "", 9))}


def hits(*ids):
    return [Hit(DOCS[i], 1.0 / r, r, "bm25") for r, i in enumerate(ids, 1)]


class Search:
    """A retriever over fixed results per query text, counting its calls."""

    def __init__(self, results, default=("a3", "b2", "a1")):
        self.results, self.default, self.calls = results, default, []

    def __call__(self, text, k):
        self.calls.append((text, k))
        return hits(*self.results.get(text, self.default)[:k])


def turns(*questions, answer="可以主张二倍工资。"):
    out = []
    for q in questions[:-1]:
        out += [Turn("user", q), Turn("assistant", answer)]
    return out + [Turn("user", questions[-1])]


# -- the fusion ------------------------------------------------------------------------------------------------

def test_fusion_scores_are_weighted_reciprocal_ranks_with_their_sources():
    fused = fuse_turns([(hits("a1", "a2"), 1.0, True), (hits("a2", "b1"), 0.5, False)], 10, rrf_k=10)
    assert [h.id for h in fused] == ["a2", "a1", "b1"]
    assert [h.score for h in fused] == pytest.approx([1 / 12 + 0.5 / 11, 1 / 11, 0.5 / 12])
    assert [h.rank for h in fused] == [1, 2, 3] and {h.retriever for h in fused} == {"fused"}
    assert [h.sources for h in fused] == [{"last": 2, "turn-1": 1}, {"last": 1}, {"turn-1": 2}]
    assert [h.id for h in fuse_turns([(hits("a1", "a2", "a3"), 1.0, True)], 2)] == ["a1", "a2"]
    assert fuse_turns([(hits("a1"), 1.0, True)], 5)[0].score == pytest.approx(1 / 61)  # rrf_k 60 by default


def test_fusion_ties_go_to_the_best_rank_then_the_id():
    fused = fuse_turns([(hits("b1", "a1"), 1.0, True), (hits("a1", "b1"), 1.0, False)], 10)
    assert [h.id for h in fused] == ["a1", "b1"]  # the same score and best rank: by id
    tied = fuse_turns([(hits("b2"), 1.0, True), (hits("x", "a3"), 1.0, False), (hits("a3"), 1.0, False)], 10, rrf_k=1)
    assert [h.id for h in tied] == ["a3", "b2", "x"]  # b2 and x: 1/2 each, both first somewhere, b2 by id
    assert tied[0].score == pytest.approx(1 / 3 + 1 / 2)


def test_the_law_prior_multiplies_by_the_earlier_runs_votes_for_each_law():
    runs = [(hits("b1", "a1"), 1.0, True), (hits("a2", "a3", "b2", "x"), 2.0, False)]
    fused = fuse_turns(runs, 10, rrf_k=10, law_prior=1.0, law_top=2)
    score = {h.id: h.score for h in fused}
    # the earlier run's top 2 are both LAW_A: LAW_A gets all of its votes (2.0 of a total of 2.0)
    assert score["a1"] == pytest.approx((1 / 12) * 2.0)
    assert score["b1"] == pytest.approx(1 / 11) and score["x"] == pytest.approx(2.0 / 14)
    assert score["a2"] == pytest.approx(2.0 / 11 * 2.0)
    # law_top 4: a vote of 2/4 each for a2, a3 (LAW_A), b2 (LAW_B) and none for x's empty law
    wide = {h.id: h.score for h in fuse_turns(runs, 10, rrf_k=10, law_prior=1.0, law_top=4)}
    assert wide["a1"] == pytest.approx((1 / 12) * (1 + 1.0 / 2.0)) and wide["b1"] == pytest.approx(1 / 11 * 1.25)
    assert wide["x"] == pytest.approx(2.0 / 14)
    assert [h.score for h in fuse_turns(runs, 10, rrf_k=10)] == [h.score for h in
                                                                 fuse_turns(runs, 10, rrf_k=10, law_prior=0.0)]
    # no earlier run: no prior
    alone = fuse_turns([(hits("a1"), 1.0, True)], 10, rrf_k=10, law_prior=5.0)
    assert alone[0].score == pytest.approx(1 / 11)
    # an empty earlier run casts no vote
    empty = fuse_turns([(hits("a1"), 1.0, True), ([], 3.0, False), (hits("b1"), 1.0, False)], 10, rrf_k=10,
                       law_prior=1.0)
    assert {h.id: h.score for h in empty}["a1"] == pytest.approx(1 / 11)


# -- the words of a question -------------------------------------------------------------------------------------

def test_content_chars_counts_what_is_left_after_the_filler():
    assert content_chars("那如果公司不给呢？") == 4  # 公司不给
    assert content_chars("多长时间可以拿到工资") == 4  # 拿到工资
    assert content_chars("") == 0 and content_chars("这样，（）：“”") == 0


def test_legal_nouns_keeps_the_longest_of_nested_matches_longest_first():
    assert legal_nouns("劳动合同没签，能要双倍工资吗") == ["劳动合同", "双倍工资"]
    assert legal_nouns("他有犯罪记录，要判刑") == ["判刑", "犯罪"]
    assert legal_nouns("天气真好") == []
    assert list(LEGAL_NOUNS) == sorted(set(LEGAL_NOUNS)) and "诉讼时效" in LEGAL_NOUNS


@pytest.mark.parametrize("question,lean,reason", [
    ("那可以起诉吗？", False, "names a legal matter of its own (起诉)"),
    ("劳动合同、违约金、仲裁、押金怎么办", False, "names a legal matter of its own (劳动合同、违约金、仲裁)"),
    ("那他怎么办？", True, "refers back (那…) and names no legal matter of its own"),
    ("他们说不给怎么办", True, "refers back (他们…) and names no legal matter of its own"),
    ("老板说下个月再给呢？！", True, "asks about what was discussed (呢) and names no legal matter of its own"),
    ("老板说下个月最多给多少", True, "asks about what was discussed (最多) and names no legal matter of its own"),
    ("拖着不给", True, "4 character(s) of its own and no legal matter named"),
    ("老板说下月给", True, "6 character(s) of its own and no legal matter named"),
    ("老板说下个月给", False, "a question of its own (7 characters of its own)"),
])
def test_elliptical_decides_and_says_why(question, lean, reason):
    assert elliptical(question) == (lean, reason)


def test_elliptical_takes_its_limit_and_refuses_a_negative_one():
    assert elliptical("老板说下个月给", short=7)[0] is True
    assert elliptical("老板说下月给", short=5)[0] is False
    assert elliptical("  那   他  ")[1].startswith("refers back (那…)")
    assert elliptical(None) == (True, "0 character(s) of its own and no legal matter named")
    with pytest.raises(InputError, match="short must be 0 or more, got -1"):
        elliptical("那呢", short=-1)
    assert elliptical("", short=0) == (True, "0 character(s) of its own and no legal matter named")


# -- the trace and the caches --------------------------------------------------------------------------------------

def test_the_trace_as_shown_names_each_carried_article():
    trace = FollowUpTrace(("q",), ("a1", "b1"), ("a1", "b1", "b2"), True, "too short")
    assert trace.to_dict({"a1": "第一条"}) == {"searched": ["q"], "same_issue": True, "moved": False,
                                              "reason": "too short",
                                              "carried": [{"id": "a1", "title": "第一条"}, {"id": "b1", "title": "b1"}]}
    assert FollowUpTrace(same_issue=None, reason="moved").to_dict()["moved"] is True
    assert FollowUpTrace().to_dict() == {"searched": [], "same_issue": None, "moved": False, "reason": "",
                                         "carried": []}


def test_the_search_cache_is_a_bounded_lru_per_function():
    def f(t, k):
        return []

    def g(t, k):
        return []

    cache = SearchCache(2)
    cache.put(f, ("a",), 1)
    cache.put(f, ("b",), 2)
    assert cache.get(f, ("a",)) == 1  # a is now the most recent
    cache.put(f, ("c",), 3)  # b, the least recent, goes
    assert cache.get(f, ("b",)) is None and cache.get(f, ("a",)) == 1 and cache.get(f, ("c",)) == 3
    assert cache.get(g, ("a",)) is None


# -- the processor -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["context_weight", "question_decay", "answer_weight", "law_prior", "carry_same",
                                   "carry_new", "short_question", "law_prior_new", "history_new"])
def test_a_negative_weight_is_refused_by_name(label):
    with pytest.raises(InputError, match=f"^{label} must be 0 or more, got -1$"):
        FollowUp(**{label: -1})
    FollowUp(**{label: 0})


@pytest.mark.parametrize("label", ["carry_top", "overlap_top", "max_turns", "law_top", "depth", "rrf_k"])
def test_a_count_under_one_is_refused_by_name(label):
    with pytest.raises(InputError, match=f"^{label} must be at least 1, got 0$"):
        FollowUp(**{label: 0})
    FollowUp(**{label: 1})


def test_the_params_are_the_options_given():
    p = FollowUp(context_weight=0.1, question_decay=0.2, answer_weight=0.3, law_prior=0.4, carry_same=0.6,
                 carry_new=0.7, carry_top=5, short_question=3, overlap_top=8, max_turns=2, law_prior_new=0.8,
                 history_new=0.9, moved_share=0.05)
    assert p.params() == {"context_weight": 0.1, "question_decay": 0.2, "answer_weight": 0.3, "law_prior": 0.4,
                          "carry_same": 0.6, "carry_new": 0.7, "carry_top": 5, "short_question": 3,
                          "overlap_top": 8, "max_turns": 2, "law_prior_new": 0.8, "history_new": 0.9,
                          "moved_share": 0.05}


def test_the_query_text_is_the_last_question_behind_the_previous_one():
    assert FollowUp()(turns("公司不签劳动合同", "那  最多\n几个月？")) == "公司不签劳动合同 那 最多 几个月？"
    assert FollowUp()(turns("公司不签劳动合同")) == "公司不签劳动合同"
    assert FollowUp(context_weight=0)(turns("公司不签劳动合同", "那最多呢")) == "那最多呢"


def test_questions_and_answers_are_collapsed_and_the_empty_dropped():
    dialogue = [Turn("user", " 公司  不签 "), Turn("assistant", "  "), Turn("user", "那呢")]
    assert questions_answers(dialogue) == (["公司 不签", "那呢"], [])


def test_each_search_of_a_follow_up_and_its_weight():
    p = FollowUp(context_weight=0.5, question_decay=0.1, answer_weight=0.5, max_turns=2)
    got = p.queries(turns("一", "二", "三", answer="答"))
    # each earlier turn's own searches too (to carry what it established), each text once, at its first weight
    assert [(t, round(w, 6), last) for t, w, last in got] == [
        ("一", 1.0, True), ("二", 1.0, True), ("一 二", 0.5, False), ("答", 0.5, False), ("三", 1.0, True),
        ("二 三", 0.5, False)]
    assert [t for t, _, _ in FollowUp(max_turns=1).queries(turns("一", "二", "三", answer="答"))] == [
        "二", "一 二", "一", "答", "三", "二 三"]
    # the answers decay as the questions do
    runs = FollowUp(question_decay=0.5, answer_weight=0.8)._runs(["一", "二", "三"], ["甲", "乙"])
    assert [(t, w) for t, w, _ in runs] == [("三", 1.0, True)[:2], ("二 三", 0.5), ("二", 0.5), ("一", 0.25),
                                            ("乙", 0.8), ("甲", 0.4)]
    # a weight of 0 drops the search
    assert [t for t, _, _ in FollowUp(answer_weight=0.0, context_weight=0.0)._runs(["一", "二"], ["甲"])] == ["二", "一"]


def test_only_the_last_max_turns_are_searched():
    p = FollowUp(max_turns=1)
    assert [t for t, _, _ in p._runs(["一", "二", "三"], ["甲", "乙"])] == ["三", "二 三", "二", "乙"]


def test_each_text_is_searched_once_at_the_processors_depth():
    search = Search({})
    p = FollowUp(depth=7)
    p.retrieve(search, turns("公司不签劳动合同"), k=3)
    p.retrieve(search, turns("公司不签劳动合同"), k=3)
    assert search.calls == [("公司不签劳动合同", 7)] and p.searches == 1


def test_the_answers_cited_articles_are_resolved_once_each():
    seen = []

    def cited(text):
        seen.append(text)
        return [DOCS["b3"]]

    p = FollowUp(cited=cited)
    assert p._cited("") == [] and FollowUp()._cited("答") == []
    assert p._cited("答") == [DOCS["b3"]] and p._cited("答") == [DOCS["b3"]] and seen == ["答"]


# -- the detector ------------------------------------------------------------------------------------------------

def test_the_detectors_decisions_and_reasons():
    p = FollowUp(short_question=4, overlap_top=2)
    assert p.same_issue(["公司不签劳动合同", "and how long?"], [], []) == (
        True, "written in another language than the earlier turns")
    assert p.same_issue(["how", "and how long then?"], [], [])[1] != "written in another language than the earlier turns"
    assert p.same_issue(["公司不签劳动合同", "那拖着呢"], [], []) == (True, "too short to raise a point of its own")
    question = ["公司不签劳动合同", "公司规定加班没有加班费合法吗"]
    assert p.same_issue(question, hits("b1", "a2", "a1"), [DOCS["a1"], DOCS["a2"]]) == (
        True, "its own search finds 1 established article(s)")
    # only the top overlap_top of its own hits are looked at
    assert p.same_issue(question, hits("b1", "b2", "a1"), [DOCS["a1"]]) == (
        False, "a new point: its own search meets none of the established articles")


def test_a_question_that_moved_to_other_laws_when_moved_share_is_set():
    question = ["公司不签劳动合同", "公司规定加班没有加班费合法吗"]
    moved = FollowUp(moved_share=0.0).same_issue(question, hits("b1", "b2"), [DOCS["a1"]])
    assert moved == (None, "moved to other laws: its own search meets none of the established articles' laws")
    # half of its hits in the established law: above a share of 0.4, not above 0.5
    assert FollowUp(moved_share=0.4).same_issue(question, hits("b1", "a2"), [DOCS["a1"]])[0] is False
    assert FollowUp(moved_share=0.5).same_issue(question, hits("b1", "a2"), [DOCS["a1"]])[0] is None
    # the default never decides "moved"; nor with no established law, nor with no hits of its own
    assert FollowUp().same_issue(question, hits("b1", "b2"), [DOCS["a1"]])[0] is False
    assert FollowUp(moved_share=0.0).same_issue(question, hits("b1"), [DOCS["x"]])[0] is False
    assert FollowUp(moved_share=0.0).same_issue(question, [], [DOCS["a1"]])[0] is None


# -- retrieval -----------------------------------------------------------------------------------------------------

FIRST, SHORT, NEW = "公司不和我签劳动合同怎么办", "那最多呢？", "公司规定加班没有加班费合法吗"
RESULTS = {FIRST: ("a1", "a2", "a3", "b3"), SHORT: ("b1", "a2", "b2"), NEW: ("b1", "b2"),
           f"{FIRST} {NEW}": ("b2",), f"{FIRST} {SHORT}": ("b2", "a3")}


def test_a_first_question_is_searched_alone_and_traced():
    p = FollowUp()
    got = p.retrieve(Search(RESULTS), turns(FIRST), k=2)
    assert [h.id for h in got] == ["a1", "a2"]
    assert p.last_trace == FollowUpTrace(searched=(FIRST,))


def test_a_short_follow_up_carries_the_established_articles_at_carry_same():
    p = FollowUp(carry_top=2, carry_same=1.0, law_prior=0.0, question_decay=0.0, answer_weight=0.0,
                 context_weight=0.0, rrf_k=10)
    got = p.retrieve(Search(RESULTS), turns(FIRST, SHORT), k=10)
    t = p.last_trace
    assert t.searched == (SHORT,) and t.same_issue is True and t.reason == "too short to raise a point of its own"
    assert t.established == ("a1", "a2") and set(t.carried) == {"a1", "a2"}
    score = {h.id: h.score for h in got}
    assert score["a2"] == pytest.approx(1 / 12 + 1 / 12) and score["a1"] == pytest.approx(1 / 11)
    assert score["b1"] == pytest.approx(1 / 11) and "a3" not in score
    assert got[0].id == "a2" and got[0].sources == {"last": 2, "turn-1": 2}


def test_a_new_point_carries_at_carry_new_and_weighs_the_history_down():
    p = FollowUp(carry_top=1, carry_new=0.2, carry_same=5.0, history_new=0.5, law_prior=9.0, law_prior_new=0.0,
                 question_decay=1.0, answer_weight=0.0, context_weight=0.0, rrf_k=10)
    got = p.retrieve(Search(RESULTS), turns(FIRST, NEW), k=10)
    t = p.last_trace
    assert t.same_issue is False and t.established == ("a1",) and t.carried == ("a1",)
    score = {h.id: h.score for h in got}
    assert score["b1"] == pytest.approx(1 / 11) and score["b2"] == pytest.approx(1 / 12)
    # a1: the first question's search (weight 1 * history_new) and the carried list (carry_new)
    assert score["a1"] == pytest.approx(0.5 / 11 + 0.2 / 11)
    assert score["a3"] == pytest.approx(0.5 / 13)


def test_a_moved_question_drops_the_history_and_carries_nothing():
    p = FollowUp(moved_share=0.0, carry_top=2, law_prior=9.0, law_prior_new=9.0, context_weight=0.5, rrf_k=10)
    got = p.retrieve(Search(RESULTS), turns(FIRST, NEW), k=10)
    assert p.last_trace.same_issue is None and p.last_trace.carried == ()
    assert p.last_trace.to_dict()["moved"] is True
    assert [(h.id, h.score) for h in got] == [("b1", pytest.approx(1 / 11)), ("b2", pytest.approx(1 / 12))]


def test_the_cited_articles_of_the_most_recent_answer_come_first_among_the_established():
    cites = {"甲": [DOCS["b3"]], "乙": [DOCS["b1"]]}
    p = FollowUp(carry_top=1, cited=lambda text: cites.get(text, []))
    dialogue = [Turn("user", FIRST), Turn("assistant", "甲"), Turn("user", NEW), Turn("assistant", "乙"),
                Turn("user", SHORT)]
    p.retrieve(Search(RESULTS), dialogue, k=10)
    # the latest answer's citations, that turn's own top article, then the turn before: its citations, its top
    assert p.last_trace.established == ("b1", "b2", "b3", "a1")


def test_the_established_articles_come_from_at_most_max_turns_earlier_turns():
    results = {"一号问题公司不给工资": ("a1",), "二号问题公司不给工资": ("a2",), "三号问题公司不给工资": ("a3",),
               SHORT: ("b1",)}
    p = FollowUp(carry_top=1, max_turns=2)
    p.retrieve(Search(results, default=("b2",)),
               turns("一号问题公司不给工资", "二号问题公司不给工资", "三号问题公司不给工资", SHORT), k=10)
    assert p.last_trace.established == ("a3", "a2") and p.last_trace.carried == ("a3", "a2")


def test_a_repeated_call_is_answered_from_the_memo():
    search = Search(RESULTS)
    p = FollowUp()
    first = p.retrieve(search, turns(FIRST, SHORT), k=5)
    n = len(search.calls)
    again = p.retrieve(search, turns(FIRST, SHORT), k=5)
    assert [h.id for h in again] == [h.id for h in first] and len(search.calls) == n


class _Resolver:
    class _Match:
        def __init__(self, citation):
            self.citation = citation

    class _Found:
        def __init__(self, document):
            self.document = document

    def __init__(self):
        self.made = 0

    def extract(self, text):
        return [self._Match(c) for c in text.split()]

    def lookup(self, citation):
        return self._Found(DOCS.get(citation))


def test_cited_documents_resolves_each_citation_once_and_makes_its_resolver_on_first_use():
    made = []

    def factory():
        made.append(1)
        return _Resolver()

    cited = cited_documents(factory)
    assert made == []
    assert [d.id for d in cited("a1 zz a1 b2")] == ["a1", "b2"]
    assert [d.id for d in cited("b3")] == ["b3"] and made == [1]
    assert [d.id for d in cited_documents(_Resolver())("a2 a2")] == ["a2"]
