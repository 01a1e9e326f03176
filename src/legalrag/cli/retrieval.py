"""`legalrag index build`, `legalrag index info` and `legalrag search` (their evaluation, `eval retrieval`, is in
cli/eval/retrieval.py). The Milvus and Ray knobs of `index build` and `search` are `-o KEY=VALUE` (cli/_options.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import BuildOptions, SearchOptions, option_list, parse_options
from legalrag.cli._scale import Backend, milvus_components, prefill_encodings
from legalrag.cli.apps import app, index_app
from legalrag.cli.common import (AsOfOption, IndexOrDemoOption, JsonOption, LLMOption, ProgressOption, SearchRetrieverOption,
                                 ThreadsOption, llm_spec, print_json, root)
from legalrag.lang import Language

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
        raise InputError(f"-o nprobe / ef tune a Milvus dense component; {name!r} is "
                         f"{idx.manifest['components'][name]['kind']}")
    idx.retriever(name).search_params.update(params)


@index_app.command("build")
def index_build(
    ctx: typer.Context,
    corpus: Path = typer.Option(..., "--corpus", help="JSONL statute corpus, or a folder of user documents."),
    out: Path = typer.Option(..., "--out", help="Index directory to write (replaced atomically)."),
    retriever: List[str] = typer.Option(["bm25"], "--retriever", help="Component(s) to build (repeatable): bm25, qld, "
                                        "dense, hybrid (bm25 + dense + their fusion). For Chinese statutes build "
                                        "hybrid with --encoder stard-e5: the strongest measured (docs/results.md)."),
    encoder: List[str] = typer.Option([], "--encoder", help=ENCODER_HELP),
    lang: Language = typer.Option(Language.AUTO, "--lang", help="zh, en or auto (detected from the corpus)."),
    progress: ProgressOption = True,
    threads: ThreadsOption = None,
    option: List[str] = option_list(BuildOptions, "The field mapping, the backend (Milvus), Ray workers and the "
                                                  "components' tuning, "
                                                  "KEY=VALUE, repeatable"),
) -> None:
    """Build an index over a corpus."""
    from legalrag.corpora.statutes import FieldMap
    from legalrag.llm.embedded import default_threads
    from legalrag.wiring import expand_components

    o = parse_options(BuildOptions, option)
    settings = root(ctx).settings
    docs, info = root(ctx).read_corpus(corpus, FieldMap.parse(o.fields) if o.fields else None, previous=out,
                                       progress=progress)
    params = {"bm25": {"k1": o.k1, "b": o.b}, "qld": {"mu": o.mu}}
    components = expand_components(retriever, encoder or [settings.encoder], index_type=o.index_type.value,
                                   method=o.fusion.value)
    if o.backend is Backend.MILVUS:
        components = milvus_components(components, o.uri, o.collection,
                                       index_params={"nlist": o.nlist} if o.nlist else None,
                                       search_params={k: v for k, v in (("nprobe", o.nprobe), ("ef", o.ef)) if v})
    if o.workers or o.ray_address:
        prefill_encodings(docs, components, workers=o.workers, address=o.ray_address, progress=progress)
    index = root(ctx).build_index(out, docs, retrievers=components, lang=lang.value, params=params, progress=progress,
                        threads=threads or settings.threads or default_threads(),
                        source=str(corpus), corpus_info={k: v for k, v in info.items() if k != "update"},
                        chunk_docs=o.chunk_docs)
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
    index: IndexOrDemoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show what an index holds: corpus (and, for the default national-law index, what it covers), language,
    components and their parameters, and which component answers by default (a `search` without
    `search --retriever`), and why. Without --index: the default index, the one ask, chat and search use."""
    from legalrag.rerank.learned import ranker_summary
    from legalrag.retrieval.strength import default_reason

    idx = root(ctx).index(index, progress=not as_json)
    m = idx.manifest
    ranker = ranker_summary(idx)
    answers = {"component": idx.default, "why": default_reason(m, idx.default)}
    if as_json:
        print_json({"path": str(idx.path)} | {k: v for k, v in m.items()}
                   | {"corpus": {k: v for k, v in m["corpus"].items() if k != "files"},
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
    if c.get("law_over_time"):
        console.print(f"[bold]Coverage[/bold]: the national law over time, as published up to {c['snapshot']}: "
                      f"{c['laws_in_force']:,} laws with {c['articles_in_force']:,} articles in force that day; "
                      f"{c['versions']:,} versions of {c['laws']:,} laws held, {c['superseded_versions']} superseded "
                      f"({c['articles_superseded']:,} articles) and {c['repealed_laws']} repealed, reached by "
                      f"--as-of. Read as of {getattr(idx, 'day', c['snapshot'])}.\nNot covered: {c['not_covered']}; "
                      f"{c['base_laws_not_held']} laws of the {c['base_snapshot']} snapshot are not in the source "
                      f"(e.g. {', '.join(c['base_laws_not_held_sample'][:3])}).", highlight=False)
    if ranker is None:
        console.print("no trained ranker (`legalrag train ranker` adds one)")
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
    as_of: AsOfOption = None,
    as_json: JsonOption = False,
    agents: bool = typer.Option(False, "--agents", help="Multi-agent query rewriting with a planner (uses an LLM)."),
    model: LLMOption = None,
    option: List[str] = option_list(SearchOptions, "Milvus search parameters and the agents' knobs, KEY=VALUE, "
                                                   "repeatable"),
) -> None:
    """Search an index and print the top articles with their citations."""
    from legalrag.cli.agents import agent_pipeline, wants_agents
    from legalrag.laws.select import held_notes
    from legalrag.retrieval.pipeline import law_filter
    from legalrag.serialize import hit_to_dict

    o = parse_options(SearchOptions, option)
    trace = Path(o.trace) if o.trace else None
    policy = Path(o.policy) if o.policy else None
    idx = root(ctx).index(index, as_of=as_of, progress=not as_json)  # the versions in force that day
    fused_planner = o.fused_planner
    model, endpoint, endpoint_model = llm_spec(model)
    if o.nprobe or o.ef:
        milvus_search_params(idx, retriever, {k: v for k, v in (("nprobe", o.nprobe), ("ef", o.ef)) if v})
    pipe = (agent_pipeline(idx, retriever, rerank, agents=agents, endpoint=endpoint, endpoint_model=endpoint_model,
                           trace=trace, root=root(ctx), policy=policy, model=model,
                           fused=fused_planner)
            if wants_agents(agents, rerank, endpoint, policy) or trace or fused_planner
            else root(ctx).build_pipeline(idx, retriever, rerank))
    flt = law_filter(idx, filter_law) if filter_law else None
    hits = pipe.search(question, k=k, filter=flt)
    notes = held_notes((h.document for h in hits), as_of) if as_of else ()
    if as_json:
        print_json({"query": question, "retriever": pipe.name, "hits": [hit_to_dict(h) for h in hits],
                    **({"as_of": as_of, "notes": list(notes)} if as_of else {})})
        return
    from rich.console import Console

    if not hits:
        typer.echo("no matching documents: none shares a word with the question (stop words are ignored); "
                   "rephrase it with the words a statute would use, or try a dense retriever")
        return
    Console().print(_hits_table(hits, f"{pipe.name}: {question}"))
    for note in notes:  # an older day than the oldest version held of a law: that version answered
        typer.echo(note)
