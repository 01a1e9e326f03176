"""``Root``: what a command builds its collaborators with, holding the saved settings (and, in a test or an
embedding application, ready objects that replace what it would build)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.settings import Settings, load_settings
from legalrag.wiring.encoders import encoder_factory, make_encoder, make_support_scorer
from legalrag.wiring.indexes import expand_components, register_backends
from legalrag.wiring.llms import label_route, local_server_client, make_llm, make_policy_llm, served_model_id
from legalrag.wiring.rerankers import LLM_RERANKERS, make_reranker
from legalrag.wiring.sources import make_sources


class Root:
    """What a command builds its collaborators with. The CLI passes one down as the Typer context object
    (``legalrag.cli.common.root(ctx)``) and the HTTP app's launcher uses one too; a test or an application
    embedding legalrag hands in ready objects, e.g. ``CliRunner().invoke(app, args, obj=Root(llm=my_llm))``.
    Commands that build an LLM through :meth:`make_llm` or open an index through :meth:`index` then use
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
            return label_route(llm, f"endpoint {endpoint or s.llm.endpoint}" if remote else "in-process")
        from legalrag.llm.local import ServerFirstLLM, probe_model_server

        wanted = model or s.llm.model
        if wanted:
            info = probe_model_server(s.llm.server.url)
            if info is None or info.model != served_model_id(wanted):
                note = "" if info is None else (f"the model server at {s.llm.server} serves {info.model}, not "
                                                f"{wanted}: answered in this process")
                return label_route(self.make_llm(wanted, None, None, cache, **options), "in-process", note)
        return ServerFirstLLM(s.llm.server.url, lambda: self.make_llm(wanted, None, None, cache, **options),
                              local_server_client)

    def answer_settings(self, *, k: int | None = None, evidence_tokens: int | None = None, style: str | None = None,
                        max_tokens: int | None = None):
        """The answer engine's settings for a command: each value a flag gave, else the saved ``answer.*``
        setting, else the engine's default. ``evidence_tokens`` 0 (flag or setting) means whole articles
        (``AnswerSettings.evidence_tokens=None``): the one place that conversion is made."""
        from dataclasses import replace

        from legalrag.answer.engine import DEFAULTS

        saved = self.settings.answer
        pick = (lambda flag, kept: flag if flag is not None else kept)
        out = DEFAULTS.but(k=pick(k, saved.k), style=pick(style, saved.style),
                           max_tokens=pick(max_tokens, saved.max_tokens), select=saved.select,
                           time_cap_s=saved.time_cap_s)
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

    # indexes: the one way to open one, and the builders that give an index its encoders

    def index(self, path: str | Path | None = None, *, laws: Sequence[str] | None = None, demo: bool = False,
              as_of: str | None = None, snapshot: bool = False, threads: int | None = None, progress: bool = False):
        """The index a command works on, opened (and built first where it is one legalrag builds itself):

        - ``path`` (``--index DIR``), else the ``index.path`` setting: that directory, its dense components
          loading their encoders by the specs they record (or ``Root(encoder=...)``'s encoder);
        - neither: the national law in force (every dated version shipped in the package,
          ``national_versions.ensure_versions_index``, built once under ``paths.home``; or the corpus
          ``legalrag corpus update`` swapped in), read as of ``as_of`` (None: today; ``retrieval.dated``);
          ``snapshot=True``: the 2023-06-05 snapshot the benchmarks' gold ids refer to (``legalrag.national``,
          or ``$LEGALRAG_NATIONAL_INDEX``); the sample's demo index in an install without that data;
        - an index whose documents carry versions is read as of ``as_of`` too (an index without is as it is);
        - ``laws=[...]`` (e.g. ``[national.CRIMINAL_LAW]``, the statute set of the judgment and citation models):
          an index of those laws of the shipped data, with BM25 and the shipped judge-e5 dense component; None in
          an install without that data;
        - ``demo=True``: the statute sample's demo index, kept under ``paths.home``.

        A command that must not fall back to the national law passes ``self.index_path(path)``."""
        if demo:
            from legalrag.demo import demo_index

            return demo_index(self.settings.home / "demo-index", progress=progress)
        if laws is not None:
            return self._law_index(list(laws), threads=threads, progress=progress)
        from legalrag.retrieval.dated import dated

        if path is None and self.settings.index is None:
            if snapshot:
                return self._national_index(threads=threads, progress=progress)
            return dated(self._versions_index(threads=threads, progress=progress), as_of)
        from legalrag.retrieval.index import open_index

        register_backends()
        return dated(open_index(self.index_path(path), self._encoders(threads)), as_of)

    def build_index(self, out: str | Path, documents, retrievers=("bm25",), *, threads: int | None = None,
                    **options: Any):
        """``retrieval.index.build_index`` with this root's encoders for the dense components."""
        from legalrag.retrieval.index import build_index

        register_backends()
        return build_index(out, documents, retrievers, make_encoder=self._encoders(threads), **options)

    def add_components(self, path: str | Path, retrievers, *, threads: int | None = None, **options: Any):
        """``retrieval.index.add_components`` with this root's encoders for the dense components."""
        from legalrag.retrieval.index import add_components

        register_backends()
        return add_components(path, retrievers, make_encoder=self._encoders(threads), **options)

    def read_corpus(self, path: str | Path, fields: Any = None, previous: str | Path | None = None,
                    progress: bool = False):
        """``retrieval.index.read_corpus`` with the ``documents.max_file_mb`` setting for folders of documents."""
        from legalrag.retrieval.index import read_corpus

        return read_corpus(path, fields, previous, progress, max_file_mb=self.settings.max_file_mb)

    def _encoders(self, threads: int | None):
        if self.encoder is not None:
            return lambda spec, **_: self.encoder
        return encoder_factory(threads, self.settings)

    def _national_index(self, *, threads: int | None, progress: bool):
        from legalrag.national import ensure_index, national_law

        law = national_law()
        if law is None:
            return self.index(demo=True, progress=progress)
        directory = os.environ.get("LEGALRAG_NATIONAL_INDEX") or (
            self.settings.home / "indexes" / f"{law.name}-{law.digest[:12]}")
        return ensure_index(directory, law, lambda: expand_components(["hybrid"], [law.encoder]),
                            encoder_factory(threads, self.settings), progress=progress, announce=_announce(progress))

    def _versions_index(self, *, threads: int | None, progress: bool):
        """The corpus ``corpus update`` swapped in, else the shipped versions' index, else the snapshot's."""
        from legalrag.national import national_law
        from legalrag.national_versions import current_corpus, ensure_versions_index, shipped_versions
        from legalrag.retrieval.index import open_index

        current = current_corpus(self.settings.home)
        if current is not None and (current / "index").is_dir():
            register_backends()
            return open_index(current / "index", self._encoders(threads))
        law = national_law()
        if not shipped_versions(law):
            return self._national_index(threads=threads, progress=progress)
        base = os.environ.get("LEGALRAG_NATIONAL_INDEX")  # the snapshot's index; the versions' goes beside it
        home = Path(base).parent if base else self.settings.home / "indexes"
        directory = home / f"{law.name}-versions-{law.digest[:12]}"
        return ensure_versions_index(directory, law, lambda: expand_components(["hybrid"], [law.encoder]),
                                     encoder_factory(threads, self.settings), progress=progress,
                                     announce=_announce(progress))

    def _law_index(self, laws: list[str], *, threads: int | None, progress: bool):
        import hashlib

        from legalrag.national import ensure_law_index, national_law

        if not laws:
            raise InputError("laws=[] names no law; pass the laws' titles, e.g. national.CRIMINAL_LAW", field="laws")
        law = national_law()
        if law is None:
            return None
        base = os.environ.get("LEGALRAG_NATIONAL_INDEX")
        home = Path(base).parent if base else self.settings.home / "indexes"
        tag = hashlib.sha256("|".join(sorted(laws)).encode()).hexdigest()[:8]
        return ensure_law_index(home / f"{law.name}-{law.digest[:12]}-{tag}", law, laws,
                                lambda: expand_components(["bm25", "dense"], ["judge-e5"]),
                                encoder_factory(threads, self.settings), article_ids=len(laws) == 1,
                                progress=progress, announce=_announce(progress))

    # models: one builder per kind, each with this root's settings and the ready objects handed in

    def make_policy_llm(self, policy: str | Path, model: str | None = None, *, cache: bool | str | Path = True,
                        threads: int | None = None) -> LLM:
        """The embedded model with a trained policy's adapter (:func:`~legalrag.wiring.llms.make_policy_llm`)."""
        return make_policy_llm(policy, model, cache=cache, threads=threads, settings=self.settings)

    def make_encoder(self, spec: str | None = None, **options: Any):
        """``Root(encoder=...)``'s encoder, else :func:`~legalrag.wiring.encoders.make_encoder` of ``spec``
        (default: the ``encoder.name`` setting)."""
        if self.encoder is not None:
            return self.encoder
        return make_encoder(spec, settings=self.settings, **options)

    def make_reranker(self, name: str, index: Any = None, *, llm: LLM | None = None, **options: Any):
        """:func:`~legalrag.wiring.rerankers.make_reranker`; an LLM reranker without ``llm`` gets
        :meth:`make_llm` of the ``model`` / ``endpoint`` / ``endpoint_model`` in ``options``."""
        if name in LLM_RERANKERS and llm is None:
            llm = self.make_llm(*(options.pop(k, None) for k in ("model", "endpoint", "endpoint_model")))
        return make_reranker(name, index, llm=llm, **options)

    def build_pipeline(self, index: Any, retriever: str | None = None, rerank: str | None = None, *,
                       rerank_depth: int = 50, llm: LLM | None = None, **rerank_options: Any):
        """The index's retriever followed by the reranker named ``rerank`` (none for ``None`` or ``"none"``),
        built by :meth:`make_reranker`."""
        from legalrag.retrieval.pipeline import build_pipeline

        reranker = None
        if rerank and rerank != "none":
            reranker = self.make_reranker(rerank, index, llm=llm, **rerank_options)
        return build_pipeline(index, retriever, reranker, rerank_depth=rerank_depth)

    def make_support_scorer(self, encoder: str | None = "stard-e5", *, threads: int | None = None,
                            progress: bool = False):
        """The citation support model (:func:`~legalrag.wiring.encoders.make_support_scorer`)."""
        return make_support_scorer(encoder, threads=threads, progress=progress, settings=self.settings)

    def make_sources(self, names, *, docs: str | os.PathLike | None = None, index: Any = None):
        """The named QA sources (:func:`~legalrag.wiring.sources.make_sources`); ``index`` is an opened index or
        a directory, opened with :meth:`index`."""
        if isinstance(index, (str, os.PathLike)):
            index = self.index(index)
        return make_sources(names, docs=docs, index=index, settings=self.settings)


def _announce(progress: bool):
    return (lambda m: print(m, file=sys.stderr)) if progress else None
