"""The LexRAG consultation benchmark: `eval consultation-generate` answers turns in the zero-shot, retriever
and reference settings and scores them; `consultation-score` scores a saved run again; `consultation-compare`
pairs two runs; `consultation-judge` has an LLM judge score a run on five dimensions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS
from legalrag.cli._options import GenerationOptions, JudgeOptions, ScoreOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.common import BenchIndexOption, LLMOption, ProgressOption, RetrieverOption, make_llm, root
from legalrag.cli.eval._lexrag import _DATA_HELP, _PROCESSOR_HELP, _load_turns, _table


@eval_app.command("consultation-generate")
def eval_consultation_generate(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=_DATA_HELP),
    index: BenchIndexOption = None,
    sample: Optional[int] = typer.Option(None, "--limit", min=1, help="Answer N turns, spread over dialogues and "
                                         "turn positions (default: all)."),
    retriever: RetrieverOption = None,
    processor: str = typer.Option(DEFAULT_PROCESSOR, "--processor", help=_PROCESSOR_HELP.replace(
        "search each turn", "search in the retriever setting")),
    out: Path = typer.Option(..., "--out", help="Run directory: generations.jsonl, metrics.json, manifest.json."),
    model: LLMOption = None,
    option: List[str] = option_list(GenerationOptions, "The answer engine's knobs, the scoring and the turns read, "
                                                       "KEY=VALUE, repeatable (the engine's knobs default to the "
                                                       "engine's, as `ask` and `chat`)"),
    progress: ProgressOption = True,
) -> None:
    """Answer consultation turns in LexRAG's three settings and score them (keywords, ROUGE, BLEU, METEOR)."""
    opts = parse_options(GenerationOptions, option)
    k, max_tokens, history_chars = opts.k, opts.max_tokens, opts.history_chars
    article_chars, evidence_tokens, style = opts.article_chars, opts.evidence_tokens, opts.style
    tokenizer, bertscore, turns, data_format = opts.tokenizer, opts.bertscore, opts.turns, opts.format
    from legalrag.evaluation.lexrag.data import sample_turns
    from legalrag.evaluation.lexrag.generate import parse_settings, run_generation
    from legalrag.evaluation.lexrag.report import save_generation_run, score_generations
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.judgment.textmetrics import char_embedder
    from legalrag.retrieval.pipeline import build_pipeline

    settings = parse_settings(list(opts.setting))
    if processor not in (*PROCESSORS, "last_question"):
        raise InputError(f"unknown --processor {processor!r}; choose from {', '.join(PROCESSORS)}")
    idx = root(ctx).index(index, progress=progress, snapshot=True)
    index = idx.path
    rows, report = _load_turns(data, idx, turns, None, data_format)
    if sample:
        rows = sample_turns(rows, sample)
    pipe = build_pipeline(idx, retriever=retriever)
    llm = make_llm(ctx, model)
    docs = {d.id: d for d in idx.documents}
    from legalrag.answer.per_index import resolver_for

    extra = {"evidence_tokens": evidence_tokens} if evidence_tokens is not None else {}
    responses = run_generation(rows, llm, settings, documents=docs, search=lambda q, n: pipe.search(q, k=n),
                               support=root(ctx).make_support_scorer(),
                               processor=make_processor(processor, llm, cited=cited_documents(
                                   lambda: resolver_for(idx))), k=k, max_tokens=max_tokens,
                               history_chars=history_chars, article_chars=article_chars,
                               resolver=lambda: resolver_for(idx), style=style, progress=progress, **extra)
    embedder = char_embedder() if bertscore else None
    scored = score_generations(rows, responses, tokenizer=tokenizer, embedder=embedder)
    if embedder is not None:
        embedder.save()
    params = {"data": str(data), "index": str(index), "settings": [s.value for s in settings], "sample": sample,
              "retriever": pipe.name, "processor": processor, "k": k, "max_tokens": max_tokens,
              "history_chars": history_chars, "article_chars": article_chars,
              "evidence_tokens": evidence_tokens, "tokenizer": tokenizer, "model": llm.model_id, "style": style}
    save_generation_run(out, rows, responses, scored, params, report.to_dict())
    _table(f"generation on {len(rows)} turns ({llm.model_id}, processor {processor})", scored["table"])
    _table("keyword accuracy per turn", [{"setting": name, **{f"turn {n}": v for n, v in turns_.items()}}
                                         for name, turns_ in scored["keyword_accuracy_by_turn"].items()])
    repeat = gold_repeat(rows)
    typer.echo("gold repeats an earlier turn's article: " + ", ".join(
        [f"all later turns {repeat['rate']:.3f}"] + [f"turn {n} {r:.3f}" for n, r in repeat["by_turn"].items()]))
    typer.echo(f"saved to {out}")


@eval_app.command("consultation-score")
def eval_consultation_score(
    generations: Path = typer.Option(..., "--generations", help="A run written by `eval consultation-generate`."),
    option: List[str] = option_list(ScoreOptions, "How the run is scored, KEY=VALUE, repeatable"),
) -> None:
    """Score a saved generation run again without a model (e.g. add the BERTScore-style F1, or answers that an
    endpoint wrote); rewrites the run's scores and metrics.json in place."""
    from legalrag.evaluation.lexrag.report import rescore_generation_run
    from legalrag.judgment.textmetrics import char_embedder

    opts = parse_options(ScoreOptions, option)
    tokenizer = opts.tokenizer
    embedder = char_embedder() if opts.bertscore else None
    scored = rescore_generation_run(generations, tokenizer=tokenizer, embedder=embedder)
    if embedder is not None:
        embedder.save()
    _table(f"scores of {generations.name}", scored["table"])


@eval_app.command("consultation-compare")
def eval_consultation_compare(
    run_a: Path = typer.Argument(..., help="A run written by `eval consultation-generate` (the baseline)."),
    run_b: Path = typer.Argument(..., help="Another run over the same turns."),
    json_out: Optional[Path] = typer.Option(None, "--out", help="Also write the table as JSON here."),
) -> None:
    """Paired comparison of two generation runs over the turns both answered: per setting and metric, both
    means, B - A and a paired randomization test's p-value."""
    from legalrag.evaluation.lexrag.report import compare_generation_runs
    from legalrag.io import atomic_write_text

    rows = compare_generation_runs(run_a, run_b)
    _table(f"{run_b.name} against {run_a.name} (paired over common turns)", rows)
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        typer.echo(f"saved to {json_out}")


@eval_app.command("consultation-judge")
def eval_consultation_judge(
    ctx: typer.Context,
    generations: Path = typer.Option(..., "--generations", help="A run written by `eval consultation-generate`."),
    out: Path = typer.Option(..., "--out", help="Judge run directory: judgements.jsonl, summary.json."),
    limit_turns: Optional[int] = typer.Option(None, "--limit", min=1,
                                              help="Judge only the first N turns of the run (every setting of each)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw mean scores per dimension and setting (PNG)."),
    model: LLMOption = None,
    option: List[str] = option_list(JudgeOptions, "The judge's sampling, retries, self-check and a judge run to "
                                                  "agree with, KEY=VALUE, repeatable"),
    progress: ProgressOption = True,
) -> None:
    """Score a generation run with an LLM judge on five dimensions (1-10, the reference counts as 8)."""
    from legalrag.evaluation.lexrag.report import run_judge, save_judge_run

    opts = parse_options(JudgeOptions, option)
    seed, temperature, retries, max_tokens = opts.seed, opts.temperature, opts.retries, opts.max_tokens
    self_check, against = opts.self_check, Path(opts.against) if opts.against else None
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    llm = make_llm(ctx, model)
    result = run_judge(generations, llm, self_check=self_check, against=against, limit_turns=limit_turns, seed=seed, temperature=temperature,
                       retries=retries, max_tokens=max_tokens, progress=progress)
    save_judge_run(out, result, {"generations": str(generations), "model": llm.model_id, "seed": seed,
                                 "temperature": temperature, "retries": retries, "max_tokens": max_tokens,
                                 "self_check": self_check, "limit_turns": limit_turns, "against": str(against) if against else None})
    if plot is not None:
        from legalrag.evaluation.lexrag.report import plot_judge

        plot_judge(result, plot)
    _table(f"judge {llm.model_id} on {generations.name}", result["table"])
    typer.echo(json.dumps({k: result["summary"][k] for k in ("failures", "reference_self_score", "agreement")
                           if k in result["summary"]}, ensure_ascii=False, indent=1)[:4000])
    typer.echo(f"saved to {out}")
