"""Language-aware tokenisation for the lexical retrievers.

- Chinese (``zh``): jieba in search mode (long words plus their shorter in-vocabulary parts, so that
  "劳动合同" also matches "合同"), with STARD's stop-word list (shipped in ``legalrag/data``) and
  punctuation dropped. Latin words inside Chinese text are lower-cased.
- English (``en``): Unicode word tokens, lower-cased, English stop words removed, optionally stemmed
  with PyStemmer (``legalrag[en]``).
- ``auto`` is resolved once, on the corpus, by the share of CJK characters; the resolved configuration
  is what an index saves, so queries are always tokenised the way the documents were.

A :class:`Tokenizer` is fully described by its :class:`TokenizerConfig`, which round-trips through JSON.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any, Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.lang import DEFAULT_THRESHOLD, cjk_share, detect_language  # noqa: F401 (cjk_share re-exported)

LANGS = ("zh", "en")
_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_HAS_WORD_CHAR = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class TokenizerConfig:
    """Everything that decides how text becomes tokens. Saved in each lexical index component."""

    lang: str = "zh"
    stopwords: bool = True
    stemmer: str | None = None  # PyStemmer algorithm name for English, e.g. "english"
    jieba_mode: str = "search"  # "search" (cut_for_search) or "precise" (cut)
    version: int = 1

    def __post_init__(self) -> None:
        if self.lang not in LANGS:
            raise InputError(f"unknown tokenizer language {self.lang!r}; use one of {', '.join(LANGS)} (or auto)")
        if self.jieba_mode not in ("search", "precise"):
            raise InputError(f"unknown jieba mode {self.jieba_mode!r}; use search or precise")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TokenizerConfig":
        known = {k: d[k] for k in ("lang", "stopwords", "stemmer", "jieba_mode", "version") if k in d}
        return cls(**known)


def detect_lang(texts: Iterable[str], threshold: float = DEFAULT_THRESHOLD) -> str:
    """``zh`` or ``en`` for a corpus sample (``legalrag.lang.detect_language``)."""
    return detect_language(texts, threshold)


@functools.lru_cache(maxsize=1)
def chinese_stopwords() -> frozenset[str]:
    """STARD's Chinese stop-word list (MIT; see legalrag/data/NOTICE.md)."""
    text = resources.files("legalrag").joinpath("data", "cn_stopwords.txt").read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip())


@functools.lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _jieba_module():
    from legalrag._optional import require

    jieba = require("jieba", "zh")
    jieba.setLogLevel(logging.WARNING)
    return jieba


def _jieba_cache():
    from legalrag.io import cache_dir

    tmp = cache_dir() / "jieba"
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp


@functools.lru_cache(maxsize=1)
def _jieba():
    """A private jieba tokenizer whose dictionary cache lives under legalrag's cache dir (not /tmp). Loading it
    also writes the dictionary's SQLite table (``zh_dict``) once, for processes that segment only a few texts."""
    from legalrag.retrieval import zh_dict

    jieba = _jieba_module()
    cache = _jieba_cache()
    tok = jieba.Tokenizer()
    tok.tmp_dir = str(cache)
    tok.initialize()
    table = zh_dict.table_path(cache, jieba)
    if not table.exists():
        try:
            zh_dict.write_table(table, tok.FREQ, tok.total)
        except OSError as exc:  # a read-only cache only costs the next process its quick start
            logging.getLogger(__name__).warning("could not write %s: %s", table, exc)
    return tok


@functools.lru_cache(maxsize=1)
def _jieba_quick():
    """A jieba tokenizer reading its dictionary from the SQLite table (opens in milliseconds, identical
    segmentation); None until a process has loaded the dictionary once and written the table."""
    from legalrag.retrieval import zh_dict

    jieba = _jieba_module()
    return zh_dict.quick_tokenizer(jieba, zh_dict.table_path(_jieba_cache(), jieba))


QUICK_TEXTS = 256  # texts a process segments from the table before loading the in-memory dictionary
_quick_used = 0


def _segmenter():
    """The table-backed tokenizer for a process's first ``QUICK_TEXTS`` texts (a one-shot query, a small batch),
    then the in-memory dictionary (bulk work: an index build, a served index after a while)."""
    global _quick_used
    if _quick_used < QUICK_TEXTS and _jieba.cache_info().currsize == 0:
        quick = _jieba_quick()
        if quick is not None:
            _quick_used += 1
            return quick
    return _jieba()


@functools.lru_cache(maxsize=4)
def _stemmer(name: str):
    from legalrag._optional import require

    Stemmer = require("Stemmer", "en")
    try:
        return Stemmer.Stemmer(name)
    except KeyError:
        raise InputError(f"unknown stemmer {name!r}; PyStemmer knows {', '.join(Stemmer.algorithms())}") from None


class Tokenizer:
    """Callable: ``tokenizer(text) -> list[str]``. Build one with :func:`tokenizer_for`."""

    def __init__(self, config: TokenizerConfig):
        self.config = config
        self._stop: frozenset[str] = frozenset()
        if config.stopwords:
            self._stop = chinese_stopwords() | english_stopwords() if config.lang == "zh" else english_stopwords()

    def __repr__(self) -> str:
        return f"Tokenizer({self.config})"

    def __call__(self, text: str) -> list[str]:
        if self.config.lang == "zh":
            return self._zh(text)
        return self._en(text)

    def _zh(self, text: str) -> list[str]:
        jb = _segmenter()
        pieces = jb.cut_for_search(text) if self.config.jieba_mode == "search" else jb.cut(text)
        stop = self._stop
        out = []
        for piece in pieces:
            tok = piece.strip().lower()
            if tok and tok not in stop and _HAS_WORD_CHAR.search(tok):
                out.append(tok)
        return out

    def _en(self, text: str) -> list[str]:
        stop = self._stop
        toks = [t for t in _WORD.findall(text.lower()) if t not in stop]
        if self.config.stemmer:
            toks = _stemmer(self.config.stemmer).stemWords(toks)
        return toks

    def tokenize_many(self, texts: Sequence[str], progress: bool = False, desc: str = "tokenize") -> list[list[str]]:
        if self.config.lang == "zh" and hasattr(texts, "__len__") and len(texts) > QUICK_TEXTS:
            _jieba()  # a batch this size segments faster from the in-memory dictionary
        if progress:
            from tqdm import tqdm

            texts = tqdm(texts, desc=desc, unit="doc")
        return [self(t) for t in texts]


def tokenizer_for(lang: str = "auto", sample: Iterable[str] | None = None, **options: Any) -> Tokenizer:
    """A tokenizer for ``lang`` (zh, en or auto). ``auto`` needs ``sample`` texts to detect the language.

    ``options`` are further :class:`TokenizerConfig` fields (stopwords, stemmer, jieba_mode).
    """
    if lang == "auto":
        if sample is None:
            raise InputError("lang 'auto' needs sample texts to detect the language; pass zh or en instead")
        lang = detect_lang(sample)
    if lang == "en" and "stemmer" not in options:
        options["stemmer"] = "english" if _has_pystemmer() else None
    return Tokenizer(TokenizerConfig(lang=lang, **options))


def _has_pystemmer() -> bool:
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return False
    return True
