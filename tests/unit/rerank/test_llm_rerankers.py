"""LLM rerankers: the index repair and log-probability scoring are pure and tested exhaustively here; one
end-to-end rerank per reranker runs the real embedded 0.5B model (``small_llm``)."""

from __future__ import annotations

import itertools
import math

import pytest

from legalrag.errors import InputError
from legalrag.llm.base import ChatResult, TokenLogprob
from legalrag.rerank.base import Reranker
from legalrag.rerank.llm_common import expected_digit, first_token_distribution, yes_probability
from legalrag.prompts import load_prompt, render_prompt
from legalrag.rerank.llm_listwise import LLMListwiseReranker, parse_index_list, repair_indices, window_starts
from legalrag.rerank.llm_pointwise import LLMPointwiseReranker, LLMYesNoReranker
from legalrag.types import Document, Hit


# ---- index repair (pure) -------------------------------------------------------------------------------

def test_clean_reply_is_kept_and_unselected_follow_in_prior_order():
    r = repair_indices([3, 1], 4)
    assert r.order == (2, 0, 1, 3)
    assert r.selected == 2 and r.missing == 2 and r.clean


def test_duplicates_out_of_range_and_non_integers_are_dropped_and_counted():
    r = repair_indices([2, 2, 0, 9, "x", None, 1.5, "4", "[1]", True], 4)
    assert r.order == (1, 3, 0, 2)
    assert (r.duplicates, r.out_of_range, r.not_integers) == (1, 2, 4)
    assert not r.clean


def test_empty_reply_keeps_the_prior_order():
    r = repair_indices([], 5, found_list=False)
    assert r.order == tuple(range(5)) and r.selected == 0 and r.no_list and not r.clean


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_possible_short_reply_repairs_to_a_permutation(n):
    """Exhaustive over all replies of length <= n+1 drawn from -1..n+1: always a permutation of range(n), the
    valid first occurrences come first in reply order, the rest keep their prior order."""
    alphabet = list(range(-1, n + 2))
    for length in range(n + 2):
        for reply in itertools.product(alphabet, repeat=length):
            r = repair_indices(list(reply), n)
            assert sorted(r.order) == list(range(n))
            firsts = list(dict.fromkeys(v - 1 for v in reply if 1 <= v <= n))
            assert list(r.order[: len(firsts)]) == firsts
            rest = list(r.order[len(firsts):])
            assert rest == sorted(rest)


def test_zero_based_option():
    assert repair_indices([0, 2], 3, one_based=False).order == (0, 2, 1)


@pytest.mark.parametrize("text,items,found", [
    ("[3, 1, 2]", [3, 1, 2], True),
    ('Reasoning: [1] looks weak.\nFinal: [2, 3]', [2, 3], True),
    ('{"ranking": [2, 1]}', [2, 1], True),
    ("[3, 1, 2", [3, 1, 2], False),  # cut off by max_tokens: integers still count
    ('["2", "1"]', ["2", "1"], True),
    ("[2 1 3]", ["2", "1", "3"], True),
    ("3 > 1 > 2", [3, 1, 2], False),
    ("no idea", [], False),
])
def test_parse_index_list(text, items, found):
    assert parse_index_list(text) == (items, found)


def test_window_spans_cover_everything_back_to_front():
    assert window_starts(0, 4, 2) == []
    assert window_starts(3, 4, 2) == [(0, 3)]
    assert window_starts(10, 4, 2) == [(6, 10), (4, 8), (2, 6), (0, 4)]
    assert window_starts(9, 4, 3) == [(5, 9), (2, 6), (0, 4)]
    assert window_starts(3, 2, 2) == [(1, 3), (0, 2)]
    for n, w, s in itertools.product(range(1, 30), range(2, 8), range(1, 8)):
        if s > w:
            continue
        spans = window_starts(n, w, s)
        assert spans[-1][0] == 0 and spans[0][1] == n
        covered = set().union(*(range(a, b) for a, b in spans))
        assert covered == set(range(n))
        # consecutive windows overlap, so an item can travel from the bottom to the top in one pass
        if s < w:
            assert all(b2 > a1 for (a1, _), (_, b2) in zip(spans, spans[1:]))
        assert all(b - a == min(w, n) for a, b in spans)


def test_constructor_checks_arguments():
    with pytest.raises(InputError):
        LLMListwiseReranker(None, window=1)
    with pytest.raises(InputError):
        LLMListwiseReranker(None, window=4, step=5)
    with pytest.raises(InputError):
        LLMPointwiseReranker(None, prompts=("fr",))
    with pytest.raises(InputError):
        LLMPointwiseReranker(None, prompts=())


# ---- first-token scoring (pure) ------------------------------------------------------------------------

def _result(token: str, top: dict[str, float], text: str | None = None) -> ChatResult:
    return ChatResult(text=token if text is None else text,
                      logprobs=(TokenLogprob(token, top.get(token, -0.1), top),))


def test_expected_digit_is_the_mean_over_digit_tokens_renormalised():
    probs = first_token_distribution(_result("7", {"7": math.log(0.5), " 8": math.log(0.3), "x": math.log(0.2)}))
    assert probs["8"] == pytest.approx(0.3)
    assert expected_digit(probs) == pytest.approx((7 * 0.5 + 8 * 0.3) / 0.8)


def test_expected_digit_falls_back_to_the_text_then_none():
    assert expected_digit({"x": 1.0}, "score 6") == 6.0
    assert expected_digit({}, "none") is None


def test_yes_probability():
    probs = first_token_distribution(_result("是", {"是": math.log(0.6), "否": math.log(0.2), "Yes": math.log(0.1)}))
    assert yes_probability(probs) == pytest.approx(0.7 / 0.9)
    assert yes_probability({}, "No, it does not") == 0.0
    assert yes_probability({}, "yes") == 1.0
    assert yes_probability({"maybe": 1.0}, "maybe") is None


def test_templates_render_and_report_missing_variables():
    assert set(load_prompt("mas_rerank_pointwise_zh").variables) == {"query", "article"}
    msgs = render_prompt("mas_rerank_pointwise_en", query="Q?", article="A")
    assert [m["role"] for m in msgs] == ["system", "user"] and "Q?" in msgs[1]["content"]
    with pytest.raises(InputError, match="missing"):
        render_prompt("mas_rerank_pointwise_en", query="Q?")
    with pytest.raises(InputError, match="no prompt template"):
        render_prompt("does_not_exist")


# ---- real embedded model -------------------------------------------------------------------------------

DOCS = [
    Document("d1", "故意杀人的，处死刑、无期徒刑或者十年以上有期徒刑。", "中华人民共和国刑法第二百三十二条"),
    Document("d2", "当事人一方不履行合同义务的，应当承担继续履行、采取补救措施或者赔偿损失等违约责任。",
             "中华人民共和国民法典第五百七十七条"),
    Document("d3", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑。",
             "中华人民共和国刑法第二百六十四条"),
]
QUERY = "偷了别人的手机会被判刑吗？"



def _hits() -> list[Hit]:
    return [Hit(d, 1.0 / i, i, "bm25") for i, d in enumerate(DOCS, 1)]


@pytest.mark.llm
@pytest.mark.parametrize("make", [
    lambda llm: LLMPointwiseReranker(llm, prompts=("zh", "en"), max_chars=80),
    lambda llm: LLMYesNoReranker(llm, max_chars=80),
    lambda llm: LLMListwiseReranker(llm, window=2, step=1, max_chars=60),
], ids=["pointwise", "yesno", "listwise"])
def test_end_to_end_rerank_with_the_embedded_model(llm, make):
    reranker = make(llm)
    assert isinstance(reranker, Reranker)
    out = reranker.rerank(QUERY, _hits(), k=2)
    assert len(out) == 2 and [h.rank for h in out] == [1, 2]
    assert {h.id for h in out} <= {"d1", "d2", "d3"} and len({h.id for h in out}) == 2
    assert all(h.retriever == reranker.name for h in out)
    assert out[0].score >= out[1].score
    assert reranker.stats.usage.calls >= 2 and reranker.stats.usage.total_tokens > 0
    if isinstance(reranker, LLMListwiseReranker):
        assert reranker.stats.usage.calls == 2  # windows (1,3) then (0,2)
    else:
        assert reranker.stats.unscored == 0  # the model's first token carries digit / yes-no alternatives
