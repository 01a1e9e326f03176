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
