"""Search the user's own documents folder and statute indexes through the SearchSource protocol.

``LocalDocumentsSource`` keeps an in-memory BM25 index over the articles (statute texts with 第X条 markers,
each cited "<law>第N条") or windows (other texts) of the files in a folder. Before each
search it compares the files' content hashes with the indexed ones and re-indexes when a file was added,
changed or removed, so the agent always searches what is on disk. Files (Markdown, text, PDF, HTML) are read
into overlapping windows by the foundation's user-document reader (``legalrag.corpora.documents``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from legalrag.search.base import SearchResult, SourceNotConfigured, SourceType
from legalrag.types import Document


class LocalDocumentsSource:
    """BM25 over a folder of the user's documents, re-indexed automatically when file contents change."""

    name = "local"
    source_type = SourceType.LOCAL

    def __init__(self, folder: str | os.PathLike, *, window: int = 1000, overlap: int = 200, lang: str = "auto",
                 max_file_mb: float | None = None):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceNotConfigured(f"documents folder {self.folder} does not exist; pass an existing folder "
                                      "with --docs")
        self.window, self.overlap, self.lang = window, overlap, lang
        self.max_file_mb = max_file_mb  # None: the reader's default (100 MiB)
        self._hashes: dict[str, str] = {}
        self._documents: list[Document] = []
        self._retriever = None
        self.reindex_count = 0

    def refresh(self) -> bool:
        """Re-index if any file was added, changed or removed (by content hash); True when it did.

        Files are read by the foundation's user-document reader (``legalrag.corpora.documents``); windows of
        unchanged files are kept as they are."""
        from legalrag.corpora.documents import apply_update, plan_update

        update = plan_update(self.folder, self._hashes)
        if not (update.added or update.changed or update.removed) and self._hashes:
            return False
        if not update.manifest:  # empty folder (or every file removed)
            emptied = bool(self._hashes)
            self._hashes, self._documents, self._retriever = {}, [], None
            self.reindex_count += emptied
            return emptied
        self._documents, self._hashes = apply_update(self._documents, update, self.folder, size=self.window,
                                                     overlap=self.overlap, max_file_mb=self.max_file_mb)
        self._retriever = None
        if self._documents:
            from legalrag.retrieval.bm25 import BM25Retriever

            self._retriever = BM25Retriever.from_documents(self._documents, lang=self.lang)
        self.reindex_count += 1
        return True

    @property
    def documents(self) -> list[Document]:
        self.refresh()
        return list(self._documents)

    @property
    def passage_files(self) -> list[str]:
        """Files with no article markers (第X条), searched as overlapping passages rather than article by article."""
        self.refresh()
        return sorted({d.metadata["path"] for d in self._documents if d.metadata.get("unit") == "passage"})

    def unit_note(self) -> str | None:
        """A sentence saying which files are searched as passages (None when every file is read by article)."""
        files = self.passage_files
        if not files:
            return None
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        return (f"{len(files)} of the documents have no article markers (第X条) and are searched as passages, "
                f"cited by file title: {shown}")

    @property
    def content_lang(self) -> str | None:
        """``zh`` or ``en``: the language of the folder's texts (queries must be in it to match); None if empty."""
        self.refresh()
        if self.lang != "auto":
            return self.lang
        if not self._documents:
            return None
        from legalrag.retrieval.tokenize import detect_lang

        return detect_lang(d.text for d in self._documents)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        self.refresh()
        if self._retriever is None:
            return []
        return [hit_to_result(h, SourceType.LOCAL) for h in self._retriever.retrieve(query, k=k)]


class StatuteIndexSource:
    """A statute index built with ``legalrag index build``, searched with its default (or named) retriever."""

    name = "statutes"
    source_type = SourceType.STATUTE

    def __init__(self, index: Any, retriever: str | None = None):
        self.index = index  # an opened index (``legalrag.wiring.Root.index``)
        self._retriever = self.index.retriever(retriever)
        self.content_lang = self.index.manifest.get("lang")  # the language the index was built for

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        return [hit_to_result(h, SourceType.STATUTE) for h in self._retriever.retrieve(query, k=k)]


def hit_to_result(hit, source_type: SourceType) -> SearchResult:
    doc: Document = hit.document
    return SearchResult(title=doc.title or doc.id, url=doc.source or doc.id, snippet=doc.text[:300],
                        source_type=source_type, site="local" if source_type is SourceType.LOCAL else "statutes",
                        date=str(doc.metadata.get("date", "")), content=doc.text, score=float(hit.score),
                        metadata={"document_id": doc.id, "chunk": doc.metadata.get("window", doc.id),
                                  "path": doc.metadata.get("path", ""), "section": doc.metadata.get("section", "")})


