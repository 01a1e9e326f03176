"""Draft a Chinese criminal judgment from case facts, grounded on retrieved statutes and past cases.

Pipeline (``JudgmentDrafter.draft``):

1. a law retriever (BM25 over a statute corpus, e.g. JuDGE's ``law_corpus.jsonl``) and a case retriever
   (BM25 over past judgments; the case being drafted is always excluded) are queried with the facts;
2. the LLM writes the reasoning (``本院认为……判决如下：``) and the result from the ``judgment_draft`` prompt;
3. the reply is repaired into the benchmark's structure (missing ``本院认为`` / ``判决如下`` markers are
   added) and assembled with a fixed heading, the facts and the closing into a complete judgment that our
   own evaluator splits and reads;
4. every cited Criminal Law article is checked against the statute corpus: unresolved ones are returned
   as ``Citation(resolved=False)`` and shown, never dropped.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.extract import JudgmentFields, extract_fields
from legalrag.judgment.sections import Sections, split_sections
from legalrag.numerals import to_chinese
from legalrag.prompts import render_prompt
from legalrag.types import Citation, Document, DocumentKind, Hit

CRIMINAL_LAW = "中华人民共和国刑法"
HEADING = "刑事判决书\n公诉机关XX人民检察院。\n本院依法组成合议庭，公开开庭审理了本案。现已审理终结。\n"


def heading_for(facts: str) -> str:
    """The heading with the procuratorate the facts name, or the marked placeholder ``XX人民检察院``."""
    from legalrag.judgment.grounding import procuratorate

    return HEADING.replace("XX人民检察院", procuratorate(facts))
CLOSING = "\n如不服本判决，可在接到判决书的第二日起十日内，通过本院或者直接向上一级人民法院提出上诉。"


# ------------------------------------------------------------------------------------------ corpora

def load_law_corpus(path: str | Path) -> list[Document]:
    from legalrag.corpora.statutes import load_statutes

    return load_statutes(path)


def cases_from_judgments(judgments: Mapping[str, str | None]) -> list[Document]:
    """Past judgments as retrievable documents (id = case id); reasoning and result kept in metadata."""
    docs = []
    for case_id, text in judgments.items():
        if not isinstance(text, str):
            continue
        sec = split_sections(text)
        docs.append(Document(id=case_id, text=sec.facts or text[:2000], title=text.split("\n", 1)[0][:60],
                             kind=DocumentKind.JUDGMENT,
                             metadata={"reasoning": sec.reasoning, "result": sec.result}))
    return docs


# ---------------------------------------------------------------------------------------- structure

_RESULT_START = re.compile(r"(?:^|\n)[ \t]*(?:判决结果[:：]?|判决如下[:：]?)?[ \t]*(?:一、)?被告人[^\n，。；]{1,20}犯[^\n，。；]{1,30}罪")
_TAIL_MARKERS = re.compile(r"[，,]?\s*(?:判决结果|(?:特)?判决如下|作出如下判决)[:：]?\s*$")


def repair_reply(reply: str) -> str:
    """Bring an LLM reply into ``本院认为……判决如下：\\n<result>`` form so the evaluator can split it.

    The result starts at the first line that sentences a defendant (``被告人…犯…罪``); everything before it
    is the reasoning, which gets ``本院认为，`` in front if missing and ``判决如下：`` at its end. Template
    residue the model copied (``（或拘役…）``), Markdown and a closing it wrote itself are removed.
    """
    text = reply.strip().replace("**", "")
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    start = text.find("本院认为")
    if start > 0:
        text = text[start:]
    elif start < 0:
        text = "本院认为，" + text
    m = _RESULT_START.search(text, 4)
    if m:
        reasoning, result = text[: m.start()], text[m.start():].strip()
        result = re.sub(r"^(?:判决结果|判决如下)[:：]?\s*", "", result)
    else:
        reasoning, result = text, ""
    reasoning = _TAIL_MARKERS.sub("", reasoning.rstrip()).rstrip("，,。 \n")
    if "判决如下" in reasoning:  # a stray marker inside the reasoning would end it early
        reasoning = reasoning.replace("判决如下", "判决")
    result = re.sub(r"（或[^）]*）", "", result)
    for marker in ("如不服本判决", "审判长", "审判员", "书记员"):  # drop a closing the model wrote itself
        pos = result.find(marker)
        if pos >= 0:
            result = result[:pos].rstrip()
    return reasoning + "，判决如下：\n" + result


def assemble(facts: str, reply: str) -> str:
    """The whole judgment around the model's reply, with no line stated twice (the judgment line a model
    writes twice is kept once)."""
    from legalrag.judgment.grounding import dedupe_paragraphs

    return dedupe_paragraphs(heading_for(facts) + "\n" + facts.strip() + "\n\n" + repair_reply(reply) + "\n"
                             + CLOSING)


def assemble_grounded(facts: str, reply: str) -> tuple[str, list[str]]:
    """:func:`assemble` with the reasoning grounded on the facts: a clause stating a circumstance the facts do
    not (自首 where they describe 坦白) is removed (``grounding.ground_reasoning``); returns (document, the
    circumstances removed)."""
    from legalrag.judgment.grounding import dedupe_paragraphs, ground_reasoning

    reasoning, marker, result = repair_reply(reply).partition("，判决如下：\n")
    grounded, removed = ground_reasoning(reasoning, facts)
    text = grounded.rstrip("，,。 \n") + marker + result
    return dedupe_paragraphs(heading_for(facts) + "\n" + facts.strip() + "\n\n" + text + "\n" + CLOSING), removed


def check_articles(fields: JudgmentFields, statutes: Sequence[Document],
                   retrieved_ids: Iterable[str] = ()) -> list[Citation]:
    """Resolve each cited Criminal Law article to a statute document; unresolved ones are flagged."""
    by_article = {(d.metadata.get("law"), d.metadata.get("article")): d for d in statutes}
    retrieved = set(retrieved_ids)
    out = []
    for art in fields.articles:
        label = f"第{to_chinese(art.number)}条" + (f"之{to_chinese(art.suffix)}" if art.suffix else "")
        doc = by_article.get((CRIMINAL_LAW, art.key))
        out.append(Citation(text=label, canonical=CRIMINAL_LAW + label, resolved=doc is not None,
                            document_id=doc.id if doc else None, in_retrieved=bool(doc and doc.id in retrieved),
                            document_text=doc.text if doc else ""))
    return out


# ------------------------------------------------------------------------------------------- drafter

class BigramRetriever:
    """TF-IDF over character bigrams, for a few hundred articles: built in well under a second."""

    def __init__(self, docs: Sequence[Document]):
        import math
        from collections import Counter

        self.docs = list(docs)
        self.tf = [Counter(_bigrams(d.text)) for d in self.docs]
        df = Counter(g for tf in self.tf for g in tf)
        n = max(1, len(self.docs))
        self.idf = {g: math.log(1 + n / c) for g, c in df.items()}
        self.norm = [math.sqrt(sum((1 + math.log(c)) ** 2 * self.idf[g] ** 2 for g, c in tf.items())) or 1.0
                     for tf in self.tf]

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        import math

        q = set(_bigrams(query)) & set(self.idf)
        scores = []
        for i, tf in enumerate(self.tf):
            s = sum((1 + math.log(tf[g])) * self.idf[g] ** 2 for g in q if g in tf)
            if s > 0:
                scores.append((s / self.norm[i], i))
        scores.sort(key=lambda x: -x[0])
        return [Hit(self.docs[i], float(s), r, "bigram") for r, (s, i) in enumerate(scores[:k], 1)]


def _bigrams(text: str) -> list[str]:
    chars = [c for c in text if "\u4e00" <= c <= "\u9fff"]
    return [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]


@dataclass(frozen=True)
class DraftResult:
    document: str
    sections: Sections
    fields: JudgmentFields
    citations: tuple[Citation, ...]
    law_hits: tuple[Hit, ...] = ()
    case_hits: tuple[Hit, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    law_versions: Any = None  # temporal.LawVersions: the version of each article applied (刑法第十二条)

    @property
    def unresolved(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if not c.resolved)

    def to_dict(self) -> dict:
        return {
            "document": self.document,
            "sections": self.sections.to_dict(),
            "fields": self.fields.to_dict(),
            "parsed": self.sections.parsed,
            "citations": [{"text": c.text, "canonical": c.canonical, "resolved": c.resolved,
                           "document_id": c.document_id, "in_retrieved": c.in_retrieved} for c in self.citations],
            "laws": [{"id": h.id, "title": h.document.title, "score": h.score} for h in self.law_hits],
            "cases": [{"id": h.id, "score": h.score} for h in self.case_hits],
            "timings": dict(self.timings),
            "notes": list(self.notes),
            "law_versions": self.law_versions.to_dict() if self.law_versions is not None else None,
        }


class JudgmentDrafter:
    """Facts in, a complete judgment out. ``llm`` is any ``legalrag.llm.base.LLM``."""

    def __init__(self, llm, statutes: Sequence[Document], cases: Sequence[Document] = (), *,
                 k_laws: int = 5, k_cases: int = 1, max_tokens: int = 500, max_fact_chars: int = 900,
                 max_case_chars: int = 500, max_law_chars: int = 160):
        if not statutes:
            raise InputError("the statute corpus is empty; pass --law-corpus with statute articles")
        self.llm = llm
        self.statutes = list(statutes)
        self.cases = list(cases)
        self.k_laws, self.k_cases = k_laws, k_cases
        self.max_tokens = max_tokens
        self.max_fact_chars, self.max_case_chars, self.max_law_chars = max_fact_chars, max_case_chars, max_law_chars
        self._law_retriever = self._case_retriever = None

    def _retriever(self, docs):
        from legalrag.retrieval.bm25 import BM25Retriever
        from legalrag.retrieval.tokenize import tokenizer_for

        return BM25Retriever.from_documents(docs, tokenizer_for("zh"))

    def _criminal_law(self) -> list[Document]:
        """The Criminal Law's articles among the statutes (all of them when none is marked as the Criminal Law:
        a corpus such as JuDGE's holds nothing else)."""
        own = [d for d in self.statutes if d.metadata.get("law") == CRIMINAL_LAW]
        return own or self.statutes

    def charge_articles(self, facts: str) -> list[Document]:
        """The Criminal Law articles of the charges the facts name or describe (the catalogue's own article of
        each charge its keywords find) and of the circumstances the extractor found (第六十七条 for 坦白)."""
        from legalrag.judgment.charges import by_any_name
        from legalrag.judgment.circumstances import TIERS, find_circumstances
        from legalrag.judgment.signals import charge_mentions, keyword_positions

        catalogue = by_any_name()
        names = [m.name for m in charge_mentions(facts) if m.name]
        found = keyword_positions(facts)
        names += sorted(found, key=lambda n: (-len(found[n]), found[n][0]))  # most often described first
        keys = [catalogue[n].article for n in dict.fromkeys(names) if n in catalogue and catalogue[n].article]
        # the search reads possible findings too (a provision to read, not a circumstance stated)
        keys += [c.provision[1] for c in find_circumstances(facts, tiers=TIERS) if c.provision[0] == CRIMINAL_LAW]
        by_key = {}
        for d in self._criminal_law():
            key = d.metadata.get("article") or (str(d.id) if str(d.id).replace("-", "").isdigit() else None)
            if key:
                by_key.setdefault(str(key), d)
        return [by_key[k] for k in dict.fromkeys(keys) if k in by_key]

    def retrieve_laws(self, facts: str) -> list[Hit]:
        """The predicted charges' own articles and the circumstances' provisions first, then the Criminal Law's
        articles by character-bigram TF-IDF (never the whole national corpus: its interpretations crowd out the
        articles; bigrams need no tokenizer, so the first draft does not wait for one to load)."""
        if self._law_retriever is None:
            self._law_retriever = BigramRetriever(self._criminal_law())
        first = self.charge_articles(facts)[: self.k_laws]
        hits = [Hit(d, 1.0, i, "charge") for i, d in enumerate(first, 1)]
        seen = {d.id for d in first}
        for h in self._law_retriever.retrieve(facts[: self.max_fact_chars], k=self.k_laws + len(seen)):
            if len(hits) >= self.k_laws:
                break
            if h.id not in seen:
                hits.append(replace(h, rank=len(hits) + 1))
                seen.add(h.id)
        return hits

    def retrieve_cases(self, facts: str, exclude: set[str] = frozenset()) -> list[Hit]:
        """Similar past cases; ids in ``exclude`` (the case itself) are never returned."""
        if not self.cases or self.k_cases <= 0:
            return []
        if self._case_retriever is None:
            self._case_retriever = self._retriever(self.cases)
        hits = self._case_retriever.retrieve(facts[: self.max_fact_chars], k=self.k_cases + len(exclude))
        return [h for h in hits if h.id not in exclude][: self.k_cases]

    def messages(self, facts: str, laws: Sequence[Hit], cases: Sequence[Hit]) -> list[dict[str, str]]:
        law_text = "\n".join(f"{h.document.title}：{h.document.text[: self.max_law_chars]}" for h in laws) or "（无）"
        case_text = "\n\n".join(
            (h.document.metadata.get("reasoning", "") + "\n" + h.document.metadata.get("result", ""))
            [: self.max_case_chars] for h in cases) or "（无）"
        return render_prompt("judgment_draft", facts=facts[: self.max_fact_chars], laws=law_text, cases=case_text)

    def draft(self, facts: str, *, exclude_case_ids: Iterable[str] = (),
              on_text: Callable[[str], None] | None = None) -> DraftResult:
        import time

        from legalrag.llm.base import ChatRequest

        if not facts.strip():
            raise InputError("the case facts are empty")
        t0 = time.perf_counter()
        laws = self.retrieve_laws(facts)
        cases = self.retrieve_cases(facts, set(exclude_case_ids))
        t_retrieve = time.perf_counter() - t0
        request = ChatRequest(messages=tuple(self.messages(facts, laws, cases)), max_tokens=self.max_tokens,
                              temperature=0.0, stop=("如不服本判决",))
        if on_text is not None:
            from legalrag.llm.stream import stream_chat

            reply = stream_chat(self.llm, request, on_text).text
        else:
            reply = self.llm.chat(request).text
        t_generate = time.perf_counter() - t0 - t_retrieve
        document, removed = assemble_grounded(facts, reply)
        fields = extract_fields(document)
        citations = check_articles(fields, self.statutes, (h.id for h in laws))
        notes = ("removed from the model's reasoning, as the facts do not state it: " + "、".join(removed),) \
            if removed else ()
        return DraftResult(document, fields.sections, fields, tuple(citations), tuple(laws), tuple(cases),
                           {"retrieve": t_retrieve, "generate": t_generate}, notes)


def read_facts(facts: str) -> str:
    """``facts`` is a path to a text file or the facts themselves; a missing ``.txt``/``.md`` path is an error."""
    p = Path(facts)
    try:
        is_file = len(facts) < 512 and p.is_file()
    except OSError:  # longer than a file name may be (a few hundred Chinese characters): the facts themselves
        is_file = False
    if len(facts) < 512 and p.suffix in (".txt", ".md") and not is_file:
        raise InputError("facts file not found; pass a path to a text file or the facts themselves", path=facts)
    return p.read_text(encoding="utf-8") if is_file else facts


def draft_from_cli(text: str, llm, *, law_corpus: Path | Sequence[Document], case_corpus: Path | None, stream: bool,
                   max_tokens: int) -> DraftResult:
    """What ``legalrag judgment draft`` does without a structure model: the LLM drafts reasoning and result
    freely. ``llm`` and the corpus paths come from the caller (the CLI builds them)."""
    from legalrag.judgment.io import load_judgments

    statutes = load_law_corpus(law_corpus) if isinstance(law_corpus, (str, Path)) else list(law_corpus)
    cases = cases_from_judgments(load_judgments(case_corpus)) if case_corpus else []
    drafter = JudgmentDrafter(llm, statutes, cases, max_tokens=max_tokens)
    out = sys.stdout
    if stream:
        out.write(HEADING + "\n" + text.strip() + "\n\n")
        out.flush()
    # Token streaming when the backend offers it; otherwise each section is printed once it is complete.
    can_stream = stream and callable(getattr(llm, "stream", None))
    res = drafter.draft(text, on_text=(lambda s: (out.write(s), out.flush())) if can_stream else None)
    if stream and not can_stream:
        out.write(res.sections.reasoning + "\n" + res.sections.result.strip() + "\n" + CLOSING.strip() + "\n")
        out.flush()
    if stream:
        from rich.console import Console

        console = Console(stderr=True)
        f = res.fields
        console.print(f"\n[bold]charges[/bold] {', '.join(f.charges) or '-'}  [bold]prison[/bold] "
                      f"{f.prison_months if f.prison_months is not None else '-'} months  [bold]fine[/bold] "
                      f"{f.fine_yuan if f.fine_yuan is not None else '-'} yuan")
        for c in res.citations:
            mark = "[green]resolved[/green]" if c.resolved else "[red]NOT IN CORPUS[/red]"
            console.print(f"  {c.canonical}: {mark}")
        if not res.sections.parsed:
            console.print("[yellow]the draft has no result section the evaluator can read[/yellow]")
    return res
