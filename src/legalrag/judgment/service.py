"""File-level entry points for ``legalrag judgment train / predict``: paths in, a model directory or JSONL out."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

from legalrag.errors import InputError
from legalrag.judgment.citesignal import build_cite
from legalrag.judgment.labels import label_cases, load_facts, split_by_id
from legalrag.judgment.predict import StructurePredictor


def load_statutes_file(law_corpus: str | Path):
    from legalrag.corpora.statutes import load_statutes

    p = Path(law_corpus)
    if not p.exists():
        raise InputError("statute corpus not found; pass --law-corpus FILE (JSONL of articles) or set "
                         "LEGALRAG_LAW_CORPUS", path=str(p))
    return load_statutes(p)


def train_from_files(facts_path: str | Path, judgments_path: str | Path, law_corpus: str | Path, out: str | Path,
                     *, train_citations: str | Path | None = None, first: int | None = None,
                     disabled: Sequence[str] = (), progress: bool = False, select: bool = True,
                     per_defendant: bool = True) -> StructurePredictor:
    """Train on the labelled cases (the first ``first`` ids in sorted order, or all) and save to ``out``.

    Cases whose judgment cannot be read (no charge or no sentence) are skipped; the skipped ids and reasons are
    kept in the model's manifest."""
    from legalrag.judgment.io import load_judgments

    facts = load_facts(facts_path)
    judgments = load_judgments(judgments_path, strict=False)
    ids = [i for i in facts if i in judgments]
    if not ids:
        raise InputError("no case id is in both files; the facts and the judgments must share ids",
                         path=str(judgments_path))
    train_ids = split_by_id(ids, first)[0] if first else sorted(ids)
    labels = label_cases(facts, judgments, train_ids)
    statutes = load_statutes_file(law_corpus)
    cite = build_cite(statutes, train_citations=train_citations) if train_citations else None
    model = StructurePredictor(labels.cases, statutes, cite=cite, disabled=disabled, select=select,
                               per_defendant=per_defendant)
    model.skipped = [list(s) for s in labels.skipped]
    model.train(progress=progress)
    model.save(out, {"trained_on": {"facts": Path(facts_path).name, "judgments": Path(judgments_path).name,
                                    "first": first, "ids": len(train_ids)}})
    return model


def predict_file(model: StructurePredictor, cases_path: str | Path, *, skip_first: int = 0,
                 progress: bool = False, charge_reader=None) -> Iterator[dict]:
    """One ``{id, document, structure}`` per case of ``cases_path`` (after the first ``skip_first`` ids in sorted
    order, so the training cases can be left out); the document states the structure in the court's format.
    ``charge_reader`` (a ``charge_llm.ChargeReader``) checks the low-confidence charges."""
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
        yield {"id": case_id, "document": compose_document(facts[case_id], template_reasoning(s), s),
               "structure": s.to_dict()}
