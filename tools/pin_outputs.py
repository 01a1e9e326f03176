"""Pinned outputs: what the default paths return on fixed inputs, recorded so that a change that should not alter
behaviour can be shown not to.

    python tools/pin_outputs.py record OUT_DIR        # runs the CLI; writes each output and digests.json
    python tools/pin_outputs.py compare A_DIR B_DIR   # exit 1 and the differing outputs when they differ

It goes through the ``legalrag`` command only (no internal module), so it runs the same before and after a
change of the package's layout. What it records:

- ``stard-dev``: `eval retrieval` of the default (national) index on the 131 STARD dev questions (run.trec);
- ``judge-structure``: `judgment predict` on the first 20 JuDGE test cases (charges, articles, sentences);
- ``cite``: `cite --json` on 10 JuDGE cases (the predicted provisions, in order);
- ``check``: `check --json` on a fixed text (each citation's resolution and mark);
- ``consultation``: `eval conversation` retrieval of 10 turns (two dev dialogues of the STARD-grounded set),
  processors carry and fused.

Needs ``LEGALRAG_DATA`` (the shared data folder, default ``../shared/data``); the indexes are built under
``OUT_DIR/home`` on first use. Timings are dropped from the JSON outputs before they are digested.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHECK_TEXT = ("盗窃公私财物，数额较大的，处三年以下有期徒刑（《中华人民共和国刑法》第二百六十四条）。"
              "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资"
              "（《劳动合同法》第八十二条）。依照《民法典》第九百九十九条之三，另见《城乡个体工商户管理暂行条例》第二条。"
              "Art. 40 of the Labor Contract Law.")
VOLATILE = {"seconds", "timings", "elapsed", "usage", "started", "finished", "date", "time", "latency", "path",
            "index_path", "created", "file"}


def data_dir() -> Path:
    return Path(os.environ.get("LEGALRAG_DATA", REPO.parent / "shared" / "data"))


def strip(value):
    """``value`` without the keys that change from run to run (timings, paths, dates)."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in sorted(value.items()) if k not in VOLATILE and not k.endswith("_s")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "legalrag", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)
    if done.returncode != 0:
        raise SystemExit(f"legalrag {' '.join(args[:3])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def record(out: Path) -> None:
    data = data_dir()
    out.mkdir(parents=True, exist_ok=True)
    home = out / "home"
    env = {**os.environ, "LEGALRAG_HOME": str(home), "LEGALRAG_NATIONAL_INDEX": str(home / "indexes" / "national"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LEGALRAG_CONFIG": str(out / "no-config.toml")}
    digests: dict[str, str] = {}

    def keep(name: str, text: str) -> None:
        (out / f"{name}.txt").write_text(text, encoding="utf-8")
        digests[name] = hashlib.sha256(text.encode()).hexdigest()
        print(f"{name}: {digests[name][:16]}", file=sys.stderr)

    # STARD dev retrieval over the default index.
    split = json.loads((REPO / "bench" / "data" / "stard-split.json").read_text(encoding="utf-8"))
    dev = set(split["dev"])
    rows = [json.loads(line) for line in (data / "stard" / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = out / "stard-dev.jsonl"
    queries.write_text("".join(json.dumps({k: r[k] for k in ("query_id", "query", "gold_ids")}, ensure_ascii=False)
                               + "\n" for r in rows if r["query_id"] in dev), encoding="utf-8")
    run(["search", "劳动合同", "--k", "1"], env)  # builds the default index once
    run(["eval", "retrieval", "--index", env["LEGALRAG_NATIONAL_INDEX"], "--queries", str(queries),
         "--out", str(out / "stard-dev"), "--no-progress"], env)
    keep("stard-dev", (out / "stard-dev" / "run.trec").read_text(encoding="utf-8"))

    # judge-structure on 20 JuDGE cases; cite on 10.
    cases = [json.loads(line) for line in (data / "judge" / "data" / "test.json").read_text(encoding="utf-8")
             .splitlines()[:20]]
    case_file = out / "judge-20.jsonl"
    case_file.write_text("".join(json.dumps({"text_id": c["text_id"], "text": c["text"]}, ensure_ascii=False) + "\n"
                                 for c in cases), encoding="utf-8")
    run(["judgment", "predict", "--cases", str(case_file), "--out", str(out / "judge-structure.jsonl")], env)
    predicted = [json.loads(line) for line in (out / "judge-structure.jsonl").read_text(encoding="utf-8").splitlines()]
    keep("judge-structure", "\n".join(json.dumps(strip({"id": p["id"], "structure": p["structure"]}),
                                                 ensure_ascii=False, sort_keys=True) for p in predicted))
    cited = []
    for c in cases[:10]:
        result = json.loads(run(["cite", c["text"], "--json"], env))
        cited.append(json.dumps(strip({k: result.get(k) for k in ("predicted", "provisions", "citations")}),
                                ensure_ascii=False, sort_keys=True))
    keep("cite", "\n".join(cited))

    # check on a fixed text.
    text = out / "check.txt"
    text.write_text(CHECK_TEXT, encoding="utf-8")
    keep("check", json.dumps(strip(json.loads(run(["check", str(text), "--json", "--no-progress"], env))),
                             ensure_ascii=False, sort_keys=True, indent=1))

    # 10 consultation turns' retrieval.
    run(["eval", "conversation", "--data", str(REPO / "bench/data/consultations/stard-dialogues/dev.json"),
         "--index", env["LEGALRAG_NATIONAL_INDEX"], "--retriever", "hybrid", "--processor", "carry",
         "--processor", "fused", "--limit", "2", "--out", str(out / "consultation"), "--no-progress"], env)
    runs = sorted((out / "consultation").rglob("run.trec"))
    keep("consultation", "".join(f"## {p.parent.name}\n{p.read_text(encoding='utf-8')}" for p in runs))
    (out / "digests.json").write_text(json.dumps(digests, indent=1) + "\n", encoding="utf-8")


def digest(directory: Path, name: str) -> str:
    """The digest of a saved output, with today's rules for what varies (so two recordings compare alike)."""
    text = (directory / f"{name}.txt").read_text(encoding="utf-8")
    if name == "check":
        text = json.dumps(strip(json.loads(text)), ensure_ascii=False, sort_keys=True, indent=1)
    return hashlib.sha256(text.encode()).hexdigest()


def compare(a: Path, b: Path) -> int:
    names = sorted({p.stem for p in a.glob("*.txt")} & set(json.loads((a / "digests.json").read_text())))
    differ = []
    for name in names:
        da, db = digest(a, name), digest(b, name) if (b / f"{name}.txt").exists() else "-"
        differ += [name] if da != db else []
        print(f"{name:16s} {'identical' if da == db else 'DIFFERS'}  {da[:16]}  {db[:16]}")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "record":
        record(Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
