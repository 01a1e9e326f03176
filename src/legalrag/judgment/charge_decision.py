"""The charge decision of the structure model (``predict.StructurePredictor``): which candidate charges a case
gets, and the second charge model that decides the charges no training case carries.

**One model** (as trained by ``StructurePredictor.train``): a LightGBM model scores every candidate charge
(``candidates.CaseRows._charge_candidates``); those at or above the threshold chosen by cross-fitting are kept,
always at least the best.

**Combined** (``add_law_model``): a second charge model (``charge_law``) is fitted on the same complete cases
over the candidates the catalogue's law text adds (``law_candidates.LawCandidates``), with their rank and cosine
as two more columns. At prediction the first model's decision is computed exactly as without it, from the
candidates without the law text; the law model then decides only the charges no training case carries
(*unseen*):

- the best unseen candidate ``u`` by the law model's probability ``p(u)`` is considered, if ``p(u) >= gate``;
- ``u`` *replaces* the first model's top charge when it outranks every seen candidate in the law model by
  ``margin`` (``p(u) >= max p(seen) + margin``); otherwise it is *added* after the first model's charges when
  ``p(u) >= add_gate``;
- a seen charge is never added, dropped or reordered by the law model (except the top one replaced as above).

``gate``, ``margin`` and ``add_gate`` are stored in the manifest's thresholds (``charge_law_gate``,
``charge_law_margin``, ``charge_law_add``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.structure import Scored

GATE, MARGIN, ADD_GATE = 0.5, 0.0, 1.01  # defaults: replace only (an add gate above 1 adds nothing)


def renamed_notes(names) -> list[str]:
    """A note for each charge name the charge-name rules have since replaced (the name a case decided before
    the change carries), with the current name and the rule."""
    from legalrag.judgment.charges import by_any_name, by_name

    current, any_name = by_name(), by_any_name()
    return [f"charge {n} has since been renamed {any_name[n].name} ({any_name[n].source}); the name of the facts' "
            "time is kept" for n in dict.fromkeys(names) if n not in current and n in any_name]


def charge_rows(model, law, facts: Mapping[str, str] | None, progress: bool = False):
    """(X, y, groups, n_cases): the charge rows of the complete training cases with the law-text candidates of
    ``law`` and their two columns."""
    import numpy as np

    complete = [c for c in model.cases.values() if c.complete]
    texts = {c.id: c.facts or (facts or {}).get(c.id, "") for c in complete}
    missing = [i for i, t in texts.items() if not t]
    if missing:
        raise InputError(f"{len(missing)} training cases have no facts (the model was saved without them, e.g. "
                         f"{missing[0]}); pass facts= with each case id's facts", field="facts")
    it = complete
    if progress:
        from tqdm import tqdm

        it = tqdm(complete, desc="charge rows", unit="case")
    rows, ys, groups = [], [], []
    with law_view(model, law, True):
        for i, c in enumerate(it):
            ctx = model.context(texts[c.id], c.id)
            for name, e in model._charge_candidates(ctx).items():
                rows.append(model._charge_row(ctx, name, e))
                ys.append(int(name in c.charges))
                groups.append(i)
        columns = list(model.CHARGE_COLUMNS)
    return np.array(rows, dtype=float), np.array(ys), np.array(groups), len(complete), columns


def fit_law_model(model, law, facts=None, progress: bool = False):
    """(booster, threshold, cv F1) of a charge model over the law-text candidates, on the complete cases."""
    from legalrag.judgment.boosting import fit
    from legalrag.judgment.selection import partial_assignments, set_threshold_cv

    X, Y, G, n, columns = charge_rows(model, law, facts, progress)
    _, without_p = partial_assignments(n, 0)
    booster = fit(X, Y, "binary", columns)
    threshold, cv = set_threshold_cv(X, Y, G, n, columns, without_p[0])
    return booster, threshold, cv


def add_law_model(model, law, facts=None, progress: bool = False, *, gate: float | None = None,
                  margin: float | None = None, add_gate: float | None = None):
    """Fit the law-text charge model (``charge_law``) beside ``model``'s charge model and store the combination's
    thresholds (module docstring); the charge model is kept."""
    if model.law_columns:
        raise InputError("this model's charge model already reads the law-text columns (retrain_charges)")
    booster, threshold, cv = fit_law_model(model, law, facts, progress)
    model.law, model.models["charge_law"] = law, booster
    model.thresholds["charge_law"], model.cv_f1["charge_law"] = threshold, cv
    for key, value, default in (("charge_law_gate", gate, GATE), ("charge_law_margin", margin, MARGIN),
                                ("charge_law_add", add_gate, ADD_GATE)):
        model.thresholds[key] = float(default if value is None else value)
    return model


class law_view:
    """Within the block, ``model`` proposes the law-text candidates of ``law`` (or none: ``law=None``) and its
    charge rows carry the law columns when ``columns``."""

    def __init__(self, model, law, columns: bool):
        self.model, self.law, self.columns = model, law, columns

    def __enter__(self):
        self.saved = (self.model.law, self.model.law_columns)
        self.model.law, self.model.law_columns = self.law, self.columns
        return self.model

    def __exit__(self, *exc):
        self.model.law, self.model.law_columns = self.saved
        return False


def decide(model, ctx, booster, threshold: float, cands: Mapping[str, dict]) -> tuple[list[Scored], list]:
    """(chosen, ranked) of one charge model over ``cands``: those at or above ``threshold``, at least the best."""
    import numpy as np

    names = list(cands)
    probs = booster.predict(np.array([model._charge_row(ctx, n, cands[n]) for n in names]))
    order = sorted(range(len(names)), key=lambda i: -probs[i])
    ranked = [(names[i], float(probs[i])) for i in order]
    keep = [i for i in order if probs[i] >= threshold] or order[:1]
    return [Scored(names[i], float(probs[i]), cands[names[i]]) for i in keep], ranked


def combine(model, ctx, chosen: list[Scored], notes: list[str]) -> list[Scored]:
    """The first model's ``chosen`` charges with the law model's unseen charge (module docstring); ``chosen``
    unchanged when the model has no law model or no unseen candidate passes the gate."""
    booster = model.models.get("charge_law")
    if booster is None or model.law is None or not chosen:
        return chosen
    with law_view(model, model.law, True):
        cands = model._charge_candidates(ctx)
        _, ranked = decide(model, ctx, booster, 2.0, cands)
    seen = model.full.charge_counts
    gate = model.thresholds.get("charge_law_gate", GATE)
    margin = model.thresholds.get("charge_law_margin", MARGIN)
    add_gate = model.thresholds.get("charge_law_add", ADD_GATE)
    unseen = [(n, p) for n, p in ranked if n not in seen and p >= gate]
    if not unseen:
        return chosen
    name, p = unseen[0]
    best_seen = max((q for n, q in ranked if n in seen), default=0.0)
    got = Scored(name, p, {**cands[name], "law_model": {"p": round(p, 4), "best_seen_p": round(best_seen, 4)}})
    if p >= best_seen + margin:
        notes.append(f"charge {name} (never seen in training, proposed by the law text of its article) replaces "
                     f"{chosen[0].name}: the law-text charge model puts it at p={p:.2f} over every seen charge "
                     f"(best {best_seen:.2f})")
        return [got] + [c for c in chosen[1:] if c.name != name]
    if p >= add_gate:
        return chosen + [got]
    return chosen


def unseen_own_articles(model, chosen: Sequence[Scored], have: set[str]) -> list[Scored]:
    """The catalogue's article of each chosen charge no training case carries (the article model knows only
    the articles of the charges it was trained on)."""
    from legalrag.judgment.charges import by_any_name

    catalogue, out = by_any_name(), []
    for c in chosen:
        if c.name in model.full.charge_counts or c.name not in catalogue:
            continue
        for n in catalogue[c.name].article_numbers[:1]:
            if str(n) not in have:
                have.add(str(n))
                out.append(Scored(str(n), c.prob, {"rule": f"the charge catalogue's article of {c.name}, a "
                                                            "charge never seen in training"}))
    return out


def choose_charges(model, ctx, facts: str, notes: list[str], charge_reader=None):
    """(chosen, ranked, extra, low) for the case of ``ctx``: the charge model's decision (with the law model's
    unseen charge when the model has one, :func:`combine`), the LLM's check of a low-confidence choice, the charges
    named in the facts but not in the charge list (``extra``) and the unseen ones (``undecided.mark_unseen``)."""
    import numpy as np

    from legalrag.judgment.charge_llm import check_charges
    from legalrag.judgment.inputs import names_no_crime, refuse_no_crime
    from legalrag.judgment.signals import charge_mentions, share
    from legalrag.judgment.undecided import mark_unseen

    low, reason = False, ""
    combined = "charge_law" in model.models
    with law_view(model, None if combined else model.law, model.law_columns):
        cands = model._charge_candidates(ctx)
    chosen: list[Scored] = []
    ranked: list[tuple[str, float]] = []
    if cands:
        chosen, ranked = decide(model, ctx, model.models["charge"], model.thresholds["charge"], cands)
        top, p_top = ranked[0]
        best = cands[top]
        supported = any(e.get("mentions") or e.get("keyword_positions") for e in cands.values())
        if names_no_crime(facts, supported):
            raise refuse_no_crime(facts)
        if not best.get("mentions") and not best.get("keyword_positions"):
            low, reason = True, "unsupported"
            notes.append(f"low confidence in the charge: {top} rests on similar cases or its "
                         "conduct text only (the facts neither name it nor describe its conduct in known words)")
        elif p_top < 0.5:
            low, reason = True, "low_p"
            notes.append(f"low confidence in the charge: best candidate {top} at p={p_top:.2f}")
    else:
        if names_no_crime(facts, False):
            raise refuse_no_crime(facts)
        top = model.charge_counts.most_common(1)[0][0]
        chosen = [Scored(top, share(model.full.charge_counts, model.full.n, top), {"rule": "most frequent charge in "
                  "the labelled cases (no candidate found in the facts)"})]
        low, reason = True, "unsupported"
        notes.append("no recognisable charge in the facts: the most frequent training charge is given, low confidence")
    if low and charge_reader is not None and charge_reader.applies(reason):
        chosen = check_charges(charge_reader, facts, cands, chosen, notes, lambda name, e: float(
            model.models["charge"].predict(np.array([model._charge_row(ctx, name, e)]))[0]))
    unlisted = {m.written: m for m in charge_mentions(facts) if not m.name}
    for written, m in unlisted.items():
        notes.append(f"charge {written!r} named in the facts is not in the charge list: kept and flagged")
    extra = tuple(Scored(w, 0.0, {"mentions": [{"text": m.written, "span": [m.start, m.end]}],
                                  "flag": "not in the charge list"}, listed=False) for w, m in unlisted.items())
    # a charge of the catalogue proposed from its law text is known even if no training case carries it
    if combined:
        chosen = combine(model, ctx, chosen, notes)
    known = set(model.full.charge_counts) | {n for n, e in cands.items() if "law_rank" in e} | \
        {c.name for c in chosen if "law_rank" in c.evidence}
    chosen, unseen = mark_unseen(chosen, ranked, known, facts, notes)
    notes += renamed_notes(c.name for c in chosen)
    for c in chosen:
        if c.name not in model.full.charge_counts:
            notes.append(f"charge {c.name} was never seen in training: proposed by the law text of its "
                         "article in the charge catalogue")
    extra += unseen
    low = low or bool(unseen)
    return chosen, ranked, extra, low
