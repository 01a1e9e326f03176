"""The judgment models' collaborators, from the names a user gives: the statutes they decide over and the
structure model with its encoder. ``legalrag judgment``, ``legalrag serve``, ``legalrag mcp`` and
``Legalrag.draft`` build them here. Not re-exported by :mod:`legalrag.wiring`, so that a command that drafts
nothing (``ask``, ``chat``) does not reach the judgment package through the composition root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.wiring.encoders import make_encoder


def law_statutes(root: Any, law_corpus: str | Path | None = None, *, threads: int | None = None,
                 progress: bool = False) -> list:
    """The statutes the judgment models decide over: ``law_corpus`` (a JSONL of articles) when given, else the
    criminal law of the national-law data shipped with legalrag, opened by ``root`` (a
    :class:`~legalrag.wiring.Root`); an install without that data needs the file."""
    from legalrag.judgment.service import load_statutes_file

    if law_corpus is not None:
        return list(load_statutes_file(law_corpus))
    from legalrag.national import CRIMINAL_LAW

    index = root.index(laws=[CRIMINAL_LAW], threads=threads, progress=progress)
    if index is None:
        raise InputError("no statute corpus: this install has no national-law data; pass --law-corpus FILE (a "
                         "JSONL of articles) or set judgment.law_corpus", field="law_corpus")
    return list(index.documents)


def structure_model(model_dir: str | Path, statutes: Any, encoder: str | None = None, *, settings: Any = None):
    """The judgment structure model of ``model_dir`` over ``statutes`` (documents, or a corpus file), with the
    encoder its manifest names (``encoder``, e.g. the judgment.encoder setting, replaces that spec)."""
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.service import load_statutes_file

    if isinstance(statutes, (str, Path)):
        statutes = load_statutes_file(statutes)
    manifest = Path(model_dir) / "manifest.json"
    enc = None
    if manifest.is_file():
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        if meta.get("encoder"):
            enc = make_encoder(encoder or meta.get("encoder_spec") or meta["encoder"], settings=settings)
    return StructurePredictor.load(Path(model_dir), statutes, enc)


def draft_judgment(root: Any, text: str, llm: Any, structure_dir: str | Path | None, *,
                   law_corpus: str | Path | None = None, case_corpus: str | Path | None = None,
                   max_tokens: int = 500, check_charges: bool = False, stream: bool = False,
                   threads: int | None = None, progress: bool = False):
    """``legalrag judgment draft`` and ``Legalrag.draft``: with a structure model (``structure_dir``) it decides
    charges, articles, term and fine and ``llm`` writes only the reasoning (``llm=None``: a template reasoning), a
    :class:`~legalrag.judgment.reasoned.ReasonedDraft`; without one ``llm`` drafts the whole judgment freely, a
    :class:`~legalrag.judgment.draft.DraftResult`. The statutes are :func:`law_statutes` of ``law_corpus``. The
    callers check their own options first (they name them as their users write them)."""
    statutes = law_statutes(root, law_corpus, threads=threads, progress=progress)
    if structure_dir is None:
        from legalrag.judgment.draft import draft_from_cli

        return draft_from_cli(text, llm, law_corpus=statutes, case_corpus=Path(case_corpus) if case_corpus else None,
                              stream=stream, max_tokens=max_tokens)
    from legalrag.judgment.charge_llm import ChargeReader
    from legalrag.judgment.reasoned import ReasonedDrafter

    predictor = structure_model(structure_dir, statutes, root.settings.judgment_encoder, settings=root.settings)
    return ReasonedDrafter(predictor, llm, max_tokens=min(max_tokens, 500),
                           charge_reader=ChargeReader(llm) if check_charges else None).draft(text)
