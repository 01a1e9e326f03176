"""Prompt token estimates without a tokenizer call.

A prompt is built and checked against the context window before any model runs; an exact count costs a
round-trip to the runtime, so callers estimate first and count exactly only near the limit. Calibrated on
Qwen2.5's byte-level BPE (the bundled models): about 0.6-0.7 tokens per common CJK character and about 4
characters per token elsewhere; the factors below err on the high side.
"""

from __future__ import annotations

import math
import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
CJK_FACTOR = 0.7
CHARS_PER_TOKEN = 3.5
MESSAGE_OVERHEAD = 5  # <|im_start|>role\n ... <|im_end|>\n


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (upper side for ordinary Chinese and English prose)."""
    cjk = len(_CJK.findall(text))
    return math.ceil(cjk * CJK_FACTOR + (len(text) - cjk) / CHARS_PER_TOKEN)


def estimate_message_tokens(messages) -> int:
    """Estimated prompt tokens of chat ``messages`` after a ChatML-style template."""
    return sum(estimate_tokens(str(m.get("content", ""))) + MESSAGE_OVERHEAD for m in messages) + 3
