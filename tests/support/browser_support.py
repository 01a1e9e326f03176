"""What the browser tests share: one headless Chromium for the whole test session (Debian's chromium and
chromedriver, driven by Selenium), phone and desktop viewports, and the checks a person would make by eye:
nothing wider than the screen, and no message in the other language.

Set LEGALRAG_SCREENSHOTS=DIR to save screenshots (docs/screenshots/ holds the committed ones; they need a CJK
font: Debian's fonts-noto-cjk, which `make browser` installs beside chromium).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SKIP_REASON = "Chromium not found; apt-get update && apt-get install -y chromium chromium-driver fonts-noto-cjk"
SHOTS = os.environ.get("LEGALRAG_SCREENSHOTS")
DESKTOP = (1360, 900)
PHONE = (390, 844)
_driver: Any = None

# Latin words the Chinese interface may show: product and format names (codes and content are marked
# translate="no" or set in <code>, and are not read).
NAMES = {"API", "JSON", "Markdown"}

# Every text node a person sees, except content (translate="no"), codes (<code>) and closed dialogs; plus the
# visible boxes' placeholders and the shown option of each select.
VISIBLE_TEXT = """
const out = [];
const skip = el => !el || el.closest('[translate=no], code, script, style, dialog:not([open])') || !el.getClientRects().length;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n; (n = walker.nextNode());) {
  const el = n.parentElement;
  if (el.closest('select') || skip(el)) continue;
  const text = n.textContent.trim();
  if (text) out.push(text);
}
for (const box of document.querySelectorAll('textarea, input')) if (!skip(box) && box.placeholder) out.push(box.placeholder);
for (const s of document.querySelectorAll('select')) {
  const o = s.selectedOptions[0];
  if (o && !skip(s) && o.getAttribute('translate') !== 'no') out.push(o.textContent.trim());
}
return out;
"""


def driver() -> Any:
    """The session's Chromium (started on first use, closed at exit)."""
    global _driver
    if _driver is None:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        options = Options()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US",
                    f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
            options.add_argument(arg)
        _driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        _driver.set_page_load_timeout(20)
        atexit.register(_driver.quit)
    return _driver


def viewport(d: Any, size: tuple[int, int]) -> None:
    """Emulate a screen of ``size`` CSS pixels (a phone is emulated as one: headless windows are >= 500 px)."""
    if size == DESKTOP:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    else:
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": True})


def wait(d: Any, condition: Any, seconds: float = 60) -> Any:  # generous: the test machine may be busy
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, seconds).until(condition)


def open_page(d: Any, url: str, lang: str = "en") -> None:
    d.get(url)
    d.execute_script("localStorage.setItem('legalrag.lang', arguments[0]);", lang)
    d.get(url)


def shoot(d: Any, name: str, size: tuple[int, int] = DESKTOP, height: int | None = None) -> None:
    """Save a screenshot at ``size`` (``height``: a taller desktop window for long pages)."""
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    if size == DESKTOP and height:
        d.set_window_size(DESKTOP[0], height)
    elif size != DESKTOP:  # the whole page, as if the phone were that tall (at most 3 screens)
        tall = min(3 * size[1], d.execute_script("return document.documentElement.scrollHeight"))
        viewport(d, (size[0], max(size[1], tall)))
    d.save_screenshot(str(Path(SHOTS) / f"{name}.png"))
    if size == DESKTOP and height:
        d.set_window_size(*DESKTOP)
    elif size != DESKTOP:
        viewport(d, size)


MARKS = """
window.__marks = {};
const wanted = arguments[0];
const look = () => {
  for (const [name, selector] of Object.entries(wanted))
    if (!(name in window.__marks) && document.querySelector(selector)) window.__marks[name] = performance.now();
};
new MutationObserver(look).observe(document.body, {subtree: true, childList: true, attributes: true});
"""


def watch(d: Any, marks: dict[str, str]) -> None:
    """Record in the page when each selector first matches (``marks()`` reads the times, in ms)."""
    d.execute_script(MARKS, marks)


def marks(d: Any) -> dict[str, float]:
    return d.execute_script("return window.__marks;")


def overflow(d: Any) -> tuple[int, int]:
    """(document width, viewport width without a desktop scroll bar; a phone's is an overlay)."""
    return tuple(d.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"))


def foreign_text(d: Any, lang: str) -> list[str]:
    """Visible interface text that is not in ``lang``: Latin words in the Chinese interface (beyond NAMES),
    Chinese characters in the English one."""
    texts = d.execute_script(VISIBLE_TEXT)
    if lang == "zh":
        return [t for t in texts if set(re.findall(r"[A-Za-z]{2,}", t)) - NAMES]
    return [t for t in texts if re.search(r"[\u3400-\u9fff]", t)]
