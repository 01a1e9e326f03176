"""The legal basis of an answer: the selected articles, each with its decisive clause quoted verbatim, and the checks
that keep what the model writes inside what those quotes say.

The basis is printed, never generated. :func:`build_basis` takes the selector's choice (or, with selection off or
unavailable, the retrieval order), at most three articles named as the corpus names them (``citation_label``),
and quotes from each the clause that best matches the question (BM25 over the clauses of the basis's articles),
widened by :func:`legalrag.clauses.quote` to the exceptions of its rule (``但是…``, ``…除外``) and, for a numbered
item, preceded by the sentence that introduces the list. A question about making a claim (索赔, 起诉, 讨薪,
要求…支付 …) gets the limitation-period article (民法典第一百八十八条) when the index has it, so the deadline a
person needs comes from an article, not from the model's memory.

:func:`unquoted_amounts` is the number check: each period, amount or deadline the model states (三年, 十五日,
二倍, 5000元, 百分之二十) must appear in a quoted clause (or the question, which states the person's facts), or
follow from them by a computation the same sentence shows (满一个月的次日至满一年的前一日 → 一年 - 一个月 = 十一个月);
the rest is marked not from the law. :func:`fallback_text` is the honest answer when the law in hand does not
settle the question: the most relevant articles with their clauses and what to check, with no conclusion.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from legalrag.clauses import Clause, clauses, quote
from legalrag.numerals import to_int
from legalrag.types import Document, Hit, Quoted

MAX_BASIS = 3
# the support under which a conclusion is taken as not following from its quotes: the 10th percentile of the
# lawyers' conclusions against a gold article's decisive quote on the dev part of the STARD split (it refuses 8% of
# conclusions against a non-gold article's quote; the marks' threshold would refuse 78% of the gold pairs):
# bench/results/conclusion-floor.json, bench/answers/bench_conclusion_floor.py
CONCLUSION_FLOOR = 0.18
WHOLE_ARTICLE_CHARS = 90  # a one-paragraph article this short is quoted whole
MAX_SENTENCE_CHARS = 300  # a longer "；" sentence is quoted at its decisive clause only
LIMITATION_LAW, LIMITATION_ARTICLE = "中华人民共和国民法典", "188"
_CLAIM = re.compile(r"索赔|赔偿|起诉|告(?:他|她|它|公司|单位|老板|对方)|讨薪|讨回|讨要|追讨|追偿|追回|要回|欠(?:我|薪|款|钱)|"
                    r"拖欠|不给(?:钱|工资)|不发工资|不退|退还|返还|赔钱|违约金|仲裁|"
                    r"(?:要求|请求|让|叫)[^，。？！?]{0,12}(?:支付|赔|退|返还|给付|补偿|还钱|还款)")


# -- the basis -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Basis:
    """The quoted legal basis of one answer. ``selected``: the selector chose it (False: the retrieval order);
    ``low``: no candidate reached the selector's threshold (the quotes are then the most relevant articles of
    an honest fallback); ``threshold``: the selector's; ``notice``: why selection was not used, when it was not."""

    quotes: tuple[Quoted, ...]
    selected: bool = False
    low: bool = False
    threshold: float | None = None
    notice: str = ""

    @property
    def ids(self) -> list[str]:
        return [q.document_id for q in self.quotes]


def is_claim(question: str) -> bool:
    """Whether a question is about making a claim (asking for money, damages, a refund; suing), whose deadline
    is the limitation period."""
    return bool(_CLAIM.search(question or ""))


def limitation_article(documents: Iterable[Document]) -> Document | None:
    """The limitation-period article (民法典第一百八十八条) of a corpus, found by its law and article number."""
    for d in documents:
        md = d.metadata
        if md.get("law") == LIMITATION_LAW and str(md.get("article")) == LIMITATION_ARTICLE:
            return d
    return None


_QUANTITY_QUESTION = re.compile(r"多长|多久|多少|多大|几[年个天日月周倍次]|期限|时限|时效|最[多长少短高低]|比例|上限|下限|"
                                r"how (?:long|much|many)|deadline|within what", re.I)
QUANTITY_SHARE = 0.25  # a clause within this share of the best score that states a period or amount is preferred


def asks_quantity(question: str) -> bool:
    """Whether ``question`` asks for a period, an amount or a deadline (多长时间, 多少, 几个月, 最多…)."""
    return bool(_QUANTITY_QUESTION.search(question))


def _terms(lang: str) -> Callable[[str], list[str]]:
    from legalrag.answer.evidence import default_terms

    return default_terms(lang)


def decisive_quote(question: str, doc: Document, *, lang: str = "zh", probability: float | None = None,
                   role: str = "decisive", idf_pool: Sequence[Document] = (), quantity: bool = True,
                   list_item: bool = True) -> Quoted:
    """``doc``'s clause that best matches ``question`` (ties: the earliest; a question asking how long or how much
    prefers, among the clauses nearly as good, one that states a period or an amount), quoted verbatim with its
    rule's exceptions; a numbered item comes after the sentence that introduces its list; a short article is quoted
    whole; an exception that opens a list (…有下列情形之一的除外：) is quoted with the item that best matches the
    question. ``idf_pool``: the articles whose clauses weigh the terms (default: ``doc`` alone); ``quantity`` and
    ``list_item`` switch those two preferences off for comparison (``bench/answers/bench_quotes.py``)."""
    from legalrag.answer.evidence import _bm25_scores
    from legalrag.citecheck import citation_label

    text = doc.text
    parts = clauses(text, lang)
    label = citation_label(doc)
    body = text.strip()
    if not parts or (len(body) <= WHOLE_ARTICLE_CHARS and "\n" not in body):  # one short paragraph: all of it
        start = text.find(body) if body else 0
        return Quoted(doc.id, label, body, ((start, start + len(body)),), probability, role, 0)
    terms = _terms(lang)
    others = [d for d in idf_pool if d.id != doc.id]
    pool = parts + [c for d in others for c in clauses(d.text, lang)]  # doc's clauses first
    own = _bm25_scores(terms(question), [terms(c.text) for c in pool])[:len(parts)]
    if role == "limitation":  # the general period, whatever the question's words
        best = next((c for c in parts if "诉讼时效期间为" in c.text), parts[0])
    else:
        if quantity and asks_quantity(question) and len(own):  # 多长时间/多少/几个月: of the clauses nearly as good as the best,
            top = max(own)                         # the one that states a period or an amount answers it
            own = [o + (top * QUANTITY_SHARE if o >= top * (1 - QUANTITY_SHARE) and amounts(c.text) else 0.0)
                   for o, c in zip(own, parts)]
        best = max(zip(own, range(len(parts)), parts), key=lambda t: (t[0], -t[1]))[2]
    return _quoted(text, parts, best, lang, label, doc.id, probability, role, scores=own if list_item else None)


def _quoted(text: str, parts: list[Clause], best: Clause, lang: str, label: str, doc_id: str,
            probability: float | None, role: str, scores: Sequence[float] | None = ()) -> Quoted:
    q = quote(text, best, lang, parts=parts)
    i = parts.index(best)
    start, end = _sentence(parts, i)  # a clause cut at "；" is part of a sentence that states the rule
    if end - start > MAX_SENTENCE_CHARS:
        start, end = q.start, q.end
    spans = [(min(start, q.start), max(end, q.end))]
    if best.item:  # the sentence that opens the list (有下列情形之一的，…：) says what the item is an item of
        lead = next((c for c in reversed(parts[:i]) if not c.item and c.paragraph == best.paragraph), None)
        if lead is not None and lead.end <= q.start:
            spans.insert(0, (lead.start, lead.end))
    last = max(j for j, c in enumerate(parts) if c.end <= spans[-1][1])
    if scores is not None and text[:spans[-1][1]].rstrip().endswith(("：", ":")) and not best.item:  # 有下列情形之一的…：the list's item
        items = []                                                    # that matches the question says which case
        for j in range(last + 1, len(parts)):
            if not parts[j].item:
                break
            items.append(j)
        if items:
            pick = max(items, key=lambda j: (scores[j] if j < len(scores) else 0.0, -j))
            spans.append((parts[pick].start, parts[pick].end))
            last = pick
    nxt = parts[last + 1] if last + 1 < len(parts) else None
    if (nxt is not None and nxt.paragraph == best.paragraph and nxt.start >= spans[-1][1] and "另有规定" in nxt.text
            and len(nxt.text) <= 20):  # 法律另有规定的，依照其规定: the rule's own reservation
        spans[-1] = (spans[-1][0], nxt.end)
    pieces = [text[a:b] for a, b in spans]
    joined = pieces[0]
    for (_, prev_end), (a, _), piece in zip(spans, spans[1:], pieces[1:]):
        joined += ("" if a == prev_end else "…") + piece
    return Quoted(doc_id, label, joined, tuple(spans), probability, role, q.exceptions)


def _sentence(parts: list[Clause], i: int) -> tuple[int, int]:
    """The span of the whole sentence clause ``i`` belongs to: the clauses joined by "；" around it in its paragraph
    (numbered items are sentences of their own)."""
    ends = ("；", ";")
    lo = hi = i
    if not parts[i].item:
        while (lo > 0 and parts[lo - 1].paragraph == parts[i].paragraph and not parts[lo - 1].item
               and parts[lo - 1].text.endswith(ends)):
            lo -= 1
        while (hi + 1 < len(parts) and parts[hi + 1].paragraph == parts[i].paragraph and not parts[hi + 1].item
               and parts[hi].text.endswith(ends)):
            hi += 1
    return parts[lo].start, parts[hi].end


def build_basis(question: str, hits: Sequence[Hit], selection: Any = None, *, lang: str = "zh",
                limitation: Document | None = None, k: int = MAX_BASIS, notice: str = "") -> Basis:
    """The legal basis of an answer to ``question``: the selector's chosen articles (``selection``, an
    ``answer.select.ArticleSelection``), or, with none, the first ``k`` retrieved; each quoted by
    :func:`decisive_quote`. When the selection chose nothing (no candidate reached its threshold) the basis is
    its ``k`` best-ranked candidates, marked ``low``. ``limitation``: the limitation-period article, added
    (last, within ``k``) when the question is a claim."""
    k = max(1, min(k, MAX_BASIS))
    low = False
    if selection is not None:
        chosen = list(selection.chosen)[:k]
        if not chosen:
            chosen, low = list(selection.ranked)[:k], True
        picks = [(d.hit.document, float(d.probability)) for d in chosen]
    else:
        picks = [(h.document, None) for h in list(hits)[:k]]
    docs = [d for d, _ in picks]
    add_limitation = (limitation is not None and not low and is_claim(question)
                      and all(d.id != limitation.id for d in docs))
    if add_limitation and len(picks) >= k:
        picks = picks[:k - 1]
    pool = [d for d, _ in picks]
    quotes = [decisive_quote(question, d, lang=lang, probability=p, role="related" if low else "decisive",
                             idf_pool=pool) for d, p in picks]
    if add_limitation:
        quotes.append(decisive_quote(question, limitation, lang=lang, role="limitation"))
    return Basis(tuple(quotes), selected=selection is not None, low=low,
                 threshold=getattr(selection, "threshold", None), notice=notice)


def basis_block(basis: Basis, lang: str = "zh") -> str:
    """The legal basis as printed at the head of an answer, one numbered article a line with its quote."""
    head = "法律依据：" if lang == "zh" else "Legal basis:"
    lines = [head] + [f"[{i}] {q.citation}：“{q.text}”" if lang == "zh" else f"[{i}] {q.citation}: \"{q.text}\""
                      for i, q in enumerate(basis.quotes, 1)]
    return "\n".join(lines)


def prompt_quotes(basis: Basis) -> str:
    """The quotes as the model reads them (the prompt's only evidence)."""
    return "\n\n".join(f"[{i}] {q.citation}\n{q.text}" for i, q in enumerate(basis.quotes, 1))


def fallback_text(basis: Basis, lang: str = "zh", reason: str = "low_probability") -> str:
    """The honest answer: the most relevant articles with their clauses and what to check; no conclusion."""
    if lang != "zh":
        why = ("none of the retrieved provisions clearly decides this question"
               if reason == "low_probability" else "a conclusion could not be drawn from the quoted provisions alone")
        arts = "\n".join(f"[{i}] {q.citation}: \"{q.text}\"" for i, q in enumerate(basis.quotes, 1))
        return (f"I cannot give a conclusion: {why}. The most relevant provisions found:\n{arts}\n"
                "What to check:\n1. whether your facts meet the conditions these provisions state (who you are, what was "
                "agreed, when it happened);\n2. whether another law or a local rule governs your case;\n"
                "3. keep your documents and evidence, and ask a lawyer or a legal aid office with them.")
    why = "检索到的法条都不能明确决定这个问题" if reason == "low_probability" else "仅凭所引法条推不出确定的结论"
    arts = "\n".join(f"[{i}] {q.citation}：“{q.text}”" for i, q in enumerate(basis.quotes, 1))
    return (f"这个问题现在还不能下结论，因为{why}。与你的问题最相关的法条是：\n{arts}\n"
            "需要核对：\n1. 你的情况是否符合上面条文规定的条件（当事人是谁、双方怎么约定的、事情发生在什么时间）；\n"
            "2. 有没有其他法律或地方规定专门规定这种情况；\n"
            "3. 保留合同、聊天记录、付款凭证等证据，带着它们咨询律师或法律援助机构。")


# -- the number check ------------------------------------------------------------------------------------------

_NUM = r"(?:\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+|双|半)"
_AMOUNT = re.compile(r"百分之(?P<pct>" + _NUM + r")|(?P<n>" + _NUM + r")(?P<u>个工作日|个月|个星期|周年|万元|工作日|"
                     r"小时|年|月|日|天|周|星期|倍|元|%|％)")
# a calendar day (10月15日, 十月十五日, 十月15号) or month (十月份): a date, not a period of months or days
_CN_DAY = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})"
_MONTH_DAY = re.compile(r"(?<![\d一二三四五六七八九十个])" + _CN_DAY + r"月(?:" + _CN_DAY + r"[日号]|份)")
_SENTENCE = re.compile(r"[^。；;！？!?\n]+")
# named periods and sums: a value stated about one must come from a quoted sentence about the same one
TOPICS = ("诉讼时效", "仲裁时效", "时效", "试用期", "保修期", "保质期", "除斥期间", "经济补偿", "赔偿金", "违约金", "定金",
          "押金", "加班费", "年休假", "产假", "有期徒刑", "拘役", "拘留", "罚款", "罚金", "吊销")
# each unit's family and its size in that family's base (months for time)
_UNITS = {"年": ("time", 12.0), "周年": ("time", 12.0), "个月": ("time", 1.0), "月": ("time", 1.0),
          "周": ("time", 7 / 30), "星期": ("time", 7 / 30), "个星期": ("time", 7 / 30), "日": ("time", 1 / 30),
          "天": ("time", 1 / 30), "工作日": ("time", 1 / 30), "个工作日": ("time", 1 / 30),
          "小时": ("time", 1 / 720), "元": ("money", 1.0), "万元": ("money", 10_000.0), "倍": ("times", 1.0),
          "%": ("percent", 1.0), "％": ("percent", 1.0)}


@dataclass(frozen=True)
class Amount:
    """A period, amount or deadline as written (``text``), its value in its family's base, and where it is."""

    text: str
    family: str
    value: float
    start: int
    end: int


def _value(numeral: str) -> float | None:
    if numeral == "双":
        return 2.0
    if numeral == "半":
        return 0.5
    try:
        return float(numeral)
    except ValueError:
        pass
    try:
        return float(to_int(numeral))
    except ValueError:
        return None


def amounts(text: str) -> list[Amount]:
    """Every period, amount or deadline ``text`` states (article numbers, dates and counts of things excluded)."""
    dates = [m.span() for m in _MONTH_DAY.finditer(text)]
    out = []
    for m in _AMOUNT.finditer(text):
        if m.start() > 0 and text[m.start() - 1] == "第":
            continue  # 第三年: an ordinal, not a period
        if any(a <= m.start() < b for a, b in dates):
            continue
        if m.group("pct") is not None:
            v = _value(m.group("pct"))
            family, size = "percent", 1.0
        else:
            numeral, unit = m.group("n"), m.group("u")
            if numeral in ("半",) and unit not in ("年", "个月", "月", "小时"):
                continue
            v = _value(numeral)
            family, size = _UNITS[unit]
            if unit in ("年",) and v is not None and v >= 1900:
                continue  # a year (2023年), not a period
            if unit in ("日",) and m.group("n").isdigit() and text[max(0, m.start() - 3):m.start()].endswith("月"):
                continue
        if v is None:
            continue
        out.append(Amount(m.group(0), family, v * size, m.start(), m.end()))
    return out


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _derived(value: float, operands: Sequence[float]) -> bool:
    """Whether ``value`` is a sum, difference or product of two operands (or a multiple of one by a small count)."""
    for a, b in itertools.permutations(operands, 2):
        if _same(value, a + b) or _same(value, a - b) or _same(value, a * b):
            return True
    return False


def unquoted_amounts(text: str, quotes: Sequence[str], question: str = "") -> list[Amount]:
    """The periods, amounts and deadlines of ``text`` that neither appear in ``quotes`` (nor in ``question``,
    which states the person's own facts) nor follow from them by a computation its sentence shows: a value
    that is the sum, difference or product of two given values, with at least one of them written in the same
    sentence (满一个月的次日至满一年的前一日，最多十一个月: 12 - 1 = 11 months)."""
    sources = [m.group(0) for src in list(quotes) + [question] for m in _SENTENCE.finditer(src)]
    out = []
    for sentence in _SENTENCE.finditer(text):
        stated = amounts(sentence.group(0))
        if not stated:
            continue
        # a sentence about a named period (诉讼时效, 试用期 ...) takes its values from sentences on that period only
        topic = [t for t in TOPICS if t in sentence.group(0)]
        given: dict[str, list[float]] = {}
        for src in sources:
            if topic and not any(t in src for t in topic) and src not in question:
                continue
            for a in amounts(src):
                given.setdefault(a.family, []).append(a.value)
        times = given.get("times", [])  # a multiple (二倍) applies to an amount of any family
        for a in stated:
            pool = given.get(a.family, [])
            if any(_same(a.value, v) for v in pool):
                continue
            shown = [b.value for b in stated if b is not a and (b.family == a.family or b.family == "times")
                     and any(_same(b.value, v) for v in pool + times)]
            if shown and _derived(a.value, shown + pool + times):
                continue
            out.append(Amount(a.text, a.family, a.value, sentence.start() + a.start, sentence.start() + a.end))
    return out


def unquoted_note(found: Sequence[Amount], text: str, lang: str = "zh") -> str:
    """The line under an answer that marks each stated period or amount no quoted clause gives."""
    if not found:
        return ""
    items = []
    for a in found:
        s = next((m.group(0) for m in _SENTENCE.finditer(text) if m.start() <= a.start < m.end()), a.text)
        items.append(f"“{a.text}”（{s.strip()}）" if lang == "zh" else f"\"{a.text}\" ({s.strip()})")
    if lang == "zh":
        return "〔不是出自法条〕以下期间或金额在所引法条中没有，也不能由其推算，请勿依赖：" + "；".join(items)
    return "[not from the law] These periods or amounts are in no quoted provision and do not follow from one: " + \
        "; ".join(items)


__all__ = ["Amount", "Basis", "amounts", "basis_block", "build_basis", "decisive_quote", "fallback_text",
           "is_claim", "limitation_article", "prompt_quotes", "unquoted_amounts", "unquoted_note"]
