"""What every parsed citation offers, and a citation found in running text with its span."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class LegalCitation(Protocol):
    """A structured citation of one article or section (Chinese, Swiss or US).

    ``law`` is the title or abbreviation as written (None when the text gave none); ``article_key`` matches
    ``Document.metadata["article"]`` of statute documents (``"264"``, ``"120-1"``, ``"29a"``, ``"1030"``).
    """

    system: str  # "zh", "ch" or "us"

    @property
    def law(self) -> str | None: ...

    @property
    def article_key(self) -> str: ...

    def canonical(self, law: str | None = None) -> str:
        """The citation in official style. For Chinese citations ``law`` replaces the written title (e.g. by the
        corpus title); Swiss and US citations keep their fixed abbreviations and ignore it."""
        ...


@dataclass(frozen=True)
class CitationMatch:
    """A citation found in a text: the parsed citation, its character span and the text exactly as written.

    For a list that shares one title (``《刑法》第一条、第二条``) the first match's span includes the title and the
    later ones cover only their own ``第…条`` part, with ``law_inherited=True``. ``第七十二条第一、三款`` gives
    two matches (paragraphs 1 and 3) with the same span.
    """

    citation: LegalCitation
    start: int
    end: int
    text: str
    law_inherited: bool = False

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end
