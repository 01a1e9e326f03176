"""Signals the structure predictors combine: explicit charge mentions, charge keywords, similar cases and
co-occurrence tables learned from labelled cases (the statutory ranges are in ``ranges.py``).

Each signal keeps what it was computed from (a span of the facts, the neighbour ids, the table counts), so a
prediction can show its evidence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from legalrag.io import sha256_text
from legalrag.judgment.extract import charge_names, normalize_charge
from legalrag.types import Document

# ------------------------------------------------------------------------------------- charge mentions

# How prosecutors and police reports name the offence in the facts: 指控被告人X犯盗窃罪, 构成诈骗罪,
# 以涉嫌故意伤害罪, 应当以危险驾驶罪追究其刑事责任.
_MENTION = re.compile(r"(?:犯|构成|涉嫌|以)([^，。；、《》（）：:\s犯罪]{1,20}?罪)")


@dataclass(frozen=True)
class Mention:
    written: str
    name: str  # the official name, "" when it is outside the charge list
    start: int
    end: int


def charge_mentions(facts: str) -> list[Mention]:
    out = []
    for m in _MENTION.finditer(facts):
        written = m.group(1)
        if written in ("犯罪", "有罪", "无罪") or len(written) < 3:
            continue
        out.append(Mention(written, normalize_charge(written), m.start(1), m.end(1)))
    return out


@lru_cache(maxsize=1)
def charge_keywords() -> dict[str, tuple[str, ...]]:
    """Official name -> the phrases that name its conduct in facts (``走私、贩卖、运输、制造毒品罪`` ->
    走私毒品, 贩卖毒品, 运输毒品, 制造毒品): a short verb in a list borrows the object of the last item."""
    out = {}
    for name in charge_names():
        pieces = [p for p in name[:-1].split("、") if p]
        if not pieces:
            continue
        last = pieces[-1]
        tail = last[2:] if len(last) > 2 else ""
        words = [p + tail if len(p) <= 2 and tail else p for p in pieces[:-1]] + [last]
        out[name] = tuple(w for w in words if len(w) >= 2)
    return out


# How facts describe the conduct of common charges when they do not use the charge's own words (骗取 for
# 诈骗, 醉酒驾驶 for 危险驾驶). Hand-written from the statutory definitions, not learned from the test data.
ALIASES: dict[str, tuple[str, ...]] = {
    "诈骗罪": ("骗取", "骗得", "虚构事实", "隐瞒真相"),
    "盗窃罪": ("窃取", "盗走", "偷走", "扒窃", "盗得", "窃得"),
    "抢劫罪": ("劫取", "抢走", "持刀抢"),
    "抢夺罪": ("夺走", "抢夺"),
    "危险驾驶罪": ("醉酒驾驶", "醉驾", "醉酒后驾驶", "追逐竞驶", "血液中乙醇含量"),
    "交通肇事罪": ("交通事故", "肇事"),
    "故意伤害罪": ("致其轻伤", "致其重伤", "致被害人轻伤", "致被害人重伤", "构成轻伤", "构成重伤", "损伤程度"),
    "寻衅滋事罪": ("随意殴打", "起哄闹事", "强拿硬要", "任意损毁", "追逐、拦截"),
    "强迫交易罪": ("强行要求", "强买强卖", "强迫他人"),
    "走私、贩卖、运输、制造毒品罪": ("贩卖", "出售甲基苯丙胺", "出售海洛因", "卖给", "以人民币"),
    "容留他人吸毒罪": ("容留",),
    "非法持有毒品罪": ("持有甲基苯丙胺", "持有海洛因", "非法持有"),
    "开设赌场罪": ("赌场", "开设赌", "抽头", "赌博网站"),
    "妨害公务罪": ("依法执行职务", "阻碍", "袭警"),
    "拒不执行判决、裁定罪": ("拒不执行", "拒不履行", "有能力执行"),
    "掩饰、隐瞒犯罪所得、犯罪所得收益罪": ("明知是", "赃物", "收购"),
    "信用卡诈骗罪": ("信用卡", "透支"),
    "引诱、容留、介绍卖淫罪": ("卖淫",),
    "组织卖淫罪": ("组织卖淫",),
    "非法拘禁罪": ("拘禁", "限制人身自由", "限制其人身自由"),
    "敲诈勒索罪": ("勒索", "要挟", "威胁"),
    "职务侵占罪": ("侵占", "利用职务"),
    "挪用资金罪": ("挪用",),
    "聚众斗殴罪": ("斗殴",),
    "强制猥亵、侮辱罪": ("猥亵",),
    "猥亵儿童罪": ("猥亵",),
    "非法狩猎罪": ("狩猎", "猎捕"),
    "滥伐林木罪": ("砍伐", "采伐"),
    "盗伐林木罪": ("盗伐",),
    "非法采矿罪": ("采矿", "采砂", "开采"),
    "失火罪": ("失火", "引燃"),
    "组织、领导传销活动罪": ("传销",),
    "虚开增值税专用发票、用于骗取出口退税、抵扣税款发票罪": ("虚开增值税",),
    "非法吸收公众存款罪": ("吸收公众存款", "吸收存款", "高息"),
    "帮助信息网络犯罪活动罪": ("银行卡", "支付结算"),
    "侵犯公民个人信息罪": ("个人信息",),
}


def keyword_positions(facts: str) -> dict[str, list[int]]:
    """Official name -> positions in ``facts`` where one of its keywords or aliases occurs."""
    hits: dict[str, list[int]] = {}
    names = set(charge_names())
    words_of = {n: w + tuple(ALIASES.get(n, ())) for n, w in charge_keywords().items()}
    for name, aliases in ALIASES.items():
        if name in names and name not in words_of:
            words_of[name] = aliases
    for name, words in words_of.items():
        for w in words:
            pos = facts.find(w)
            while pos >= 0:
                hits.setdefault(name, []).append(pos)
                pos = facts.find(w, pos + 1)
    return hits


# -------------------------------------------------------------------------------------- similar cases

DENSE_CHARS = 20_000  # the facts as given: the encoder truncates them to its own input length
DENSE_TAU = 0.05

@dataclass(frozen=True)
class Neighbour:
    id: str
    weight: float  # BM25 score divided by the best neighbour's


class NeighbourIndex:
    """The labelled cases nearest to some facts: BM25 over their facts or, with an ``encoder``, the cosine of its
    query vectors (facts cut to ``DENSE_CHARS``; weight ``exp((cos - cos_best) / DENSE_TAU)``). A case is never
    its own neighbour. ``vectors`` (the cases' query vectors, in ``ids`` order) spare re-encoding a saved model."""

    def __init__(self, ids: Sequence[str], facts: Sequence[str], max_chars: int = 1500, encoder=None, vectors=None,
                 digests: Mapping[str, str] | None = None):
        self.encoder = encoder
        self.ids = list(ids)
        self.digests: dict[str, str] = dict(digests or {})  # id -> SHA-256 of its cut facts (a model without texts)
        if encoder is not None:
            import numpy as np

            self.max_chars = DENSE_CHARS
            self.facts = {i: f[:DENSE_CHARS] for i, f in zip(ids, facts)}
            if vectors is None and self.digests:
                raise ValueError("the neighbours of cases without their facts need the saved vectors")
            self.vectors = np.asarray(vectors if vectors is not None else
                                      encoder.encode_queries([self.facts[i] for i in self.ids]), dtype=np.float32)
            if not self.digests:
                self.digests = {i: sha256_text(f) for i, f in self.facts.items()}
            return
        if digests:
            raise ValueError("BM25 neighbours search the cases' facts; these cases hold only their digests")
        from legalrag.retrieval.bm25 import BM25Retriever
        from legalrag.retrieval.tokenize import tokenizer_for

        self.max_chars = max_chars
        self.facts = {i: f[:max_chars] for i, f in zip(ids, facts)}
        docs = [Document(id=i, text=self.facts[i]) for i in ids]
        self.retriever = BM25Retriever.from_documents(docs, tokenizer_for("zh"))

    def subset(self, ids: Sequence[str]) -> "NeighbourIndex":
        """The same index restricted to ``ids`` (dense indexes only: the vectors are shared, not re-encoded)."""
        import numpy as np

        if self.encoder is None:
            return NeighbourIndex(ids, [self.facts[i] for i in ids], self.max_chars)
        pos = {i: j for j, i in enumerate(self.ids)}
        rows = [pos[i] for i in ids]
        return NeighbourIndex(list(ids), [self.facts.get(i, "") for i in ids], encoder=self.encoder,
                              vectors=self.vectors[np.array(rows, dtype=int)] if rows else self.vectors[:0],
                              digests={i: self.digests[i] for i in ids})

    def query_vector(self, facts: str):
        """The encoder's query vector of ``facts`` as :meth:`search` compares it."""
        import numpy as np

        return np.asarray(self.encoder.encode_queries([facts[: self.max_chars]]), dtype=np.float32)[0]

    def search(self, facts: str, k: int = 10, exclude: Iterable[str] = (), vector=None) -> list[Neighbour]:
        """``vector``: the facts' query vector when already computed (:meth:`query_vector`)."""
        query = facts[: self.max_chars]
        skip = set(exclude)
        if self.encoder is not None:
            return self._dense(query, k, skip, vector)
        hits = [h for h in self.retriever.retrieve(query, k=k + len(skip) + 1)
                if h.id not in skip and self.facts[h.id] != query and h.score > 0][:k]
        if not hits:
            return []
        top = hits[0].score
        return [Neighbour(h.id, h.score / top) for h in hits]

    def _dense(self, query: str, k: int, skip: set, vector=None) -> list[Neighbour]:
        import math

        import numpy as np

        if not len(self.ids):
            return []
        vec = vector if vector is not None else self.query_vector(query)
        cos = self.vectors @ vec
        own = sha256_text(query)  # a case is never its own neighbour, even under another id
        top = min(len(cos), k + len(skip) + 8)  # enough to drop the skipped ones and an exact repeat
        cut = np.argpartition(-cos, top - 1)[:top] if top < len(cos) else np.arange(len(cos))
        ranked = cut[np.lexsort((cut, -cos[cut]))]
        order = [int(j) for j in ranked if self.ids[j] not in skip and self.digests[self.ids[j]] != own][:k]
        if not order:
            return []
        best = float(cos[order[0]])
        return [Neighbour(self.ids[j], math.exp((float(cos[j]) - best) / DENSE_TAU)) for j in order]


class ChargeCentroids:
    """A nearest-centroid charge classifier over the encoder's case vectors: per charge, the normalised mean of
    the vectors of the cases that carry it. A labelled case's own fold is left out of the centroids it is scored
    against (``fold`` of :meth:`scores`), as the count tables are."""

    def __init__(self, cases, index: "NeighbourIndex", fold_of: Mapping[str, int]):
        import numpy as np

        self.names = sorted({ch for c in cases for ch in c.charges})
        col = {n: j for j, n in enumerate(self.names)}
        pos = {i: j for j, i in enumerate(index.ids)}
        folds = sorted(set(fold_of.values()))
        dim = index.vectors.shape[1]
        self.sums = np.zeros((len(folds) + 1, len(self.names), dim), dtype=np.float64)  # last: all cases
        self.counts = np.zeros((len(folds) + 1, len(self.names)))
        for c in cases:
            v = index.vectors[pos[c.id]]
            for ch in set(c.charges):
                self.sums[fold_of[c.id], col[ch]] += v
                self.counts[fold_of[c.id], col[ch]] += 1
        self.sums[-1] = self.sums[:-1].sum(axis=0)
        self.counts[-1] = self.counts[:-1].sum(axis=0)
        self._cache: dict = {}

    def _centroids(self, fold):
        import numpy as np

        key = -1 if fold is None else fold
        if key not in self._cache:
            s = self.sums[-1] - (self.sums[fold] if fold is not None else 0)
            n = self.counts[-1] - (self.counts[fold] if fold is not None else 0)
            norm = np.linalg.norm(s, axis=1)
            c = s / np.maximum(norm, 1e-9)[:, None]
            c[n == 0] = 0.0
            self._cache[key] = (c.astype(np.float32), n > 0)
        return self._cache[key]

    def scores(self, vector, fold: int | None = None) -> list[tuple[str, float]]:
        """(charge, cosine to its centroid), best first; charges without a case outside ``fold`` left out."""
        import numpy as np

        cent, ok = self._centroids(fold)
        cos = cent @ np.asarray(vector, dtype=np.float32)
        order = np.argsort(-cos, kind="stable")
        return [(self.names[j], float(cos[j])) for j in order if ok[j]]


def vote(neighbours: Sequence[Neighbour], labels: Mapping[str, Iterable]) -> dict:
    """Weighted share of the neighbours whose label set holds each item."""
    total = sum(n.weight for n in neighbours) or 1.0
    out: dict = defaultdict(float)
    for n in neighbours:
        for item in set(labels.get(n.id, ())):
            out[item] += n.weight / total
    return dict(out)


# ---------------------------------------------------------------------------------- co-occurrence tables

class CoTable:
    """Counts of (condition, item) over labelled cases, with leave-one-out probabilities for training rows."""

    def __init__(self, pairs: Mapping[str, Mapping[str, int]] | None = None, conditions: Mapping[str, int] | None = None):
        self.pairs: dict[str, dict[str, int]] = {k: dict(v) for k, v in (pairs or {}).items()}
        self.conditions: dict[str, int] = dict(conditions or {})

    def add(self, conditions: Iterable[str], items: Iterable[str]) -> None:
        conds, its = set(conditions), set(items)
        for c in conds:
            self.conditions[c] = self.conditions.get(c, 0) + 1
            row = self.pairs.setdefault(c, {})
            for i in its:
                row[i] = row.get(i, 0) + 1

    def prob(self, condition: str, item: str, *, own: tuple[Iterable[str], Iterable[str]] | None = None,
             min_count: int = 1) -> float:
        """P(item | condition); ``own`` = (conditions, items) of a training row to leave out of the counts."""
        n = self.conditions.get(condition, 0)
        k = self.pairs.get(condition, {}).get(item, 0)
        if own is not None:
            conds, its = set(own[0]), set(own[1])
            if condition in conds:
                n -= 1
                k -= int(item in its)
        return k / n if n >= min_count and n > 0 else 0.0

    def items_for(self, condition: str) -> list[str]:
        return list(self.pairs.get(condition, {}))

    def to_dict(self) -> dict:
        return {"conditions": self.conditions, "pairs": self.pairs}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CoTable":
        return cls(d.get("pairs", {}), d.get("conditions", {}))


def share(counter: Counter, total: int, item: str, own: bool = False) -> float:
    """Share of labelled cases holding ``item``, leaving one out when ``own`` holds it too."""
    k, n = counter.get(item, 0) - int(own), total - (1 if total > 1 else 0)
    return max(k, 0) / n if n > 0 else 0.0
