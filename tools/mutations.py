"""Mutation testing by a named list: realistic one-line bugs in the modules that decide results, each run
against the tests that cover it.

    python tools/mutations.py --list                          # the mutations, their anchors (found or not)
    nice -n 10 python tools/mutations.py --out runs/mutations  # run every mutation (resumable), then report
    python tools/mutations.py --only rrf-k-default,prison-cap-upper --out runs/mutations
    python tools/mutations.py --baseline --out runs/mutations  # the selected tests, unmutated, once
    python tools/mutations.py --report --out runs/mutations --json-out bench/results/mutations.json

Each mutation names a file, an *anchor* (an exact piece of its source, which must occur exactly once) and the
text that replaces it, plus the test node ids that cover it. The run copies ``src/``, ``tests/``, ``bench/``, ``tools/``,
``docs/`` and ``pyproject.toml`` to a temporary directory once; for each mutation it rewrites the one file in
that copy, runs ``pytest`` there on the mutation's tests (the copy's ``src`` comes first on the path), and
restores the file (in a ``finally``), so the working tree is never touched. Outcomes:

- ``killed``: a selected test failed (its first failure message is kept) or the tests could not be collected;
- ``survived``: every selected test passed;
- ``anchor not found`` / ``anchor not unique``: the source changed since the anchor was written (refresh the
  entry); not run, and left out of the kill rate;
- ``skipped``: every selected test skipped (missing data or package); left out of the kill rate;
- ``timeout``: the tests ran past ``--timeout``.

Results go to ``OUT/results.jsonl`` one line per mutation as it finishes (a rerun skips those already there
unless ``--rerun``), and the report (kill rate per module, every outcome) to ``--json-out``. Not part of
``make test``: it costs one pytest start-up (~4 CPU s) plus the tests per mutation.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPY = ("src", "tests", "bench", "tools", "docs", "pyproject.toml")


@dataclass(frozen=True)
class Mutation:
    name: str
    module: str  # the area the kill rate is reported by
    path: str  # repo-relative
    anchor: str  # exact source text, must occur once
    replacement: str
    tests: tuple[str, ...]  # pytest node ids (or files)
    why: str  # the bug a user would suffer
    equivalent: str = ""  # why the mutant cannot be told apart from the original, when judged so


def M(name, module, path, anchor, replacement, tests, why, equivalent=""):
    return Mutation(name, module, path, anchor, replacement, tuple(tests), why, equivalent)


T_FUSION = "tests/unit/retrieval/test_fusion.py"
T_RANGES = "tests/unit/judgment/test_ranges.py"
T_STRUCT = "tests/unit/judgment/test_structure.py"
T_SEC = "tests/unit/server/test_security.py"
CAP = f"{T_STRUCT}::test_the_prison_term_is_capped_by_the_charges_own_article_when_the_month_model_runs_high"
VOTE = f"{T_STRUCT}::test_similar_cases_vote_for_a_charge_the_facts_do_not_name"
PREDICT = f"{T_STRUCT}::test_predictions_follow_the_facts_and_carry_evidence"
ENGINE_SAME = "tests/unit/answer/test_engine.py::test_ask_chat_and_the_benchmark_send_the_same_prompt_and_get_the_same_answer"
TTFT = "tests/unit/answer/test_engine.py::test_time_to_first_token_includes_the_retrieval"
BODY = f"{T_SEC}::test_body_size_content_type_and_headers"
CHUNKED = f"{T_SEC}::test_the_body_limit_counts_every_message_of_a_chunked_upload"
KEYS = f"{T_SEC}::test_api_keys_are_required_on_api_routes_only"
RATE = f"{T_SEC}::test_rate_limit_is_per_key_with_retry_after"
BUCKET = f"{T_SEC}::test_token_bucket_refills"
DAMAGED = "tests/unit/test_shipped.py::test_a_damaged_file_is_refused_with_its_path_and_the_fix"
GOOD = "tests/unit/test_shipped.py::test_a_good_model_passes_and_its_card_lists_every_file"
SHIPPED_PREFIXES = "tests/unit/test_shipped.py::test_shipped_encoders_use_e5s_query_and_passage_prefixes"
PACKER = "tests/unit/test_shipped.py::test_the_packer_writes_the_models_own_prefixes"
RESOLVER = ("tests/unit/citecheck/test_parse.py::test_resolver_success", "tests/unit/citecheck/test_parse.py::test_resolver_failure_reasons",
            "tests/unit/citecheck/test_parse.py::test_the_same_law_twice_resolves_only_when_the_texts_agree",
            "tests/unit/citecheck/test_parse.py::test_check_citations_keeps_and_flags_every_citation")
EXTRACT = ("tests/unit/citecheck/test_parse.py::test_extracted_list_keeps_order_spans_and_title",
           "tests/unit/citecheck/test_parse.py::test_list_sharing_one_title", "tests/unit/citecheck/test_parse.py::test_parse_chinese",
           "tests/unit/citecheck/test_parse.py::test_title_is_inherited_within_a_sentence_only",
           "tests/unit/citecheck/test_parse.py::test_ranges_give_both_ends",
           "tests/unit/citecheck/test_parse.py::test_article_markers_inside_a_title_belong_to_the_title")
UNNORMALISED = ("tests/unit/retrieval/test_encoders.py::test_an_endpoint_that_returns_unnormalised_vectors_is_normalised_and_ranked"
                "_by_cosine")
ANY_ENCODER = "tests/unit/retrieval/test_encoders.py::test_dense_search_normalises_what_any_encoder_returns"
CITEPRED = ("tests/unit/citepredict/test_pipeline.py", "tests/unit/citepredict/test_rules.py")

MUTATIONS: list[Mutation] = [
    # ----------------------------------------------------------------- retrieval: fusion, defaults, encoders
    M("rrf-reciprocal", "retrieval", "src/legalrag/retrieval/fusion.py",
      "scores[h.id] += wi / (k + h.rank)", "scores[h.id] += wi * (k + h.rank)", [T_FUSION],
      "RRF adds the rank instead of its reciprocal: the worst-ranked documents win"),
    M("fused-order", "retrieval", "src/legalrag/retrieval/fusion.py",
      "order = sorted(scores, key=lambda d: (-scores[d],", "order = sorted(scores, key=lambda d: (scores[d],",
      [T_FUSION], "fused lists sorted worst first"),
    M("rrf-first-member-only", "retrieval", "src/legalrag/retrieval/fusion.py",
      "    for wi, run in zip(w, runs):\n        for h in run:\n            scores[h.id] += wi",
      "    for wi, run in zip(w, runs[:1]):\n        for h in run:\n            scores[h.id] += wi", [T_FUSION],
      "RRF scores only the first member (BM25)"),
    M("minmax-denominator", "retrieval", "src/legalrag/retrieval/fusion.py",
      "else (s - lo) / (hi - lo)", "else (s - lo) / hi", [T_FUSION],
      "min-max normalisation divides by the maximum, not the range"),
    M("zscore-unscaled", "retrieval", "src/legalrag/retrieval/fusion.py",
      "(s - s.mean()) / sd", "(s - s.mean())", [T_FUSION], "z-score fusion not divided by the spread"),
    M("rrf-k-default", "retrieval", "src/legalrag/retrieval/hybrid.py",
      'rrf_k=p.get("rrf_k", 60)', "rrf_k=60",
      ["tests/unit/retrieval/test_index.py::test_the_hybrid_fuses_with_the_rrf_constant_the_index_stored"],
      "the hybrid ignores the RRF constant the index stored"),
    M("bm25-k1-default", "retrieval", "src/legalrag/retrieval/bm25.py",
      'lang: str = "auto", k1: float = 1.2, b: float = 0.75,', 'lang: str = "auto", k1: float = 2.0, b: float = 0.75,',
      ["tests/unit/retrieval/test_bm25.py::test_judge_facts_to_criminal_law_articles"], "BM25 term saturation default changed"),
    M("bm25-b-default", "retrieval", "src/legalrag/retrieval/bm25.py",
      'lang: str = "auto", k1: float = 1.2, b: float = 0.75,', 'lang: str = "auto", k1: float = 1.2, b: float = 1.0,',
      ["tests/unit/retrieval/test_bm25.py::test_judge_facts_to_criminal_law_articles"], "BM25 length normalisation default changed"),
    M("encoder-not-normalised", "retrieval", "src/legalrag/retrieval/encoders.py",
      "lambda batch: l2_normalise(self._embed(batch, role))", "lambda batch: self._embed(batch, role)",
      [UNNORMALISED], "an endpoint's unnormalised vectors are searched as they come (not cosine)"),
    M("dense-query-unit-rows", "retrieval", "src/legalrag/retrieval/dense.py",
      "vecs = unit_rows(self.encoder.encode_queries(list(queries)))", "vecs = self.encoder.encode_queries(list(queries))",
      [ANY_ENCODER], "query vectors of an encoder that does not normalise are searched unnormalised"),
    M("dense-docs-unit-rows", "retrieval", "src/legalrag/retrieval/dense.py",
      "vectors = unit_rows(encoder.encode_documents([passage_text(d, max_chars) for d in documents]))",
      "vectors = encoder.encode_documents([passage_text(d, max_chars) for d in documents])",
      [ANY_ENCODER], "long documents' longer vectors win inner-product search"),
    M("milvus-filter-widened", "retrieval", "src/legalrag/retrieval/milvus/retriever.py",
      "elif all(per_law[law][0] == per_law[law][1] for law in laws):",
      "elif any(per_law[law][0] == per_law[law][1] for law in laws):",
      ["tests/e2e/test_milvus.py::test_filters_are_pushed_into_the_engine_with_the_same_results",
       "tests/e2e/test_milvus_server.py::test_dense_hybrid_and_filters_on_the_server_equal_the_local_index"],
      "a filter keeping one law whole and one article of another becomes a filter on both laws"),
    M("packer-prefixes-swapped", "retrieval", "src/legalrag/training/pack.py",
      'return {"query_prefix": qp, "passage_prefix": dp,', 'return {"query_prefix": dp, "passage_prefix": qp,',
      [PACKER], "a re-packed encoder ships with its query and passage prefixes swapped"),
    M("corpus-max-file-mb", "retrieval", "src/legalrag/wiring/indexes.py",
      "return _read(path, fields, previous, progress, max_file_mb=current_settings(settings).max_file_mb)",
      "return _read(path, fields, previous, progress)",
      ["tests/unit/test_settings.py::test_the_largest_document_size_setting_reaches_the_corpus_reader"],
      "documents.max_file_mb is not honoured when an index is built from a folder"),
    # ------------------------------------------------------------------------------------- answer engine
    M("ttft-without-retrieval", "engine", "src/legalrag/answer/engine.py",
      '"ttft_s": t1 - t0 + gen["ttft_s"]', '"ttft_s": gen["ttft_s"]', [TTFT],
      "time to first token under-reported by the retrieval time"),
    M("engine-retrieved-ids-dropped", "engine", "src/legalrag/answer/engine.py",
      "check_citations(result.text, self.resolver, [h.id for h in hits])",
      "check_citations(result.text, self.resolver, [])", [ENGINE_SAME],
      "every citation reported as outside the retrieved sources"),
    M("engine-usage-before-dropped", "engine", "src/legalrag/answer/engine.py",
      "usage = usage_before + Usage.of(result, t2 - t1)", "usage = Usage.of(result, t2 - t1)",
      ["tests/unit/answer/test_engine.py::test_a_rewritten_follow_up_counts_the_rewrite_in_its_usage"],
      "the query rewrite's LLM cost left out of an answer's usage"),
    M("engine-total-time", "engine", "src/legalrag/answer/engine.py",
      '"total_s": t3 - t0, "seconds": t3 - t0}', '"total_s": t3 - t1, "seconds": t3 - t0}', [ENGINE_SAME],
      "total time leaves out retrieval"),
    # ------------------------------------------------------------------------ citation resolution and marks
    M("in-retrieved-always", "citations", "src/legalrag/citecheck/resolve.py",
      "in_retrieved=doc is not None and doc.id in retrieved", "in_retrieved=doc is not None", list(RESOLVER),
      "a citation to an article that was never retrieved is marked as grounded"),
    M("ambiguous-article-resolved", "citations", "src/legalrag/citecheck/resolve.py",
      "if len({d.text for d in docs}) > 1:", "if len({d.text for d in docs}) > 2:", list(RESOLVER),
      "an article number held by two different documents resolves to the first"),
    M("same-law-twice-disagreeing", "citations", "src/legalrag/citecheck/resolve.py",
      "if found.exact and docs and len({d.text for d in docs}) == 1:", "if found.exact and docs:", list(RESOLVER),
      "the same law twice with different texts resolves to either"),
    M("no-law-resolves", "citations", "src/legalrag/citecheck/resolve.py",
      "        if not citation.law:\n            return Resolution(citation, reason=Reason.NO_LAW)\n",
      "", list(RESOLVER), "a citation with no law title is looked up anyway (crash or a wrong law)"),
    M("resolved-flag", "citations", "src/legalrag/citecheck/resolve.py",
      "canonical=r.canonical, resolved=doc is not None,", "canonical=r.canonical, resolved=True,", list(RESOLVER),
      "an unresolved citation is reported as resolved"),
    M("title-inherited-across-sentences", "citations", "src/legalrag/citecheck/chinese.py",
      "def _inside_title(opens: list[int], closes: list[int], pos: int) -> bool:",
      "def _inside_title(opens: list[int], closes: list[int], pos: int) -> bool:\n    return False", list(EXTRACT),
      "article markers inside a law's title read as articles"),
    # ------------------------------------------------------------------------- shipped-model verification
    M("shipped-sha-unchecked", "shipped", "src/legalrag/shipped.py",
      "elif sha256_file(path) != digest:", "elif False:", [DAMAGED],
      "a truncated or corrupted shipped model is loaded"),
    M("shipped-missing-unchecked", "shipped", "src/legalrag/shipped.py",
      "        if not path.is_file():\n            problems.append(f\"{path}: missing\")\n        elif",
      "        if False:\n            problems.append(f\"{path}: missing\")\n        elif", [DAMAGED],
      "a missing file is hashed (a crash) instead of named"),
    M("shipped-problems-ignored", "shipped", "src/legalrag/shipped.py",
      "    if problems:\n        raise ModelError", "    if False:\n        raise ModelError", [DAMAGED, GOOD],
      "verification's problems never refuse the model"),
    M("shipped-prefixes", "shipped", "src/legalrag/data/models/stard-e5/onnx_encoder.json",
      '"query_prefix": "query: ",\n  "passage_prefix": "passage: ",',
      '"query_prefix": "passage: ",\n  "passage_prefix": "query: ",', [SHIPPED_PREFIXES],
      "a shipped encoder's settings with the prefixes swapped"),
    # ---------------------------------------------------------------------------------- judgment prediction
    M("prison-cap-upper", "judgment", "src/legalrag/judgment/predict.py",
      "clipped = [min(max(m, lo), hi) for m in each]", "clipped = [max(m, lo) for m in each]", [CAP],
      "the prison term is not capped at the statutory maximum"),
    M("prison-cap-off", "judgment", "src/legalrag/judgment/predict.py",
      'if rng and self._on("statutory"):', "if False:", [CAP], "no statutory range applied at all"),
    M("amended-article-ignored", "judgment", "src/legalrag/judgment/predict.py",
      "        if charge in AMENDED_CHARGES:", "        if False:", [CAP],
      "危险驾驶 capped by art. 133 (交通肇事), not art. 133-1"),
    M("detention-only-range", "judgment", "src/legalrag/judgment/signals.py",
      "most = max(DETENTION[1] if detention else 0, SUPERVISION[1] if supervision else 0)", "most = FIXED_TERM[1]",
      [T_RANGES], "an article with 拘役 only allows up to 15 years"),
    M("open-tier-range", "judgment", "src/legalrag/judgment/signals.py",
      "if not uppers or _OPEN.search(article_text):", "if not uppers:", [T_RANGES],
      "a tier 七年以上有期徒刑 stops at 7 years"),
    M("combined-cap-long", "judgment", "src/legalrag/judgment/signals.py",
      "cap = COMBINED_FIXED_LONG if total >= COMBINED_LONG_FROM else COMBINED_FIXED", "cap = COMBINED_FIXED",
      [T_RANGES], "art. 69's 25-year cap for sums of 35 years or more ignored"),
    M("combined-detention-cap", "judgment", "src/legalrag/judgment/signals.py",
      "        cap = COMBINED_DETENTION\n", "        cap = COMBINED_FIXED\n", [T_RANGES],
      "several 拘役-only crimes allowed more than one year"),
    M("neighbour-vote-off", "judgment", "src/legalrag/judgment/candidates.py",
      "votes = vote(ctx.neighbours, {i: self.cases[i].charges for i in self.cases})", "votes = {}", [VOTE],
      "similar cases no longer vote for charges"),
    M("penalty-score-denominator", "judgment", "src/legalrag/judgment/metrics.py",
      "m = max(pred, gold)", "m = max(pred, gold) + 1",
      ["tests/unit/judgment/test_metrics.py::test_example_output_reproduces_reference_figures"],
      "the benchmark's penalty score computed off by one"),
    # ---------------------------------------------------------------------------------- citation prediction
    M("select-strict", "citepred", "src/legalrag/citepredict/select.py",
      "return {p for p, s in pool.items() if s >= threshold}", "return {p for p, s in pool.items() if s > threshold}",
      list(CITEPRED), "provisions scoring exactly the threshold (core predictions at 1.0) dropped"),
    M("calibrate-ties", "citepred", "src/legalrag/citepredict/select.py",
      "    for t in sorted(grid, reverse=True):", "    for t in sorted(grid):", list(CITEPRED),
      "threshold ties go to the lower threshold (more provisions)"),
    M("rules-confidence", "citepred", "src/legalrag/citepredict/rules.py",
      "            if conf >= min_confidence:", "            if conf >= 0:", list(CITEPRED),
      "association rules kept whatever their confidence"),
    M("rules-support", "citepred", "src/legalrag/citepredict/rules.py",
      "if trig in always_set or count[trig] < min_support:", "if trig in always_set:", list(CITEPRED),
      "rules learned from triggers seen once",
      equivalent="a pair's count never exceeds its trigger's, so the pair check `c < min_support` two lines below "
                 "already drops every pair of a trigger seen fewer than min_support times; the trigger check only "
                 "saves the loop"),
    M("cocitation-idf", "citepred", "src/legalrag/citepredict/cocitation.py",
      "self.idf = np.where(df > 0, np.log(max(n, 1) / np.maximum(df, 1)), 0.0)", "self.idf = np.where(df > 0, 1.0, 0.0)",
      list(CITEPRED), "co-citation weights every provision alike"),
    # ------------------------------------------------------------------------------ server security layer
    M("body-limit-per-message", "server", "src/legalrag/server/security.py",
      'seen += len(message.get("body", b""))', 'seen = len(message.get("body", b""))', [CHUNKED],
      "a chunked upload of any size passes when each piece is small"),
    M("content-length-limit", "server", "src/legalrag/server/security.py",
      "int(length) > self.max_body_bytes", "int(length) > 10 * self.max_body_bytes",
      [f"{T_SEC}::test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read"],
      "a declared body ten times the limit is accepted"),
    M("any-key-accepted", "server", "src/legalrag/server/security.py",
      "if hmac.compare_digest(given, digest) and found is None:", "if found is None:", [KEYS],
      "any API key is accepted"),
    M("auth-off", "server", "src/legalrag/server/security.py",
      "        if self.keys:\n            presented", "        if False:\n            presented", [KEYS],
      "API keys never checked"),
    M("rate-limit-never", "server", "src/legalrag/server/security.py",
      "if tokens >= 1.0:", "if tokens >= 0.0:", [RATE, BUCKET], "the rate limit never refuses"),
    M("json-only-relaxed", "server", "src/legalrag/server/security.py",
      'if ctype != "application/json":', 'if ctype not in ("application/json", "application/x-www-form-urlencoded"):',
      [BODY], "form bodies reach the JSON routes"),
    M("security-headers-dropped", "server", "src/legalrag/server/security.py",
      '"headers": list(message.get("headers", [])) + SECURITY_HEADERS', '"headers": list(message.get("headers", []))',
      [BODY], "no CSP / nosniff / frame headers"),
]


# --------------------------------------------------------------------------------------------- running
def check_anchor(root: Path, m: Mutation) -> str | None:
    """None when the anchor occurs exactly once in ``root / m.path``, else what is wrong."""
    p = root / m.path
    if not p.is_file():
        return f"anchor not found: {m.path} does not exist"
    n = p.read_text(encoding="utf-8").count(m.anchor)
    if n == 0:
        return f"anchor not found in {m.path}: {m.anchor.splitlines()[0][:80]!r}"
    if n > 1:
        return f"anchor not unique in {m.path} ({n} occurrences): {m.anchor.splitlines()[0][:80]!r}"
    return None


_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|error|errors|xfailed|xpassed|deselected)")


def run_tests(root: Path, tests: tuple[str, ...], timeout: float) -> dict:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "LEGALRAG_THREADS": "1"}
    env.setdefault("LEGALRAG_SHARED_DATA", str(REPO.parent / "shared" / "data"))
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rfE",
           "--tb=short", *tests]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": None, "seconds": round(time.perf_counter() - t0, 1), "counts": {}, "message": "timeout"}
    out = proc.stdout + proc.stderr
    counts: dict[str, int] = {}
    for n, what in _SUMMARY.findall(out.splitlines()[-1] if out.strip() else ""):
        counts[what.rstrip("s") if what == "errors" else what] = int(n)
    failed = [ln for ln in out.splitlines() if ln.startswith("FAILED ") or re.match(r"ERROR \S+\.py", ln)]
    assertion = [ln.strip() for ln in out.splitlines() if ln.startswith("E ")]
    message = (failed[0] if failed else "") + (" | " + " ".join(assertion[:3]) if assertion else "")
    return {"rc": proc.returncode, "seconds": round(time.perf_counter() - t0, 1), "counts": counts,
            "message": message[:600], "tail": out.strip().splitlines()[-1][:200] if out.strip() else ""}


def outcome(res: dict) -> str:
    if res["rc"] is None:
        return "timeout"
    c = res["counts"]
    if res["rc"] == 0:
        return "survived" if c.get("passed", 0) else "skipped"
    if res["rc"] in (1, 2, 3):  # failures, interrupted (collection error), internal error
        return "killed"
    if res["rc"] == 5:
        return "no tests collected"
    return f"error rc={res['rc']}"


def copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore, symlinks=True)
        elif src.exists():
            shutil.copy2(src, dest / name)


def load_results(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["name"]] = r
    return out


def run(selected: list[Mutation], out: Path, timeout: float, rerun: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    done = {} if rerun else load_results(results_path)
    todo = [m for m in selected if m.name not in done]
    print(f"{len(todo)} mutations to run ({len(selected) - len(todo)} already in {results_path})", flush=True)
    with tempfile.TemporaryDirectory(prefix="legalrag-mutants-") as tmp:
        root = Path(tmp)
        copy_tree(root)
        for i, m in enumerate(todo, 1):
            problem = check_anchor(root, m)
            rec = {"name": m.name, "module": m.module, "path": m.path, "anchor": m.anchor,
                   "replacement": m.replacement, "tests": list(m.tests), "why": m.why}
            if problem:
                rec.update(outcome="anchor not found" if "not found" in problem else "anchor not unique",
                           message=problem)
            else:
                target = root / m.path
                original = target.read_text(encoding="utf-8")
                try:
                    target.write_text(original.replace(m.anchor, m.replacement, 1), encoding="utf-8")
                    res = run_tests(root, m.tests, timeout)
                finally:
                    target.write_text(original, encoding="utf-8")
                rec.update(outcome=outcome(res), **res)
            print(f"[{i}/{len(todo)}] {m.name}: {rec['outcome']} {rec.get('seconds', '')} s "
                  f"{rec.get('message', '')[:160]}", flush=True)
            with results_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def baseline(selected: list[Mutation], out: Path, timeout: float) -> None:
    """The union of the selected mutations' tests on the unmutated copy, in one pytest run."""
    tests = list(dict.fromkeys(t for m in selected for t in m.tests))
    with tempfile.TemporaryDirectory(prefix="legalrag-mutants-") as tmp:
        root = Path(tmp)
        copy_tree(root)
        res = run_tests(root, tuple(tests), timeout)
    res["tests"] = tests
    out.mkdir(parents=True, exist_ok=True)
    (out / "baseline.json").write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: res[k] for k in ("rc", "seconds", "counts", "message")}, ensure_ascii=False), flush=True)


def first_pass(path: Path) -> dict[str, dict]:
    """Each mutation's first recorded outcome (before any ``--rerun``), for the before/after comparison."""
    out: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out.setdefault(r["name"], r)
    return out


def _per_module(rows: list[dict], known: dict[str, Mutation]) -> dict[str, dict]:
    per: dict[str, dict] = {}
    for r in rows:
        m = known[r["name"]]
        d = per.setdefault(r["module"], {"killed": 0, "survived": 0, "equivalent": 0, "not_run": 0})
        if r["outcome"] == "killed":
            d["killed"] += 1
        elif r["outcome"] == "survived" and m.equivalent:
            d["equivalent"] += 1
        elif r["outcome"] in ("survived", "timeout"):
            d["survived"] += 1
        else:
            d["not_run"] += 1
    for d in per.values():
        judged = d["killed"] + d["survived"]
        d["kill_rate"] = round(d["killed"] / judged, 4) if judged else None
    return per


def report(out: Path, json_out: Path | None, command: str) -> dict:
    results = load_results(out / "results.jsonl")
    first = first_pass(out / "results.jsonl")
    known = {m.name: m for m in MUTATIONS}
    rows = [results[m.name] for m in MUTATIONS if m.name in results]
    per = _per_module(rows, known)
    per_first = _per_module([first[m.name] for m in MUTATIONS if m.name in first], known)
    killed = sum(d["killed"] for d in per.values())
    judged = killed + sum(d["survived"] for d in per.values())
    base = out / "baseline.json"
    rep = {"name": "Mutation testing: named one-line mutations against the tests that cover them",
           "command": command, "machine_note": "shared with other jobs",
           "data": "the repository's tests (JuDGE and STARD shared data where a test reads them)",
           "metrics": {"mutations": len(MUTATIONS), "run": len(rows), "killed": killed, "judged": judged,
                       "kill_rate": round(killed / judged, 4) if judged else None,
                       "equivalent": sum(d["equivalent"] for d in per.values()),
                       "not_run": sum(d["not_run"] for d in per.values())},
           "per_module": per,
           "first_pass_per_module": per_first,
           "first_pass_outcomes": {n: r["outcome"] for n, r in first.items() if n in known},
           "baseline": json.loads(base.read_text(encoding="utf-8")) if base.exists() else None,
           "mutations": [{k: r.get(k) for k in ("name", "module", "path", "anchor", "replacement", "tests", "why",
                                                "outcome", "message", "seconds")}
                         | ({"equivalent": known[r["name"]].equivalent} if known[r["name"]].equivalent else {})
                         for r in rows],
           "missing": [m.name for m in MUTATIONS if m.name not in results]}
    if json_out:
        from legalrag.evaluation.record import write_result

        rep = write_result(json_out, **rep)
    print(json.dumps({"metrics": rep["metrics"], "per_module": per}, ensure_ascii=False, indent=1))
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the mutations and whether each anchor is found")
    ap.add_argument("--only", default=None, help="comma-separated mutation names")
    ap.add_argument("--module", default=None, help="only the mutations of these modules (comma-separated)")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "mutations")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per mutation's tests")
    ap.add_argument("--rerun", action="store_true", help="run again the mutations already in OUT/results.jsonl")
    ap.add_argument("--baseline", action="store_true", help="run the selected tests once, unmutated")
    ap.add_argument("--report", action="store_true", help="only write the report from OUT/results.jsonl")
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args()
    names = {m.name for m in MUTATIONS}
    if len(names) != len(MUTATIONS):
        sys.exit("duplicate mutation names")
    selected = MUTATIONS
    if args.only:
        wanted = [x.strip() for x in args.only.split(",") if x.strip()]
        unknown = [w for w in wanted if w not in names]
        if unknown:
            sys.exit(f"unknown mutation names {unknown}; see --list")
        selected = [m for m in MUTATIONS if m.name in wanted]
    if args.module:
        modules = {x.strip() for x in args.module.split(",")}
        selected = [m for m in selected if m.module in modules]
    if args.list:
        for m in selected:
            problem = check_anchor(REPO, m)
            print(f"{m.name:32} {m.module:10} {m.path}: {problem or 'anchor found'}")
        return
    command = "python tools/mutations.py " + " ".join(sys.argv[1:])
    if args.baseline:
        baseline(selected, args.out, args.timeout)
    elif not args.report:
        run(selected, args.out, args.timeout, args.rerun)
    if not args.baseline:
        report(args.out, args.json_out, command)


if __name__ == "__main__":
    main()
