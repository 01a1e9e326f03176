"""The national-law data shipped in the package and the default index built from it.

The unit tests write a tiny data set of the same layout (xz corpus, int8 vectors, manifest with hashes); the
tests marked ``national`` use the real shipped data (55,515 articles), built once per test session."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pytest
from support.cli_runner import run_cli

from legalrag.errors import IndexError_, InputError
from legalrag.io import sha256_file
from legalrag.national import (CORPUS, MANIFEST, NationalLaw, dequantise, ensure_index, national_law, quantise)
from legalrag.retrieval.dense import passage_text
from legalrag.retrieval.index import ComponentSpec
from legalrag.testing import FakeEncoder

ARTICLES = [
    (0, "中华人民共和国刑法第二百六十四条", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。"),
    (1, "中华人民共和国刑法第一百三十三条之一", "在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金：醉酒驾驶机动车的。"),
    (2, "劳动合同法第八十二条", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"),
    (3, "中华人民共和国民事诉讼法第一百二十二条", "起诉必须符合下列条件：原告是与本案有直接利害关系的公民、法人和其他组织。"),
    (4, "中华人民共和国民法典第一千零六十二条", "夫妻在婚姻关系存续期间所得的工资、奖金、劳务报酬为夫妻的共同财产，归夫妻共同所有。"),
]


def write_law(directory, encoder, articles=ARTICLES):
    """A data set in the shipped layout, with vectors from ``encoder``."""
    from legalrag.corpora.statutes import statute_document

    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"id": i, "name": n, "content": c}, ensure_ascii=False) + "\n" for i, n, c in articles)
    with lzma.open(directory / CORPUS, "wt", encoding="utf-8") as fh:
        fh.write(lines)
    docs = [statute_document(str(i), c, n) for i, n, c in articles]
    codes, scales = quantise(encoder.encode_documents([passage_text(d, 512) for d in docs]))
    np.save(directory / "fake.i8.npy", codes, allow_pickle=False)
    np.save(directory / "fake.scale.npy", scales, allow_pickle=False)
    manifest = {"name": "cn-law-test", "title": "test law", "snapshot": "2023-06-05", "n_laws": 4,
                "n_articles": len(articles), "note": "a test snapshot", "provenance": "written by the test",
                "vectors": {"encoder": "fake", "model_id": encoder.model_id, "dimension": encoder.dimension,
                            "max_chars": 512, "codes": "fake.i8.npy", "scales": "fake.scale.npy"},
                "files_sha256": {n: sha256_file(directory / n) for n in (CORPUS, "fake.i8.npy", "fake.scale.npy")}}
    (directory / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    return national_law(directory)


def build(tmp_path, law, encoder):
    factory = lambda spec, **_: encoder  # noqa: E731 - the encoder the index opens with
    components = lambda: ["bm25", ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake"), "hybrid"]  # noqa: E731
    return ensure_index(tmp_path / "idx", law, components, factory)


def test_quantised_vectors_keep_the_ranking():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(200, 64)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    codes, scales = quantise(v)
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    back = dequantise(codes, scales)
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)
    assert float((back * v).sum(axis=1).min()) > 0.999
    q = v[:20] + 0.05 * rng.normal(size=(20, 64)).astype(np.float32)
    assert (np.argmax(q @ back.T, axis=1) == np.argmax(q @ v.T, axis=1)).all()


def test_default_index_is_built_from_the_shipped_vectors_without_encoding_passages(tmp_path):
    enc = FakeEncoder(dimension=64)
    law = write_law(tmp_path / "data", enc)
    enc.calls = 0
    index = build(tmp_path, law, enc)
    assert enc.calls == 0  # passages came from the shipped vectors
    assert index.manifest["corpus"]["national"] == "cn-law-test"
    assert index.manifest["corpus"]["snapshot"] == "2023-06-05"
    hits = index.retriever("dense-fake").retrieve("醉酒驾驶机动车 拘役", k=2)
    assert hits[0].document.title == "中华人民共和国刑法第一百三十三条之一"
    assert hits[0].document.metadata["law"] == "中华人民共和国刑法"
    built = (index.path / "manifest.json").stat().st_mtime_ns
    again = build(tmp_path, law, enc)  # the same data: opened, not rebuilt
    assert (again.path / "manifest.json").stat().st_mtime_ns == built


@pytest.mark.parametrize("damage", ["truncate", "remove", "flip"])
@pytest.mark.parametrize("name", [CORPUS, "fake.i8.npy"])
def test_a_damaged_or_missing_data_file_is_refused_with_its_path_and_the_fix(tmp_path, damage, name):
    enc = FakeEncoder(dimension=64)
    law = write_law(tmp_path / "data", enc)
    p = tmp_path / "data" / name
    if damage == "remove":
        p.unlink()
    elif damage == "truncate":
        p.write_bytes(p.read_bytes()[:-7])
    else:
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0xFF
        p.write_bytes(bytes(b))
    with pytest.raises(InputError) as e:
        build(tmp_path, law, enc)
    assert str(p) in str(e.value) and "git checkout -- src/legalrag/data/cn-law" in str(e.value)
    assert not (tmp_path / "idx").exists()  # nothing half-built


def test_vectors_of_another_encoder_are_refused(tmp_path):
    law = write_law(tmp_path / "data", FakeEncoder(dimension=64))
    with pytest.raises(IndexError_, match="belong to fake-hash-encoder"):
        build(tmp_path, law, FakeEncoder(dimension=64, model_id="another-encoder"))


def test_the_package_ships_national_law_with_its_hashes():
    law = national_law()
    assert law is not None, "src/legalrag/data/cn-law is missing"
    law.verify()
    m = law.manifest
    assert m["n_articles"] == 55515 and m["n_laws"] >= 1200 and m["snapshot"] == "2023-06-05"
    assert m["vectors"]["encoder"] == "stard-e5"
    total = sum((law.path / n).stat().st_size for n in m["files_sha256"])
    assert total < 45_000_000  # the install-size budget of the national data


def test_a_fresh_install_answers_a_criminal_question_from_the_criminal_law(national_index):
    from legalrag.retrieval.pipeline import build_pipeline

    assert national_index.manifest["corpus"]["n_documents"] == 55515
    assert national_index.default.startswith("hybrid") or "stard-e5" in national_index.default
    hits = build_pipeline(national_index).search("喝了酒开车被抓了会怎么样", k=10)
    titles = [h.document.title for h in hits]
    assert "中华人民共和国刑法第一百三十三条之一" in titles, titles
    hits = build_pipeline(national_index).search("被告人在超市盗窃价值三千元的商品，构成什么罪", k=10)
    assert "中华人民共和国刑法第二百六十四条" in [h.document.title for h in hits]
    hits = build_pipeline(national_index).search("民事案件去法院起诉要符合哪些条件", k=10)
    assert "民事诉讼法第一百二十二条" in [h.document.title for h in hits]
    hits = build_pipeline(national_index).search("公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？", k=10)
    assert "劳动合同法第八十二条" in [h.document.title for h in hits]


def test_a_user_corpus_with_a_repeated_article_name_is_refused_by_line(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "laws.jsonl"
    rows = [{"id": 1, "name": "劳动合同法第十条", "content": "建立劳动关系，应当订立书面劳动合同。"},
            {"id": 2, "name": "劳动合同法第十条", "content": "用人单位与劳动者在用工前订立劳动合同的。"}]
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", corpus, "--out", tmp_path / "idx",
                           "--lang", "zh", "--no-progress")
    assert code == 1
    assert "appears twice (lines 1 and 2)" in err and f"{corpus}:2" in err
    assert not (tmp_path / "idx").exists()


def test_a_user_corpus_with_names_that_are_not_citations_is_indexed_with_a_warning_by_line(tmp_path, monkeypatch,
                                                                                          capsys):
    corpus = tmp_path / "laws.jsonl"
    rows = [{"id": 1, "name": "劳动合同法第十条", "content": "建立劳动关系，应当订立书面劳动合同。"},
            {"id": 2, "name": "劳动合同法 附则", "content": "本法自2008年1月1日起施行。"}]
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", corpus, "--out", tmp_path / "idx",
                           "--lang", "zh", "--no-progress")
    assert code == 0, err
    assert "1 of 2 records have a name that is not an article citation (lines 2)" in err


def test_a_law_index_holds_only_that_law_and_is_reused(tmp_path):
    from legalrag.national import CRIMINAL_LAW, ensure_law_index

    enc = FakeEncoder(dimension=64)
    law = write_law(tmp_path / "data", enc)
    components = lambda: ["bm25", ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake")]  # noqa: E731
    idx = ensure_law_index(tmp_path / "crim", law, [CRIMINAL_LAW], components, lambda spec, **_: enc,
                           article_ids=True)
    assert {d.title for d in idx.documents} == {"中华人民共和国刑法第二百六十四条", "中华人民共和国刑法第一百三十三条之一"}
    assert [d.id for d in idx.documents] == ["264", "133-1"]  # the provision ids of the judgment models
    built = (idx.path / "manifest.json").stat().st_mtime_ns
    again = ensure_law_index(tmp_path / "crim", law, [CRIMINAL_LAW], components, lambda spec, **_: enc,
                             article_ids=True)
    assert (again.path / "manifest.json").stat().st_mtime_ns == built
    with pytest.raises(InputError, match="no article of 不存在的法"):
        ensure_law_index(tmp_path / "none", law, ["不存在的法"], components, lambda spec, **_: enc)


def test_cite_and_judgment_work_out_of_the_box_over_the_national_criminal_law(national_index, monkeypatch, capsys):
    """No --index, no --law-corpus: the shipped citation and structure models decide over the criminal law of the
    national-law data (an index of its articles, ids = article numbers, built once)."""
    facts = "被告人张某于2023年5月在某超市盗窃价值3000元的商品，到案后如实供述。"
    code, out, err = run_cli(monkeypatch, capsys, "cite", facts, "--json")
    assert code == 0, err
    provisions = {p["id"]: p for p in json.loads(out)["provisions"]}
    assert provisions["264"]["title"] == "中华人民共和国刑法第二百六十四条" and provisions["264"]["resolved"]
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--facts", facts)
    assert code == 0, err
    structure = json.loads(out)
    assert structure["charges"][0]["name"] == "盗窃罪"
    assert "264" in [a["name"] for a in structure["articles"]]
