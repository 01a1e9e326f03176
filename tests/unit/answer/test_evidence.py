"""Evidence selection: articles cut to the clauses that match the question, under a token budget."""

from __future__ import annotations

import pytest

from legalrag.answer.question import answer_question
from legalrag.answer.engine import AnswerSettings
from legalrag.answer.prompt import build_messages
from legalrag.serialize import answer_to_dict
from legalrag.errors import InputError
from legalrag.answer.evidence import GAP, format_evidence, select_evidence
from legalrag.clauses import split_clauses
from legalrag.llm.tokens import estimate_message_tokens, estimate_tokens
from legalrag.testing import ScriptedLLM
from legalrag.types import Document, Hit

ART_1 = ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。\n"
         "用人单位违反本法规定不与劳动者订立无固定期限劳动合同的，自应当订立无固定期限劳动合同之日起向劳动者每月支付二倍的工资。")
ART_2 = ("下列行为不属于人民法院行政诉讼的受案范围：\n（一）调解行为以及法律规定的仲裁行为；\n（二）行政指导行为；\n"
         "（三）行政机关作出的不产生外部法律效力的行为。")
ART_3 = "劳动者在试用期间被证明不符合录用条件的，用人单位可以解除劳动合同。用人单位应当向劳动者说明理由。"


def _hit(i: int, law: str, label: str, text: str, article: str = "") -> Hit:
    doc = Document(id=str(i), text=text, title=f"{law}{label}",
                   metadata={"law": law, "article_label": label, "article": article})
    return Hit(document=doc, score=1.0 / i, rank=i)


HITS = [_hit(1, "劳动合同法", "第八十二条", ART_1, "82"), _hit(2, "行政诉讼法解释", "第一条", ART_2, "1"),
        _hit(3, "劳动合同法", "第三十九条", ART_3, "39")]


class TinyIndex:
    """What answer_question reads of an index when retrieval is given: its documents and language."""

    manifest = {"lang": "zh"}
    documents = [h.document for h in HITS]


def label(h: Hit) -> str:
    return f"《{h.document.metadata['law']}》{h.document.metadata['article_label']}"


def test_split_clauses_keeps_paragraphs_and_item_numbers():
    assert split_clauses(ART_1) == [(1, ART_1.splitlines()[0]), (2, ART_1.splitlines()[1])]
    clauses = split_clauses(ART_2)
    assert [p for p, _ in clauses] == [1, 1, 1, 1]  # items belong to the paragraph that lists them
    assert [c[:3] for _, c in clauses][1:] == ["（一）", "（二）", "（三）"]
    assert split_clauses(ART_3) == [(1, "劳动者在试用期间被证明不符合录用条件的，用人单位可以解除劳动合同。"),
                                    (1, "用人单位应当向劳动者说明理由。")]
    en = split_clauses("A person may appeal. The court shall decide:\n(a) within 30 days; and\n(b) in writing.", "en")
    assert [p for p, _ in en] == [1, 1, 1, 1] and en[2][1].startswith("(a)")


def test_selection_keeps_every_article_name_and_its_best_clause_within_budget():
    q = "行政机关作出的不产生外部法律效力的行为能起诉吗？"
    sel = select_evidence(q, HITS, budget=90, label=label)
    assert [e.hit.id for e in sel.evidence] == ["1", "2", "3"] and not sel.dropped
    assert sel.tokens <= 90
    art2 = sel.evidence[1]
    assert "（三）行政机关作出的不产生外部法律效力的行为" in art2.text  # the matching item, with its number
    assert not art2.complete and GAP in art2.text
    block = format_evidence(sel)
    assert block.startswith("[1] 《劳动合同法》第八十二条\n") and "[2] 《行政诉讼法解释》第一条\n" in block
    assert HITS[1].document.text == ART_2  # the full text stays for the citation checker


def test_later_paragraph_is_labelled_and_a_large_budget_keeps_everything():
    q = "无固定期限劳动合同不签要付二倍工资吗"
    sel = select_evidence(q, HITS[:1], budget=40, label=label)
    assert sel.evidence[0].text.startswith(GAP + "第二款：用人单位违反本法规定不与劳动者订立无固定期限")
    whole = select_evidence(q, HITS, budget=10_000, label=label)
    assert all(e.complete and GAP not in e.text for e in whole.evidence)
    assert whole.evidence[0].text.replace("第二款：", "") == ART_1.replace("\n", "")


def test_budget_too_small_names_the_setting_and_a_tight_one_drops_articles():
    with pytest.raises(InputError, match="evidence_tokens.*too small for any evidence.*at least"):
        select_evidence("试用期", HITS, budget=10, label=label)
    sel = select_evidence("试用期 解除劳动合同", HITS, budget=40, label=label)
    assert sel.evidence and sel.dropped and sel.notes and sel.tokens <= 40


def test_long_best_clause_is_cut_not_dropped():
    long = _hit(1, "某法", "第一条", "用人单位" + "应当依法履行义务" * 60 + "。")
    sel = select_evidence("用人单位义务", [long], budget=40, label=label)
    assert sel.evidence[0].text.endswith(GAP) and sel.tokens <= 40


def test_question_longer_than_the_context_is_cut_with_a_note():
    question = "公司不签劳动合同怎么办？" * 200
    messages, steps = build_messages(question, HITS, lang="zh", n_ctx=512,
                                     settings=AnswerSettings(evidence_tokens=300, max_tokens=64))
    assert estimate_message_tokens(messages) + 64 <= 512
    assert steps[0].action == "cut_question" and "question was cut" in steps[0].output


def test_ask_selects_evidence_streams_and_reports_ttft():
    """The brief answer's evidence (the guided answer's is its quoted basis: tests/unit/answer/test_basis.py)."""
    llm = ScriptedLLM(["依据《劳动合同法》第八十二条，可以要求二倍工资。"])
    llm.n_ctx = 4096
    pieces = []
    answer = answer_question("不签书面劳动合同能要二倍工资吗？", index=TinyIndex(), llm=llm, search=lambda q, k: HITS,
                             evidence_tokens=60, on_text=pieces.append, style="brief")
    prompt = llm.last_prompt()
    evidence = prompt.split("可用的法条：")[1].split("问题：")[0]
    assert "《劳动合同法》第八十二条" in evidence and len(evidence) < sum(len(h.document.text) for h in HITS)
    assert prompt.index("问题：") > prompt.index("[1]")  # variable parts last: evidence, then the question
    assert pieces == [answer.text]
    d = answer_to_dict(answer)
    assert d["timings"]["ttft_s"] <= d["timings"]["total_s"]
    assert [s.action for s in answer.steps] == ["retrieve", "select_evidence", "generate", "check_citations"]
    assert [(c.resolved, c.in_retrieved) for c in answer.citations] == [(True, True)]
    with pytest.raises(InputError, match="evidence_tokens"):
        answer_question("试用期？", index=TinyIndex(), llm=llm, search=lambda q, k: HITS, evidence_tokens=5,
                        style="brief")


def test_fixed_instructions_are_a_common_prefix_of_every_ask_prompt():
    a, _ = build_messages("试用期多久？", HITS, lang="zh")
    b, _ = build_messages("不签合同怎么办？", HITS[1:], lang="zh")
    assert a[0] == b[0]  # the system message is identical, so the runtime's prompt cache keeps it
    common = next(i for i, (x, y) in enumerate(zip(a[1]["content"], b[1]["content"])) if x != y)
    assert common > 0


def test_estimate_is_near_the_real_tokenizer_scale():
    assert estimate_tokens("") == 0
    assert 60 <= estimate_tokens("中" * 100) <= 80
    assert 20 <= estimate_tokens("The court shall decide within thirty days in writing. " * 2) <= 40
