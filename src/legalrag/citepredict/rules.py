"""Rule augmentation learned from training citation sets, saved as a readable, user-editable JSON file.

Two kinds of rule:
- **always-add**: provisions cited in more than ``always_share`` of training decisions (e.g. a general
  sentencing provision most decisions cite);
- **clusters**: when a trigger provision (or, in a user-edited file, a charge label) is predicted, add the
  provisions that co-occur with it in at least ``min_support`` decisions and with confidence
  P(member | trigger) >= ``min_confidence``.

The file carries ``_comment`` fields explaining each part; edit values or delete entries freely, the loader
validates everything and names the field that is wrong.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Iterable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from legalrag.errors import InputError
from legalrag.io import atomic_write_text

FORMAT = "legalrag-cite-rules"


def natural_key(pid: str) -> tuple:
    """Sort provision ids the way people read them: '2' < '10' < '10-1' < 'a'."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", pid))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RuleParams(_Model):
    always_share: float = Field(0.5, ge=0, le=1)
    min_support: int = Field(3, ge=1)
    min_confidence: float = Field(0.5, ge=0, le=1)


class AlwaysAdd(_Model):
    provision: str = Field(min_length=1)
    share: float = Field(ge=0, le=1, description="share of training decisions citing it")


class ClusterMember(_Model):
    provision: str = Field(min_length=1)
    confidence: float = Field(ge=0, le=1, description="P(member cited | trigger cited)")
    support: int = Field(ge=0, description="decisions citing both")


class Cluster(_Model):
    trigger: str = Field(min_length=1)
    trigger_kind: Literal["provision", "charge"] = "provision"
    trigger_count: int = Field(0, ge=0, description="decisions citing the trigger")
    members: list[ClusterMember]


class RuleSet(_Model):
    comment: str = Field("", alias="_comment")
    format: Literal["legalrag-cite-rules"] = FORMAT
    version: Literal[1] = 1
    n_decisions: int = Field(ge=0)
    params: RuleParams = RuleParams()
    always_add_comment: str = Field("", alias="_always_add_comment")
    always_add: list[AlwaysAdd]
    clusters_comment: str = Field("", alias="_clusters_comment")
    clusters: list[Cluster]


@dataclass(frozen=True)
class RuleProposal:
    provision: str
    score: float
    rule: str  # "always-add" or "cluster:<trigger>"
    reason: str


def learn_rules(citation_sets: Mapping[str, Iterable[str]], *, always_share: float = 0.5, min_support: int = 3,
                min_confidence: float = 0.5) -> RuleSet:
    """Learn always-add provisions and trigger clusters from decision -> cited-provisions sets."""
    params = RuleParams(always_share=always_share, min_support=min_support, min_confidence=min_confidence)
    sets = [frozenset(v) for v in citation_sets.values()]
    n = len(sets)
    if n == 0:
        raise InputError("no training citation sets to learn rules from")
    count = Counter(p for s in sets for p in s)
    pair = Counter()
    for s in sets:
        for a, b in combinations(sorted(s), 2):
            pair[a, b] += 1
            pair[b, a] += 1
    always = sorted((p for p, c in count.items() if c / n > always_share), key=lambda p: (-count[p], natural_key(p)))
    always_set = set(always)
    clusters = []
    for trig in sorted(count, key=natural_key):
        if trig in always_set or count[trig] < min_support:
            continue
        members = []
        for (a, b), c in pair.items():
            if a != trig or b in always_set or c < min_support:
                continue
            conf = c / count[trig]
            if conf >= min_confidence:
                members.append(ClusterMember(provision=b, confidence=round(conf, 4), support=c))
        if members:
            members.sort(key=lambda m: (-m.confidence, natural_key(m.provision)))
            clusters.append(Cluster(trigger=trig, trigger_count=count[trig], members=members))
    return RuleSet(
        comment=f"Citation rules learned from {n} training decisions by legalrag. Edit freely: delete entries, "
                "change scores, or add clusters with trigger_kind 'charge' to fire on a predicted charge label.",
        n_decisions=n, params=params,
        always_add_comment=f"Provisions cited in more than {always_share:.0%} of training decisions; added to "
                           "every prediction with score = share.",
        always_add=[AlwaysAdd(provision=p, share=round(count[p] / n, 4)) for p in always],
        clusters_comment=f"When the trigger is predicted, add members cited together with it in at least "
                         f"{min_support} decisions and in at least {min_confidence:.0%} of the trigger's "
                         "decisions; score = confidence.",
        clusters=clusters,
    )


def apply_rules(rules: RuleSet, predicted: Iterable[str], charges: Iterable[str] = (), *,
                use_always: bool = True, use_clusters: bool = True) -> list[RuleProposal]:
    """Proposals for a prediction: always-add provisions and members of clusters whose trigger fired.

    A provision proposed by several rules keeps its highest score. Output is sorted by score, best first.
    """
    best: dict[str, RuleProposal] = {}

    def offer(p: RuleProposal) -> None:
        if p.provision not in best or p.score > best[p.provision].score:
            best[p.provision] = p

    if use_always:
        for a in rules.always_add:
            offer(RuleProposal(a.provision, a.share, "always-add", f"cited in {a.share:.0%} of training decisions"))
    if use_clusters:
        fired = {("provision", p) for p in predicted} | {("charge", c) for c in charges}
        for cl in rules.clusters:
            if (cl.trigger_kind, cl.trigger) not in fired:
                continue
            for m in cl.members:
                offer(RuleProposal(m.provision, m.confidence, f"cluster:{cl.trigger}",
                                   f"cited in {m.confidence:.0%} of the {cl.trigger_count} decisions citing "
                                   f"{cl.trigger}"))
    return sorted(best.values(), key=lambda p: (-p.score, natural_key(p.provision)))


def save_rules(path: str | Path, rules: RuleSet) -> None:
    atomic_write_text(path, json.dumps(rules.model_dump(by_alias=True), ensure_ascii=False, indent=2) + "\n")


def load_rules(path: str | Path) -> RuleSet:
    """Load and validate a rules file; errors name the file and the offending field."""
    p = Path(path)
    if not p.exists():
        raise InputError("rules file not found; create one with `learn_rules` or `legalrag eval cite`", path=str(p))
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=str(p), line=exc.lineno) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"not a rules file: expected \"format\": \"{FORMAT}\" at the top level", path=str(p))
    try:
        return RuleSet.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{err['msg']}; fix the value and reload ({len(exc.errors())} problem(s) in all)",
                         path=str(p), field=loc) from None
