"""A folder of user documents as articles (statute texts with 第X条 markers) or overlapping windows, with incremental re-indexing by content hash.

    docs, manifest = load_folder("my_docs")                # every file, windowed
    update = plan_update("my_docs", manifest)              # later: what changed since that manifest
    docs, manifest = apply_update(docs, update, "my_docs")  # re-read only added and changed files

Each window is a :class:`~legalrag.types.Document` with ``kind=USER_DOCUMENT``, id ``"<relative path>#<n>"``
(stable while the file is unchanged), ``source`` the file path, ``title`` "<document title> — <section>" and
``metadata`` holding ``path``, ``doc_title``, ``section``, ``section_path``, ``window``, ``start``/``end``
(offsets in the extracted text), ``format``, ``sha256`` and, for PDFs, ``page``.

A window's section is the header in effect where it starts (or, before the first header, the first header
inside it). Sections are Markdown headers (``#``…``######``, also produced from HTML ``<h1>``…``<h6>``) and Chinese
headers on their own line (``第一编``/``第一章 总则``/``第二节 …``). Windows are cut, in order of preference,
before a header, at a blank line, at a line break, after a sentence end, after a comma or space; the next
window starts at most ``overlap`` characters before the cut, at a sentence start when one is in reach, and
never reaches back across a header.

The manifest is ``{relative_path: sha256}``; it does not depend on any index, so an index can store it and
ask :func:`plan_update` later.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from legalrag.corpora.extract import FORMATS, Extracted, extract
from legalrag.corpora.spans import DEFAULT_OVERLAP, DEFAULT_SIZE, article_spans, find_headers, header_breaks, \
    section_path, window_spans
from legalrag.errors import InputError
from legalrag.io import sha256_file
from legalrag.types import Document, DocumentKind

DEFAULT_MAX_FILE_MB = 100  # larger files are refused: a document this size is almost always a mistake


def max_file_bytes(max_file_mb: float | None = None) -> int:
    """The largest file read as one document: ``max_file_mb`` MiB (the edges pass the ``documents.max_file_mb``
    setting, $LEGALRAG_MAX_FILE_MB), else 100 MiB."""
    mb = DEFAULT_MAX_FILE_MB if max_file_mb is None else max_file_mb
    if not mb > 0:
        raise InputError(f"the largest document size must be a positive number of MiB, got {mb!r}")
    return int(mb * 2**20)


@dataclass(frozen=True)
class Update:
    """What changed in a folder since ``old_manifest``; ``manifest`` holds the current hash of every file."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    manifest: Mapping[str, str]

    @property
    def to_load(self) -> tuple[str, ...]:
        """Files to (re-)read: added and changed."""
        return self.added + self.changed

    @property
    def stale(self) -> tuple[str, ...]:
        """Files whose old windows must be dropped: changed and removed."""
        return self.changed + self.removed

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


def windows(extracted: Extracted, rel: str, source: str, sha256: str, size: int = DEFAULT_SIZE,
            overlap: int = DEFAULT_OVERLAP) -> list[Document]:
    """The documents of one extracted file: one per article (``metadata["unit"] == "article"``, title
    "<law>第N条", the law being the file's title) when the text has 第X条 markers, else overlapping windows
    (``unit == "passage"``). An article longer than three windows is cut into windows that keep its citation."""
    if article_spans(extracted.text):
        return _article_documents(extracted, rel, source, sha256, size, overlap)
    return _passage_windows(extracted, rel, source, sha256, size, overlap)


def _article_documents(extracted: Extracted, rel: str, source: str, sha256: str, size: int,
                       overlap: int) -> list[Document]:
    text, law = extracted.text, extracted.title
    headers = find_headers(text)
    offsets = [h.offset for h in headers]
    docs: list[Document] = []
    for label, a_start, a_end in article_spans(text):
        path = section_path(headers, bisect.bisect_right(offsets, a_start))
        pieces = [(a_start, a_end)] if a_end - a_start <= 3 * size else \
            [(a_start + s, a_start + e) for s, e in window_spans(text[a_start:a_end], size, overlap)]
        for start, end in pieces:
            meta = {"path": rel, "doc_title": law, "section": path[-1] if path else "", "section_path": path,
                    "window": len(docs), "start": start, "end": end, "format": extracted.format, "sha256": sha256,
                    "unit": "article", "article": label}
            if extracted.page_starts:
                meta["page"] = bisect.bisect_right(extracted.page_starts, start)
            docs.append(Document(id=f"{rel}#{len(docs)}", text=text[start:end], title=f"{law}{label}",
                                 kind=DocumentKind.USER_DOCUMENT, source=source, metadata=meta))
    return docs


def _passage_windows(extracted: Extracted, rel: str, source: str, sha256: str, size: int,
                     overlap: int) -> list[Document]:
    text, title = extracted.text, extracted.title
    headers = find_headers(text)
    offsets = [h.offset for h in headers]
    docs = []
    for n, (start, end) in enumerate(window_spans(text, size, overlap, breaks=header_breaks(text, headers))):
        upto = bisect.bisect_right(offsets, start)
        if upto == 0 and offsets and offsets[0] < end:  # no header before the window: take its first one
            upto = 1
        path = section_path(headers, upto)
        section = path[-1] if path else ""
        meta = {"path": rel, "doc_title": title, "section": section, "section_path": path, "window": n,
                "start": start, "end": end, "format": extracted.format, "sha256": sha256, "unit": "passage"}
        if extracted.page_starts:
            meta["page"] = bisect.bisect_right(extracted.page_starts, start)
        shown = f"{title} — {section}" if section and section != title else title
        docs.append(Document(id=f"{rel}#{n}", text=text[start:end], title=shown, kind=DocumentKind.USER_DOCUMENT,
                             source=source, metadata=meta))
    return docs


def scan_folder(folder: str | Path) -> dict[str, Path]:
    """Supported files under ``folder`` (recursively, hidden files and folders skipped) by relative path.

    Links are never a way out of the folder: a linked file or folder whose target lies outside it is an
    InputError naming the link, and linked folders are not descended into (their files inside the folder are
    found at their real place), so a link loop cannot trap the scan."""
    root = Path(folder)
    if not root.exists():
        raise InputError("folder not found; check the path", path=str(root))
    if not root.is_dir():
        raise InputError("expected a folder of documents, got a file", path=str(root))
    real_root = root.resolve()
    found = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for d in dirnames:
            if (here / d).is_symlink():
                _check_inside(here / d, real_root, root)
        for name in sorted(filenames):
            p = here / name
            if name.startswith(".") or p.suffix.lower() not in FORMATS:
                continue
            if p.is_symlink():
                if not p.exists():  # a broken link is reported when read
                    found[p.relative_to(root).as_posix()] = p
                    continue
                _check_inside(p, real_root, root)
            if p.is_file():
                found[p.relative_to(root).as_posix()] = p
    return dict(sorted(found.items()))


def _check_inside(link: Path, real_root: Path, root: Path) -> None:
    target = link.resolve()
    if target != real_root and real_root not in target.parents:
        raise InputError(f"is a link to {target}, outside the documents folder {root}; links out of the folder "
                         "are not followed: copy the file into the folder or remove the link", path=str(link))


def file_manifest(folder: str | Path) -> dict[str, str]:
    """``{relative_path: sha256}`` for every supported file in ``folder``."""
    return {rel: _hash(p) for rel, p in scan_folder(folder).items()}


def _hash(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as exc:
        raise InputError(f"cannot read this file ({exc.strerror or exc}); fix its permissions or remove it",
                         path=str(path)) from None


def plan_update(folder: str | Path, old_manifest: Mapping[str, str]) -> Update:
    """Compare the folder with a manifest from an earlier :func:`load_folder`: added, changed, removed."""
    now = file_manifest(folder)
    added = tuple(r for r in now if r not in old_manifest)
    changed = tuple(r for r in now if r in old_manifest and old_manifest[r] != now[r])
    unchanged = tuple(r for r in now if r in old_manifest and old_manifest[r] == now[r])
    removed = tuple(sorted(r for r in old_manifest if r not in now))
    return Update(added, changed, removed, unchanged, now)


def load_file(path: str | Path, rel: str | None = None, *, size: int = DEFAULT_SIZE,
              overlap: int = DEFAULT_OVERLAP, encoding: str = "utf-8",
              max_file_mb: float | None = None) -> tuple[list[Document], str]:
    """Windows of one file and the sha256 of the bytes they were made from; a file over ``max_file_mb`` MiB
    (default 100) is refused."""
    import hashlib

    p = Path(path)
    limit = max_file_bytes(max_file_mb)
    try:
        n_bytes = p.stat().st_size
        if n_bytes > limit:
            raise InputError(f"the file is {n_bytes / 2**20:.1f} MiB, over the {limit / 2**20:.0f} MiB limit for one "
                             "document; split it, or raise the limit (setting documents.max_file_mb, "
                             "$LEGALRAG_MAX_FILE_MB)", path=str(p))
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read this file ({exc.strerror or exc}); fix its permissions or remove it",
                         path=str(p)) from None
    digest = hashlib.sha256(data).hexdigest()
    extracted = extract(p, data, encoding)
    return windows(extracted, rel or p.name, str(p), digest, size, overlap), digest


def load_folder(folder: str | Path, *, paths: Iterable[str] | None = None, size: int = DEFAULT_SIZE,
                overlap: int = DEFAULT_OVERLAP, encoding: str = "utf-8", progress: bool = False,
                max_file_mb: float | None = None) -> tuple[list[Document], dict[str, str]]:
    """Windows of every supported file in ``folder`` (or only of ``paths``, relative to it) and their manifest.

    An empty folder, an unreadable file or undecodable text raises :class:`InputError` naming the file.
    """
    files = scan_folder(folder)
    if paths is not None:
        wanted = list(paths)
        missing = [r for r in wanted if r not in files]
        if missing:
            raise InputError(f"not in the folder (any more): {', '.join(missing)}; plan the update again",
                             path=str(folder))
        files = {r: files[r] for r in wanted}
    elif not files:
        raise InputError(f"no documents found; put Markdown, text, PDF or HTML files ({', '.join(sorted(FORMATS))}) "
                         "in it", path=str(folder))
    items = sorted(files.items())
    if progress:
        from tqdm import tqdm

        items = tqdm(items, desc="reading documents", unit="file")
    docs: list[Document] = []
    manifest: dict[str, str] = {}
    for rel, p in items:
        file_docs, manifest[rel] = load_file(p, rel, size=size, overlap=overlap, encoding=encoding,
                                             max_file_mb=max_file_mb)
        docs += file_docs
    return docs, manifest


def apply_update(documents: Iterable[Document], update: Update, folder: str | Path, *, size: int = DEFAULT_SIZE,
                 overlap: int = DEFAULT_OVERLAP, encoding: str = "utf-8", progress: bool = False,
                 max_file_mb: float | None = None) -> tuple[list[Document], dict[str, str]]:
    """Drop the windows of changed and removed files, read added and changed ones; return documents and manifest.

    Windows of unchanged files are kept as they are (same ids), so an index only needs to re-encode the rest.
    """
    keep = set(update.unchanged)
    kept = [d for d in documents if d.metadata.get("path") in keep]
    new_docs, new_manifest = load_folder(folder, paths=update.to_load, size=size, overlap=overlap,
                                         encoding=encoding, progress=progress, max_file_mb=max_file_mb)
    manifest = {r: update.manifest[r] for r in update.unchanged}
    manifest.update(new_manifest)
    docs = sorted(kept + new_docs, key=lambda d: (d.metadata["path"], d.metadata["window"]))
    return docs, dict(sorted(manifest.items()))
