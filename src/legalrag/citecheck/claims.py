"""The claims of a text: for each citation, the words its article must support.

Rules (answers are written in sections 法律依据 / 结论 / 怎么做 / 何时找律师, see ``prompts/answer.md``; any
other text is one section):

- A sentence that cites articles and states something else besides is a claim for each article it cites
  (``kind="sentence"``); the claim is the sentence with its citations and bracketed titles taken out.
- A citation in the legal-basis section, or in a sentence that says nothing beyond the citation
  (``依据《劳动合同法》第八十二条。``), is not checked against its own words: a paraphrase of an article
  supports itself trivially. It is checked against the conclusion (``kind="conclusion"``): the sentences of the
  结论 section, or, without one, the uncited sentences after the basis; without either, the sentence before it.
- Sentences end at 。！？!?；; and line breaks.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Sequence

from legalrag.citecheck.base import CitationMatch

_SENTENCE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]*")
_BASIS = re.compile(r"^[\s#>*\-]*(?:\*\*)?\s*(?:法律依据|法条依据|相关法条|相关法律规定|依据|Legal basis|Basis)\s*(?:\*\*)?\s*[:：]",
                    re.IGNORECASE)
_CONCLUSION = re.compile(r"^[\s#>*\-]*(?:\*\*)?\s*(?:结论|Conclusion)\s*(?:\*\*)?\s*[:：]", re.IGNORECASE)
_OTHER_HEAD = re.compile(r"^[\s#>*\-]*(?:\*\*)?\s*(?:怎么做|何时找律师|What to do|When to see a lawyer)\s*(?:\*\*)?\s*[:：]",
                         re.IGNORECASE)
_TITLE = re.compile(r"《[^《》]*(?:《[^《》]*》[^《》]*)*》")
_HEAD_WORDS = re.compile(r"^[\s#>*\-]*(?:\*\*)?\s*(?:法律依据|法条依据|相关法条|相关法律规定|依据|结论|怎么做|何时找律师|Legal basis"
                         r"|Basis|Conclusion|What to do|When to see a lawyer)\s*(?:\*\*)?\s*[:：]", re.IGNORECASE)
_FILLER = re.compile(r"[\s\W_]|根据|依照|依据|按照|参照|适用|规定|之|的|见|以及|及|和|与|等|条文|法条|相关|有关|中华人民共和国|"
                     r"according|to|under|see|and|of|the|art|article", re.IGNORECASE)
_DANGLING = re.compile(r"(?:依照|依据|根据|按照|参照|另见|见)\s+(?:之规定|的规定|规定)?\s*[，,：:]?")
_EMPTY_BRACKETS = re.compile(r"[（(\[【]\s*[）)\]】]")
MIN_CLAIM_CHARS = 4  # fewer meaningful characters than this beside the citations: the sentence states nothing


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    section: str  # "basis", "conclusion", "other" or "" (no sections)


@dataclass(frozen=True)
class Claim:
    """What one citation's article must support: ``text``; ``kind`` "sentence" or "conclusion"; ``start``/``end``
    the citing sentence's span."""

    text: str
    kind: str
    start: int
    end: int


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with the section each belongs to."""
    out: list[Sentence] = []
    section = ""
    pos = 0
    for line in text.splitlines(keepends=True):
        if not line.strip():  # a blank line ends a section: the next paragraph is not the conclusion
            section = ""
        elif _BASIS.match(line):
            section = "basis"
        elif _CONCLUSION.match(line):
            section = "conclusion"
        elif _OTHER_HEAD.match(line):
            section = "other"
        for m in _SENTENCE.finditer(line):
            if m.group(0).strip():
                out.append(Sentence(pos + m.start(), pos + m.end(), section))
        pos += len(line)
    return out


def claim_words(sentence: str, spans: Sequence[tuple[int, int]] = (), offset: int = 0) -> str:
    """A sentence without its citations (``spans``, in the text's offsets), bracketed titles and heading."""
    chars = list(sentence)
    for s, e in spans:
        for i in range(max(s - offset, 0), min(e - offset, len(chars))):
            chars[i] = " "
    out = _TITLE.sub(" ", "".join(chars)).replace("|", " ")
    out = _HEAD_WORDS.sub(" ", out)
    out = _DANGLING.sub(" ", out)  # 根据 ， left where the citation was
    out = _EMPTY_BRACKETS.sub(" ", out)  # （ ） left where a bracketed citation was
    return " ".join(out.split()).strip(" ，,。；;：:")


def states_something(words: str) -> bool:
    return len(_FILLER.sub("", words)) >= MIN_CLAIM_CHARS


def find_claims(text: str, matches: Sequence[CitationMatch]) -> list[Claim | None]:
    """One claim per citation in ``matches`` (None when there is nothing to check it against)."""
    sents = sentences(text)
    spans = sorted(m.span for m in matches)
    starts = [s.start for s in sents]
    span_starts = [s for s, _ in spans]

    def sentence_of(pos: int) -> int | None:  # a bisection: a long document has many sentences
        i = bisect.bisect_right(starts, pos) - 1
        return i if i >= 0 and sents[i].start <= pos < sents[i].end else None

    cited = {sentence_of(s) for s, _ in spans}

    @lru_cache(maxsize=None)
    def words(i: int) -> str:
        s = sents[i]
        lo, hi = bisect.bisect_left(span_starts, s.start), bisect.bisect_left(span_starts, s.end)
        return claim_words(text[s.start:s.end], spans[lo:hi], s.start)

    conclusion = [i for i, s in enumerate(sents) if s.section == "conclusion" and i not in cited
                  and states_something(words(i))][:3]
    if not conclusion:  # no 结论 section: the uncited sentences after the last basis sentence
        basis = [i for i, s in enumerate(sents) if s.section == "basis"]
        after = basis[-1] + 1 if basis else None
        if after is not None:
            conclusion = list(islice((i for i in range(after, len(sents)) if i not in cited
                                      and sents[i].section != "other" and states_something(words(i))), 2))
    conclusion_text = " ".join(words(i) for i in conclusion)
    out: list[Claim | None] = []
    for m in matches:
        i = sentence_of(m.start)
        if i is None:
            out.append(None)
            continue
        s = sents[i]
        own = words(i)
        if s.section != "basis" and states_something(own):
            out.append(Claim(own, "sentence", s.start, s.end))
        elif conclusion_text:
            out.append(Claim(conclusion_text, "conclusion", s.start, s.end))
        else:  # a bare citation in running text: the sentence before it, if it states something
            prev = next((j for j in range(i - 1, max(i - 4, -1), -1) if states_something(words(j))), None)
            out.append(Claim(words(prev), "context", s.start, s.end) if prev is not None else None)
    return out


def uncited_conclusion(text: str, matches: Sequence[CitationMatch]) -> str:
    """The conclusion of a text whose conclusion cites nothing ("" when there is none)."""
    claims = [c for c in find_claims(text, matches) if c is not None and c.kind == "conclusion"]
    return claims[0].text if claims else ""


__all__ = ["Claim", "Sentence", "claim_words", "find_claims", "sentences", "states_something"]
