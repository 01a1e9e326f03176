"""Which language a text is in: the one detector every stage uses (index building, agents, answers).

Only the distinction legalrag acts on is made: Chinese (``zh``) when CJK characters are at least ``threshold``
of the letters, else English (``en``). Closed language choices at the edges are :class:`Language` values.
"""

from __future__ import annotations

import enum
import re
from typing import Iterable

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")
DEFAULT_THRESHOLD = 0.2


class Language(str, enum.Enum):
    ZH = "zh"
    EN = "en"
    AUTO = "auto"  # decide from the text (``detect_language``)


def cjk_share(texts: str | Iterable[str], max_chars: int = 200_000) -> float:
    """Share of CJK characters among the letters of ``texts`` (reads at most ``max_chars`` characters)."""
    if isinstance(texts, str):
        texts = (texts,)
    cjk = letters = seen = 0
    for text in texts:
        chunk = text[: max_chars - seen]
        cjk += len(_CJK.findall(chunk))
        letters += len(_LETTER.findall(chunk))
        seen += len(chunk)
        if seen >= max_chars:
            break
    return cjk / letters if letters else 0.0


def detect_language(texts: str | Iterable[str], threshold: float = DEFAULT_THRESHOLD) -> str:
    """``zh`` when at least ``threshold`` of the letters are CJK characters, else ``en``."""
    return "zh" if cjk_share(texts) >= threshold else "en"


# shown under every answer (CLI footer, web page, API docs and each answer's JSON): what an answer from statute
# text cannot be
NOT_LEGAL_ADVICE = {"zh": "仅供参考，不构成法律意见；具体案件请咨询律师。",
                    "en": "Not legal advice; consult a lawyer for your case."}


def legal_notice(question: str) -> str:
    """The not-legal-advice notice in the question's language (Chinese for a question with no letters)."""
    lang = detect_language(question) if any(ch.isalpha() for ch in question) else "zh"
    return NOT_LEGAL_ADVICE.get(lang, NOT_LEGAL_ADVICE["zh"])
