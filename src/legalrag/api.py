"""legalrag from Python: ``legalrag.open()`` returns a :class:`Legalrag`, whose methods are the CLI's commands.

    import legalrag

    lr = legalrag.open()                      # the national-law index `legalrag ask` uses without --index
    lr = legalrag.open("idx/mine")            # or an index directory; profile="fast", config=PATH as on the CLI
    hits = lr.search("借款合同没有约定利息", k=3)       # list[types.Hit]                 (legalrag search)
    answer = lr.ask("公司不签书面劳动合同怎么办？")      # types.Answer, citations checked  (legalrag ask)
    report = lr.check(text)                   # citecheck.checker.CheckReport          (legalrag check)
    result = lr.cite(facts)                   # citepredict.pipeline.CiteResult        (legalrag cite)
    draft = lr.draft(facts)                   # judgment.reasoned.ReasonedDraft        (legalrag judgment draft)
    verdict = lr.predict(facts)               # judgment.temporal.DatedPrediction      (legalrag judgment predict)
    chat = lr.chat(); chat.ask("..."); chat.ask("...")   # a consultation keeping its turns (legalrag chat)

Each method calls the library function its command calls, with the command's defaults: values not given come
from the saved settings (``legalrag config show``), then the engine's defaults. Collaborators come from the
composition root, :class:`legalrag.wiring.Root`; ``open(llm=..., encoder=...)`` hands in ready ones as
``Root(llm=..., encoder=...)`` does (``legalrag.testing.ScriptedLLM`` / ``FakeEncoder`` in tests).

What the shape takes from elsewhere:

- simonw/llm: one call returns an object with methods (``llm.get_model(name)`` -> ``model.prompt(...)``;
  here ``legalrag.open(index)`` -> ``lr.ask(...)``), and a conversation is an object of its own that keeps the
  turns (``model.conversation()`` -> ``conversation.prompt(...)``; here ``lr.chat()`` -> ``chat.ask(...)``).
- haystack 2.x components: the constructor only stores and checks its arguments; the heavy things (the index,
  the model, the support encoder) load on first use, or all at once in :meth:`Legalrag.warm_up`.

``ask`` and ``chat`` take the path the commands take (:func:`legalrag.warm.route.choose_server`): a running
``legalrag serve`` of this build with the same model answers, and its reply comes back as the same frozen
:class:`~legalrag.types.Answer` (``serialize.answer_from_dict``); else, or when it refuses or stops, this
process answers, with the local model server of ``legalrag llm start`` when one is up, else the embedded model
(or the ``llm`` handed in). :attr:`Legalrag.answered_by` says which path answered the last question;
``local=True`` always answers here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legalrag.errors import InputError
from legalrag.types import Answer, Hit, Turn

if TYPE_CHECKING:
    from legalrag.answer.consultation import Consultation
    from legalrag.citecheck.checker import CheckReport
    from legalrag.citepredict.pipeline import CiteResult
    from legalrag.judgment.draft import DraftResult
    from legalrag.judgment.reasoned import ReasonedDraft
    from legalrag.judgment.temporal import DatedPrediction
    from legalrag.llm.base import LLM
    from legalrag.wiring import Root

PathLike = str | Path  # a directory or file, as a string or a Path
SUPPORT_MODELS = ("full", "lexical")  # `legalrag check -o support=...`: the shipped stard-e5 + lexical, or lexical only
SHIPPED_STRUCTURE = "judge-structure"  # the judgment model `legalrag judgment draft` uses without --model-dir

__all__ = ["Chat", "Legalrag", "open"]


def open(index: PathLike | None = None, *, profile: str | None = None, config: PathLike | None = None,
         llm: LLM | None = None, encoder: Any = None, model: str | None = None, endpoint: str | None = None,
         endpoint_model: str | None = None, threads: int | None = None, local: bool = False,
         progress: bool = False) -> Legalrag:
    """A :class:`Legalrag` over ``index`` (a directory from ``legalrag index build``; default: the ``index.path``
    setting, else the national-law index shipped with legalrag, built on first use).

    ``profile`` / ``config`` are the CLI's ``--profile`` / ``--config``; ``model``, ``endpoint`` and
    ``endpoint_model`` its ``--model`` / ``--endpoint`` / ``--endpoint-model``; ``llm`` and ``encoder`` replace
    the model and every dense component's encoder; ``threads`` is ``--threads``; ``local`` is ``ask --local``
    (answer with the model loaded here: no warm ``legalrag serve`` is asked, nor a local model server);
    ``progress`` shows the first build of a shipped index on stderr. Nothing heavy loads here; the settings are read, so that a bad profile or settings file is said now."""
    from legalrag.wiring import Root

    if config is not None and not Path(config).is_file():
        raise InputError(f"no settings file at {config}; pass an existing TOML file or leave config out",
                         field="config")
    root = Root(llm=llm, encoder=encoder, config=config, profile=profile)
    root.settings  # noqa: B018 (read now: an unknown profile or a broken file is an error here, not at first use)
    return Legalrag(index, root=root, model=model, endpoint=endpoint, endpoint_model=endpoint_model,
                    threads=threads, local=local, progress=progress)


class Legalrag:
    """The capabilities over one corpus: :meth:`search`, :meth:`ask`, :meth:`check`, :meth:`cite`, :meth:`draft`
    and :meth:`chat`. Build it with :func:`open`; the constructor only stores its arguments."""

    def __init__(self, index: PathLike | None = None, *, root: Root | None = None, model: str | None = None,
                 endpoint: str | None = None, endpoint_model: str | None = None, threads: int | None = None,
                 local: bool = False, progress: bool = False):
        if index is not None and not Path(index).is_dir():
            raise InputError(f"no index directory at {index}; build one with `legalrag index build --corpus FILE "
                             "--out DIR`, or leave index out for the national law", field="index")
        if threads is not None and threads < 1:
            raise InputError(f"threads must be at least 1, got {threads}", field="threads")
        if root is None:
            from legalrag.wiring import Root

            root = Root()
        self.root = root
        self.index_path = Path(index) if index is not None else None
        self.model, self.endpoint, self.endpoint_model = model, endpoint, endpoint_model
        self.threads, self.local, self.progress = threads, local, progress
        self._index: Any = None
        self._cite_index: Any = None
        self._answer_llm: LLM | None = None
        self._scorers: dict[str, Any] = {}
        self._library: list[Any] = []  # the law's versions once looked for (drafts and predictions, 刑法第十二条)
        self.answered_by = ""  # which path answered the last ask (or chat turn): a server's URL, or this process

    def __repr__(self) -> str:
        where = str(self.index_path) if self.index_path is not None else "the default index"
        return f"<Legalrag over {where}>"

    # -- what loads on first use --------------------------------------------------------------------------------

    @property
    def index(self) -> Any:
        """The opened index (``retrieval.index.Index``), opened on first use as ``ask``, ``search``, ``check``
        and ``chat`` open theirs."""
        if self._index is None:
            self._index = self.root.index(self.index_path, threads=self.threads, progress=self.progress)
        return self._index

    def answer_llm(self) -> LLM:
        """The model ``ask`` and ``chat`` answer with (``Root.make_answer_llm``), built once."""
        if self._answer_llm is None:
            self._answer_llm = self.root.make_answer_llm(self.model, self.endpoint, self.endpoint_model,
                                                         threads=self.threads, local=self.local)
        return self._answer_llm

    @property
    def library(self) -> Any:
        """The law's versions :meth:`draft` and :meth:`predict` read articles in (None: none installed), loaded once."""
        if not self._library:
            from legalrag.wiring.judgment import installed_versions

            self._library.append(installed_versions())
        return self._library[0]

    def warm_up(self) -> Legalrag:
        """Open the index, its citation resolver and the answer model now rather than on the first question."""
        from legalrag.answer.per_index import resolver_for

        resolver_for(self.index)
        self.answer_llm()
        return self

    # -- the capabilities -----------------------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, *, retriever: str | None = None, rerank: str | None = None,
               filter_law: Sequence[str] = ()) -> list[Hit]:
        """The top ``k`` articles for ``query``, best first (``legalrag search``): the index's answering component
        (or ``retriever``), then the reranker named ``rerank`` (``learned``, ``llm-listwise``...), only articles of
        the laws in ``filter_law`` when given."""
        from legalrag.retrieval.pipeline import law_filter
        from legalrag.wiring import LLM_RERANKERS

        _text(query, "query")
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}", field="k")
        idx = self.index
        llm = self.root.make_llm(self.model, self.endpoint, self.endpoint_model) if rerank in LLM_RERANKERS else None
        pipe = self.root.build_pipeline(idx, retriever, rerank, llm=llm)
        flt = law_filter(idx, list(filter_law)) if filter_law else None
        return list(pipe.search(query, k=k, filter=flt))

    def ask(self, question: str, *, k: int | None = None, retriever: str | None = None, lang: str | None = None,
            style: str | None = None, max_tokens: int | None = None, evidence_tokens: int | None = None,
            on_text: Callable[[str], None] | None = None) -> Answer:
        """An answer with every citation checked against the index (``legalrag ask``). ``k``, ``style``
        (guided or brief), ``max_tokens`` and ``evidence_tokens`` (0: whole articles) default to the ``answer.*``
        settings, else the engine's; ``lang`` to the question's; ``on_text`` receives the answer as it is
        generated (again from the start if a warm server stops in the middle and this process answers)."""
        from legalrag.answer.question import answer_question
        from legalrag.warm.route import ASK_ROUTE, ask_request

        _text(question, "question")
        served = self._through_server(ASK_ROUTE, evidence_tokens, on_text, lambda index: ask_request(
            question, index=index, k=k, retriever=retriever, max_tokens=max_tokens, lang=lang, style=style,
            evidence_tokens=evidence_tokens))
        if served is not None:
            return served[0]
        s = self.root.answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
        return answer_question(question, self.index, self.answer_llm(), k=s.k, retriever=retriever, lang=lang,
                               max_tokens=s.max_tokens, style=s.style, evidence_tokens=s.evidence_tokens,
                               on_text=on_text, support=self.root.make_support_scorer(threads=self.threads),
                               versions=lambda: self.library)

    def _through_server(self, route: str, evidence_tokens: int | None, on_text: Callable[[str], None] | None,
                        body: Callable[[str | None], dict[str, Any]]) -> tuple[Answer, dict[str, Any]] | None:
        """The answer of a warm ``legalrag serve`` when :func:`~legalrag.warm.route.choose_server` picks one and
        it answers, with the reply's JSON; else None (this process answers), with :attr:`answered_by` saying why."""
        from legalrag.serialize import answer_from_dict
        from legalrag.warm.client import ServerError, ServerGone, stream
        from legalrag.warm.route import choose_server, index_arg

        settings = self.root.settings
        index = index_arg(self.index_path, settings)
        server, why = choose_server(settings, local=self.local, model=self.model, endpoint=self.endpoint,
                                    evidence_tokens=evidence_tokens, index=index)
        if server is not None:
            def event(name: str, data: Any) -> None:
                if name == "token" and on_text is not None and isinstance(data, dict):
                    on_text(str(data.get("text", "")))

            try:
                payload = stream(server.url, route, body(index), event)
            except (ServerError, ServerGone) as exc:
                why = str(exc)
            else:
                self.answered_by = f"the legalrag server at {server.url} ({server.llm})"
                return answer_from_dict(payload), payload
        self.answered_by = f"this process ({why})"
        return None

    def chat(self, *, k: int | None = None, retriever: str | None = None, processor: str | None = None,
             style: str | None = None, max_tokens: int | None = None, evidence_tokens: int | None = None) -> Chat:
        """A consultation (``legalrag chat``): :meth:`Chat.ask` answers each message with the earlier turns as
        context. ``processor`` is how the dialogue becomes a query (``chat --processor``; default: the one that
        measured best); the other options are :meth:`ask`'s."""
        from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS

        name = DEFAULT_PROCESSOR if processor is None else str(getattr(processor, "value", processor))
        if name not in PROCESSORS:
            raise InputError(f"unknown processor {name!r}; choose one of {', '.join(PROCESSORS)}", field="processor")
        settings = self.root.answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
        return Chat(self, processor=name, retriever=retriever, settings=settings,
                    request={"k": k, "max_tokens": max_tokens, "style": style, "evidence_tokens": evidence_tokens})

    def check(self, text: str, *, support: str = "full") -> CheckReport:
        """Every citation of ``text`` resolved against the index and marked supported, exists, not found,
        repealed or no corpus (``legalrag check``); ``support`` is ``full`` (the shipped stard-e5's cosine and the
        lexical scores) or ``lexical`` (no encoder)."""
        from legalrag.answer.per_index import resolver_for
        from legalrag.citecheck.checker import check_text
        from legalrag.wiring import make_support_scorer

        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}", field="text")
        if support not in SUPPORT_MODELS:
            raise InputError(f"unknown support model {support!r}; choose full or lexical", field="support")
        if support not in self._scorers:
            self._scorers[support] = make_support_scorer("stard-e5" if support == "full" else None,
                                                         settings=self.root.settings)
        return check_text(text, resolver_for(self.index), self._scorers[support])

    def cite(self, facts: str, *, train_citations: PathLike | None = None, model_dir: PathLike | None = None,
             rules: PathLike | None = None, case_memory: PathLike | None = None, retriever: str | None = None,
             core_k: int | None = None, threshold: float | None = None, prior_weight: float | None = None,
             analyse: bool = False, rerank: bool = False, verify: bool = False, verify_batch: bool | None = None,
             case_first: bool | None = None) -> CiteResult:
        """The provisions a court would cite for ``facts``, each with its provenance (``legalrag cite``). Without
        an index given to :func:`open` (and no saved one) it predicts over the criminal law of the shipped
        national-law data with the shipped judge-cite model, as the command does. ``analyse``, ``rerank`` and
        ``verify`` switch on the LLM stages; ``core_k``, ``threshold``, ``prior_weight``, ``verify_batch`` and
        ``case_first`` override the citation model's settings (``cite -o KEY=VALUE``; default: the model's)."""
        from legalrag.citepredict.service import build_predictor

        _text(facts, "facts")
        if core_k is not None and core_k < 1:
            raise InputError(f"core_k must be at least 1, got {core_k}", field="core_k")
        if prior_weight is not None and prior_weight < 0:
            raise InputError(f"prior_weight must be 0 or more, got {prior_weight}", field="prior_weight")
        idx = self._index_for_cite()
        llm = self.root.make_llm(self.model, self.endpoint, self.endpoint_model) if (analyse or rerank or verify) \
            else None
        reranker = self.root.make_reranker("llm-pointwise", idx, llm=llm) if rerank else None
        memory = None
        if case_memory is not None:
            from legalrag.citepredict.cases import CaseMemory
            from legalrag.citepredict.data import load_cases

            memory = CaseMemory.build(load_cases(Path(case_memory)))
        predictor = build_predictor(idx, train_citations=train_citations, model_dir=model_dir, rules_path=rules,
                                    retriever=retriever, llm=llm, reranker=reranker, cases=memory,
                                    overrides={"core_k": core_k, "threshold": threshold, "prior_weight": prior_weight,
                                               "verify_batch": verify_batch, "case_first": case_first,
                                               "analysis": analyse or None, "verify": verify or None})
        return predictor.predict(facts)

    def draft(self, facts: str, *, model_dir: PathLike | None = None, law_corpus: PathLike | None = None,
              case_corpus: PathLike | None = None, use_llm: bool = True, free: bool = False, max_tokens: int = 500,
              check_charges: bool = False, as_of: str | None = None) -> ReasonedDraft | DraftResult:
        """A criminal judgment drafted from ``facts`` (``legalrag judgment draft``): the structure model (``model_dir``,
        else the judgment.model setting, else the shipped one) decides charges, articles, term and fine and the LLM
        writes the reasoning (``use_llm=False``: a template), a ``ReasonedDraft``; ``free=True``, or no structure
        model, lets the LLM draft it all, a ``DraftResult``. Statutes: ``law_corpus`` (JSONL), else the setting, else
        the shipped criminal law. Articles are read as in force at the acts (``as_of``, else the facts' dates)."""
        from legalrag.wiring.judgment import as_of_day, draft_judgment, structure_dir

        _text(facts, "facts")
        as_of = as_of_day(as_of)  # before the versions load
        if free and model_dir is not None:
            raise InputError("free drafts without a structure model; leave out model_dir (or free)", field="free")
        structure = None if free else structure_dir(self.root, model_dir, SHIPPED_STRUCTURE)
        if structure is None and not use_llm:
            raise InputError("use_llm=False needs a structure model (the one that decides the judgment): pass "
                             "model_dir" + (" or leave out free" if free else ""), field="use_llm")
        if check_charges and (structure is None or not use_llm):
            raise InputError("check_charges needs a structure model and an LLM (use_llm=True, free=False)",
                             field="check_charges")
        llm = self.root.make_llm(self.model, self.endpoint, self.endpoint_model, threads=self.threads) if use_llm else None
        return draft_judgment(self.root, facts, llm, structure, law_corpus=self.root.law_corpus(law_corpus),
                              case_corpus=case_corpus, max_tokens=max_tokens, check_charges=check_charges,
                              threads=self.threads, progress=self.progress, library=self.library, as_of=as_of)

    def predict(self, facts: str, *, model_dir: PathLike | None = None, law_corpus: PathLike | None = None,
                as_of: str | None = None) -> DatedPrediction:
        """The structure :meth:`draft` decides, with each article's version applied (``judgment predict --facts``)."""
        from legalrag.wiring.judgment import as_of_day, judgment_predictor, predict_judgment, structure_dir

        _text(facts, "facts")
        as_of = as_of_day(as_of)
        if (structure := structure_dir(self.root, model_dir, SHIPPED_STRUCTURE)) is None:
            raise InputError("no structure model ships with this install: pass model_dir", field="model_dir")
        predictor = judgment_predictor(self.root, structure, self.root.law_corpus(law_corpus), threads=self.threads,
                                       progress=self.progress)
        return predict_judgment(predictor, facts, self.library, as_of=as_of)

    # -- the corpora and models of cite and draft ------------------------------------------------------------------

    def _index_for_cite(self) -> Any:
        if self._cite_index is None:
            if self.index_path is None and self.root.settings.index is None:
                from legalrag.national import CRIMINAL_LAW

                self._cite_index = self.root.index(laws=[CRIMINAL_LAW], threads=self.threads, progress=self.progress)
            if self._cite_index is None:
                self._cite_index = self.index
        return self._cite_index


class Chat:
    """A consultation over a :class:`Legalrag`'s index (``lr.chat()``): each :meth:`ask` is answered with the
    earlier turns as context, and the turns are kept (:attr:`turns`; :meth:`reset` starts over). The answer
    engine and the model are built on the first question."""

    def __init__(self, lr: Legalrag, *, processor: str, retriever: str | None, settings: Any,
                 request: dict[str, Any] | None = None):
        self.lr, self.processor, self.retriever, self.settings = lr, processor, retriever, settings
        self.request = dict(request or {})  # the options given to ``lr.chat()``, sent to a warm server as given
        self._turns: list[Turn] = []
        self._consultation: Consultation | None = None
        self._server_trace: dict[str, Any] | None = None  # the last turn's trace when a warm server answered it

    def __repr__(self) -> str:
        return f"<Chat of {len(self._turns) // 2} turn(s), processor {self.processor}>"

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The dialogue so far: each question (``user``) and its answer's text (``assistant``)."""
        return tuple(self._turns)

    @property
    def last_trace(self) -> dict[str, Any]:
        """What the last turn searched, and the articles it carried from earlier turns."""
        if self._server_trace is not None:
            return dict(self._server_trace)
        return dict(self._consultation.last_trace) if self._consultation is not None else {}

    def reset(self) -> None:
        """Start a new consultation (``/reset`` in ``legalrag chat``)."""
        self._turns.clear()

    def ask(self, message: str, *, on_text: Callable[[str], None] | None = None) -> Answer:
        """The answer to ``message`` in the context of the earlier turns, its citations checked: by a warm
        ``legalrag serve`` when one answers (the dialogue is sent with each message), else in this process."""
        from legalrag.warm.route import CONSULT_ROUTE, consult_request

        _text(message, "message")
        history = [(t.role, t.content) for t in self._turns]
        served = self.lr._through_server(CONSULT_ROUTE, self.request.get("evidence_tokens"), on_text,
                                         lambda index: consult_request(message, history, processor=self.processor,
                                                                    index=index, retriever=self.retriever,
                                                                    **self.request))
        if served is not None:
            answer, payload = served
            self._server_trace = {"searched": list(payload.get("searched") or []),
                                  "carried": list(payload.get("carried") or []),
                                  **dict(payload.get("follow_up") or {})}
            self._turns += [Turn("user", " ".join(message.split())), Turn("assistant", answer.text)]
            return answer
        self._server_trace = None
        if self._consultation is None:
            from legalrag.answer.consultation import Consultation
            from legalrag.answer.engine import engine_for

            engine = engine_for(self.lr.answer_llm(), self.lr.index, retriever=self.retriever, settings=self.settings,
                                support=self.lr.root.make_support_scorer(threads=self.lr.threads),
                                versions=lambda: self.lr.library)
            self._consultation = Consultation(engine=engine, processor=self.processor)
        self._consultation.turns = list(self._turns)
        answer = self._consultation.ask(message, on_text=on_text)
        self._turns += [Turn("user", " ".join(message.split())), Turn("assistant", answer.text)]
        return answer


def _text(value: Any, field: str) -> None:
    if not isinstance(value, str):
        raise InputError(f"{field} must be a string, got {type(value).__name__}", field=field)
