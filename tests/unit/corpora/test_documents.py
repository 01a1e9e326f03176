"""User documents: folder -> overlapping windows with titles and sections; incremental updates; bad input."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.corpora.documents import apply_update, file_manifest, load_file, load_folder, plan_update
from legalrag.corpora.spans import find_headers, window_spans
from legalrag.errors import InputError
from legalrag.io import sha256_file
from legalrag.types import DocumentKind

DOCS = Path(__file__).parents[2] / "data" / "docs"


@pytest.fixture
def folder(tmp_path) -> Path:
    target = tmp_path / "docs"
    shutil.copytree(DOCS, target)
    return target


def _by_path(docs):
    out = {}
    for d in docs:
        out.setdefault(d.metadata["path"], []).append(d)
    return out


# ---------------------------------------------------------------- reading a folder


def test_load_folder_reads_every_format(folder):
    docs, manifest = load_folder(folder)
    assert sorted(manifest) == ["guide.md", "handbook.txt", "memo.pdf", "sub/notes.html"]
    assert manifest["guide.md"] == sha256_file(folder / "guide.md")
    per_file = _by_path(docs)
    assert set(per_file) == set(manifest)
    for rel, windows in per_file.items():
        assert [d.id for d in windows] == [f"{rel}#{n}" for n in range(len(windows))]
        for d in windows:
            assert d.kind is DocumentKind.USER_DOCUMENT
            assert d.source == str(folder / rel)
            assert 0 < len(d.text) <= 500 and d.text == d.text.strip()
            assert d.metadata["sha256"] == manifest[rel]
    assert {d.metadata["format"] for d in docs} == {"md", "txt", "pdf", "html"}


def test_markdown_title_sections_and_code_fences(folder):
    docs = _by_path(load_folder(folder, size=200, overlap=40)[0])["guide.md"]
    assert {d.metadata["doc_title"] for d in docs} == {"劳动争议处理指南"}  # from the front matter
    assert "tags:" not in "".join(d.text for d in docs)
    sections = [d.metadata["section_path"] for d in docs]
    assert ["劳动争议处理指南", "二、劳动仲裁", "申请材料"] in sections
    for d in docs:  # a window that starts with a header belongs to that header's section
        if d.text.startswith("#"):
            assert d.metadata["section"] == d.text.splitlines()[0].lstrip("#").strip()
    # this window starts in 申请材料 and runs into 审理期限: its section is where it starts
    window = next(d for d in docs if "四十五日内结束" in d.text)
    assert window.text.startswith("用人单位的名称") and "### 审理期限" in window.text
    assert window.metadata["section"] == "申请材料"
    assert window.title == "劳动争议处理指南 — 申请材料"
    default = _by_path(load_folder(folder)[0])["guide.md"]
    assert [d.text.splitlines()[0] for d in default] == ["# 劳动争议处理指南", "### 申请材料"]
    assert all("这一行在代码块里" not in h.text for h in find_headers((folder / "guide.md").read_text("utf-8")))


def test_chinese_chapter_headers_in_text_files(folder):
    docs = _by_path(load_folder(folder, size=150, overlap=30)[0])["handbook.txt"]
    assert {d.metadata["doc_title"] for d in docs} == {"示例公司员工手册"}  # first short line
    # a text with article markers is read article by article, each cited "<title>第N条", within its section
    assert {d.metadata["unit"] for d in docs} == {"article"}
    article = next(d for d in docs if "第七条" in d.text)
    assert article.text.startswith("第七条") and "第二节" not in article.text
    assert article.metadata["section_path"] == ["第二章 劳动合同", "第二节 合同的解除"]
    assert article.title == "示例公司员工手册第七条" and article.metadata["article"] == "第七条"
    assert docs[0].metadata["section"] == "第一章 总则" and docs[0].text.startswith("第一条")
    # the same text without article markers is windowed; a window takes the section it starts in
    plain = re.sub(r"(?m)^第[一二三四五六七八九十]+条 ?", "", (folder / "handbook.txt").read_text("utf-8"))
    (folder / "handbook.txt").write_text(plain, encoding="utf-8")
    docs = _by_path(load_folder(folder, size=150, overlap=30)[0])["handbook.txt"]
    assert {d.metadata["unit"] for d in docs} == {"passage"}
    window = next(d for d in docs if "公司解除劳动合同的" in d.text)
    assert window.text.startswith("第二节 合同的解除")
    assert window.metadata["section_path"] == ["第二章 劳动合同", "第二节 合同的解除"]
    assert window.title == "示例公司员工手册 — 第二节 合同的解除"
    first = docs[0]
    assert first.metadata["section"] == "第一章 总则"  # before any header: the first header inside it
    headers = [(h.level, h.text) for h in find_headers((folder / "handbook.txt").read_text("utf-8"))]
    assert headers[:4] == [(2, "第一章 总则"), (2, "第二章 劳动合同"), (3, "第一节 合同的订立"), (3, "第二节 合同的解除")]
    assert not any(t.startswith("第一条") for _, t in headers)  # articles are not sections


def test_html_page(folder):
    docs = _by_path(load_folder(folder)[0])["sub/notes.html"]
    text = "\n".join(d.text for d in docs)
    assert docs[0].metadata["doc_title"] == "Notes on Swiss appeals to the Federal Supreme Court"
    assert "console.log" not in text and "font-family" not in text and "Home" not in text
    assert "Last updated" not in text  # footer dropped
    assert "Art. 100 Abs. 1 BGG" in text and "- File the appeal in one of the official languages." in text
    heard = next(d for d in docs if "Art. 29 Abs. 2 BV" in d.text)
    assert heard.metadata["section_path"] == ["Appeals to the Federal Supreme Court", "Right to be heard"]


def test_pdf_text_title_and_pages(folder):
    docs = _by_path(load_folder(folder, size=150, overlap=0)[0])["memo.pdf"]
    assert {d.metadata["doc_title"] for d in docs} == {"Memo on computer misuse claims"}  # PDF metadata
    text = " ".join(d.text for d in docs)
    assert "18 U.S.C. 1030(a)(2)" in text and "Fed. R. Civ. P. 12(b)(6)" in text
    assert docs[0].metadata["page"] == 1
    assert next(d for d in docs if "access logs" in d.text).metadata["page"] == 2


def test_committed_pdf_matches_its_generator():
    code = "import make_docs_pdf, sys; sys.stdout.buffer.write(make_docs_pdf.build())"
    result = subprocess.run([sys.executable, "-c", code], cwd=DOCS.parent, capture_output=True, check=True)
    assert result.stdout == (DOCS / "memo.pdf").read_bytes()


def test_windows_overlap_and_prefer_sentence_boundaries(tmp_path):
    sentences = [f"这是第{i}句话，用来测试窗口的切分是否落在句子边界上。" for i in range(60)]
    (tmp_path / "long.txt").write_text("".join(sentences), encoding="utf-8")
    docs, _ = load_file(tmp_path / "long.txt", "long.txt", size=120, overlap=40)
    assert len(docs) > 5
    for a, b in zip(docs, docs[1:]):
        assert a.text.endswith("。")  # cut after a sentence end
        assert b.metadata["start"] < a.metadata["end"]  # overlapping...
        assert a.metadata["end"] - b.metadata["start"] <= 40  # ...by at most the overlap
        assert b.text.startswith("这是第")  # and starting at a sentence start
    assert "".join(sentences).endswith(docs[-1].text)


def test_stable_ids_and_text_spans(folder):
    a, _ = load_folder(folder)
    b, _ = load_folder(folder)
    assert [(d.id, d.text) for d in a] == [(d.id, d.text) for d in b]


# ---------------------------------------------------------------- window_spans properties

PIECES = st.sampled_from(["短句。", "A short sentence. ", "没有标点的一长串文字" * 3, "\n\n", "\n", "，", " ", "x" * 37,
                          "第一条 规定如下；", "Words and more words, "])


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=80), st.integers(20, 300), st.data())
def test_window_spans_invariants(pieces, size, data):
    text = "".join(pieces)
    overlap = data.draw(st.integers(0, size - 1))
    spans = window_spans(text, size, overlap)
    covered = set()
    for (s, e), nxt in zip(spans, spans[1:] + [None]):
        assert 0 <= s < e <= len(text) and e - s <= size
        assert not text[s].isspace() and not text[e - 1].isspace()
        covered.update(range(s, e))
        if nxt is not None:
            assert s < nxt[0]  # progress
            assert e - nxt[0] <= overlap  # never more overlap than asked
    assert all(text[i].isspace() or i in covered for i in range(len(text)))  # nothing is lost


def test_windows_do_not_reach_back_across_a_header():
    text = "甲" * 380 + "。\n\n## 新的一节\n\n" + "乙" * 200
    header = text.index("## ")
    spans = window_spans(text, 500, 100, breaks=[header])
    assert spans[0][1] <= header and spans[1][0] == header


@pytest.mark.parametrize("size,overlap", [(0, 0), (100, 100), (100, -1)])
def test_bad_window_parameters(size, overlap):
    with pytest.raises(InputError, match="overlap|size"):
        window_spans("text", size, overlap)


# ---------------------------------------------------------------- incremental updates


def test_plan_and_apply_update(folder):
    docs, manifest = load_folder(folder)
    assert plan_update(folder, manifest).empty

    (folder / "handbook.txt").write_text("修改后的员工手册\n\n第一章 总则\n\n第一条 新的内容。", encoding="utf-8")
    (folder / "memo.pdf").unlink()
    (folder / "sub" / "new.md").write_text("# New note\n\nSome new text.", encoding="utf-8")
    (folder / "ignored.xlsx").write_bytes(b"PK\x03\x04 not supported")
    (folder / ".hidden.md").write_text("# hidden", encoding="utf-8")

    update = plan_update(folder, manifest)
    assert update.added == ("sub/new.md",)
    assert update.changed == ("handbook.txt",)
    assert update.removed == ("memo.pdf",)
    assert update.unchanged == ("guide.md", "sub/notes.html")
    assert update.to_load == ("sub/new.md", "handbook.txt") and set(update.stale) == {"handbook.txt", "memo.pdf"}
    assert update.manifest == file_manifest(folder)

    new_docs, new_manifest = apply_update(docs, update, folder)
    fresh_docs, fresh_manifest = load_folder(folder)
    assert new_manifest == fresh_manifest == dict(update.manifest)
    assert [(d.id, d.text, d.title) for d in new_docs] == [(d.id, d.text, d.title) for d in fresh_docs]
    kept = {d.id: d for d in docs if d.metadata["path"] == "guide.md"}
    assert all(kept[d.id] is d for d in new_docs if d.id in kept)  # unchanged windows are reused as they are
    assert plan_update(folder, new_manifest).empty


def test_plan_update_from_nothing_and_to_nothing(folder, tmp_path):
    update = plan_update(folder, {})
    assert set(update.added) == set(file_manifest(folder)) and not update.removed
    empty = tmp_path / "empty"
    empty.mkdir()
    gone = plan_update(empty, file_manifest(folder))
    assert set(gone.removed) == set(file_manifest(folder)) and not gone.to_load


# ---------------------------------------------------------------- bad input


def test_empty_folder(tmp_path):
    (tmp_path / "readme.xlsx").write_bytes(b"x")
    with pytest.raises(InputError, match=re.escape(str(tmp_path)) + ".*no documents found"):
        load_folder(tmp_path)


def test_missing_folder_and_file_instead_of_folder(tmp_path):
    with pytest.raises(InputError, match="folder not found"):
        load_folder(tmp_path / "nope")
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="expected a folder"):
        plan_update(tmp_path / "a.txt", {})


def test_undecodable_text_names_the_file(tmp_path):
    (tmp_path / "good.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes("劳动合同".encode("gb18030") + b"\xff\xfe\x80")
    with pytest.raises(InputError, match=r"bad\.txt.*not valid utf-8 text.*convert the file to UTF-8"):
        load_folder(tmp_path)


def test_other_encodings(tmp_path):
    (tmp_path / "gbk.txt").write_bytes("第一章 总则\n\n第一条 劳动合同。".encode("gb18030"))
    docs, _ = load_folder(tmp_path, encoding="gb18030")
    assert "劳动合同" in docs[0].text
    (tmp_path / "gbk.txt").unlink()
    (tmp_path / "bom.md").write_bytes("\ufeff# 标题\n\n正文。".encode("utf-8"))
    (tmp_path / "u16.txt").write_bytes("UTF-16 text with 中文".encode("utf-16"))
    docs, _ = load_folder(tmp_path)
    assert docs[0].metadata["doc_title"] == "标题" and docs[1].text == "UTF-16 text with 中文"


def test_binary_file_with_a_text_name(tmp_path):
    (tmp_path / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InputError, match=r"image\.txt.*binary"):
        load_folder(tmp_path)


def test_damaged_and_empty_pdfs(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    with pytest.raises(InputError, match=r"broken\.pdf.*not a readable PDF"):
        load_folder(tmp_path)
    pypdf = pytest.importorskip("pypdf")
    (tmp_path / "broken.pdf").unlink()
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with open(tmp_path / "scan.pdf", "wb") as fh:
        writer.write(fh)
    with pytest.raises(InputError, match=r"scan\.pdf.*no extractable text.*OCR"):
        load_folder(tmp_path)


def test_unreadable_file(tmp_path):
    (tmp_path / "link.md").symlink_to(tmp_path / "does-not-exist.md")
    with pytest.raises(InputError, match=r"link\.md.*cannot read this file"):
        load_folder(tmp_path)
    with pytest.raises(InputError, match=r"link\.md.*cannot read this file"):
        plan_update(tmp_path, {})


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read any file")
def test_file_without_read_permission(tmp_path):
    p = tmp_path / "secret.txt"
    p.write_text("x", encoding="utf-8")
    p.chmod(0)
    try:
        with pytest.raises(InputError, match=r"secret\.txt.*cannot read"):
            load_folder(tmp_path)
    finally:
        p.chmod(0o644)


def test_paths_that_vanished_since_the_plan(folder):
    update = plan_update(folder, {})
    (folder / "guide.md").unlink()
    with pytest.raises(InputError, match="guide.md.*plan the update again"):
        apply_update([], update, folder)
