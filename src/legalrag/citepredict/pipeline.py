"""The citation-prediction pipeline: stages with provenance for each predicted provision.

Stages (each leaves a snapshot pool provision -> score, cumulative, for the ablation):
``retrieval`` (top ``core_k`` candidates, score 1), ``rerank`` (the pointwise LLM reranker reorders the top
``rerank_top`` candidates; same as retrieval when no reranker), ``always-add`` and ``clusters`` (learned
rules), ``co-citation`` (the graph's proposals from the current predictions), ``similar-cases`` (votes of the
nearest labelled cases, mixed into every score with weight ``case_weight``; only with a case memory),
``learned-set`` (with a set model, ``setmodel.py``: every candidate's decision score, cut at 0.5; otherwise
the pool unchanged), ``verification`` (the LLM accepts, rejects or corrects each addition). The final set is every provision
scoring at or above ``threshold`` (0.5 with a set model); without a case memory or a set model the core
predictions always stay.

Cost of the LLM stages: ``verify_batch`` verifies every addition in one call, and ``case_first`` lays out every
call of a case with the facts first (``legalrag.citepredict.prompting``), so a runtime that keeps its prompt cache
reads them once per case; ``bench/citepredict/cite_latency.py`` measures both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from legalrag.citepredict.analysis import Analysis, analyse_facts
from legalrag.citepredict.cases import CaseMemory
from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.codefilter import code_filter, law_titles
from legalrag.citepredict.prompting import stage_prompt
from legalrag.citepredict.retrieve import retrieve_candidates
from legalrag.citepredict.rules import RuleSet, apply_rules, natural_key
from legalrag.citepredict.verify import Proposal, verify_all, verify_batch
from legalrag.llm.base import LLM
from legalrag.retrieval.base import Retriever
from legalrag.types import Citation, Document, Response, Step, Usage

STAGES = ("retrieval", "rerank", "always-add", "clusters", "co-citation", "similar-cases", "learned-set",
          "verification")


class CiteConfig(BaseModel):
    """Pipeline settings; ``threshold`` and ``core_k`` are what ``legalrag eval cite -o dev=N`` calibrates."""

    model_config = ConfigDict(extra="forbid")
    candidates: int = Field(30, ge=1, description="retrieval depth")
    core_k: int = Field(1, ge=1, description="top candidates kept as core predictions")
    prior_weight: float = Field(0.0, ge=0, description="weight of the training-citation prior in retrieval")
    seen_only: bool = Field(True, description="only provisions cited at least once in training")
    core_skip_always: bool = Field(True, description="core slots go to provisions outside the always-add set")
    core_max_share: float = Field(1.0, ge=0, le=1, description="core candidates are cited by at most this share "
                                  "of training decisions (widely cited provisions come as companions)")
    max_query_chars: int = Field(600, ge=20)
    rerank_top: int = Field(5, ge=0, description="candidates the LLM reranker scores (0: no rerank)")
    use_always: bool = True
    use_clusters: bool = True
    use_cocitation: bool = True
    cocite_neighbours: int = Field(20, ge=1)
    use_cases: bool = Field(True, description="similar-case votes (when a case memory is given)")
    case_neighbours: int = Field(10, ge=1, description="labelled cases that vote")
    case_weight: float = Field(0.9, ge=0, le=1, description="weight of the case votes against the pool score")
    threshold: float = Field(0.5, ge=0, le=1, description="selection threshold for additions")
    analysis: bool = Field(False, description="LLM query analysis (issues, codes, keywords)")
    code_filter: bool = Field(False, description="restrict retrieval to the analysed law codes")
    verify: bool = Field(False, description="LLM verification of additions")
    verify_below: float = Field(0.95, ge=0, le=1.01, description="additions scoring this or more skip verification")
    verify_concurrency: int = Field(4, ge=1)
    # measured in docs/lab/notebook.md: case-first cut the LLM stages' time by 17% with F1 unchanged; the batched
    # verification cut it by 33% but rejected gold provisions (recall 0.667 -> 0.524), so it stays off
    verify_batch: bool = Field(False, description="one verification call per case for every addition (no "
                               "reasons) instead of one call per addition")
    case_first: bool = Field(True, description="every LLM call of a case opens with the same system message "
                             "holding the facts, so the runtime's prompt cache reads them once per case")
    language: str = "zh"
    retriever: str | None = Field(None, description="the index component the model was calibrated with (None: "
                                  "the index's default); `cite` uses it unless --retriever says otherwise")


@dataclass(frozen=True)
class Provenance:
    stage: str
    score: float
    detail: str = ""


@dataclass(frozen=True)
class CitedProvision:
    provision: str
    title: str
    score: float
    provenance: tuple[Provenance, ...]
    resolved: bool = True


def specific_part(doc) -> bool:
    """Whether ``doc`` is an article of a criminal law's specific part (分则, above 第一百零一条): the article
    that defines a charge, which a citation list puts before the general part's."""
    if doc is None:
        return False
    meta = getattr(doc, "metadata", None) or {}
    law, article = str(meta.get("law") or ""), str(meta.get("article") or "")
    base = article.split("-")[0]
    return "刑法" in law and "修正案" not in law and base.isdigit() and int(base) > 101


@dataclass(frozen=True)
class CiteResult(Response):
    """The predicted provisions for the facts (``question``): each as a checked citation (``citations``) and
    with its provenance (``predictions``); ``sources`` are the retrieval candidates."""

    predictions: tuple[CitedProvision, ...] = ()
    pools: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # stage -> provision -> score
    ranking: tuple[str, ...] = ()  # retrieval candidates, best first
    reranked: tuple[str, ...] = ()  # the same after the reranker (equal to ranking without one)
    analysis: Analysis | None = None
    filtered_codes: tuple[str, ...] = ()
    unresolved_corrections: tuple[str, ...] = ()  # verifier corrections that name no corpus provision

    @property
    def provisions(self) -> list[str]:
        return [p.provision for p in self.predictions]


class CitationPredictor:
    """Facts in, the predicted set of provisions out. Collaborators are passed in; nothing loads here."""

    def __init__(self, documents: Sequence[Document], retriever: Retriever, rules: RuleSet, graph: CoCitationGraph,
                 *, config: CiteConfig | None = None, llm: LLM | None = None, reranker=None,
                 cases: CaseMemory | None = None, set_model=None):
        self.config = config or CiteConfig()
        if (self.config.analysis or self.config.verify) and llm is None:
            from legalrag.errors import InputError

            raise InputError("analysis and verification need an LLM; pass llm= or turn them off")
        self.documents = {d.id: d for d in documents}
        self.titles = law_titles(documents)
        self.retriever, self.rules, self.graph = retriever, rules, graph
        self.llm, self.reranker, self.cases = llm, reranker, cases
        self.set_model = set_model  # a setmodel.SetModel (or None: the threshold decides)
        self.counts = {p: int(self.graph.df[i]) for p, i in self.graph.index.items()}

    def _lookup(self, pid: str) -> Document | None:
        return self.documents.get(pid)

    def predict(self, facts: str) -> CiteResult:
        cfg, start = self.config, time.perf_counter()
        steps: list[Step] = []
        prov: dict[str, list[Provenance]] = {}
        calls = 0

        def note(p: str, stage: str, score: float, detail: str) -> None:
            prov.setdefault(p, []).append(Provenance(stage, round(float(score), 4), detail))

        analysis, flt, matched = None, None, []
        if cfg.analysis:
            analysis, step = analyse_facts(self.llm, facts, self.titles, language=cfg.language,
                                           case_first=cfg.case_first)
            steps.append(step)
            calls += analysis.calls
            if cfg.code_filter and analysis.codes:
                flt, matched = code_filter(analysis.codes, self.titles)
        queries = [facts.strip()[:cfg.max_query_chars]]
        if analysis is not None and analysis.search_text():
            queries.append(analysis.search_text())
        t0 = time.perf_counter()
        hits = retrieve_candidates(self.retriever, queries, k=cfg.candidates, citation_counts=self.counts,
                                   prior_weight=cfg.prior_weight, seen_only=cfg.seen_only, filter=flt)
        steps.append(Step(agent="cite", action="retrieve", input=len(queries), output=[h.id for h in hits[:10]],
                          seconds=time.perf_counter() - t0))
        pools: dict[str, dict[str, float]] = {}
        skip = {a.provision for a in self.rules.always_add} if cfg.core_skip_always and cfg.use_always else set()
        if cfg.core_max_share < 1.0:
            n = max(len(self.graph.decision_ids), 1)
            skip |= {p for p, c in self.counts.items() if c / n > cfg.core_max_share}
        core_hits = [h for h in hits if h.id not in skip][:cfg.core_k]
        core = [h.id for h in core_hits]
        for h in core_hits:
            note(h.id, "retrieval", h.score, f"rank {h.rank} of {self.retriever.name}")
        pools["retrieval"] = {p: 1.0 for p in core}

        if self.reranker is not None and cfg.rerank_top > 0 and hits:
            stats = getattr(self.reranker, "stats", None)
            t0, before = time.perf_counter(), stats.usage.calls if stats is not None else 0
            pool_hits = [h for h in hits if h.id not in skip][:cfg.rerank_top]
            reranker = self.reranker
            if cfg.case_first and hasattr(reranker, "with_prompt"):  # score in the case-first layout
                reranker = reranker.with_prompt(lambda _q, article: stage_prompt("rerank", facts, case_first=True,
                                                                                 article=article))
            top = reranker.rerank(queries[0], pool_hits)
            used = (stats.usage.calls if stats is not None else 0) - before
            calls += used
            core = [h.id for h in top[:cfg.core_k]]
            for h in top[:cfg.core_k]:
                note(h.id, "rerank", h.score, f"rank {h.rank} after {self.reranker.name}")
            steps.append(Step(agent="cite", action="rerank", input=[h.id for h in pool_hits],
                              output=[(h.id, round(h.score, 3)) for h in top], seconds=time.perf_counter() - t0))
            done = {h.id for h in top}
            reranked = [h.id for h in top] + [h.id for h in hits if h.id not in done]
        else:
            reranked = [h.id for h in hits]
        pool = {p: 1.0 for p in core}
        pools["rerank"] = dict(pool)

        def add(stage: str, items) -> None:
            for pid, score, detail in items:
                note(pid, stage, score, detail)
                pool[pid] = max(pool.get(pid, 0.0), score)
            pools[stage] = dict(pool)

        charges = analysis.issues if analysis is not None else ()
        add("always-add", [(r.provision, r.score, r.reason) for r in apply_rules(self.rules, core, charges,
                           use_clusters=False)] if cfg.use_always else [])
        add("clusters", [(r.provision, r.score, r.reason) for r in apply_rules(self.rules, core, charges,
                         use_always=False)] if cfg.use_clusters else [])
        if cfg.use_cocitation:
            seeds = {p: s for p, s in pool.items() if s >= cfg.threshold}
            props = self.graph.propose(seeds, k=cfg.cocite_neighbours)
            add("co-citation", [(c.provision, c.score, f"co-cited by {c.neighbours} of the "
                                 f"{cfg.cocite_neighbours} most similar training decisions") for c in props])
        else:
            add("co-citation", [])
        use_cases = self.cases is not None and cfg.use_cases
        if use_cases:
            w = cfg.case_weight
            votes = {v.provision: v for v in self.cases.propose(facts, k=cfg.case_neighbours)}
            pools["case-votes"] = {p: v.score for p, v in votes.items()}
            for p in set(pool) | set(votes):
                v = votes.get(p)
                pool[p] = (1 - w) * pool.get(p, 0.0) + w * (v.score if v else 0.0)
                if v is not None:
                    note(p, "similar-cases", v.score, f"cited by {len(v.cases)} of the {cfg.case_neighbours} most "
                         f"similar labelled cases ({', '.join(v.cases[:3])}{', ...' if len(v.cases) > 3 else ''})")
        pools["similar-cases"] = dict(pool)
        cut = cfg.threshold
        if self.set_model is not None:
            from types import SimpleNamespace

            from legalrag.citepredict.setmodel import DECISION_CUT

            t0 = time.perf_counter()
            decision = self.set_model.decision(SimpleNamespace(sources=hits, pools=pools))
            for p, sc in decision.items():
                if sc >= DECISION_CUT:
                    note(p, "learned-set", sc, f"kept by the set model ({self.set_model.rule} rule)")
            pool, cut = dict(decision), DECISION_CUT
            steps.append(Step(agent="cite", action="set-model", input=len(decision),
                              output=sorted(p for p, sc in decision.items() if sc >= cut),
                              seconds=time.perf_counter() - t0))
        pools["learned-set"] = dict(pool)

        unresolved: list[str] = []
        if cfg.verify:
            todo = [p for p, s in sorted(pool.items(), key=lambda x: -x[1])
                    if p not in core and cut <= s < cfg.verify_below]
            proposals = [Proposal(p, prov[p][-1].detail if prov.get(p) else "") for p in todo]
            verdicts = []
            if cfg.verify_batch and proposals:
                verdicts, step = verify_batch(self.llm, facts, proposals, self._lookup, case_first=cfg.case_first)
                steps.append(step)
            elif not cfg.verify_batch:
                pairs = verify_all(self.llm, facts, proposals, self._lookup, concurrency=cfg.verify_concurrency,
                                   case_first=cfg.case_first)
                verdicts = [v for v, _ in pairs]
                steps.extend(s for _, s in pairs)
            for verdict in verdicts:
                calls += verdict.calls
                p = verdict.provision
                note(p, "verification", pool[p], f"{verdict.decision}: {verdict.reason}")
                if verdict.decision == "reject":
                    pool.pop(p)
                elif verdict.decision == "correct":
                    score = pool.pop(p)
                    if verdict.resolved and verdict.corrected:
                        pool[verdict.corrected] = max(pool.get(verdict.corrected, 0.0), score)
                        note(verdict.corrected, "verification", score, f"corrected from {p}: {verdict.reason}")
                    elif verdict.corrected:
                        unresolved.append(verdict.corrected)
        pools["verification"] = dict(pool)

        keep_core = not use_cases and self.set_model is None
        final = {p: s for p, s in pool.items() if s >= cut or (p in core and keep_core)}
        # a charge's own article (the specific part of a criminal law) leads; the general part's follow it
        order = sorted(final, key=lambda p: (not specific_part(self.documents.get(p)), -final[p], natural_key(p)))
        preds = tuple(CitedProvision(p, self.documents[p].title if p in self.documents else "", round(final[p], 4),
                                     tuple(prov.get(p, ())), p in self.documents) for p in order)
        citations = tuple(Citation(text=c.title or c.provision, canonical=c.provision, resolved=c.resolved,
                                   document_id=c.provision if c.resolved else None,
                                   note="" if c.resolved else "no such provision in the corpus") for c in preds)
        return CiteResult(question=facts, citations=citations, sources=tuple(hits), steps=tuple(steps),
                          usage=Usage(calls=calls), timings={"total_s": time.perf_counter() - start},
                          predictions=preds, pools=pools, ranking=tuple(h.id for h in hits),
                          reranked=tuple(reranked), analysis=analysis, filtered_codes=tuple(matched),
                          unresolved_corrections=tuple(unresolved))
