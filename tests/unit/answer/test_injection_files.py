"""Hostile files and pages: links out of a --docs folder, link loops, oversized files, PDF decompression bombs
and gzip bombs from the web are refused (InputError naming the file, or a bounded, marked fetch)."""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from legalrag.corpora.documents import apply_update, load_file, load_folder, plan_update, scan_folder
from legalrag.errors import InputError
from legalrag.search.local import LocalDocumentsSource
from support.pdf_support import one_page_pdf


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# 合同\n\n租金按月支付。\n", encoding="utf-8")
    (docs / "sub" / "b.txt").write_text("工资按月发放。\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("API_KEY=sk-outside\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "c.md").write_text("# 外部\n\n不应读取。\n", encoding="utf-8")
    return docs


def test_file_link_out_of_the_folder_is_refused(folder):
    os.symlink(folder.parent / "secret.txt", folder / "notes.txt")
    with pytest.raises(InputError, match="outside the documents folder") as err:
        load_folder(folder)
    assert err.value.path == str(folder / "notes.txt")
    with pytest.raises(InputError, match="outside the documents folder"):
        LocalDocumentsSource(folder).search("API_KEY")


def test_folder_link_out_of_the_folder_is_refused(folder):
    os.symlink(folder.parent / "outside", folder / "more")
    with pytest.raises(InputError, match="outside the documents folder"):
        scan_folder(folder)


def test_link_loops_and_inner_links_are_harmless(folder):
    os.symlink(folder, folder / "sub" / "loop")  # a folder linking back to the root
    os.symlink(folder / "a.md", folder / "sub" / "same.md")  # a file link inside the folder
    found = scan_folder(folder)
    assert sorted(found) == ["a.md", "sub/b.txt", "sub/same.md"]


def test_manifest_paths_cannot_escape_the_folder(folder):
    docs, manifest = load_folder(folder)
    update = plan_update(folder, manifest)
    forged = update.__class__(added=("../secret.txt",), changed=(), removed=(), unchanged=update.unchanged,
                              manifest={**update.manifest, "../secret.txt": "0" * 64})
    with pytest.raises(InputError, match="not in the folder"):
        apply_update(docs, forged, folder)


def test_oversized_file_is_refused(folder):
    (folder / "big.txt").write_text("条款。" * 2000, encoding="utf-8")
    with pytest.raises(InputError, match="over the 0 MiB limit|over the .* MiB limit") as err:
        load_file(folder / "big.txt", max_file_mb=0.005)
    assert "LEGALRAG_MAX_FILE_MB" in str(err.value) and "documents.max_file_mb" in str(err.value)


def _flate_bomb_pdf(raw_mb: int) -> bytes:
    raw = b"BT /F1 12 Tf 72 720 Td (" + b"A" * 60 + b") Tj ET\n"
    return one_page_pdf(zlib.compress(raw * (raw_mb * 2**20 // len(raw)), 1), flate=True)


def test_pdf_decompression_bomb_is_refused(tmp_path):
    path = tmp_path / "bomb.pdf"
    path.write_bytes(_flate_bomb_pdf(90))  # under 1 MB on disk, 90 MB once inflated
    assert path.stat().st_size < 2**20
    with pytest.raises(InputError, match="decompression bomb") as err:
        load_file(path)
    assert err.value.path == str(path)


def test_gzip_bomb_page_is_cut_at_the_fetch_cap():
    from legalrag.search.fetch import fetch_page

    body = gzip.compress(b"<html><body><p>" + b"a " * (15 * 2**20) + b"</p></body></html>", 1)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = fetch_page(f"http://127.0.0.1:{server.server_address[1]}/bomb", max_bytes=1_000_000)
    finally:
        server.shutdown()
        server.server_close()  # shutdown() leaves the socket listening until it is collected
    assert page.truncated and len(page.text) <= 1_000_000
