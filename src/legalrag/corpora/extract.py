"""Plain text (with Markdown-style headers) from the files users keep: Markdown, text, PDF, HTML and Word (.docx).

PDF (pypdf), HTML (BeautifulSoup) and .docx (python-docx) need the ``docs`` extra and are imported only when such a file is read.
Every failure is an :class:`~legalrag.errors.InputError` naming the file and what to do about it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from legalrag._optional import require
from legalrag.errors import InputError

FORMATS = {".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt", ".pdf": "pdf", ".html": "html",
           ".htm": "html", ".docx": "docx"}
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.S)
_MD_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
_SENTENCE_END = "。．.!?！？；;:：，,"
MAX_PDF_CHARS = 50_000_000


@dataclass(frozen=True)
class Extracted:
    """The text of one file, its title, and (for PDFs) the offset where each page starts."""

    title: str
    text: str
    format: str
    page_starts: tuple[int, ...] = field(default=())


def extract(path: Path, data: bytes, encoding: str = "utf-8") -> Extracted:
    """Extract the text of a file whose bytes are ``data``; the format comes from the file name."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"unsupported file type {path.suffix!r}; use one of {sorted(FORMATS)}", path=str(path))
    if fmt == "pdf":
        return _pdf(path, data)
    if fmt == "docx":
        return _docx(path, data)
    text = decode(path, data, encoding)
    if fmt == "html":
        return _html(path, text)
    if fmt == "md":
        return _markdown(path, text)
    return Extracted(_first_line_title(text) or path.stem, text, "txt")


def decode(path: Path, data: bytes, encoding: str = "utf-8") -> str:
    """Decode text, honouring a UTF-8/UTF-16 byte-order mark; undecodable or binary data is an InputError."""
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("looks like a binary file, not text; remove it from the folder or give it the right "
                         "extension", path=str(path))
    if data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid {encoding} text (bad byte at offset {exc.start}); convert the file to UTF-8 "
            "(e.g. `iconv -f GB18030 -t UTF-8`) or pass the encoding it uses", path=str(path)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _first_line_title(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            if len(line) <= 60 and line[-1] not in _SENTENCE_END and not re.match(r"第\S{1,6}[编章节条]", line):
                return line
            return None
    return None


def _markdown(path: Path, text: str) -> Extracted:
    title = None
    fm = _FRONT_MATTER.match(text)
    if fm:
        m = re.search(r"^title:\s*(.+?)\s*$", fm.group(1), re.M)
        title = m.group(1).strip("'\"") if m else None
        text = text[fm.end():]
    if not title:
        h1 = _MD_H1.search(text)
        title = h1.group(1).strip() if h1 else (_first_line_title(text) or path.stem)
    return Extracted(title, text, "md")


def _docx(path: Path, data: bytes) -> Extracted:
    """Paragraphs (headings as Markdown headers), tables (one row a line, cells joined by " | ") and footnotes
    in document order, so citations in tables and notes are read too."""
    docx = require("docx", "docs")
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises zipfile, KeyError or its own errors for damaged files
        raise InputError(f"not a readable .docx file ({type(exc).__name__}: {exc}); save it again as Word "
                         ".docx (not .doc) or as text", path=str(path)) from None
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    lines: list[str] = []
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, document)
            text = para.text.strip()
            style = (para.style.name if para.style is not None else "") or ""
            heading = re.match(r"Heading (\d)", style)
            depth = int(heading.group(1)) if heading else (1 if style == "Title" else 0)
            lines.append(("#" * depth + " " + text) if depth and text else text)
        elif tag == "tbl":
            for row in Table(child, document).rows:
                lines.append(" | ".join(cell.text.strip() for cell in row.cells))
    notes = _docx_notes(document)
    if notes:
        lines += ["", *notes]
    text = "\n".join(lines).strip()
    if not text:
        raise InputError("the .docx has no text", path=str(path))
    title = (document.core_properties.title or "").strip()
    return Extracted(title or _first_line_title(text) or path.stem, text, "docx")


def _docx_notes(document) -> list[str]:
    """The footnotes' text (python-docx has no footnote API: read the footnotes part's XML)."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    out = []
    for rel in document.part.rels.values():
        if rel.reltype == RT.FOOTNOTES:
            from lxml import etree

            root = etree.fromstring(rel.target_part.blob)
            w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
            for note in root.iter(w + "footnote"):
                if int(note.get(w + "id", "0")) <= 0:  # separators
                    continue
                text = "".join(t.text or "" for t in note.iter(w + "t")).strip()
                if text:
                    out.append(f"[^{note.get(w + 'id')}]: {text}")
    return out


def _pdf(path: Path, data: bytes) -> Extracted:
    pypdf = require("pypdf", "docs")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError("the PDF is password-protected; save an unprotected copy", path=str(path))
        pages, total = [], 0
        for page in reader.pages:
            pages.append((page.extract_text() or "").replace("\r\n", "\n"))
            total += len(pages[-1])
            if total > MAX_PDF_CHARS:  # many pages each just under pypdf's per-stream limit
                raise InputError(f"the PDF expands to more than {MAX_PDF_CHARS:,} characters of text (a "
                                 "decompression bomb?); refused: split it or remove it", path=str(path))
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except InputError:
        raise
    except pypdf.errors.LimitReachedError:
        raise InputError("a stream in the PDF decompresses to more than pypdf's safety limit (a decompression "
                         "bomb?); refused: re-export the PDF or remove it", path=str(path)) from None
    except Exception as exc:  # pypdf raises many types for damaged files
        raise InputError(f"not a readable PDF ({type(exc).__name__}: {exc}); re-export it or remove it",
                         path=str(path)) from None
    starts, parts, pos = [], [], 0
    for text in pages:
        starts.append(pos)
        parts.append(text)
        pos += len(text) + 2
    text = "\n\n".join(parts)
    if not text.strip():
        raise InputError("the PDF has no extractable text (a scanned image?); run OCR on it first or remove it",
                         path=str(path))
    title = str(meta_title).strip() or _first_line_title(text) or path.stem
    return Extracted(title, text, "pdf", tuple(starts))


_BLOCKS = ["p", "div", "li", "tr", "section", "article", "table", "ul", "ol", "blockquote", "pre", "dd", "dt",
           "header", "main", "figure", "figcaption"]


def _html(path: Path, html: str) -> Extracted:
    bs4 = require("bs4", "docs")
    soup = bs4.BeautifulSoup(html, "html.parser")
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(["script", "style", "noscript", "template", "nav", "footer", "head"]):
        tag.decompose()
    for br in soup.find_all("br"):
        br.replace_with("\n")
    first_h1 = None
    for h in soup.find_all(re.compile(r"^h[1-6]$")):
        text = h.get_text(" ", strip=True)
        if h.name == "h1" and first_h1 is None:
            first_h1 = text
        h.replace_with(f"\n\n{'#' * int(h.name[1])} {text}\n\n")
    for tag in soup.find_all(_BLOCKS):
        tag.insert_before("\n\n- " if tag.name == "li" else "\n\n")
        tag.insert_after("\n\n")
    text = soup.get_text()
    text = re.sub(r"[ \t\u00a0]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return Extracted(page_title or first_h1 or path.stem, text, "html")
