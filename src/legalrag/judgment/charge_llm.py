"""The LLM charge check: where the structure model is not confident about the charge, an LLM reads the facts
and names it.

The charge model ranks candidates found by rules and similar cases; a case whose conduct matches no keyword and
whose charge is rare or absent among the labelled cases gets the charge of its nearest neighbours, often wrong
(a pirated-disc seller "贩卖" discs and is given the drug charge). An LLM reads such facts better than a
neighbour vote. ``ChargeReader`` asks the model to name the charge (``prompts/judgment_charge.md``, a few
tokens at temperature 0) and maps each name it writes to the official charge list (``normalize_charge``);
:meth:`StructurePredictor.predict` calls it only for its low-confidence cases and then uses the charges the
model named, keeping the model's own choice and the reply in the evidence. Names the model writes that are not
in the list are kept in the reading and reported, never used as charges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from legalrag.judgment.extract import normalize_charge
from legalrag.judgment.structure import Scored

# one charge per piece: split on punctuation, on 、/和/及/与 right after a 罪, and drop the lead-in words
_PIECES = re.compile(r"[，,。；;\n：:]|(?<=罪)[、和及与]")
_LEAD = re.compile(r"^.*?(?:构成|犯有|犯|涉嫌|定为|认定为|罪名[为是]?)")


@dataclass(frozen=True)
class ChargeReading:
    """What the LLM said: its reply, the listed charges it named (in order) and the names outside the list."""

    text: str
    names: tuple[str, ...]
    unlisted: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"text": self.text, "names": list(self.names), "unlisted": list(self.unlisted)}


def read_charges(reply: str) -> ChargeReading:
    """The official charges named in a reply such as ``"盗窃罪、诈骗罪"`` or ``"被告人的行为构成非法占用农用地罪。"``."""
    names: list[str] = []
    unlisted: list[str] = []
    pieces = [p for p in (_LEAD.sub("", x.strip().strip("“”\"'《》*` ")) for x in _PIECES.split(reply or "")) if p]
    for piece in pieces:
        if not piece.endswith("罪") and len(pieces) > 1:  # a bare name ("故意伤害") only as the whole reply
            continue
        written = piece if piece.endswith("罪") else piece + "罪"
        if len(written) < 3 or written in ("犯罪罪", "无罪", "有罪"):
            continue
        name = normalize_charge(written)
        if name:
            if name not in names:
                names.append(name)
        elif piece.endswith("罪") and written not in unlisted:
            unlisted.append(written)
    return ChargeReading(reply or "", tuple(names), tuple(unlisted))


WHEN = ("low", "unsupported")


class ChargeReader:
    """Ask ``llm`` (any ``legalrag.llm.base.LLM``) to name the charge for the first ``max_chars`` of the facts.

    The predictor uses at most ``max_charges`` of the names (in the model's order) and asks only where ``when``
    says: ``"low"``, every low-confidence charge; ``"unsupported"``, only a charge that rests on similar cases or
    its conduct text (the facts neither name it nor describe its conduct in known words). The defaults were
    chosen by cross-fitting on the JuDGE training cases (``bench/judgment/bench_judgment_structure.py check-cv``)."""

    def __init__(self, llm, *, max_chars: int = 500, max_tokens: int = 32, max_charges: int = 2,
                 when: str = "low"):
        from legalrag.errors import InputError

        if when not in WHEN:
            raise InputError(f"when must be one of {WHEN}, got {when!r}")
        if max_charges < 1:
            raise InputError(f"max_charges must be at least 1, got {max_charges}")
        self.llm, self.max_chars, self.max_tokens = llm, max_chars, max_tokens
        self.max_charges, self.when = max_charges, when

    def applies(self, reason: str) -> bool:
        """Whether a low-confidence charge with this ``reason`` ("unsupported" or "low_p") is sent to the LLM."""
        return self.when == "low" or reason == self.when

    def messages(self, facts: str) -> list[dict[str, str]]:
        from legalrag.prompts import load_prompt

        return list(load_prompt("judgment_charge").render(facts=facts.strip()[: self.max_chars]))

    def read(self, facts: str) -> ChargeReading:
        from legalrag.llm.base import ChatRequest

        result = self.llm.chat(ChatRequest(messages=tuple(self.messages(facts)), max_tokens=self.max_tokens,
                                           temperature=0.0))
        return read_charges(result.text)


def check_charges(reader: ChargeReader, facts: str, cands: Mapping[str, Mapping[str, Any]], chosen: list[Scored],
                  notes: list[str], score: Callable[[str, dict], float]) -> list[Scored]:
    """A low-confidence case's charges as the LLM names them (the first ``reader.max_charges``; a named charge
    among the model's candidates gets the model's probability ``score(name, evidence)``, another 0), or the
    model's ``chosen`` when it names none. Appends to ``notes`` what was done."""
    reading = reader.read(facts)
    model_choice = [c.name for c in chosen]
    for written in reading.unlisted:
        notes.append(f"the LLM charge check named {written!r}, which is not in the charge list (not used)")
    if not reading.names:
        notes.append(f"the LLM charge check named no listed charge (reply {reading.text[:60]!r}); "
                     f"the model's choice {'、'.join(model_choice)} is kept")
        return chosen
    out = []
    for name in reading.names[: reader.max_charges]:
        e = dict(cands.get(name, {}))
        prob = score(name, e) if name in cands else 0.0
        e.update({"llm_check": reading.text[:200], "model_choice": model_choice,
                  "rule": "named by the LLM charge check (the model was not confident)"})
        out.append(Scored(name, prob, e))
    verb = "confirmed" if [c.name for c in out] == model_choice else "replaced"
    notes.append(f"the LLM charge check {verb} the charge: {'、'.join(c.name for c in out)} "
                 f"(model's choice {'、'.join(model_choice)})")
    return out
