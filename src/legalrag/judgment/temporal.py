"""Which version of the Criminal Law a draft or prediction applies to each article: 刑法第十二条 (从旧兼从轻).

Given the acts' dates (:mod:`legalrag.judgment.act_dates`, or ``--as-of``) and the versions of the law held
(``legalrag.laws.versions.Library``), each article applied is read in the version in force at the earliest act
and in the version in force today. Where the two texts of the article are the same, nothing needs deciding.
Where they differ, the rule applied, in this order:

1. **not covered**: the current text extends the article to persons the old text does not reach (a paragraph
   ``其他公司、企业……`` added to an article on 国有公司、企业, as 刑法修正案（十二） did to 第一百六十五条、第一百六十六条、
   第一百六十九条) and the facts do not describe the defendant's employer as state-owned (国有, 国家出资, 国家机关,
   事业单位, 人民团体, 国家工作人员): acts before the new text took effect are not a crime under the law of
   their time, and the new text does not reach back (第十二条: the law at the time applies, and it does not
   make them a crime);
2. **acts straddling** the new text's effective date: the new text applies to the whole (最高人民检察院
   《关于对跨越修订刑法施行日期的继续犯罪、连续犯罪以及其他同种数罪应如何具体适用刑法问题的批复》), with a
   lenient treatment noted where the new punishment is heavier; under rule 1 only the acts from the effective
   date on fall under the article;
3. **milder**: the punishment of the tier the case falls in is compared, as 最高人民法院《关于适用刑法第十二条
   几个问题的解释》 reads 处刑较轻 (the lower statutory maximum; with equal maxima, the lower minimum). A text's
   tiers are its ``处……`` clauses (``ranges.statutory_range`` of each), the case's tier in each text the first
   whose range holds the predicted term (no term: the first tier). The current text applies if it is milder,
   else the text of the acts' time.

No versions installed: nothing is decided, the corpus's text is used as before and a one-line notice says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from legalrag.judgment.act_dates import ActDates
from legalrag.judgment.ranges import statutory_range
from legalrag.numerals import to_chinese

CRIMINAL_LAW = "中华人民共和国刑法"
NO_VERSIONS = ("no versions of the national law are installed: the articles are read from the statute corpus as "
               "given, without checking the law in force at the time of the acts (刑法第十二条)")
_STATE = re.compile(r"国有|国家出资|国家控股|国家机关|事业单位|人民团体|国家工作人员")
_EXTENSION = re.compile(r"^其他公司、企业")
ARTICLE_12 = ("根据《中华人民共和国刑法》第十二条的规定，行为时的法律与现行法律不一致的，适用行为时的法律，"
              "但现行法律不认为是犯罪或者处刑较轻的，适用现行法律")
STRADDLE_RULE = ("对跨越修订施行日期的连续、继续犯罪，适用修订后的规定一并追诉（最高人民检察院《关于对跨越修订刑法施行日期的"
                 "继续犯罪、连续犯罪以及其他同种数罪应如何具体适用刑法问题的批复》）")


@dataclass(frozen=True)
class AppliedArticle:
    """One Criminal Law article: the version applied, the versions at the acts and today, the rule and why."""

    article: str
    label: str  # 中华人民共和国刑法（2020-12-26修正）第一百六十五条
    version: str | None  # the version applied
    at_acts: str | None
    current: str | None
    rule: str  # current | unchanged | old_law | current_milder | not_covered | straddle | unknown_date | not_held | missing
    reason: str  # the 第十二条 statement (Chinese), empty where there is nothing to decide
    text: str  # the text applied
    compared: Mapping[str, Any] = field(default_factory=dict)

    @property
    def decided(self) -> bool:
        """Whether the text at the acts differed from today's and 第十二条 decided between them."""
        return self.rule in ("old_law", "current_milder", "not_covered", "straddle")

    def to_dict(self) -> dict:
        return {"article": self.article, "label": self.label, "version": self.version, "at_acts": self.at_acts,
                "current": self.current, "rule": self.rule, "reason": self.reason, "text": self.text,
                "compared": dict(self.compared)}


@dataclass(frozen=True)
class LawVersions:
    """The acts' dates, each article's applied version and the notice (no versions installed)."""

    acts: ActDates
    articles: tuple[AppliedArticle, ...] = ()
    today: str = ""
    notice: str = ""
    # articles the facts match (the charge catalogue's law search) that the decision does not apply, whose text
    # at the acts differs from today's: a charge the prediction may have missed, to review
    flagged: tuple[AppliedArticle, ...] = ()

    def statement(self) -> str:
        """The paragraph a draft states (Chinese): one sentence per article 第十二条 decided; empty otherwise."""
        decided = [a.reason for a in self.articles if a.decided]
        if not decided:
            return ""
        return f"本案被告人的行为发生于{self.acts.describe()}。{ARTICLE_12}。" + "".join(decided)

    def lines(self) -> list[str]:
        """One line per article for the terminal, and the notice."""
        if self.notice:
            return [self.notice]
        when = f"acts {self.acts.earliest} to {self.acts.latest} ({self.acts.source})" if self.acts.known \
            else "acts: no date in the facts (pass --as-of YYYY-MM-DD)"
        out = [when]
        for a in self.articles:
            out.append(f"  {a.label}: {a.rule}" + (f" (at the acts {a.at_acts}, today {a.current})"
                                                   if a.at_acts != a.current else ""))
            if a.rule == "not_covered":
                out.append("    the text in force at the acts does not cover this defendant: the acts are not a "
                           "crime under this article then (刑法第十二条); review the conviction")
        for a in self.flagged:
            out.append(f"  not applied, but the facts match {a.label} ({a.rule}; at the acts {a.at_acts}, today "
                       f"{a.current}): its text changed; review the charge")
        return out

    def to_dict(self) -> dict:
        return {"acts": self.acts.to_dict(), "today": self.today, "notice": self.notice,
                "articles": [a.to_dict() for a in self.articles], "statement": self.statement(),
                "not_applied_changed": [a.to_dict() for a in self.flagged]}


def no_versions(acts: ActDates) -> LawVersions:
    return LawVersions(acts, (), "", NO_VERSIONS)


def label(number: str, version: str | None) -> str:
    """``中华人民共和国刑法（2023-12-29修正）第一百六十五条`` (no version: without the bracket)."""
    main, _, suffix = str(number).partition("-")
    art = f"第{to_chinese(int(main))}条" + (f"之{to_chinese(int(suffix))}" if suffix else "")
    return f"{CRIMINAL_LAW}{art}" if version is None else f"{CRIMINAL_LAW}（{version}修正）{art}"


def tiers(text: str) -> list[tuple[int, int]]:
    """The (least, most) months of each ``处……`` clause of an article, in order (clauses split at ``；``/``。``)."""
    out = []
    for clause in re.split(r"[；;。\n]", text):
        if "处" in clause:
            rng = statutory_range(clause)
            if rng is not None:
                out.append(rng)
    return out


def tier_for(ranges: Sequence[tuple[int, int]], months: int | None) -> tuple[int, int] | None:
    if not ranges:
        return None
    if months is None:
        return ranges[0]
    return next((r for r in ranges if r[0] <= months <= r[1]), min(ranges, key=lambda r: abs(r[1] - months)))


def compare(old: str, new: str, months: int | None = None) -> tuple[str, dict]:
    """``milder`` / ``heavier`` / ``same`` / ``unknown``: the current text ``new`` against ``old``, at the tier the
    predicted term ``months`` falls in (statutory maximum first, then minimum)."""
    a, b = tier_for(tiers(old), months), tier_for(tiers(new), months)
    info = {"old_tier": list(a) if a else None, "new_tier": list(b) if b else None, "term_months": months}
    if a is None or b is None:
        return "unknown", info
    key_a, key_b = (a[1], a[0]), (b[1], b[0])
    return ("milder" if key_b < key_a else "heavier" if key_b > key_a else "same"), info


def extends_to_private(old: str, new: str) -> bool:
    """Whether ``new`` adds a paragraph extending the article to 其他公司、企业 (persons ``old`` does not cover)."""
    from legalrag.laws.versions import normalise

    have = {normalise(p) for p in old.split("\n") if p.strip()}
    return any(_EXTENSION.match(p.strip()) and normalise(p) not in have for p in new.split("\n") if p.strip())


def _term(months: int) -> str:
    from legalrag.judgment.compose import months_phrase

    return "无期徒刑" if months >= 240 else months_phrase(months)


def _tier_words(t: Sequence[int] | None) -> str:
    return f"{_term(t[0])}至{_term(t[1])}" if t else "无法比较"


def _quote(text: str) -> str:
    return "“" + "".join(text.split()).rstrip("。") + "”"


def _cited(label_: str) -> str:
    """``《中华人民共和国刑法》（2020-12-26修正）第一百六十五条``: the title in book-title marks."""
    return label_.replace(CRIMINAL_LAW, f"《{CRIMINAL_LAW}》", 1)


def _cn(day: str) -> str:
    y, m, d = day.split("-")
    return f"{y}年{int(m)}月{int(d)}日"


def decide(law, number: str, acts: ActDates, facts: str, today: str, months: int | None = None) -> AppliedArticle:
    """The version of ``law`` (a ``laws.versions.Law``) applied to article ``number`` (module docstring)."""
    from legalrag.laws.versions import normalise

    now = law.as_of(today).version
    cur = now.article(number)
    cur_text = cur.text.strip() if cur else ""
    if not acts.known:
        return AppliedArticle(number, label(number, now.label), now.version, None, now.version,
                              "unknown_date", "", cur_text)
    first = law.as_of(acts.earliest)
    then, last = first.version, law.as_of(acts.latest).version
    old = then.article(number)
    old_text = old.text.strip() if old else ""
    if first.note:  # the acts predate every version held
        return AppliedArticle(number, label(number, then.label), then.version, None, now.version, "not_held",
                              "", old_text, {"note": first.note})
    if then is now:
        return AppliedArticle(number, label(number, now.label), now.version, now.version,
                              now.version, "current", "", cur_text)
    if cur is None or old is None:
        return AppliedArticle(number, label(number, then.label), then.version, then.version, now.version,
                              "missing", "", old_text or cur_text)
    if normalise(old_text) == normalise(cur_text):
        return AppliedArticle(number, label(number, then.label), then.version, then.version,
                              now.version, "unchanged", "", cur_text)
    verdict, info = compare(old_text, cur_text, months)
    not_covered = extends_to_private(old_text, cur_text) and not _STATE.search(facts or "")
    info = {**info, "verdict": verdict, "old_text_covers_defendant": not not_covered}
    start = _cn(now.in_force_from) if now.in_force_from else now.label
    art = label(number, None)[len(CRIMINAL_LAW):]
    old_label, new_label = label(number, then.label), label(number, now.label)
    if last is now:  # the acts go on past the current text's effective date
        reason = f"本案行为跨越现行{art}施行之日（{start}），{STRADDLE_RULE}"
        if not_covered:
            reason += (f"；但行为时的{art}仅适用于国有公司、企业的人员，事实未表明被告人所任职的公司、企业系国有，{start}"
                       f"以前的行为依照行为时的法律不构成犯罪，仅对{start}以后的行为适用{_cited(new_label)}：{_quote(cur_text)}。")
        else:
            lenient = "；修订后的规定处刑较重，应酌情从轻处理" if verdict == "heavier" else ""
            reason += f"{lenient}，故适用{_cited(new_label)}：{_quote(cur_text)}。"
        return AppliedArticle(number, new_label, now.version, then.version, now.version, "straddle", reason,
                              cur_text, info)
    if not_covered:
        reason = (f"行为时的{art}仅适用于国有公司、企业的人员，现行{art}增设的其他公司、企业人员一款自{start}起施行，"
                  f"不溯及既往；事实未表明被告人所任职的公司、企业系国有，依照行为时的法律其行为不构成该条规定之罪，"
                  f"故适用{_cited(old_label)}：{_quote(old_text)}。")
        return AppliedArticle(number, old_label, then.version, then.version, now.version, "not_covered", reason,
                              old_text, info)
    if verdict == "milder":
        reason = (f"现行{art}（{start}起施行）所对应的法定刑幅度（{_tier_words(info['new_tier'])}）轻于行为时的规定"
                  f"（{_tier_words(info['old_tier'])}），处刑较轻，故适用{_cited(new_label)}：{_quote(cur_text)}。")
        return AppliedArticle(number, new_label, now.version, then.version, now.version, "current_milder", reason,
                              cur_text, info)
    cmp = {"same": "与行为时的规定相同", "heavier": "重于行为时的规定", "unknown": "无法认定较轻"}[verdict]
    reason = (f"现行{art}（{start}起施行）所对应的法定刑幅度（{_tier_words(info['new_tier'])}）{cmp}，不属于处刑较轻，"
              f"故适用行为时的{_cited(old_label)}：{_quote(old_text)}。")
    return AppliedArticle(number, old_label, then.version, then.version, now.version, "old_law", reason, old_text,
                          info)


def law_versions(library, articles: Iterable[int | str], acts: ActDates, facts: str, *,
                 today: str | None = None, months: int | None = None) -> LawVersions:
    """Each article of ``articles`` (Criminal Law numbers, ``165`` or ``"133-1"``) decided by :func:`decide`
    over ``library`` (None, or one without the Criminal Law: the notice, nothing decided)."""
    from legalrag.laws.versions import check_day

    law = library.law(CRIMINAL_LAW) if library is not None else None
    if law is None:
        return no_versions(acts)
    today = check_day(today or date.today().isoformat())
    numbers = list(dict.fromkeys(str(n) for n in articles))
    return LawVersions(acts, tuple(decide(law, n, acts, facts, today, months) for n in numbers), today)


def provision_versions(provisions: Iterable[str], facts: str, library, *, as_of: str | None = None) -> LawVersions:
    """The version of each predicted Criminal Law provision (``cite``'s ids: ``"165"``, ``"133-1"``) in force at
    the acts (``as_of``, checked, else the dates the facts state), decided as a judgment decides it (刑法第十二条).
    Ids that are not Criminal Law article numbers (another citation model's provisions) are left out."""
    from legalrag.laws.versions import check_day

    as_of = check_day(as_of) if as_of else None
    numbers = [p for p in provisions if re.fullmatch(r"\d+(-\d+)?", str(p))]
    return law_versions(library, numbers, acts_of(facts, as_of), facts)


def acts_of(facts: str, as_of: str | None = None) -> ActDates:
    """``as_of`` (``--as-of``, checked) when given, else the dates the facts state."""
    from legalrag.judgment.act_dates import act_dates, dates_as_of

    return dates_as_of(as_of) if as_of else act_dates(facts)


def applied_articles(articles: Iterable[int | str], charges: Iterable[str] = ()) -> list[str]:
    """The articles a decision applies: those it cites, then the own article of each charge it convicts of (the
    charge catalogue's), which a structure model that never saw the charge does not predict."""
    from legalrag.judgment.charges import by_any_name

    catalogue = by_any_name()
    own = [catalogue[c].article for c in charges if c in catalogue and catalogue[c].article]
    return list(dict.fromkeys([str(n) for n in articles] + own))


def with_statement(reasoning: str, versions: LawVersions) -> str:
    """``reasoning`` followed by the 第十二条 statement (unchanged when there is none)."""
    said = versions.statement()
    if not said:
        return reasoning
    return reasoning.strip().rstrip("，,。 \n") + "。" + said.rstrip("。")


def flag_changed(versions: LawVersions, library, proposed: Iterable[int | str], facts: str) -> LawVersions:
    """``versions`` with ``flagged``: the ``proposed`` articles (those the facts match, e.g. the charge catalogue's
    law search) it does not hold whose text at the acts differs from today's, each decided as if applied."""
    from dataclasses import replace

    have = {a.article for a in versions.articles}
    extra = [str(n) for n in dict.fromkeys(str(n) for n in proposed) if str(n) not in have]
    if not extra or versions.notice or library is None:
        return versions
    seen = law_versions(library, extra, versions.acts, facts, today=versions.today or None)
    return replace(versions, flagged=tuple(a for a in seen.articles if a.decided))


def apply_to_draft(draft, facts: str, library, *, as_of: str | None = None, today: str | None = None,
                   proposed: Iterable[int | str] = ()):
    """``draft`` (a ``reasoned.ReasonedDraft`` or a free ``draft.DraftResult``) with each of its articles' version
    decided (:func:`law_versions`) in ``law_versions`` and the 第十二条 statement in its reasoning, before the
    citing clause of a reasoned draft and before ``判决如下`` in a free one. ``proposed``: articles the facts match
    that the draft may not apply; those whose text changed since the acts are flagged (:func:`flag_changed`)."""
    from dataclasses import replace

    from legalrag.judgment.compose import compose_document
    from legalrag.judgment.reasoned import ReasonedDraft

    acts = acts_of(facts, as_of)
    if isinstance(draft, ReasonedDraft):
        s = draft.structure
        versions = law_versions(library, applied_articles(s.article_numbers, s.charge_names), acts, facts,
                                today=today, months=s.prison.value)
        versions = flag_changed(versions, library, proposed, facts)
        if not versions.statement():
            return replace(draft, law_versions=versions)
        reasoning = with_statement(draft.reasoning, versions)
        return replace(draft, reasoning=reasoning, document=compose_document(facts, reasoning, s),
                       law_versions=versions)
    from legalrag.judgment.extract import extract_fields

    f = draft.fields
    numbers = applied_articles([a.key for a in f.articles], f.charges)
    versions = flag_changed(law_versions(library, numbers, acts, facts, today=today, months=f.prison_months),
                            library, proposed, facts)
    said = versions.statement()
    if not said or "，判决如下：" not in draft.document:
        return replace(draft, law_versions=versions)
    head, marker, rest = draft.document.partition("，判决如下：")
    document = head.rstrip("，,。 \n") + "。" + said.rstrip("。") + marker + rest
    fields = extract_fields(document)
    return replace(draft, document=document, sections=fields.sections, fields=fields, law_versions=versions)


def apply_to_structure(structure, facts: str, library, *, as_of: str | None = None,
                       today: str | None = None) -> LawVersions:
    """The versions of a predicted structure's articles (``judgment predict``)."""
    return law_versions(library, applied_articles(structure.article_numbers, structure.charge_names),
                        acts_of(facts, as_of), facts, today=today, months=structure.prison.value)


@dataclass(frozen=True)
class DatedPrediction:
    """A predicted ``structure.Structure`` and the version of each article it applies (``judgment predict``)."""

    structure: Any
    law_versions: LawVersions

    def to_dict(self) -> dict:
        """The structure's JSON with ``law_versions`` beside it, as `legalrag judgment predict` prints it."""
        return {**self.structure.to_dict(), "law_versions": self.law_versions.to_dict()}


def predict_dated(predictor, facts: str, library, *, as_of: str | None = None, charge_reader=None,
                  today: str | None = None) -> DatedPrediction:
    """``predictor.predict(facts)`` (a ``predict.StructurePredictor``) with :func:`apply_to_structure`; a bad
    ``as_of`` is an error before the model runs."""
    from legalrag.laws.versions import check_day

    as_of = check_day(as_of) if as_of else None  # InputError naming as_of
    s = predictor.predict(facts, charge_reader=charge_reader)
    return DatedPrediction(s, apply_to_structure(s, facts, library, as_of=as_of, today=today))


__all__ = [
    "NO_VERSIONS",
    "AppliedArticle",
    "DatedPrediction",
    "LawVersions",
    "acts_of",
    "applied_articles",
    "apply_to_draft",
    "apply_to_structure",
    "compare",
    "decide",
    "extends_to_private",
    "law_versions",
    "no_versions",
    "predict_dated",
    "provision_versions",
    "tiers",
    "with_statement",
]
