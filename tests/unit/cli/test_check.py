"""`legalrag check` (terminal, --json, --annotate md/html), POST /citations/check (text and a .docx upload), the
.docx reader, and the checker's limits, over a BM25 index of six articles."""

from __future__ import annotations

import base64
import io
import json

import pytest
from typer.testing import CliRunner

from legalrag.cli import app
from unit.citecheck.test_marks import CLAIM, DOCS

TEXT = ("# 意见\n\n"
        f"根据《劳动合同法》第八十二条，{CLAIM}。\n"
        f"根据《劳动合同法》第二十三条，{CLAIM}。\n"
        "依照《合同法》第一百零七条，违约方应承担违约责任。\n"
        "《中华人民共和国刑法》第九百九十九条规定了盗窃罪。\n"
        "See also Art. 100 Abs. 1 BGG.\n")
MARKS = ["supported", "exists", "repealed", "not_found", "no_corpus"]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    from legalrag.wiring import Root

    out = tmp_path_factory.mktemp("check") / "idx"
    Root().build_index(out, DOCS, retrievers=("bm25",), lang="zh")
    return out


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "opinion.md"
    p.write_text(TEXT, encoding="utf-8")
    return p


def run(*args, input=None):
    return CliRunner().invoke(app, ["check", *map(str, args)], input=input)


def test_check_prints_a_report_with_marks_and_reasons(index_dir, text_file):
    res = run(text_file, "--index", index_dir, "-o", "support=lexical")
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line[:1] in "✓?✗↻∅"]
    assert [line[0] for line in lines] == ["✓", "?", "↻", "✗", "∅"]
    assert "no clause of the article says what the claim says" in lines[1] and "closest clause 「" in lines[1]
    assert "中华人民共和国民法典" in lines[2] and "no corpus for this jurisdiction" in lines[4]
    assert "supporting clause: 用人单位自用工之日起超过一个月不满一年" in res.output  # ✓ shows the clause it rests on
    assert "closest clause: 用人单位与劳动者可以在劳动合同中约定" in res.output  # ? shows the closest one
    assert "means: a clause of this article says what the sentence says" in res.output
    assert "5 citation(s): 1 supported" in res.output


def test_check_json_and_stdin(index_dir):
    res = run("-", "--index", index_dir, "-o", "support=lexical", "--json", input=TEXT)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [c["mark"] for c in out["citations"]] == MARKS
    first = out["citations"][0]
    assert first["document_text"].startswith("用人单位自用工之日起") and TEXT[first["start"]:first["end"]] == "《劳动合同法》第八十二条"
    assert out["summary"]["supported"] == 1 and out["summary"]["no_citations"] is False
    assert first["clause"].startswith("用人单位自用工之日起") and first["clause_reason"] is None  # ✓: the clause
    second = out["citations"][1]
    assert second["clause"] and "no clause of the article" in second["clause_reason"]  # ?: the closest, and why
    assert first["mark_meaning"].startswith("a clause of this article says") and "closest clause" in \
        second["mark_meaning"]


def test_check_writes_annotated_markdown_and_html(index_dir, text_file, tmp_path):
    md, page = tmp_path / "out.md", tmp_path / "out.html"
    assert run(text_file, "--index", index_dir, "-o", "support=lexical", "--annotate", md).exit_code == 0
    assert run(text_file, "--index", index_dir, "-o", "support=lexical", "--annotate", page).exit_code == 0
    annotated = md.read_text(encoding="utf-8")
    assert "《劳动合同法》第八十二条[✓1]" in annotated and "《劳动合同法》第二十三条[?2]" in annotated
    assert "4. ✗ 中华人民共和国刑法第九百九十九条" in annotated
    html = page.read_text(encoding="utf-8")
    assert '<mark class="supported"' in html and '<mark class="repealed"' in html and "&lt;" not in TEXT


def test_check_says_when_a_text_cites_nothing_and_strict_fails(index_dir):
    res = run("-", "--index", index_dir, "-o", "support=lexical", "--strict", input="公司应当支付双倍工资。")
    assert res.exit_code == 2 and "cites no article" in res.output


def test_check_refuses_unsupported_formats_and_encodings(index_dir, tmp_path):
    doc = tmp_path / "old.doc"
    doc.write_bytes(b"\xd0\xcf\x11\xe0")
    res = run(doc, "--index", index_dir)
    assert res.exit_code != 0 and "unsupported file type '.doc'" in str(res.exception or res.output)
    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("依照《刑法》第二百六十四条".encode("gb18030"))
    res = run(gbk, "--index", index_dir)
    assert res.exit_code != 0 and "not valid utf-8" in str(res.exception or res.output)
    res = run(gbk, "--index", index_dir, "-o", "support=lexical", "-o", "encoding=gb18030", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["citations"][0]["canonical"].endswith("第二百六十四条")


def docx_bytes() -> bytes:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.add_heading("法律意见", 1)
    d.add_paragraph("依照《中华人民共和国刑法》第二百六十四条，盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。")
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "《合同法》第一百零七条"
    table.rows[0].cells[1].text = "违约责任"
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_the_document_reader_reads_docx_paragraphs_and_tables(tmp_path):
    from legalrag.corpora.extract import extract
    from legalrag.errors import InputError

    got = extract(tmp_path / "opinion.docx", docx_bytes())
    assert got.format == "docx" and got.text.startswith("# 法律意见\n依照《中华人民共和国刑法》第二百六十四条")
    assert "《合同法》第一百零七条 | 违约责任" in got.text
    with pytest.raises(InputError, match="not a readable .docx"):
        extract(tmp_path / "broken.docx", b"PK\x03\x04 truncated")


def test_the_http_route_keeps_its_old_fields_and_adds_marks(index_dir):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from legalrag.server import ServerSettings, create_app
    from legalrag.wiring import Root

    client = TestClient(create_app(Root().index(index_dir), settings=ServerSettings(rate_limit=0)))
    r = client.post("/citations/check", json={"text": TEXT, "annotate": "md"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["unresolved"] == 3 and [c["resolved"] for c in out["citations"]] == [True, True, False, False, False]
    assert [c["mark"] for c in out["citations"]] == MARKS and out["citations"][3]["reason"] == "unknown_article"
    assert "[✓1]" in out["annotated"]
    r = client.post("/citations/check", json={"file": base64.b64encode(docx_bytes()).decode(),
                                              "filename": "opinion.docx"})
    assert r.status_code == 200, r.text
    assert [c["mark"] for c in r.json()["citations"]] == ["supported", "repealed"]
    r = client.post("/citations/check", json={"file": "aGVsbG8=", "filename": "notes.rtf"})
    assert r.status_code == 400 and "unsupported file type '.rtf'" in r.text
    assert client.get("/check.html").status_code == 200


def test_a_long_text_is_read_in_blocks_with_progress_and_the_limit_is_stated():
    from legalrag.citecheck import CitationResolver
    from legalrag.citecheck.checker import check_text
    from legalrag.citecheck.support import SupportScorer
    from legalrag.errors import InputError

    resolver = CitationResolver.from_documents(DOCS)
    para = "依照《中华人民共和国刑法》第二百六十四条，盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。\n\n"
    text = para * 1500  # ~70,000 characters, 1,500 citations
    seen = []
    report = check_text(text, resolver, SupportScorer(), progress=lambda done, total: seen.append(done))
    assert len(report.items) == 1500 and report.blocks == len(seen) > 1 and seen[-1] == len(text)
    assert {i.citation.mark for i in report.items} == {"supported"}
    with pytest.raises(InputError, match="at most 1,000 "):
        check_text(text, resolver, SupportScorer(), max_chars=1000)
