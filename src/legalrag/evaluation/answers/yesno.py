"""Yes/no questions and the explicit conclusion of an answer to one, by rule.

A question is yes/no when it asks one (``吗？``, ``是否``, ``能否``, ``可不可以``... or English "can/is/do..."
opening a question) and asks nothing else (no ``怎么``, ``什么``, ``多少``, "how", "what"...). The conclusion of
an answer is read where it is stated: the ``结论：`` / ``Conclusion:`` section when the answer has one, else
its first sentence, else its last. Within that span the leftmost explicit marker decides: a negated predicate
(``不可以``, ``不构成``, ``不足以``, ``无权``, ``没有``...) is *no*, a bare one (``可以``, ``构成``, ``有权``,
``应当``...) is *yes*; ``有效`` / ``无效`` are read against the predicate the question asks about. A span with
no marker is *unclear* (``None``), never guessed. How far the rule can be trusted is measured against hand
labels (``bench/data/answers-yesno-labels.jsonl``, docs/lab/answers.md).
"""

from __future__ import annotations

import re

_WH_ZH = re.compile(r"怎么|怎样|如何|什么|哪些|哪里|哪个|哪种|多少|多久|多长|几年|几个|几倍|为何|为什么|谁|区别")
_ASK_ZH = re.compile(r"吗[？?。！!\s]*$|吗[？?]|是否|能否|可否|有没有|是不是|能不能|可不可以|会不会|算不算|要不要|"
                     r"需不需要|该不该|有无|构不构成|属不属于")
_WH_EN = re.compile(r"\b(?:how|what|which|when|where|who|whom|why)\b", re.I)
_ASK_EN = re.compile(r"^\s*(?:can|could|may|must|is|are|am|was|were|do|does|did|will|would|should|shall|has|have)\b",
                     re.I)

_NEGATION = r"(?:不|没有|没|未|无|非|并非|并不|并未|不得|不会|不能|不应|不必|不再|尚不|均不|都不)"
# the question's cue rewritten to the predicate it asks about
_CUES = (("可不可以", "可以"), ("能不能", "能"), ("会不会", "会"), ("算不算", "算"), ("要不要", "要"),
         ("需不需要", "需要"), ("是不是", "是"), ("有没有", "有"), ("构不构成", "构成"), ("属不属于", "属于"),
         ("该不该", "应当"), ("能否", "能"), ("可否", "可以"), ("是否", ""), ("有无", "有"))
_PREDICATES = ("构成", "属于", "享有", "承担", "适用", "有权", "需要", "应当", "应该", "可以", "能够", "必须", "违法",
               "侵权", "有效", "无效", "撤销", "支持", "影响", "赔偿", "起诉", "继承", "获得", "犯罪", "判刑", "等同",
               "具有", "存在", "允许", "会", "能", "可", "要", "算", "是", "有")
_SAME = {"可以": ("可以", "能够", "有权", "能", "可"), "能": ("能", "能够", "可以", "有权", "可"),
         "可": ("可以", "能", "可"), "能够": ("能够", "能", "可以"), "需要": ("需要", "应当", "应", "必须", "要"),
         "要": ("要", "需要", "应当", "必须"), "应当": ("应当", "应该", "应", "需要", "必须"),
         "应该": ("应该", "应当", "应", "需要"), "会": ("会", "将")}
_DIRECT = re.compile(r"^\s*(?:(?P<neg>不(?:可以|能|会|是|用|需要|构成|属于|适用|行|对|一定)|没有|否)|"
                     r"(?P<pos>可以|能|会|是的|是|构成|属于|适用|需要|应当|有权|对))[。，,！!；;]")
_NEG_EN = re.compile(r"\b(?:no|not|cannot|can't|won't|isn't|aren't|doesn't|don't|didn't|never)\b", re.I)
_POS_EN = re.compile(r"\b(?:yes|can|may|must|is|are|does|do|will|should|shall|has|have|entitled|liable)\b", re.I)
_CONCLUSION = re.compile(r"(?:结论|Conclusion)\s*[：:]\s*(.+?)(?=\n\s*\S{1,12}[：:]|\n\s*\n|$)", re.S | re.I)
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
_GREETING = re.compile(r"^\s*(?:您好|你好|感谢您的提问|谢谢您的提问)[，,。！!\s]*")


def asked_predicate(question: str) -> str | None:
    """The predicate a yes/no question asks about (``可以``, ``构成``, ``需要``...), or None."""
    clauses = [c for c in re.split(r"[，,；;。？?！!]", question or "") if c.strip()]
    asking = [c for c in clauses if _ASK_ZH.search(c + "？") or "吗" in c] or clauses[-1:]
    for clause in asking:
        for cue, pred in _CUES:
            clause = clause.replace(cue, pred)
        clause = re.sub(r"要求|需要求|有关|有的|是指|只是|还是|但是|就是|是属于", "", clause)
        found = [(clause.find(p), -len(p), p) for p in _PREDICATES if p in clause]
        if found:
            return min(found)[2]
    return None


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks only for a yes or a no."""
    q = (question or "").strip()
    if _ASK_ZH.search(q):
        return not _WH_ZH.search(q)
    return bool(_ASK_EN.search(q) and q.rstrip().endswith("?") and not _WH_EN.search(q))


def _validity(question: str) -> str | None:
    if "无效" in question:
        return "无效"
    if "有效" in question:
        return "有效"
    return None


def span_polarity(span: str, question: str = "") -> str | None:
    """``yes``, ``no`` or None for one span: a direct answer opening it (``不适用。``, ``可以，``), else the first
    occurrence of the question's predicate (or a synonym), negated or not; ``有效`` / ``无效`` against the one
    the question asks about."""
    span = _GREETING.sub("", span or "")
    if not span.strip():
        return None
    if not re.search(r"[\u4e00-\u9fff]", span):
        neg, pos = _NEG_EN.search(span), _POS_EN.search(span)
        if neg and (not pos or neg.start() <= pos.start() + 8):
            return "no"
        return "yes" if pos else None
    m = _DIRECT.match(span)
    if m:
        return "no" if m.group("neg") else "yes"
    asked = _validity(question)
    if asked:
        for m in re.finditer(r"无效|有效", span):
            negated = bool(re.search(_NEGATION + r"(?:足以|会|能)?(?:导致|认定为?|属于|影响)?(?:合同|协议)?$", span[:m.start()]))
            said = m.group(0) if not negated else ("有效" if m.group(0) == "无效" else "无效")
            return "yes" if said == asked else "no"
    pred = asked_predicate(question)
    if pred is None:
        return None
    forms = "|".join(sorted(_SAME.get(pred, (pred,)), key=len, reverse=True))
    m = re.search(f"(?P<neg>{_NEGATION})?(?:足以|能够|会|再|被|得以)?(?:构成|认定为?|视为)?(?:{forms})(?!求)", span)
    if m is None:
        return None
    return "no" if m.group("neg") else "yes"


def conclusion_spans(text: str) -> list[str]:
    """Where an answer states its conclusion, in the order the rule reads them."""
    text = text or ""
    m = _CONCLUSION.search(text)
    if m:
        return [m.group(1)]
    sentences = [s.strip() for s in _SENTENCE.findall(_GREETING.sub("", text)) if s.strip()]
    return sentences[:2] + sentences[-1:] if len(sentences) > 2 else sentences


def conclusion_polarity(text: str, question: str = "") -> str | None:
    """The answer's explicit yes/no conclusion to ``question``, or None when it states none."""
    for span in conclusion_spans(text):
        p = span_polarity(span, question)
        if p is not None:
            return p
    return None
