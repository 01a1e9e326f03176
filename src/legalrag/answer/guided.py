"""The answer engine's steps around a guided answer's quoted basis (:mod:`legalrag.answer.basis`): the basis chosen
and quoted, the articles shown with it, its quoted articles as citations, and the model's part checked against the
quotes. A conclusion the support model does not find in the quotes gives the honest fallback (``Answer.fallback``);
each period or amount the model states that no quote gives is marked not from the law (``Answer.not_from_law``); a
loop or a time cap that cut the text is said."""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Sequence

from legalrag.types import AnswerSettings, Hit, Step

_CONCLUSION = re.compile(r"(?:结论|Conclusion)\s*[:：]\s*(.+)", re.I)


def conclusion_of(text: str) -> str:
    """The conclusion an answer states on its ``结论：`` line ("" when it has none: a text that states no
    conclusion line is not judged, it is marked like any answer's citations)."""
    m = _CONCLUSION.search(text)
    return m.group(1).strip()[:300] if m else ""


def basis_head(basis: Any, lang: str) -> str:
    """The printed basis at the head of an answer (with the line break after it)."""
    from legalrag.answer.basis import basis_block

    return basis_block(basis, lang) + "\n"


def shown_sources(candidates: Sequence[Hit], basis: Any, k: int) -> list[Hit]:
    """The articles an answer shows as its sources (``k`` of them): the articles of its basis first, in the basis's
    order, then the best-ranked other candidates."""
    if basis is None:
        return list(candidates[:k])
    by_id = {h.id: h for h in candidates}
    first = [by_id[i] for i in basis.ids if i in by_id]
    taken = {h.id for h in first}
    return first + [h for h in candidates if h.id not in taken][:max(0, k - len(first))]


def choose_basis(question: str, hits: list[Hit], selector: Any, s: AnswerSettings, steps: list[Step], *,
                 corpus_lang: str, find_limitation: Callable[[], Any]) -> Any:
    """The legal basis of the answer to ``question``: the ``selector``'s choice among ``hits`` (None, or a
    selector that fails: the retrieval order, said so), quoted with its clauses split in ``corpus_lang``;
    ``find_limitation()`` (the limitation-period article, or None) is asked for a question about making a claim."""
    from legalrag.answer.basis import build_basis, is_claim

    selection = None
    if selector is not None:
        try:
            selection = selector.select(question, hits, k=s.basis_articles)
        except Exception as exc:  # a selector that fails on this question: the retrieval order, said so
            steps.append(Step("select", "select", input=question, error=f"the selector failed ({exc}); the "
                              "legal basis follows the retrieval order"))
        else:
            steps.append(Step("select", "select", input={"candidates": len(hits), "threshold": selection.threshold},
                              output=[{"id": d.hit.id, "probability": round(d.probability, 4), "rank": d.rank}
                                      for d in selection.ranked[:10]], seconds=selection.seconds))
    limitation = find_limitation() if is_claim(question) else None
    basis = build_basis(question, hits, selection, lang=corpus_lang, limitation=limitation,
                        k=s.basis_articles)  # clauses split in the corpus language
    steps.append(Step("answer", "basis", input={"selected": basis.selected, "low": basis.low},
                      output=[{"id": q.document_id, "citation": q.citation, "role": q.role,
                               "probability": q.probability, "spans": [list(x) for x in q.spans]}
                              for q in basis.quotes]))
    return basis


def quoted_citations(basis: Any, resolve: Callable[[], Any]) -> list[Any]:
    """One citation per quoted article, resolved like any citation, marked ``supported`` with the reason
    ``quoted``: its claim is its own article's text (not a judgement of the support model).
    ``resolve()``: the citation resolver, asked once per quote."""
    from dataclasses import replace as _replace

    from legalrag.citecheck.marks import explain_all

    out = []
    for q in basis.quotes:
        found = explain_all(q.citation, resolve())
        if not found:
            continue
        c = found[0].citation
        if c.resolved and c.document_id == q.document_id:
            c = _replace(c, in_retrieved=True, mark="supported", mark_reason="quoted", claim=q.text)
        out.append(c)
    return out


def checked_answer(support: Any, question: str, text: str, head: str, basis: Any, lang: str, steps: list[Step],
                   on_text: Callable[[str], None] | None, finish: str) -> tuple[str, str, list[str]]:
    """The model's part checked against the quotes: a conclusion the quotes do not support gives the honest
    fallback; each period or amount no quote gives is marked; a loop or a time cap that cut the text is
    said. Returns the answer's text, the fallback reason (or "") and the marked amounts."""
    from legalrag.answer.basis import fallback_text, unquoted_amounts, unquoted_note
    from legalrag.llm.stream import FINISH_LOOP, FINISH_TIME

    quotes = [q.text for q in basis.quotes]
    conclusion = conclusion_of(text)
    if conclusion:
        supported, _ = conclusion_supported(support, conclusion, quotes, steps)
        if supported is False:
            from dataclasses import replace as _replace

            related = _replace(basis, quotes=tuple(_replace(q, role="related") for q in basis.quotes))
            out = fallback_text(related, lang, "not_supported")
            steps.append(Step("answer", "fallback", input=conclusion, output="not_supported"))
            if on_text is not None:
                on_text("\n\n" + ("〔上面的结论不能由所引法条得出，已撤回；下面是最相关的法条和需要核对的事项。〕\n"
                                  if lang == "zh" else "[The conclusion above does not follow from the quoted "
                                  "provisions and is withdrawn; the most relevant provisions and what to check "
                                  "follow.]\n"))
            return out, "not_supported", []
    notes = []
    if finish == FINISH_LOOP:
        notes.append("〔回答开始重复同一句话，已在此截断。〕" if lang == "zh" else
                     "[The answer started repeating itself and was cut here.]")
    elif finish == FINISH_TIME:
        notes.append("〔回答超过了时间上限，已在此截断。〕" if lang == "zh" else
                     "[The answer ran past its time limit and was cut here.]")
    found = unquoted_amounts(text, quotes, question)
    note = unquoted_note(found, text, lang)
    if found:
        steps.append(Step("answer", "not_from_law", input=quotes, output=[a.text for a in found]))
        notes.append(note)
    tail = "\n\n" + "\n".join(notes) if notes else ""
    if tail and on_text is not None:
        on_text(tail)
    return head + "\n" + text + tail, "", [a.text for a in found]


def conclusion_supported(support: Any, conclusion: str, quotes: list[str],
                         steps: list[Step]) -> tuple[bool | None, float]:
    """Whether the support model says one of the quotes supports the conclusion (None: it could not say)."""
    t0 = time.perf_counter()
    try:
        from legalrag.answer.basis import CONCLUSION_FLOOR

        pairs = [(conclusion, q) for q in quotes] + [(conclusion, "".join(quotes))]
        probs = [float(p) for p in support.scores(pairs)]
        threshold = CONCLUSION_FLOOR  # a conclusion paraphrases its quotes: the floor, not the marks' threshold
    except Exception as exc:  # the support model failed: the conclusion is kept, the check recorded as failed
        steps.append(Step("answer", "support_conclusion", input=conclusion, error=f"not checked: {exc}",
                          seconds=time.perf_counter() - t0))
        return None, 0.0
    best = max(probs) if probs else 0.0
    steps.append(Step("answer", "support_conclusion", input=conclusion,
                      output={"support": round(best, 4), "threshold": threshold}, seconds=time.perf_counter() - t0))
    return best >= threshold, best
