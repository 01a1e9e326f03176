"""Chinese article citations: ``<law title>第<N>条[之<M>][第<K>款][第<J>项]``.

Extraction rules (see :func:`extract_chinese`):

- A title is taken from ``《…》`` right before ``第`` (an issuer such as ``最高人民法院、最高人民检察院`` written
  before the marks is kept), or, without marks, from a known corpus title (the alias table) or a run of text
  ending in 法/条例/规定/解释/办法… after a verb such as 依照/根据/违反.
- A citation with no title right before it inherits the most recent title *in the same sentence*
  (sentences end at 。！？!? or a line break), so ``依照《刑法》第二百六十四条、第六十七条第三款`` cites two articles of
  the 刑法. With no title earlier in the sentence its ``law`` is None.
- ``第三款`` or ``第（二）项`` alone continues the previous citation when only a list separator (、，及和与或)
  lies between them: ``第六十七条第一款及第三款`` is 67(1) and 67(3). Otherwise such a fragment is not an
  article citation and is skipped.
- ``第…条`` inside ``《…》`` belongs to a title, not a citation.
- ``第一、三款`` and ``第（一）、（二）项`` expand to one citation per number. Ranges (第X条至第Y条) give their two
  ends only.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import ClassVar

from legalrag.citecheck.aliases import PRC, RELATIVE_TITLES, AliasTable
from legalrag.citecheck.base import CitationMatch
from legalrag.numerals import to_chinese, to_int

_NUM = r"[0-9０-９零〇一二两三四五六七八九十百千万]+"
_SEP = r"(?:[、，,]|及|和|与|或)"
_ITEM = rf"[（(]?{_NUM}[）)]?"
_UNIT = re.compile(  # 第 may be missing right after a title: 《刑法》三百零七条之一
    rf"(?:第|(?<=[》〉]))\s*(?P<art>{_NUM})\s*条(?:之(?P<sub>{_NUM}))?"
    rf"(?:第(?P<para>{_NUM}(?:{_SEP}{_NUM})*)款)?(?:第(?P<item>{_ITEM}(?:{_SEP}{_ITEM})*)项)?"
    rf"|第(?P<para_only>{_NUM}(?:{_SEP}{_NUM})*)款(?:第(?P<item_p>{_ITEM}(?:{_SEP}{_ITEM})*)项)?"
    rf"|第(?P<item_only>{_ITEM}(?:{_SEP}{_ITEM})*)项"
)
_MAX_TITLE = 160  # characters looked at before 第 to find a title (the longest corpus titles are ~70)
_SENTENCE_END = re.compile(r"[。！？!?\n\r]")
_LIST_GAP = re.compile(r"(?:[\s、，,;；]|以及|及|和|与|或)*")
_CJK_RUN_END = re.compile(r"[\u4e00-\u9fff（）()《》〈〉、0-9 ]+$")  # titles hold 、 and years: 宪法修正案（1988年）
# Other bracket styles seen in judgments (﹤…﹥, ＜…＞) are read as 〈…〉; the replacement keeps every offset.
_BRACKETS = str.maketrans("﹤﹥＜＞()", "〈〉〈〉（）")  # and half-width parentheses as full-width: 解释(一) = 解释（一）
_LAW_SUFFIX = re.compile(r"(?:法典|法|条例|规定|解释|办法|规则|细则|决定|通则|公约|章程)(?:（[^（）]{1,8}）)?$")
_TRIGGER = re.compile(r"依照|依据|根据|按照|违反|适用|参照|比照|触犯|符合|援引|引用|对照|以及|及|与|或|了|和(?!国)"
                      r"|然后|并且|而且|同时|据此|应当|可以|是|在|由|将|被")
_TRIGGER_AT_END = re.compile(rf"(?:{_TRIGGER.pattern})$")
_AFTER_TITLE = re.compile(r"[》〉]\s*(?:[（(][^（）()《》]{1,20}[）)]|[中的在])\s*$")
_ISSUERS = r"(?:最高人民法院|最高人民检察院|公安部|司法部|国家安全部|国务院)"
_ISSUER_BEFORE = re.compile(rf"(?:{_ISSUERS}[、和与\s]?)+$")
_ISSUED_TITLE = re.compile(rf"{_ISSUERS}(?:[、和与]?{_ISSUERS})*关于.+$")


@dataclass(frozen=True)
class ChineseCitation:
    """第<article>条[之<sub_article>][第<paragraph>款][第<item>项] of ``law`` (as written, without 《》)."""

    law: str | None
    article: int
    sub_article: int | None = None
    paragraph: int | None = None
    item: int | None = None
    system: ClassVar[str] = "zh"

    @property
    def article_key(self) -> str:
        """``"264"`` or ``"120-1"`` for 第一百二十条之一: the form of ``Document.metadata["article"]``."""
        return f"{self.article}-{self.sub_article}" if self.sub_article else str(self.article)

    @property
    def article_label(self) -> str:
        """``第一百二十条之一``."""
        sub = f"之{to_chinese(self.sub_article)}" if self.sub_article else ""
        return f"第{to_chinese(self.article)}条{sub}"

    def canonical(self, law: str | None = None, *, brackets: bool = False) -> str:
        """Official style, e.g. ``中华人民共和国刑法第六十七条第三款`` (``brackets=True``: ``《…》第…``)."""
        title = law if law is not None else (self.law or "")
        if title and brackets:  # marks inside marks become 〈〉: 《最高人民法院关于适用〈刑事诉讼法〉的解释》
            title = "《" + title.replace("《", "〈").replace("》", "〉") + "》"
        out = title + self.article_label
        if self.paragraph is not None:
            out += f"第{to_chinese(self.paragraph)}款"
        if self.item is not None:
            out += f"第{to_chinese(self.item)}项"
        return out

    def __str__(self) -> str:
        return self.canonical()


def parse_chinese(text: str, aliases: AliasTable | None = None) -> ChineseCitation:
    """Parse one whole citation such as ``《刑法》第二百六十四条之一第二款``; raise ValueError otherwise."""
    s = text.strip()
    found = extract_chinese(s, aliases)
    if len(found) != 1 or found[0].span != (0, len(s)):
        raise ValueError(f"not a single Chinese article citation: {text!r}")
    return found[0].citation  # type: ignore[return-value]


def extract_chinese(text: str, aliases: AliasTable | None = None) -> list[CitationMatch]:
    """Every Chinese article citation in ``text``, in order (rules in the module docstring)."""
    original, text = text, text.translate(_BRACKETS)
    out: list[CitationMatch] = []
    law: str | None = None
    prev: ChineseCitation | None = None
    prev_end = 0
    opens = [i for i, ch in enumerate(text) if ch == "《"]
    closes = [i for i, ch in enumerate(text) if ch == "》"]
    for m in _UNIT.finditer(text):
        if _inside_title(opens, closes, m.start()):
            continue  # 《最高人民法院关于适用刑法第十二条几个问题的解释》
        gap = text[prev_end:m.start()]
        if _SENTENCE_END.search(gap):
            law, prev = None, None
        continues = prev is not None and _LIST_GAP.fullmatch(gap) is not None
        title, title_start = _title_before(text, prev_end, m.start(), aliases)
        if title is not None:
            law, start, inherited, continues = title, title_start, False, False
        else:
            start, inherited = m.start(), law is not None
        prev_end = m.end()
        if m.group("art"):
            article, sub = to_int(m.group("art")), _opt_int(m.group("sub"))
            paras, items = _numbers(m.group("para")), _numbers(m.group("item"))
        elif continues and prev is not None:
            article, sub = prev.article, prev.sub_article
            if m.group("para_only"):
                paras, items = _numbers(m.group("para_only")), _numbers(m.group("item_p"))
            else:
                paras, items = [prev.paragraph], _numbers(m.group("item_only"))
        else:
            prev = None
            continue  # 第三款 in prose with no article before it: not an article citation
        for para in paras:
            for item in items:
                prev = ChineseCitation(law, article, sub, para, item)
                out.append(CitationMatch(prev, start, m.end(), original[start:m.end()], inherited))
    return out


def _inside_title(opens: list[int], closes: list[int], pos: int) -> bool:
    """Whether ``pos`` follows a 《 that is still open and near enough to be a title (a stray 《 is ignored)."""
    i = bisect.bisect(opens, pos) - 1
    if i < 0 or pos - opens[i] > _MAX_TITLE:
        return False
    return bisect.bisect(closes, pos) == bisect.bisect(closes, opens[i]) and bisect.bisect(closes, pos) < len(closes)


def _opt_int(s: str | None) -> int | None:
    return to_int(s) if s else None


def _numbers(group: str | None) -> list[int | None]:
    if not group:
        return [None]
    return [to_int(n) for n in re.findall(_NUM, group)]


def _title_before(text: str, lo: int, hi: int, aliases: AliasTable | None) -> tuple[str | None, int]:
    """The law title written right before position ``hi`` (not before ``lo``) and where it starts."""
    lo = max(lo, hi - _MAX_TITLE)  # titles are short; bounding the look-back keeps extraction linear
    before = text[lo:hi]
    stripped = before.rstrip()
    end = lo + len(stripped)
    after_title = _AFTER_TITLE.search(stripped)
    if after_title:  # 《工伤保险条例》（2010修订）第六十六条, 《民法典》中第一千二百二十一条
        stripped = stripped[:after_title.start() + 1]
    if stripped.endswith(("》", "〉")) and _matching_open(stripped) is None:
        stripped = stripped[:-1]  # a closing mark with no opening one (…的解释(一)》第三十二条): read as unbracketed
        end -= 1
    if stripped.endswith(("》", "〉")):
        open_at = _matching_open(stripped)
        if open_at is None:
            return None, hi
        title = stripped[open_at + 1:-1].replace("〈", "《").replace("〉", "》")
        start = lo + open_at
        issuer = _ISSUER_BEFORE.search(text[lo:start]) if title.startswith("关于") else None
        if issuer:
            title = re.sub(r"\s", "", issuer.group(0)) + title
            start = lo + issuer.start()
        return title, start
    run = _CJK_RUN_END.search(stripped)
    if not run:
        return None, hi
    words = run.group(0)
    title = aliases.title_ending_at(words) if aliases is not None else None
    if title is None:
        title = _relative_title(words) or _guess_title(words)
    if title is None:
        return None, hi
    return title, end - len(title)


def _relative_title(words: str) -> str | None:
    """本法, 该法, 同法... (因本法第二十六条: 本法). 同法 only as a word of its own: 劳动合同法 ends in 同法 but is not
    "the same law"."""
    for r in RELATIVE_TITLES:
        if words.endswith(r):
            before = words[:-len(r)]
            if r != "同法" or not before or not re.search(r"[\u4e00-\u9fff]$", before) or \
                    _TRIGGER_AT_END.search(before):
                return r
    return None


def _guess_title(words: str) -> str | None:
    """An unbracketed title not in the alias table: the words after the last verb, if they end like a law."""
    issued = _ISSUED_TITLE.search(words)
    if issued:  # 最高人民法院关于适用《刑事诉讼法》的解释, written without outer marks
        cand = issued.group(0).replace("〈", "《").replace("〉", "》")
    elif PRC in words:
        cand = words[words.rfind(PRC):]
    else:
        words = re.sub(r"^[0-9]+年(?:修订|修正)?的?", "", re.split(r"[、\s]", words)[-1])  # 1997年修订的刑法
        triggers = list(_TRIGGER.finditer(words))
        if triggers:
            cand = words[triggers[-1].end():]
        else:
            cand = words if len(words) <= 10 else ""
    if len(cand) >= 2 and _LAW_SUFFIX.search(cand) and cand not in ("方法", "办法", "规定", "决定", "解释"):
        return cand
    return None


def _matching_open(s: str) -> int | None:
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        ch = s[i]
        if ch in "》〉":
            depth += 1
        elif ch in "《〈":
            depth -= 1
            if depth == 0:
                return i
    return None
