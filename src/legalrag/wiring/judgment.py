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
