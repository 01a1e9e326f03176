"""A citation model directory: the learned rules (editable JSON), the co-citation graph and the pipeline
settings (possibly calibrated), so that ``legalrag cite`` does not relearn them on every call.

Layout: ``rules.json``, ``cocitation/`` (JSON + .npy), ``config.json``, when the model has labelled cases
``cases/`` (the similar-case memory, BM25 or dense) and, when it has a learned set decision, ``setmodel/``.
Written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from legalrag.citepredict.cases import CaseMemory
from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.data import load_citation_sets
from legalrag.citepredict.pipeline import CiteConfig
from legalrag.citepredict.rules import RuleSet, learn_rules, load_rules, save_rules
from legalrag.errors import InputError
from legalrag.io import atomic_dir


def save_model(path: str | Path, rules: RuleSet, graph: CoCitationGraph, config: CiteConfig,
               cases: CaseMemory | None = None, set_model=None, *, case_texts: bool = True) -> None:
    """Write a citation model directory; ``case_texts=False`` keeps a dense case memory without its facts."""
    with atomic_dir(path) as tmp:
        save_rules(tmp / "rules.json", rules)
        graph.save(tmp / "cocitation")
        if cases is not None:
            cases.save(tmp / "cases", texts=case_texts)
        if set_model is not None:
            set_model.save(tmp / "setmodel")
        (tmp / "config.json").write_text(json.dumps(config.model_dump(), indent=2) + "\n", encoding="utf-8")


def load_config(path: str | Path) -> CiteConfig:
    p = Path(path)
    try:
        return CiteConfig.model_validate(json.loads(p.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise InputError("config file not found", path=str(p)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=str(p), line=exc.lineno) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], path=str(p), field=".".join(str(x) for x in err["loc"])) from None


def load_model(path: str | Path) -> tuple[RuleSet, CoCitationGraph, CiteConfig]:
    p = Path(path)
    if not (p / "rules.json").exists():
        raise InputError("not a citation model directory (rules.json missing); write one with "
                         "`legalrag eval cite ... --out DIR`", path=str(p))
    return load_rules(p / "rules.json"), CoCitationGraph.load(p / "cocitation"), load_config(p / "config.json")


def load_case_memory(model_dir: str | Path, encoder=None) -> CaseMemory | None:
    """The model directory's similar-case memory, or None when it has none; a dense memory needs the encoder it
    was built with."""
    p = Path(model_dir) / "cases"
    return CaseMemory.load(p, encoder) if p.is_dir() else None


def load_set_model(model_dir: str | Path):
    """The model directory's learned set decision, or None when it has none."""
    p = Path(model_dir) / "setmodel"
    if not p.is_dir():
        return None
    from legalrag.citepredict.setmodel import SetModel

    return SetModel.load(p)


def learn_model(train_citations: str | Path, *, always_share: float = 0.5, min_support: int = 5,
                min_confidence: float = 0.5) -> tuple[RuleSet, CoCitationGraph]:
    sets = load_citation_sets(train_citations)
    return (learn_rules(sets, always_share=always_share, min_support=min_support, min_confidence=min_confidence),
            CoCitationGraph.build(sets))


def resolve_parts(*, train_citations: str | Path | None = None, model_dir: str | Path | None = None,
                  rules_path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
                  ) -> tuple[RuleSet, CoCitationGraph, CiteConfig]:
    """Rules, graph and config from a model directory or from training citations; ``rules_path`` replaces the
    rules (a user-edited file); ``overrides`` replace config fields."""
    if model_dir is not None:
        rules, graph, config = load_model(model_dir)
    elif train_citations is not None:
        rules, graph = learn_model(train_citations)
        config = CiteConfig()
    else:
        raise InputError("no citation model for this index: build it with `--encoder judge-e5` to use the shipped "
                         "model judge-cite (Chinese criminal law), or pass -o train_citations=FILE (training "
                         "decision -> provisions) or --model-dir DIR (written by `legalrag eval cite --out "
                         "DIR`)")
    if rules_path is not None:
        rules = load_rules(rules_path)
    if overrides:
        try:
            config = CiteConfig.model_validate({**config.model_dump(), **{k: v for k, v in overrides.items()
                                                                         if v is not None}})
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(f"bad option {'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None
    return rules, graph, config
