import json

import pytest

from legalrag.corpora.statutes import FieldMap, load_statutes, split_article_name
from legalrag.errors import InputError


def write(tmp_path, lines):
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_split_article_name():
    assert split_article_name("中华人民共和国刑法第一百二十条之一") == ("中华人民共和国刑法", "120-1", "第一百二十条之一")
    assert split_article_name("旅游法第五条") == ("旅游法", "5", "第五条")
    assert split_article_name("无条号的标题") == ("无条号的标题", None, None)


def test_both_shapes(tmp_path):
    stard = write(tmp_path, [json.dumps({"id": 7, "name": "旅游法第五条", "content": "正文\n"}, ensure_ascii=False)])
    docs = load_statutes(stard)
    assert docs[0].id == "7" and docs[0].text == "正文" and docs[0].metadata["law"] == "旅游法"
    judge = tmp_path / "j.jsonl"
    judge.write_text(json.dumps({"text_id": "264", "text": "盗窃", "name": "中华人民共和国刑法第二百六十四条"},
                                ensure_ascii=False) + "\n", encoding="utf-8")
    d = load_statutes(judge)[0]
    assert (d.id, d.metadata["article"]) == ("264", "264")


def test_field_mapping(tmp_path):
    p = write(tmp_path, ['{"key": "a", "body": "x", "t": "Art. 1 BV"}'])
    docs = load_statutes(p, FieldMap.parse("id=key,text=body,name=t"))
    assert docs[0].title == "Art. 1 BV"
    with pytest.raises(InputError, match="field mapping"):
        FieldMap.parse("id=key,bogus=x")


@pytest.mark.parametrize("lines,match", [
    (['{"id": 1, "name": "a", "content": "x"}', "not json"], r"c.jsonl:2: not valid JSON"),
    (['{"id": 1, "name": "a", "content": "x"}', '{"id": 1, "name": "b", "content": "y"}'], r":2 \(field 'id'\).*twice"),
    (['{"id": 1, "name": "a", "content": "x"}', '{"id": 2, "name": "b"}'], r":2 \(field 'content'\): missing"),
    (['{"foo": 1}'], r":1: unknown corpus shape"),
])
def test_bad_input_names_line_and_field(tmp_path, lines, match):
    with pytest.raises(InputError, match=match):
        load_statutes(write(tmp_path, lines))


def test_real_corpora_load(shared_data):
    judge = load_statutes(shared_data / "judge/data/law_corpus.jsonl")
    assert len(judge) == 452 and all(d.metadata["law"] == "中华人民共和国刑法" for d in judge)
