"""What the structure models read about one case: its candidate charges and articles with their evidence
(mentions in the facts, charge keywords, similar cases, the citation pipeline's pool, co-occurrence tables),
and the feature rows of the charge, article and number models. Training rows read tables counted without
their own fold (see :class:`CaseRows`)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from legalrag.judgment.boosting import FOLDS
from legalrag.judgment.defendants import DEFENDANT_COLUMNS, defendants_in_facts
from legalrag.judgment.features import GROUPS, FactFeatures, extract_features
from legalrag.judgment.labels import LabelledCase
from legalrag.judgment.signals import DENSE_CHARS, ChargeCentroids, CoTable, Neighbour, NeighbourIndex, \
    charge_mentions, keyword_positions, share, vote

K_NEIGHBOURS = 10
CENTROID_TOP = 3  # the charges whose centroid of case vectors is nearest the facts become candidates
GENERAL_PART = 101  # articles 1-101 are the general part; a charge's own article is above it


@dataclass
class _Tables:
    charge_counts: Counter
    article_counts: Counter  # specific articles over all cases, general-part ones over complete cases
    charge_articles: CoTable  # all cases: partial ones (CAIL) add their specific articles only
    circ_articles: CoTable  # complete cases only
    n: int
    ids: list
    charge_general: CoTable = None  # complete cases only: P(general-part article | charge)
    n_complete: int = 0

    def article_share(self, art: str) -> float:
        general = art.isdigit() and int(art) <= GENERAL_PART
        return share(self.article_counts, self.n_complete if general else self.n, art)

    def charge_article_p(self, charge: str, art: str) -> float:
        general = art.isdigit() and int(art) <= GENERAL_PART
        return (self.charge_general if general else self.charge_articles).prob(charge, art)


@dataclass
class _Context:
    """What every predictor of one case reads: features, neighbours and the citation pipeline's pool."""

    id: str | None
    facts: str
    features: FactFeatures
    neighbours: list[Neighbour]
    cite_pool: dict[str, float]
    defendants: list[str]  # the defendants the facts name (defendants.py)
    charge_hits: list = ()  # charges ranked by their conduct text (charge_text.py)
    # the nearest cases with complete labels (general-part articles, probation); the same list when all are
    complete_neighbours: list = ()
    vector: Any = None  # the encoder's query vector of the facts (None: BM25 neighbours)


class CaseRows:
    """The labelled cases, their neighbour index and count tables, and the rows built from them for one case.
    ``disabled`` names feature groups (``features.GROUPS``) or signals switched off."""

    def __init__(self, cases: Sequence[LabelledCase], *, cite=None, charge_text=None, disabled: Iterable[str] = (),
                 encoder=None, neighbour_vectors=None, digests: Mapping[str, str] | None = None,
                 circumstances: Mapping[str, Sequence[str]] | None = None, lexical=None, lexical_vectors=None):
        """``digests`` and ``circumstances`` (id -> SHA-256 of the facts the neighbour index compares, and the
        circumstance keys of :meth:`_circ_keys`) stand in for the facts of cases saved without their texts."""
        self.cases = {c.id: c for c in cases}
        # a citepred CitationPredictor, or a citepred.crossfit.FoldedCite (labelled cases answered out of fold),
        # or None: no citation-pipeline signal
        self.cite = cite
        self.charge_text = charge_text  # a charge_text.ChargeText (or None: no charge-text signal)
        self.disabled = frozenset(disabled)
        self.columns = [c for g, cols in GROUPS.items() if g not in self.disabled for c in cols]
        self.encoder = encoder  # similar cases by this encoder's vectors (None: BM25)
        # Cases with partial labels (CAIL: no general-part articles, no probation) vote on charges, specific
        # articles and terms; the general-part articles and probation are read from the complete cases only.
        self.partial = {c.id for c in cases if not c.complete}
        self.lexical = lexical  # a lexvec.LexicalVectors: all cases' neighbours by it, the complete ones by encoder
        if lexical is not None:
            complete = [c for c in cases if c.complete]
            if lexical_vectors is None:  # held at float16, as saved: a loaded model ranks exactly as trained
                import numpy as np

                lexical_vectors = lexical.encode_queries([c.facts for c in cases]).astype(np.float16)
            self.neighbours = NeighbourIndex(list(self.cases), [c.facts for c in cases], encoder=lexical,
                                             vectors=lexical_vectors, digests=digests)
            self.complete_neighbours = NeighbourIndex(
                [c.id for c in complete], [c.facts for c in complete], encoder=encoder, vectors=neighbour_vectors,
                digests={c.id: digests[c.id] for c in complete} if digests else None)
        else:
            if encoder is not None and self.partial and neighbour_vectors is None:
                import numpy as np  # thousands of partial-label cases: held at float16, as saved (model_dir.py)

                neighbour_vectors = encoder.encode_queries([c.facts[:DENSE_CHARS] for c in cases]).astype(np.float16)
            self.neighbours = NeighbourIndex(list(self.cases), [c.facts for c in cases], encoder=encoder,
                                             vectors=neighbour_vectors, digests=digests)
            self.complete_neighbours = self.neighbours.subset([c.id for c in cases if c.complete]) \
                if self.partial else self.neighbours
        self.ranges: dict[str, tuple[int, int]] = {}  # statutory ranges by article (set by the predictor)
        self._circ_of = {c.id: list(circumstances[c.id]) if circumstances is not None else
                         self._circ_keys(extract_features(c.facts)) for c in cases}
        self.full = self._build_tables(cases)
        # Training rows read tables counted without their own fold: a leave-one-out count would reveal the
        # row's own label to the model (the count drops by one exactly when the label is positive).
        self.fold_of = {cid: i % FOLDS for i, cid in enumerate(self.cases)}
        self.fold_tables = {f: self._build_tables([c for c in cases if self.fold_of[c.id] != f])
                            for f in range(FOLDS)}
        self.charge_counts = self.full.charge_counts
        self.centroids = ChargeCentroids(cases, self.neighbours, self.fold_of) \
            if self.neighbours.encoder is not None else None

    def _build_tables(self, cases: Sequence[LabelledCase]) -> "_Tables":
        t = _Tables(Counter(ch for c in cases for ch in c.charges), Counter(str(a) for c in cases for a in c.articles),
                    CoTable(), CoTable(), len(cases), [c.id for c in cases], CoTable(),
                    sum(1 for c in cases if c.complete))
        for c in cases:
            t.charge_articles.add(c.charges, map(str, c.articles))
            if c.complete:
                t.charge_general.add(c.charges, map(str, c.articles))
                t.circ_articles.add(self._circ_of[c.id], map(str, c.articles))
        return t

    def _tables(self, case_id: str | None) -> "_Tables":
        return self.fold_tables[self.fold_of[case_id]] if case_id in self.cases else self.full

    # -------------------------------------------------------------------------------------- context
    def _on(self, signal: str) -> bool:
        return signal not in self.disabled

    def _circ_keys(self, f: FactFeatures) -> list[str]:
        keys = [n for n in f.circumstances]
        if f.values.get("defendants", 1) > 1:
            keys.append("多名被告人")
        if "amount_max" in f.values:
            keys.append("有金额")
        if "drug_grams" in f.values:
            keys.append("有毒品")
        return keys

    def context(self, facts: str, case_id: str | None = None) -> _Context:
        feats = extract_features(facts)
        vector = self.neighbours.query_vector(facts) if self.neighbours.encoder is not None else None
        skip = [case_id] if case_id else ()
        nbs = self.neighbours.search(facts, K_NEIGHBOURS, exclude=skip, vector=vector) \
            if self._on("neighbours") else []
        complete = nbs
        if self.complete_neighbours is not self.neighbours and self._on("neighbours"):
            same = self.complete_neighbours.encoder is self.neighbours.encoder
            complete = self.complete_neighbours.search(facts, K_NEIGHBOURS, exclude=skip,
                                                       vector=vector if same else None)
        pool: dict[str, float] = {}
        if self.cite is not None and self._on("citepred"):
            res = self.cite.predict_case(facts, case_id) if hasattr(self.cite, "predict_case") else \
                self.cite.predict(facts)
            stage = "co-citation" if "co-citation" in res.pools else (list(res.pools)[-1] if res.pools else None)
            if getattr(self.cite, "set_model", None) is not None:
                stage = "learned-set"  # the set decision's scores (>= 0.5: cited)
            pool = dict(res.pools.get(stage, {})) if stage else {}
            for p in res.predictions:
                pool.setdefault(p.provision, p.score)
        hits = self.charge_text.search(facts) if self.charge_text is not None and self._on("charge_text") else []
        return _Context(case_id, facts, feats, nbs, pool, defendants_in_facts(facts), hits, complete, vector)

    def _case_row(self, ctx: _Context) -> list[float]:
        v = ctx.features.values
        row = [float(v.get(c, 0.0)) for c in self.columns]
        return row

    # ------------------------------------------------------------------------------------ charges
    def _charge_candidates(self, ctx: _Context) -> dict[str, dict[str, Any]]:
        cands: dict[str, dict[str, Any]] = {}
        if self._on("explicit"):
            mentions = [m for m in charge_mentions(ctx.facts) if m.name]
            for i, m in enumerate(mentions):
                e = cands.setdefault(m.name, {})
                e.setdefault("mentions", []).append({"text": m.written, "span": [m.start, m.end]})
                if i == 0:
                    e["first_mention"] = True
        if self._on("keywords"):
            for name, pos in keyword_positions(ctx.facts).items():
                cands.setdefault(name, {})["keyword_positions"] = pos[:5]
                cands[name]["keyword_count"] = len(pos)
        for h in ctx.charge_hits:
            e = cands.setdefault(h.name, {})
            e["text_rank"], e["text_score"] = h.rank, round(h.score, 4)
        if self._on("citepred"):  # charges whose own article the citation pool predicts
            t = self._tables(ctx.id)
            for art in self._predicted_specific(ctx):
                n_art = t.article_counts.get(art, 0)
                for ch, row in t.charge_articles.pairs.items():
                    if n_art >= 2 and row.get(art, 0):
                        p = row[art] / n_art
                        e = cands.setdefault(ch, {})
                        if p > e.get("article_p", 0):
                            e["article_p"], e["article"] = round(p, 4), art
        if self.law is not None:  # the charges whose law text the facts call for (law_candidates.py)
            for lc in self.law.propose(ctx.facts):
                e = cands.setdefault(lc.name, {})
                e["law_rank"], e["law_cos"], e["law_article"] = lc.rank, round(lc.cos, 4), lc.article
        cos = self.centroids.scores(ctx.vector, self.fold_of.get(ctx.id)) \
            if self.centroids is not None and ctx.vector is not None and self.centroid_columns else []
        for name, _ in cos[:CENTROID_TOP]:
            cands.setdefault(name, {})["centroid_top"] = True
        if ctx.neighbours:
            votes = vote(ctx.neighbours, {i: self.cases[i].charges for i in self.cases})
            for name, s in votes.items():
                cands.setdefault(name, {})["vote"] = round(s, 4)
            top = self.cases[ctx.neighbours[0].id].charges
            for name in top:
                cands.setdefault(name, {})["top_neighbour"] = ctx.neighbours[0].id
        for rank, (name, c) in enumerate(cos):
            if name in cands:
                cands[name]["centroid_cos"], cands[name]["centroid_rank"] = round(c, 4), rank
        return cands

    def _charge_row(self, ctx: _Context, name: str, e: Mapping[str, Any]) -> list[float]:
        t = self._tables(ctx.id)
        n = max(len(ctx.facts), 1)
        kp = e.get("keyword_positions") or []
        return [float(len(e.get("mentions", []))), float(bool(e.get("first_mention"))),
                float(e.get("keyword_count", 0)), (kp[0] / n) if kp else 1.0, float(e.get("vote", 0.0)),
                float("top_neighbour" in e), share(t.charge_counts, t.n, name),
                float(len(name)), float(e.get("text_rank", 99)), float(e.get("text_score", 0.0)),
                float(e.get("article_p", 0.0))] + ([float(e.get("centroid_cos", -1.0)), float(e.get("centroid_rank", 99))]
                                                   if self.centroid_columns else []) + \
            ([float(e.get("law_rank", 99)), float(e.get("law_cos", -1.0))] if self.law_columns else [])

    BASE_CHARGE_COLUMNS = ["mentions", "first_mention", "keyword_count", "keyword_first_pos", "vote", "top_neighbour",
                           "prior", "name_len", "text_rank", "text_score", "article_p"]
    centroid_columns = True  # False for a model saved before the charge centroids (format 3)
    # the charges proposed from their law text (a law_candidates.LawCandidates, or None) and whether the charge
    # model reads their rank and cosine (a model trained with them: StructurePredictor.retrain_charges)
    law = None
    law_columns = False

    @property
    def CHARGE_COLUMNS(self) -> list[str]:
        return self.BASE_CHARGE_COLUMNS + (["centroid_cos", "centroid_rank"] if self.centroid_columns else []) + \
            (["law_rank", "law_cos"] if self.law_columns else [])

    @staticmethod
    def _predicted_specific(ctx: _Context, cut: float = 0.5) -> list[str]:
        """The specific-part articles (above the general part) the citation pool keeps, best first."""
        arts = [(s, a) for a, s in ctx.cite_pool.items() if a.isdigit() and int(a) > GENERAL_PART and s >= cut]
        return [a for _, a in sorted(arts, key=lambda x: (-x[0], int(x[1])))]

    def predicted_range(self, ctx: _Context) -> tuple[str, tuple[int, int]] | None:
        """The statutory range of the best specific article the citation pool keeps, if it states one."""
        return next(((a, self.ranges[a]) for a in self._predicted_specific(ctx) if a in self.ranges), None)

    # ----------------------------------------------------------------------------------- articles
    def _article_candidates(self, ctx: _Context, charges: Sequence[str]) -> dict[str, dict[str, Any]]:
        cands: dict[str, dict[str, Any]] = {}
        for p, s in ctx.cite_pool.items():
            if p.isdigit():
                cands.setdefault(p, {})["citepred"] = round(float(s), 4)
        t = self._tables(ctx.id)
        circ = self._circ_keys(ctx.features)
        if self._on("tables"):
            for ch in charges:
                for a in t.charge_articles.items_for(ch):
                    p = t.charge_article_p(ch, a)
                    if p > 0:
                        e = cands.setdefault(a, {})
                        if p > e.get("charge_p", 0):
                            e["charge_p"], e["charge"] = round(p, 4), ch
            for k in circ:
                for a in t.circ_articles.items_for(k):
                    p = t.circ_articles.prob(k, a, min_count=3)
                    if p >= 0.2:
                        e = cands.setdefault(a, {})
                        if p > e.get("circ_p", 0):
                            e["circ_p"], e["circumstance"] = round(p, 4), k
        if ctx.neighbours:
            labels = {i: [str(a) for a in self.cases[i].articles] for i in self.cases}
            votes = {a: s for a, s in vote(ctx.neighbours, labels).items() if int(a) > GENERAL_PART}
            votes.update({a: s for a, s in vote(ctx.complete_neighbours, labels).items() if int(a) <= GENERAL_PART})
            for a, s in votes.items():
                cands.setdefault(a, {})["vote"] = round(s, 4)
        return cands

    def _article_row(self, ctx: _Context, art: str, e: Mapping[str, Any], case_row: list[float],
                     probs: Mapping[str, float]) -> list[float]:
        t = self._tables(ctx.id)
        frequent = self.full.article_counts.get(art, 0) >= 8
        return [float(e.get("citepred", 0.0)), float(e.get("charge_p", 0.0)), float(e.get("circ_p", 0.0)),
                float(e.get("vote", 0.0)), t.article_share(art),
                float(int(art)) if frequent else -1.0, float(int(art) > GENERAL_PART),
                probs["fine"], probs["probation"]] + case_row

    @property
    def article_columns(self) -> list[str]:
        return ["citepred", "charge_p", "circ_p", "vote", "prior", "article", "specific", "p_fine",
                "p_probation"] + self.columns

    # ------------------------------------------------------------------------------ numbers (case level)
    def _neighbour_stats(self, ctx: _Context) -> dict[str, float]:
        # the terms and fines of the complete cases' neighbours: CAIL's own (another court's conventions, no
        # probation label) lowered the number models' cross-validated scores on the training cases
        nbs = ctx.complete_neighbours
        total = sum(n.weight for n in nbs) or 1.0
        cases = [self.cases[n.id] for n in nbs]
        logs = [math.log1p(c.prison_capped) for c in cases]
        fines = [(n.weight, math.log1p(c.fine_yuan)) for n, c in zip(nbs, cases) if c.fine_yuan]
        return {
            "prison_wmean": sum(n.weight * x for n, x in zip(nbs, logs)) / total if nbs else 0.0,
            "prison_median": sorted(logs)[len(logs) // 2] if logs else 0.0,
            "prison_top1": logs[0] if logs else 0.0,
            "fine_share": sum(n.weight for n, c in zip(nbs, cases) if c.fine_yuan) / total if nbs else 0.0,
            "fine_wmean": sum(w * x for w, x in fines) / (sum(w for w, _ in fines) or 1.0) if fines else 0.0,
            "probation_share": sum(n.weight for n in ctx.complete_neighbours if self.cases[n.id].probation)
            / (sum(n.weight for n in ctx.complete_neighbours) or 1.0),
        }

    def _charge_stats(self, charges: Sequence[str], own_id: str | None) -> dict[str, float]:
        allowed = set(self._tables(own_id).ids)
        same = [c for c in self.cases.values() if c.id in allowed and charges and charges[0] in c.charges]
        if sum(1 for c in same if c.complete) >= 3:  # the complete cases' conventions where they have the charge
            same = [c for c in same if c.complete]
        pool = same or [c for c in self.cases.values() if c.id in allowed]
        logs = sorted(math.log1p(c.prison_capped) for c in pool)
        fines = [math.log1p(c.fine_yuan) for c in pool if c.fine_yuan]
        return {"charge_prison_median": logs[len(logs) // 2] if logs else 0.0,
                "charge_fine_share": sum(1 for c in pool if c.fine_yuan) / len(pool) if pool else 0.0,
                "charge_fine_mean": sum(fines) / len(fines) if fines else 0.0,
                "charge_probation_share": sum(c.probation for c in pool if c.complete)
                / (sum(1 for c in pool if c.complete) or 1),
                "charge_cases": float(len(same)), "n_charges": float(len(charges))}

    NB_COLUMNS = ["prison_wmean", "prison_median", "prison_top1", "fine_share", "fine_wmean", "probation_share"]
    CH_COLUMNS = ["charge_prison_median", "charge_fine_share", "charge_fine_mean", "charge_probation_share",
                  "charge_cases", "n_charges", "article_range_lo", "article_range_hi"]

    @property
    def number_columns(self) -> list[str]:
        return ["nb_" + c for c in self.NB_COLUMNS] + self.CH_COLUMNS + list(DEFENDANT_COLUMNS) + self.columns

    def _number_row(self, ctx: _Context, charges: Sequence[str], defendant: Mapping[str, float] | None = None
                    ) -> list[float]:
        """The row of the number models: for the case as a whole (``defendant`` None: only how many the facts
        name) or for one defendant (``defendants.local_features``)."""
        nb = self._neighbour_stats(ctx)
        ch = self._charge_stats(charges, ctx.id)
        rng = self.predicted_range(ctx) if self._on("statutory") else None  # the predicted article's range
        ch["article_range_lo"] = math.log1p(rng[1][0]) if rng else -1.0
        ch["article_range_hi"] = math.log1p(rng[1][1]) if rng else -1.0
        d = defendant or {"def_count": float(max(1, len(ctx.defendants))), "def_mention_share": 1.0}
        return ([nb[c] for c in self.NB_COLUMNS] + [ch[c] for c in self.CH_COLUMNS]
                + [float(d.get(c, 0.0)) for c in DEFENDANT_COLUMNS] + self._case_row(ctx))
