"""JuDGE metrics: penalty scores for prison and fine, precision/recall/F1 for charges and cited articles.

Aggregation follows the JuDGE evaluation exactly (re-implemented; see ``docs/lab/notebook.md``):

- **Penalty score** ``S = 1 - |pred - true| / max(pred, true)`` per document. Both zero -> 1.0 (e.g. two
  exempt defendants, or "no fine" stated on both sides as 0 yuan). One side stated and the other not
  (``None``) -> 0.0. A death sentence on one side only -> 0.0. Documents where *neither* side states the
  field are left out of that average (so the prison and fine averages have their own denominators).
- **Charges and articles**: per-document recall ``|P ∩ G| / |G|`` and precision ``|P ∩ G| / |P|``, each
  0 when its denominator set is empty (so a gold judgment citing no article scores 0 recall even against
  itself: that is why the benchmark's statute F1 of the reference against itself stops near 0.998).
  Precision and recall are averaged over *all* documents; F1 is the harmonic mean of the two averages.
- A document the splitter cannot parse still gets whatever fields the whole text yields; a predicted
  document that is not a string counts as empty (no fields: 0 on every metric it enters) and is listed as
  unparsed. A gold case with no prediction at all is listed as *missing*, not unparsed: scored as an empty
  judgment (the benchmark's convention for a run over all its cases) or left out (``skip_missing``, for a
  prediction file that covers part of the gold file, e.g. the evaluation split only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from legalrag.judgment.extract import DEATH_MONTHS, JudgmentFields, extract_fields


def relative_score(pred: float, gold: float) -> float:
    """1 - |pred - gold| / max(pred, gold) for two non-negative amounts (1 when both are 0): the benchmark's
    penalty score without its death-sentence rule, which model selection uses for terms and fines alike."""
    m = max(pred, gold)
    return 1.0 if m == 0 else 1.0 - abs(pred - gold) / m


def penalty_score(pred: int | float | None, gold: int | float | None) -> float | None:
    """Score of one predicted penalty against the gold one; ``None`` when neither states it."""
    if pred is None and gold is None:
        return None
    if pred is None or gold is None:
        return 0.0
    if pred == gold == 0:
        return 1.0
    if (pred - DEATH_MONTHS + 1) * (gold - DEATH_MONTHS + 1) < 0:  # a death sentence on one side only
        return 0.0
    return relative_score(pred, gold)


def recall_precision(pred: Iterable, gold: Iterable) -> tuple[float, float]:
    """Set recall and precision; each is 0 when its denominator set is empty."""
    p, g = set(pred), set(gold)
    hit = len(p & g)
    return (hit / len(g) if g else 0.0), (hit / len(p) if p else 0.0)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class DocumentScore:
    id: str
    pred: JudgmentFields
    gold: JudgmentFields
    prison: float | None
    fine: float | None
    charge_recall: float
    charge_precision: float
    article_recall: float
    article_precision: float
    parsed: bool = True

    def to_dict(self) -> dict:
        return {"id": self.id, "parsed": self.parsed, "prison": self.prison, "fine": self.fine,
                "charge_recall": self.charge_recall, "charge_precision": self.charge_precision,
                "article_recall": self.article_recall, "article_precision": self.article_precision,
                "pred": self.pred.to_dict(), "gold": self.gold.to_dict()}


@dataclass(frozen=True)
class JudgmentReport:
    """Benchmark-level figures plus the per-document scores they came from."""

    n: int
    prison: float
    prison_n: int
    fine: float
    fine_n: int
    charge_precision: float
    charge_recall: float
    charge_f1: float
    article_precision: float
    article_recall: float
    article_f1: float
    unparsed: tuple[str, ...] = ()
    documents: tuple[DocumentScore, ...] = field(default=(), repr=False)
    missing: tuple[str, ...] = ()  # gold ids without a prediction (scored as empty unless skipped)
    missing_scored: bool = True  # whether the missing ids are in ``n`` (as empty judgments) or left out
    text_metrics: Mapping[str, float] = field(default_factory=dict)

    def summary(self) -> dict:
        d = {k: getattr(self, k) for k in ("n", "prison", "prison_n", "fine", "fine_n", "charge_precision",
                                           "charge_recall", "charge_f1", "article_precision",
                                           "article_recall", "article_f1")}
        d.update(self.text_metrics)
        d["unparsed"] = list(self.unparsed)
        d["missing"] = len(self.missing)
        d["missing_scored_as_empty"] = self.missing_scored if self.missing else False
        return d


def score_document(doc_id: str, pred_text: str | None, gold_text: str,
                   gold_fields: JudgmentFields | None = None, *, missing: bool = False) -> DocumentScore:
    """``missing``: no prediction exists for this case (scored as empty, but not reported as unparsed)."""
    pred = extract_fields(pred_text) if isinstance(pred_text, str) else JudgmentFields()
    gold = gold_fields or extract_fields(gold_text)
    cr, cp = recall_precision(pred.charges, gold.charges)
    ar, ap = recall_precision(pred.article_numbers, gold.article_numbers)
    parsed = missing or (isinstance(pred_text, str) and pred.sections.parsed)
    return DocumentScore(doc_id, pred, gold, penalty_score(pred.prison_months, gold.prison_months),
                         penalty_score(pred.fine_yuan, gold.fine_yuan), cr, cp, ar, ap, parsed)


def aggregate(scores: list[DocumentScore]) -> JudgmentReport:
    n = len(scores)
    if n == 0:
        return JudgmentReport(0, 0.0, 0, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    prison = [s.prison for s in scores if s.prison is not None]
    fine = [s.fine for s in scores if s.fine is not None]
    cp = sum(s.charge_precision for s in scores) / n
    cr = sum(s.charge_recall for s in scores) / n
    ap = sum(s.article_precision for s in scores) / n
    ar = sum(s.article_recall for s in scores) / n
    return JudgmentReport(
        n=n,
        prison=sum(prison) / len(prison) if prison else 0.0, prison_n=len(prison),
        fine=sum(fine) / len(fine) if fine else 0.0, fine_n=len(fine),
        charge_precision=cp, charge_recall=cr, charge_f1=_f1(cp, cr),
        article_precision=ap, article_recall=ar, article_f1=_f1(ap, ar),
        unparsed=tuple(s.id for s in scores if not s.parsed),
        documents=tuple(scores),
    )


def evaluate_judgments(pred: Mapping[str, str | None], gold: Mapping[str, str], progress: bool = False, *,
                       skip_missing: bool = False) -> JudgmentReport:
    """Score predicted judgments against gold ones, both keyed by case id. Every gold id is scored, a missing
    prediction as an empty judgment, unless ``skip_missing``: then only the gold ids with a prediction are.
    Either way the report lists the missing ids (``missing``), apart from the unparsed ones."""
    missing = tuple(i for i in gold if i not in pred)
    ids = [i for i in gold if i in pred] if skip_missing else list(gold)
    if progress:
        from tqdm import tqdm

        ids = tqdm(ids, desc="scoring judgments", unit="doc")
    report = aggregate([score_document(i, pred.get(i), gold[i], missing=i not in pred) for i in ids])
    return replace(report, missing=missing, missing_scored=not skip_missing)
