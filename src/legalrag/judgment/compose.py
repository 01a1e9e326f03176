"""Write a predicted structure out in the court's format: the citing clause and the result section (判决如下).

The result is assembled from the prediction, never generated, so every document parses with the benchmark's
splitter and extractor and states exactly the predicted charges, term, fine and articles:

    本院认为，<reasoning>。依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款之规定，判决如下：
    一、被告人张某犯盗窃罪，判处有期徒刑一年六个月，并处罚金人民币五千元。

Several defendants: the benchmark scores the sum of the distinct terms in a result. Where the model predicted
each defendant's own term (``Structure.sentences``), the result has one numbered clause per defendant, as a
court writes it, so it is scored like the court's; otherwise the predicted total is stated once as the
defendants' total (``合计``), which a judge then divides; it does not invent a split the model never predicted.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from legalrag.judgment.draft import CLOSING, heading_for
from legalrag.judgment.grounding import dedupe_paragraphs, defendant_names
from legalrag.judgment.structure import Structure
from legalrag.numerals import to_chinese


def months_phrase(months: int) -> str:
    """``有期徒刑一年六个月`` / ``拘役五个月``: terms under six months are 拘役, as courts impose them."""
    if months < 6:
        return f"拘役{to_chinese(months)}个月"
    years, rest = divmod(months, 12)
    text = "有期徒刑"
    if years:
        text += f"{to_chinese(years)}年"
    if rest:
        text += f"{to_chinese(rest)}个月"
    return text


def fine_phrase(yuan: int) -> str:
    return f"罚金人民币{to_chinese(yuan)}元"


# False: the citing clause holds the predicted articles only (a stated circumstance's article is among them by
# definition, ``Structure.stated_circumstances``); True adds the provision of every circumstance the extractor
# found (measured, not the default: bench/judgment/bench_judgment_catalogue.py structure)
CITE_CIRCUMSTANCE_ARTICLES = False


def circumstance_paragraphs(s: Structure) -> dict[int, set[int]]:
    """Criminal Law article -> the paragraphs the found circumstances decide (67 -> {3} for 坦白)."""
    out: dict[int, set[int]] = {}
    for c in (s.circumstances if CITE_CIRCUMSTANCE_ARTICLES else s.stated_circumstances):
        law, article, para = c.provision
        if law == "中华人民共和国刑法":
            out.setdefault(int(article), set())
            if para:
                out[int(article)].add(para)
    return out


def articles_clause(numbers: Sequence[int], paragraphs: Mapping[int, set[int]] | None = None) -> str:
    """``依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款之规定``: a paragraph is named where a found
    circumstance decides it (``paragraphs``: article -> paragraphs)."""
    paragraphs = paragraphs or {}
    numbers = sorted(set(numbers) | (set(paragraphs) if CITE_CIRCUMSTANCE_ARTICLES else set()),
                     key=lambda n: (n <= 101, n))
    if not numbers:
        return "依照《中华人民共和国刑法》的有关规定"
    labels = []
    for n in numbers:
        paras = sorted(paragraphs.get(n, ()))
        labels.append(f"第{to_chinese(n)}条" + "、".join(f"第{to_chinese(p)}款" for p in paras))
    return "依照《中华人民共和国刑法》" + "、".join(labels) + "之规定"


def _sentence(months: int, fine: int | None, probation: bool) -> str:
    text = months_phrase(months) if months > 0 else "免予刑事处罚"
    if probation and months > 0:
        text += f"，缓刑{to_chinese(max(12, months))}个月" if months < 12 else f"，缓刑{to_chinese(months // 12 + 1)}年"
    if fine:
        text += f"，并处{fine_phrase(fine)}"
    return text


def result_section(s: Structure) -> str:
    names = [c.name for c in s.charges if c.listed] or [c.name for c in s.charges]
    if len(s.sentences) > 1:
        crimes = "，".join(f"犯{n}" for n in names) + ("，数罪并罚，决定执行" if len(names) > 1 else "，判处")
        return "".join(f"{to_chinese(k)}、被告人{d['name']}{crimes}"
                       f"{_sentence(int(d['months'] or 0), d.get('fine_yuan'), bool(s.probation.value))}。"
                       for k, d in enumerate(s.sentences, 1))
    who = defendant_names(s.defendants)
    several = len(set(s.defendants)) > 1
    line = f"被告人{who}" + "，".join(f"犯{n}" for n in names)
    if len(names) > 1:
        line += "，数罪并罚，决定执行"
    else:
        line += "，" + ("合计判处" if several else "判处")
    line += _sentence(s.prison.value or 0, s.fine.value, bool(s.probation.value))
    return "一、" + line + "。"


def template_reasoning(s: Structure, defendant: str | None = None) -> str:
    """A reasoning written from the structure alone (``--no-llm``): charge, circumstances, the decision."""
    who = defendant or defendant_names(s.defendants)
    names = "、".join(c.name for c in s.charges if c.listed) or "相关罪名"
    parts = [f"本院认为，被告人{who}的行为已构成{names}，公诉机关指控的罪名成立"]
    found = set(s.circumstance_names)  # the statutory circumstances: only those the extractor found
    named = [c for c in s.stated_circumstances if c.defendant]
    if named and len(set(s.defendants)) > 1:  # several defendants: each circumstance with its defendant
        by: dict[str, list[str]] = {}
        for c in named:
            by.setdefault(c.defendant, []).append(c.name)
        parts += [f"被告人{d}具有" + "、".join(dict.fromkeys(ns)) + "情节" for d, ns in by.items()]
        found -= {c.name for c in named}
    mitig = [n for n in ("自首", "坦白", "认罪认罚", "从犯", "未遂", "立功") if n in found]
    mitig += [n for n in ("当庭自愿认罪", "退赃退赔", "谅解", "未成年") if s.features.present(n)]
    if "累犯" in found:
        parts.append("被告人系累犯，依法应当从重处罚")
    elif s.features.present("前科"):
        parts.append("被告人有前科，可酌情从重处罚")
    if mitig:
        parts.append("被告人具有" + "、".join(mitig) + "等情节，依法可以从轻处罚")
    if s.probation.value:
        parts.append("鉴于其犯罪情节较轻，有悔罪表现，没有再犯罪的危险，宣告缓刑对所居住社区没有重大不良影响，可以适用缓刑")
    return "，".join(parts) + "。"


def reasoning_with_citation(reasoning: str, s: Structure) -> str:
    """The reasoning text followed by the citing clause of the predicted articles and ``判决如下：``."""
    body = reasoning.strip().rstrip("，,。 \n")
    if not body.startswith("本院认为"):
        body = "本院认为，" + body
    body = body.replace("判决如下", "判决")  # a stray marker would end the reasoning early
    return body + "。" + articles_clause(s.article_numbers, circumstance_paragraphs(s)) + "，判决如下："


def compose_document(facts: str, reasoning: str, s: Structure) -> str:
    """A complete judgment: heading (the procuratorate the facts name, else a marked placeholder), facts,
    reasoning + citing clause, assembled result, closing; no paragraph stated twice."""
    return dedupe_paragraphs(heading_for(facts) + "\n" + facts.strip() + "\n\n" + reasoning_with_citation(reasoning, s)
                             + "\n" + result_section(s) + "\n" + CLOSING)
