"""What the structure model says when it cannot decide: facts too short, or a charge it never saw in training.

- **Too short** (:data:`MIN_DECIDE_CHARS`): the structure names the top charges with their probabilities and
  carries no sentence (term, fine and probation are ``None``, no article); ``Structure.undecided`` is set and a
  drafter refuses to write a judgment from it.
- **A charge never seen in training** (an official charge the facts name or the model ranks first that no
  training case carries): it is reported as unknown (``listed=False``, flag ``unknown``) together with the
  nearest known charges and their probabilities, never silently replaced by one of them.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from legalrag.judgment.signals import charge_mentions
from legalrag.judgment.structure import Amount, Scored, Structure

NEAREST = 3
MIN_DECIDE_CHARS = 15  # shorter facts get their top charges with probabilities and no sentence


def mark_unseen(chosen: Sequence[Scored], ranked: Sequence[tuple[str, float]], seen: Counter, facts: str,
                notes: list[str]) -> tuple[list[Scored], tuple[Scored, ...]]:
    """(the chosen charges seen in training, the unseen ones flagged as unknown); ``notes`` says why."""
    nearest = [{"name": n, "prob": round(p, 4)} for n, p in ranked if n in seen][:NEAREST]
    # a charge the LLM charge check read from the facts (charge_llm.py) stays chosen: it is that reading, made
    # in the open (its evidence keeps the model's own choice), and is marked unseen with the nearest known ones
    read = {c.name for c in chosen if "model_choice" in c.evidence}
    chosen = [Scored(c.name, c.prob, {**c.evidence, "unseen_in_training": True, "nearest_known": nearest}, c.listed)
              if c.name in read and c.name not in seen else c for c in chosen]
    named = [m.name for m in charge_mentions(facts) if m.name]
    unseen = list(dict.fromkeys([c.name for c in chosen if c.name not in seen and c.name not in read]
                                + [n for n in named if n not in seen and n not in read]))
    for name in sorted(read - set(seen)):
        notes.append(f"charge {name} (read by the LLM charge check) was never seen in training; nearest known "
                     "charges: " + ("、".join(f"{d['name']} (p={d['prob']:.2f})" for d in nearest) or "none"))
    if not unseen:
        return list(chosen), ()
    kept = [c for c in chosen if c.name in seen or c.name in read]
    probs = dict(ranked)
    flagged = []
    for name in unseen:
        flagged.append(Scored(name, probs.get(name, 0.0), {"flag": "unknown: never seen in training",
                                                           "nearest_known": nearest}, listed=False))
        notes.append(f"charge {name} was never seen in training: reported as unknown; nearest known charges: "
                     + ("、".join(f"{d['name']} (p={d['prob']:.2f})" for d in nearest) or "none"))
    if not kept and nearest:
        notes.append("no known charge was chosen: the structure's charge is unknown and low confidence")
    return kept, tuple(flagged)


def undecided(facts: str, ranked: Sequence[tuple[str, float]], charges: tuple[Scored, ...], ctx,
              notes: list[str]) -> Structure:
    """The structure of facts too short to decide: top charges with probabilities, no sentence, no article."""
    top = [Scored(n, p, {"rule": "top charge of facts too short to decide"}) for n, p in ranked[:NEAREST]] \
        or [c for c in charges if c.listed]
    notes.append(f"facts too short to decide ({len(facts.strip())} characters, fewer than {MIN_DECIDE_CHARS}): "
                 "the top charges with their probabilities are given, and no sentence")
    flagged = tuple(c for c in charges if not c.listed)
    return Structure(tuple(top) + flagged, (), Amount(None), Amount(None), Amount(None), tuple(ctx.defendants),
                     ctx.features, tuple(notes), True, (), undecided=True)
