"""``legalrag judgment predict / draft`` (the JuDGE metrics, ``eval judgment``, are in cli/eval/judgment.py).

Paths that are not given as options come from the saved settings (``legalrag config show``):
``judgment.law_corpus`` (statute corpus JSONL, e.g. JuDGE's ``data/law_corpus.jsonl``; ``$LEGALRAG_LAW_CORPUS``),
``judgment.model`` (a structure model directory written by ``legalrag train judge-structure``, or a shipped one's name;
``$LEGALRAG_JUDGMENT_MODEL``) and ``judgment.encoder`` (``$LEGALRAG_JUDGMENT_ENCODER``: the encoder of a structure
model trained on an encoder's signal). The LLM is ``--model SPEC``, built through the command's ``wiring.Root``.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import DraftOptions, option_list, parse_options
from legalrag.cli.apps import judgment_app
from legalrag.cli.common import ACTS_AS_OF_HELP, JsonOption, LLMOption, make_llm, print_json, root


LAW_CORPUS_HELP = ("Statute corpus JSONL (STARD or JuDGE shape; default: the judgment.law_corpus setting, "
                   "$LEGALRAG_LAW_CORPUS, else the criminal law of the national-law data shipped with legalrag).")
CHECK_CHARGES_HELP = ("Where the structure model is not confident about the charge, the LLM (--model) "
                      "reads the facts and names it; its reply and the model's choice are kept in the evidence.")
MODEL_DIR_HELP = ("Structure model: a directory from `legalrag train judge-structure` or the name of a shipped one (default: "
                  "the judgment.model setting, $LEGALRAG_JUDGMENT_MODEL, else the shipped judge-structure).")
SHIPPED_STRUCTURE = "judge-structure"


def _versions(as_of: Optional[str]):
    """The checked ``--as-of`` and the versions of the national law (None when none are installed: a one-line
    notice on standard error)."""
    from legalrag.cli.law import default_library
    from legalrag.laws.versions import check_day

    day = check_day(as_of) if as_of else None
    library = default_library()
    if library is None:
        from legalrag.judgment.temporal import NO_VERSIONS

        typer.echo(NO_VERSIONS, err=True)
    return day, library


def structure_model_dir(model_dir: Optional[Path]) -> Optional[Path]:
    """``--model-dir`` as given (a directory, or the name of a shipped judgment model, its files checked); without
    it the shipped ``judge-structure`` model when this install carries it, else None."""
    from legalrag.shipped import model_dir as resolve

    return resolve(model_dir, "judgment-model", default=SHIPPED_STRUCTURE)


def _need(path: Optional[Path], what: str) -> Path:
    from legalrag.errors import InputError

    if path is None:
        raise InputError(f"no {what} given; pass the option or set its environment variable (see --help)")
    return path


@judgment_app.command("predict")
def predict(
    ctx: typer.Context,
    facts: Optional[str] = typer.Option(None, "--facts", help="One case: a text file path or the facts themselves."),
    cases: Optional[Path] = typer.Option(None, "--cases", help="Many cases: JSONL {text_id|id, text|facts}."),
    skip_first: int = typer.Option(0, "--skip", min=0, help="With --cases: leave out the first N ids in sorted "
                                                           "order (the training cases)."),
    out: Optional[Path] = typer.Option(None, "--out", help="With --cases: write JSONL {id, document, structure} "
                                                           "here (scorable with `legalrag eval judgment`)."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=MODEL_DIR_HELP),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus", help=LAW_CORPUS_HELP),
    check_charges: bool = typer.Option(False, "--check-charges", help=CHECK_CHARGES_HELP),
    as_of: Optional[str] = typer.Option(None, "--as-of", help=ACTS_AS_OF_HELP),
    model: LLMOption = None,
) -> None:
    """Predict the structure of the judgment (charges, articles, term, fine, probation) with its evidence, as JSON."""
    from legalrag.errors import InputError
    from legalrag.judgment.draft import read_facts

    if (facts is None) == (cases is None):
        raise InputError("pass exactly one of --facts (one case) or --cases (a JSONL file)")
    if not check_charges and model:
        raise InputError("--model chooses the LLM of --check-charges; add --check-charges")
    day, library = _versions(as_of)
    from legalrag.wiring.judgment import judgment_predictor, predict_judgment, predict_judgments

    predictor = judgment_predictor(root(ctx), _need(structure_model_dir(root(ctx).judgment_model(model_dir)),
                                                    "model directory"),
                                   root(ctx).law_corpus(law_corpus), progress=True)
    reader = None
    if check_charges:
        from legalrag.judgment.charge_llm import ChargeReader

        reader = ChargeReader(make_llm(ctx, model))
    if facts is not None:
        print_json(predict_judgment(predictor, read_facts(facts), library, as_of=day, charge_reader=reader).to_dict())
        return
    rows = predict_judgments(predictor, cases, library, as_of=day, skip_first=skip_first, progress=out is not None,
                             charge_reader=reader)
    if out is None:
        for row in rows:
            print_json(row)
        return
    from legalrag.io import write_jsonl

    rows = list(rows)
    write_jsonl(out, rows)
    low = sum(1 for r in rows if r["structure"] and r["structure"]["low_confidence"])
    typer.echo(f"{len(rows)} predictions written to {out} ({low} with low confidence)")


@judgment_app.command("draft")
def draft(
    ctx: typer.Context,
    facts: str = typer.Option(..., "--facts", help="Case facts: a text file path or the text itself."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir",
                                             help=MODEL_DIR_HELP + " The structure model decides the judgment and "
                                                  "the LLM writes only the reasoning; -o free=true lets the LLM "
                                                  "draft it all."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus", help=LAW_CORPUS_HELP),
    no_llm: bool = typer.Option(False, "--no-llm", help="With a structure model: a template reasoning, no model."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    check_charges: bool = typer.Option(False, "--check-charges", help="With --model-dir: " + CHECK_CHARGES_HELP),
    as_of: Optional[str] = typer.Option(None, "--as-of", help=ACTS_AS_OF_HELP),
    option: List[str] = option_list(DraftOptions, "Free drafting and the length, KEY=VALUE, repeatable"),
) -> None:
    """Draft a complete criminal judgment from case facts."""
    o = parse_options(DraftOptions, option)
    free, max_tokens = o.free, o.max_tokens
    case_corpus = Path(o.case_corpus) if o.case_corpus else None
    from legalrag.errors import InputError
    from legalrag.judgment.draft import read_facts
    from legalrag.wiring.judgment import draft_judgment

    text = read_facts(facts)
    day, library = _versions(as_of)
    if free and model_dir is not None:
        raise InputError("-o free=true drafts without a structure model; leave out --model-dir (or free)",
                         field="free")
    model_dir = None if free else structure_model_dir(root(ctx).judgment_model(model_dir))
    law_corpus = root(ctx).law_corpus(law_corpus)
    if model_dir is None and no_llm:
        raise InputError("--no-llm needs a structure model (the one that decides the judgment): pass --model-dir "
                         "or leave out -o free=true" if free else "--no-llm needs --model-dir (no structure model ships "
                         "with this install)")
    if check_charges and (model_dir is None or no_llm):
        raise InputError("--check-charges needs a structure model and an LLM (leave out --no-llm and -o free=true)")
    llm = None
    if not no_llm:
        llm = make_llm(ctx, model)
    res = draft_judgment(root(ctx), text, llm, model_dir, law_corpus=law_corpus, case_corpus=case_corpus,
                         max_tokens=max_tokens, check_charges=check_charges, stream=not as_json, progress=True,
                         library=library, as_of=day)
    if as_json:
        print_json(res.to_dict())
        return
    if model_dir is None:  # the free drafter streamed its text as it wrote it; the 第十二条 statement follows
        if res.law_versions.statement():
            typer.echo(res.law_versions.statement())
        _print_versions(res.law_versions)
        return
    typer.echo(res.document)
    from rich.console import Console

    console = Console(stderr=True)
    s = res.structure
    console.print(f"[bold]charges[/bold] {', '.join(s.charge_names)}  [bold]articles[/bold] "
                  f"{', '.join(map(str, s.article_numbers))}  [bold]prison[/bold] {s.prison.value} months  "
                  f"[bold]fine[/bold] {s.fine.value or '-'}  [bold]probation[/bold] {bool(s.probation.value)}  "
                  f"(reasoning: {res.source})")
    if res.disagreement:
        console.print(f"[yellow]the model disagrees on {res.disagreement['field']}: {res.disagreement['reason']}[/yellow]")
    for note in res.notes:
        console.print(f"[yellow]{note}[/yellow]")
    _print_versions(res.law_versions)


def _print_versions(versions) -> None:
    """The version applied to each article (刑法第十二条), on standard error."""
    if versions is None or versions.notice:  # the notice was printed when the versions were looked for
        return
    for line in versions.lines():
        typer.echo(line, err=True)
