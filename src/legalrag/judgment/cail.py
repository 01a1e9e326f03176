"""CAIL2018 cases as labelled cases of the structure model, with their label space reconciled to JuDGE's.

CAIL2018 (Xiao et al., 2018) gives per case the facts, the charges (without 罪, sometimes in bracket notation:
``[走私、贩卖、运输、制造]毒品``), the specific articles of those charges only, the prison term in months (or
life, death) and the fine in yuan (0: none). Reconciled here:

- a charge is the official name of the shipped list (``normalize_charge`` of the name with 罪; brackets dropped);
  every name not found there verbatim is listed in :attr:`CailReport.mapped`, a name nothing matches drops the case;
- articles stay numbers as JuDGE's evaluator reads them: a ``之一`` article counts as its base number (CAIL's 133
  for 危险驾驶 is 第一百三十三条之一, JuDGE's extractor reads it as 133 too); :data:`ZHI_YI` says which charges
  cite a 之一 article so a draft can write it out;
- the article list is the charges' own (specific) articles only: a case is marked ``source="cail"`` and the
  structure model learns the general-part articles (52, 53, 64, 67, 72 ...) and probation (CAIL has no probation
  label) from complete cases only;
- life and death become :data:`~legalrag.judgment.extract.LIFE_MONTHS` / ``DEATH_MONTHS`` as in JuDGE's labels;
  a fine of 0 is no fine (``None``), as an absent fine in JuDGE.

Lines that fail to parse or carry impossible labels are skipped and reported with their line number.
Overlap with JuDGE (:func:`overlapping`): the share of a CAIL case's 12-character shingles found in one JuDGE case.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.io import sha256_text
from legalrag.judgment.extract import DEATH_MONTHS, LIFE_MONTHS, charge_names, normalize_charge
from legalrag.judgment.labels import LabelledCase

MAX_TERM_MONTHS = 300  # the longest fixed term the Criminal Law allows (25 years for combined sentences)
MAX_ARTICLE = 452
SHINGLE = 12
OVERLAP = 0.3  # a CAIL case sharing this share of its shingles with one JuDGE case is the same case
# charges whose own article is a 之一 article, which both label spaces read as its base number
ZHI_YI = {"危险驾驶罪": "133-1", "骗取贷款、票据承兑、金融票证罪": "175-1", "妨害信用卡管理罪": "177-1",
          "窃取、收买、非法提供信用卡信息罪": "177-1", "虚开发票罪": "205-1", "持有伪造的发票罪": "210-1",
          "组织、领导传销活动罪": "224-1", "组织出卖人体器官罪": "234-1", "侵犯公民个人信息罪": "253-1",
          "拒不支付劳动报酬罪": "276-1", "组织考试作弊罪": "284-1", "非法出售、提供试题、答案罪": "284-1",
          "代替考试罪": "284-1", "拒不履行信息网络安全管理义务罪": "286-1", "非法利用信息网络罪": "287-1",
          "帮助信息网络犯罪活动罪": "287-2", "虚假诉讼罪": "307-1", "利用影响力受贿罪": "388-1",
          "对有影响力的人行贿罪": "390-1", "食品监管渎职罪": "408-1"}


@dataclass(frozen=True)
class CailReport:
    cases: tuple[LabelledCase, ...]
    skipped: tuple[tuple[str, int, str], ...]  # (file, line, why)
    mapped: Mapping[str, str] = field(default_factory=dict)  # CAIL name -> official name, where not verbatim
    duplicates: int = 0  # exact repeats of an earlier case's facts


# CAIL names that cover several official charges: the case's own article decides, else the case is skipped
BY_ARTICLE = {"[制造、贩卖、传播]淫秽物品": {363: "制作、复制、出版、贩卖、传播淫秽物品牟利罪", 364: "传播淫秽物品罪"},
              "[组织、强迫、引诱、容留、介绍]卖淫": {359: "引诱、容留、介绍卖淫罪"},
              "走私": {}}


def official_charge(written: str, articles: Iterable[int] = ()) -> str:
    """The official charge name for a CAIL accusation, ``""`` when none is close enough or the name covers
    several charges and the case's ``articles`` do not say which."""
    if written in BY_ARTICLE:
        got = {BY_ARTICLE[written][a] for a in articles if a in BY_ARTICLE[written]}
        return got.pop() if len(got) == 1 else ""
    name = re.sub(r"[\[\]]", "", written.strip())
    if not name:
        return ""
    name = name if name.endswith("罪") else name + "罪"
    return name if name in charge_names() else normalize_charge(name)


def _why_impossible(meta: Mapping) -> str | None:
    acc, arts = meta.get("accusation"), meta.get("relevant_articles")
    term, fine = meta.get("term_of_imprisonment"), meta.get("punish_of_money")
    if not isinstance(acc, list) or not acc or not all(isinstance(a, str) and a.strip() for a in acc):
        return "meta.accusation must be a non-empty list of charge names"
    if not isinstance(arts, list) or not arts or not all(isinstance(a, int) and not isinstance(a, bool) for a in arts):
        return "meta.relevant_articles must be a non-empty list of article numbers"
    if any(not 1 <= a <= MAX_ARTICLE for a in arts):
        return f"meta.relevant_articles holds an article outside 1-{MAX_ARTICLE}: {arts}"
    if not isinstance(term, dict) or not isinstance(term.get("imprisonment"), (int, float)):
        return "meta.term_of_imprisonment.imprisonment must be a number of months"
    if term.get("death_penalty") and term.get("life_imprisonment"):
        return "both a death and a life sentence"
    if not 0 <= term["imprisonment"] <= MAX_TERM_MONTHS:
        return f"prison term {term['imprisonment']} months outside 0-{MAX_TERM_MONTHS}"
    if not isinstance(fine, (int, float)) or isinstance(fine, bool) or fine < 0:
        return "meta.punish_of_money must be a non-negative number of yuan"
    crim = meta.get("criminals")
    if crim is not None and (not isinstance(crim, list) or len(crim) != 1):
        return f"{len(crim) if isinstance(crim, list) else 'no'} defendants: CAIL's labels are for exactly one"
    return None


def load_cail(paths: Sequence[str | Path]) -> CailReport:
    """Every usable case of the CAIL JSON Lines ``paths`` (ids ``cail-`` + the first 16 hex of the facts'
    SHA-256); unusable lines are skipped and listed, never guessed."""
    cases, skipped, mapped, seen, dups = [], [], {}, set(), 0
    for path in map(Path, paths):
        if not path.exists():
            raise InputError("CAIL file not found; pass data_train.jsonl / data_test.jsonl of CAIL2018", path=str(path))
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    skipped.append((path.name, lineno, f"not JSON ({exc.msg})"))
                    continue
                facts, meta = (rec.get("fact"), rec.get("meta")) if isinstance(rec, dict) else (None, None)
                if not isinstance(facts, str) or not facts.strip():
                    skipped.append((path.name, lineno, "no facts (field fact)"))
                    continue
                if not isinstance(meta, dict):
                    skipped.append((path.name, lineno, "no labels (field meta)"))
                    continue
                why = _why_impossible(meta)
                if why:
                    skipped.append((path.name, lineno, why))
                    continue
                charges = []
                for a in meta["accusation"]:
                    name = official_charge(a, meta["relevant_articles"])
                    if not name:
                        why = (f"charge {a!r} covers several official charges and articles "
                               f"{meta['relevant_articles']} do not say which" if a in BY_ARTICLE else
                               f"charge {a!r} matches no official charge name")
                        break
                    if name != a + "罪":
                        mapped[a] = name
                    charges.append(name)
                if why:
                    skipped.append((path.name, lineno, why))
                    continue
                digest = sha256_text(facts)
                if digest in seen:
                    dups += 1
                    continue
                seen.add(digest)
                term = meta["term_of_imprisonment"]
                months = DEATH_MONTHS if term.get("death_penalty") else (
                    LIFE_MONTHS if term.get("life_imprisonment") else int(term["imprisonment"]))
                fine = int(meta["punish_of_money"]) or None
                cases.append(LabelledCase("cail-" + digest[:16], facts, tuple(dict.fromkeys(charges)),
                                          tuple(sorted(set(meta["relevant_articles"]))), months, fine, False,
                                          source="cail"))
    return CailReport(tuple(cases), tuple(skipped), mapped, dups)


def shingles(text: str, n: int = SHINGLE) -> set[str]:
    t = re.sub(r"\s+", "", text)
    return {t[i:i + n] for i in range(max(len(t) - n + 1, 1))}


def overlapping(cases: Iterable[LabelledCase], others: Mapping[str, str], threshold: float = OVERLAP
                ) -> dict[str, tuple[str, float]]:
    """CAIL case id -> (the other case's id, the share of the CAIL case's shingles found in it) for every case
    that shares at least ``threshold`` of its shingles with one of ``others`` (id -> facts)."""
    owner: dict[str, list[str]] = defaultdict(list)
    for oid, text in others.items():
        for s in shingles(text):
            owner[s].append(oid)
    out = {}
    for c in cases:
        own = shingles(c.facts)
        hits = Counter(o for s in own for o in owner.get(s, ()))
        if hits:
            oid, k = hits.most_common(1)[0]
            if k / len(own) >= threshold:
                out[c.id] = (oid, round(k / len(own), 4))
    return out


def split_holdout(cases: Sequence[LabelledCase], share: float = 0.2, min_cases: int = 5, seed: int = 46
                  ) -> tuple[list[str], list[str]]:
    """(train ids, hold-out ids): per main charge (the first listed), ``share`` of the cases, chosen by the hash
    of ``seed`` and the id; charges with fewer than ``min_cases`` cases stay whole in training."""
    import hashlib

    by_charge: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        by_charge[c.charges[0]].append(c.id)
    train, hold = [], []
    for ch, ids in sorted(by_charge.items()):
        if len(ids) < min_cases:
            train += ids
            continue
        ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
        k = max(1, round(len(ids) * share))
        hold += ranked[:k]
        train += ranked[k:]
    return sorted(train), sorted(hold)
