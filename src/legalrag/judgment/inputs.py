"""Facts the judgment models refuse, with a message that says why and what to give instead.

- **Not Chinese**: the models read the facts of a Chinese criminal case; text that is mostly not Chinese (a
  share of CJK characters below :data:`MIN_CJK_SHARE`) is refused, never given a charge.
- **No criminal act**: facts that neither name nor describe any conduct of the charge catalogue's keywords and
  carry none of the words every criminal case's facts carry (被告人, 犯罪嫌疑人, 指控, 作案, 被害人, 抓获 ...)
  are refused: a civil dispute (a lease, a loan) gets no charge the facts cannot support.

Long facts are not refused: the structure model reads the first ``features.MAX_FACT_CHARS`` characters and the
drafter's prompt the first ``reasoned.MAX_PROMPT_FACT_CHARS``, each with a note. Several defendants are read
one by one (``defendants.py``); each circumstance carries the defendant its sentence names.
"""

from __future__ import annotations

import re

from legalrag.errors import InputError

MIN_CJK_SHARE = 0.3
_CRIMINAL = re.compile(r"被告人|上诉人|犯罪嫌疑人|嫌疑人|涉嫌|指控|起诉|犯罪|作案|被害人|受害人|报案|报警|抓获|归案|"
                       r"伤害|重伤|轻伤|轻微伤|致死|死亡|拳打脚踢|"
                       r"投案|民警|公安|侦查|判处|刑事|偷|盗|抢|骗|殴打|砍|杀|毒品|吸毒|醉酒|赌|伪造|贿|强奸|猥亵|绑架|"
                       r"拐卖|非法|走私|纵火|放火|爆炸|持刀")
MIN_CHARS = 15  # shorter facts are answered as undecided (undecided.py), not refused


def check_language(facts: str) -> None:
    from legalrag.lang import cjk_share

    sample = re.sub(r"[\s0-9\W_]+", "", facts[:4000])
    if sample and cjk_share(sample) < MIN_CJK_SHARE:
        raise InputError("the facts are not in Chinese: the judgment models read the facts of a Chinese criminal "
                         "case (公诉机关指控……); give the facts in Chinese", field="facts")


def names_no_crime(facts: str, supported: bool) -> bool:
    """Whether ``facts`` describe no criminal act: no charge found in their words (``supported`` is False) and
    none of the words of a criminal case's facts."""
    return len(facts.strip()) >= MIN_CHARS and not supported and not _CRIMINAL.search(facts)


def refuse_no_crime(facts: str) -> InputError:
    return InputError("the facts describe no criminal act: they name no charge, describe no conduct of the "
                      "Criminal Law's charges and name no defendant, victim or arrest; a judgment needs the facts of "
                      "a criminal case (who did what, when, the amounts or injuries, how the defendant behaved after)",
                      field="facts")
