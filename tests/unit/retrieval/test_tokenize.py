import pytest

from legalrag.errors import InputError
from legalrag.retrieval.tokenize import (Tokenizer, TokenizerConfig, chinese_stopwords, cjk_share, detect_lang,
                                         tokenizer_for)


def test_chinese_search_mode_adds_sub_words_and_drops_stop_words_and_punctuation():
    tok = tokenizer_for("zh")
    toks = tok("我和公司签了劳动合同，公司不给我交社保怎么办？")
    assert "劳动合同" in toks and "劳动" in toks and "合同" in toks  # search mode: word and its parts
    assert "我" not in toks and "和" not in toks  # STARD stop words
    assert "，" not in toks and "？" not in toks
    assert toks.count("公司") == 2  # term frequency is kept


def test_precise_mode_and_no_stop_words():
    tok = tokenizer_for("zh", jieba_mode="precise", stopwords=False)
    toks = tok("我和公司签了劳动合同")
    assert "劳动合同" in toks and "劳动" not in toks and "我" in toks


def test_latin_words_inside_chinese_are_lower_cased():
    assert "iphone" in tokenizer_for("zh")("购买的iPhone有质量问题")


def test_english_words_stop_words_and_stemming():
    tok = tokenizer_for("en")
    assert tok.config.stemmer == "english"
    assert tok("The tenants are evicted by the landlords!") == ["tenant", "evict", "landlord"]
    plain = tokenizer_for("en", stemmer=None)
    assert plain("The tenants are evicted") == ["tenants", "evicted"]


def test_auto_detects_by_cjk_share():
    assert detect_lang(["劳动者有权依法参加和组织工会。", "Article 1"]) == "zh"
    assert detect_lang(["The employer shall pay wages monthly.", "第一条"]) == "en"
    assert cjk_share([""]) == 0.0
    assert tokenizer_for("auto", sample=["合同"]).config.lang == "zh"
    with pytest.raises(InputError, match="sample"):
        tokenizer_for("auto")


def test_config_round_trip_reproduces_tokens():
    tok = tokenizer_for("zh", jieba_mode="precise")
    again = Tokenizer(TokenizerConfig.from_dict(tok.config.to_dict()))
    text = "出租人应当履行租赁物的维修义务"
    assert again(text) == tok(text)


def test_bad_config_is_an_input_error():
    with pytest.raises(InputError, match="language"):
        TokenizerConfig(lang="fr")
    with pytest.raises(InputError, match="jieba mode"):
        TokenizerConfig(jieba_mode="full")


def test_stopword_list_is_package_data_and_jieba_cache_is_ours(tmp_path, monkeypatch):
    assert "的" in chinese_stopwords() and len(chinese_stopwords()) > 700
    from legalrag.retrieval import tokenize

    monkeypatch.setenv("HOME", str(tmp_path))  # the library reads no settings: legalrag's cache dir under $HOME
    tokenize._jieba.cache_clear()
    try:
        tokenize._jieba()
        assert (tmp_path / ".cache" / "legalrag" / "jieba" / "jieba.cache").exists()
    finally:
        tokenize._jieba.cache_clear()
