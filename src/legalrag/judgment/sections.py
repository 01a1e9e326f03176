"""Split a Chinese first-instance criminal judgment into heading, facts, reasoning, result and appendix.

The split follows the procedure of the JuDGE evaluation (github.com/oneal2000/JuDGE, ``evaluation/segment``),
re-implemented here so that our figures reproduce the benchmark's:

1. the text is normalised (ASCII ``:`` ``(`` ``)`` and non-numeric ``,`` become full-width, ASCII spaces are
   dropped, ideographic and no-break spaces become ASCII spaces, simple HTML tags and entities are removed);
2. sections are cut off the front one after another; each cut text is then removed from what remains:

   - **heading** ends after ``审理终结……。`` or ``公开开庭审理……。``; failing both, it ends just before
     ``(公诉|抗诉)机关……指控/认为`` (up to ten characters before the organ's name stay out of it);
   - **facts** end before ``本院认为``;
   - **reasoning** ends after ``判决如下`` (with its colon) or ``裁定如下：``; without such a marker the whole
     remainder is reasoning;
   - **result** ends before the first marker of the *list* below that occurs (list order, not text order):
     ``如不服本判决``, ``本判决为终审判决``, the signature block (``审判长`` / ``审判员``), appendices (``附录``,
     ``附：``, ``附……法律……``), a line opening with ``《`` ... or the end of the text;
   - **appendix** is what is left.

``extra_markers=True`` adds fallbacks that the benchmark lacks (``经审理查明`` or ``公诉机关指控`` to start the
facts when no heading marker exists, ``本院经审理认为`` / ``法院认为`` when ``本院认为`` is missing,
``判处如下`` / ``裁判如下`` / ``作出如下判决`` / ``裁判结论`` / ``判决：``, ``（此页无正文）``, ``书记员``); these are used for display and for
checking drafts, never for the benchmark figures.
"""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass

_HAN = r"\u4e00-\u9fa5"

HEADING_END = (rf"审理终结[{_HAN}]{{0,10}}。", rf"公开开庭审理[{_HAN}]{{0,10}}。")
HEADING_BEFORE = (rf"[{_HAN}]{{0,10}}(?:公诉|抗诉)机关[{_HAN}，、]{{0,30}}(?:认为|指控)",)
FACT_BEFORE = (r"本院认为",)
REASON_END = (r"判决如下[:：,，\n]", r"判决如下", r"裁定(?:如下)?[:：\n]")
RESULT_BEFORE = (
    rf"如[{_HAN}]{{0,3}}不服本判决",
    r"\n\s*本判决为终审判决",
    rf"如[{_HAN}]{{0,5}}未按本判决指定的期间[{_HAN}]{{0,5}}给付金钱义务",
    r"\n\s*(?:代理)?审\s{0,3}判\s{0,3}长",
    r"\n\s*(?:代理)?审\s{0,3}判\s{0,3}员",
    r"附录",
    r"附：",
    rf"附[{_HAN}]{{0,10}}法律[{_HAN}]{{0,10}}",
    rf"附[{_HAN}]{{0,10}}：",
    r"\n\s*本案[^\n]{0,10}法律",
    r"\n《",
    r"$",
)

# Fallbacks used only with extra_markers=True (see the module docstring).
EXTRA_HEADING_BEFORE = (r"经审理查明", r"经本院审理查明", r"公诉机关指控", r"检察院指控")
EXTRA_FACT_BEFORE = (r"本院经审理认为", r"本院审理认为", r"法院认为", r"合议庭认为")
EXTRA_REASON_END = (r"判处如下[:：,，\n]?", r"裁判如下[:：,，\n]?", r"作出如下判决[:：]?", r"裁判结论[:：]?", r"判决[:：]\n?")
EXTRA_RESULT_BEFORE = (r"（此页无正文）", r"\n\s*书\s{0,3}记\s{0,3}员", r"\n\s*二[〇○零]")

_TAG = re.compile(r"<\s*/?\s*[A-Za-z][^<>]*>")
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.S | re.I)
_COMMA = re.compile(r"(?<!\d),(?!\d)")


@dataclass(frozen=True)
class Sections:
    """The parts of a judgment; ``text`` is the normalised full text they were cut from."""

    heading: str = ""
    facts: str = ""
    reasoning: str = ""
    result: str = ""
    appendix: str = ""
    text: str = ""
    marked: bool = False  # the reasoning ended at a 判决如下-style marker (not "everything that was left")

    @property
    def parsed(self) -> bool:
        """True when the reasoning and the result were both found by their own markers."""
        return self.marked and bool(self.result.strip())

    def to_dict(self) -> dict[str, str]:
        d = asdict(self)
        d.pop("text")
        d.pop("marked")
        return d


def normalize(text: str) -> str:
    """Punctuation and markup normalisation applied before splitting (step 1 of the module docstring)."""
    t = text.replace(":", "：").replace(" ", "").replace("(", "（").replace(")", "）")
    t = t.replace("\u3000", " ").replace("\xa0", " ")
    for junk in ("<p>", "</p>", "<br>", "&#xD;", "\ufffd"):
        t = t.replace(junk, "")
    t = _COMMA.sub("，", t)
    t = _SCRIPT.sub(" ", t)
    pieces = [p.strip() for p in _TAG.split(t)]
    return html.unescape(" ".join(p for p in pieces if p))


def _first(patterns, content: str, include: bool) -> str:
    """Text up to the first pattern (in list order) that occurs: through its match, or just before it."""
    for pat in patterns:
        m = re.search(pat, content, re.S)
        if m:
            return content[: m.end() if include else m.start()]
    return ""


def _cut(content: str, part: str) -> str:
    return content.replace(part, "") if part.strip() else content


def split_sections(text: str, *, extra_markers: bool = False) -> Sections:
    """Split a judgment; each missing section comes back as an empty string (see the module docstring)."""
    full = normalize(text)
    rest = full

    heading = _first(HEADING_END, rest, include=True)
    if not re.sub(r"\s+", "", heading):
        heading = _first(HEADING_BEFORE, rest, include=False)
        if extra_markers and not heading.strip():
            heading = _first(EXTRA_HEADING_BEFORE, rest, include=False)
    rest = _cut(rest, heading)

    facts = _first(FACT_BEFORE, rest, include=False)
    if extra_markers and not facts.strip():
        facts = _first(EXTRA_FACT_BEFORE, rest, include=False)
    rest = _cut(rest, facts)

    reasoning = _first(REASON_END, rest, include=True)
    if extra_markers and not reasoning:
        reasoning = _first(EXTRA_REASON_END, rest, include=True)
    marked = bool(reasoning)
    if not reasoning:
        reasoning = rest
    rest = _cut(rest, reasoning)

    result_markers = RESULT_BEFORE if not extra_markers else RESULT_BEFORE[:-1] + EXTRA_RESULT_BEFORE + ("$",)
    result = _first(result_markers, rest, include=False)
    if not result:
        result = rest
    rest = _cut(rest, result)

    return Sections(heading=heading, facts=facts, reasoning=reasoning, result=result, appendix=rest, text=full,
                    marked=marked)
