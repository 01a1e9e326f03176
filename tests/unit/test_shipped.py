"""Shipped models: found by name, checked against their card's SHA-256 before use, refused with the path and the
fix when a file is missing, truncated or corrupted; an index defaults to its strongest component."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from legalrag.errors import InputError, ModelError
from legalrag.shipped import checked, shipped_models, verify
from legalrag.types import Document


def _fake_model(root, name="toy-e5", kind="encoder"):
    from legalrag.training.pack import write_card

    d = root / name
    d.mkdir(parents=True)
    (d / "model.onnx").write_bytes(bytes(range(256)) * 64)
    (d / "onnx_encoder.json").write_text('{"dimension": 4}', encoding="utf-8")
    write_card(d, name=name, kind=kind, card={"origin": "a test", "command": "legalrag train pack-encoder ...",
                                              "figures": {"Recall@10": 0.5}, "data": "toy data, CC0"})
    return d


def test_a_good_model_passes_and_its_card_lists_every_file(tmp_path):
    d = _fake_model(tmp_path)
    (m,) = shipped_models(tmp_path)
    assert m.name == "toy-e5" and m.kind == "encoder" and set(m.files) == {"model.onnx", "onnx_encoder.json"}
    assert verify(m) == [] and checked("toy-e5", "encoder", tmp_path).path == d
    card = (d / "README.md").read_text(encoding="utf-8")
    assert "legalrag train pack-encoder" in card and "toy data, CC0" in card and m.files["model.onnx"] in card


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete"])
def test_a_damaged_file_is_refused_with_its_path_and_the_fix(tmp_path, damage):
    d = _fake_model(tmp_path)
    f = d / "model.onnx"
    if damage == "truncate":
        f.write_bytes(f.read_bytes()[:100])
    elif damage == "flip":
        data = bytearray(f.read_bytes())
        data[500] ^= 1
        f.write_bytes(bytes(data))
    else:
        f.unlink()
    with pytest.raises(ModelError) as err:
        checked("toy-e5", "encoder", tmp_path)
    message = str(err.value)
    assert str(f) in message and "git checkout -- src/legalrag/data/models/toy-e5" in message
    assert "pip install --force-reinstall" in message


def test_an_unknown_name_lists_what_ships(tmp_path):
    _fake_model(tmp_path)
    with pytest.raises(InputError, match="no shipped encoder named 'nope'; shipped: toy-e5"):
        checked("nope", "encoder", tmp_path)


def test_models_verify_checks_every_shipped_model():
    from legalrag.cli.apps import app

    res = CliRunner().invoke(app, ["models", "verify", "--json"])
    rows = json.loads(res.stdout) if res.stdout.strip() else []
    assert res.exit_code == (1 if any(r["problems"] for r in rows) else 0)
    assert {r["name"] for r in rows} == {m.name for m in shipped_models()}
    assert all(not r["problems"] for r in rows), rows


@pytest.mark.skipif(not any(m.kind == "encoder" for m in shipped_models()), reason="no shipped encoder in this tree")
def test_a_shipped_encoder_loads_by_name_and_a_corrupted_copy_is_refused(tmp_path):
    import numpy as np

    from legalrag.wiring import make_encoder

    name = next(m.name for m in shipped_models() if m.kind == "encoder")
    enc = make_encoder(name, cache=False, progress=False)
    assert enc.trained and enc.dimension == 384
    q = enc.encode_queries(["借款合同没有约定利息的，要付利息吗？"])
    p = enc.encode_documents(["借款合同对支付利息没有约定的，视为没有利息。", "盗窃公私财物，数额较大的，处三年以下有期徒刑。"])
    assert np.allclose(np.linalg.norm(p, axis=1), 1, atol=1e-4) and float(q[0] @ p[0]) > float(q[0] @ p[1])
    copy = tmp_path / name
    shutil.copytree(checked(name).path, copy)
    onnx = copy / "model.onnx"
    onnx.write_bytes(onnx.read_bytes()[: onnx.stat().st_size // 2])
    with pytest.raises(ModelError, match=f"{onnx}.*truncated or corrupted"):
        checked(name, "encoder", tmp_path)


def test_a_packed_encoder_is_assembled_once_and_a_damaged_cached_copy_is_replaced(tmp_path, monkeypatch):
    import numpy as np

    from legalrag.wiring import make_encoder

    monkeypatch.setenv("HOME", str(tmp_path))  # legalrag's cache dir is under ~/.cache
    name = next(m.name for m in shipped_models() if m.kind == "encoder")
    q = ["借款合同没有约定利息的，要付利息吗？"]
    first = make_encoder(name, cache=False, progress=False).encode_queries(q)
    (cached,) = (tmp_path / ".cache" / "legalrag" / "onnx").glob(f"onnx-{name}-*.onnx")
    stamp = cached.stat().st_mtime_ns
    np.testing.assert_array_equal(make_encoder(name, cache=False, progress=False).encode_queries(q), first)
    assert cached.stat().st_mtime_ns == stamp  # read, not assembled again
    cached.write_bytes(cached.read_bytes()[:1000])  # truncated
    np.testing.assert_array_equal(make_encoder(name, cache=False, progress=False).encode_queries(q), first)
    assert cached.stat().st_size > 1_000_000  # replaced by a whole model


def test_an_index_defaults_to_its_strongest_component(tmp_path):
    from legalrag.retrieval.index import build_index, component_strength, default_component
    from legalrag.testing import FakeEncoder
    from legalrag.wiring import expand_components

    assert default_component({"bm25": {"kind": "bm25", "params": {}}, "hybrid": {"kind": "hybrid", "params": {}},
                              "dense-a": {"kind": "dense", "params": {"trained": False}},
                              "dense-b": {"kind": "dense", "params": {"trained": True}}}) == "dense-b"
    assert component_strength("dense", {"trained": True}) > component_strength("hybrid", {}) \
        > component_strength("bm25", {}) > component_strength("dense", {"trained": False})
    # an untrained encoder never answers over BM25; with BM25 and the hybrid beside it, the hybrid answers
    untrained = {"bm25": {"kind": "bm25", "params": {}}, "dense-e5": {"kind": "dense", "params": {"trained": False}}}
    assert default_component(untrained) == "bm25"
    assert default_component({**untrained, "hybrid": {"kind": "hybrid", "params": {}}}) == "hybrid"
    docs = [Document(str(i), text, f"某法第{i}条") for i, text in
            enumerate(["借款合同对支付利息没有约定的，视为没有利息。", "盗窃公私财物，数额较大的，处三年以下有期徒刑。",
                       "用人单位应当与劳动者订立书面劳动合同。"], 1)]
    trained = FakeEncoder()
    trained.trained = True
    specs = expand_components(["bm25", "dense", "hybrid"], ["e5-small"])
    index = build_index(tmp_path / "idx", docs, specs, lang="zh", make_encoder=lambda spec, **_: trained)
    dense = next(n for n in index.names if n.startswith("dense"))
    assert index.names[0] == "bm25" and index.default == dense  # the trained dense component, not the first built
    assert index.manifest["components"][dense]["params"]["trained"] is True
    lexical = build_index(tmp_path / "lex", docs, ["bm25"], lang="zh")
    assert lexical.default == "bm25"


def test_an_encoder_that_is_gone_is_named_with_the_fix(tmp_path):
    from legalrag.wiring import make_encoder

    gone = tmp_path / "models" / "my-e5"
    with pytest.raises(InputError) as err:
        make_encoder(str(gone), cache=False, progress=False)
    message = str(err.value)
    assert str(gone) in message and "not available" in message and "rebuild the index" in message
    assert "stard-e5" in message or not any(m.kind == "encoder" for m in shipped_models())


CRIMINAL_LAW = [  # a few articles of the Criminal Law, ids as in the JuDGE law corpus
    ("264", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处"
            "罚金；数额巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处罚金。"),
    ("133", "违反交通运输管理法规，因而发生重大事故，致人重伤、死亡或者使公私财产遭受重大损失的，处三年以下有期徒刑或者拘役。"),
    ("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。对于自首的犯罪分子，可以从轻或者减轻处罚。"),
    ("52", "判处罚金，应当根据犯罪情节决定罚金数额。"),
    ("53", "罚金在判决指定的期限内一次或者分期缴纳。"),
    ("234", "故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制。"),
]


def test_cite_on_a_fresh_index_uses_the_shipped_citation_model(tmp_path, monkeypatch, capsys):
    """No INDEX/citepred and no training data: an index built with --encoder judge-e5 gets the shipped judge-cite
    model; every provision it predicts is marked resolved or not against the corpus; a damaged copy is refused."""
    if not any(m.name == "judge-cite" for m in shipped_models()):
        pytest.skip("judge-cite does not ship in this checkout")
    from support.cli_runner import run_cli

    corpus = tmp_path / "law.jsonl"
    corpus.write_text("".join(json.dumps({"text_id": i, "text": t, "name": f"中华人民共和国刑法第{i}条"}, ensure_ascii=False)
                              + "\n" for i, t in CRIMINAL_LAW), encoding="utf-8")
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", corpus, "--out", tmp_path / "idx",
                           "--lang", "zh", "--retriever", "bm25", "--retriever", "dense", "--encoder", "judge-e5",
                           "--no-progress")
    assert code == 0, err
    facts = "公诉机关指控：被告人张某在超市盗窃商品，价值人民币三千元。被告人张某到案后如实供述，当庭自愿认罪。"
    code, out, err = run_cli(monkeypatch, capsys, "cite", "--index", tmp_path / "idx", "--json", facts)
    assert code == 0, err
    result = json.loads(out)
    ids = {p["id"]: p for p in result["provisions"]}
    assert "264" in ids and ids["264"]["resolved"]  # theft
    assert any(v["stage"] == "similar-cases" for p in result["provisions"] for v in p["provenance"])
    for p in result["provisions"]:  # provisions outside the tiny corpus are flagged, never dropped
        assert p["resolved"] == (p["id"] in dict(CRIMINAL_LAW))
    copy = tmp_path / "judge-cite"
    shutil.copytree(checked("judge-cite").path, copy)
    (copy / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="config.json.*truncated or corrupted"):
        checked("judge-cite", "citation-model", tmp_path)


def test_judgment_predict_and_draft_use_the_shipped_structure_model(tmp_path, monkeypatch, capsys):
    """No --model-dir and nothing trained: `judgment predict` and `judgment draft` decide the judgment with the
    shipped judge-structure (the structure-first drafter), over the user's own statute file; a damaged copy is
    refused naming the file and the fix."""
    if not any(m.name == "judge-structure" for m in shipped_models()):
        pytest.skip("judge-structure does not ship in this checkout")
    pytest.importorskip("lightgbm")
    from support.cli_runner import run_cli

    corpus = tmp_path / "law.jsonl"
    corpus.write_text("".join(json.dumps({"text_id": i, "text": t, "name": f"中华人民共和国刑法第{i}条"}, ensure_ascii=False)
                              + "\n" for i, t in CRIMINAL_LAW), encoding="utf-8")
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LEGALRAG_JUDGMENT_MODEL", raising=False)
    facts = "公诉机关指控：被告人张某在超市盗窃商品，价值人民币三千元。被告人张某到案后如实供述，当庭自愿认罪。"
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--facts", facts, "--law-corpus", corpus)
    assert code == 0, err
    s = json.loads(out)
    assert s["charges"][0]["name"] == "盗窃罪" and "264" in [a["name"] for a in s["articles"]]
    assert s["prison_months"]["value"] >= 1
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--facts", facts, "--law-corpus", corpus,
                             "--no-llm", "--json")
    assert code == 0, err
    draft = json.loads(out)
    assert "盗窃罪" in draft["document"] and draft["structure"]["charges"][0]["name"] == "盗窃罪"
    copy = tmp_path / "judge-structure"
    shutil.copytree(checked("judge-structure").path, copy)
    with (copy / "prison.lgb.txt").open("r+b") as fh:
        fh.truncate(100)
    with pytest.raises(ModelError, match="prison.lgb.txt.*truncated or corrupted"):
        checked("judge-structure", "judgment-model", tmp_path)


def test_shipped_encoders_use_e5s_query_and_passage_prefixes():
    """A re-packed encoder with its prefixes swapped still loads and still agrees with itself; only the
    prefixes say which role a text is encoded in."""
    encoders = [m for m in shipped_models() if m.kind == "encoder"]
    assert encoders, "no shipped encoder found"
    for m in encoders:
        settings = json.loads((m.path / "onnx_encoder.json").read_text(encoding="utf-8"))
        assert (settings["query_prefix"], settings["passage_prefix"]) == ("query: ", "passage: "), \
            f"{m.name}: prefixes {settings['query_prefix']!r} / {settings['passage_prefix']!r}"


def test_the_packer_writes_the_models_own_prefixes(tmp_path):
    """``pack.encoder_settings`` (the packed ``onnx_encoder.json``'s model fields) on a real sentence-transformers
    model saved with e5's prompts."""
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer
    from support.training_fixtures import tiny_encoder

    from legalrag.training.pack import encoder_settings

    model = SentenceTransformer(str(tiny_encoder(tmp_path / "tiny")), device="cpu")
    got = encoder_settings(model)
    assert (got["query_prefix"], got["passage_prefix"]) == ("query: ", "passage: "), \
        f"the packer wrote prefixes {got['query_prefix']!r} / {got['passage_prefix']!r} for a model whose prompts " \
        "are query: / passage:"
    assert got["dimension"] == 32 and got["max_seq_length"] == 32


def test_all_shipped_models_fit_the_install_budget():
    """The shipped models together stay within 100 MB (the install-size budget of legalrag's models)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "src" / "legalrag" / "data" / "models"
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert 0 < total <= 100_000_000, f"{total / 1e6:.1f} MB"
