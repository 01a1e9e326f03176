"""The web application in a real headless Chromium (Debian's chromium + chromedriver, driven by Selenium)
against uvicorn on 127.0.0.1, with the real index of the bundled statute sample and a scripted model.

Skipped when Chromium is absent (install: apt-get install -y chromium chromium-driver fonts-noto-cjk). Set
LEGALRAG_SCREENSHOTS=DIR to save a screenshot of each page there (docs/screenshots/ holds the committed ones).
test_browser_ux.py has the checks of first use, phones, language, limits, progress and scope.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("selenium.webdriver", reason="pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402

from support.browser_support import (CHROMEDRIVER, CHROMIUM, DESKTOP, PHONE, SHOTS, SKIP_REASON, driver,  # noqa: E402
                             open_page, shoot, viewport, wait)
from support.http_app import serve_app  # noqa: E402
from support.server_setup import INJECTION, MISSING, REAL, legal_llm, sample_index, sample_predictor  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=SKIP_REASON)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from legalrag.server import ServerSettings, create_app

    tmp = tmp_path_factory.mktemp("web")
    index = sample_index(tmp / "idx")
    app = create_app(index, legal_llm(), ServerSettings(rate_limit=0), predictor=sample_predictor(index, tmp))
    with serve_app(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    d = driver()
    viewport(d, DESKTOP)
    yield d
    viewport(d, DESKTOP)


def ask(driver, question: str) -> None:
    box = wait(driver, EC.element_to_be_clickable((By.ID, "question")))
    box.send_keys(question)
    driver.find_element(By.ID, "send").click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".answer-citations ul.citations")))


def test_chat_answer_citation_opens_the_article_and_markup_stays_text(server, browser):
    open_page(browser, server + "/")
    ask(browser, "公司不和我签劳动合同怎么办？")
    answer = browser.find_element(By.CSS_SELECTOR, ".answer-text")
    assert REAL in answer.text and INJECTION in answer.text  # the model's markup is shown as text
    assert browser.execute_script("return window.__pwned") is None
    assert not browser.find_elements(By.CSS_SELECTOR, ".answer-text img, .answer-text script")
    # the quoted legal basis comes first; the model's own citation of the real article is checked too
    link = next(b for b in answer.find_elements(By.CSS_SELECTOR, "button.cite.ok") if b.text.startswith(REAL))
    assert "✓" in link.text
    link.click()
    article = wait(browser, EC.visibility_of_element_located((By.ID, "article-text")))
    assert "建立劳动关系，应当订立书面劳动合同" in article.text
    assert "劳动合同法" in browser.find_element(By.CSS_SELECTOR, "#panel .article-title").text
    # the retrieved articles of the turn can be expanded
    details = browser.find_element(By.CSS_SELECTOR, "details.retrieved")
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.find_elements(By.CSS_SELECTOR, "li.hit")
    shoot(browser, "chat")
    viewport(browser, PHONE)  # a phone: the article opens as a sheet over the chat
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)  # closes the sheet left open
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
    wait(browser, EC.element_to_be_clickable(link)).click()
    wait(browser, EC.visibility_of_element_located((By.ID, "panel-close")))
    if SHOTS:
        browser.save_screenshot(str(Path(SHOTS) / "chat-phone-article.png"))
    time.sleep(0.3)  # the sheet slides in for 0.2 s
    browser.find_element(By.ID, "panel-close").click()
    assert "open" not in browser.find_element(By.ID, "panel").get_attribute("class")
    viewport(browser, DESKTOP)


def test_unresolved_citation_is_flagged_with_its_reason(server, browser):
    open_page(browser, server + "/")
    ask(browser, "还有别的规定吗？")
    bad = browser.find_element(By.CSS_SELECTOR, ".answer-text button.cite.bad")
    assert bad.text.startswith(MISSING) and "✗" in bad.text and "✓" not in bad.text
    flag = browser.find_element(By.CSS_SELECTOR, ".answer-citations li.bad .status.flag")
    assert "not found · the corpus has no such article" in flag.text  # the reason, not only a colour
    bad.click()
    reason = wait(browser, EC.visibility_of_element_located((By.CSS_SELECTOR, "#panel .flag-reason")))
    assert "no such article" in reason.text
    assert "九百九十九" in browser.find_element(By.CSS_SELECTOR, "#panel .article-title").text
    assert "✗ not found" in browser.find_element(By.CSS_SELECTOR, "#panel .badge.bad").text


def test_search_with_a_law_filter_highlights_terms(server, browser):
    open_page(browser, server + "/search.html")
    wait(browser, lambda d: len(Select(d.find_element(By.ID, "law")).options) > 1)
    browser.find_element(By.ID, "query").send_keys("用人单位 拖欠 工资")
    Select(browser.find_element(By.ID, "law")).select_by_value("劳动合同法")
    browser.find_element(By.ID, "search").click()
    wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#results li.hit")))
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#results li.hit .hit-head button")]
    assert titles and all(t.startswith("《劳动合同法》") for t in titles)
    assert browser.find_elements(By.CSS_SELECTOR, "#results mark")
    shoot(browser, "search")


def test_agents_switch_shows_the_planner_timeline(server, browser):
    open_page(browser, server + "/search.html", lang="zh")
    browser.find_element(By.ID, "query").send_keys("公司不跟我签合同，能要双倍工资吗")
    browser.find_element(By.ID, "agents").click()
    browser.find_element(By.ID, "search").click()
    wait(browser, EC.visibility_of_element_located((By.ID, "results-section")))  # steps are drawn as they come
    steps = browser.find_elements(By.CSS_SELECTOR, "#timeline li.step")
    text = browser.find_element(By.ID, "timeline").text
    assert "single_element" in text and "用人单位 未订立 书面劳动合同 二倍工资" in text
    assert len(steps) >= 4 and "第 1 轮" in browser.find_element(By.ID, "timeline").text and "轮数" in browser.find_element(By.ID, "timeline-summary").text
    shoot(browser, "search-agents", height=1300)


def test_drafting_and_citation_prediction_pages(server, browser):
    open_page(browser, server + "/draft.html")
    browser.find_element(By.ID, "facts").send_keys("经审理查明：被告人张某于2023年5月在某商场盗窃他人手机一部，价值人民币三千元。")
    browser.find_element(By.ID, "draft").click()
    wait(browser, EC.visibility_of_element_located((By.ID, "result")))
    sections = browser.find_element(By.ID, "sections").text
    assert "Reasoning" in sections and "本院认为" in sections and "判处有期徒刑六个月" in sections
    flag = browser.find_element(By.CSS_SELECTOR, "#draft-cits .status.flag")  # no criminal law in the sample
    assert "not found" in flag.text
    assert browser.find_elements(By.CSS_SELECTOR, "#sections button.cite.bad")  # clickable inside the text too
    shoot(browser, "draft", height=1500)
    open_page(browser, server + "/cite.html")
    browser.find_element(By.ID, "facts").send_keys("公司自用工之日起一直未与我订立书面劳动合同，也不支付加班费。")
    browser.find_element(By.ID, "predict").click()
    rows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#rows tr"))
    stages = {c.get_attribute("data-stage") for c in browser.find_elements(By.CSS_SELECTOR, "#rows .chip")}
    assert {"always-add", "retrieval"} <= stages and rows[0].is_displayed()  # in scope: shown, no notice
    assert "within" in browser.find_element(By.ID, "scope").text.lower() and not browser.find_elements(By.CSS_SELECTOR, ".scope-notice")
    shoot(browser, "cite")


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory):
    """No model, and an index whose documents hold markup (a corpus scraped from the web might)."""
    from legalrag.corpora.statutes import statute_document
    from legalrag.retrieval.index import build_index
    from legalrag.server import create_app

    docs = [statute_document("1", f"工资应当按月支付。{INJECTION}", "示范法第一条"),
            statute_document("2", "劳动者有权拒绝违章指挥。", "示范法第二条")]
    index = build_index(tmp_path_factory.mktemp("bare") / "idx", docs, retrievers=["bm25"], lang="zh")
    with serve_app(create_app(index)) as url:
        yield url


def test_markup_in_documents_is_shown_as_text_and_a_missing_model_is_announced(bare_server, browser):
    open_page(browser, bare_server + "/search.html")
    browser.find_element(By.ID, "query").send_keys("工资")
    browser.find_element(By.ID, "search").click()
    hit = wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#results li.hit .hit-text")))
    assert INJECTION in hit.text and not browser.find_elements(By.CSS_SELECTOR, "#results img, #results script")
    hit.find_element(By.XPATH, "..").find_element(By.CSS_SELECTOR, "button.link").click()
    article = wait(browser, EC.visibility_of_element_located((By.ID, "article-text")))
    assert INJECTION in article.text and browser.execute_script("return window.__pwned") is None
    assert not browser.find_element(By.ID, "agents").is_enabled()  # the agents need a model
    open_page(browser, bare_server + "/")
    banner = wait(browser, EC.visibility_of_element_located((By.ID, "banner")))
    assert "No language model" in banner.text and "search" in banner.text
    assert not browser.find_element(By.ID, "send").is_enabled()


def test_offline_api_page_lists_the_routes(server, browser):
    open_page(browser, server + "/docs")
    routes = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#routes section.route"))
    text = browser.find_element(By.ID, "routes").text
    assert len(routes) >= 14 and "/consult/stream" in text and "query *" in text
    shoot(browser, "api")


def test_check_page_marks_a_pasted_text(server, browser):
    open_page(browser, server + "/check.html")
    box = wait(browser, EC.element_to_be_clickable((By.ID, "check-text")))
    box.send_keys(f"根据{REAL}，建立劳动关系应当订立书面劳动合同。依照《合同法》第一百零七条，违约方应承担违约责任。{MISSING}另有规定。")
    browser.find_element(By.ID, "check-run").click()
    summary = wait(browser, EC.visibility_of_element_located((By.ID, "summary")))
    assert "1 supported" in summary.text and "1 repealed" in summary.text and "1 not found" in summary.text
    marks = [b.text[-1] for b in browser.find_elements(By.CSS_SELECTOR, "#annotated button.cite")]
    assert marks == ["✓", "↻", "✗"]  # ✓ only for the supported one
    assert "中华人民共和国民法典" in browser.find_element(By.ID, "list").text  # the successor law
