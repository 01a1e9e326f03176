"""Every ``legalrag eval`` command: retrieval, compare, fuse, answers, conversation, the consultation benchmark
(generate, score, compare, judge), judgment, cite and mcq.

The commands are thin: each reads its inputs, calls the benchmark's library code (``evaluation/``,
``evaluation/answers/``, ``evaluation/lexrag/``, ``judgment/evaluate.py``, ``citepredict/runner.py``,
``agents/qa/mcq_eval.py``) and prints. Without ``--index`` a command uses the default index, as ``search``
does (the index.path setting, else the national-law index shipped with legalrag; ``eval cite``: the criminal
law of it, which the shipped citation model decides over). The LLM is ``--model SPEC`` (an embedded model, a
GGUF path or an endpoint ``URL#MODEL``); threads come from the runtime.threads setting; tuning knobs are
``-o KEY=VALUE`` (``cli/_options.py``).

``eval conversation`` scores conversational retrieval (processor x retriever, overall and per turn) and saves
runs that ``eval compare`` can test; ``eval consultation-generate`` answers LexRAG turns in the zero-shot,
retriever and reference settings and scores them against the reference answers (``eval consultation-score``
scores a saved run again, e.g. with the BERTScore-style F1); ``eval consultation-judge`` has an LLM judge score
a generation run on five dimensions, with its reliability figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS
from legalrag.cli._options import (CiteOptions, CompareOptions, EvalRetrievalOptions, FuseOptions, GenerationOptions,
                                   JudgeOptions, option_list, parse_options)
from legalrag.cli.apps import eval_app
from legalrag.cli.cite import CITE_INDEX_HELP, LLM_RERANK_HELP, MODEL_HELP as CITE_MODEL_HELP
from legalrag.cli.common import (CacheOption, IndexOrDemoOption, JsonOption, LLMOption, ProgressOption,
                                 RetrieverOption, SearchRetrieverOption, llm_spec, make_llm, print_json, root)
from legalrag.evaluation.lexrag.data import DataFormat


def metrics_json(metrics: dict, k: int) -> dict:
    keys = [f"recall@{k}", f"precision@{k}", f"f1@{k}", f"mrr@{k}", f"ndcg@{k}", f"hit@{k}"]
    return {**{key: metrics[key] for key in keys}, "n_queries": metrics["n_queries"]}


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    queries: Path = typer.Option(..., "--queries", help="Query JSONL (query_id, query, gold_ids or gold_names)."),
    k: int = typer.Option(10, "--k", min=1, help="Cut-off K for the metrics."),
    retriever: SearchRetrieverOption = None,
    rerank: Optional[str] = typer.Option(None, "--rerank", help="Reranker to apply to the retrieved candidates."),
    query_fields: Optional[str] = typer.Option(None, "--query-fields",
                                               help="Field mapping, e.g. query_id=text_id,query=text,gold_ids=la."),
    run_out: Optional[Path] = typer.Option(None, "--out", help="Save run.trec, metrics.json and a manifest here."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    agents: bool = typer.Option(False, "--agents", help="Multi-agent query rewriting with a planner (uses an LLM)."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="With --agents: write the trajectory as JSONL."),
    policy: Optional[Path] = typer.Option(None, "--policy", help="With --agents: a trained policy directory."),
    model: LLMOption = None,
    option: List[str] = option_list(EvalRetrievalOptions, "Ray workers and the planner's mode, KEY=VALUE, "
                                                          "repeatable"),
) -> None:
    """Evaluate retrieval on a query file (macro-averaged Recall/Precision/F1/MRR/nDCG/Hit at K)."""
    from legalrag.cli._scale import distributed_searcher
    from legalrag.cli.agents import agent_pipeline, wants_agents
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import evaluate_retrieval, save_run

    opts = parse_options(EvalRetrievalOptions, option)
    fused_planner = opts.fused_planner
    llm_model, endpoint, endpoint_model = llm_spec(model)
    idx = root(ctx).index(index, progress=progress and not as_json)
    index = Path(idx.path)
    qs = load_queries(queries, idx, QueryFields.parse(query_fields) if query_fields else None)
    pipe = (agent_pipeline(idx, retriever, rerank, agents=agents, endpoint=endpoint, endpoint_model=endpoint_model,
                           trace=trace, root=root(ctx), policy=policy, model=llm_model,
                           fused=fused_planner)
            if wants_agents(agents, rerank, endpoint, policy) or trace or fused_planner
            else root(ctx).build_pipeline(idx, retriever, rerank))
    if opts.workers or opts.ray_address:
        if agents or trace or endpoint:
            from legalrag.errors import InputError

            raise InputError("-o workers / ray_address run plain pipelines; drop --agents, --trace and an "
                             "endpoint --model")
        pipe = distributed_searcher(index, retriever, rerank, pipe.name, workers=opts.workers,
                                    address=opts.ray_address)
    result = evaluate_retrieval(pipe, qs, k=k, progress=progress)
    summary = metrics_json(result.metrics, k)
    if run_out is not None:
        params = {"index": str(index), "queries": str(queries), "k": k, "retriever": pipe.name,
                  "rerank": rerank, "query_fields": query_fields}
        if agents:
            params.update(agents=True, fused_planner=fused_planner)
        save_run(run_out, result.hits, result.metrics, params, index=idx, per_query=result.per_query,
                 tag=pipe.name)
    if as_json:
        print_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{pipe.name} on {queries.name} ({summary['n_queries']} queries)")
    for key in summary:
        table.add_column(key, justify="right")
    table.add_row(*[f"{v:.4f}" if isinstance(v, float) else str(v) for v in summary.values()])
    Console().print(table)
    if run_out is not None:
        typer.echo(f"run saved to {run_out}")


@eval_app.command("compare")
def eval_compare(
    runs: List[Path] = typer.Argument(..., help="Run directories written by `eval retrieval --out` (the first "
                                      "is the baseline), or TREC run files."),
    queries: Path = typer.Option(..., "--queries", help="The query JSONL with the gold documents."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index to resolve gold_names and check gold ids."),
    query_fields: Optional[str] = typer.Option(None, "--query-fields", help="Field mapping, as for eval retrieval."),
    k: int = typer.Option(10, "--k", min=1, help="Cut-off K for the metrics."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the Recall@K curves to this PNG."),
    as_json: JsonOption = False,
    option: List[str] = option_list(CompareOptions, "The curves and the test, KEY=VALUE, repeatable"),
) -> None:
    """Compare saved runs on the same queries: metrics, paired randomization tests against the first run,
    Recall@K curves."""
    opts = parse_options(CompareOptions, option)
    depth, trials = opts.depth, opts.trials
    from legalrag.evaluation.compare import compare_runs
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import load_run

    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    corpus = None
    if index is not None:
        from legalrag.wiring import Root

        corpus = Root().index(index)
    qs = load_queries(queries, corpus, QueryFields.parse(query_fields) if query_fields else None)
    loaded = {}
    for path in runs:
        name, ranked = load_run(path)
        while name in loaded:
            name += "'"
        loaded[name] = ranked
    result = compare_runs(loaded, {q.id: set(q.gold_ids) for q in qs}, k=k, depth=depth, trials=trials)
    if plot is not None:
        from legalrag.evaluation.plots import plot_curves

        plot_curves({r.name: r.recall_curve for r in result.runs}, plot,
                    title=f"Recall@K on {queries.name} ({result.n_queries} queries)")
    if as_json:
        print_json(result.to_dict())
        return
    from rich.console import Console
    from rich.table import Table

    keys = list(result.runs[0].means)
    table = Table(title=f"{len(result.runs)} runs on {queries.name} ({result.n_queries} queries); "
                        f"p: paired randomization test against {result.runs[0].name}")
    table.add_column("run")
    for key in keys:
        table.add_column(key, justify="right")
        table.add_column("p", justify="right")
    table.add_column("missing queries", justify="right")
    for r in result.runs:
        cells = []
        for key in keys:
            p = r.p_values.get(key)
            cells += [f"{r.means[key]:.4f}", "-" if p is None else (f"{p:.3f}" + (" *" if p < 0.05 else ""))]
        table.add_row(r.name, *cells, str(r.missing_queries))
    Console(width=160).print(table)
    if plot is not None:
        typer.echo(f"Recall@K curves drawn to {plot}")


@eval_app.command("fuse")
def eval_fuse(
    runs: List[Path] = typer.Argument(..., help="Run directories (`eval retrieval --out`) or TREC run files."),
    out: Path = typer.Option(..., "--out", help="Run directory to write (run.trec and a manifest)."),
    as_json: JsonOption = False,
    option: List[str] = option_list(FuseOptions, "The fusion, KEY=VALUE, repeatable"),
) -> None:
    """Fuse saved runs with reciprocal-rank fusion into a new run directory."""
    from legalrag.evaluation.runs import fuse_runs, load_run, save_run

    opts = parse_options(FuseOptions, option)
    rrf_k, depth = opts.rrf_k, opts.depth

    loaded: dict[str, dict[str, list[str]]] = {}
    for path in runs:
        name, ranked = load_run(path)
        while name in loaded:
            name += "'"
        loaded[name] = ranked
    w = list(opts.weights) if opts.weights else None
    fused = fuse_runs(loaded, k=rrf_k, weights=w, depth=depth)
    params = {"fused": [str(p) for p in runs], "names": list(loaded), "rrf_k": rrf_k, "weights": w, "depth": depth}
    save_run(out, fused, {}, params, tag="rrf")
    summary = {"out": str(out), "runs": list(loaded), "n_queries": len(fused), "rrf_k": rrf_k, "weights": w}
    if as_json:
        print_json(summary)
        return
    typer.echo(f"fused {len(loaded)} runs ({', '.join(loaded)}) over {len(fused)} queries into {out}")


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
    judge: Optional[str] = typer.Option(None, "--judge", metavar="SPEC", help="Also have an LLM judge yes/no "
                                        "agreement: 'answer' (the answer model) or an LLM as --model takes it (an "
                                        "embedded model, a GGUF path or URL#MODEL)."),
    summary: Optional[Path] = typer.Option(None, "--summary", help="Also write the summary JSON here."),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved and given to the model (default: "
                                    "the answer.k setting, else the engine's default)."),
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0, help="Token budget for the "
                                                  "articles in the prompt (default: the answer.evidence_tokens "
                                                  "setting, else the engine's default; 0: whole articles)."),
    model: LLMOption = None,
    cache: CacheOption = True,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Answer benchmark: cites a gold article, keyword accuracy, supported share, yes/no agreement, seconds."""
    from legalrag.evaluation.answers.data import load_questions
    from legalrag.evaluation.answers.run import AnswerBenchSetting, run_answers, summarise_answers

    questions = load_questions(queries, limit)
    idx = root(ctx).index(index, progress=progress)
    llm = make_llm(ctx, model, cache)
    judge_llm = None
    if judge == "answer":
        judge_llm = llm
    elif judge:
        judge_llm = make_llm(ctx, judge)
    setting = AnswerBenchSetting.REFERENCE if reference else AnswerBenchSetting.RETRIEVER
    # the settings `ask` would use (flags, else the saved answer.* keys or the --profile's, else the defaults)
    answer = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens)
    options = {name: getattr(answer, name) for name in ("k", "evidence_tokens", "max_tokens", "style")}
    config = {"queries": str(queries), "index": str(getattr(idx, "path", index)), "model": llm.model_id,
              "answer_settings": options,
              "judge": getattr(judge_llm, "model_id", None)}
    rows = run_answers(questions, idx, llm, setting, out, config=config, judge=judge_llm, progress=progress,
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
    index: IndexOrDemoOption = None,
    retriever: List[str] = typer.Option(["bm25"], "--retriever", help="Index component(s): bm25, qld, dense, hybrid..."),
    processor: List[str] = typer.Option([DEFAULT_PROCESSOR], "--processor", help=_PROCESSOR_HELP + " Repeatable."),
    ks: str = typer.Option("1,3,5,10", "--ks", help="Cut-offs, comma-separated."),
    turns: int = typer.Option(5, "--turns", min=0, help="Turns each dialogue must have (0: any)."),
    data_format: DataFormat = FormatOption,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N dialogues."),
    out: Optional[Path] = typer.Option(None, "--out", help="Save one run per processor x retriever here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw Recall@10 per turn to this PNG."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Conversational retrieval: each processor feeds each retriever on every turn; Recall/nDCG/MRR/Precision."""
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation, plot_recall_by_turn, save_conversation_runs
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.answer.engine import resolver_for
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.retrieval.pipeline import build_pipeline

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
    idx = root(ctx).index(index, progress=progress)
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


@eval_app.command("consultation-generate")
def eval_consultation_generate(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=_DATA_HELP),
    index: IndexOrDemoOption = None,
    setting: List[str] = typer.Option(["zero_shot", "retriever", "reference"], "--setting",
                                      help="zero_shot, retriever, reference (repeatable)."),
    sample: Optional[int] = typer.Option(None, "--limit", min=1, help="Answer N turns, spread over dialogues and "
                                         "turn positions (default: all)."),
    retriever: RetrieverOption = None,
    processor: str = typer.Option(DEFAULT_PROCESSOR, "--processor", help=_PROCESSOR_HELP.replace(
        "search each turn", "search in the retriever setting")),
    tokenizer: str = typer.Option("word", "--tokenizer", help="ROUGE/BLEU/METEOR tokens: word (jieba) or char."),
    bertscore: bool = typer.Option(False, "--bertscore", help="Also the BERTScore-style F1 (e5-small character "
                                   "vectors, as for JuDGE)."),
    turns: int = typer.Option(5, "--turns", min=0, help="Turns each dialogue must have (0: any)."),
    data_format: DataFormat = FormatOption,
    out: Path = typer.Option(..., "--out", help="Run directory: generations.jsonl, metrics.json, manifest.json."),
    model: LLMOption = None,
    option: List[str] = option_list(GenerationOptions, "The answer engine's knobs, KEY=VALUE, repeatable "
                                                       "(default: the engine's, as `ask` and `chat`)"),
    progress: ProgressOption = True,
) -> None:
    """Answer consultation turns in LexRAG's three settings and score them (keywords, ROUGE, BLEU, METEOR)."""
    opts = parse_options(GenerationOptions, option)
    k, max_tokens, history_chars = opts.k, opts.max_tokens, opts.history_chars
    article_chars, evidence_tokens, style = opts.article_chars, opts.evidence_tokens, opts.style
    from legalrag.evaluation.lexrag.data import sample_turns
    from legalrag.evaluation.lexrag.generate import parse_settings, run_generation
    from legalrag.evaluation.lexrag.report import save_generation_run, score_generations
    from legalrag.evaluation.lexrag.retrieval import gold_repeat
    from legalrag.answer.processors import make_processor
    from legalrag.errors import InputError
    from legalrag.answer.carry import cited_documents
    from legalrag.judgment.textmetrics import char_embedder
    from legalrag.retrieval.pipeline import build_pipeline

    settings = parse_settings(setting)
    if processor not in (*PROCESSORS, "last_question"):
        raise InputError(f"unknown --processor {processor!r}; choose from {', '.join(PROCESSORS)}")
    idx = root(ctx).index(index, progress=progress)
    index = idx.path
    rows, report = _load_turns(data, idx, turns, None, data_format)
    if sample:
        rows = sample_turns(rows, sample)
    pipe = build_pipeline(idx, retriever=retriever)
    llm = make_llm(ctx, model)
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
    self_check: bool = typer.Option(False, "--self-check", help="Also judge each reference against itself."),
    limit_turns: Optional[int] = typer.Option(None, "--limit", min=1,
                                              help="Judge only the first N turns of the run (every setting of each)."),
    against: Optional[Path] = typer.Option(None, "--against", help="Another judge run on the same generations: "
                                           "report agreement with it."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw mean scores per dimension and setting (PNG)."),
    model: LLMOption = None,
    option: List[str] = option_list(JudgeOptions, "The judge's sampling and retries, KEY=VALUE, repeatable"),
    progress: ProgressOption = True,
) -> None:
    """Score a generation run with an LLM judge on five dimensions (1-10, the reference counts as 8)."""
    from legalrag.evaluation.lexrag.report import run_judge, save_judge_run

    opts = parse_options(JudgeOptions, option)
    seed, temperature, retries, max_tokens = opts.seed, opts.temperature, opts.retries, opts.max_tokens
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


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


@eval_app.command("judgment")
def eval_judgment(
    pred: Path = typer.Option(..., "--pred", help="Generated judgments, JSONL lines {id, document}."),
    gold: Path = typer.Option(..., "--gold", help="Reference judgments, JSONL lines {id, document}."),
    as_json: JsonOption = False,
    text_metrics: bool = typer.Option(True, "--text-metrics/--no-text-metrics",
                                      help="Also compute METEOR and BERTScore-style F1 (needs the metrics, zh "
                                           "and dense extras; slower)."),
    per_document: bool = typer.Option(False, "--per-document", help="With --json, include per-document scores."),
    include_missing: bool = typer.Option(False, "--include-missing",
                                         help="Score gold cases that have no prediction as empty judgments "
                                              "(default: score only the cases predicted, and say how many had none)."),
) -> None:
    """Score judgments as the JuDGE benchmark does: prison, fine, charges, articles (+ text metrics)."""
    from legalrag.judgment.evaluate import evaluate_files

    report, text = evaluate_files(pred, gold, text_metrics=text_metrics, progress=not as_json,
                                  include_missing=include_missing)
    summary = report.summary()
    if text is not None:
        summary.update(text.to_dict())
    if as_json:
        if per_document:
            summary["documents"] = [d.to_dict() for d in report.documents]
        print_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"JuDGE metrics: {pred.name} vs {gold.name} ({report.n} cases)")
    table.add_column("metric")
    table.add_column("precision", justify="right")
    table.add_column("recall", justify="right")
    table.add_column("F1 / score", justify="right")
    table.add_row("charges", _fmt(report.charge_precision), _fmt(report.charge_recall), _fmt(report.charge_f1))
    table.add_row("statutes (articles)", _fmt(report.article_precision), _fmt(report.article_recall),
                  _fmt(report.article_f1))
    table.add_row(f"prison term (n={report.prison_n})", "", "", _fmt(report.prison))
    table.add_row(f"fine (n={report.fine_n})", "", "", _fmt(report.fine))
    if text is not None:
        table.add_row(f"METEOR reasoning / result (n={text.pairs})", "", "",
                      f"{_fmt(text.reasoning_meteor)} / {_fmt(text.result_meteor)}")
        table.add_row("BERTScore* reasoning / result", "", "",
                      f"{_fmt(text.reasoning_bertscore)} / {_fmt(text.result_bertscore)}")
    console = Console()
    console.print(table)
    if text is not None:
        console.print(f"*BERTScore-style F1 with {text.bertscore_model}; not comparable with bert-base-chinese.")
    if report.missing:
        how = ("scored as empty judgments (--include-missing)" if report.missing_scored
               else "left out; pass --include-missing to score them as empty judgments")
        console.print(f"{len(report.missing)} of the gold file's cases have no prediction: {how}")
    if report.unparsed:
        shown = ", ".join(report.unparsed[:20]) + (" ..." if len(report.unparsed) > 20 else "")
        console.print(f"[yellow]{len(report.unparsed)} predicted documents not parsed[/yellow] "
                      f"(no 判决如下 / result section; scored on what could be read): {shown}")



@eval_app.command("cite")
def eval_cite(
    ctx: typer.Context,
    index: Optional[Path] = typer.Option(None, "--index", help=CITE_INDEX_HELP),
    cases: Path = typer.Option(..., "--cases", help="JSONL cases with facts (text) and gold citations (la/gold)."),
    train_citations: Optional[Path] = typer.Option(None, "--train-citations", help="Training citation sets."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=CITE_MODEL_HELP),
    rules: Optional[Path] = typer.Option(None, "--rules", help="A (user-edited) rules file."),
    dev: int = typer.Option(0, "--dev", min=0, help="Calibrate on the first N cases by sorted id; evaluate the rest."),
    case_memory: Optional[str] = typer.Option(None, "--case-memory", help="'dev' (vote with the development cases, "
                                              "each left out of its own vote) or a JSONL file of labelled cases."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N evaluation cases."),
    retriever: RetrieverOption = None,
    analysis: bool = typer.Option(False, "--analyse/--no-analyse", help="LLM query analysis."),
    rerank: bool = typer.Option(False, "--llm-rerank/--no-llm-rerank", help=LLM_RERANK_HELP),
    verify: bool = typer.Option(False, "--verify/--no-verify", help="LLM verification of each addition."),
    model: LLMOption = None,
    option: List[str] = option_list(CiteOptions, "Overrides of the citation model's settings, KEY=VALUE, "
                                                 "repeatable (default: the model's)"),
    save_model: Optional[Path] = typer.Option(None, "--out", help="Write the calibrated citation model (rules, "
                                              "graph, config) to this folder (readable by --model-dir)."),
    progress: ProgressOption = True,
    as_json: JsonOption = False,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw P/R/F1 after each stage to this PNG."),
) -> None:
    """Precision, recall and F1 (micro and macro) after each stage of the citation pipeline."""
    from legalrag.citepredict.runner import run_eval
    from legalrag.cli.cite import collaborators

    opts = parse_options(CiteOptions, option)
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    idx, llm, reranker = collaborators(ctx, index, rerank, analysis or rerank or verify, model)
    rep = run_eval(idx, cases, train_citations=train_citations, model_dir=model_dir, rules_path=rules, dev=dev,
                   limit=limit, retriever=retriever, llm=llm, reranker=reranker, save_model=save_model,
                   progress=progress,
                   case_memory=case_memory,
                   overrides=opts.overrides(analysis=analysis or None, verify=verify or None))
    if plot is not None:
        from legalrag.evaluation.plots import plot_bars

        plot_bars({r.stage: {"precision": r.precision, "recall": r.recall, "F1": r.f1} for r in rep.rows}, plot,
                  title=f"Citation prediction after each stage ({rep.n_cases} cases)")
    if as_json:
        print_json(rep.to_dict())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Citation prediction on {rep.n_cases} cases (calibrated on {rep.n_dev})")
    for col in ("stage", "selection", "P", "R", "F1", "macro P", "macro R", "macro F1", "mean size"):
        table.add_column(col, justify="left" if col in ("stage", "selection") else "right")
    for r in rep.rows:
        table.add_row(r.stage, r.rule, f"{r.precision:.3f}", f"{r.recall:.3f}", f"{r.f1:.3f}",
                      f"{r.macro_precision:.3f}", f"{r.macro_recall:.3f}", f"{r.macro_f1:.3f}", f"{r.mean_size:.2f}")
    Console(width=140).print(table)
    typer.echo(f"LLM calls per case: {rep.llm_calls_per_case}; seconds per case: {rep.seconds_per_case}")


@eval_app.command("mcq")
def eval_mcq(
    ctx: typer.Context,
    questions: Path = typer.Option(..., "--questions", help="JSONL, JSON or CSV: question, choices, gold[, domain]."),
    modes: str = typer.Option("zero-shot,cot,simple,multi", "--modes", help="Comma-separated modes to compare."),
    docs: Optional[Path] = typer.Option(None, "--docs", help="Folder of your own legal texts for the simple/multi "
                                        "modes (law files are searched article by article)."),
    index: Optional[Path] = typer.Option(None, "--index", help="A statute index for the simple/multi modes "
                                         "(default, without --docs: the index.path setting, else the national-law "
                                         "index built from the data shipped with legalrag)."),
    sources: str = typer.Option("local", "--sources", help="Sources for the simple/multi modes."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    max_rounds: int = typer.Option(2, "--max-rounds", min=1, max=10, help="Most search rounds in multi mode."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    out: Optional[Path] = typer.Option(None, "--out", help="Write per-question rows (JSONL) here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw accuracy per mode and domain to this PNG."),
) -> None:
    """Accuracy overall and per domain, latency and LLM calls per question, for each mode."""
    from legalrag.cli._qa_output import run_mcq_cli

    llm_model, endpoint, endpoint_model = llm_spec(model)
    report = run_mcq_cli(questions, modes=modes, docs=docs, index=index, sources=sources, limit=limit, max_rounds=max_rounds,
                         model=llm_model, endpoint=endpoint, endpoint_model=endpoint_model, out=out,
                         print_table=not as_json, plot=plot, root=root(ctx))
    if as_json:
        print_json(report)
