"""The ``carry`` conversation processor: a follow-up keeps the articles the consultation has established while
the topic holds, and lets them go when the new question moves on.

Real consultations move: each later turn tends to raise a new point in a few elliptical words ("那最多能要几个月？",
"他这样合法吗？"). Searching the last question alone loses what "那" refers to; searching every question together
drowns the new point in the old ones. ``carry`` (no LLM call) fuses, by weighted reciprocal rank
(:func:`fuse_turns`, which ``fused`` uses too):

- the last question (weight 1) and the last question behind the previous one (``context_weight``: what "那" and
  "他" refer to, in the words the user used);
- the earlier questions and answers, with decaying weights, as ``fused`` does, and their laws as a prior;
- the **established articles**: the top ``carry_top`` articles this processor retrieved for each earlier turn
  (recomputed from the history, so a stateless HTTP call gets the same result as a live chat) and the articles
  the earlier answers cite (``cited``: answer text -> documents, e.g. through the corpus's citation resolver).
  They enter as one more ranked list whose weight a follow-up detector sets: ``carry_same`` when the new question
  looks like the same issue, narrower (its own top hits meet the established articles, it is too short to carry
  a point of its own, or it is written in another language than the earlier turns), else ``carry_new``; on a new
  point the earlier turns' searches are weighed down by ``history_new`` (a factor) and the law prior drops to
  ``law_prior_new``.

:attr:`FollowUp.last_trace` says, after each call, which queries were searched, which established articles
were carried into the top ``k`` and what the detector decided; the CLI, ``POST /consult`` and the web chat show it.
History is bounded: only the last ``max_turns`` earlier turns are searched or carried, so a 30-turn consultation
costs the same per turn as a five-turn one.
"""

from __future__ import annotations

import re
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from legalrag.errors import InputError
from legalrag.answer.prompt import check_turns
from legalrag.types import Document, Hit, Search, Turn

Cited = Callable[[str], Sequence[Document]]

_CJK = re.compile(r"[\u4e00-\u9fff]")
# Words that carry no point of their own in a follow-up: openers, pronouns, question words, particles.
# "最多 / 几个月 / 多久 / 多少钱" ask how much of what was just discussed: no point of their own either.
_FILLER = re.compile(r"那么|那如果|如果|还有|另外|对了|这样|这种|这个|那个|这些|他们|她们|它们|我们|什么|怎么|怎样|如何|"
                     r"最多|最少|最长|最短|最高|最低|几个月|几个|几年|几天|几倍|多久|多长时间|多长|多少钱|"
                     r"哪些|多少|是否|能否|可以|可不可以|能不能|会不会|应该|需要|的话|情况|吗|呢|吧|啊|了|的|是|"
                     r"[那这他她它我你您要能会还又再也都就]|[\s，。？！?!,.、：:；;“”\"'（）()]")


def questions_answers(turns: Sequence[Turn]) -> tuple[list[str], list[str]]:
    """(user questions, assistant answers), oldest first, whitespace collapsed, empty ones dropped."""
    turns = check_turns(turns)
    questions = [" ".join(t.content.split()) for t in turns if t.role == "user" and t.content.strip()]
    answers = [" ".join(t.content.split()) for t in turns if t.role == "assistant" and t.content.strip()]
    return questions, answers


def fuse_turns(runs: Sequence[tuple[Sequence[Hit], float, bool]], k: int, *, rrf_k: int = 60,
               law_prior: float = 0.0, law_top: int = 5) -> list[Hit]:
    """Weighted reciprocal-rank fusion of ``(hits, weight, is last question)`` runs; the runs that are not the
    last question vote with their weights for the laws of their top ``law_top`` hits."""
    scores: dict[str, float] = defaultdict(float)
    docs, sources = {}, defaultdict(dict)
    votes: dict[str, float] = defaultdict(float)
    total = 0.0
    for i, (hits, weight, last) in enumerate(runs):
        for rank, h in enumerate(hits, 1):
            scores[h.id] += weight / (rrf_k + rank)
            docs.setdefault(h.id, h.document)
            sources[h.id].setdefault("last" if last else f"turn-{i}", rank)
        if not last and hits:
            top = hits[:law_top]
            for h in top:
                votes[h.document.metadata.get("law", "")] += weight / len(top)
            total += weight
    votes.pop("", None)
    if law_prior > 0 and total > 0:
        for doc_id in scores:
            scores[doc_id] *= 1.0 + law_prior * votes.get(docs[doc_id].metadata.get("law", ""), 0.0) / total
    order = sorted(scores, key=lambda d: (-scores[d], min(sources[d].values()), d))[:k]
    return [Hit(docs[d], scores[d], r, "fused", dict(sources[d])) for r, d in enumerate(order, 1)]


def content_chars(question: str) -> int:
    """How many characters of ``question`` are left once openers, pronouns and question words are removed."""
    return len(_FILLER.sub("", question))


# -- is a follow-up elliptical? (the rule of the ``auto`` processor) -----------------------------------------
# A follow-up that names a legal matter of its own (a claim, a party's act, a procedural step: "起诉", "仲裁",
# "刑事责任", "抚养费") is searched with the earlier turns fused; one that names none ("那最多能要几个月？",
# "他受法律保护不？") leans on what the consultation established, and carries it. The nouns are the common names of
# claims, parties' acts, remedies and procedures in Chinese national law, written from the laws' own vocabulary;
# words every legal question has ("法律", "责任", "权利", "义务", "规定", "合法") name no matter and are not in it.
LEGAL_NOUNS = tuple(sorted(set("""
合同 协议 合约 违约 违约金 定金 订金 押金 保证金 租金 房租 租赁 出租 承租 转租 买卖 购房 卖房 过户 贷款 借款 借条 欠条 欠款 债务 债权
利息 高利贷 担保 保证人 抵押 质押 赠与 遗嘱 遗产 继承 赡养 抚养 抚养费 抚养权 探视 监护 收养 离婚 结婚 婚姻 彩礼 嫁妆 夫妻
共同财产 婚前 房产 房屋 住房 宅基地 土地 承包 拆迁 征收 安置 补偿 物业 业主 装修 相邻 漏水 户口 居住证 工资 薪水 加班 加班费
社保 社会保险 公积金 养老金 工伤 伤残 职业病 劳动合同 试用期 辞退 开除 解雇 裁员 辞职 离职 经济补偿 赔偿金 双倍工资 年假 产假
婚假 病假 竞业 培训 劳务 派遣 赔偿 损失 精神损害 医疗费 误工费 伤害 侵权 名誉 隐私 肖像 诽谤 交通事故 事故 肇事 逃逸 酒驾 醉驾
驾照 驾驶证 保险 理赔 交强险 医疗事故 医院 消费者 退货 换货 退款 假货 欺诈 质量 产品 三包 网购 快递 商家 发票 税 纳税 个税 罚款
处罚 拘留 行政拘留 刑事拘留 逮捕 取保候审 监视居住 判刑 量刑 缓刑 减刑 假释 有期徒刑 无期徒刑 死刑 罚金 犯罪 罪 立案 报案 报警
自首 立功 从犯 共犯 盗窃 诈骗 抢劫 抢夺 敲诈 勒索 贪污 受贿 行贿 挪用 侵占 故意伤害 伤害罪 强奸 猥亵 赌博 毒品 吸毒 传销
非法集资 集资 寻衅滋事 聚众斗殴 妨害公务 洗钱 起诉 诉讼 上诉 申诉 再审 抗诉 仲裁 调解 复议 行政复议 行政诉讼 判决 裁定 裁决
执行 强制执行 查封 扣押 冻结 拍卖 失信 限高 证据 鉴定 证人 律师 管辖 时效 诉讼时效 期限 公证 登记 许可 吊销 营业执照 公司
股东 股权 法定代表人 破产 清算 合伙 商标 专利 著作权 版权 知识产权 不正当竞争 垄断 个人信息 网络 直播 未成年人 学校 老人 残疾
""".split())))


def legal_nouns(question: str) -> list[str]:
    """The legal matters ``question`` names of its own (see :data:`LEGAL_NOUNS`), longest first."""
    found = [n for n in LEGAL_NOUNS if n in question]
    return sorted((n for n in found if not any(n != m and n in m for m in found)), key=lambda n: (-len(n), n))


# What marks a follow-up that leans on the turns before it: it opens with a reference back ("那", "那如果",
# "这个", "他"), ends with "呢", or asks how much / how long of what was discussed ("最多", "几个月").
_ELLIPSIS_OPENER = re.compile(r"^(那么|那如果|那要是|那|这样的话|这样|这种|这个|这些|这|他们|她们|它们|他|她|它|其|该|还有|另外|对了|"
                              r"如果这样|要是这样)")
_ELLIPSIS_CUE = re.compile(r"呢[？?。！!]*$|最多|最少|最长|最短|最高|最低|几个月|几年|几天|几倍|多久|多长时间|多少钱|多少")


def elliptical(question: str, *, short: int = 6) -> tuple[bool, str]:
    """Whether a follow-up leans on the consultation (True: carry what it established) or raises a point of its
    own (False: search it with the earlier turns fused), with the reason. Elliptical: it names no legal matter of
    its own (:func:`legal_nouns`) and either carries an ellipsis cue (an opener that refers back, a closing "呢",
    a how-much word) or has at most ``short`` characters of its own (:func:`content_chars`)."""
    if short < 0:
        raise InputError(f"short must be 0 or more, got {short}")
    text = " ".join((question or "").split())
    own = legal_nouns(text)
    if own:
        return False, f"names a legal matter of its own ({'、'.join(own[:3])})"
    if _ELLIPSIS_OPENER.match(text):
        return True, f"refers back ({_ELLIPSIS_OPENER.match(text).group(0)}…) and names no legal matter of its own"
    cue = _ELLIPSIS_CUE.search(text)
    if cue:
        return True, f"asks about what was discussed ({cue.group(0).rstrip('？?。！!')}) and names no legal matter of its own"
    n = content_chars(text)
    if n <= short:
        return True, f"{n} character(s) of its own and no legal matter named"
    return False, f"a question of its own ({n} characters of its own)"


@dataclass(frozen=True)
class FollowUpTrace:
    """What the processor did for the last turn: shown to the user beside the answer."""

    searched: tuple[str, ...] = ()  # the query texts of the new question (the last question, and with context)
    carried: tuple[str, ...] = ()  # established articles (ids) that made the top k
    established: tuple[str, ...] = ()  # every established article (ids) offered, most recent turn first
    same_issue: bool | None = None  # the detector: True same issue, False a new point, None moved (or a first question)
    reason: str = ""

    def to_dict(self, titles: dict[str, str] | None = None) -> dict[str, Any]:
        titles = titles or {}
        return {"searched": list(self.searched), "same_issue": self.same_issue,
                "moved": self.same_issue is None and bool(self.reason), "reason": self.reason,
                "carried": [{"id": i, "title": titles.get(i, i)} for i in self.carried]}


class SearchCache:
    """A bounded LRU of what was found per search function and key. Each entry holds the function itself, so
    its id (part of the entry's key) cannot be given to another function while the entry lives: a search made
    per call (the consultation benchmark makes one per retriever) is never answered with another one's hits."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[tuple, tuple[Search, Any]] = OrderedDict()

    def get(self, search: Search, key: tuple) -> Any:
        """The value stored for ``search`` and ``key``, or None."""
        entry = self._entries.get((id(search),) + key)
        if entry is None or entry[0] is not search:
            return None
        self._entries.move_to_end((id(search),) + key)
        return entry[1]

    def put(self, search: Search, key: tuple, value: Any) -> None:
        self._entries[(id(search),) + key] = (search, value)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)


class FollowUp:
    """``carry``: the last question, its context, the earlier turns, and the established articles, fused."""

    name = "carry"

    # Defaults: the weights a coordinate search chose on the development part of the STARD-grounded consultations
    # (bench/consultation/bench_consultation_follow.py, BM25 over the full corpus; docs/lab/consultation.md). The "moved"
    # decision (moved_share >= 0) lost on that part, so it is off by default (a negative share).
    def __init__(self, *, context_weight: float = 0.5, question_decay: float = 0.1, answer_weight: float = 0.5,
                 law_prior: float = 2.0, carry_same: float = 0.5, carry_new: float = 0.5, carry_top: int = 3,
                 law_prior_new: float = 1.0, history_new: float = 0.5,
                 short_question: int = 4, moved_share: float = -1.0, overlap_top: int = 10, max_turns: int = 4, law_top: int = 5,
                 depth: int = 100, rrf_k: int = 60, cited: Cited | None = None, cache_size: int = 1024):
        for label, value in (("context_weight", context_weight), ("question_decay", question_decay),
                             ("answer_weight", answer_weight), ("law_prior", law_prior), ("carry_same", carry_same),
                             ("carry_new", carry_new), ("short_question", short_question),
                             ("law_prior_new", law_prior_new), ("history_new", history_new)):
            if value < 0:
                raise InputError(f"{label} must be 0 or more, got {value}")
        for label, value in (("carry_top", carry_top), ("overlap_top", overlap_top), ("max_turns", max_turns),
                             ("law_top", law_top), ("depth", depth), ("rrf_k", rrf_k)):
            if value < 1:
                raise InputError(f"{label} must be at least 1, got {value}")
        self.context_weight, self.question_decay, self.answer_weight = context_weight, question_decay, answer_weight
        self.law_prior, self.carry_same, self.carry_new, self.carry_top = law_prior, carry_same, carry_new, carry_top
        self.short_question, self.overlap_top, self.max_turns = short_question, overlap_top, max_turns
        self.law_top, self.depth, self.rrf_k, self.cited = law_top, depth, rrf_k, cited
        self.law_prior_new, self.history_new, self.moved_share = law_prior_new, history_new, moved_share
        self._cache = SearchCache(cache_size)  # (text,) -> hits
        self._memo = SearchCache(cache_size)  # (questions, answers, k) -> (hits, trace)
        self._cited_memo: OrderedDict[str, list[Document]] = OrderedDict()
        self._cache_size = cache_size
        self.searches = 0
        self.last_trace = FollowUpTrace()

    def params(self) -> dict[str, Any]:
        return {"context_weight": self.context_weight, "question_decay": self.question_decay,
                "answer_weight": self.answer_weight, "law_prior": self.law_prior, "carry_same": self.carry_same,
                "carry_new": self.carry_new, "carry_top": self.carry_top, "short_question": self.short_question,
                "overlap_top": self.overlap_top, "max_turns": self.max_turns, "law_prior_new": self.law_prior_new,
                "history_new": self.history_new, "moved_share": self.moved_share}

    # -- the query text (for processors that make one string; shown to the user) --------------------------------
    def __call__(self, turns: Sequence[Turn]) -> str:
        questions, _ = questions_answers(turns)
        return self._context_query(questions) or questions[-1]

    def _context_query(self, questions: Sequence[str]) -> str | None:
        if len(questions) < 2 or self.context_weight <= 0:
            return None
        return f"{questions[-2]} {questions[-1]}"

    # -- every text a call searches (so a benchmark can run them once, in one batch) ----------------------------
    def queries(self, turns: Sequence[Turn]) -> list[tuple[str, float, bool]]:
        questions, answers = questions_answers(turns)
        out: dict[str, tuple[str, float, bool]] = {}
        for n in range(max(1, len(questions) - self.max_turns), len(questions) + 1):
            for item in self._runs(questions[:n], answers[:n - 1]):
                out.setdefault(item[0], item)
        return list(out.values())

    def _runs(self, questions: Sequence[str], answers: Sequence[str]) -> list[tuple[str, float, bool]]:
        out = [(questions[-1], 1.0, True)]
        context = self._context_query(questions)
        if context:
            out.append((context, self.context_weight, False))
        for j, q in enumerate(reversed(questions[:-1][-self.max_turns:]), 1):
            out.append((q, self.question_decay ** j, False))
        for j, a in enumerate(reversed(answers[-self.max_turns:]), 1):
            out.append((a, self.answer_weight * self.question_decay ** (j - 1), False))
        return [x for x in out if x[1] > 0]

    def _search(self, search: Search, text: str) -> list[Hit]:
        hits = self._cache.get(search, (text,))
        if hits is None:
            hits = list(search(text, self.depth))
            self.searches += 1
            self._cache.put(search, (text,), hits)
        return hits

    def _cited(self, answer: str) -> list[Document]:
        if self.cited is None or not answer:
            return []
        if answer not in self._cited_memo:
            self._cited_memo[answer] = list(self.cited(answer))
            if len(self._cited_memo) > self._cache_size:
                self._cited_memo.popitem(last=False)
        return self._cited_memo[answer]

    # -- the follow-up detector ---------------------------------------------------------------------------------
    def same_issue(self, questions: Sequence[str], last_hits: Sequence[Hit],
                   established: Sequence[Document]) -> tuple[bool | None, str]:
        """True when the last question continues the established issue (its articles are carried at
        ``carry_same``), False when it raises a new point (``carry_new``), None when it has moved to other
        laws (at most ``moved_share`` of its own top hits come from the established articles' laws: nothing
        is carried and the earlier turns are left out); with the reason."""
        question = questions[-1]
        if not _CJK.search(question) and any(_CJK.search(q) for q in questions[:-1]):
            return True, "written in another language than the earlier turns"
        if content_chars(question) <= self.short_question:
            return True, "too short to raise a point of its own"
        top = list(last_hits[:self.overlap_top])
        ids = {d.id for d in established}
        shared = [h for h in top if h.id in ids]
        if shared:
            return True, f"its own search finds {len(shared)} established article(s)"
        laws = {d.metadata.get("law") for d in established} - {None, ""}
        share = sum(h.document.metadata.get("law") in laws for h in top) / len(top) if top else 0.0
        if laws and self.moved_share >= 0 and share <= self.moved_share:  # a negative share: never "moved"
            return None, "moved to other laws: its own search meets none of the established articles' laws"
        return False, "a new point: its own search meets none of the established articles"

    # -- retrieval ----------------------------------------------------------------------------------------------
    def retrieve(self, search: Search, turns: Sequence[Turn], k: int = 10) -> list[Hit]:
        """The top ``k`` for the last question of ``turns``; :attr:`last_trace` says what was carried."""
        questions, answers = questions_answers(turns)
        hits, trace = self._retrieve(search, tuple(questions), tuple(answers[:len(questions) - 1]), k)
        self.last_trace = trace
        return hits

    def _retrieve(self, search: Search, questions: tuple[str, ...], answers: tuple[str, ...],
                  k: int) -> tuple[list[Hit], FollowUpTrace]:
        key = (questions, answers, k)
        done = self._memo.get(search, key)
        if done is not None:
            return done
        runs = [(self._search(search, text), weight, last) for text, weight, last in self._runs(questions, answers)]
        context = self._context_query(questions)
        searched = (questions[-1],) + ((context,) if context else ())
        if len(questions) == 1:
            hits = fuse_turns(runs, k, rrf_k=self.rrf_k)
            result = (hits, FollowUpTrace(searched=searched))
        else:
            established: dict[str, Document] = {}
            start = max(1, len(questions) - self.max_turns)
            for n in range(len(questions) - 1, start - 1, -1):  # the most recent earlier turn first
                for d in self._cited(answers[n - 1] if n - 1 < len(answers) else ""):
                    established.setdefault(d.id, d)
                earlier, _ = self._retrieve(search, questions[:n], answers[:n - 1], max(k, self.carry_top))
                for h in earlier[:self.carry_top]:
                    established.setdefault(h.id, h.document)
            same, reason = self.same_issue(questions, runs[0][0], list(established.values()))
            weight = self.carry_same if same else self.carry_new if same is False else 0.0
            if not same:  # a new point: the earlier turns and their laws count for less; moved: not at all
                factor = self.history_new if same is False else 0.0
                runs = [(h, w if last else w * factor, last) for h, w, last in runs]
                runs = [r for r in runs if r[1] > 0]
            carry = [Hit(d, 0.0, r, "carried") for r, d in enumerate(established.values(), 1)]
            if carry and weight > 0:
                runs.append((carry, weight, False))
            prior = self.law_prior if same else self.law_prior_new if same is False else 0.0
            hits = fuse_turns(runs, k, rrf_k=self.rrf_k, law_prior=prior, law_top=self.law_top)
            carried = tuple(h.id for h in hits if h.id in established)
            result = (hits, FollowUpTrace(searched, carried, tuple(established), same, reason))
        self._memo.put(search, key, result)
        return result


def cited_documents(resolver: Any) -> Cited:
    """``answer text -> documents`` it cites that resolve in the corpus, through a ``CitationResolver`` (or a
    zero-argument function that returns one, called on first use)."""
    state: dict[str, Any] = {}

    def cited(text: str) -> list[Document]:
        if "resolver" not in state:
            state["resolver"] = resolver() if callable(resolver) and not hasattr(resolver, "lookup") else resolver
        r = state["resolver"]
        out: dict[str, Document] = {}
        for m in r.extract(text):
            doc = r.lookup(m.citation).document
            if doc is not None:
                out.setdefault(doc.id, doc)
        return list(out.values())

    return cited
