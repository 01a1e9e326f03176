"""Small helpers shared by command modules, and the option vocabulary: one spelling per idea, one idea per name.

The option types are ``Annotated`` aliases: a command writes ``model: ModelOption = None`` and gets the same
flag name, checks and help text as every other command with that option. The vocabulary:

- the LLM: ``--model SPEC`` (an embedded model, a GGUF path, or an endpoint ``URL#MODEL``; ``llm serve`` and
  ``llm start`` take an embedded model only);
- the index directory: ``--index``; its component: ``--retriever``; a reranker by name: ``--rerank``;
- everything a command writes (a file or a folder): ``--out``; a PNG figure: ``--plot``;
- how many items a command reads: ``--limit N`` (``--skip N`` leaves out the first N);
- a JSONL file of cases to read: ``--cases``; a trained artefact's folder: ``--model-dir`` (``--cite-model-dir``,
  ``--judgment-model-dir`` where a command takes two);
- the LLM call cache: ``--cache/--no-cache`` (on by default); the cache *file*: the paths.llm_cache setting;
- ``--json`` prints JSON instead of text, ``--threads`` sets CPU threads where a command builds an index (``index
  build``; everywhere else the runtime.threads setting, ``LEGALRAG_THREADS``),
  ``--progress/--no-progress`` bars;
- a backend's or a tuning knob: ``-o KEY=VALUE`` (repeatable, typed and checked: ``cli/_options.py``).

A renamed option is renamed outright: the old spelling is a usage error (exit 2), and the docs name the new one.
A value not given comes from the saved settings (``legalrag config show``) where one exists.
``tools/cli_options.py`` counts the declarations and checks that no name carries two meanings."""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

ModelOption = Annotated[Optional[str], typer.Option(
    "--model", help="Embedded model: qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b or a GGUF path.")]
ThreadsOption = Annotated[Optional[int], typer.Option(
    "--threads", min=1, help="CPU threads of the model or encoder (default: the runtime.threads setting, else all "
    "cores).")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")]
CacheOption = Annotated[bool, typer.Option("--cache/--no-cache", help="Read and write the LLM call cache (repeated "
                                           "prompts are answered from it).")]
RetrieverOption = Annotated[Optional[str], typer.Option(
    "--retriever", help="Index component (default: the index's strongest, as `legalrag index info` shows).")]
SearchRetrieverOption = Annotated[Optional[str], typer.Option(
    "--retriever", help="Index component (default: the one a learned --rerank was trained on, else the index's "
    "strongest, as `legalrag index info` shows).")]
LimitOption = Annotated[Optional[int], typer.Option("--limit", min=1, help="Read only the first N items (default: "
                                                    "all).")]
IndexOption = Annotated[Optional[Path], typer.Option(
    "--index", help="Index directory (default: the index.path setting).")]
DEFAULT_INDEX_HELP = ("Index directory (default: the index.path setting, else the national law in force, built from "
                      "the dated versions shipped with legalrag and read as of today).")
IndexOrDemoOption = Annotated[Optional[Path], typer.Option("--index", help=DEFAULT_INDEX_HELP)]
BENCH_INDEX_HELP = ("Index directory (default: the index.path setting, else the 2023-06-05 snapshot of the national "
                    "law shipped with legalrag, the corpus the benchmarks' gold ids refer to).")
BenchIndexOption = Annotated[Optional[Path], typer.Option("--index", help=BENCH_INDEX_HELP)]
AsOfOption = Annotated[Optional[str], typer.Option(
    "--as-of", metavar="YYYY-MM-DD", help="Answer from the versions of the law in force that day (default: today); "
    "a day before the oldest version held reads the oldest, saying so, where the law was in force then in an older "
    "text; a law not yet in force that day is left out.")]
ACTS_AS_OF_HELP = ("The date of the acts, YYYY-MM-DD (default: the dates the facts state): each Criminal Law article "
                   "is read in the version in force then, or today's where it is milder (刑法第十二条).")
ActsAsOfOption = Annotated[Optional[str], typer.Option("--as-of", metavar="YYYY-MM-DD", help=ACTS_AS_OF_HELP)]
LLM_HELP = ("The LLM: an embedded model, qwen2.5-coder-1.5b (default) or qwen2.5-coder-0.5b, a GGUF path, or an "
            "OpenAI-compatible endpoint as URL#MODEL (e.g. http://127.0.0.1:8000/v1#qwen; default: the llm.* "
            "settings).")
LLMOption = Annotated[Optional[str], typer.Option("--model", help=LLM_HELP)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def llm_spec(spec: Optional[str]) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """``--model SPEC`` -> ``(model, endpoint, endpoint_model)`` for ``Root.make_llm``: a URL (``http(s)://``) is an
    endpoint, with the model name it expects after ``#``; anything else is the embedded model or a GGUF path."""
    from legalrag.errors import InputError

    if spec is None or not spec.startswith(("http://", "https://")):
        return spec, None, None
    url, _, name = spec.partition("#")
    if not url.rstrip("/").split("://", 1)[1]:
        raise InputError(f"--model {spec!r}: the endpoint URL has no host", field="--model")
    return None, url, name or None


def make_llm(ctx: Any, spec: Optional[str], cache: bool = True, **options: Any):
    """The command's LLM from ``--model SPEC`` (:func:`llm_spec`), built by the composition root."""
    model, endpoint, endpoint_model = llm_spec(spec)
    r = root(ctx)
    require_endpoint_model(r, endpoint, endpoint_model)
    return r.make_llm(model, endpoint, endpoint_model, cache, **options)


def require_endpoint_model(r: Any, endpoint: Optional[str], endpoint_model: Optional[str]) -> None:
    """An endpoint ``--model URL`` needs the model name it serves (``URL#NAME``, or the llm.endpoint_model
    setting), unless the composition root was handed its LLM."""
    if endpoint and not endpoint_model and not r.settings.llm.endpoint_model and r.llm is None:
        from legalrag.errors import InputError

        raise InputError(f"--model {endpoint}: name the model the endpoint serves, --model {endpoint}#NAME (or save "
                         "the llm.endpoint_model setting)", field="--model")


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def root(ctx: Any):
    """The composition root handed to the CLI (``app(obj=Root(...))``), else the default one."""
    from legalrag.wiring import Root

    obj = getattr(ctx, "obj", None)
    return obj if isinstance(obj, Root) else Root()
