"""A fresh install answers from the law in force: the four cases the results page shows, run through the CLI as a
user would (no --index: the default index of the shipped dated versions).

    nice -n 5 python bench/laws/bench_in_force.py --out bench/results/laws-in-force.json

1. ``ask`` a subscribed-capital question today, and ``--as-of 2020-01-01``: which 公司法 version the quoted basis
   comes from, whether the answer speaks of the 2023 law's five-year limit, each citation's document and currency
   mark, the notes on versions held; seconds.
2. ``check --as-of 2022-03-01`` on a text citing 公司法第二十六条: the text it resolves to (the one in force that
   day) and the currency mark (amended, the new number).
3. ``judgment draft --no-llm`` for a private-company manager who ran a competing business (刑法第一百六十五条), acts
   of 2023 and acts after 2024-03-01: which version each applied and the 刑法第十二条 statement.
The answers use the embedded 1.5B (``--local``, no call cache), so each takes tens of seconds on two cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from legalrag.evaluation.record import write_result

CAPITAL = "有限责任公司的股东认缴的出资额应当在多长时间内缴足？"
CHECK_TEXT = "依照《公司法》第二十六条，股东可以请求撤销该决议。"
MANAGER = ("公诉机关指控：{when}，被告人王某系某民营科技有限公司总经理，利用职务便利，自己经营与其所任职公司同类的营业，"
           "获取非法利益人民币一百二十万元，致使公司利益遭受重大损失。")


def cli(*args: str, stdin: str | None = None) -> tuple[dict, float]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "legalrag", *args], capture_output=True, text=True, input=stdin)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"legalrag {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), seconds


def ask(as_of: str | None) -> dict:
    extra = ["--as-of", as_of] if as_of else []
    out, seconds = cli("ask", CAPITAL, "--json", "--local", "--no-cache", *extra)
    quotes = out.get("basis") or []
    return {"as_of": as_of or "today", "seconds": round(seconds, 1),
            "basis": [q["citation"] for q in quotes], "basis_ids": [q["document_id"] for q in quotes],
            "five_years_in_basis": any("五年" in q["quote"] for q in quotes),
            "answer": (out.get("answer") or "")[:600], "fallback": bool(out.get("fallback")),
            "citations": [{"citation": c.get("canonical") or c.get("text"), "document_id": c.get("document_id"),
                           "mark": c.get("mark"), "currency": (c.get("currency") or {}).get("label")}
                          for c in out.get("citations") or []],
            "notes": [n for n in out.get("notes") or [] if "held for" in n]}


PAGE = {"section": "laws", "order": 120, "rows": [{
    "configuration": "a fresh install: subscribed capital today / --as-of 2020-01-01; check 公司法第二十六条 as of 2022; "
                     "a 第一百六十五条 draft for acts of 2023 / of 2024",
    "default": True,
    "result": "basis {ask[0][basis_ids][0]} / {ask[1][basis_ids][0]} (marked {ask[1][citations][0][currency]}); "
              "check: {check[resolved_to][0]}, {check[currency][0][label]}, now 第{check[currency][0][new_article]}条; "
              "drafts: {drafts[0][rule_165]} / {drafts[1][rule_165]}",
    "cost": "ask {ask[0][seconds]} s (1.5B, 2 cores, shared)", "needs": "CPU", "anchor": ""}]}


def rule_of(law_versions: dict | None, article: str = "165") -> str:
    for a in (law_versions or {}).get("articles", []):
        if a.get("article") == article:
            return f"{a.get('label')} ({a.get('rule')})"
    for a in (law_versions or {}).get("not_applied_changed", []):
        if a.get("article") == article:
            return f"not applied; flagged for review: {a.get('label')} ({a.get('rule')})"
    return "not applied"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--skip-ask", action="store_true", help="only the check and the drafts (no LLM)")
    args = ap.parse_args(argv)
    rows: dict = {}
    if not args.skip_ask:
        rows["ask"] = [ask(None), ask("2020-01-01")]
    checked, seconds = cli("check", "-", "--as-of", "2022-03-01", "--json", stdin=CHECK_TEXT)
    rows["check"] = {"seconds": round(seconds, 1), "currency": checked.get("currency"),
                     "resolved_to": [c.get("document_id") for c in checked.get("citations") or []]}
    drafts = []
    for when, as_of in (("2023年5月至2023年11月", None), ("2024年4月至2024年10月", None),
                        ("2023年5月至2024年6月", None)):
        out, seconds = cli("judgment", "draft", "--facts", MANAGER.format(when=when), "--no-llm", "--json")
        drafts.append({"acts": when, "seconds": round(seconds, 1), "rule_165": rule_of(out.get("law_versions")),
                       "law_versions": out.get("law_versions")})
    rows["drafts"] = drafts
    command = f"python bench/laws/bench_in_force.py --out {args.out}" + (" --skip-ask" if args.skip_ask else "")
    write_result(args.out, name="a fresh install answers, checks and drafts from the law in force", command=command,
                 data="the shipped national law (dated versions, source snapshot 2025-04-19)", page=PAGE, **rows)
    print(json.dumps(rows, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
