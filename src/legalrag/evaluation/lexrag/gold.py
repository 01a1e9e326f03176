"""Resolving consultation gold names to the documents of a statute index, and saying what cannot be scored.

:func:`resolve_gold` maps names such as ``《中华人民共和国民法典》第四百二十八条`` to the index's documents through
the citation resolver. What it finds goes into a :class:`GoldReport`, every item named:

- each name that does not resolve, with its reason (a whole law such as ``《中华人民共和国民事诉讼法》`` is said to
  name a law, not an article; a Chinese name that is no citation gets a Chinese example, never a Swiss or US one);
- each turn whose data gives no gold at all, and each turn whose gold names all fail to resolve (both are left
  out of retrieval averages, so the scored count is the loaded count minus those);
- each gold whose ``article_context`` (the text the data gives for it) differs from the resolved article's text
  (another edition of the law, or a renumbered article): the score is then against another article than the
  data meant.

:func:`require_scorable` makes a run with nothing to score an error rather than a table of zeros.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from legalrag.evaluation.lexrag.data import ConsultTurn
from legalrag.errors import InputError

_ARTICLE = re.compile(r"第[零〇一二三四五六七八九十百千万两\d]+条")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LAW_SUFFIX = re.compile(r"(法|法典|条例|规定|解释|办法|决定|细则|规则|通则|章程|公约)(（[^）]*）)?$")
CHINESE_EXAMPLE = "《中华人民共和国民法典》第六百六十七条"
SAME_TEXT = 0.9  # difflib ratio at or above which the data's text and the resolved article count as one


@dataclass(frozen=True)
class GoldReport:
    """What resolving the gold names found, every item named."""

    names: int = 0
    resolved: int = 0
    unresolved: dict[str, str] = field(default_factory=dict)  # name -> reason
    turns_without_gold: tuple[str, ...] = ()  # turn ids left out of averages (no gold given, or none resolved)
    turns_with_empty_gold: tuple[str, ...] = ()  # the subset whose data gives no gold name at all
    text_mismatches: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> resolved id, both texts
    turns: int = 0  # turns loaded

    @property
    def scored(self) -> int:
        return self.turns - len(self.turns_without_gold)

    def to_dict(self) -> dict[str, Any]:
        return {"names": self.names, "resolved": self.resolved, "unresolved_count": len(self.unresolved),
                "unresolved": self.unresolved, "turns": self.turns, "scored_turns": self.scored,
                "turns_without_gold": list(self.turns_without_gold),
                "turns_with_empty_gold": list(self.turns_with_empty_gold),
                "text_mismatches": self.text_mismatches}

    def notices(self, limit: int | None = None) -> list[str]:
        """Lines a user reads before the scores: every excluded turn and mismatch named (``limit`` caps the
        unresolved names listed; the rest are in the saved summary)."""
        out = []
        if self.unresolved:
            out.append(f"{len(self.unresolved)} of {self.names} gold article names did not resolve to the index:")
            items = list(self.unresolved.items())
            for name, reason in items[:limit]:
                out.append(f"  {name}: {reason}")
            if limit is not None and len(items) > limit:
                out.append(f"  ... and {len(items) - limit} more (all in the saved summary's gold.unresolved)")
        empty = set(self.turns_with_empty_gold)
        if self.turns_without_gold:
            out.append(f"{len(self.turns_without_gold)} of {self.turns} turns are left out of the averages "
                       f"(scored: {self.scored}):")
            if empty:
                out.append(f"  no gold in the data ({len(empty)}): " + ", ".join(self.turns_with_empty_gold))
            rest = [t for t in self.turns_without_gold if t not in empty]
            if rest:
                out.append(f"  no gold name resolved ({len(rest)}): " + ", ".join(rest))
        for name, m in self.text_mismatches.items():
            out.append(f"warning: {name}: the data's article_context reads {m['given']!r} but it resolves to "
                       f"{m['resolved_name']} (id {m['resolved_id']}), which reads {m['resolved']!r}; another "
                       "edition or a renumbered article? the score is against the resolved one")
        return out


def _unresolvable(name: str, exc: Exception) -> str:
    """Why ``name`` is no article citation, in words for the name's language."""
    bare = name.strip().strip("《》").strip()
    if _CJK.search(name):
        if not _ARTICLE.search(name) and (name.strip().startswith("《") or _LAW_SUFFIX.search(bare)):
            return (f"names a whole law ({bare}), not an article; the gold must name an article, e.g. "
                    f"《{bare}》第十条, so this name cannot be scored")
        return f"not an article citation; expected a Chinese article name such as {CHINESE_EXAMPLE}"
    return f"not an article citation: {exc}"


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c)[0] != "P")


def same_text(given: str, resolved: str) -> bool:
    """Whether the data's article text and the resolved article are the same article (punctuation, spacing
    and width ignored; one cut short of the other counts as the same)."""
    a, b = _norm(given), _norm(resolved)
    if not a or not b or a in b or b in a:
        return True
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= SAME_TEXT


def _excerpt(text: str, n: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[:n] + "..."


def resolve_gold(turns: Sequence[ConsultTurn], resolver: Any) -> tuple[list[ConsultTurn], GoldReport]:
    """Set ``gold_ids`` and ``unresolved`` of every turn through ``resolver`` (a ``CitationResolver`` or the
    index's documents). Names that do not resolve are kept on the turn and in the report, with the reason."""
    from legalrag.citecheck import CitationResolver, citation_label, parse_citation

    if not isinstance(resolver, CitationResolver):
        resolver = CitationResolver.from_documents(resolver)
    cache: dict[str, tuple[Any, str]] = {}

    def lookup(name: str) -> tuple[Any, str]:
        if name not in cache:
            try:
                citation = parse_citation(name)
            except (ValueError, InputError) as exc:
                cache[name] = (None, _unresolvable(name, exc))
            else:
                r = resolver.lookup(citation) if citation is not None else None
                if r is None:
                    cache[name] = (None, _unresolvable(name, ValueError("not recognised")))
                else:
                    cache[name] = (r.document, "") if r.ok else (None, r.message)
        return cache[name]

    out, unresolved, excluded, empty, mismatches = [], {}, [], [], {}
    for t in turns:
        ids, missing = [], []
        texts = dict(t.article_texts)
        if not texts and t.article_context and len(t.articles) == 1:
            texts = {t.articles[0]: t.article_context}
        for name in t.articles:
            doc, reason = lookup(name)
            if doc is None:
                missing.append(name)
                unresolved[name] = reason
                continue
            if doc.id not in ids:
                ids.append(doc.id)
            given = texts.get(name, "")
            if given and name not in mismatches and not same_text(given, doc.text):
                mismatches[name] = {"resolved_id": doc.id, "resolved_name": citation_label(doc),
                                    "given": _excerpt(given), "resolved": _excerpt(doc.text), "turn": t.id}
        if not ids:
            excluded.append(t.id)
            if not t.articles:
                empty.append(t.id)
        out.append(replace(t, gold_ids=tuple(ids), unresolved=tuple(missing)))
    names = {n for t in turns for n in t.articles}
    return out, GoldReport(len(names), len(names) - len(unresolved), unresolved, tuple(excluded), tuple(empty),
                           mismatches, len(turns))


def require_scorable(turns: Sequence[ConsultTurn], report: GoldReport) -> None:
    """An InputError when no turn has a resolved gold article: scores would be a table of zeros."""
    if any(t.gold_ids for t in turns):
        return
    reasons = list(dict.fromkeys(report.unresolved.values()))[:3]
    hint = ("; e.g. " + " | ".join(reasons)) if reasons else ""
    raise InputError(f"nothing scorable: none of the {len(turns)} turns has a gold article that resolves to this "
                     f"index ({len(report.turns_with_empty_gold)} give no gold, {len(report.unresolved)} names do "
                     f"not resolve{hint}); check that the index holds the laws the data cites (e.g. build it from "
                     "the data's law library) and that the gold names articles")
