"""Fetching and extraction of real HTML and PDF files served from 127.0.0.1, and the error-page rules."""

from __future__ import annotations

import pytest
from support.qa_http import LocalServer

from legalrag.search.base import SearchResult, SourceType
from legalrag.search.fetch import best_window, enhance, error_reason, fetch_page, token_f1


@pytest.fixture(scope="module")
def server():
    s = LocalServer()
    s.add_file("/pages/usc1030.html", "usc1030.html", "text/html; charset=utf-8")
    s.add_file("/pages/js_disabled.html", "js_disabled.html", "text/html")
    s.add_file("/pages/no_results.html", "no_results.html", "text/html")
    s.add_file("/pages/malformed.html", "malformed.html", "text/html")
    s.add_file("/files/civ1950_5.pdf", "civ1950_5.pdf", "application/pdf")
    s.add_file("/files/broken.pdf", "broken.pdf", "application/pdf")
    s.add_file("/files/blob", "binary.bin", "application/octet-stream")
    s.add("/forbidden", "<html><body>Forbidden</body></html>", status=403)
    s.add("/slow", "<html><body>late</body></html>", delay=1.5)
    s.add("/huge", "<html><body>" + "<p>The tenant shall pay rent on the first day of each month.</p>" * 40000
          + "</body></html>")
    yield s
    s.close()


def test_html_extraction_drops_boilerplate(server):
    page = fetch_page(server.url + "/pages/usc1030.html")
    assert page.error is None and page.status == 200
    assert "exceeds authorized access" in page.text
    assert "dataLayer" not in page.text and "font-family" not in page.text


def test_pdf_extraction(server):
    page = fetch_page(server.url + "/files/civ1950_5.pdf")
    assert page.error is None and "21 calendar days" in page.text


@pytest.mark.parametrize("path,reason", [
    ("/pages/js_disabled.html", "javascript is disabled"),
    ("/pages/no_results.html", "no search results found"),
    ("/forbidden", "HTTP 403"),
    ("/missing", "HTTP 404"),
    ("/files/broken.pdf", "unreadable"),
    ("/files/blob", "binary"),
])
def test_error_pages_dropped_deterministically(server, path, reason):
    first = fetch_page(server.url + path)
    second = fetch_page(server.url + path)
    assert first.error is not None and reason in first.error
    assert first.error == second.error


def test_timeout_and_unreachable(server):
    assert "timeout" in fetch_page(server.url + "/slow", timeout=0.3).error
    assert "fetch failed" in fetch_page("http://127.0.0.1:9/nothing-listens-here", timeout=1).error


def test_size_cap_truncates_but_keeps_text(server):
    page = fetch_page(server.url + "/huge", max_bytes=200_000)
    assert page.truncated and page.error is None
    assert len(page.text) < 200_000 and "first day of each month" in page.text


def test_malformed_html_still_yields_text(server):
    page = fetch_page(server.url + "/pages/malformed.html")
    assert page.error is None and "within 21 days" in page.text


def test_token_f1_and_window():
    assert token_f1("the landlord shall return", "The landlord shall RETURN") == 1.0
    assert token_f1("abc", "xyz") == 0.0
    assert token_f1("出租人应当返还押金", "出租人返还押金") > 0.8
    filler = "Unrelated filler sentence about weather. " * 200
    text = filler + "The deposit must be returned within 21 days. " + filler
    win = best_window(text, "deposit returned within 21 days", width=500)
    assert len(win) == 500 and "within 21 days" in win
    assert best_window("short text", "x", width=2500) == "short text"


def test_error_reason_only_checks_head_of_long_pages():
    long_page = "Statute text. " * 400 + "Page not found errors are discussed here."
    assert error_reason(long_page) is None
    assert error_reason("Access Denied. You don't have permission to access this server. " * 2).startswith("error page")
    assert error_reason("too short") == "no readable text"


def test_enhance_fills_top_m_and_marks_failures(server):
    snippet = 'the term "exceeds authorized access" means to access a computer with authorization'
    results = [SearchResult("CFAA", server.url + "/pages/usc1030.html", snippet, SourceType.WEB),
               SearchResult("forum", server.url + "/pages/js_disabled.html", "thread", SourceType.WEB),
               SearchResult("pdf", server.url + "/files/civ1950_5.pdf", "21 calendar days", SourceType.WEB),
               SearchResult("fourth", server.url + "/pages/no_results.html", "not fetched", SourceType.WEB)]
    out = enhance(results, m=3, width=600)
    assert len(out[0].content) <= 600 and "exceeds authorized access" in out[0].content
    assert out[0].metadata["fetched"] is True
    assert out[1].content is None and "javascript" in out[1].metadata["fetch_error"]
    assert "21 calendar days" in out[2].content
    assert out[3].content is None and "fetch_error" not in out[3].metadata  # beyond m: left alone
