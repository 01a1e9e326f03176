"""The law over time in a real headless Chromium (Debian's chromium + chromedriver, driven by Selenium) against
uvicorn on 127.0.0.1, over a BM25 index of the fixture's versions: the check page's "as of" date and the currency
mark beside the support mark, and the search page's versions panel (a law's versions and an article's history),
in both languages.

Skipped when Chromium is absent (install: apt-get install -y chromium chromium-driver fonts-noto-cjk)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("selenium.webdriver", reason="pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402

from support.browser_support import (CHROMEDRIVER, CHROMIUM, DESKTOP, SKIP_REASON, driver, foreign_text,  # noqa: E402
                                     open_page, shoot, viewport, wait)
from support.http_app import serve_app  # noqa: E402
from support.paths import REPO  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=SKIP_REASON)

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
MEMO = "依照《中华人民共和国公司法》第四条的规定，有限责任公司的注册资本为全体股东认缴的出资额。"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from legalrag.laws.reader import read_folder
    from legalrag.laws.versions import build_library
    from legalrag.national_versions import version_documents
    from legalrag.retrieval.index import build_index, open_index
    from legalrag.server import ServerSettings, create_app

    lib = build_library(read_folder(MINI), repeal_table=None)
    out = tmp_path_factory.mktemp("web-law") / "idx"
    build_index(out, list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    app = create_app(open_index(out), None, ServerSettings(rate_limit=0, mcp=False))
    app.state.context.versions = lambda: lib
    with serve_app(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    d = driver()
    viewport(d, DESKTOP)
    yield d


def shown_in_other_language(browser, lang: str, selector: str) -> None:
    """No interface text of the other language within ``selector`` (the rest of the page has its own tests)."""
    inside = "\n".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, selector))
    assert [t for t in foreign_text(browser, lang) if t in inside] == []


def set_date(browser, element_id: str, day: str) -> None:
    # a date box's typed form depends on the browser's locale; its value is the ISO date in every locale
    browser.execute_script("document.getElementById(arguments[0]).value = arguments[1];", element_id, day)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_check_page_shows_the_currency_beside_the_support_mark(server, browser, lang):
    open_page(browser, server + "/check.html", lang)
    box = wait(browser, EC.element_to_be_clickable((By.ID, "check-text")))
    box.send_keys(MEMO)
    set_date(browser, "check-as-of", "2022-03-01")
    browser.find_element(By.ID, "check-run").click()
    wait(browser, EC.visibility_of_element_located((By.ID, "summary")))
    item = wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#list li")))
    badge = item.find_element(By.CSS_SELECTOR, ".badge.currency").text
    meaning = item.find_element(By.CSS_SELECTOR, ".currency-meaning").text
    if lang == "en":
        assert badge == "amended 2023-12-29"
        assert "Amended since 2022-03-01" in meaning and "It is now article 5" in meaning
    else:
        assert badge == "2023-12-29 修改" and "已修改" in meaning and "现为第5条" in meaning
    assert "五年内缴足" in meaning  # the article as it reads now
    shown_in_other_language(browser, lang, "#list .currency, #list .currency-meaning")
    shoot(browser, f"check-currency-{lang}", height=1500)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_search_page_lists_a_laws_versions_and_an_articles_history(server, browser, lang):
    open_page(browser, server + "/search.html", lang)
    wait(browser, EC.element_to_be_clickable((By.ID, "versions-law"))).send_keys("公司法")
    browser.find_element(By.ID, "versions-article").send_keys("4")  # as of 2020: the 2018 version's 第四条
    set_date(browser, "versions-as-of", "2020-01-01")
    browser.find_element(By.ID, "versions-run").click()
    versions = wait(browser, EC.visibility_of_element_located((By.ID, "law-versions")))
    rows = versions.find_elements(By.TAG_NAME, "li")
    assert [r.text.split(" · ")[0] for r in rows] == ["2018-10-26", "2023-12-29"]
    selected = versions.find_elements(By.CSS_SELECTOR, "li.selected")
    assert len(selected) == 1 and "2018-10-26" in selected[0].text
    steps = browser.find_elements(By.CSS_SELECTOR, "#article-history li")
    assert len(steps) == 2 and "五年内缴足" in steps[1].text
    if lang == "en":
        assert "in force from 2018-10-26 until 2024-07-01" in rows[0].text and "in force on 2020-01-01" in rows[0].text
        assert "article 4" in steps[0].text and "changed" in steps[1].text
    else:
        assert "自 2018-10-26 起施行，至 2024-07-01 止" in rows[0].text and "第4条" in steps[0].text
        assert "有修改" in steps[1].text
    shown_in_other_language(browser, lang, "#versions-section")
    shoot(browser, f"search-versions-{lang}", height=1600)


def test_an_unknown_law_is_an_error_in_words(server, browser):
    open_page(browser, server + "/search.html", "en")
    wait(browser, EC.element_to_be_clickable((By.ID, "versions-law"))).send_keys("不存在的法")
    browser.find_element(By.ID, "versions-run").click()
    error = wait(browser, EC.visibility_of_element_located((By.CSS_SELECTOR, "#versions-status .error")))
    assert "no law titled" in error.text
