"""Repealed national laws and their successors, from a curated table shipped with the package.

The table (``data/citations/repealed_laws.json``, built by ``tools/make_repealed_table.py``) lists every law
that a corpus article repealed in the words "本法自…起施行。《X》…同时废止" (the nine laws the 民法典 replaced on
2021-01-01 among them), each with that article as its source, and a short hand-curated list of article-level
correspondences (合同法第一百零七条 -> 民法典第五百七十七条). A chain (A repealed by B, B later by C) is followed
to the law in force.

    >>> table = RepealedTable.load()
    >>> e = table.lookup("合同法")
    >>> e.successor, e.repealed_on
    ('中华人民共和国民法典', '2021-01-01')
    >>> table.successor_articles("合同法", "107")
    ('577',)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from legalrag.citecheck.aliases import law_key
from legalrag.errors import InputError

TABLE_PATH = Path(__file__).resolve().parents[1] / "data" / "citations" / "repealed_laws.json"


@dataclass(frozen=True)
class Repeal:
    """A repealed law: its successor (the law in force, after following chains), when, and the source."""

    law: str
    successor: str
    repealed_on: str | None  # ISO date when the repealing law took effect, None when it said "自公布之日起"
    source: str  # the corpus article that repealed it
    in_corpus: bool = False  # the corpus still holds the repealed law's text
    chain: tuple[str, ...] = ()  # intermediate successors, oldest first

    def describe(self, successor_articles: tuple[str, ...] = ()) -> str:
        when = f" on {self.repealed_on}" if self.repealed_on else ""
        via = f" (via {' -> '.join(self.chain)})" if self.chain else ""
        arts = ""
        if successor_articles:
            from legalrag.citecheck.chinese import ChineseCitation

            arts = ": now " + "、".join(ChineseCitation(self.successor, *_number(a)).article_label
                                      for a in successor_articles)
        return f"{self.law} was repealed{when}; replaced by {self.successor}{via}{arts} (source: {self.source})"


def _number(article: str) -> tuple[int, int | None]:
    """``"133-1"`` (第一百三十三条之一) -> ``(133, 1)``; ``"264"`` -> ``(264, None)``."""
    main, _, sub = article.partition("-")
    return int(main), int(sub) if sub else None


class RepealedTable:
    """Looks up a written law title (any form: 《合同法》, 中华人民共和国合同法) in the repealed-laws table."""

    def __init__(self, data: Mapping[str, Any]):
        self.data = data
        self._laws: dict[str, dict] = {}
        for e in data.get("laws", []):
            self._laws.setdefault(law_key(e["law"]), e)
        self._articles = {(law_key(a["law"]), str(a["article"])): a for a in data.get("articles", [])}

    @classmethod
    def load(cls, path: str | Path | None = None) -> "RepealedTable":
        return _load(str(path or TABLE_PATH))

    def __len__(self) -> int:
        return len(self._laws)

    def lookup(self, written: str | None) -> Repeal | None:
        """The repeal of the law ``written``, or None when the table does not list it."""
        if not written:
            return None
        e = self._laws.get(law_key(written))
        if e is None:
            return None
        chain: list[str] = []
        successor, seen = e["successor"], {law_key(e["law"])}
        while law_key(successor) in self._laws and law_key(successor) not in seen and len(chain) < 5:
            seen.add(law_key(successor))
            chain.append(successor)
            successor = self._laws[law_key(successor)]["successor"]
        return Repeal(e["law"], successor, e.get("repealed_on"), e["source"], bool(e.get("in_corpus")),
                      tuple(chain))

    def successor_articles(self, written: str | None, article_key: str) -> tuple[str, ...]:
        """The successor's article numbers for one article of a repealed law, when the table has them."""
        if not written:
            return ()
        a = self._articles.get((law_key(written), str(article_key)))
        return tuple(a["successor_articles"]) if a else ()


@lru_cache(maxsize=4)
def _load(path: str) -> RepealedTable:
    try:
        return RepealedTable(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the repealed-laws table {path}: {exc}; restore it with `git checkout -- "
                         "src/legalrag/data/citations` or reinstall legalrag", field="repealed_laws") from exc


__all__ = ["Repeal", "RepealedTable", "TABLE_PATH"]
