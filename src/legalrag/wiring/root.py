"""``Root``: what a command builds its collaborators with, holding the saved settings (and, in a test or an
embedding application, ready objects that replace what it would build)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.settings import Settings, load_settings
from legalrag.wiring.encoders import encoder_factory
from legalrag.wiring.indexes import expand_components, open_index, register_backends
from legalrag.wiring.llms import label_route, local_server_client, make_llm, served_model_id


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
            return label_route(llm, f"endpoint {endpoint or s.llm.endpoint}" if remote else "in-process")
        from legalrag.llm.local import ServerFirstLLM, probe

        wanted = model or s.llm.model
        if wanted:
            info = probe(s.llm.server.url)
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
        factory = encoder_factory(threads, self.settings)
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
                                encoder_factory(threads, self.settings), article_ids=len(laws) == 1, progress=progress,
                                announce=(lambda m: print(m, file=sys.stderr)) if progress else None)

    def open_index_or_demo(self, path: str | Path | None, *, progress: bool = False, threads: int | None = None):
        """``path`` (``--index``), else the ``index.path`` setting, else the default index (national law)."""
        if path is None and self.settings.index is None:
            return self.default_index(progress=progress, threads=threads)
        return self.open_index(path, threads=threads)
