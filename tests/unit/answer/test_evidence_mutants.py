"""Evidence selection, pinned where mutation testing found it unpinned: the matching terms, which clause is an
article's best (BM25 over the retrieved clauses: rare terms, term frequency, clause length; ties to the earliest),
the token accounting at each budget boundary (the smallest budget, a clause that just fits, a cut clause made whole
again, each further clause and its paragraph label), how the kept clauses are written out (gaps, paragraph labels
in Chinese and English), which articles are left out and said so, and the step ``prompt_evidence`` records."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from legalrag.answer.evidence import (GAP, K1, MIN_CLAUSE_TOKENS, B, Evidence, Selection, cut_to_tokens, default_terms,
                                      format_evidence, keep_last_tokens, prompt_evidence, select_evidence)
from legalrag.clauses import split_clauses
from legalrag.errors import InputError
from legalrag.llm.tokens import estimate_tokens
from legalrag.types import Document, Hit, Step
from unit.answer.test_evidence import HITS, label as law_label


def _hit(i: int, text: str, name: str = "Art") -> Hit:
    return Hit(Document(id=str(i), text=text, title=name, metadata={}), 1.0 / i, i)


def title(h: Hit) -> str:
    return h.document.title


def header(n: int, name: str = "Art") -> int:
    """What an article's name costs: ``[n] name`` and the separators around it."""
    return estimate_tokens(f"[{n}] {name}") + 2


def kept(sel: Selection) -> list[str]:
    return [e.hit.id for e in sel.evidence]


# -- matching terms -------------------------------------------------------------------------------------------------

def test_terms_are_lowercased_words_of_two_letters_or_more_then_cjk_bigrams():
    terms = default_terms("zh")
    assert terms("Contract 合同法 a 的 B2B Ünd é x_y") == ["contract", "b2b", "ünd", "é", "合同", "同法", "的"]
    assert terms("劳动合同") == ["劳动", "动合", "合同"]  # every bigram of a run, no more
    assert terms("合同") == ["合同"] and terms("法") == ["法"]  # a run of one character is a term itself
    assert terms("A I am OK") == ["am", "ok"]  # one ASCII letter is not a word
    assert default_terms("en")("The Court 法院") == ["the", "court", "法院"]


# -- which clause is an article's best ------------------------------------------------------------------------------

def _reference_bm25(query: list[str], clauses: list[list[str]]) -> list[float]:
    """Okapi BM25 with the +1 idf (never negative), k1 = 1.2, b = 0.75, over the given clauses."""
    n, avg = len(clauses), sum(map(len, clauses)) / len(clauses)
    df = Counter(t for c in clauses for t in set(c))
    out = []
    for c in clauses:
        tf = Counter(c)
        out.append(sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] * (K1 + 1)
                       / (tf[t] + K1 * (1 - B + B * len(c) / avg)) for t in set(query) if tf[t]))
    return out


WORDS = ["Ab", "Cd", "Ef", "Gh", "Ij", "Kl"]
WIDTH = 62  # every clause is padded with "_" (no term) to this many characters: the same token cost for all


def _clause(words: list[str]) -> str:
    body = " ".join(words)
    return body + " " + "_" * (WIDTH - len(body) - 2) + "."


@settings(max_examples=250, deadline=None, derandomize=True, database=None)
@example([["Gh"], ["Gh", "Cd", "Ef"], ["Ab", "Cd"], ["Cd", "Ef", "Gh", "Cd"]], ["Cd", "Ef"])  # idf's +0.5 below
@example([["Cd"], ["Cd", "Cd", "Ef"], ["Cd"], ["Ab", "Gh", "Gh"]], ["Gh", "Cd", "Ef"])  # and above the line
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=2, max_size=6),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True))
def test_the_clause_shown_under_a_tight_budget_is_the_best_bm25_match(clause_words, question_words):
    texts = [_clause(w) for w in clause_words]
    t = estimate_tokens(texts[0])
    assert all(estimate_tokens(x) == t for x in texts) and t >= MIN_CLAUSE_TOKENS
    budget = header(1) + 2 * t + 2  # the best clause whole, and one token short of a second one
    sel = select_evidence(" ".join(question_words), [_hit(1, " ".join(texts))], budget=budget, label=title,
                          lang="en")
    (shown,) = [x for x in sel.evidence[0].text.split(GAP) if x.strip()]
    terms = default_terms("en")
    scores = _reference_bm25(terms(" ".join(question_words)), [terms(x) for x in texts])
    best = max(scores)
    first_best = next(i for i, s in enumerate(scores) if s >= best - 1e-9)
    assert shown.strip() == texts[first_best]
    assert sel.evidence[0].clauses_kept == 1 and sel.tokens <= budget


def test_a_rare_term_outweighs_one_that_every_clause_has():
    # 合同 is in every clause, 试用 in one: the 试用 clause is best though it comes last
    text = "合同应当书面订立。合同可以约定期限。订立合同时约定试用。"
    sel = select_evidence("合同试用", [_hit(1, text)], budget=header(1) + 2 + 13, label=title)
    assert sel.evidence[0].text == GAP + "订立合同时约定试用。"


def _shown(question: str, clauses: list[str], best: str) -> str:
    """The text a budget of exactly the name and ``best`` shows of an article of ``clauses``."""
    sel = select_evidence(question, [_hit(1, "".join(clauses))], budget=header(1) + 2 + estimate_tokens(best),
                          label=title)
    return sel.evidence[0].text.strip(GAP)


def test_a_clause_with_more_occurrences_of_a_term_beats_one_of_the_same_length_with_fewer():
    once, twice = "工资当月支付结清并按时足额发放到位。", "工资工资支付结清并按时足额发放到位。"
    assert _shown("工资", [once, twice], twice) == twice


def test_at_equal_occurrences_the_shorter_clause_wins():
    long, short = "用人单位支付当月工资并且按时足额发放给劳动者本人账户。", "工资当月结清并按时足额发放到位。"
    assert _shown("工资", [long, short], short) == short


def test_between_equally_good_clauses_the_earliest_is_shown():
    first = "甲方应当按时足额履行合同约定的义务。"
    text = first + first.replace("甲", "乙") + first.replace("甲", "丙")
    for question in ("按时履行", "无关问题"):  # equal scores, matched or not
        sel = select_evidence(question, [_hit(1, text)], budget=header(1) + 2 + estimate_tokens(first), label=title)
        assert sel.evidence[0].text == first + GAP


# -- budget boundaries ----------------------------------------------------------------------------------------------

def test_the_smallest_budget_the_error_names_is_enough_and_one_less_is_refused():
    with pytest.raises(InputError) as info:
        select_evidence("试用期", HITS, budget=10, label=law_label)
    need = int(re.search(r"at least (\d+)", str(info.value)).group(1))
    assert need == estimate_tokens("[1] " + law_label(HITS[0])) + 2 + 2 + MIN_CLAUSE_TOKENS  # name, separators, clause
    assert info.value.field == "evidence_tokens"
    assert str(info.value).startswith("evidence_tokens = 10 is too small for any evidence")
    assert f"need about {need} tokens" in str(info.value) and "(a few hundred keeps several articles)" in str(info.value)
    assert select_evidence("试用期", HITS, budget=need, label=law_label).evidence
    with pytest.raises(InputError) as info:
        select_evidence("试用期", HITS, budget=need - 1, label=law_label, setting="evidence budget")
    assert info.value.field == "evidence budget" and str(info.value).startswith(f"evidence budget = {need - 1} ")


def test_no_hits_is_an_empty_selection_of_the_budget():
    assert select_evidence("试用期", [], budget=300, label=title) == Selection((), 300, 0, (), ())


LONE = "用人单位应当依法为劳动者缴纳社会保险费并按月足额支付劳动报酬。"


def test_a_lone_clause_is_whole_at_exactly_its_cost_and_cut_to_the_rest_one_token_below():
    t = estimate_tokens(LONE)
    at = header(1) + 2 + t
    sel = select_evidence("社会保险", [_hit(1, LONE)], budget=at, label=title)
    assert sel.evidence[0].text == LONE and sel.tokens == header(1) + t <= at
    assert sel.dropped == () and sel.notes == () and sel.budget == at
    below = select_evidence("社会保险", [_hit(1, LONE)], budget=at - 1, label=title)
    assert below.evidence[0].text == cut_to_tokens(LONE, at - 1 - header(1) - 2) and below.tokens <= at - 1


FITS = "用人单位应当依法为劳动者缴纳社会保险费并按。"  # cut to its own estimate, it would cost a token less


def test_a_clause_that_exactly_fills_its_fair_share_stays_whole_and_the_next_article_gets_the_rest():
    t = estimate_tokens(FITS)
    assert estimate_tokens(cut_to_tokens(FITS, t)) < t
    budget = 2 * (t + header(1))  # each article's share is budget // 2 - its name: exactly this clause
    long = "劳动者" + "应当遵守用人单位依法制定的规章制度" * 4 + "。"
    sel = select_evidence("社会保险 规章制度", [_hit(1, FITS), _hit(2, long)], budget=budget, label=title)
    assert sel.evidence[0].text == FITS
    rest = budget - (header(1) + t + 2) - header(2) - 2
    assert sel.evidence[1].text == cut_to_tokens(long, rest) and sel.tokens <= budget


def test_a_long_clause_cut_to_its_share_is_made_whole_when_the_budget_allows_it_exactly():
    long = "劳动者" + "应当遵守用人单位依法制定的规章制度" * 4 + "。"
    short = "劳动者应当按时上班打卡。"
    t1, t2 = estimate_tokens(long), estimate_tokens(short)
    exact = header(1) + t1 + 2 + header(2) + t2 + 2  # what both cost whole
    assert t1 > exact // 2 - header(1)  # more than its share: pass 1 cuts it
    hits = [_hit(1, long), _hit(2, short)]
    sel = select_evidence("规章制度", hits, budget=exact, label=title)
    assert [e.text for e in sel.evidence] == [long, short] and sel.tokens <= exact
    below = select_evidence("规章制度", hits, budget=exact - 1, label=title)
    assert [e.text for e in below.evidence] == [cut_to_tokens(long, (exact - 1) // 2 - header(1)), short]


TWO = "劳动者应当遵守劳动纪律。用人单位应当支付工资。"
TWO_LINES = "劳动者应当遵守劳动纪律。\n用人单位应当支付工资。"


@pytest.mark.parametrize("text, label_cost", [(TWO, 0), (TWO_LINES, 3)], ids=["same paragraph", "next paragraph"])
def test_a_further_clause_costs_its_tokens_one_separator_and_its_paragraph_label(text, label_cost):
    first, second = [c for _, c in split_clauses(text)]
    exact = header(1) + estimate_tokens(first) + 2 + estimate_tokens(second) + 1 + label_cost
    sel = select_evidence("劳动纪律", [_hit(1, text)], budget=exact, label=title)
    assert sel.evidence[0].text == first + ("第二款：" if label_cost else "") + second
    assert sel.evidence[0].complete and sel.tokens <= exact
    below = select_evidence("劳动纪律", [_hit(1, text)], budget=exact - 1, label=title)
    assert below.evidence[0].text == first + GAP and below.evidence[0].clauses_kept == 1


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(0, 200), st.sampled_from(["zh", "en"]))
def test_the_selection_never_exceeds_its_budget(articles, extra, lang):
    zh = ["劳动者应当遵守劳动纪律。", "用人单位应当按月足额支付工资；不得克扣。", "（一）加班的；", "\n"]
    en = ["The employer shall pay wages monthly. ", "The worker may (a) resign; ", "It is final. ", "\n"]
    parts = zh if lang == "zh" else en
    hits = [_hit(i + 1, "".join(parts[(i + k) % 4] for k in range(2 + n * 3))) for i, n in enumerate(articles)]
    need = header(1) + 2 + MIN_CLAUSE_TOKENS
    sel = select_evidence("工资 克扣 wages resign", hits, budget=need + extra, label=title, lang=lang)
    assert sel.tokens <= need + extra and sel.tokens == sum(e.tokens for e in sel.evidence)
    assert set(kept(sel)) | set(sel.dropped) == {h.id for h in hits} and not set(kept(sel)) & set(sel.dropped)


def test_each_evidence_counts_its_numbered_name_and_text():
    hits = [_hit(i, f"第{i}条规定的内容在此。", "Art") for i in range(1, 11)]  # "[10] Art" costs one more than "[9] Art"
    sel = select_evidence("规定", hits, budget=10_000, label=title)
    assert kept(sel) == [str(i) for i in range(1, 11)]
    assert [e.tokens for e in sel.evidence] == [header(n) + estimate_tokens(e.text)
                                               for n, e in enumerate(sel.evidence, 1)]
    assert header(10) == header(9) + 1 and sel.tokens == sum(e.tokens for e in sel.evidence)


# -- which articles are left out ------------------------------------------------------------------------------------

def test_an_article_without_text_is_left_out_and_the_later_ones_kept():
    sel = select_evidence("工资", [_hit(1, "  \n"), _hit(2, TWO)], budget=300, label=title)
    assert kept(sel) == ["2"] and sel.dropped == ("1",)
    assert sel.notes == ("1 retrieved article(s) left out: the evidence budget of 300 tokens was used up",)


def test_an_article_whose_long_name_does_not_fit_is_skipped_for_a_later_one_that_does():
    long_name = "A very long article name here"
    body = "用人单位应当按月足额支付劳动报酬，不得克扣或者无故拖欠。"
    hits = [_hit(1, body), _hit(2, body, long_name), _hit(3, body)]
    assert header(2, long_name) > header(3) + 6
    budget = header(1) + 2 + MIN_CLAUSE_TOKENS + header(3) + 2 + MIN_CLAUSE_TOKENS + 2

    def name(h):
        return h.document.title

    sel = select_evidence("劳动报酬", hits, budget=budget, label=name)
    assert kept(sel) == ["1", "3"] and sel.dropped == ("2",) and sel.tokens <= budget
    assert sel.notes == (f"1 retrieved article(s) left out: the evidence budget of {budget} tokens was used up",)


# -- how kept clauses are written out -------------------------------------------------------------------------------

ART = "第一句规定甲事项。第二句规定乙事项。\n第三句规定丙事项。第四句规定丁事项。第五句规定戊事项。"


def test_a_whole_article_labels_its_second_paragraph_once():
    sel = select_evidence("丙事项", [_hit(1, ART)], budget=1000, label=title)
    assert sel.evidence[0].text == "第一句规定甲事项。第二句规定乙事项。第二款：第三句规定丙事项。第四句规定丁事项。第五句规定戊事项。"
    assert (sel.evidence[0].clauses_kept, sel.evidence[0].clauses_total) == (5, 5)


def test_gaps_mark_left_out_text_and_a_paragraph_is_labelled_again_after_a_gap():
    e = select_evidence("丙事项", [_hit(1, ART)], budget=20, label=title).evidence[0]
    assert e.text == "…第二款：第三句规定丙事项。…" and not e.complete
    e = select_evidence("戊事项 丙事项", [_hit(1, ART)], budget=30, label=title).evidence[0]
    assert e.text == "…第二款：第三句规定丙事项。…第二款：第五句规定戊事项。"  # the better two, in article order
    e = select_evidence("乙事项", [_hit(1, ART)], budget=30, label=title).evidence[0]
    assert e.text == "第一句规定甲事项。第二句规定乙事项。…"


def test_one_line_of_two_sentences_is_two_clauses_in_either_language():
    zh = select_evidence("试用期", [_hit(1, "试用期不得超过六个月。试用期包含在合同期限内。")], budget=500, label=title)
    en = select_evidence("appeal", [_hit(1, "A person may appeal. The court shall decide.")], budget=500,
                         label=title, lang="en")
    assert zh.evidence[0].clauses_total == 2 and en.evidence[0].clauses_total == 2


EN = ("A person may appeal. The court shall decide.\n"
      "The appeal is heard in writing. It is final and binding on every party to the appeal.")
LAST = "It is final and binding on every party to the appeal."


def test_english_evidence_is_spaced_and_labels_its_paragraphs():
    whole = select_evidence("appeal", [_hit(1, EN)], budget=1000, label=title, lang="en").evidence[0]
    assert whole.text == ("A person may appeal. The court shall decide. para. 2: The appeal is heard in writing. "
                          + LAST)
    part = select_evidence("final binding", [_hit(1, EN)], budget=header(1) + 2 + estimate_tokens(LAST),
                           label=title, lang="en").evidence[0]
    assert part.text == "… para. 2: " + LAST


def test_paragraphs_past_the_tenth_are_labelled_with_digits():
    text = "\n".join(f"第{i}段规定事项。" for i in range(1, 13))
    out = select_evidence("事项", [_hit(1, text)], budget=10_000, label=title).evidence[0].text
    assert "第九款：第9段" in out and "第十款：第10段" in out and "第11款：第11段" in out and out.endswith("第12款：第12段规定事项。")


def test_the_prompt_block_numbers_each_source_and_separates_them_by_a_blank_line():
    sel = Selection((Evidence(HITS[0], "《甲法》第一条", "正文一", 9, 1, 1), Evidence(HITS[1], "《乙法》第二条", "正文二", 9, 1, 2)),
                    100, 18)
    assert format_evidence(sel) == "[1] 《甲法》第一条\n正文一\n\n[2] 《乙法》第二条\n正文二"


# -- cutting to a number of tokens ----------------------------------------------------------------------------------

TEXTS = st.text(st.sampled_from("劳动合同abc D,。 1"), max_size=60)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(TEXTS, st.integers(0, 30))
def test_a_cut_keeps_the_longest_beginning_whose_estimate_and_the_ellipsis_fit(text, tokens):
    out = cut_to_tokens(text, tokens)
    assert out.endswith(GAP) and text.startswith(out[:-1])
    head = out[:-1]
    assert head == "" or estimate_tokens(head) + 1 <= tokens
    if len(head) < len(text):
        assert estimate_tokens(text[:len(head) + 1]) + 1 > tokens


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(TEXTS, st.integers(0, 30))
def test_keeping_the_end_keeps_the_longest_ending_whose_estimate_and_the_ellipsis_fit(text, tokens):
    out = keep_last_tokens(text, tokens)
    assert out.startswith(GAP) and text.endswith(out[1:])
    tail = out[1:]
    assert tail == "" or estimate_tokens(tail) + 1 <= tokens
    if len(tail) < len(text):
        assert estimate_tokens(text[len(text) - len(tail) - 1:]) + 1 > tokens


def test_keeping_the_end_of_a_question():
    q = "前面很长的背景介绍。" * 5 + "最后的问题是什么？"
    out = keep_last_tokens(q, 8)
    assert out == GAP + q[-(len(out) - 1):] and out.endswith("最后的问题是什么？") and estimate_tokens(out) <= 9


# -- the step prompt_evidence records -------------------------------------------------------------------------------

def test_the_step_records_the_budget_the_sources_and_what_was_kept_cut_and_left_out():
    hits = [_hit(1, ART), _hit(2, ART), _hit(3, "  ")]
    block, step = prompt_evidence("丙事项", hits, budget=40, lang="zh", agent="consult", label=title)
    sel = select_evidence("丙事项", hits, budget=40, label=title)
    assert block == format_evidence(sel)
    assert step == Step("consult", "select_evidence", input={"budget": 40, "sources": ["1", "2", "3"]},
                        output={"tokens": sel.tokens, "kept": ["1", "2"],
                                "clauses": [[e.clauses_kept, e.clauses_total] for e in sel.evidence],
                                "dropped": ["3"], "notes": list(sel.notes)})
    assert sel.notes and step.output["clauses"][0][1] == 5


def test_prompt_evidence_splits_and_labels_in_the_language_it_is_given():
    zh, _ = prompt_evidence("丙事项", [_hit(1, ART)], budget=1000, lang="zh", agent="answer", label=title)
    assert zh.endswith("第二款：第三句规定丙事项。第四句规定丁事项。第五句规定戊事项。")
    en, _ = prompt_evidence("appeal", [_hit(1, EN)], budget=1000, lang="en", agent="answer", label=title)
    assert en.endswith("The court shall decide. para. 2: The appeal is heard in writing. " + LAST)


def test_prompt_evidence_matches_with_the_terms_it_is_given():
    def synonyms(text: str) -> list[str]:  # "wage" asks for the clause about 工资
        return ["工资"] if ("工资" in text or "wage" in text) else []

    block, _ = prompt_evidence("wage", [_hit(1, TWO)], budget=header(1) + 2 + 12, lang="zh", agent="answer",
                               label=title, terms=synonyms)
    assert block == "[1] Art\n" + GAP + "用人单位应当支付工资。"


def test_prompt_evidence_names_its_setting_when_the_budget_is_too_small():
    with pytest.raises(InputError) as info:
        prompt_evidence("工资", [_hit(1, TWO)], budget=5, lang="zh", agent="answer", label=title)
    assert info.value.field == "evidence_tokens (--evidence-tokens)"
    assert str(info.value).startswith("evidence_tokens (--evidence-tokens) = 5 is too small")
    with pytest.raises(InputError) as info:
        prompt_evidence("工资", [_hit(1, TWO)], budget=5, lang="zh", agent="answer", label=title, setting="budget")
    assert info.value.field == "budget"
