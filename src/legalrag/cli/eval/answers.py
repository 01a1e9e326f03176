"""`eval answers` (the answer benchmark over STARD-style questions) and `eval mcq` (multiple-choice
questions in several QA modes)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import AnswersOptions, McqOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.common import (BENCH_INDEX_HELP, BenchIndexOption, JsonOption, LLMOption, ProgressOption, llm_spec,
                                 make_llm, print_json, root)


@eval_app.command("answers")
def eval_answers(
    ctx: typer.Context,
    queries: Path = typer.Option(..., "--queries", help="JSONL questions: query_id, query, gold_ids, keywords, "
                                 "answer (the STARD split's format)."),
    index: BenchIndexOption = None,
    out: Path = typer.Option(..., "--out", help="Per-answer JSONL; an existing file is resumed (same settings)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    judge: Optional[str] = typer.Option(None, "--judge", metavar="SPEC", help="Also have an LLM judge yes/no "
                                        "agreement: 'answer' (the answer model) or an LLM as --model takes it (an "
                                        "embedded model, a GGUF path or URL#MODEL)."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    option: List[str] = option_list(AnswersOptions, "The answer engine's retrieval depth and evidence budget "
                                                    "(default: as `ask`) and a summary file, KEY=VALUE, repeatable"),
) -> None:
    """Answer benchmark: cites a gold article, keyword accuracy, supported share, yes/no agreement, seconds."""
    from legalrag.evaluation.answers.data import load_questions
    from legalrag.evaluation.answers.run import AnswerBenchSetting, run_answers, summarise_answers

    opts = parse_options(AnswersOptions, option)
    k, evidence_tokens, reference, cache = opts.k, opts.evidence_tokens, opts.reference, opts.llm_cache
    summary = Path(opts.summary) if opts.summary else None
    questions = load_questions(queries, limit)
    idx = root(ctx).index(index, progress=progress, snapshot=True)
    llm = make_llm(ctx, model, cache)
    judge_llm = None
    if judge == "answer":
        judge_llm = llm
    elif judge:
        judge_llm = make_llm(ctx, judge)
    setting = AnswerBenchSetting.REFERENCE if reference else AnswerBenchSetting.RETRIEVER
    # the settings `ask` would use (flags, else the saved answer.* keys or the --profile's, else the defaults)
    answer = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens)
    options = {name: getattr(answer, name) for name in ("k", "evidence_tokens", "max_tokens", "style", "select")}
    config = {"queries": str(queries), "index": str(getattr(idx, "path", index)), "model": llm.model_id,
              "corpus": idx.manifest["corpus"].get("source"),  # the default: the 2023-06-05 snapshot
              "answer_settings": options,
              "judge": getattr(judge_llm, "model_id", None)}
    rows = run_answers(questions, idx, llm, setting, out, config=config, judge=judge_llm, progress=progress,
                       support=root(ctx).make_support_scorer(),
                       **options)
    result = {"setting": setting.value, "model": llm.model_id, "out": str(out), **summarise_answers(rows)}
    if summary is not None:
        import json

        from legalrag.io import atomic_write_text

        atomic_write_text(summary, json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    if as_json:
        print_json(result)
    else:
        for key, value in result.items():
            typer.echo(f"{key:28s} {value}")



@eval_app.command("mcq")
def eval_mcq(
    ctx: typer.Context,
    questions: Path = typer.Option(..., "--questions", help="JSONL, JSON or CSV: question, choices, gold[, domain]."),
    docs: Optional[Path] = typer.Option(None, "--docs", help="Folder of your own legal texts for the simple/multi "
                                        "modes (law files are searched article by article)."),
    index: Optional[Path] = typer.Option(None, "--index", help="A statute index for the simple/multi modes "
                                         "(default, without --docs: " + BENCH_INDEX_HELP[len("Index directory (default: "):]),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    out: Optional[Path] = typer.Option(None, "--out", help="Write per-question rows (JSONL) here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw accuracy per mode and domain to this PNG."),
    option: List[str] = option_list(McqOptions, "The simple/multi modes' sources and rounds, KEY=VALUE, repeatable"),
) -> None:
    """Accuracy overall and per domain, latency and LLM calls per question, for each mode."""
    from legalrag.cli._qa_output import run_mcq_cli

    opts = parse_options(McqOptions, option)
    sources, max_rounds, modes = opts.sources, opts.max_rounds, opts.modes
    llm_model, endpoint, endpoint_model = llm_spec(model)
    report = run_mcq_cli(questions, modes=modes, docs=docs, index=index, sources=sources, limit=limit, max_rounds=max_rounds,
                         model=llm_model, endpoint=endpoint, endpoint_model=endpoint_model, out=out,
                         print_table=not as_json, plot=plot, root=root(ctx))
    if as_json:
        print_json(report)
