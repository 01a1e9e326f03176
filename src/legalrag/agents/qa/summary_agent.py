"""Summary agent: the answer with numbered citations [n], then a check of every citation and every sentence.

A citation resolves when its number points to a retrieved source; a sentence with no citation, or whose
citations share almost no words with the cited sources, is flagged as unsupported (shown, never hidden).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Sequence

from legalrag.agents.qa._llm import ask_text
from legalrag.prompts import render_prompt
from legalrag.agents.qa.evidence import evidence_block
from legalrag.agents.qa.language import language_name, text_lang
from legalrag.llm.base import LLM
from legalrag.search.base import SearchResult
from legalrag.search.fetch import tokens
from legalrag.types import Citation

_MARK = re.compile(r"\[(\d{1,2})\]")
# A sentence with the [n] marks written after its full stop ("是三年。[1]"), which belong to it.
_SENTENCE = re.compile(r"[^。！？.!?\n]+[。！？.!?]?(?:[ \t]*\[\d{1,2}\])*")


def summarise_evidence(llm: LLM, question: str, evidence: Sequence[SearchResult], gaps: str = "", *,
                       max_tokens: int = 400, max_chars: int = 500,
                       on_text: Callable[[str], None] | None = None) -> str:
    """The answer in the question's language: a reply in another language is asked once more to be rewritten
    (small models drift into the language of the sources or of the instructions). ``on_text`` receives the
    first reply as it is generated; a rewrite is not streamed, so the caller compares what it was sent with
    the returned answer."""
    lang = text_lang(question)
    messages = render_prompt("qa_summary", question=question, evidence=evidence_block(evidence, max_chars),
                      gaps=gaps or "(none)", language=language_name(lang))
    text = ask_text(llm, messages, max_tokens=max_tokens, on_text=on_text).strip()
    if text and text_lang(text) != lang:
        again = [*messages, {"role": "assistant", "content": text},
                 {"role": "user", "content": f"Rewrite this answer in {language_name(lang)}, keeping the [n] "
                                             "source numbers."}]
        rewritten = ask_text(llm, again, max_tokens=max_tokens).strip()
        if rewritten and text_lang(rewritten) == lang:
            text = rewritten
    return text


_ARTICLE_TITLE = re.compile(r"^(.+?)(第[零〇一二两三四五六七八九十百千万0-9]+条(?:之[一二三四五六七八九十]+)?)$")


def _as_statute(result: SearchResult):
    """The result as a Document carrying ``law``/``article`` metadata when its title names a statute article
    (e.g. 劳动合同法第十九条), so the citation resolver can match article citations written in the answer."""
    from legalrag.citecheck.extract import parse_citation

    m = _ARTICLE_TITLE.match(result.title.strip())
    if not m:
        return None
    try:
        c = parse_citation(f"《{m.group(1)}》{m.group(2)}")
    except ValueError:
        return None
    doc = result.to_document()
    return replace(doc, id=result.id, metadata={**doc.metadata, "law": c.law, "article": c.article_key})


def statute_citations(answer: str, evidence: Sequence[SearchResult]) -> list[Citation]:
    """Article citations written out in the answer (《民法典》第五百八十五条...), checked against the retrieved
    statute articles only: one that names no retrieved article stays unresolved."""
    from legalrag.citecheck.resolve import check_citations as check_articles

    docs = [d for d in map(_as_statute, evidence) if d is not None]
    return check_articles(answer, docs, [d.id for d in docs])


def check_source_citations(answer: str, evidence: Sequence[SearchResult]) -> tuple[list[Citation], list[str]]:
    """Citations found in ``answer`` (checked against the search results it was written from; statute citations
    against a corpus are ``citations.check_citations``) (numbered [n] and written-out article citations, resolved or not) and
    the sentences flagged as unsupported."""
    citations: dict[str, Citation] = {}
    for m in _MARK.finditer(answer):
        n = int(m.group(1))
        if m.group(0) in citations:
            continue
        if 1 <= n <= len(evidence):
            r = evidence[n - 1]
            citations[m.group(0)] = Citation(text=m.group(0), canonical=r.title, resolved=True,
                                             document_id=r.id, in_retrieved=True, document_text=r.text[:500])
        else:
            citations[m.group(0)] = Citation(text=m.group(0), canonical="", resolved=False)
    for c in statute_citations(answer, evidence):
        citations.setdefault(c.text, c)
    unsupported = []
    for s in _SENTENCE.finditer(answer):
        sentence = s.group(0).strip()
        words = tokens(_MARK.sub("", sentence))
        if len(words) < 4 or sentence.lower().startswith(("sources", "could not", "unable", "note")):
            continue
        nums = [int(n) for n in _MARK.findall(sentence) if 1 <= int(n) <= len(evidence)]
        if not nums:
            unsupported.append(sentence)
            continue
        source_words = set(w for n in nums for w in tokens(evidence[n - 1].text))
        if sum(w in source_words for w in words) / len(words) < 0.2:
            unsupported.append(sentence)
    return list(citations.values()), unsupported
