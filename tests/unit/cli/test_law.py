"""`legalrag law show|history` on the fixture folder; `check --as-of` showing the currency mark beside the
support mark; `search --as-of` selecting the version in force; `corpus update|rollback` through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.errors import InputError
from legalrag.testing import FakeEncoder
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"


def run(*args, obj=None):
    return CliRunner().invoke(app, [*map(str, args)], obj=obj)


def test_law_show_lists_versions_with_dates_and_sources():
    r = run("law", "show", "《中华人民共和国公司法》", "--laws", MINI, "--as-of", "2020-01-01")
    assert r.exit_code == 0, r.output
    assert "公司法: 2 version(s)" in r.output
    assert "→ 公司法 (2018-10-26)" in r.output and "until 2024-07-01 (superseded)" in r.output
    assert "effective date from: last_article" in r.output
    r = run("law", "show", "公司法", "--laws", MINI, "--as-of", "2000-01-01", "--json")
    data = json.loads(r.output)
    assert data["note"].startswith("no version held for 2000-01-01; the oldest held is 2018-10-26")
    assert [v["version"] for v in data["versions"]] == ["2018-10-26", "2023-12-29"]


def test_law_history_follows_the_article_through_renumbering():
    r = run("law", "history", "公司法第五条", "--laws", MINI)
    assert r.exit_code == 0, r.output
    assert "2018-10-26 (in force from 2018-10-26 until 2024-07-01): 公司法第四条" in r.output
    assert "公司法第五条 [changed]" in r.output and "五年内缴足" in r.output
    old = json.loads(run("law", "history", "公司法第四条", "--laws", MINI, "--as-of", "2020-01-01", "--json").output)
    assert [v["article"] for v in old["versions"]] == ["4", "5"]


def test_law_commands_refuse_unknown_titles_and_bad_dates():
    r = run("law", "show", "不存在的法", "--laws", MINI)
    assert isinstance(r.exception, InputError) and "no law titled" in str(r.exception)
    r = run("law", "show", "公司法", "--laws", MINI, "--as-of", "1900-01-01")
    assert isinstance(r.exception, InputError) and "1949-10-01" in str(r.exception)
    r = run("law", "history", "公司法", "--laws", MINI)
    assert isinstance(r.exception, InputError) and "names no article" in str(r.exception)


@pytest.fixture()
def versions_home(tmp_path, monkeypatch):
    """A corpus of the fixture's versions built by `corpus update`, and LEGALRAG_DATA pointing at the fixture."""
    from legalrag.cli import law
    from legalrag.wiring import Root

    data = tmp_path / "data"
    data.mkdir()
    (data / "laws-2025").symlink_to(MINI, target_is_directory=True)
    monkeypatch.setenv("LEGALRAG_DATA", str(data))
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    from legalrag.laws.reader import read_folder
    from legalrag.laws.versions import build_library

    # the versions `check` reads currency from: the fixture's (not the shipped ones)
    monkeypatch.setattr(law, "_LIBRARY", {"lib": build_library(read_folder(MINI), repeal_table=None)})
    obj = Root(encoder=FakeEncoder())
    r = run("corpus", "update", MINI, "--no-base", obj=obj)
    assert r.exit_code == 0, r.output
    assert "versions added" in r.output and "now answering from" in r.output
    return tmp_path / "home" / "corpus" / "current" / "index", obj


def test_check_shows_the_currency_beside_the_support_mark(versions_home, tmp_path):
    index, obj = versions_home
    text = tmp_path / "memo.txt"
    text.write_text("依照《中华人民共和国公司法》第四条的规定，有限责任公司的注册资本为全体股东认缴的出资额。\n", encoding="utf-8")
    r = run("check", text, "--index", index, "--as-of", "2022-03-01", "-o", "support=lexical", obj=obj)
    assert r.exit_code == 0, r.output
    assert "· amended 2023-12-29" in r.output and "now 第五条" in r.output and "五年内缴足" in r.output
    data = json.loads(run("check", text, "--index", index, "--json", "-o", "support=lexical", obj=obj).output)
    (cur,) = data["currency"]
    # read as of today, 第四条 is the 2023 law's own (another rule): current, with a warning to give the date
    assert cur["dated"] is False and cur["status"] == "current" and "--as-of" in cur["note"]


def test_search_as_of_selects_the_version_in_force(versions_home):
    index, obj = versions_home
    hits = json.loads(run("search", "注册资本 认缴的出资额", "--index", index, "--retriever", "bm25", "--json",
                          "--as-of", "2020-01-01", obj=obj).output)["hits"]
    assert hits and hits[0]["id"] == "公司法第四条@2018-10-26"
    assert all(h["metadata"]["in_force_from"] <= "2020-01-01" for h in hits)
    now = json.loads(run("search", "注册资本 认缴的出资额", "--index", index, "--retriever", "bm25", "--json",
                         "--as-of", "2025-01-01", obj=obj).output)["hits"]
    assert now[0]["id"] == "公司法第五条@2023-12-29"
    assert "2018-10-26" not in {h["metadata"].get("version") for h in now}


def test_corpus_rollback_without_a_previous_corpus_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    r = run("corpus", "rollback")
    assert isinstance(r.exception, InputError) and "no previous corpus" in str(r.exception)
