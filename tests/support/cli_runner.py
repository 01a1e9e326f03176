"""Run the real ``legalrag`` entry point in-process (exit code handling included), for CLI tests."""

from __future__ import annotations

import sys


def run_cli(monkeypatch, capsys, *args):
    """Returns (exit code, stdout, stderr)."""
    from legalrag.cli import main

    monkeypatch.setattr(sys, "argv", ["legalrag", *map(str, args)])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out = capsys.readouterr()
    return code, out.out, out.err


EVAL_QUERIES = [
    {"query_id": 1, "query": "出租人不维修租赁物", "gold_ids": [711]},
    {"query_id": 2, "query": "公司不签书面劳动合同要赔双倍工资吗", "gold_ids": [13578]},
    {"query_id": 3, "query": "撞了人要赔偿吗", "gold_ids": [10069]},
]


def lexical_eval_args(monkeypatch, capsys, tmp_path, test_data) -> list:
    """A BM25 index over the lexical test statutes and three queries with gold: the `eval retrieval` arguments
    (index, queries, k 5, JSON) the single-process and the distributed runs share."""
    import json

    out = tmp_path / "idx"
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", out, "--retriever", "bm25", "--lang", "zh", "--no-progress")
    assert code == 0, err
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in EVAL_QUERIES) + "\n", encoding="utf-8")
    return ["eval", "retrieval", "--index", out, "--queries", q, "-o", "k=5", "--json", "--no-progress"]
