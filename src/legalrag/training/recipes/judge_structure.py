"""The recipe of the shipped ``judge-structure`` model (``legalrag train judge-structure``).

The first 200 JuDGE cases by ``text_id`` (full labels) plus the CAIL2018 training part (``source="cail"``: the
charges' own articles, no probation label). The citation signal (``judgment/citesignal.train_cite``) takes the
index component ``retriever`` as its first stage, searches similar cases by the same encoder, and learns its set
decision from the JuDGE cases only (it needs the full article lists), without the cases judge-e5 was trained on.
The structure model's neighbours are found by that encoder (``neighbours="encoder"``, as shipped) or by hashed
character n-gram vectors (``"lexical"``). The CAIL cases give rows to the learned models too (``cail_rows``),
each model keeping them unless they lower its cross-validated score on the JuDGE training cases
(``StructurePredictor.train``'s ``partial_rows``).

Without an index the citation signal is the BM25 pipeline and the neighbours are BM25's: the variant the
judgment benchmarks compare against, and the one a corpus without an encoder can train.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Collection, Iterable, Literal, Sequence

from legalrag.errors import InputError
from legalrag.training.recipes.judge_data import CailSplit, JudgeData, capped, first_stage, seen_by_judge_e5

CailRows = Literal["encoded", "all", "none"]


def build_structure(cases: Sequence, judge: JudgeData, index=None, retriever: str | None = None, *,
                    exclude: Collection[str] = (), neighbours: bool = True, select: bool = True,
                    cite_cases: Sequence | None = None, lexical=None, disabled: Iterable[str] = (),
                    per_defendant: bool = True, progress: bool = True):
    """An untrained StructurePredictor over ``cases``: the BM25 citation signal (``index`` None) or the one of
    ``index``'s component ``retriever`` (``neighbours``: the structure model's similar cases by its encoder too).
    ``cite_cases``: the cases the citation signal learns from (default: all; cases with partial labels, such as
    CAIL's specific-only article lists, would teach its set decision that the general part is never cited)."""
    from legalrag.judgment.citesignal import build_cite, train_cite
    from legalrag.judgment.predict import StructurePredictor

    disabled = tuple(disabled)
    if index is None:
        cite = None if "citepred" in disabled else build_cite(judge.statutes, train_citations=judge.train_citations)
        return StructurePredictor(cases, judge.statutes, cite=cite, disabled=disabled, select=select,
                                  per_defendant=per_defendant, lexical=lexical)
    if not retriever:
        raise InputError("--retriever is needed with --index: the index component of the citation first stage "
                         "(e.g. dense-onnx-judge-e5-7ab6b31b7f2b; `legalrag index info` lists them)")
    first = first_stage(index, retriever, judge.data)
    encoder = getattr(first, "encoder", None)  # None: a BM25 component (BM25 similar cases and neighbours)
    cite = train_cite(judge.statutes, cite_cases if cite_cases is not None else cases,
                      train_citations=judge.train_citations, retriever=first, encoder=encoder, exclude=exclude,
                      progress=progress)
    return StructurePredictor(cases, judge.statutes, cite=cite, encoder=encoder if neighbours else None,
                              select=select, lexical=lexical, disabled=disabled, per_defendant=per_defendant)


def cached_ids(cases: Sequence, encoder) -> list[str]:
    """The ids of ``cases`` whose facts' query vector the encoder's vector cache holds (``legalrag train
    cail-split --encode`` fills it): each row of the learned models needs the citation pool and the neighbours
    of that vector, and encoding on demand costs about a second a case on two cores."""
    from legalrag.io import sha256_text
    from legalrag.judgment.signals import DENSE_CHARS

    cache = encoder.vector_cache() if callable(getattr(encoder, "vector_cache", None)) else None
    if cache is None:
        return []
    shas = {c.id: sha256_text(c.facts[:DENSE_CHARS]) for c in cases}
    found = cache.get("query", list(shas.values()))
    return [i for i, s in shas.items() if s in found]


def judge_structure(judge: JudgeData, out: str | Path, *, index=None, retriever: str | None = None,
                    cail: CailSplit | None = None, neighbours: Literal["encoder", "lexical"] = "encoder",
                    cail_rows: CailRows = "encoded", max_cail_rows: int = 0, case_texts: bool | None = None,
                    command: str = "", progress: bool = True):
    """Train the judgment structure model as shipped and save it to ``out``; returns the trained predictor.

    ``judge``: ``load_judge(DIR)``; ``index``/``retriever``: the opened index and its dense component (judge-e5
    as shipped; None: the BM25 signal); ``cail``: ``load_cail_split(...)`` (None: JuDGE's cases only);
    ``cail_rows``: which CAIL cases give rows to the learned models (``encoded``: those whose vectors the
    encoder's cache holds, as shipped; ``all``; ``none``: they reach the models only through neighbours, centroids
    and count tables); ``max_cail_rows``: at most this many, balanced across main charges; ``case_texts``: keep
    the facts in the model directory (None: only where BM25 neighbours need them, i.e. without an index; with an
    encoder the digests, circumstance keys and vectors stand in for them, as shipped)."""
    from legalrag.judgment.lexvec import LexicalVectors

    if neighbours not in ("encoder", "lexical"):
        raise InputError(f"neighbours must be encoder or lexical, got {neighbours!r}")
    if cail_rows not in ("encoded", "all", "none"):
        raise InputError(f"cail_rows must be encoded, all or none, got {cail_rows!r}")
    if case_texts is None:
        case_texts = index is None
    if not case_texts and index is None:
        raise InputError("a model without an index finds its neighbours by BM25 over the case texts: keep them "
                         "(--case-texts) or pass --index and --retriever")
    if neighbours == "encoder" and index is None and cail is not None:
        raise InputError("similar CAIL cases by the encoder need --index and --retriever (or -o neighbours=lexical)")
    cail_train = list(cail.train) if cail is not None else []
    cases = list(judge.labels.cases) + cail_train
    t0 = time.perf_counter()
    lexical = LexicalVectors.fit([c.facts for c in cases]) if cail_train and neighbours == "lexical" else None
    seen = seen_by_judge_e5(judge.train_ids) if index is not None else set()
    model = build_structure(cases, judge, index, retriever, exclude=seen, select=False,
                            cite_cases=list(judge.labels.cases), lexical=lexical, progress=progress)
    model.skipped = [list(s) for s in judge.labels.skipped]
    encoder = getattr(first_stage(index, retriever, judge.data), "encoder", None) if index is not None else None
    rows: list[str] = []
    if cail_train and cail_rows == "all":
        rows = [c.id for c in cail_train]
    elif cail_train and cail_rows == "encoded":
        rows = cached_ids(cail_train, encoder)
    if max_cail_rows:  # balanced across main charges: the first cases of every charge, then the next ...
        rows = capped(rows, {c.id: c for c in cail_train}, max(len(rows), 1))[:max_cail_rows]
    model.train(progress=progress, partial_rows=rows)
    secs = time.perf_counter() - t0
    spec = index.component_params(retriever).get("encoder") if index is not None else None
    model.save(out, {
        "trained_on": f"JuDGE data/test.json, first {len(judge.labels.cases)} text_ids" + (
            f"; CAIL2018 training part ({len(cail_train)} cases, {cail.path.name})" if cail_train else ""),
        "n_judge_cases": len(judge.labels.cases), "n_cail_cases": len(cail_train),
        "cail_dropped_overlapping_judge_eval": cail.dropped if cail_train else None,
        "n_cail_cases_with_rows": len(rows), "train_seconds": round(secs, 1), "encoder_spec": spec,
        "excluded_from_set_model": len(seen), "command": command}, case_texts=case_texts)
    return model
