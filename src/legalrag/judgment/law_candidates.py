"""Charges proposed from the articles the facts call for: the shipped ``judge-e5`` encoder ranks the law text of
every charge of the catalogue (the paragraphs of the specific part of the Criminal Law that define it,
``charges.py``) against the facts, so a charge no training case carries is still proposed when the facts describe
the conduct its article defines.

The vectors of the 482 charge texts (the first ``PASSAGE_CHARS`` characters of name and law text) ship for
``judge-e5`` (``data/judge/charges.<model id>.npy``, written by ``python tools/make_charge_table.py --vectors``);
another encoder's are computed once per process. :meth:`LawCandidates.propose` then costs one query vector and
a matrix product. A candidate is named as the
training labels name it when they carry one of its names (a case decided in 2018 says 生产、销售假药罪, the
catalogue's current name is 生产、销售、提供假药罪), else by its current name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from legalrag.judgment.charges import Charge, load_catalogue

K = 10
DENSE_CHARS = 512
PASSAGE_CHARS = 200  # the conduct a charge's paragraphs define comes first; the penalties after it add little
VECTORS = "data/judge/charges.{model}.npy"  # the shipped vectors of one encoder (tools/make_charge_table.py)


@dataclass(frozen=True)
class LawCandidate:
    name: str  # as the labels know it (see the module docstring)
    charge: str  # the catalogue's current name
    article: str | None
    rank: int  # 0 = best
    cos: float


def passage(c: Charge) -> str:
    return (f"{c.name}：{c.text}" if c.text else c.name)[:PASSAGE_CHARS]


def vectors_path(encoder):
    """Where the shipped vectors of ``encoder``'s passages would be (None for an encoder without a model id)."""
    from importlib import resources

    model = str(getattr(encoder, "model_id", "") or "")
    if not model:
        return None
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in model)
    return Path(str(resources.files("legalrag").joinpath(VECTORS.format(model=safe))))


class LawCandidates:
    """``encoder``: any Encoder (``encode_queries`` / ``encode_documents``); ``known``: the charge names the
    labelled cases use (a candidate takes the one of its names they use)."""

    def __init__(self, encoder, charges: Sequence[Charge] | None = None, known: Iterable[str] = ()):
        self.encoder = encoder
        self.charges = [c for c in (charges if charges is not None else load_catalogue()) if c.text]
        known = set(known)
        self.label = {}
        for c in self.charges:
            names = [c.name, *c.former]
            self.label[c.name] = next((n for n in names if n in known), c.name)
        self._vectors = None

    def vectors(self):
        """The passages' unit vectors: the shipped ones of this encoder when they match the catalogue, else
        encoded now (once per process)."""
        import numpy as np

        if self._vectors is None:
            path = vectors_path(self.encoder)
            v = None
            if path is not None and path.is_file():
                saved = np.load(path, allow_pickle=False)
                v = saved.astype(np.float32) if saved.shape[0] == len(self.charges) else None
            if v is None:
                v = np.asarray(self.encoder.encode_documents([passage(c) for c in self.charges]), dtype=np.float32)
            self._vectors = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
        return self._vectors

    def save_vectors(self) -> Path:
        """Encode the passages and write them (float16) where :meth:`vectors` finds them."""
        import numpy as np

        path = vectors_path(self.encoder)
        v = np.asarray(self.encoder.encode_documents([passage(c) for c in self.charges]), dtype=np.float32)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, v.astype(np.float16), allow_pickle=False)
        tmp.replace(path)
        return path

    def query_vector(self, facts: str):
        import numpy as np

        q = np.asarray(self.encoder.encode_queries([facts[:DENSE_CHARS]]), dtype=np.float32)[0]
        return q / max(float(np.linalg.norm(q)), 1e-9)

    def propose(self, facts: str, k: int = K, vector=None) -> list[LawCandidate]:
        import numpy as np

        q = self.query_vector(facts) if vector is None else vector
        scores = self.vectors() @ q
        order = np.argsort(-scores)[:k]
        return [LawCandidate(self.label[self.charges[i].name], self.charges[i].name, self.charges[i].article, r,
                             float(scores[i])) for r, i in enumerate(order)]


def recall(proposed: Mapping[str, Sequence[str]], gold: Mapping[str, Sequence[str]], seen: set[str]) -> dict:
    """How often a gold charge is among the proposed, over all gold charges and split into those the training
    labels carry (seen) and the others (unseen)."""
    out = {}
    for part, keep in (("all", lambda n: True), ("seen", lambda n: n in seen), ("unseen", lambda n: n not in seen)):
        pairs = [(i, g) for i in gold for g in gold[i] if keep(g)]
        hit = sum(1 for i, g in pairs if g in set(proposed.get(i, ())))
        out[part] = {"gold": len(pairs), "found": hit, "recall": round(hit / len(pairs), 4) if pairs else None}
    return out
