"""Enhanced search: fetch the top pages, extract their text, keep the window that matches the snippet.

Pages are fetched with a timeout and a byte cap; HTML goes through trafilatura (BeautifulSoup as fallback), PDF
through pypdf. Of the extracted text, a window of about 2,500 characters is kept, centred on the sentence whose
tokens best match the search snippet (token F1). Error pages (HTTP errors, timeouts, bot walls, "JavaScript is
disabled", empty search pages...) are recognised by fixed rules, so the same page is always dropped.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

from legalrag._optional import require
from legalrag.search.base import SearchResult

DEFAULT_MAX_BYTES = 3_000_000
DEFAULT_WINDOW = 2_500

# Phrases that mark a page with no usable content. Matched case-insensitively in the start of short pages only,
# so a long article that merely mentions "page not found" is kept.
ERROR_MARKERS = (
    "javascript is disabled", "enable javascript", "javascript is required", "please turn on javascript",
    "no search results found", "no results found", "your search did not match", "0 results for",
    "page not found", "404 not found", "403 forbidden", "access denied", "access to this page has been denied",
    "just a moment...", "checking your browser", "attention required", "are you a robot", "verify you are human",
    "captcha", "service unavailable", "too many requests", "this page isn't available", "page has been removed",
    "页面不存在", "页面未找到", "访问被拒绝", "没有找到相关结果", "未找到相关结果", "请开启javascript", "请启用javascript",
)
_MIN_TEXT = 80  # characters; less than this is not a page worth reading
_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?。！？;；\n]+[.!?。！？;；]*")


@dataclass(frozen=True)
class FetchedPage:
    url: str
    status: int | None = None
    content_type: str = ""
    text: str = ""
    error: str | None = None  # why the page is unusable; None when it is fine
    truncated: bool = False


def tokens(text: str) -> list[str]:
    """Lower-cased words for Latin scripts, single characters for CJK (no segmenter needed for overlap)."""
    return [t.lower() for t in _TOKEN.findall(text)]


def token_f1(a: str, b: str) -> float:
    ta, tb = Counter(tokens(a)), Counter(tokens(b))
    common = sum((ta & tb).values())
    if not common:
        return 0.0
    p, r = common / sum(ta.values()), common / sum(tb.values())
    return 2 * p * r / (p + r)


def best_window(text: str, snippet: str, width: int = DEFAULT_WINDOW) -> str:
    """The ``width``-character window of ``text`` centred on the sentence that best matches ``snippet``."""
    if len(text) <= width:
        return text
    best, best_span = -1.0, (0, 0)
    for m in _SENTENCE.finditer(text):
        f1 = token_f1(m.group(0), snippet) if snippet else 0.0
        if f1 > best:
            best, best_span = f1, m.span()
    centre = (best_span[0] + best_span[1]) // 2
    start = max(0, min(centre - width // 2, len(text) - width))
    return text[start:start + width]


def error_reason(text: str, status: int | None = None) -> str | None:
    """Why a page is unusable, by fixed rules; None for a usable page."""
    if status is not None and status >= 400:
        return f"HTTP {status}"
    stripped = " ".join(text.split())
    head = stripped[:600].lower() if len(stripped) > 3000 else stripped.lower()
    for marker in ERROR_MARKERS:
        if marker in head:
            return f"error page ({marker!r})"
    if len(stripped) < _MIN_TEXT:
        return "no readable text"
    return None


def _looks_binary(data: bytes) -> bool:
    sample = data[:4096]
    return b"\x00" in sample or sum(b < 9 or 13 < b < 32 for b in sample) > len(sample) // 20


def html_to_text(html: str) -> str:
    trafilatura = require("trafilatura", "docs")
    text = None
    try:
        text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
    except Exception:  # trafilatura raises assorted errors on broken markup; fall back to BeautifulSoup
        text = None
    if text and len(text.strip()) >= _MIN_TEXT:
        return text.strip()
    bs4 = require("bs4", "docs")
    soup = bs4.BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "nav", "footer", "header"]):
        tag.decompose()
    lines = [ln.strip() for ln in soup.get_text("\n").splitlines()]
    return "\n".join(ln for ln in lines if ln)


def pdf_to_text(data: bytes) -> str:
    pypdf = require("pypdf", "docs")
    reader = pypdf.PdfReader(io.BytesIO(data))
    return "\n".join((page.extract_text() or "") for page in reader.pages).strip()


def extract_text(data: bytes, content_type: str = "", url: str = "") -> str:
    """Text of an HTML, PDF or plain-text body; raises ValueError for anything else (binary, unknown)."""
    ctype = content_type.split(";")[0].strip().lower()
    if ctype == "application/pdf" or data[:5] == b"%PDF-" or (not ctype and url.lower().endswith(".pdf")):
        return pdf_to_text(data)
    if _looks_binary(data):
        raise ValueError(f"binary content ({ctype or 'unknown type'})")
    charset = re.search(r"charset=([\w-]+)", content_type, re.IGNORECASE)
    body = data.decode(charset.group(1) if charset else "utf-8", errors="replace")
    if ctype in ("text/html", "application/xhtml+xml", "application/xml", "text/xml") or (
            not ctype and body.lstrip()[:200].lower().startswith(("<!doctype", "<html"))):
        return html_to_text(body)
    if ctype in ("text/plain", "text/markdown", "application/json", "") :
        return body.strip()
    raise ValueError(f"unsupported content type {ctype!r}")


def fetch_page(url: str, *, timeout: float = 10.0, max_bytes: int = DEFAULT_MAX_BYTES) -> FetchedPage:
    """Download and extract one page. Never raises: problems are reported in ``FetchedPage.error``."""
    httpx = require("httpx", "http")
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True,
                          headers={"User-Agent": "legalrag/0.1 (+https://github.com/legalrag)"}) as resp:
            ctype = resp.headers.get("content-type", "")
            if resp.status_code >= 400:
                return FetchedPage(url, resp.status_code, ctype, error=f"HTTP {resp.status_code}")
            chunks, size, truncated = [], 0, False
            for chunk in resp.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size >= max_bytes:
                    truncated = True
                    break
            data = b"".join(chunks)[:max_bytes]
    except httpx.TimeoutException:
        return FetchedPage(url, error=f"timeout after {timeout:g} s")
    except httpx.HTTPError as exc:
        return FetchedPage(url, error=f"fetch failed ({exc.__class__.__name__})")
    try:
        text = extract_text(data, ctype, url)
    except Exception as exc:  # malformed PDF/HTML, unknown type: the page is dropped, the run goes on
        kind = "truncated at the size cap and " if truncated else ""
        return FetchedPage(url, resp.status_code, ctype, error=f"{kind}unreadable: {exc}"[:200], truncated=truncated)
    return FetchedPage(url, resp.status_code, ctype, text=text, error=error_reason(text, resp.status_code),
                       truncated=truncated)


def enhance(results: Sequence[SearchResult], m: int = 3, *, timeout: float = 10.0,
            max_bytes: int = DEFAULT_MAX_BYTES, width: int = DEFAULT_WINDOW) -> list[SearchResult]:
    """Fetch the top ``m`` results that have a URL and no content yet; fill ``content`` with the best window.

    A page that cannot be used keeps its snippet and gets ``metadata['fetch_error']``; the judge drops it.
    """
    todo = [i for i, r in enumerate(results) if r.url.startswith(("http://", "https://")) and not r.content][:m]
    out = list(results)
    if not todo:
        return out
    with ThreadPoolExecutor(max_workers=min(4, len(todo))) as pool:
        pages = list(pool.map(lambda i: fetch_page(results[i].url, timeout=timeout, max_bytes=max_bytes), todo))
    for i, page in zip(todo, pages):
        if page.error:
            out[i] = out[i].with_content(None, fetch_error=page.error, http_status=page.status)
        else:
            out[i] = out[i].with_content(best_window(page.text, out[i].snippet, width), fetched=True,
                                         http_status=page.status, truncated=page.truncated)
    return out
