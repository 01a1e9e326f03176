"""`legalrag index build`, `legalrag search` and `legalrag eval retrieval`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from legalrag.cli._scale import Backend, distributed_searcher, milvus_components, prefill_encodings
from legalrag.cli.apps import app, eval_app, index_app
from legalrag.cli.common import (EndpointModelOption, EndpointOption, IndexOption, IndexOrDemoOption, JsonOption,
                                 ModelOption, ProgressOption, SearchRetrieverOption, ThreadsOption, print_json, renamed,
                                 root)
from legalrag.lang import Language
from legalrag.retrieval.dense import IndexType
from legalrag.retrieval.fusion import Fusion

LEXICAL = ("bm25", "qld")
ENCODER_HELP = ("Dense encoder(s), repeatable: the shipped stard-e5 (trained on Chinese statutes: recommended for "
                "them) or judge-e5 (trained on JuDGE criminal cases), e5-small, use-multilingual, a model directory "
                "(PATH) or openai:MODEL (default: the encoder.name setting, e5-small). `legalrag models list` shows "
                "the shipped ones.")


def milvus_search_params(idx, retriever: Optional[str], params: dict) -> None:
    """Set ``params`` (nprobe / ef) on the Milvus dense component that will answer, for this process."""
    from legalrag.errors import InputError
    from legalrag.retrieval.pipeline import resolve_component

    name = resolve_component(idx, retriever)
    if idx.manifest["components"][name]["kind"] != "milvus":
        raise InputError(f"--nprobe / --ef tune a Milvus dense component; {name!r} is "
                         f"{idx.manifest['components'][name]['kind']}")
    idx.retriever(name).search_params.update(params)


# search and eval retrieval: --model / --endpoint serve only their LLM stages (agents, LLM rerankers)
FusedPlannerOption = Annotated[bool, typer.Option(
    "--fused-planner/--no-fused-planner", help="With --agents: one LLM call per round (the planner writes the "
    "chosen agent's queries itself) instead of a decision call plus the agent's rewrite call.")]


@index_app.command("build")
def index_build(
    ctx: typer.Context,
    corpus: Path = typer.Option(..., "--corpus", help="JSONL statute corpus, or a folder of user documents."),
    out: Path = typer.Option(..., "--out", help="Index directory to write (replaced atomically)."),
    retriever: List[str] = typer.Option(["bm25"], "--retriever", help="Component(s) to build (repeatable): bm25, qld, "
                                        "dense, hybrid (bm25 + dense + their fusion). For Chinese statutes build "
                                        "hybrid with --encoder stard-e5: the strongest measured (docs/results.md)."),
    encoder: List[str] = typer.Option([], "--encoder", help=ENCODER_HELP),
    index_type: IndexType = typer.Option(IndexType.FLAT, "--index-type", help="Dense index: flat (exact), hnsw or ivf."),
    fusion: Fusion = typer.Option(Fusion.RRF, "--fusion", help="Hybrid fusion: rrf (reciprocal rank) or wsf (min-max scores)."),
    lang: Language = typer.Option(Language.AUTO, "--lang", help="zh, en or auto (detected from the corpus)."),
    fields: Optional[str] = typer.Option(None, "--fields", help="Field mapping, e.g. id=text_id,text=text,name=name."),
    k1: float = typer.Option(1.2, "--k1", help="BM25 k1."),
    b: float = typer.Option(0.75, "--b", help="BM25 b."),
    mu: float = typer.Option(200.0, "--mu", help="QLD Dirichlet prior mu."),
    progress: ProgressOption = True,
    backend: Backend = typer.Option(Backend.LOCAL, "--backend", help="local (FAISS, bm25s) or milvus (a Milvus engine)."),
    uri: Optional[str] = typer.Option(None, "--uri", help="Milvus URI: http://HOST:19530 or a Milvus Lite FILE.db "
                                      "(default: a Milvus Lite database inside the index directory)."),
    collection: str = typer.Option("legalrag", "--collection", help="Milvus alias the index serves from."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Encode on N local Ray workers first."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Encode on this Ray cluster first."),
    threads: ThreadsOption = None,
    nlist: Optional[int] = typer.Option(None, "--nlist", min=1, help="Milvus IVF (--index-type ivf): clusters "
                                        "(default 128)."),
    nprobe: Optional[int] = typer.Option(None, "--nprobe", min=1, help="Milvus IVF: clusters every search visits "
                                         "(recorded; `search --nprobe` overrides)."),
    ef: Optional[int] = typer.Option(None, "--ef", min=1, help="Milvus HNSW (--index-type hnsw): candidate list of "
                                     "every search (recorded; `search --ef` overrides)."),
    chunk_docs: int = typer.Option(10_000, "--chunk-docs", min=1, help="Documents tokenised at a time by the "
                                   "lexical components (bounds the build's memory; postings spill to disk)."),
) -> None:
    """Build an index over a corpus."""
    from legalrag.corpora.statutes import FieldMap
    from legalrag.errors import InputError
    from legalrag.llm.embedded import default_threads
    from legalrag.wiring import build_index, expand_components, read_corpus

    if uri and backend is not Backend.MILVUS:
        raise InputError("--uri is only used with --backend milvus; add --backend milvus")
    if (nlist or nprobe or ef) and backend is not Backend.MILVUS:
        raise InputError("--nlist / --nprobe / --ef tune a Milvus index; add --backend milvus")
    settings = root(ctx).settings
    docs, info = read_corpus(corpus, FieldMap.parse(fields) if fields else None, previous=out, progress=progress,
                             settings=settings)
    params = {"bm25": {"k1": k1, "b": b}, "qld": {"mu": mu}}
    components = expand_components(retriever, encoder or [settings.encoder], index_type=index_type.value,
                                   method=fusion.value)
    if backend is Backend.MILVUS:
        components = milvus_components(components, uri, collection, index_params={"nlist": nlist} if nlist else None,
                                       search_params={k: v for k, v in (("nprobe", nprobe), ("ef", ef)) if v})
    if workers or ray_address:
        prefill_encodings(docs, components, workers=workers, address=ray_address, progress=progress)
    index = build_index(out, docs, retrievers=components, lang=lang.value, params=params, progress=progress,
                        threads=threads or settings.threads or default_threads(),
                        source=str(corpus), corpus_info={k: v for k, v in info.items() if k != "update"},
                        chunk_docs=chunk_docs, settings=settings)
    if "update" in info:
        u = info["update"]
        typer.echo(f"folder: read {u['added']} added and {u['changed']} changed files, kept {u['unchanged']} "
                   f"unchanged, dropped {u['removed']} removed")
    n = index.manifest["corpus"]["n_documents"]  # the corpus was streamed: count it from the manifest
    unparsed = getattr(docs, "n_unparsed", 0)
    if unparsed:
        lines = ", ".join(str(x) for x in docs.unparsed_names)
        typer.secho(f"warning: {unparsed} of {n} records have a name that is not an article citation (lines {lines}"
                    f"{' …' if unparsed > len(docs.unparsed_names) else ''}); citations to them cannot be checked. "
                    "Name each article <law>第<number>条, e.g. 中华人民共和国民法典第六百八十条.", fg="yellow", err=True)
    typer.echo(f"indexed {n} documents ({index.manifest['lang']}; {', '.join(index.names)}) into {out}")
    if all(index.manifest["components"][c]["kind"] in LEXICAL for c in index.names) and index.manifest["lang"] == "zh":
        typer.echo("tip: for Chinese statutes, `--retriever hybrid --encoder stard-e5` (the dense extra) measured "
                   "far above BM25 alone (docs/results.md)", err=True)


@index_app.command("info")
def index_info(
    ctx: typer.Context,
    index: IndexOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show what an index holds: corpus (and, for the default national-law index, what it covers), language,
    components and their parameters, and which component answers when no --retriever is given, and why. Without
    --index: the index ask and chat use by default."""
    from legalrag.rerank.learned import ranker_summary
    from legalrag.retrieval.strength import default_reason

    idx = root(ctx).open_index_or_demo(index, progress=not as_json)
    m = idx.manifest
    ranker = ranker_summary(idx)
    answers = {"component": idx.default, "why": default_reason(m, idx.default)}
    if as_json:
        print_json({k: v for k, v in m.items()} | {"corpus": {k: v for k, v in m["corpus"].items() if k != "files"},
                                                   "ranker": ranker, "answers": answers})
        return
    from rich.console import Console
    from rich.table import Table

    c = m["corpus"]
    console = Console()
    console.print(f"{idx.path}: {c['n_documents']} documents ({m['lang']}), corpus sha256 {c['sha256'][:16]}…, "
                  f"built by legalrag {m['legalrag_version']} on {m['created']}")
    table = Table(title="components")
    for col in ("name", "kind", "parameters"):
        table.add_column(col)
    for name, entry in m["components"].items():
        params = ", ".join(f"{k}={v}" for k, v in entry["params"].items() if k != "tokenizer")
        table.add_row(name + (" (default)" if name == idx.default else ""), entry["kind"], params)
    console.print(table)
    console.print(f"answers by default (no --retriever): {answers['component']}, {answers['why']}")
    if c.get("national"):
        console.print(f"[bold]Coverage[/bold]: {c['title']}: {c['n_articles']:,} articles of {c['n_laws']:,} laws, "
                      f"regulations and judicial interpretations; snapshot {c['snapshot']}.\n{c['note']}\n"
                      f"Source: {c['provenance']}", highlight=False)
    if ranker is None:
        console.print("no trained ranker (`legalrag ranker train` adds one)")
        return
    nb = ranker.get("neighbours")
    console.print(f"trained ranker (`--rerank learned`): {ranker['n_train_queries']} training queries, candidates "
                  f"from {ranker['candidates']} (trained on the top {ranker['depth']}), {len(ranker['features'])} "
                  "features" + (f"; cross-encoder {ranker['cross_encoder']}" if ranker.get("cross_encoder") else "")
                  + (f"; memory of {nb['n_queries']} questions, {nb['k']} voting, up to {nb['expand']} extra "
                     "candidates" if nb else ""))


def _hits_table(hits, title: str):
    from rich.table import Table

    from legalrag.citecheck import citation_label

    table = Table(title=title, show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("citation")
    table.add_column("text")
    for h in hits:
        text = " ".join(h.document.text.split())
        table.add_row(str(h.rank), f"{h.score:.3f}", citation_label(h.document),
                      text[:120] + ("…" if len(text) > 120 else ""))
    return table


@app.command("search")
def search(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question or statement of facts."),
    index: IndexOrDemoOption = None,
    k: int = typer.Option(10, "--k", min=1, help="Number of hits."),
    retriever: SearchRetrieverOption = None,
    rerank: Optional[str] = typer.Option(None, "--rerank", help="Reranker to apply to the retrieved candidates."),
    filter_law: List[str] = typer.Option([], "--filter-law", help="Only articles of this law title (repeatable)."),
    as_json: JsonOption = False,
    agents: bool = typer.Option(False, "--agents", help="Multi-agent query rewriting with a planner (uses an LLM)."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="With --agents: write the trajectory as JSONL."),
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    policy: Optional[Path] = typer.Option(None, "--policy", help="With --agents: a trained policy directory "
                                          "(`legalrag train policy`), run on the embedded model with its adapter."),
    model: ModelOption = None,
    fused_planner: FusedPlannerOption = False,
    nprobe: Optional[int] = typer.Option(None, "--nprobe", min=1, help="Milvus IVF: clusters this search visits "
                                         "(default: the one recorded at build)."),
    ef: Optional[int] = typer.Option(None, "--ef", min=1, help="Milvus HNSW: candidate list of this search "
                                     "(default: the one recorded at build)."),
) -> None:
    """Search an index and print the top articles with their citations."""
    from legalrag.cli.agents import agent_pipeline, wants_agents
    from legalrag.retrieval.pipeline import law_filter
    from legalrag.serialize import hit_to_dict
    from legalrag.wiring import build_pipeline

    idx = root(ctx).open_index_or_demo(index, progress=not as_json)
    if nprobe or ef:
        milvus_search_params(idx, retriever, {k: v for k, v in (("nprobe", nprobe), ("ef", ef)) if v})
    pipe = (agent_pipeline(idx, retriever, rerank, agents=agents, endpoint=endpoint, endpoint_model=endpoint_model,
                           trace=trace, root=root(ctx), policy=policy, model=model,
                           fused=fused_planner)
            if wants_agents(agents, rerank, endpoint, policy) or trace or fused_planner
            else build_pipeline(idx, retriever, rerank))
    flt = law_filter(idx, filter_law) if filter_law else None
    hits = pipe.search(question, k=k, filter=flt)
    if as_json:
        print_json({"query": question, "retriever": pipe.name, "hits": [hit_to_dict(h) for h in hits]})
        return
    from rich.console import Console

    if not hits:
        typer.echo("no matching documents: none shares a word with the question (stop words are ignored); "
                   "rephrase it with the words a statute would use, or try a dense retriever")
        return
    Console().print(_hits_table(hits, f"{pipe.name}: {question}"))


def metrics_json(metrics: dict, k: int) -> dict:
    keys = [f"recall@{k}", f"precision@{k}", f"f1@{k}", f"mrr@{k}", f"ndcg@{k}", f"hit@{k}"]
    return {**{key: metrics[key] for key in keys}, "n_queries": metrics["n_queries"]}


@eval_app.command("retrieval", cls=renamed({"--run-out": "--out"}))
def eval_retrieval(
    ctx: typer.Context,
    index: IndexOption = None,
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
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Search on N local Ray workers."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Search on this Ray cluster."),
    policy: Optional[Path] = typer.Option(None, "--policy", help="With --agents: a trained policy directory."),
    model: ModelOption = None,
    fused_planner: FusedPlannerOption = False,
) -> None:
    """Evaluate retrieval on a query file (macro-averaged Recall/Precision/F1/MRR/nDCG/Hit at K)."""
    index = root(ctx).index_path(index)
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import evaluate_retrieval, save_run
    from legalrag.cli.agents import agent_pipeline, wants_agents
    from legalrag.wiring import build_pipeline

    idx = root(ctx).open_index(index)
    qs = load_queries(queries, idx, QueryFields.parse(query_fields) if query_fields else None)
    pipe = (agent_pipeline(idx, retriever, rerank, agents=agents, endpoint=endpoint, endpoint_model=endpoint_model,
                           trace=trace, root=root(ctx), policy=policy, model=model,
                           fused=fused_planner)
            if wants_agents(agents, rerank, endpoint, policy) or trace or fused_planner
            else build_pipeline(idx, retriever, rerank))
    if workers or ray_address:
        if agents or trace or endpoint:
            from legalrag.errors import InputError

            raise InputError("--workers/--ray-address run plain pipelines; drop --agents/--endpoint/--trace")
        pipe = distributed_searcher(index, retriever, rerank, pipe.name, workers=workers, address=ray_address)
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
    runs: List[Path] = typer.Argument(..., help="Run directories written by `eval retrieval --run-out` (the first "
                                      "is the baseline), or TREC run files."),
    queries: Path = typer.Option(..., "--queries", help="The query JSONL with the gold documents."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index to resolve gold_names and check gold ids."),
    query_fields: Optional[str] = typer.Option(None, "--query-fields", help="Field mapping, as for eval retrieval."),
    k: int = typer.Option(10, "--k", min=1, help="Cut-off K for the metrics."),
    depth: int = typer.Option(100, "--depth", min=1, help="Largest K of the Recall@K curves."),
    trials: int = typer.Option(10_000, "--trials", min=100, help="Permutations of the randomization test."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the Recall@K curves to this PNG."),
    as_json: JsonOption = False,
) -> None:
    """Compare saved runs on the same queries: metrics, paired randomization tests against the first run,
    Recall@K curves."""
    from legalrag.evaluation.compare import compare_runs
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import load_run

    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    corpus = None
    if index is not None:
        from legalrag.wiring import open_index

        corpus = open_index(index)
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
