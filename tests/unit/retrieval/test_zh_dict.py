"""jieba's dictionary as a SQLite table: a tokenizer reading it segments exactly as the in-memory dictionary
does (so a one-shot query skips the 1-2 s dictionary load without changing a single token), the table is
written atomically, and a missing or damaged table falls back to loading the dictionary."""

from __future__ import annotations

import pytest

pytest.importorskip("jieba")

from legalrag.retrieval import tokenize as T  # noqa: E402
from legalrag.retrieval import zh_dict  # noqa: E402

TEXTS = [
    "未发生法律效力的征收补偿协议，是否属于行政诉讼受案范围？",
    "劳动者在试用期间被证明不符合录用条件的，用人单位可以解除劳动合同。",
    "被告人张某某于2019年3月在XX市盗窃电动车一辆，价值人民币3,500元，案发后退赔并取得谅解。",
    "The Civil Code 第一千零七十九条 applies; 夫妻感情确已破裂，调解无效的，应当准予离婚。",
    "贾宝玉和林黛玉在大观园里讨论《红楼梦》的版本问题",  # names and unknown words go through the HMM
    "",
]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    jieba = T._jieba_module()
    full = T._jieba()
    path = zh_dict.write_table(tmp_path_factory.mktemp("dict") / "freq.sqlite", full.FREQ, full.total)
    return full, zh_dict.quick_tokenizer(jieba, path), path


def test_the_table_segments_like_the_dictionary(quick):
    full, fast, _ = quick
    assert isinstance(fast.FREQ, zh_dict.FreqTable) and fast.total == full.total
    for text in TEXTS:
        assert fast.lcut_for_search(text) == full.lcut_for_search(text)
        assert fast.lcut(text) == full.lcut(text)
        assert fast.lcut(text, HMM=False) == full.lcut(text, HMM=False)


def test_lookups_match_the_dict(quick):
    full, fast, _ = quick
    for word in ("劳动合同", "劳动合", "法", "不存在的词语组合", "x"):
        assert (word in fast.FREQ) == (word in full.FREQ)
        assert fast.FREQ.get(word) == full.FREQ.get(word)
    assert fast.FREQ["劳动合"] == 0  # a prefix is present with frequency 0, as jieba's own dict has it
    with pytest.raises(KeyError):
        fast.FREQ["不存在的词语组合"]


def test_written_atomically_and_damaged_tables_are_ignored(quick, tmp_path):
    _, _, path = quick
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    jieba = T._jieba_module()
    assert zh_dict.quick_tokenizer(jieba, tmp_path / "missing.sqlite") is None
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database" * 100)
    assert zh_dict.quick_tokenizer(jieba, bad) is None
    empty = zh_dict.write_table(tmp_path / "empty.sqlite", {}, 0)
    assert zh_dict.quick_tokenizer(jieba, empty) is None


def test_a_process_uses_the_table_for_its_first_texts_then_the_dictionary(quick, monkeypatch):
    _, fast, _ = quick
    tok = T.tokenizer_for("zh")
    expected = tok(TEXTS[0])
    monkeypatch.setattr(T, "_jieba_quick", lambda: fast)
    cache_info = type(T._jieba.cache_info())(0, 0, 1, 0)  # as if the dictionary had not been loaded yet
    monkeypatch.setattr(T._jieba, "cache_info", lambda: cache_info, raising=False)
    monkeypatch.setattr(T, "_quick_used", 0)
    assert T._segmenter() is fast and tok(TEXTS[0]) == expected
    monkeypatch.setattr(T, "_quick_used", T.QUICK_TEXTS)
    assert T._segmenter() is not fast
