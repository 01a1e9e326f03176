"""``-o KEY=VALUE``: the backend and tuning knobs of a command, as one repeatable option read into a typed model.

A knob that matters only for one backend (Milvus, Ray) or that few runs change (BM25's k1, a judge's retries)
is not a flag of its own: the command takes ``-o key=value`` (repeatable) and validates the pairs with a
pydantic model (``extra="forbid"``), so a misspelt key is an error that names the valid ones. The command's
``--help`` lists its keys with their defaults (:func:`options_help`).
"""

from __future__ import annotations

import enum
from typing import List, Literal, Optional

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from legalrag.cli._scale import Backend
from legalrag.evaluation.lexrag.data import DataFormat
from legalrag.retrieval.dense import IndexType
from legalrag.retrieval.fusion import Fusion


class Options(BaseModel):
    """Base of the ``-o`` models: frozen, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def options_help(cls: type[Options], lead: str = "Tuning, KEY=VALUE, repeatable") -> str:
    """``lead``, then every key with its description and default, as ``--help`` shows them."""
    parts = []
    for name, f in cls.model_fields.items():
        default = f.default.value if isinstance(f.default, enum.Enum) else f.default
        shown = "" if default is None else f" (default {str(default).lower() if isinstance(default, bool) else default})"
        parts.append(f"{name}: {f.description}{shown}")
    return f"{lead}. Keys: " + "; ".join(parts) + "."


def option_list(cls: type[Options], lead: str = "Tuning, KEY=VALUE, repeatable"):
    """The ``-o/--option`` parameter of a command whose keys are ``cls``'s fields."""
    return typer.Option([], "-o", "--option", metavar="KEY=VALUE", help=options_help(cls, lead))


def parse_options(cls: type[Options], pairs: Optional[List[str]]) -> Options:
    """``["key=value", ...]`` -> ``cls``; a malformed pair, an unknown key or a bad value is a usage error (exit
    code 2, as for any bad option value) naming the key and the valid keys."""
    keys = ", ".join(cls.model_fields)
    values: dict[str, str] = {}
    for pair in pairs or ():
        key, eq, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise typer.BadParameter(f"takes KEY=VALUE, got {pair!r}; valid keys: {keys}", param_hint="'-o'")
        values[key] = value.strip()
    try:
        return cls.model_validate(values)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e["loc"])
            if e["type"] == "extra_forbidden":
                problems.append(f"unknown key {where!r}")
            elif where:
                problems.append(f"{where}={values.get(where, '')!r}: {e['msg']}")
            else:
                problems.append(e["msg"].removeprefix("Value error, "))
        raise typer.BadParameter(f"{'; '.join(problems)} (valid keys: {keys})", param_hint="'-o'") from None


def _names(value):
    """``a,b`` -> ``("a", "b")`` (a ``-o`` key that takes several names)."""
    if isinstance(value, str):
        return tuple(x.strip() for x in value.split(",") if x.strip())
    return value


MILVUS_ONLY = ("uri", "nlist", "nprobe", "ef")


class BuildOptions(Options):
    """``index build -o``: the corpus's field mapping, the backend (Milvus, Ray) and the components' tuning."""

    fields: Optional[str] = Field(None, description="field mapping of a JSONL corpus, e.g. "
                                  "id=text_id,text=text,name=name (default: the standard fields)")
    backend: Backend = Field(Backend.LOCAL, description="local (FAISS, bm25s) or milvus (a Milvus engine)")
    uri: Optional[str] = Field(None, description="Milvus URI: http://HOST:19530 or a Milvus Lite FILE.db (default: "
                               "a Milvus Lite database inside the index directory)")
    collection: str = Field("legalrag", description="Milvus alias the index serves from")
    nlist: Optional[int] = Field(None, ge=1, description="Milvus IVF (index_type=ivf): clusters (default 128)")
    nprobe: Optional[int] = Field(None, ge=1, description="Milvus IVF: clusters every search visits (recorded; "
                                  "`search -o nprobe=N` overrides)")
    ef: Optional[int] = Field(None, ge=1, description="Milvus HNSW (index_type=hnsw): candidate list of every "
                              "search (recorded; `search -o ef=N` overrides)")
    workers: Optional[int] = Field(None, ge=1, description="encode on N local Ray workers first")
    ray_address: Optional[str] = Field(None, description="encode on this Ray cluster first")
    index_type: IndexType = Field(IndexType.FLAT, description="dense index: flat (exact), hnsw or ivf")
    fusion: Fusion = Field(Fusion.RRF, description="hybrid fusion: rrf (reciprocal rank) or wsf (min-max scores)")
    k1: float = Field(1.2, description="BM25 k1")
    b: float = Field(0.75, description="BM25 b")
    mu: float = Field(200.0, description="QLD Dirichlet prior mu")
    chunk_docs: int = Field(10_000, ge=1, description="documents tokenised at a time by the lexical components "
                            "(bounds the build's memory; postings spill to disk)")

    @model_validator(mode="after")
    def _milvus_keys_need_milvus(self):
        given = [k for k in MILVUS_ONLY if getattr(self, k) is not None]
        if given and self.backend is not Backend.MILVUS:
            raise ValueError(f"{', '.join(given)} tune a Milvus index; add -o backend=milvus")
        return self


class SearchOptions(Options):
    """``search -o``: Milvus search parameters and the agents' knobs."""

    nprobe: Optional[int] = Field(None, ge=1, description="Milvus IVF: clusters this search visits (default: the "
                                  "one recorded at build)")
    ef: Optional[int] = Field(None, ge=1, description="Milvus HNSW: candidate list of this search (default: the one "
                              "recorded at build)")
    fused_planner: bool = Field(False, description="with --agents: one LLM call per round (the planner writes the "
                                "chosen agent's queries itself) instead of a decision call plus the agent's rewrite")
    trace: Optional[str] = Field(None, description="with --agents: write the trajectory as JSONL to this file")
    policy: Optional[str] = Field(None, description="with --agents: a trained policy directory (`legalrag train "
                                  "policy`), run on the embedded model with its adapter")


QUERY_FIELDS = ("field mapping of the query file, e.g. query_id=text_id,query=text,gold_ids=la (default: the "
                "standard fields)")


class EvalRetrievalOptions(Options):
    """``eval retrieval -o``: the cut-off, the query fields, Ray workers and the agents' knobs."""

    k: int = Field(10, ge=1, description="cut-off K for the metrics")
    query_fields: Optional[str] = Field(None, description=QUERY_FIELDS)
    trace: Optional[str] = Field(None, description="with --agents: write the trajectory as JSONL to this file")
    policy: Optional[str] = Field(None, description="with --agents: a trained policy directory")
    workers: Optional[int] = Field(None, ge=1, description="search on N local Ray workers")
    ray_address: Optional[str] = Field(None, description="search on this Ray cluster")
    fused_planner: bool = Field(False, description="with --agents: one LLM call per round (the planner writes the "
                                "chosen agent's queries itself)")


class CompareOptions(Options):
    """``eval compare -o``: the curves' depth and the randomization test's size."""

    k: int = Field(10, ge=1, description="cut-off K for the metrics")
    query_fields: Optional[str] = Field(None, description=QUERY_FIELDS)
    depth: int = Field(100, ge=1, description="largest K of the Recall@K curves")
    trials: int = Field(10_000, ge=100, description="permutations of the randomization test")


class FuseOptions(Options):
    """``eval fuse -o``: reciprocal-rank fusion's constant, the runs' weights and the depth kept."""

    rrf_k: int = Field(60, ge=0, description="RRF constant: score = sum w / (k + rank)")
    weights: Optional[tuple[float, ...]] = Field(None, description="comma-separated weights, one per run, in order "
                                                 "(default: 1 each)")
    depth: int = Field(100, ge=1, description="fused documents kept per query")

    @field_validator("weights", mode="before")
    @classmethod
    def _comma_separated(cls, value):
        if isinstance(value, str):
            try:
                return tuple(float(x) for x in value.split(","))
            except ValueError:
                raise ValueError("must be numbers separated by commas, e.g. weights=1,0.5") from None
        return value


class RolloutOptions(Options):
    """``agents rollouts -o``: the rollouts, the queries read, the policy, the planner loop's bounds and seeds."""

    n: int = Field(8, ge=1, description="rollouts per query (seeds 0, 1000, 2000, ...)")
    limit: int = Field(0, ge=0, description="only the first N queries (after skip); 0 = all")
    skip: int = Field(0, ge=0, description="skip the first N queries of the file")
    retriever: Optional[str] = Field(None, description="index component (default: the index's strongest)")
    policy: Optional[str] = Field(None, description="a trained policy directory (its LoRA adapter)")
    max_rounds: int = Field(4, ge=1, le=10, description="most planner rounds per rollout")
    fused_planner: bool = Field(False, description="one LLM call per round: the planner writes the agent's queries")
    seed: int = Field(0, description="base seed; rollout r uses seed + 1000 r")


class GenerationOptions(Options):
    """``eval consultation-generate -o``: the settings answered, the answer engine's knobs (default: the engine's,
    as `ask` and `chat`)."""

    _setting = field_validator("setting", mode="before")(classmethod(lambda cls, v: _names(v)))

    k: Optional[int] = Field(None, ge=1, description="articles retrieved in the retriever setting (default: the "
                             "answer engine's)")
    max_tokens: Optional[int] = Field(None, ge=16, description="longest answer, in tokens (default: the engine's)")
    history_chars: Optional[int] = Field(None, ge=100, description="dialogue history kept in the prompt, oldest "
                                         "turns dropped first (default: the engine's)")
    article_chars: Optional[int] = Field(None, ge=50, description="whole articles cut at this many characters "
                                         "instead of the engine's evidence selection (LexRAG's setup used 400)")
    evidence_tokens: Optional[int] = Field(None, ge=1, le=8192, description="evidence budget: the articles cut to "
                                           "the clauses that best match the query within this many tokens "
                                           "(default: the engine's)")
    style: Optional[str] = Field(None, pattern="^(guided|brief)$", description="answer style: guided (the default "
                                 "of `ask` and `chat`) or brief")
    tokenizer: Literal["word", "char"] = Field("word", description="ROUGE/BLEU/METEOR tokens: word (jieba) or char")
    bertscore: bool = Field(False, description="also the BERTScore-style F1 (e5-small character vectors, as for "
                            "JuDGE)")
    turns: int = Field(5, ge=0, description="turns each dialogue must have (0: any)")
    setting: tuple[str, ...] = Field(("zero_shot", "retriever", "reference"), description="the settings answered, "
                                     "comma-separated: zero_shot, retriever, reference")
    format: DataFormat = Field(DataFormat.AUTO, description="what --data holds: auto (read from the records), "
                               "dialogues (LexRAG dataset.json) or turns (LexRAG turn_N.json items)")


class ScoreOptions(Options):
    """``eval consultation-score -o``: how the saved run is scored again."""

    tokenizer: Literal["word", "char"] = Field("word", description="ROUGE/BLEU/METEOR tokens: word (jieba) or char")
    bertscore: bool = Field(True, description="the BERTScore-style F1 (e5-small character vectors, as for JuDGE)")


class QaOptions(Options):
    """``qa -o``: the multi mode's rounds and the trajectory file."""

    max_rounds: int = Field(3, ge=1, le=10, description="most search rounds in multi mode")
    trace: Optional[str] = Field(None, description="write the step-by-step trajectory (JSONL) to this file")


class ConversationOptions(Options):
    """``eval conversation -o``: the cut-offs and the dialogues read."""

    ks: str = Field("1,3,5,10", description="cut-offs, comma-separated")
    turns: int = Field(5, ge=0, description="turns each dialogue must have (0: any)")
    format: DataFormat = Field(DataFormat.AUTO, description="what --data holds: auto (read from the records), "
                               "dialogues (LexRAG dataset.json) or turns (LexRAG turn_N.json items)")


class AnswersOptions(Options):
    """``eval answers -o``: the answer engine's retrieval depth and evidence budget (default: as `ask`), and a
    summary file."""

    k: Optional[int] = Field(None, ge=1, description="articles retrieved and given to the model (default: the "
                             "answer.k setting, else the engine's default)")
    evidence_tokens: Optional[int] = Field(None, ge=0, description="token budget for the articles in the prompt "
                                           "(default: the answer.evidence_tokens setting, else the engine's "
                                           "default; 0 gives whole articles)")
    summary: Optional[str] = Field(None, description="also write the summary JSON to this file")
    reference: bool = Field(False, description="give the model the gold articles instead of retrieving (the "
                            "reference setting)")
    llm_cache: bool = Field(True, description="read and write the LLM call cache")


class EvalJudgmentOptions(Options):
    """``eval judgment -o``: the text metrics and what is scored."""

    text_metrics: bool = Field(True, description="also METEOR and BERTScore-style F1 (needs the metrics, zh and "
                               "dense extras; slower)")
    per_document: bool = Field(False, description="with --json, include per-document scores")
    include_missing: bool = Field(False, description="score gold cases that have no prediction as empty judgments "
                                  "(default: score only the cases predicted, and say how many had none)")


class McqOptions(Options):
    """``eval mcq -o``: the modes compared, the sources and rounds of the simple/multi modes."""

    modes: str = Field("zero-shot,cot,simple,multi", description="modes to compare, comma-separated")

    sources: str = Field("local", description="sources for the simple/multi modes (comma-separated: local, web, "
                         "courtlistener)")
    max_rounds: int = Field(2, ge=1, le=10, description="most search rounds in multi mode")


class JudgeOptions(Options):
    """``eval consultation-judge -o``: the judge's sampling and retries."""

    seed: Optional[int] = Field(None, description="sampling seed (use with temperature > 0)")
    temperature: float = Field(0.0, ge=0.0, description="judge sampling temperature")
    retries: int = Field(2, ge=0, description="re-asks after a reply that does not validate")
    max_tokens: int = Field(400, ge=32, description="longest judge reply, in tokens")
    self_check: bool = Field(False, description="also judge each reference against itself")
    against: Optional[str] = Field(None, description="another judge run on the same generations: report agreement "
                                   "with it")


class CiteOptions(Options):
    """``cite -o`` / ``eval cite -o``: overrides of the citation model's settings (default: the model's)."""

    core_k: Optional[int] = Field(None, ge=1, description="top candidates kept as core predictions (in "
                                  "`eval cite -o dev=N`: calibrated on the development cases)")
    threshold: Optional[float] = Field(None, description="selection threshold for additions")
    prior_weight: Optional[float] = Field(None, ge=0.0, description="weight of the training-citation prior in "
                                          "retrieval")
    verify_batch: Optional[bool] = Field(None, description="true verifies every addition in one call, false "
                                         "each in its own call")
    case_first: Optional[bool] = Field(None, description="open every LLM call with the facts so the runtime reads "
                                       "them once per case (on unless the model says otherwise)")

    def overrides(self, **switches) -> dict:
        return {**self.model_dump(include=set(CiteOptions.model_fields)), **switches}


class CiteCommandOptions(CiteOptions):
    """``cite -o``: the model's overrides, a replaced rules file or case memory, and the LLM stages."""

    train_citations: Optional[str] = Field(None, description="training citation sets (qrels or JSONL) to learn the "
                                           "rules and co-citation from instead of a model folder")
    rules: Optional[str] = Field(None, description="a (user-edited) rules file replacing the learned one")
    case_memory: Optional[str] = Field(None, description="a JSONL file of labelled cases (facts + cited provisions) "
                                       "whose nearest neighbours vote; replaces the model's case memory")
    analyse: bool = Field(False, description="LLM query analysis (uses --model)")
    llm_rerank: bool = Field(False, description="pointwise LLM rerank of the top candidates (uses --model)")
    verify: bool = Field(False, description="LLM verification of each addition (uses --model)")


class EvalCiteOptions(CiteCommandOptions):
    """``eval cite -o``: the model's overrides, calibration on development cases, and the LLM stages."""

    dev: int = Field(0, ge=0, description="calibrate on the first N cases by sorted id; evaluate the rest")
    case_memory: Optional[str] = Field(None, description="'dev' (vote with the development cases, each left out of "
                                       "its own vote) or a JSONL file of labelled cases")


class ServeOptions(Options):
    """``serve -o``: the call cache, the MCP tools, CORS, the agents' policy and the server's limits for this run; a
    limit not given is its ``serve.*`` setting (``legalrag config set serve.max_k 20``), else its default."""

    _origins = field_validator("cors_origin", mode="before")(classmethod(lambda cls, v: _names(v)))

    llm_cache: bool = Field(True, description="read and write the LLM call cache (false: every prompt goes to the "
                            "model)")
    mcp: bool = Field(True, description="serve the MCP tools at /mcp (streamable HTTP; needs the mcp extra), with the "
                      "same API key and rate limit")
    cors_origin: Optional[tuple[str, ...]] = Field(None, description="origins allowed to call from a browser, "
                                                   "comma-separated (CORS is off without it)")
    policy: Optional[str] = Field(None, description="a trained agents' policy directory (`legalrag train policy`): "
                                  "/agents/search runs the embedded model with its adapter")
    max_k: Optional[int] = Field(None, ge=1, le=1000, description="largest k a request may ask for (setting "
                                 "serve.max_k, 50)")
    rate_limit: Optional[int] = Field(None, ge=0, description="requests per minute per key, 0: no limit (setting "
                                      "serve.rate_limit, 120)")
    max_waiting: Optional[int] = Field(None, ge=0, description="generations that may queue for the model (setting "
                                       "serve.max_waiting, 16)")
    max_indexes: Optional[int] = Field(None, ge=0, le=16, description="other indexes a request (`ask --index DIR`) "
                                       "may have the server open and keep, least recently used dropped first "
                                       "(setting serve.max_indexes, else 2 on loopback, 0 on another address)")
    evidence_tokens: Optional[int] = Field(None, ge=0, le=8192, description="token budget for the retrieved "
                                           "articles in /ask and /consult prompts, each cut to the clauses matching "
                                           "the question (0: whole articles), a request may ask for less (setting "
                                           "answer.evidence_tokens, else the engine's default)")


class LLMServeOptions(Options):
    """``llm serve -o``: the model's context window and the clients' key. Threads: the runtime.threads setting."""

    n_ctx: int = Field(4096, ge=64, description="context window, in tokens")
    api_key_env: Optional[str] = Field(None, description="require 'Authorization: Bearer $VAR' from clients (the "
                                       "name of the environment variable holding the key)")


class LLMStartOptions(Options):
    """``llm start -o``: the model's context window and how long to wait for it. Threads: the runtime.threads
    setting."""

    n_ctx: int = Field(4096, ge=64, description="context window, in tokens")
    timeout: float = Field(300.0, ge=1, description="seconds to wait for the model to load")


class CheckOptions(Options):
    """``check -o``: the support model and the text's encoding."""

    support: Literal["full", "lexical"] = Field("full", description="support model: full (the shipped stard-e5's "
                                                "cosine + lexical scores) or lexical (no encoder)")
    encoding: str = Field("utf-8", description="encoding of a text file or standard input")


class DraftOptions(Options):
    """``judgment draft -o``: free drafting and the length of what the LLM writes."""

    free: bool = Field(False, description="let the LLM draft the whole judgment freely, even when a structure model "
                       "is available (by default the structure model decides it)")
    case_corpus: Optional[str] = Field(None, description="free drafting only: past judgments, JSONL {id, document}")
    max_tokens: int = Field(500, ge=16, description="upper bound on generated tokens")
