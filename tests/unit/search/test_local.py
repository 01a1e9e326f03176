"""The local documents source: BM25 over a real folder, re-indexed when files are added, changed or removed."""

from __future__ import annotations

import shutil

import pytest
from support.qa_http import QA_DATA

from legalrag.errors import InputError
from legalrag.search.base import SourceNotConfigured, SourceType
from legalrag.search.local import LocalDocumentsSource
from legalrag.wiring import make_sources


def test_search_and_automatic_reindex(tmp_path):
    (tmp_path / "lease.md").write_text("# Lease\n\nThe tenant pays a security deposit of two months' rent. "
                                       "The landlord returns the deposit within 21 days after move-out.",
                                       encoding="utf-8")
    (tmp_path / "employment.txt").write_text("The employee may terminate the contract with 30 days written "
                                             "notice to the employer.", encoding="utf-8")
    shutil.copy(QA_DATA / "pages" / "civ1950_5.pdf", tmp_path / "civil_code.pdf")
    src = LocalDocumentsSource(tmp_path)
    hits = src.search("deposit returned after move-out", k=3)
    assert hits[0].metadata["path"] == "lease.md" and hits[0].source_type is SourceType.LOCAL
    assert hits[0].url.endswith("lease.md") and "21 days" in hits[0].content
    assert hits[0].to_document().kind.value == "user_document"
    assert any(h.metadata["path"] == "civil_code.pdf" for h in src.search("itemized statement security", k=3))
    assert src.reindex_count == 1
    src.search("notice")
    assert src.reindex_count == 1  # nothing changed: no re-index

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pets.txt").write_text("Pets: the tenant may keep one cat with the landlord's consent.",
                                               encoding="utf-8")
    assert src.search("cat consent", k=1)[0].metadata["path"] == "sub/pets.txt" and src.reindex_count == 2
    (tmp_path / "employment.txt").write_text("Probation lasts at most six months.", encoding="utf-8")
    assert src.search("probation months", k=1)[0].metadata["path"] == "employment.txt"
    assert not any(h.metadata["path"] == "employment.txt" for h in src.search("written notice terminate contract", k=5))
    (tmp_path / "lease.md").unlink()
    assert all(h.metadata["path"] != "lease.md" for h in src.search("deposit", k=5)) and src.reindex_count == 4


def test_empty_folder_and_bad_files(tmp_path):
    src = LocalDocumentsSource(tmp_path)
    assert src.search("anything") == []
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    with pytest.raises(InputError, match="bad.pdf"):
        src.search("anything")
    with pytest.raises(SourceNotConfigured, match="does not exist"):
        LocalDocumentsSource(tmp_path / "nope")


def test_sources_from_names_reports_unconfigured(tmp_path, monkeypatch):
    for var in ("SERPER_API_KEY", "TAVILY_API_KEY", "SEARXNG_URL"):
        monkeypatch.delenv(var, raising=False)
    sources, problems = make_sources(["local", "web", "courtlistener"], docs=tmp_path)
    assert set(sources) == {"local", "courtlistener"}
    assert len(problems) == 1 and problems[0].startswith("web:") and "SERPER_API_KEY" in problems[0]
    with pytest.raises(InputError, match="unknown source"):
        make_sources(["gopher"])


def test_statute_index_source(tmp_path):
    from legalrag.corpora.statutes import statute_document
    from legalrag.retrieval.index import build_index
    from legalrag.search.local import StatuteIndexSource

    docs = [statute_document("1", "劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。", "劳动合同法第三十七条"),
            statute_document("2", "十八周岁以上的自然人为成年人。", "中华人民共和国民法典第十七条")]
    src = StatuteIndexSource(build_index(tmp_path / "idx", docs, retrievers=["bm25"]))
    hits = src.search("解除劳动合同 提前通知", k=2)
    assert hits[0].title == "劳动合同法第三十七条" and hits[0].source_type is SourceType.STATUTE
    doc = hits[0].to_document()
    assert doc.kind.value == "statute" and doc.id == "1"
