"""The consultation page on a phone (390 x 844, headless Chromium) against a running `legalrag serve`: from the
click on Ask to the first stage drawn, to the articles found, to the first answer text, to the finished turn,
and whether the answer being written stayed above the input area the whole time.

    python -m legalrag serve --index indexes/stard-ft --no-cache --background
    python bench/web/web_chat_phone.py --url http://127.0.0.1:8080 --n 3 --out runs/web-chat-phone.json

Times are the page's own (``performance.now()`` in a MutationObserver); the questions are the ``--n`` smallest
query ids of the dev part of the frozen STARD split. Needs Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKS = """
window.__marks = {}; window.__hidden = 0; window.__samples = 0;
const turn = () => document.querySelector('.turn:last-child');
const wanted = {stage: '.progress li', articles: 'li[data-stage=st_chat_articles]',
                writing: 'li[data-stage=st_first_text]', done: '.progress.finished'};
const look = () => {
  const t = turn(); if (!t) return;
  for (const [name, sel] of Object.entries(wanted))
    if (!(name in window.__marks) && t.querySelector(sel)) window.__marks[name] = performance.now();
};
new MutationObserver(look).observe(document.body, {subtree: true, childList: true, attributes: true});
window.__sampler = setInterval(() => {
  const t = turn(); const text = t && t.querySelector('.answer-text');
  if (!text || !text.textContent || t.querySelector('.progress.finished')) return;
  window.__samples += 1;
  const bottom = text.getBoundingClientRect().bottom, limit = document.querySelector('#ask-form').getBoundingClientRect().top;
  if (bottom > limit + 1 || bottom < 0) window.__hidden += 1;
}, 100);
document.querySelector('#send').addEventListener('click', () => { window.__marks.click = performance.now(); }, {capture: true});
"""


def browser():
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                              "mobile": True})
    return d


def questions(n: int, data: Path) -> list[str]:
    dev = set(json.loads((ROOT / "bench" / "data" / "stard-split.json").read_text(encoding="utf-8"))["dev"])
    rows = [json.loads(line) for line in (data / "stard" / "train.jsonl").open(encoding="utf-8")]
    return [r["query"] for r in sorted((r for r in rows if r["query_id"] in dev), key=lambda r: r["query_id"])[:n]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--data", default=os.environ.get("LEGALRAG_DATA", str(ROOT.parent / "shared" / "data")))
    args = ap.parse_args()
    from selenium.webdriver.common.by import By

    d = browser()
    rows = []
    try:
        for q in questions(args.n, Path(args.data)):
            d.get(args.url + "/")
            d.execute_script("localStorage.setItem('legalrag.lang', 'zh');")
            d.get(args.url + "/")
            time.sleep(1.0)  # capabilities loaded
            d.execute_script(MARKS)
            d.find_element(By.ID, "question").send_keys(q)
            load = os.getloadavg()[0]
            d.find_element(By.ID, "send").click()
            t0 = time.monotonic()
            while time.monotonic() - t0 < args.timeout:
                m = d.execute_script("return window.__marks;")
                if "done" in m:
                    break
                time.sleep(0.2)
            m = d.execute_script("return window.__marks;")
            click = m.get("click", 0.0)
            row = {k: round((m[k] - click) / 1000, 3) for k in ("stage", "articles", "writing", "done") if k in m}
            row.update(samples=d.execute_script("return window.__samples;"),
                       hidden=d.execute_script("return window.__hidden;"), loadavg_1m=round(load, 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        d.quit()
    metrics = {"questions": len(rows)}
    for k in ("stage", "articles", "writing", "done"):
        vals = [r[k] for r in rows if k in r]
        metrics[f"to_{k}_p50_s"] = round(statistics.median(vals), 3) if vals else None
    metrics["hidden_samples"] = sum(r["hidden"] for r in rows)
    metrics["samples"] = sum(r["samples"] for r in rows)
    metrics["loadavg_1m"] = [r["loadavg_1m"] for r in rows]
    print(json.dumps(metrics, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "metrics": metrics}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
