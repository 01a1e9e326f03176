"""Signals the structure predictors combine: explicit charge mentions, charge keywords, similar cases,
co-occurrence tables learned from labelled cases, and statutory ranges read from the statute corpus.

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


def keyword_hits(facts: str) -> dict[str, list[int]]:
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


# ------------------------------------------------------------------------------------ statutory ranges

_CN_NUM = "零一二两三四五六七八九十百"
_UPPER = re.compile(rf"([{_CN_NUM}]+)年以下有期徒刑")
_LOWER = re.compile(rf"([{_CN_NUM}]+)年以上")
_OPEN = re.compile(rf"[{_CN_NUM}]+年以上有期徒刑")  # a tier with no upper bound of its own

# The Criminal Law's general limits (arts. 38, 42, 45): 管制 3 months to 2 years, 拘役 1 to 6 months, a fixed
# term 6 months to 15 years; life (or death) counts as 240 months, the benchmark's convention (extract.LIFE_MONTHS).
SUPERVISION = (3, 24)
DETENTION = (1, 6)
FIXED_TERM = (6, 180)
LIFE = 240
# Art. 69: the combined term of several crimes at most 3 years of 管制, 1 year of 拘役, and of a fixed term
# 20 years, or 25 when the terms add up to 35 years or more.
COMBINED_SUPERVISION, COMBINED_DETENTION = 36, 12
COMBINED_FIXED, COMBINED_FIXED_LONG, COMBINED_LONG_FROM = 240, 300, 420


def statutory_range(article_text: str) -> tuple[int, int] | None:
    """(least, most) months an article allows across its tiers, or None when it states no custodial penalty.

    ``处三年以下有期徒刑、拘役或者管制；数额巨大的，处三年以上十年以下有期徒刑`` -> (1, 120); ``处拘役，并处罚金``
    -> (1, 6) (art. 42); ``处二年以下管制`` alone -> (3, 24) (art. 38); a tier without an upper bound
    (``七年以上有期徒刑``) reaches 15 years (art. 45); a tier with 无期徒刑 or 死刑 raises the most to 240 (life,
    the benchmark's convention). The least is one month with 拘役, three with 管制, else the lowest tier's
    floor or six months."""
    from legalrag.numerals import to_int

    fixed, detention, supervision = "有期徒刑" in article_text, "拘役" in article_text, "管制" in article_text
    life = "无期徒刑" in article_text or "死刑" in article_text
    if not (fixed or detention or supervision or life):
        return None
    uppers = [to_int(m.replace("两", "二")) * 12 for m in _UPPER.findall(article_text)]
    lowers = [to_int(m.replace("两", "二")) * 12 for m in _LOWER.findall(article_text)] if fixed or life else []
    if detention:
        least = DETENTION[0]
    elif supervision:
        least = SUPERVISION[0]
    else:
        least = min(lowers) if lowers else FIXED_TERM[0]
    if life:
        most = LIFE
    elif fixed:
        most = max(uppers + lowers) if uppers or lowers else FIXED_TERM[1]
        if not uppers or _OPEN.search(article_text):
            most = FIXED_TERM[1]
    else:  # 拘役 and/or 管制 only
        most = max(DETENTION[1] if detention else 0, SUPERVISION[1] if supervision else 0)
    return (least, max(least, most))


def combined_range(article_texts: Sequence[str]) -> tuple[int, int] | None:
    """The range of the term executed for several crimes, each under its article's text (art. 69): at least the
    highest floor, at most the sum of the maxima, capped at one year when every article allows only 拘役,
    three years when none allows a fixed term (管制 is served after 拘役, art. 69 para. 2), else 20 years (25 when
    the maxima add up to 35 years or more). None when an article states no custodial penalty."""
    ranges = [statutory_range(t) for t in article_texts]
    if not ranges or any(r is None for r in ranges):
        return None
    least, total = max(lo for lo, _ in ranges), sum(hi for _, hi in ranges)
    if all(hi <= DETENTION[1] for _, hi in ranges):
        cap = COMBINED_DETENTION
    elif not any("有期徒刑" in t or "无期徒刑" in t or "死刑" in t for t in article_texts):
        cap = COMBINED_DETENTION + COMBINED_SUPERVISION
    else:
        cap = COMBINED_FIXED_LONG if total >= COMBINED_LONG_FROM else COMBINED_FIXED
    return (least, max(least, min(total, cap)))


# Criminal Law articles added by amendment (第X条之一) that define a charge JuDGE's cases are convicted of but
# JuDGE's 452-article law corpus lacks (its cases cite them under the base article's number, so a 危险驾驶 case
# "cites 133", 交通肇事's article). Article -> its penalty clause in the national corpus's wording (STARD
# corpus.jsonl, 中华人民共和国刑法 as amended; tests/test_judgment_ranges.py checks each clause is verbatim there),
# and charge -> the article that defines it.
AMENDED_ARTICLES: dict[str, str] = {
    "133-1": "在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金",
    "177-1": "有下列情形之一，妨害信用卡管理的，处三年以下有期徒刑或者拘役，并处或者单处一万元以上十万元以下罚金；"
             "数量巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处二万元以上二十万元以下罚金",
    "205-1": "虚开本法第二百零五条规定以外的其他发票，情节严重的，处二年以下有期徒刑、拘役或者管制，并处罚金；"
             "情节特别严重的，处二年以上七年以下有期徒刑，并处罚金",
    "224-1": "扰乱经济社会秩序的传销活动的，处五年以下有期徒刑或者拘役，并处罚金；情节严重的，处五年以上有期徒刑，"
             "并处罚金",
    "253-1": "违反国家有关规定，向他人出售或者提供公民个人信息，情节严重的，处三年以下有期徒刑或者拘役，并处或者单处"
             "罚金；情节特别严重的，处三年以上七年以下有期徒刑，并处罚金",
    "276-1": "经政府有关部门责令支付仍不支付的，处三年以下有期徒刑或者拘役，并处或者单处罚金；造成严重后果的，处三年"
             "以上七年以下有期徒刑，并处罚金",
    "307-1": "以捏造的事实提起民事诉讼，妨害司法秩序或者严重侵害他人合法权益的，处三年以下有期徒刑、拘役或者管制，"
             "并处或者单处罚金；情节严重的，处三年以上七年以下有期徒刑，并处罚金",
}
AMENDED_CHARGES: dict[str, str] = {
    "危险驾驶罪": "133-1", "妨害信用卡管理罪": "177-1", "窃取、收买、非法提供信用卡信息罪": "177-1",
    "虚开发票罪": "205-1", "组织、领导传销活动罪": "224-1", "侵犯公民个人信息罪": "253-1",
    "拒不支付劳动报酬罪": "276-1", "虚假诉讼罪": "307-1",
}


def statutory_ranges(statutes: Sequence[Document]) -> dict[str, tuple[int, int]]:
    """Article number (as text) -> range, for every article of the corpus that states a prison term."""
    out = {}
    for d in statutes:
        rng = statutory_range(d.text)
        if rng is not None:
            out[str(d.id)] = rng
    return out
