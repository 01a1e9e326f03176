"""File-level entry points for ``legalrag judgment predict``: paths in, JSONL out (a structure model is trained
by its recipe, ``legalrag.training.recipes.judge_structure`` / ``legalrag train judge-structure``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from legalrag.errors import InputError
from legalrag.judgment.labels import load_facts
from legalrag.judgment.predict import StructurePredictor


def load_statutes_file(law_corpus: str | Path):
    from legalrag.corpora.statutes import load_statutes

    p = Path(law_corpus)
    if not p.exists():
        raise InputError("statute corpus not found; pass --law-corpus FILE (JSONL of articles) or set "
                         "LEGALRAG_LAW_CORPUS", path=str(p))
    return load_statutes(p)


def predict_file(model: StructurePredictor, cases_path: str | Path, *, skip_first: int = 0,
                 progress: bool = False, charge_reader=None, versions=None) -> Iterator[dict]:
    """One ``{id, document, structure}`` per case of ``cases_path`` (after the first ``skip_first`` ids in sorted
    order, so the training cases can be left out); the document states the structure in the court's format.
    ``charge_reader`` (a ``charge_llm.ChargeReader``) checks the low-confidence charges. ``versions`` (``(facts,
    structure) -> dict``, e.g. ``temporal.apply_to_structure``'s dict) adds each row's ``law_versions``; the
    document is left as the structure states it."""
    from legalrag.judgment.compose import compose_document, template_reasoning

    facts = load_facts(cases_path)
    ids = sorted(facts)[skip_first:]
    if progress:
        from tqdm import tqdm

        ids = tqdm(ids, desc="predicting", unit="case")
    for case_id in ids:
        if not facts[case_id].strip():
            yield {"id": case_id, "document": None, "structure": None, "error": "empty facts"}
            continue
        s = model.predict(facts[case_id], case_id, charge_reader=charge_reader)
        row = {"id": case_id, "document": compose_document(facts[case_id], template_reasoning(s), s),
               "structure": s.to_dict()}
        if versions is not None:
            row["law_versions"] = versions(facts[case_id], s)
        yield row
