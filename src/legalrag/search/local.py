"""Search the user's own documents folder and statute indexes through the SearchSource protocol.

``LocalDocumentsSource`` keeps an in-memory BM25 index over windows of the files in a folder. Before each
search it compares the files' content hashes with the indexed ones and re-indexes when a file was added,
changed or removed, so the agent always searches what is on disk. Files are read by the foundation's
user-document reader when it is available (``legalrag.corpora.documents``), otherwise by the small reader here
(md/txt/html/pdf, overlapping windows).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from legalrag.errors import InputError
from legalrag.io import sha256_file
from legalrag.search.base import SearchResult, SearchSource, SourceNotConfigured, SourceType
from legalrag.types import Document, DocumentKind

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")


def _windows(text: str, size: int, overlap: int) -> list[str]:
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    step = max(1, size - overlap)
    return [text[i:i + size] for i in range(0, max(1, len(text) - overlap), step)]


def read_file_windows(path: Path, root: Path, size: int = 1000, overlap: int = 200) -> list[Document]:
    """Documents (one per window) for one file; unreadable files raise InputError naming the file."""
    from legalrag.search.fetch import extract_text

    ctype = {".pdf": "application/pdf", ".html": "text/html", ".htm": "text/html"}.get(path.suffix.lower(),
                                                                                       "text/plain")
    try:
        text = extract_text(path.read_bytes(), ctype, str(path))
    except Exception as exc:
        raise InputError(f"cannot read this document ({exc}); convert it to .txt, .md, .html or .pdf",
                         path=str(path)) from None
    rel = path.relative_to(root).as_posix()
    title = path.stem
    return [Document(id=f"{rel}#{i}", text=w, title=title, kind=DocumentKind.USER_DOCUMENT, source=str(path),
                     metadata={"path": rel, "chunk": i}) for i, w in enumerate(_windows(text, size, overlap))]


class LocalDocumentsSource:
    """BM25 over a folder of the user's documents, re-indexed automatically when file contents change."""

    name = "local"
    source_type = SourceType.LOCAL

    def __init__(self, folder: str | os.PathLike, *, window: int = 1000, overlap: int = 200, lang: str = "auto"):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceNotConfigured(f"documents folder {self.folder} does not exist; pass an existing folder "
                                      "with --docs")
        self.window, self.overlap, self.lang = window, overlap, lang
        self._hashes: dict[str, str] = {}
        self._docs_by_file: dict[str, list[Document]] = {}
        self._retriever = None
        self.reindex_count = 0

    def _scan(self) -> dict[str, str]:
        files = sorted(p for p in self.folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(self.folder).parts))
        return {p.relative_to(self.folder).as_posix(): sha256_file(p) for p in files}

    def refresh(self) -> bool:
        """Re-index if any file was added, changed or removed; True when it did."""
        hashes = self._scan()
        if hashes == self._hashes and (self._retriever is not None or not hashes):
            return False
        docs_by_file = {}
        for rel, digest in hashes.items():
            if self._hashes.get(rel) == digest and rel in self._docs_by_file:
                docs_by_file[rel] = self._docs_by_file[rel]  # unchanged file: reuse its windows
            else:
                docs_by_file[rel] = read_file_windows(self.folder / rel, self.folder, self.window, self.overlap)
        self._hashes, self._docs_by_file = hashes, docs_by_file
        documents = [d for rel in sorted(docs_by_file) for d in docs_by_file[rel]]
        self._retriever = None
        if documents:
            from legalrag.retrieval.bm25 import BM25Retriever

            self._retriever = BM25Retriever.from_documents(documents, lang=self.lang)
        self.reindex_count += 1
        return True

    @property
    def documents(self) -> list[Document]:
        self.refresh()
        return [d for rel in sorted(self._docs_by_file) for d in self._docs_by_file[rel]]

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        self.refresh()
        if self._retriever is None:
            return []
        return [hit_to_result(h, SourceType.LOCAL) for h in self._retriever.retrieve(query, k=k)]


class StatuteIndexSource:
    """A statute index built with ``legalrag index build``, searched with its default (or named) retriever."""

    name = "statutes"
    source_type = SourceType.STATUTE

    def __init__(self, path: str | os.PathLike, retriever: str | None = None):
        from legalrag.retrieval.index import open_index

        self.index = open_index(path)
        self._retriever = self.index.retriever(retriever)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        return [hit_to_result(h, SourceType.STATUTE) for h in self._retriever.retrieve(query, k=k)]


def hit_to_result(hit, source_type: SourceType) -> SearchResult:
    doc: Document = hit.document
    return SearchResult(title=doc.title or doc.id, url=doc.source or doc.id, snippet=doc.text[:300],
                        source_type=source_type, site="local" if source_type is SourceType.LOCAL else "statutes",
                        date=str(doc.metadata.get("date", "")), content=doc.text, score=float(hit.score),
                        metadata={"document_id": doc.id, "chunk": doc.metadata.get("chunk", doc.id)})


def sources_from_names(names: Sequence[str], *, docs: str | os.PathLike | None = None,
                       index: str | os.PathLike | None = None) -> tuple[dict[str, SearchSource], list[str]]:
    """Build the named sources (local, web, courtlistener); return them and a message for each one not usable."""
    from legalrag.search.courtlistener import CourtListenerSearch
    from legalrag.search.web import web_source_from_env

    sources: dict[str, SearchSource] = {}
    problems: list[str] = []
    for name in names:
        name = name.strip().lower()
        try:
            if name == "local":
                if docs is None and index is None:
                    raise SourceNotConfigured("the local source needs a documents folder (--docs DIR) or an index")
                if docs is not None:
                    sources["local"] = LocalDocumentsSource(docs)
                if index is not None:
                    sources["statutes"] = StatuteIndexSource(index)
            elif name == "web":
                sources["web"] = web_source_from_env()
            elif name == "courtlistener":
                sources["courtlistener"] = CourtListenerSearch.from_env()
            elif name:
                raise InputError(f"unknown source {name!r}; use local, web or courtlistener", field="sources")
        except SourceNotConfigured as exc:
            problems.append(f"{name}: {exc}")
    return sources, problems
