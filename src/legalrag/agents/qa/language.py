"""Which language each part of a QA run is in: the question, each source's texts, each query, the answer.

A query only finds something when it is in the language of the texts it is matched against (BM25 over a
Chinese file never matches an English paraphrase), and a user reads the answer in the language they asked in.
"""

from __future__ import annotations

from typing import Mapping, Sequence

NAMES = {"zh": "Chinese (中文, simplified characters)", "en": "English"}

# The fixed sentences a run writes itself, so an answer without any model reply is in the question's language.
MESSAGES = {
    "no_answer": {"en": "I could not establish an answer from the available sources.",
                  "zh": "根据现有来源无法确定答案。"},
    "no_source": {"en": "No search source is configured, so nothing could be checked against a source.",
                  "zh": "未配置任何检索来源，因此无法依据来源核对。"},
    "no_evidence": {"en": "No usable source was found for this question; the answer could not be established.",
                    "zh": "没有检索到可用于回答该问题的来源，无法确定答案。"},
    "missing": {"en": "Still missing: {gap}", "zh": "仍然缺少：{gap}"},
    "model_failed": {"en": "The model call that writes the answer failed ({error}); the sources found are listed.",
                     "zh": "撰写答案的模型调用失败（{error}）；已列出检索到的来源。"},
}


def text_lang(text: str) -> str:
    """``zh`` or ``en`` by the share of CJK characters among the letters."""
    from legalrag.retrieval.tokenize import detect_lang

    return detect_lang([text])


def message(key: str, lang: str, **values: str) -> str:
    table = MESSAGES[key]
    return table.get(lang, table["en"]).format(**values)


def language_name(lang: str) -> str:
    return NAMES.get(lang, lang)


def source_langs(sources: Mapping[str, object], question_lang: str) -> dict[str, str]:
    """The language queries to each source must be in: the source's own (``.lang`` of a local folder or a
    statute index: ``content_lang``) when it knows it, else the question's (web search answers in the language
    it is asked in)."""
    out = {}
    for name, src in sources.items():
        lang = getattr(src, "content_lang", None)
        out[name] = lang if lang in NAMES else question_lang
    return out


def target_lang(target: str, langs: Mapping[str, str], question_lang: str) -> str:
    """The language an intent aimed at ``target`` (a source name, or ``any``) must be written in."""
    if target in langs:
        return langs[target]
    if target == "local" and "statutes" in langs:
        return langs["statutes"]
    found = set(langs.values())
    return found.pop() if len(found) == 1 else question_lang


def describe(langs: Mapping[str, str]) -> str:
    """``local: Chinese (...); web: English`` for the query prompt."""
    return "; ".join(f"{name}: {language_name(lang)}" for name, lang in langs.items()) or "none"


def same_language(texts: Sequence[str], lang: str) -> bool:
    return all(text_lang(t) == lang for t in texts if t.strip())
