"""Property-based fuzzing of every reader of user files: corpus and query JSONL (malformed lines, GBK, UTF-16,
byte-order marks, NUL bytes, huge lines), user documents (Markdown, text, HTML, broken PDFs) and the judgment
field extractor. A reader either returns data or raises InputError naming the file (and the line and field
where there is one); nothing else escapes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from legalrag.corpora.documents import load_file
from legalrag.corpora.spans import window_spans
from legalrag.corpora.statutes import load_statutes
from legalrag.errors import InputError
from legalrag.evaluation.datasets import load_queries
from legalrag.io import read_jsonl
from legalrag.judgment.extract import extract_fields
from support.fuzz_support import FUZZ, tried  # noqa: E402
from support.pdf_support import one_page_pdf  # noqa: E402

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=3), max_leaves=8)
RECORD = st.fixed_dictionaries({}, optional={"id": JSON_VALUES, "content": JSON_VALUES, "name": JSON_VALUES,
                                             "query": JSON_VALUES, "gold_ids": JSON_VALUES, "qid": JSON_VALUES})
GOOD = st.builds(lambda i, t: {"id": f"a{i}", "content": t, "name": f"刑法第{i}条", "query": t,
                               "gold_ids": [f"a{i}"]}, st.integers(0, 5), st.text(min_size=1, max_size=30))
LINE = st.one_of(
    GOOD.map(lambda r: json.dumps(r, ensure_ascii=False)),
    RECORD.map(lambda r: json.dumps(r, ensure_ascii=False)),
    JSON_VALUES.map(json.dumps),  # arrays, numbers, strings: not objects
    st.text(max_size=60),  # not JSON at all
    st.just('{"id": "x", "content": "\\u0000 nul inside a string"}'),
    st.just('{"id": 1, "content": "abc"\x00}'),
    st.just("[" * 5000 + "]" * 5000),  # deep nesting
    st.just(""),
)
ENCODING = st.sampled_from(["utf-8", "utf-8-sig", "gbk", "utf-16", "utf-16-le", "latin-1"])


def _encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


def _check_error(exc: InputError, path: Path, n_lines: int) -> None:
    assert exc.path == str(path) and str(path) in str(exc)
    if exc.line is not None:
        assert 1 <= exc.line <= max(n_lines, 1) + 1


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(st.lists(LINE, max_size=8), ENCODING)
def test_jsonl_readers(scratch, lines, encoding):
    tried("readers: corpus and query JSONL (malformed, encodings)")
    path = scratch / "corpus.jsonl"
    path.write_bytes(_encode("\n".join(lines), encoding))
    for reader in (lambda: list(read_jsonl(path)), lambda: load_statutes(path), lambda: load_queries(path)):
        try:
            reader()
        except InputError as exc:
            _check_error(exc, path, len(lines))


@FUZZ
@given(st.binary(max_size=2000))
def test_jsonl_readers_on_arbitrary_bytes(scratch, data):
    tried("readers: JSONL on arbitrary bytes")
    path = scratch / "bytes.jsonl"
    path.write_bytes(data)
    for reader in (lambda: load_statutes(path), lambda: load_queries(path, require_gold=False)):
        try:
            reader()
        except InputError as exc:
            _check_error(exc, path, data.count(b"\n") + 1)


def test_huge_line_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "one-line.jsonl"
    path.write_text('{"id": "a", "content": "ok"}\n{"id": "b", "content": "' + "x" * 5000 + '"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line longer than") as err:
        list(read_jsonl(path, max_line_bytes=1000))
    assert err.value.line == 2


def test_gbk_corpus_names_line_and_fix(tmp_path):
    path = tmp_path / "gbk.jsonl"
    path.write_bytes('{"id": "a", "content": "ok"}\n{"id": "b", "content": "刑法第一条"}\n'.encode("gbk"))
    with pytest.raises(InputError, match="iconv") as err:
        load_statutes(path)
    assert err.value.line == 2


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_bom_corpora_are_read(tmp_path, encoding):
    path = tmp_path / "bom.jsonl"
    path.write_bytes('{"id": "a", "content": "刑法第一条", "name": "刑法第一条"}\n'.encode(encoding))
    assert [d.text for d in load_statutes(path)] == ["刑法第一条"]


DOC_SUFFIX = st.sampled_from([".md", ".txt", ".html", ".htm"])
HTMLISH = st.lists(st.one_of(st.sampled_from(["<", ">", "</", "<p>", "<h1>", "<h7>", "<br/>", "<script>", "<!--",
                                              "-->", "<![CDATA[", "&#", "&amp;", "&#xffffff;", "<table><tr>",
                                              "<title>", "# ", "\n", "---\n", "title: x\n", "第一条"]),
                             st.text(max_size=5)), max_size=60).map("".join)


@FUZZ
@given(st.one_of(HTMLISH, st.text(max_size=500)), DOC_SUFFIX, ENCODING)
def test_document_readers(scratch, text, suffix, encoding):
    tried("readers: Markdown / text / HTML documents")
    path = scratch / f"doc{suffix}"
    path.write_bytes(_encode(text, encoding))
    try:
        docs, _ = load_file(path)
    except InputError as exc:
        _check_error(exc, path, 0)
        return
    for d in docs:
        assert isinstance(d.text, str)


def _pdf_bytes(text: str) -> bytes:
    """A small valid one-page PDF showing ``text`` (ASCII)."""
    return one_page_pdf(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())


VALID_PDF = _pdf_bytes("Article 188 limitation period three years")


def test_the_handmade_pdf_is_read(tmp_path):
    path = tmp_path / "ok.pdf"
    path.write_bytes(VALID_PDF)
    docs, _ = load_file(path)
    assert "limitation period" in docs[0].text


@FUZZ
@given(st.data())
def test_broken_pdfs(scratch, data):
    tried("readers: broken PDFs (truncated, bit flips, junk)")
    raw = bytearray(VALID_PDF)
    how = data.draw(st.sampled_from(["truncate", "flip", "splice", "junk"]))
    if how == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 20))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    elif how == "splice":
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + data.draw(st.binary(max_size=200)) + raw[at:]
    else:
        raw = bytearray(b"%PDF-1.7\n" + data.draw(st.binary(max_size=500)))
    path = scratch / "broken.pdf"
    path.write_bytes(bytes(raw))
    try:
        load_file(path)
    except InputError as exc:
        _check_error(exc, path, 0)


@FUZZ
@given(st.one_of(st.text(max_size=800), st.lists(st.sampled_from(
    ["本院认为", "判决如下", "被告人", "犯盗窃罪", "判处有期徒刑", "一年", "六个月", "零", "十", "罚金人民币", "元",
     "万", "依照", "《中华人民共和国刑法》", "第二百六十四条", "之一", "第一款", "、", "，", "。", "\n", "拘役", "缓刑",
     "如不服本判决", "99999999999", "亿"]), max_size=80).map("".join)))
def test_judgment_extractor_never_raises(text):
    tried("judgment extractor on arbitrary text")
    fields = extract_fields(text)
    assert fields.prison_months is None or fields.prison_months >= 0
    assert fields.fine_yuan is None or fields.fine_yuan >= 0


@FUZZ
@given(st.text(max_size=3000), st.integers(1, 400), st.integers(0, 399))
def test_window_spans_cover_the_text(text, size, overlap):
    tried("documents: window spans")
    if overlap >= size:
        with pytest.raises(InputError):
            window_spans(text, size, overlap)
        return
    spans = window_spans(text, size, overlap)
    for start, end in spans:
        assert 0 <= start < end <= len(text) and end - start <= size
