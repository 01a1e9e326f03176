"""A judgment structure model on disk: ``manifest.json``, ``cases.jsonl`` (the labelled cases, with their facts or,
for a shipped model, only their digests and circumstance keys), one LightGBM text file per model, the encoder's
neighbour vectors and the citation pipeline's own model directory. Written atomically; nothing is pickled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.boosting import FOLDS, PARAMS, ROUNDS, lightgbm
from legalrag.judgment.citesignal import build_cite
from legalrag.judgment.labels import LabelledCase
from legalrag.judgment.selection import REPEATS, TOL
from legalrag.types import Document

FORMAT = 4  # 2: defendant and charge-text columns, per-model feature groups; 3: article-derived charge and range
# columns, encoder neighbours, the citation model's memory and set decision; 4: charge-centroid columns, cases with
# partial labels (CAIL) and their lexical neighbours (lexical.json, complete_neighbours.npy)


def save_structure(model, path: str | Path, extra: Mapping[str, Any] | None = None, *, case_texts: bool = True) -> None:
    """``case_texts=False`` (a model that reads an encoder) keeps each labelled case's labels, the SHA-256 of
    its facts and the circumstance keys the tables count, not the facts: enough to predict, not to retrain."""
    from legalrag.io import atomic_dir

    if not case_texts and model.encoder is None:
        raise ValueError("only a structure model that reads an encoder can be saved without the case texts "
                         "(BM25 neighbours search the texts)")
    with atomic_dir(path) as tmp:
        manifest = {"format": FORMAT, "n_cases": len(model.cases), "disabled": sorted(model.disabled),
                    "columns": model.columns, "thresholds": model.thresholds, "cv_f1": model.cv_f1, "rounds": ROUNDS,
                    "params": PARAMS, "skipped": model.skipped, "uses_citepred": model.cite is not None,
                    "encoder": model.encoder.model_id if model.encoder is not None else None,
                    "lexical": model.lexical.model_id if model.lexical is not None else None,
                    "n_complete_cases": sum(1 for c in model.cases.values() if c.complete),
                    "law_candidates": bool(model.law_columns),
                    "model_groups": {k: list(v) for k, v in model.model_groups.items()},
                    "per_defendant": {"enabled": model.per_defendant_enabled, "models": model.per_defendant},
                    "partial_rows": {"n_cases": getattr(model, "n_partial_rows", 0),
                                     "used_by": getattr(model, "partial_use", {}),
                                     "cv": getattr(model, "partial_cv", {})},
                    "feature_selection": {"enabled": model.select, "folds": FOLDS, "repeats": REPEATS, "tol": TOL,
                                          "models": model.selection},
                    **(extra or {})}
        if model.cite is not None and hasattr(model.cite, "describe"):
            manifest["citepred"] = model.cite.describe()
        (tmp / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
        with (tmp / "cases.jsonl").open("w", encoding="utf-8") as fh:
            for c in model.cases.values():
                facts = {"facts": c.facts} if case_texts else {
                    "facts_sha256": model.neighbours.digests[c.id], "circumstances": model._circ_of[c.id]}
                fh.write(json.dumps({**c.to_dict(), **facts}, ensure_ascii=False) + "\n")
        for kind, booster in model.models.items():
            booster.save_model(str(tmp / f"{kind}.lgb.txt"))
        if model.encoder is not None:
            import numpy as np

            if model.lexical is not None:  # lexical vectors of all cases, held at float16 (candidates.py)
                model.lexical.save(tmp / "lexical.json")
                np.save(tmp / "neighbours.npy", model.neighbours.vectors.astype(np.float16), allow_pickle=False)
                np.save(tmp / "complete_neighbours.npy", model.complete_neighbours.vectors, allow_pickle=False)
            else:  # with partial-label cases (thousands) at float16, as candidates.py holds them
                vectors = model.neighbours.vectors
                np.save(tmp / "neighbours.npy", vectors.astype(np.float16) if model.partial else vectors,
                        allow_pickle=False)
        if model.cite is not None:
            from legalrag.citepredict.model import save_model

            save_model(tmp / "citepred", model.cite.rules, model.cite.graph, model.cite.config,
                       getattr(model.cite, "cases", None), getattr(model.cite, "set_model", None),
                       case_texts=case_texts)
            first = model.cite.predictor.retriever if hasattr(model.cite, "predictor") else model.cite.retriever
            if hasattr(first, "encoder"):  # a dense first stage: keep its article vectors
                first.save(tmp / "citepred-articles")


def load_structure(cls, path: str | Path, statutes: Sequence[Document], encoder=None):
    """``encoder``: the encoder the model was trained with, when its manifest names one (neighbours and a
    dense citation first stage read it)."""
    p = Path(path)
    man_path = p / "manifest.json"
    if not man_path.exists():
        raise InputError("not a judgment structure model (manifest.json missing); train one with "
                         "`legalrag train judge-structure`", path=str(p))
    man = json.loads(man_path.read_text(encoding="utf-8"))
    if man.get("format") not in (3, FORMAT):
        raise InputError(f"model format {man.get('format')} is not {FORMAT}; retrain it", path=str(man_path))
    wanted = man.get("encoder")
    if wanted and (encoder is None or encoder.model_id != wanted):
        got = "none" if encoder is None else repr(encoder.model_id)
        raise InputError(f"this structure model reads encoder {wanted!r} (got {got}); pass --encoder with that "
                         "encoder's directory", path=str(man_path))
    cases, digests, circumstances = [], {}, {}
    from legalrag.io import read_jsonl

    for line, r in read_jsonl(p / "cases.jsonl"):
        try:
            cases.append(LabelledCase(r["id"], r.get("facts", ""), tuple(r["charges"]), tuple(r["articles"]),
                                      r["prison_months"], r["fine_yuan"], r["probation"],
                                      tuple(tuple(d) for d in r.get("defendants", ())), r.get("source", "judge")))
            if "facts" not in r:  # saved without the case texts
                digests[r["id"]], circumstances[r["id"]] = r["facts_sha256"], r["circumstances"]
        except KeyError as exc:
            raise InputError(f"missing field {exc.args[0]!r}; the model is damaged: retrain or restore it",
                             path=str(p / "cases.jsonl"), line=line) from None
    if digests and (len(digests) != len(cases) or not wanted):
        raise InputError("cases saved without their facts need every case's digest and the encoder's saved "
                         "neighbour vectors; the model is damaged: retrain or restore it",
                         path=str(p / "cases.jsonl"))
    cite = None
    if man.get("uses_citepred") and (p / "citepred").is_dir():
        cite = build_cite(statutes, model_dir=p / "citepred", encoder=encoder,
                          articles_dir=p / "citepred-articles")
    vectors = lexical = lexical_vectors = None
    if wanted:
        import numpy as np

        vectors = np.load(p / "neighbours.npy", allow_pickle=False)
        if (p / "lexical.json").exists():
            from legalrag.judgment.lexvec import LexicalVectors

            lexical, lexical_vectors = LexicalVectors.load(p / "lexical.json"), vectors
            vectors = np.load(p / "complete_neighbours.npy", allow_pickle=False)
            if lexical.model_id != man.get("lexical"):
                raise InputError("lexical.json does not match the manifest; the model is damaged: retrain or "
                                 "restore it", path=str(p / "lexical.json"))
    model = cls(cases, statutes, cite=cite, disabled=man.get("disabled", ()),
               select=man.get("feature_selection", {}).get("enabled", False), encoder=encoder if wanted else None,
               neighbour_vectors=vectors, digests=digests or None, circumstances=circumstances or None,
               lexical=lexical, lexical_vectors=lexical_vectors)
    model.centroid_columns = man["format"] >= 4
    if man.get("law_candidates"):  # a charge model trained on the catalogue's law-text candidates
        if encoder is None:
            raise InputError("this structure model proposes charges from their law text with its encoder; load it "
                             "with the encoder its manifest names", path=str(p))
        from legalrag.judgment.law_candidates import LawCandidates

        model.law, model.law_columns = LawCandidates(encoder, known=model.charge_counts), True
    model.model_groups = {k: tuple(v) for k, v in man.get("model_groups", {}).items()}
    model.selection = man.get("feature_selection", {}).get("models", {})
    model.per_defendant = man.get("per_defendant", {}).get("models", {})
    model.per_defendant_enabled = man.get("per_defendant", {}).get("enabled", False)
    lgb = lightgbm()
    for f in p.glob("*.lgb.txt"):
        model.models[f.name[: -len(".lgb.txt")]] = lgb.Booster(model_file=str(f))
    model.thresholds = {k: float(v) for k, v in man["thresholds"].items()}
    model.skipped = [tuple(s) for s in man.get("skipped", [])]
    return model
