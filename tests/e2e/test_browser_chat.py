"""The consultation page on a phone while an answer is written, in headless Chromium (browser_support.py): the
turn shows its stage and a running clock from the moment of sending, the articles found before the first
token, and the answer being written stays in view above the sticky input area (a follow-up's answer used to
stream behind it)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("selenium.webdriver", reason="pip install selenium")

from selenium.webdriver.common.by import By  # noqa: E402

from support.browser_support import CHROMEDRIVER, CHROMIUM, DESKTOP, PHONE, SKIP_REASON, driver, marks, open_page, viewport, \
    wait, watch  # noqa: E402
from support.http_app import serve_app  # noqa: E402
from support.server_setup import StreamingLLM, sample_index  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=SKIP_REASON)
FIRST = "公司不和我签劳动合同怎么办？"
FOLLOW_UP = "那我可以要求双倍工资吗？"

# Every 50 ms while the last turn streams: where its answer text ends and where the input area begins.
SAMPLE = """
window.__samples = [];
window.__sampler = setInterval(() => {
  const turn = document.querySelector('.turn:last-child');
  const text = turn && turn.querySelector('.answer-text');
  if (!text || !text.textContent || turn.querySelector('.progress.finished')) return;
  const r = text.getBoundingClientRect();
  window.__samples.push({bottom: r.bottom, top: r.top, composer: document.querySelector('#ask-form').getBoundingClientRect().top,
                         height: window.innerHeight, chars: text.textContent.length});
}, 50);
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    from legalrag.server import ServerSettings, create_app

    index = sample_index(tmp_path_factory.mktemp("chat") / "idx")
    # 300 characters, one every 15 ms: an answer taller than what the phone shows above the input area
    with serve_app(create_app(index, StreamingLLM(pieces=300, delay=0.015), ServerSettings(rate_limit=0))) as url:
        yield url


@pytest.fixture
def phone():
    d = driver()
    viewport(d, PHONE)
    yield d
    viewport(d, DESKTOP)


def send(d, question: str) -> None:
    box = d.find_element(By.ID, "question")
    box.send_keys(question)
    d.find_element(By.ID, "send").click()


def finished(d, n: int) -> None:
    wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".turn .progress.finished")) >= n)


def test_a_follow_up_answer_stays_in_view_while_it_is_written_with_stage_and_clock(url, phone):
    open_page(phone, url + "/", "zh")
    send(phone, FIRST)
    finished(phone, 1)
    watch(phone, {"stage": ".turn:nth-child(2) .progress li[data-stage=st_chat_search]",
                  "articles": ".turn:nth-child(2) .progress li[data-stage=st_chat_articles]",
                  "writing": ".turn:nth-child(2) .progress li[data-stage=st_first_text]",
                  "done": ".turn:nth-child(2) .progress.finished"})
    phone.execute_script(SAMPLE)
    send(phone, FOLLOW_UP)
    wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn:nth-child(2) .progress li[data-stage=st_first_text]"))
    clock = phone.find_element(By.CSS_SELECTOR, ".turn:nth-child(2) .progress .clock").text
    assert clock.endswith("秒") and float(clock.split()[0]) >= 0  # the running clock, in the page's language
    articles = phone.find_element(By.CSS_SELECTOR, ".turn:nth-child(2) .progress li[data-stage=st_chat_articles]")
    assert "检索到的法条" in articles.text and "《" in articles.text  # the articles' names, before the answer
    finished(phone, 2)
    phone.execute_script("clearInterval(window.__sampler);")
    seen, samples = marks(phone), phone.execute_script("return window.__samples;")
    assert seen["stage"] <= seen["articles"] + 1 <= seen["writing"] + 2 and seen["writing"] < seen["done"]
    assert len(samples) >= 10 and samples[-1]["chars"] > samples[0]["chars"]
    hidden = [s for s in samples if s["bottom"] > s["composer"] + 1 or s["bottom"] < 0]
    assert not hidden, f"the answer being written left the view (its bottom vs the input area's top): {hidden[:3]}"
    assert samples[0]["composer"] < samples[0]["height"]  # the input area is on screen the whole time
