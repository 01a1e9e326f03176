"""`legalrag train cail-split / judge-structure / judge-cite`: the judgment models' recipes
(``legalrag.training.recipes``), on JuDGE's first 200 cases and the CAIL2018 training part."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import CailSplitOptions, JudgeCiteOptions, JudgeStructureOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import IndexOption, ProgressOption, root
from legalrag.cli.train._common import command_line


JUDGE_DATA_HELP = ("JuDGE folder: data/test.json, expected.jsonl, data/law_corpus.jsonl, data/qrels_file_train "
                   "(e.g. $LEGALRAG_DATA/judge).")
CAIL_HELP = "CAIL2018 folder (data_train.jsonl, data_test.jsonl; e.g. $LEGALRAG_DATA/cail2018)."
SPLIT_HELP = "The CAIL split (`legalrag train cail-split`); with --cail, its training part joins the cases."
JUDGE_INDEX_HELP = ("Index over the statutes with the first stage's component (built with --encoder judge-e5, as "
                    "shipped).")
JUDGE_RETRIEVER_HELP = "Its component: the citation first stage and the encoder of similar cases."


def _judge(data: Path, cail: Optional[Path], split: Optional[Path]):
    from legalrag.errors import InputError
    from legalrag.training.recipes import load_cail_split, load_judge

    if (cail is None) != (split is None):
        raise InputError("--cail and --cail-split go together (the CAIL folder and its split); give both or "
                         "neither")
    judge = load_judge(data)
    return judge, (load_cail_split(cail, split, judge) if cail is not None else None)


@train_app.command("cail-split")
def train_cail_split(ctx: typer.Context,
                     data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
                     cail: Path = typer.Option(..., "--cail", help=CAIL_HELP),
                     out: Path = typer.Option(..., "--out", help="The split file to write (JSON)."),
                     encode: bool = typer.Option(False, "--encode", help="Encode the CAIL facts with judge-e5 into "
                                                 "the vector cache (the hold-out sample of -o sample cases per main "
                                                 "charge, then the training part in rounds over the main charges)."),
                     option: List[str] = option_list(CailSplitOptions, "What --encode encodes, KEY=VALUE, "
                                                                       "repeatable")) -> None:
    """Split CAIL2018 for the judgment recipes: unusable lines listed, cases overlapping a JuDGE evaluation case
    dropped, a hold-out of 20% per main charge set apart before anything is trained."""
    import json
    import time

    from legalrag.io import atomic_write_text
    from legalrag.training.recipes import load_judge, prepare_cail_split
    from legalrag.training.recipes.judge_data import capped

    opts = parse_options(CailSplitOptions, option)
    sample, encode_train, encoder = opts.sample, opts.encode_train, opts.encoder
    judge = load_judge(data)
    split = {**prepare_cail_split(cail, judge), "command": command_line(ctx)}
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(split, ensure_ascii=False, indent=1))
    typer.echo(f"wrote {out}: {split['cases']} cases ({split['train']} training, {split['holdout']} hold-out over "
               f"{split['holdout_charges']} charges); {len(split['skipped'])} lines skipped, "
               f"{len(split['dropped_overlapping_judge_eval'])} overlapping JuDGE evaluation cases dropped")
    if encode:
        from legalrag.judgment.cail import load_cail
        from legalrag.judgment.signals import DENSE_CHARS
        from legalrag.training.recipes.judge_data import CAIL_FILES

        by_id = {c.id: c for c in load_cail([cail / f for f in CAIL_FILES]).cases}
        enc = root(ctx).make_encoder(encoder, progress=False)
        order = (capped(split["holdout_ids"], by_id, sample)
                 + capped(split["train_ids"], by_id, len(split["train_ids"]))[: encode_train or None])
        t0 = time.perf_counter()
        for k in range(0, len(order), 32):  # each batch is committed to the cache: an interrupted run resumes
            enc.encode_queries([by_id[i].facts[:DENSE_CHARS] for i in order[k:k + 32]])
            typer.echo(f"encoded {min(k + 32, len(order))}/{len(order)} in {time.perf_counter() - t0:.0f} s", err=True)


@train_app.command("judge-structure")
def train_judge_structure(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
    out: Path = typer.Option(..., "--out", help="Model directory to write (replaced atomically)."),
    index: Optional[Path] = typer.Option(None, "--index", help=JUDGE_INDEX_HELP + " Without it: the BM25 "
                                         "citation signal and BM25 neighbours."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help=JUDGE_RETRIEVER_HELP),
    cail: Optional[Path] = typer.Option(None, "--cail", help=CAIL_HELP),
    split: Optional[Path] = typer.Option(None, "--cail-split", help=SPLIT_HELP),
    progress: ProgressOption = True,
    option: List[str] = option_list(JudgeStructureOptions, "The recipe's settings, KEY=VALUE, repeatable"),
    law_model: bool = typer.Option(True, "--law-model/--no-law-model", help="Add the law-text charge model that "
                                   "decides the charges no training case carries (needs --index's encoder; as "
                                   "shipped)."),
) -> None:
    """The judge-structure model's recipe: charges, articles, prison, fine and probation models trained on JuDGE's
    first 200 cases (and the CAIL2018 training part), with the citation signal of --retriever."""
    from legalrag.training.recipes import judge_structure

    opts = parse_options(JudgeStructureOptions, option)
    judge, cail_split = _judge(data, cail, split)
    idx = root(ctx).index(index) if index is not None else None
    model = judge_structure(judge, out, index=idx, retriever=retriever, cail=cail_split, **opts.model_dump(),
                            command=command_line(ctx), progress=progress)
    if law_model and model.encoder is not None:
        add_law_to_saved(model, judge, out, progress)
    typer.echo(f"trained on {len(model.cases)} cases ({len(model.skipped)} skipped: judgment unreadable); "
               f"thresholds {model.thresholds}; saved to {out}")


@train_app.command("judge-cite")
def train_judge_cite(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
    out: Path = typer.Option(..., "--out", help="Citation model directory to write (replaced atomically)."),
    index: IndexOption = None,
    retriever: str = typer.Option(..., "--retriever", help=JUDGE_RETRIEVER_HELP),
    cail: Optional[Path] = typer.Option(None, "--cail", help=CAIL_HELP),
    split: Optional[Path] = typer.Option(None, "--cail-split", help=SPLIT_HELP),
    progress: ProgressOption = True,
    option: List[str] = option_list(JudgeCiteOptions, "The recipe's settings, KEY=VALUE, repeatable"),
) -> None:
    """The judge-cite model's recipe: rules, co-citation and similar cases calibrated on JuDGE's first 200 cases,
    with the CAIL2018 training part in the case memory."""
    from legalrag.training.recipes import judge_cite

    opts = parse_options(JudgeCiteOptions, option)
    stage = opts.stage
    judge, cail_split = _judge(data, cail, split)
    idx = root(ctx).index(root(ctx).index_path(index))
    res = judge_cite(judge, idx, retriever, out, cail=cail_split, **opts.model_dump(), progress=progress)
    typer.echo(f"trained on {len(res.train_cases)} cases ({len(cail_split.train) if cail_split else 0} CAIL cases in "
               f"the memory); set model depth {res.set_model.depth}; saved {stage} with threshold "
               f"{res.saved_threshold} to {out}")


@train_app.command("judge-structure-law")
def train_judge_structure_law(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
    model: str = typer.Option("judge-structure", "--model", help="The structure model to extend: a model "
                              "directory or a shipped model's name."),
    out: Path = typer.Option(..., "--out", help="Model directory to write (replaced atomically)."),
    gate: Optional[float] = typer.Option(None, "--gate", help="Least probability of an unseen charge."),
    margin: Optional[float] = typer.Option(None, "--margin", help="How far an unseen charge must outrank every "
                                           "seen one to replace the top charge."),
    add_gate: Optional[float] = typer.Option(None, "--add-gate", help="Least probability to add an unseen charge "
                                             "that does not replace the top one (above 1: never)."),
    progress: ProgressOption = True,
) -> None:
    """Add the law-text charge model to a judge-structure model (``judgment.charge_decision``): its charge model
    keeps deciding the charges seen in training, the new one (fitted on JuDGE's first 200 cases over the charge
    catalogue's law-text candidates) decides only the charges no training case carries."""
    import json

    from legalrag.judgment.law_candidates import LawCandidates
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.shipped import model_dir
    from legalrag.wiring import make_encoder

    judge = load_judge_only(data)
    path = model_dir(model, "judgment-model")
    man = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    encoder = make_encoder(man.get("encoder_spec")) if man.get("encoder") else None
    if encoder is None:
        from legalrag.errors import InputError

        raise InputError("the law-text candidates need the structure model's encoder; this model has none",
                         path=str(path))
    predictor = StructurePredictor.load(path, judge.statutes, encoder)
    predictor.add_law_model(LawCandidates(encoder, known=predictor.charge_counts), judge.facts, progress,
                            gate=gate, margin=margin, add_gate=add_gate)
    keep = {k: man[k] for k in ("trained_on", "n_judge_cases", "n_cail_cases", "cail_dropped_overlapping_judge_eval",
                                "n_cail_cases_with_rows", "train_seconds", "encoder_spec", "excluded_from_set_model",
                                "command", "partial_rows", "citepred") if k in man}
    keep["cv_f1"] = {**man.get("cv_f1", {}), **predictor.cv_f1}
    predictor.save(out, keep,
                   case_texts=False)
    saved = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    if saved.get("citepred") is None and man.get("citepred") is not None:  # a loaded pipeline has no CV record
        tmp = out / "manifest.json.tmp"
        tmp.write_text(json.dumps({**saved, "citepred": man["citepred"]}, ensure_ascii=False, indent=2),
                       encoding="utf-8")
        tmp.replace(out / "manifest.json")
    typer.echo(f"law-text charge model added (CV F1 {predictor.cv_f1['charge_law']:.4f}); thresholds "
               f"{ {k: v for k, v in predictor.thresholds.items() if k.startswith('charge_law')} }; saved to {out}")


def load_judge_only(data: Path):
    from legalrag.training.recipes import load_judge

    return load_judge(data)


def add_law_to_saved(model, judge, out: Path, progress: bool = False) -> None:
    """Fit the law-text charge model beside ``model``'s (saved in ``out``) and write it there: its LightGBM
    file and its thresholds and CV F1 in the manifest, each file replaced atomically."""
    import json

    from legalrag.judgment.law_candidates import LawCandidates

    model.add_law_model(LawCandidates(model.encoder, known=model.charge_counts), judge.facts, progress)
    tmp = out / "charge_law.lgb.txt.tmp"
    model.models["charge_law"].save_model(str(tmp))
    tmp.replace(out / "charge_law.lgb.txt")
    man = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    man["thresholds"], man["cv_f1"] = {**man["thresholds"], **model.thresholds}, {**man["cv_f1"], **model.cv_f1}
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(man, ensure_ascii=False, indent=2), encoding="utf-8")
    tmp.replace(out / "manifest.json")
