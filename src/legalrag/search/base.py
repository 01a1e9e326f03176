"""One protocol for every place the QA agents can look: local documents, statute indexes, the web, case law.

Each source returns normalised :class:`SearchResult` values; ``to_document`` turns one into a
:class:`legalrag.types.Document` (kind WEB, JUDGMENT, USER_DOCUMENT or STATUTE) so the citation checker can
resolve answer citations against what was actually retrieved.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping, Protocol, runtime_checkable
from urllib.parse import urlparse

from legalrag.errors import LegalRagError
from legalrag.types import Document, DocumentKind


class SourceType(str, enum.Enum):
    LOCAL = "local"  # the user's own documents
    STATUTE = "statute"  # a statute corpus index
    WEB = "web"
    CASE_LAW = "courtlistener"


_KIND = {
    SourceType.LOCAL: DocumentKind.USER_DOCUMENT,
    SourceType.STATUTE: DocumentKind.STATUTE,
    SourceType.WEB: DocumentKind.WEB,
    SourceType.CASE_LAW: DocumentKind.JUDGMENT,
}


class SourceNotConfigured(LegalRagError):
    """A source was asked for but its key, URL or folder is not set; the message says which variable to set."""


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str  # URL, or a file path for local documents
    snippet: str
    source_type: SourceType
    site: str = ""
    date: str = ""
    content: str | None = None  # full or windowed page text once fetched
    score: float = 0.0
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.content if self.content else self.snippet

    @property
    def id(self) -> str:
        """Stable id: the source type plus a short hash of the URL/path (and chunk, where there is one)."""
        key = self.url + "#" + str(self.metadata.get("chunk", ""))
        return f"{self.source_type.value}:{hashlib.sha1(key.encode('utf-8')).hexdigest()[:12]}"

    def with_content(self, content: str | None, **metadata: Any) -> "SearchResult":
        return replace(self, content=content, metadata={**self.metadata, **metadata})

    def to_document(self) -> Document:
        meta = {"site": self.site, "date": self.date, "snippet": self.snippet, **dict(self.metadata)}
        return Document(id=str(self.metadata.get("document_id") or self.id), text=self.text, title=self.title,
                        kind=_KIND[self.source_type], source=self.url, metadata=meta)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["source_type"] = self.source_type.value
        d["metadata"] = dict(self.metadata)
        d["id"] = self.id
        return d


@runtime_checkable
class SearchSource(Protocol):
    """Anything that answers a query with normalised results. Failures raise LegalRagError subclasses."""

    name: str
    source_type: SourceType

    def search(self, query: str, k: int = 5) -> list[SearchResult]: ...


def site_of(url: str) -> str:
    host = urlparse(url).hostname or ""
    return host[4:] if host.startswith("www.") else host


_AUTHORITATIVE_SUFFIXES = (".gov", ".gov.cn", ".gov.uk", ".admin.ch", ".europa.eu", ".court.gov.cn", ".mil")
_AUTHORITATIVE_HOSTS = ("courtlistener.com", "supremecourt.gov", "uscourts.gov", "law.cornell.edu",
                        "legislation.gov.uk", "fedlex.admin.ch", "npc.gov.cn", "flk.npc.gov.cn", "eur-lex.europa.eu",
                        "federalregister.gov", "ecfr.gov", "govinfo.gov", "bger.ch")
_FORUM_MARKERS = ("reddit.com", "quora.com", "zhihu.com", "stackexchange.com", "forum", "bbs.", "tieba.baidu.com",
                  "avvo.com", "justanswer.com")


def authority_score(result: SearchResult) -> int:
    """2 for official sources (government, courts, gazettes, the user's own files, statute corpora),
    0 for forums and Q&A sites, 1 for everything else. Used to order evidence before the judge sees it."""
    if result.source_type in (SourceType.LOCAL, SourceType.STATUTE, SourceType.CASE_LAW):
        return 2
    host = site_of(result.url)
    if any(m in host for m in _FORUM_MARKERS):
        return 0
    if host.endswith(_AUTHORITATIVE_SUFFIXES) or any(host == h or host.endswith("." + h) for h in _AUTHORITATIVE_HOSTS):
        return 2
    if "court" in host or "gazette" in host or "legislation" in host:
        return 2
    return 1
