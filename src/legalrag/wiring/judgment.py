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
                   threads: int | None = None, progress: bool = False, library: Any = None,
                   as_of: str | None = None):
    """``legalrag judgment draft`` and ``Legalrag.draft``: with a structure model (``structure_dir``) it decides
    charges, articles, term and fine and ``llm`` writes only the reasoning (``llm=None``: a template reasoning), a
    :class:`~legalrag.judgment.reasoned.ReasonedDraft`; without one ``llm`` drafts the whole judgment freely, a
    :class:`~legalrag.judgment.draft.DraftResult`. The statutes are :func:`law_statutes` of ``law_corpus``.

    Each Criminal Law article the draft applies is then read in the version in force at the acts (``as_of``,
    YYYY-MM-DD, else the dates the facts state) over ``library`` (a ``laws.versions.Library``; None: none is
    installed, and ``law_versions`` carries the notice), with the 刑法第十二条 statement in the reasoning
    (:func:`legalrag.judgment.temporal.apply_to_draft`). The callers check their own options first (they name
    them as their users write them); a bad ``as_of`` is an error before anything loads."""
    from legalrag.judgment.temporal import apply_to_draft

    day = as_of_day(as_of)
    statutes = law_statutes(root, law_corpus, threads=threads, progress=progress)
    if structure_dir is None:
        from legalrag.judgment.draft import draft_from_cli

        res = draft_from_cli(text, llm, law_corpus=statutes, case_corpus=Path(case_corpus) if case_corpus else None,
                             stream=stream, max_tokens=max_tokens)
        return apply_to_draft(res, text, library, as_of=day)
    from legalrag.judgment.charge_llm import ChargeReader
    from legalrag.judgment.reasoned import ReasonedDrafter

    predictor = structure_model(structure_dir, statutes, root.settings.judgment_encoder, settings=root.settings)
    res = ReasonedDrafter(predictor, llm, max_tokens=min(max_tokens, 500),
                          charge_reader=ChargeReader(llm) if check_charges else None).draft(text)
    return apply_to_draft(res, text, library, as_of=day, proposed=proposed_articles(root, text, library))


def proposed_articles(root: Any, text: str, library: Any, k: int = 3) -> list[str]:
    """The Criminal Law articles of the ``k`` charges whose law text the facts match best (the charge catalogue's
    law search, ``judgment.law_candidates``, with the shipped judge-e5), for a draft to flag the ones it does not
    apply whose text changed since the acts; empty without versions."""
    if library is None:
        return []
    from legalrag.judgment.law_candidates import LawCandidates

    encoder = make_encoder(root.settings.judgment_encoder or "judge-e5", settings=root.settings)
    return [c.article for c in LawCandidates(encoder).propose(text, k=k) if c.article]


def structure_dir(root: Any, model_dir: str | Path | None, default: str | None = None) -> Path | None:
    """``model_dir`` (else the judgment.model setting) as a directory, a shipped model's name resolved and its
    files checked; neither given: the shipped model ``default`` when this install carries it, else None."""
    from legalrag.shipped import model_dir as resolve

    return resolve(root.judgment_model(model_dir), "judgment-model", default=default)


def installed_versions() -> Any:
    """The versions of the national law shipped with legalrag (``national_versions.law_library``), None when
    they are not installed (a draft's ``law_versions`` then carries the notice)."""
    from legalrag.national_versions import law_library

    try:
        return law_library()
    except InputError:
        return None


def judgment_predictor(root: Any, model_dir: str | Path, law_corpus: str | Path | None = None, *,
                       threads: int | None = None, progress: bool = False):
    """The structure model of ``model_dir`` over :func:`law_statutes` of ``law_corpus``, with the encoder of the
    judgment.encoder setting (else its manifest's): what ``judgment predict`` and ``Legalrag.predict`` run."""
    return structure_model(model_dir, law_statutes(root, law_corpus, threads=threads, progress=progress),
                           root.settings.judgment_encoder, settings=root.settings)


def predict_judgment(predictor: Any, text: str, library: Any, *, as_of: str | None = None,
                     charge_reader: Any = None):
    """One case: the structure ``predictor`` (:func:`judgment_predictor`) predicts for ``text`` and the version
    of each article applied over ``library`` at the acts (``as_of``, else the facts' dates), a
    :class:`~legalrag.judgment.temporal.DatedPrediction`."""
    from legalrag.judgment.temporal import predict_dated

    return predict_dated(predictor, text, library, as_of=as_of, charge_reader=charge_reader)


def predict_judgments(predictor: Any, cases: str | Path, library: Any, *, as_of: str | None = None,
                      skip_first: int = 0, progress: bool = False, charge_reader: Any = None):
    """Many cases (a JSONL of ``{text_id|id, text|facts}``): one ``{id, document, structure, law_versions}``
    row each (``judgment.service.predict_file``), the versions as :func:`predict_judgment` decides them."""
    from legalrag.judgment.service import predict_file
    from legalrag.judgment.temporal import apply_to_structure

    day = as_of_day(as_of)

    def versions(facts: str, structure: Any) -> dict:
        return apply_to_structure(structure, facts, library, as_of=day).to_dict()

    return predict_file(predictor, cases, skip_first=skip_first, progress=progress, charge_reader=charge_reader,
                        versions=versions)


def as_of_day(as_of: str | None) -> str | None:
    """``as_of`` checked (``laws.versions.check_day``: an InputError naming as_of), None when not given."""
    from legalrag.laws.versions import check_day

    return check_day(as_of) if as_of else None
