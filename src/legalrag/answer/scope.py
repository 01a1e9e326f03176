"""The scope decision: is a message a legal question about the law the corpus holds (Chinese national law)?

Before the model is called, the answer engine asks :func:`scope_verdict`. A message outside the corpus's scope
(a question on foreign law or on the law of Hong Kong, Macao or Taiwan, a recipe, chit-chat, a coding question)
gets one line in its own language saying what legalrag covers and what would answer it, and the model is not
called. A person declined wrongly asks anyway: ``legalrag ask --force``, ``"force": true`` on ``POST /ask`` and
``POST /consult``, the web page's "ask anyway" button; each runs the answer inside :func:`answer_anyway`.

The decision is a logistic regression (``data/models/scope/scope_model.json``, its card beside it) over the
features of :func:`features`:

- the message's character uni- and bigrams (Chinese) and its words and word pairs (English);
- hits of a legal vocabulary (:data:`LEGAL_TERMS`), and the share of its Chinese bigrams that occur in the
  national corpus (the citation checker's bigram table);
- whether it names a foreign jurisdiction without naming China (``guard.foreign_jurisdiction``, one feature
  among the others, not the decision), or names China;
- for a Chinese message whose hits come from the scorer the model was fitted on (the shipped index's stard-e5
  component), the best retrieval score, the mean of the best five and their spread.

Two models are fitted: ``full`` (with the retrieval scores) and ``text`` (without, for hits of another scorer,
e.g. a user's BM25 index, or an English message, whose search goes through the model's translation).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from legalrag.answer.guard import GuardVerdict, foreign_jurisdiction, mentions_china
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.types import Hit

MODEL_DIR = Path(__file__).resolve().parents[1] / "data" / "models" / "scope"
MODEL_FILE = "scope_model.json"
FEATURES_VERSION = "scope-features-3"
NUMERIC = ("legal_terms", "corpus_cover", "length", "top1", "mean5", "spread5")
SCORED = ("top1", "mean5", "spread5")  # retrieval features: only with hits of the model's scorer
TOP = 5

# words of legal questions (Chinese: substrings; English: whole words), for the `legal_terms` feature
LEGAL_TERMS_ZH = tuple(
    "法律 法规 违法 合法 犯法 犯罪 罪 刑 判 法院 起诉 诉讼 上诉 仲裁 律师 合同 协议 违约 赔偿 补偿 索赔 维权 责任 "
    "权利 义务 侵权 侵犯 处罚 罚款 拘留 执行 立案 管辖 时效 有效 无效 撤销 离婚 婚姻 抚养 赡养 继承 遗嘱 遗产 彩礼 "
    "劳动 工资 辞退 解除 工伤 社保 公积金 加班 试用期 借款 借条 债务 债权 利息 担保 保证人 抵押 押金 定金 房东 租赁 "
    "承租 出租 股东 股权 公司 注册 商标 专利 著作权 征收 拆迁 宅基地 承包 行政 复议 听证 公安 派出所 交警 驾驶 "
    "肇事 取保候审 缓刑 判刑 条例 规定 司法 证据 证人 消费者 商家 物业 业主 个人信息 监护 未成年人 签证 移民 税 "
    "辞职 离职 单位 老板 员工 欠 借 还钱 退款 退费 赔 罚 抚养费 房产 产权 过户 报警 警察 立案 骗 欺诈 盗 伤害 事故 "
    "保险 索要 追偿 拖欠 有权 可以要求 能要求 承担 归谁".split())
LEGAL_TERMS_EN = frozenset(
    "law laws legal legally illegal lawful unlawful statute act code article regulation court courts judge sue "
    "suing sued lawsuit claim claims appeal arbitration lawyer attorney contract contracts agreement breach "
    "liable liability damages compensation severance penalty fine fined crime criminal offence offense "
    "prosecution police arrest bail custody divorce marriage prenuptial inherit inherits inheritance will estate "
    "probate employer employee employment dismiss fired redundancy wages overtime landlord tenant lease evict "
    "deposit debt loan interest guarantor mortgage shareholder shareholders equity company patent trademark "
    "copyright infringe infringed expropriated administrative reconsideration enforcement judgment rights visa "
    "citizenship immigration tax bankruptcy notice quit quitting resign fired dismissal salary wage job boss "
    "refund injury injured accident insurance rent rented lease spouse husband wife custody owe owes owed repay "
    "borrowed lent iou fraud theft stolen detention detained punished punishment permit licence license register "
    "registered consent guardian minor heir heirs adopted adoption compensate refuse refused entitled allowed "
    "obligations obligation dispute infringement defective seller buyer developer property ownership "
    "expropriation eviction damages".split())

_CJK = re.compile(r"[\u4e00-\u9fff]+")
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")

_FORCED: contextvars.ContextVar[bool] = contextvars.ContextVar("legalrag_scope_forced", default=False)


@contextlib.contextmanager
def answer_anyway(force: bool = True) -> Iterator[None]:
    """Within this block (``force=True``) the scope decision declines nothing: a person declined wrongly asked
    anyway (``ask --force``, the body's ``force``). The injection check still applies."""
    token = _FORCED.set(bool(force) or _FORCED.get())
    try:
        yield
    finally:
        _FORCED.reset(token)


def grams(text: str) -> list[str]:
    """The message's distinct n-grams: Chinese characters and character bigrams; English words, word pairs and
    the character trigrams of each word."""
    text = (text or "").casefold()
    out: set[str] = set()
    for run in _CJK.findall(text):
        out.update("c:" + ch for ch in run)
        out.update("b:" + run[i:i + 2] for i in range(len(run) - 1))
    words = _WORD.findall(text)
    out.update("w:" + w for w in words)
    out.update(f"v:{a}_{b}" for a, b in zip(words, words[1:]))
    for w in words:  # character trigrams of each word, for the forms a word list misses (bake, baking)
        padded = f"<{w}>"
        out.update("t:" + padded[i:i + 3] for i in range(len(padded) - 2))
    return sorted(out)


def legal_terms(text: str) -> int:
    """How many legal words the message holds (Chinese substrings, English whole words)."""
    low = (text or "").casefold()
    return sum(t in low for t in LEGAL_TERMS_ZH) + sum(w in LEGAL_TERMS_EN for w in set(_WORD.findall(low)))


def corpus_cover(text: str) -> float:
    """Share of the message's Chinese bigrams that occur in at least 20 articles of the national corpus."""
    from legalrag.citecheck.support import BigramIdf

    pairs = [run[i:i + 2] for run in _CJK.findall(text or "") for i in range(len(run) - 1)]
    if not pairs:
        return 0.0
    df = BigramIdf.load().df
    return sum(p in df for p in pairs) / len(pairs)


def features(question: str, hits: Sequence[Hit] | None, scorer: str | None) -> dict[str, float]:
    """The features of a message: its n-grams (weight 1/sqrt(n)), the numeric ones (:data:`NUMERIC`, raw) and the
    indicators. Retrieval features only when the message is Chinese and every hit comes from ``scorer``."""
    zh = detect_language(question) == "zh" if any(ch.isalpha() for ch in question) else True
    g = grams(question)
    out = {x: 1 / math.sqrt(len(g)) for x in g}
    out.update(legal_terms=math.log1p(legal_terms(question)), length=math.log1p(len(question)),
               corpus_cover=corpus_cover(question) if zh else 0.0, lang_en=0.0 if zh else 1.0,
               foreign=1.0 if foreign_jurisdiction(question) else 0.0,
               china=1.0 if mentions_china(question) else 0.0)
    scores = sorted((h.score for h in hits or ()), reverse=True)[:TOP]
    scored = bool(zh and scorer and scores and all(h.retriever == scorer for h in hits or ()))
    out["scored"] = 1.0 if scored else 0.0
    if scored:
        out.update(top1=scores[0], mean5=sum(scores) / len(scores), spread5=scores[0] - scores[-1])
    return out


@dataclass(frozen=True)
class ScopeModel:
    """A fitted logistic model: ``weights`` of n-grams and indicators, standardised numeric features
    (``mean``, ``scale``), and the ``threshold`` on the probability of "out of scope" at which a message is
    declined (chosen on the dev part)."""

    weights: Mapping[str, float]
    intercept: float
    mean: Mapping[str, float]
    scale: Mapping[str, float]
    threshold: float
    uses_scores: bool = False

    def vector(self, raw: Mapping[str, float]) -> dict[str, float]:
        """The raw features as the model reads them: numeric ones standardised; the retrieval ones 0 (their mean)
        when the message was not scored or the model does not use them."""
        out = {k: v for k, v in raw.items() if k not in NUMERIC}
        for k in NUMERIC:
            if k in SCORED and not (self.uses_scores and raw.get("scored")):
                continue
            if k in raw and k in self.mean:
                out[k] = (raw[k] - self.mean[k]) / (self.scale[k] or 1.0)
        if not self.uses_scores:
            out.pop("scored", None)
        return out

    def probability(self, raw: Mapping[str, float]) -> float:
        """P(out of scope) for a message's raw :func:`features`."""
        z = self.intercept + sum(self.weights.get(k, 0.0) * v for k, v in self.vector(raw).items())
        return 1 / (1 + math.exp(-max(min(z, 50.0), -50.0)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "scope model") -> "ScopeModel":
        try:
            return cls(dict(d["weights"]), float(d["intercept"]), dict(d["mean"]), dict(d["scale"]),
                       float(d["threshold"]), bool(d.get("uses_scores", False)))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: not a scope model ({exc!r}); fields: weights, intercept, mean, scale, "
                             "threshold", field="scope_model") from exc

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "uses_scores": self.uses_scores, "intercept": self.intercept,
                "mean": dict(self.mean), "scale": dict(self.scale),
                "weights": {k: round(v, 6) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-6}}


@dataclass(frozen=True)
class ScopeModels:
    """The model file: ``full`` (with retrieval scores of ``scorer``) and ``text`` (without)."""

    full: ScopeModel
    text: ScopeModel
    scorer: str
    about: Mapping[str, Any] = field(default_factory=dict)

    def decide(self, question: str, hits: Sequence[Hit] | None) -> tuple[float, float, dict[str, float]]:
        """(P(out of scope), the threshold, the raw features) of the model that fits these hits."""
        raw = features(question, hits, self.scorer)
        model = self.full if raw.get("scored") else self.text
        return model.probability(raw), model.threshold, raw


def load_scope_models(path: str | Path | None = None) -> ScopeModels:
    """The shipped scope model (its files checked against the card), or the model file at ``path``."""
    return _load(str(path) if path is not None else _shipped_file())


@lru_cache(maxsize=1)
def _shipped_file() -> str:
    """The shipped model file, its hash checked once per process (not on every question)."""
    from legalrag.shipped import checked

    return str(checked("scope", "scope-model").path / MODEL_FILE)


@lru_cache(maxsize=4)
def _load(path: str) -> ScopeModels:
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the scope model ({exc}); restore it with `git checkout -- "
                         "src/legalrag/data/models/scope` or retrain it with `legalrag train scope-model`",
                         path=path) from exc
    if d.get("features") != FEATURES_VERSION:
        raise InputError(f"{path}: features {d.get('features')!r}, this legalrag computes {FEATURES_VERSION!r}; "
                         "retrain it with `legalrag train scope-model`", path=path)
    models = d.get("models") or {}
    return ScopeModels(ScopeModel.from_dict(models.get("full") or {}, f"{path}: models.full"),
                       ScopeModel.from_dict(models.get("text") or {}, f"{path}: models.text"),
                       str(d.get("scorer") or ""), {k: v for k, v in d.items() if k != "models"})


OTHER_PLACES = {"香港": ("香港特别行政区", "Hong Kong"), "hong kong": ("香港特别行政区", "Hong Kong"),
                "澳门": ("澳门特别行政区", "Macao"), "macau": ("澳门特别行政区", "Macao"),
                "macao": ("澳门特别行政区", "Macao"), "台湾": ("台湾地区", "Taiwan"), "taiwan": ("台湾地区", "Taiwan")}

COVERS = {"zh": "legalrag 只回答中华人民共和国（内地）国家法律、行政法规和司法解释范围内的法律问题",
          "en": "legalrag answers legal questions on the national laws, regulations and judicial interpretations "
                "of the People's Republic of China (mainland)"}


def declined_text(lang: str, place: str | None = None, legal: bool = False) -> str:
    """The one line of a decline: what legalrag covers and what would answer the message."""
    zh = lang == "zh"
    if place:
        key = place.casefold()
        zh_name, en_name = OTHER_PLACES.get(key, (place, place))
        if zh:
            return (f"{COVERS['zh']}；这个问题涉及{zh_name}的法律，不在其中，请咨询{zh_name}执业的律师或当地的法律援助"
                    "机构（若其实问的是内地法律，可以选择仍然提问）。")
        return (f"{COVERS['en']}; this question is about the law of {en_name}, which it does not hold: a lawyer "
                f"qualified in {en_name} or a legal aid service there would answer it (if it is about mainland "
                "Chinese law after all, ask anyway).")
    if legal:
        if zh:
            return (f"{COVERS['zh']}；这个问题看起来涉及其他国家或地区的法律，不在其中，请咨询当地执业的律师（若其实问的是"
                    "内地法律，可以选择仍然提问）。")
        return (f"{COVERS['en']}; this question seems to be about another country's law, which it does not hold: "
                "a lawyer qualified there would answer it (if it is about mainland Chinese law after all, ask "
                "anyway).")
    if zh:
        return f"{COVERS['zh']}；这条消息看起来不是法律问题，请问通用助手或搜索引擎（若它其实是法律问题，可以选择仍然提问）。"
    return (f"{COVERS['en']}; this message does not look like a legal question, so a general assistant or a search "
            "engine would answer it better (if it is a legal question, ask anyway).")


def chinese_corpus(hits: Sequence[Hit]) -> bool:
    """Whether the retrieved documents are in Chinese (the national law, or a user's Chinese corpus)."""
    texts = [(h.document.text or "")[:200] for h in list(hits)[:3]]
    return any(any(ch.isalpha() for ch in t) for t in texts) and detect_language(texts) == "zh"


def scope_verdict(question: str, hits: Sequence[Hit] | None, lang: str,
                  model: ScopeModels | str | Path | None = None) -> GuardVerdict | None:
    """"Not covered" (one line in ``lang``) when the message is outside the corpus's scope, else None.

    ``hits``: what was retrieved for it (an empty list: nothing was, which is declined; hits of a corpus that is
    not in Chinese: nothing is declined, the corpus is not Chinese law; None: not searched, the text model
    decides); ``model``: the scope models (default the shipped ones) or a model file. Inside
    :func:`answer_anyway` nothing is declined."""
    if _FORCED.get():
        return None
    if hits is not None and not list(hits):
        return GuardVerdict("not_covered", declined_text(lang), reason="nothing retrieved")
    if hits is not None and not chinese_corpus(hits):
        return None  # a corpus of another language (a user's own index): the decision is about Chinese law
    models = model if isinstance(model, ScopeModels) else load_scope_models(model)
    p, threshold, raw = models.decide(question, hits)
    if p < threshold:
        return None
    place = foreign_jurisdiction(question)
    text = declined_text(lang, place, legal=raw["legal_terms"] > 0)
    which = "full" if raw.get("scored") else "text"
    return GuardVerdict("not_covered", text, reason=f"scope model ({which}): P(out of scope) {p:.3f} >= "
                        f"{threshold:.3f}" + (f"; names {place}" if place else ""))
