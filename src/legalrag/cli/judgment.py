"""``legalrag eval judgment`` (JuDGE metrics) and ``legalrag judgment train / predict / draft``.

Paths that are not given as options come from the saved settings (``legalrag config show``):
``judgment.law_corpus`` (statute corpus JSONL, e.g. JuDGE's ``data/law_corpus.jsonl``; ``$LEGALRAG_LAW_CORPUS``),
``judgment.model`` (a structure model directory written by ``legalrag judgment train``, or a shipped one's name;
``$LEGALRAG_JUDGMENT_MODEL``) and ``judgment.encoder`` (``$LEGALRAG_JUDGMENT_ENCODER``). The LLM is built through the command's ``wiring.Root``
(``root(ctx).make_llm``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import eval_app, judgment_app
from legalrag.cli.common import (EndpointModelOption, EndpointOption, JsonOption, ModelOption, ThreadsOption,
                                 print_json, renamed, root)


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


@eval_app.command("judgment")
def eval_judgment(
    pred: Path = typer.Option(..., "--pred", help="Generated judgments, JSONL lines {id, document}."),
    gold: Path = typer.Option(..., "--gold", help="Reference judgments, JSONL lines {id, document}."),
    as_json: JsonOption = False,
    text_metrics: bool = typer.Option(True, "--text-metrics/--no-text-metrics",
                                      help="Also compute METEOR and BERTScore-style F1 (needs the metrics, zh "
                                           "and dense extras; slower)."),
    per_document: bool = typer.Option(False, "--per-document", help="With --json, include per-document scores."),
    include_missing: bool = typer.Option(False, "--include-missing",
                                         help="Score gold cases that have no prediction as empty judgments "
                                              "(default: score only the cases predicted, and say how many had none)."),
) -> None:
    """Score judgments as the JuDGE benchmark does: prison, fine, charges, articles (+ text metrics)."""
    from legalrag.judgment.evaluate import evaluate_files

    report, text = evaluate_files(pred, gold, text_metrics=text_metrics, progress=not as_json,
                                  include_missing=include_missing)
    summary = report.summary()
    if text is not None:
        summary.update(text.to_dict())
    if as_json:
        if per_document:
            summary["documents"] = [d.to_dict() for d in report.documents]
        print_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"JuDGE metrics: {pred.name} vs {gold.name} ({report.n} cases)")
    table.add_column("metric")
    table.add_column("precision", justify="right")
    table.add_column("recall", justify="right")
    table.add_column("F1 / score", justify="right")
    table.add_row("charges", _fmt(report.charge_precision), _fmt(report.charge_recall), _fmt(report.charge_f1))
    table.add_row("statutes (articles)", _fmt(report.article_precision), _fmt(report.article_recall),
                  _fmt(report.article_f1))
    table.add_row(f"prison term (n={report.prison_n})", "", "", _fmt(report.prison))
    table.add_row(f"fine (n={report.fine_n})", "", "", _fmt(report.fine))
    if text is not None:
        table.add_row(f"METEOR reasoning / result (n={text.pairs})", "", "",
                      f"{_fmt(text.reasoning_meteor)} / {_fmt(text.result_meteor)}")
        table.add_row("BERTScore* reasoning / result", "", "",
                      f"{_fmt(text.reasoning_bertscore)} / {_fmt(text.result_bertscore)}")
    console = Console()
    console.print(table)
    if text is not None:
        console.print(f"*BERTScore-style F1 with {text.bertscore_model}; not comparable with bert-base-chinese.")
    if report.missing:
        how = ("scored as empty judgments (--include-missing)" if report.missing_scored
               else "left out; pass --include-missing to score them as empty judgments")
        console.print(f"{len(report.missing)} of the gold file's cases have no prediction: {how}")
    if report.unparsed:
        shown = ", ".join(report.unparsed[:20]) + (" ..." if len(report.unparsed) > 20 else "")
        console.print(f"[yellow]{len(report.unparsed)} predicted documents not parsed[/yellow] "
                      f"(no 判决如下 / result section; scored on what could be read): {shown}")


LAW_CORPUS_HELP = ("Statute corpus JSONL (STARD or JuDGE shape; default: the judgment.law_corpus setting, "
                   "$LEGALRAG_LAW_CORPUS, else the criminal law of the national-law data shipped with legalrag).")
CHECK_CHARGES_HELP = ("Where the structure model is not confident about the charge, the LLM (--model / --endpoint) "
                      "reads the facts and names it; its reply and the model's choice are kept in the evidence.")
MODEL_DIR_HELP = ("Structure model: a directory from `legalrag judgment train` or the name of a shipped one (default: "
                  "the judgment.model setting, $LEGALRAG_JUDGMENT_MODEL, else the shipped judge-structure).")
SHIPPED_STRUCTURE = "judge-structure"


def structure_model_dir(model_dir: Optional[Path]) -> Optional[Path]:
    """``--model-dir`` as given (a directory, or the name of a shipped judgment model, its files checked); without
    it the shipped ``judge-structure`` model when this install carries it, else None."""
    from legalrag.shipped import model_dir as resolve

    return resolve(model_dir, "judgment-model", default=SHIPPED_STRUCTURE)


ENCODER_HELP = ("Encoder of a structure model trained on an encoder's signal (default: the judgment.encoder setting, "
                "$LEGALRAG_JUDGMENT_ENCODER, else the spec its manifest records).")


def law_statutes(ctx_root, law_corpus: Optional[Path]):
    """The statutes the judgment models decide over: ``--law-corpus`` (a JSONL file) when given, else the criminal
    law of the national-law data shipped with legalrag."""
    from legalrag.judgment.service import load_statutes_file

    if law_corpus is not None:
        return load_statutes_file(law_corpus)
    index = ctx_root.law_index(progress=True)
    if index is None:
        return load_statutes_file(_need(law_corpus, "statute corpus"))
    return list(index.documents)


def load_structure(model_dir: Path, statutes, encoder: Optional[str] = None):
    """The structure model with its statutes (documents, or a corpus file) and, when its manifest names one, the
    encoder it reads."""
    import json

    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.service import load_statutes_file

    if isinstance(statutes, (str, Path)):
        statutes = load_statutes_file(statutes)
    man = model_dir / "manifest.json"
    enc = None
    if man.exists():
        meta = json.loads(man.read_text(encoding="utf-8"))
        if meta.get("encoder"):
            from legalrag.wiring import make_encoder

            enc = make_encoder(encoder or meta.get("encoder_spec") or meta["encoder"])
    return StructurePredictor.load(model_dir, statutes, enc)


def _need(path: Optional[Path], what: str) -> Path:
    from legalrag.errors import InputError

    if path is None:
        raise InputError(f"no {what} given; pass the option or set its environment variable (see --help)")
    return path


@judgment_app.command("train", cls=renamed({"--facts": "--cases", "--first": "--limit"}))
def train(
    ctx: typer.Context,
    facts: Path = typer.Option(..., "--cases", help="Cases, JSONL {text_id|id, text|facts} (e.g. JuDGE data/test.json)."),
    judgments: Path = typer.Option(..., "--judgments", help="Gold judgments, JSONL {id, document}."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus", help=LAW_CORPUS_HELP),
    train_citations: Optional[Path] = typer.Option(None, "--train-citations",
                                                   help="Training citation sets (qrels or JSONL) for the citation "
                                                        "pipeline signal; without it the articles use cases only."),
    first: Optional[int] = typer.Option(None, "--limit", min=1, help="Train on the first N ids in sorted order only."),
    out: Path = typer.Option(..., "--out", help="Model directory to write (replaced atomically)."),
    without: Optional[str] = typer.Option(None, "--without", help="Ablation: comma-separated feature groups or "
                                          "signals to switch off (amounts, drugs, people, mitigating, aggravating, "
                                          "explicit, keywords, neighbours, citepred, tables, statutory, charge_text)."),
    select: bool = typer.Option(True, "--select/--no-select", help="Choose each model's feature groups by K-fold "
                                "cross-validation on the training cases (recorded in the manifest)."),
    per_defendant: bool = typer.Option(True, "--per-defendant/--no-per-defendant",
                                       help="Offer per-defendant prison and fine models (used where they beat the "
                                            "case-level ones out of fold on the training cases)."),
) -> None:
    """Train the judgment structure predictors (charges, articles, prison, fine, probation) on labelled cases."""
    from legalrag.judgment.service import train_from_files

    model = train_from_files(facts, judgments, _need(root(ctx).law_corpus(law_corpus), "statute corpus"), out,
                             train_citations=train_citations, first=first,
                             disabled=[w.strip() for w in (without or "").split(",") if w.strip()], progress=True,
                             select=select, per_defendant=per_defendant)
    typer.echo(f"trained on {len(model.cases)} cases ({len(model.skipped)} skipped: judgment unreadable); "
               f"thresholds {model.thresholds}; saved to {out}")


@judgment_app.command("predict", cls=renamed({"--skip-first": "--skip", "--encoder": "--structure-encoder"}))
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
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    encoder: Optional[str] = typer.Option(None, "--structure-encoder", help=ENCODER_HELP),
) -> None:
    """Predict the structure of the judgment (charges, articles, term, fine, probation) with its evidence, as JSON."""
    from legalrag.errors import InputError
    from legalrag.judgment.draft import read_facts
    from legalrag.judgment.service import predict_file

    if (facts is None) == (cases is None):
        raise InputError("pass exactly one of --facts (one case) or --cases (a JSONL file)")
    if not check_charges and (model or endpoint or endpoint_model):
        raise InputError("--model / --endpoint choose the LLM of --check-charges; add --check-charges")
    predictor = load_structure(_need(structure_model_dir(root(ctx).judgment_model(model_dir)), "model directory"),
                               law_statutes(root(ctx), root(ctx).law_corpus(law_corpus)),
                               encoder or root(ctx).settings.judgment_encoder)
    reader = None
    if check_charges:
        from legalrag.judgment.charge_llm import ChargeReader

        reader = ChargeReader(root(ctx).make_llm(model, endpoint, endpoint_model, threads=threads))
    if facts is not None:
        print_json(predictor.predict(read_facts(facts), charge_reader=reader).to_dict())
        return
    rows = predict_file(predictor, cases, skip_first=skip_first, progress=out is not None, charge_reader=reader)
    if out is None:
        for row in rows:
            print_json(row)
        return
    from legalrag.io import write_jsonl

    rows = list(rows)
    write_jsonl(out, rows)
    low = sum(1 for r in rows if r["structure"] and r["structure"]["low_confidence"])
    typer.echo(f"{len(rows)} predictions written to {out} ({low} with low confidence)")


@judgment_app.command("draft", cls=renamed({"--encoder": "--structure-encoder"}))
def draft(
    ctx: typer.Context,
    facts: str = typer.Option(..., "--facts", help="Case facts: a text file path or the text itself."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir",
                                             help=MODEL_DIR_HELP + " The structure model decides the judgment and "
                                                  "the LLM writes only the reasoning; --free lets the LLM draft it "
                                                  "all."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus", help=LAW_CORPUS_HELP),
    case_corpus: Optional[Path] = typer.Option(None, "--case-corpus",
                                               help="Free drafting only: past judgments, JSONL {id, document}."),
    no_llm: bool = typer.Option(False, "--no-llm", help="With a structure model: a template reasoning, no model."),
    free: bool = typer.Option(False, "--free", help="Let the LLM draft the whole judgment freely, even when a "
                              "structure model is available (by default the structure model decides it)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    as_json: JsonOption = False,
    max_tokens: int = typer.Option(500, "--max-tokens", help="Upper bound on generated tokens."),
    check_charges: bool = typer.Option(False, "--check-charges", help="With --model-dir: " + CHECK_CHARGES_HELP),
    encoder: Optional[str] = typer.Option(None, "--structure-encoder", help=ENCODER_HELP),
) -> None:
    """Draft a complete criminal judgment from case facts."""
    from legalrag.errors import InputError
    from legalrag.judgment.draft import draft_from_cli, read_facts

    text = read_facts(facts)
    if free and model_dir is not None:
        raise InputError("--free drafts without a structure model; leave out --model-dir (or --free)")
    model_dir = None if free else structure_model_dir(root(ctx).judgment_model(model_dir))
    law_corpus = root(ctx).law_corpus(law_corpus)
    encoder = encoder or root(ctx).settings.judgment_encoder
    if model_dir is None and no_llm:
        raise InputError("--no-llm needs a structure model (the one that decides the judgment): pass --model-dir "
                         "or leave out --free" if free else "--no-llm needs --model-dir (no structure model ships "
                         "with this install)")
    if check_charges and (model_dir is None or no_llm):
        raise InputError("--check-charges needs a structure model and an LLM (leave out --no-llm and --free)")
    llm = None
    if not no_llm:
        llm = root(ctx).make_llm(model, endpoint, endpoint_model, threads=threads)
    if model_dir is None:
        result = draft_from_cli(text, llm, law_corpus=law_statutes(root(ctx), law_corpus), case_corpus=case_corpus,
                                stream=not as_json, max_tokens=max_tokens)
        if as_json:
            print_json(result.to_dict())
        return
    from legalrag.judgment.reasoned import ReasonedDrafter

    predictor = load_structure(model_dir, law_statutes(root(ctx), law_corpus), encoder)
    from legalrag.judgment.charge_llm import ChargeReader

    res = ReasonedDrafter(predictor, llm, max_tokens=min(max_tokens, 500),
                          charge_reader=ChargeReader(llm) if check_charges else None).draft(text)
    if as_json:
        print_json(res.to_dict())
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
