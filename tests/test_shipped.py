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


def test_an_index_defaults_to_its_strongest_component(tmp_path):
    from legalrag.retrieval.index import build_index, component_strength, default_component
    from legalrag.testing import FakeEncoder
    from legalrag.wiring import expand_components

    assert default_component({"bm25": {"kind": "bm25", "params": {}}, "hybrid": {"kind": "hybrid", "params": {}},
                              "dense-a": {"kind": "dense", "params": {"trained": False}},
                              "dense-b": {"kind": "dense", "params": {"trained": True}}}) == "dense-b"
    assert component_strength("dense", {}) > component_strength("hybrid", {}) > component_strength("bm25", {})
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
