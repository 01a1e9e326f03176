"""`eval conversation`: conversational retrieval on LexRAG dialogues, processor x retriever, overall and per
turn; its runs are what `eval compare` tests."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS
from legalrag.cli._options import ConversationOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.common import BenchIndexOption, JsonOption, LLMOption, ProgressOption, make_llm, print_json, root
from legalrag.cli.eval._lexrag import _DATA_HELP, _PROCESSOR_HELP, _load_turns, _table


@eval_app.command("conversation")
def eval_conversation(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=_DATA_HELP),
    index: BenchIndexOption = None,
    retriever: List[str] = typer.Option(["bm25"], "--retriever", help="Index component(s): bm25, qld, dense, hybrid..."),
    processor: List[str] = typer.Option([DEFAULT_PROCESSOR], "--processor", help=_PROCESSOR_HELP + " Repeatable."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N dialogues."),
    out: Optional[Path] = typer.Option(None, "--out", help="Save one run per processor x retriever here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw Recall@10 per turn to this PNG."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    option: List[str] = option_list(ConversationOptions, "The cut-offs and the dialogues read, KEY=VALUE, "
                                                         "repeatable"),
) -> None:
    """Conversational retrieval: each processor feeds each retriever on every turn; Recall/nDCG/MRR/Precision."""
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation, plot_recall_by_turn, save_conversation_runs
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.answer.per_index import resolver_for
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.retrieval.pipeline import build_pipeline

    opts = parse_options(ConversationOptions, option)
    ks, turns, data_format = opts.ks, opts.turns, opts.format
    try:
        cutoffs = tuple(int(x) for x in ks.split(",") if x.strip())
    except ValueError:
        raise InputError(f"-o ks must be comma-separated integers, got {ks!r}") from None
    if not cutoffs or min(cutoffs) < 1:
        raise InputError(f"-o ks needs positive cut-offs, got {ks!r}")
    for p in processor:
        if p not in (*PROCESSORS, "last_question"):
            raise InputError(f"unknown --processor {p!r}; choose from {', '.join(PROCESSORS)}")
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    idx = root(ctx).index(index, progress=progress, snapshot=True)
    index = idx.path
    rows, report = _load_turns(data, idx, turns, limit, data_format)
    llm = make_llm(ctx, model, cache=True) if "rewrite" in processor else None
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
