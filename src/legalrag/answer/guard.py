"""What the answer engine checks before and after retrieval, so that it says why instead of answering badly.

- **Injection or off-topic** (:func:`instruction_in`): a message that tries to change or reveal the assistant's
  instructions gets a one-line explanation, without retrieval or generation.
- **Outside the corpus**: the answer engine asks the scope decision (:mod:`legalrag.answer.scope`, a
  calibrated classifier of which :func:`foreign_jurisdiction` is one feature). :func:`outside_corpus`, the
  earlier rule (a foreign jurisdiction named without China, or a best retrieved score below the threshold
  calibrated for the index's default component, :data:`RELEVANCE_THRESHOLDS`), is kept for callers of it.
- **Over-long pastes** (:func:`keep_question`): the end of the message (where the question is) is kept and the
  note says how much of its beginning was cut.

Every message is one line in the question's language; the engine records it as a ``guard`` step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from legalrag.types import Hit

_INSTRUCTION = [re.compile(p, re.I) for p in (
    r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,40}?\b(?:instructions?|rules?|prompts?|guidelines?|"
    r"previous|prior|above|system)\b",
    r"\b(?:system prompt|developer mode|jailbreak|DAN mode)\b",
    r"\b(?:reveal|print|show|repeat|output)\b.{0,30}?\b(?:your|the)\b.{0,20}?\b(?:prompt|instructions)\b",
    r"\byou are now\b|\bpretend (?:to be|you are)\b|\bact as\b.{0,30}?\b(?:unrestricted|without rules)\b",
    r"(?:忽略|无视|忽视|不要理会|忘记|跳过)(?:掉)?.{0,12}?(?:指令|指示|规则|提示词?|设定|要求|限制)",
    r"系统提示|提示词|开发者模式|越狱|你现在是|你现在扮演|扮演一个|不受任何限制",
    r"(?:输出|打印|告诉我|重复|显示).{0,8}?(?:你的|你收到的)?(?:指令|设定|提示)",
)]

# jurisdictions whose law a Chinese national-law corpus does not hold (named without China in the question);
# one feature of the scope decision (answer/scope.py), not the decision itself
_FOREIGN = re.compile(
    r"美国|英国|日本|德国|法国|韩国|加拿大|澳大利亚|新加坡|欧盟|欧洲|俄罗斯|印度|瑞士|意大利|西班牙|荷兰|新西兰|"
    r"香港|澳门|台湾|加州|纽约|伦敦|巴黎|东京|悉尼|多伦多|温哥华|洛杉矶|泰国|越南|马来西亚|菲律宾|印尼|印度尼西亚|"
    r"迪拜|阿联酋|以色列|巴西|墨西哥|南非|埃及|土耳其|瑞典|挪威|丹麦|芬兰|爱尔兰|比利时|奥地利|波兰|葡萄牙|希腊|"
    r"乌克兰|柬埔寨|缅甸|老挝|蒙古国|朝鲜(?!族)|"
    r"\b(?:U\.?S\.?A?|United States|American|UK|U\.K\.|British|England|English law|Scotland|Wales|Ireland|"
    r"EU|European Union|Europe|Germany|German|France|French|Italy|Italian|Spain|Spanish|Netherlands|Dutch|Sweden|"
    r"Norway|Denmark|Russia(?:n)?|Japan(?:ese)?|Korea(?:n)?|Canada|Canadian|Ontario|Quebec|British Columbia|"
    r"Australia(?:n)?|New Zealand|India(?:n)?|Thailand|Vietnam|Malaysia|Philippines|Indonesia|Dubai|UAE|Mexico|"
    r"Brazil|California|New York|Texas|Florida|Delaware|Washington state|Illinois|Massachusetts|Ohio|"
    r"Pennsylvania|Nevada|London|Paris|Tokyo|Sydney|Toronto|"
    r"Hong Kong|Macau|Macao|Taiwan(?:ese)?|Singapore|Switzerland|Swiss)\b")
_CHINA = re.compile(r"中国|中华人民共和国|我国|国内|大陆|内地|\bChina\b|\bChinese\b|\bPRC\b|mainland", re.I)

# shown under every answer (CLI footer, web page, API docs): what an answer from statute text cannot be
NOTICE = {"zh": "仅供参考，不构成法律意见；具体案件请咨询律师。",
          "en": "Not legal advice; consult a lawyer for your case."}

# best-hit score below which nothing relevant was retrieved, per scorer (the component's encoder or kind)
# (the shipped stard-e5 on the national corpus: the lowest best-hit score of the 131 STARD dev questions, which
# declines none of the 131 test questions and 6 of the 15 off-corpus messages held out for reporting;
# bench/results/answers-not-covered.json)
RELEVANCE_THRESHOLDS: dict[str, float] = {"dense-onnx-stard-e5-d636e86103f2": 0.4597}
LONG_QUESTION_CHARS = 1500  # kept of an over-long message: its end, where the question is

CORPUS_NAME = {"zh": "中华人民共和国的法律、行政法规和司法解释", "en": "the national laws, regulations and judicial "
               "interpretations of the People's Republic of China"}


@dataclass(frozen=True)
class GuardVerdict:
    action: str  # "injection", "not_covered"
    text: str  # the one-line answer
    reason: str = ""


def instruction_in(question: str) -> str | None:
    """The part of ``question`` that addresses the assistant's instructions, or None."""
    for p in _INSTRUCTION:
        m = p.search(question or "")
        if m:
            return m.group(0)
    return None


def injection_verdict(question: str, lang: str) -> GuardVerdict | None:
    found = instruction_in(question)
    if found is None:
        return None
    text = ("这条消息要求我改变或透露自己的指令，我不会照做；我只根据法条回答法律问题，请直接描述你遇到的法律问题。"
            if lang == "zh" else "This message asks me to change or reveal my instructions, which I will not do; I "
            "answer legal questions from statute text, so please describe your legal problem.")
    return GuardVerdict("injection", text, reason=found)


def foreign_jurisdiction(question: str) -> str | None:
    """The foreign jurisdiction a question names without naming China, or None."""
    m = _FOREIGN.search(question or "")
    if m is None or _CHINA.search(question):
        return None
    return m.group(0)


def mentions_china(question: str) -> bool:
    """Whether a question names China (中国, 我国, 内地, PRC, ...)."""
    return bool(_CHINA.search(question or ""))


def not_covered_text(lang: str, what: str = "", corpus: str = "") -> str:
    corpus = corpus or CORPUS_NAME.get(lang, CORPUS_NAME["en"])
    if lang == "zh":
        need = f"这个问题需要{what}法律的语料" if what else "这个问题可能不是法律问题，或需要其他法律领域的语料"
        return (f"在本语料（{corpus}）中没有找到与这个问题相关的法条，所以不作回答；{need}：可以用 legalrag index build "
                "--corpus 你的语料.jsonl 建立索引，再用 --index 提问。")
    need = f"it needs a corpus of {what} law" if what else "it may not be a legal question, or it needs a corpus " \
        "of another area of law"
    return (f"No article relevant to this question was found in this corpus ({corpus}), so it is not answered; "
            f"{need}: build an index of one with legalrag index build --corpus YOUR_CORPUS.jsonl and ask with "
            "--index.")


def outside_corpus(question: str, hits: Sequence[Hit], lang: str, threshold: float | None) -> GuardVerdict | None:
    """"Not covered" when the question names a foreign jurisdiction, or nothing was retrieved, or the best hit
    scores below ``threshold`` (None: no threshold known for this scorer)."""
    place = foreign_jurisdiction(question)
    if place:
        return GuardVerdict("not_covered", not_covered_text(lang, place), reason=f"names {place}")
    if not hits:
        return GuardVerdict("not_covered", not_covered_text(lang), reason="nothing retrieved")
    best = max(h.score for h in hits)
    if threshold is not None and best < threshold:
        return GuardVerdict("not_covered", not_covered_text(lang), reason=f"best score {best:.4f} < {threshold:.4f}")
    return None


SEARCH_TAIL_CHARS = 120  # what of an over-long message is searched for: its last sentence or two


def question_tail(text: str, limit: int = SEARCH_TAIL_CHARS, enough: int = 40) -> str:
    """The question at the end of ``text``: its last sentence, with the ones before it while it is shorter than
    ``enough`` characters, within ``limit`` characters."""
    parts = [p for p in re.findall(r"[^。！？!?\n]+[。！？!?]?", text) if p.strip()]
    out = ""
    for p in reversed(parts):
        if out and (len(out) >= enough or len(p) + len(out) > limit):
            break
        out = p.strip() + out
    return out[-limit:] if out else text[-limit:]


def keep_question(message: str, lang: str, limit: int = LONG_QUESTION_CHARS) -> tuple[str, str | None]:
    """``message`` as answered: an over-long paste keeps its last ``limit`` characters (the question is at its
    end), with a note saying how much of its beginning was cut; else the message and None."""
    if len(message) <= limit:
        return message, None
    cut = len(message) - limit
    kept = message[cut:]
    note = (f"消息太长：只保留了最后 {limit} 个字符（问题所在的结尾），前面的 {cut} 个字符没有读；请把问题和关键事实放在一条较短的消息里。"
            if lang == "zh" else f"the message was too long: its last {limit} characters (where the question is) "
            f"were kept and the first {cut} were not read; put the question and the key facts in a shorter message")
    return "…" + kept, note
