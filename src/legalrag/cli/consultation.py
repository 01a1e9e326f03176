"""`legalrag eval conversation | consultation-generate | consultation-score | consultation-judge`: LexRAG.

``eval conversation`` scores conversational retrieval (processor x retriever, overall and per turn) and saves
runs that ``eval compare`` can test; ``eval consultation-generate`` answers turns in the zero-shot, retriever
and reference settings and scores them against the reference answers (``eval consultation-score`` scores a
saved run again, e.g. with the BERTScore-style F1); ``eval consultation-judge`` has an LLM
judge score a generation run on five dimensions, with its reliability figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli.apps import eval_app
from legalrag.cli.common import (EndpointModelOption, EndpointOption, IndexOption, JsonOption, ModelOption,
                                 ProgressOption, RetrieverOption, ThreadsOption, print_json, renamed, root)
from legalrag.evaluation.lexrag.data import DataFormat
from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS

_PROCESSOR_HELP = (f"How the dialogue becomes a search each turn, as `chat --processor` offers: {', '.join(PROCESSORS)} "
                   f"(default: chat's, {DEFAULT_PROCESSOR}). last: the last question; all_questions: every question; "
                   "full_context: the whole dialogue; fused: one search per turn, fused; carry: fused plus the "
                   "articles the consultation established, kept while the topic holds; rewrite: the LLM rewrites the "
                   "question (one model call per turn).")

_DATA_HELP = ("LexRAG data: dialogues (dataset.json) or per-turn items (turn_N.json), a JSON array or JSON Lines "
              "under any name, or a directory of turn_N.json files.")


def _load_turns(data: Path, index, turns: int, limit: Optional[int], fmt: str = "auto"):
    """The turns with gold resolved against ``index``; every excluded turn, unresolved name and text mismatch
    is printed by name, and a run with nothing to score is an error."""
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import require_scorable, resolve_gold

    rows = load_consultations(data, turns or None, fmt)
    if limit:
        keep = list(dict.fromkeys(t.dialogue_id for t in rows))[:limit]
        rows = [t for t in rows if t.dialogue_id in set(keep)]
    rows, report = resolve_gold(rows, index.documents)
    for line in report.notices(limit=20):
        typer.echo(line, err=True)
    require_scorable(rows, report)
    return rows, report


FormatOption = typer.Option(DataFormat.AUTO, "--format", help="What --data holds: auto (read from the records), dialogues "
                            "(LexRAG dataset.json) or turns (LexRAG turn_N.json items); JSON array or JSON Lines.")


def _llm(ctx, model, endpoint, endpoint_model, threads):
    return root(ctx).make_llm(model, endpoint, endpoint_model, threads=threads)


def _table(title: str, rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title)
    for key in rows[0]:
        table.add_column(key, justify="left" if key in ("processor", "retriever", "setting") else "right")
    for row in rows:
        table.add_row(*[f"{v:.4f}" if isinstance(v, float) else "-" if v is None else str(v) for v in row.values()])
    Console(width=200).print(table)


@eval_app.command("conversation")
def eval_conversation(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=_DATA_HELP),
    index: IndexOption = None,
    retriever: List[str] = typer.Option(["bm25"], "--retriever", help="Index component(s): bm25, qld, dense, hybrid..."),
    processor: List[str] = typer.Option([DEFAULT_PROCESSOR], "--processor", help=_PROCESSOR_HELP + " Repeatable."),
    ks: str = typer.Option("1,3,5,10", "--ks", help="Cut-offs, comma-separated."),
    turns: int = typer.Option(5, "--turns", min=0, help="Turns each dialogue must have (0: any)."),
    data_format: DataFormat = FormatOption,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N dialogues."),
    out: Optional[Path] = typer.Option(None, "--out", help="Save one run per processor x retriever here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw Recall@10 per turn to this PNG."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Conversational retrieval: each processor feeds each retriever on every turn; Recall/nDCG/MRR/Precision."""
    index = root(ctx).index_path(index)
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation, plot_recall_by_turn, save_conversation_runs
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.answer.engine import resolver_for
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.wiring import build_pipeline

    try:
        cutoffs = tuple(int(x) for x in ks.split(",") if x.strip())
    except ValueError:
        raise InputError(f"--ks must be comma-separated integers, got {ks!r}") from None
    if not cutoffs or min(cutoffs) < 1:
        raise InputError(f"--ks needs positive cut-offs, got {ks!r}")
    for p in processor:
        if p not in (*PROCESSORS, "last_question"):
            raise InputError(f"unknown --processor {p!r}; choose from {', '.join(PROCESSORS)}")
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    idx = root(ctx).open_index(index, threads=threads)
    rows, report = _load_turns(data, idx, turns, limit, data_format)
    llm = _llm(ctx, model, endpoint, endpoint_model, threads) if "rewrite" in processor else None
    cited = cited_documents(lambda: resolver_for(idx))
    processors = {p: make_processor(p, llm, cited=cited) for p in dict.fromkeys(processor)}
    searchers = {r: build_pipeline(idx, retriever=r) for r in dict.fromkeys(retriever)}
    result = evaluate_conversation(rows, processors, searchers, cutoffs, progress=progress)
    repeat = gold_repeat(rows)
    params = {"data": str(data), "index": str(index), "ks": list(cutoffs), "turns": turns, "limit": limit,
              "model": getattr(llm, "model_id", None) if llm else None}
    if out is not None:
        save_conversation_runs(out, result, {**params, "gold_repeat": repeat}, report.to_dict(), index=idx)
    if plot is not None:
        plot_recall_by_turn(result, plot)
    if as_json:
        print_json({"gold": report.to_dict(), "turns": {"loaded": len(rows), "scored": report.scored},
                    "gold_repeat": repeat, "table": result.table(cutoffs), "recall@10_by_turn": result.turn_table(),
                    "mrr@10_by_turn": result.turn_table("mrr@10"),
                    "processor_seconds_per_turn": result.processor_seconds})
        return
    excluded = f"; {len(rows) - report.scored} left out, named above" if report.scored < len(rows) else ""
    _table(f"conversational retrieval on {data.name} ({report.scored} scored turns of {len(rows)}{excluded})",
           result.table(cutoffs))
    _table("Recall@10 per turn", result.turn_table())
    _table("MRR@10 per turn", result.turn_table("mrr@10"))
    typer.echo("gold repeats an earlier turn's article: " + ", ".join(
        [f"all later turns {repeat['rate']:.3f}"] + [f"turn {n} {r:.3f}" for n, r in repeat["by_turn"].items()]))
    typer.echo("seconds per turn: " + ", ".join(f"{p} {s:.3f}" for p, s in result.processor_seconds.items())
               + " (processor); " + ", ".join(f"{p.name} {p.retrieval_seconds:.3f}" for p in result.pairs)
               + " (retrieval)")
    if out is not None:
        typer.echo(f"runs saved under {out}; test them with `legalrag eval compare {out}/RUN_A {out}/RUN_B "
                   f"--queries {out}/queries.jsonl`")


@eval_app.command("consultation-generate", cls=renamed({"--sample": "--limit"}))
def eval_consultation_generate(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=_DATA_HELP),
    index: IndexOption = None,
    setting: List[str] = typer.Option(["zero_shot", "retriever", "reference"], "--setting",
                                      help="zero_shot, retriever, reference (repeatable)."),
    sample: Optional[int] = typer.Option(None, "--limit", min=1, help="Answer N turns, spread over dialogues and "
                                         "turn positions (default: all)."),
    retriever: RetrieverOption = None,
    processor: str = typer.Option(DEFAULT_PROCESSOR, "--processor", help=_PROCESSOR_HELP.replace(
        "search each turn", "search in the retriever setting")),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved in the retriever setting "
                                    "(default: the answer engine's, as `ask` and `chat`)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             "(default: the answer engine's)."),
    history_chars: Optional[int] = typer.Option(None, "--history-chars", min=100,
                                                help="Dialogue history kept in the prompt (oldest turns dropped "
                                                "first; default: the answer engine's)."),
    article_chars: Optional[int] = typer.Option(None, "--article-chars", min=50,
                                                help="Whole articles cut at this many characters instead of the "
                                                "engine's evidence selection (LexRAG's setup used 400)."),
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=1, max=8192,
                                                  help="Evidence budget: the articles cut to the clauses that best "
                                                  "match the query within this many tokens (default: the answer "
                                                  "engine's, as `ask` and `chat`)."),
    tokenizer: str = typer.Option("word", "--tokenizer", help="ROUGE/BLEU/METEOR tokens: word (jieba) or char."),
    bertscore: bool = typer.Option(False, "--bertscore", help="Also the BERTScore-style F1 (e5-small character "
                                   "vectors, as for JuDGE)."),
    style: Optional[str] = typer.Option(None, "--style", help="Answer style: guided (the default of `ask` and "
                                        "`chat`) or brief."),
    turns: int = typer.Option(5, "--turns", min=0, help="Turns each dialogue must have (0: any)."),
    data_format: DataFormat = FormatOption,
    out: Path = typer.Option(..., "--out", help="Run directory: generations.jsonl, metrics.json, manifest.json."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    progress: ProgressOption = True,
) -> None:
    """Answer consultation turns in LexRAG's three settings and score them (keywords, ROUGE, BLEU, METEOR)."""
    index = root(ctx).index_path(index)
    from legalrag.evaluation.lexrag.data import sample_turns
    from legalrag.evaluation.lexrag.generate import parse_settings, run_generation
    from legalrag.evaluation.lexrag.report import save_generation_run, score_generations
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.judgment.textmetrics import char_embedder
    from legalrag.wiring import build_pipeline

    settings = parse_settings(setting)
    if processor not in (*PROCESSORS, "last_question"):
        raise InputError(f"unknown --processor {processor!r}; choose from {', '.join(PROCESSORS)}")
    idx = root(ctx).open_index(index, threads=threads)
    rows, report = _load_turns(data, idx, turns, None, data_format)
    if sample:
        rows = sample_turns(rows, sample)
    pipe = build_pipeline(idx, retriever=retriever)
    llm = _llm(ctx, model, endpoint, endpoint_model, threads)
    docs = {d.id: d for d in idx.documents}
    from legalrag.answer.engine import resolver_for

    extra = {"evidence_tokens": evidence_tokens} if evidence_tokens is not None else {}
    responses = run_generation(rows, llm, settings, documents=docs, search=lambda q, n: pipe.search(q, k=n),
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
    tokenizer: str = typer.Option("word", "--tokenizer", help="ROUGE/BLEU/METEOR tokens: word (jieba) or char."),
    bertscore: bool = typer.Option(True, "--bertscore/--no-bertscore", help="The BERTScore-style F1 (e5-small "
                                   "character vectors, as for JuDGE)."),
) -> None:
    """Score a saved generation run again without a model (e.g. add the BERTScore-style F1, or answers that an
    endpoint wrote); rewrites the run's scores and metrics.json in place."""
    from legalrag.evaluation.lexrag.report import rescore_generation_run
    from legalrag.judgment.textmetrics import char_embedder

    embedder = char_embedder() if bertscore else None
    scored = rescore_generation_run(generations, tokenizer=tokenizer, embedder=embedder)
    if embedder is not None:
        embedder.save()
    _table(f"scores of {generations.name}", scored["table"])


@eval_app.command("consultation-compare", cls=renamed({"--json-out": "--out"}))
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


@eval_app.command("consultation-judge", cls=renamed({"--limit-turns": "--limit"}))
def eval_consultation_judge(
    ctx: typer.Context,
    generations: Path = typer.Option(..., "--generations", help="A run written by `eval consultation-generate`."),
    out: Path = typer.Option(..., "--out", help="Judge run directory: judgements.jsonl, summary.json."),
    self_check: bool = typer.Option(False, "--self-check", help="Also judge each reference against itself."),
    limit_turns: Optional[int] = typer.Option(None, "--limit", min=1,
                                              help="Judge only the first N turns of the run (every setting of each)."),
    against: Optional[Path] = typer.Option(None, "--against", help="Another judge run on the same generations: "
                                           "report agreement with it."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Sampling seed (use with --temperature > 0)."),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="Judge sampling temperature."),
    retries: int = typer.Option(2, "--retries", min=0, help="Re-asks after a reply that does not validate."),
    max_tokens: int = typer.Option(400, "--max-tokens", min=32, help="Longest judge reply, in tokens."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw mean scores per dimension and setting (PNG)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    progress: ProgressOption = True,
) -> None:
    """Score a generation run with an LLM judge on five dimensions (1-10, the reference counts as 8)."""
    from legalrag.evaluation.lexrag.report import run_judge, save_judge_run

    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    llm = _llm(ctx, model, endpoint, endpoint_model, threads)
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
