"""`legalrag eval answers`: the answer benchmark, answering as `legalrag ask` does (or over the gold articles
with --reference), one JSON line per answer (a rerun resumes), then the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import eval_app
from legalrag.cli.common import (CacheOption, EndpointModelOption, EndpointOption, IndexOrDemoOption, JsonOption,
                                 ModelOption, ProgressOption, ThreadsOption, print_json, root)


@eval_app.command("answers")
def eval_answers(
    ctx: typer.Context,
    queries: Path = typer.Option(..., "--queries", help="JSONL questions: query_id, query, gold_ids, keywords, "
                                 "answer (the STARD split's format)."),
    index: IndexOrDemoOption = None,
    out: Path = typer.Option(..., "--out", help="Per-answer JSONL; an existing file is resumed (same settings)."),
    reference: bool = typer.Option(False, "--reference", help="Give the model the gold articles instead of "
                                   "retrieving (the reference setting)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    judge: bool = typer.Option(False, "--judge", help="Also have an LLM judge yes/no agreement (the answer "
                               "model, or --judge-endpoint)."),
    judge_endpoint: Optional[str] = typer.Option(None, "--judge-endpoint", help="OpenAI-compatible endpoint of "
                                                 "the judge (implies --judge)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="Model name at --judge-endpoint."),
    summary: Optional[Path] = typer.Option(None, "--summary", help="Also write the summary JSON here."),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved and given to the model (default: "
                                    "the answer.k setting, else the engine's default)."),
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0, help="Token budget for the "
                                                  "articles in the prompt (default: the answer.evidence_tokens "
                                                  "setting, else the engine's default; 0: whole articles)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    cache: CacheOption = True,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Answer benchmark: cites a gold article, keyword accuracy, supported share, yes/no agreement, seconds."""
    from legalrag.evaluation.answers.data import load_questions
    from legalrag.evaluation.answers.run import Setting, run_answers, summarise

    questions = load_questions(queries, limit)
    idx = root(ctx).open_index_or_demo(index, progress=progress, threads=threads)
    llm = root(ctx).make_llm(model, endpoint, endpoint_model, cache, threads=threads)
    judge_llm = None
    if judge_endpoint:
        judge_llm = root(ctx).make_llm(None, judge_endpoint, judge_model)
    elif judge:
        judge_llm = llm
    setting = Setting.REFERENCE if reference else Setting.RETRIEVER
    # the settings `ask` would use (flags, else the saved answer.* keys or the --profile's, else the defaults)
    answer = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens)
    options = {name: getattr(answer, name) for name in ("k", "evidence_tokens", "max_tokens", "style")}
    config = {"queries": str(queries), "index": str(getattr(idx, "path", index)), "model": llm.model_id,
              "answer_settings": options,
              "judge": getattr(judge_llm, "model_id", None)}
    rows = run_answers(questions, idx, llm, setting, out, config=config, judge=judge_llm, progress=progress,
                       **options)
    result = {"setting": setting.value, "model": llm.model_id, "out": str(out), **summarise(rows)}
    if summary is not None:
        import json

        from legalrag.io import atomic_write_text

        atomic_write_text(summary, json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    if as_json:
        print_json(result)
    else:
        for key, value in result.items():
            typer.echo(f"{key:28s} {value}")
