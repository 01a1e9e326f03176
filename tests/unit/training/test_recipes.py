"""The shipped judgment models' recipes end to end on a tiny JuDGE-format folder and a tiny CAIL2018 folder:
`legalrag train cail-split`, `train judge-structure` and `train judge-cite` write model directories of the shipped
format (the same files as the shipped model's card lists), which load and predict, and which `train pack-model`
turns into a shipped model whose files check; bad input is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lightgbm")

from legalrag.numerals import to_chinese  # noqa: E402
from legalrag.testing import FakeEncoder  # noqa: E402

MODELS = Path(__file__).resolve().parents[3] / "src" / "legalrag" / "data" / "models"
STATUTES = [
    ("264", "盗窃公私财物，数额较大的，或者多次盗窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；数额巨大的，处三年以上"
            "十年以下有期徒刑，并处罚金。"),
    ("133", "在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。"),
    ("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。"),
    ("52", "判处罚金，应当根据犯罪情节决定罚金数额。"),
    ("234", "故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制。"),
]
N_CASES = 80
HEADING = "刑事判决书\n公诉机关某某人民检察院。\n本院依法组成合议庭，公开开庭审理了本案。现已审理终结。\n"


def _months(m: int) -> str:
    return f"拘役{to_chinese(m)}个月" if m < 6 else f"有期徒刑{to_chinese(m)}个月"


def _judgment(name: str, charge: str, months: int, fine: int, articles) -> str:
    cite = "、".join(f"第{to_chinese(a)}条" for a in articles)
    return (HEADING + f"公诉机关指控被告人{name}犯{charge}。\n本院认为，被告人{name}的行为构成{charge}。依照《中华人民共和国刑法》"
            f"{cite}之规定，判决如下：\n被告人{name}犯{charge}，判处{_months(months)}，并处罚金人民币{to_chinese(fine)}元。\n"
            "如不服本判决，可在接到判决书的第二日起十日内上诉。")


def _judge_folder(root: Path) -> Path:
    data = root / "judge"
    (data / "data").mkdir(parents=True)
    facts, gold = [], []
    for i in range(N_CASES // 2):  # enough that the set decision keeps 5 cases judge-e5 was not trained on
        facts.append({"text_id": f"t{i}", "text": f"公诉机关指控：被告人张{i}在超市盗窃商品，价值人民币{2000 * (i % 8 + 1)}元。"
                      f"被告人张{i}到案后如实供述，当庭自愿认罪。", "la": [264, 67, 52]})
        gold.append({"id": f"t{i}", "document": _judgment(f"张{i}", "盗窃罪", 6 + i % 8, 1000 * (i % 8 + 1), [264, 67, 52])})
        facts.append({"text_id": f"d{i}", "text": f"公诉机关指控：被告人李{i}醉酒驾驶机动车在道路上行驶，经鉴定血液中乙醇含量为"
                      f"{150 + 10 * (i % 8)}mg/100ml。被告人李{i}主动投案。", "la": [133, 67, 52]})
        gold.append({"id": f"d{i}", "document": _judgment(f"李{i}", "危险驾驶罪", 1 + i % 4, 2000 + 1000 * (i % 3),
                                                          [133, 67, 52])})
    write = lambda path, rows: path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),  # noqa: E731
                                               encoding="utf-8")
    write(data / "data" / "test.json", facts)
    write(data / "expected.jsonl", gold)
    write(data / "data" / "law_corpus.jsonl",
          [{"text_id": a, "text": t, "name": f"中华人民共和国刑法第{to_chinese(int(a))}条"} for a, t in STATUTES])
    (data / "data" / "qrels_file_train").write_text("".join(
        f"q{k} 0 {a} 1\n" for k, arts in enumerate([["264", "67", "52"], ["133", "67", "52"], ["264", "52"],
                                                     ["133", "67"], ["234", "67"]] * 3) for a in arts))
    return data


def _cail_folder(root: Path) -> Path:
    cail = root / "cail"
    cail.mkdir()

    def line(fact, acc, art, months, fine):
        return json.dumps({"fact": fact, "meta": {"accusation": [acc], "relevant_articles": [art],
                                                  "punish_of_money": fine, "criminals": ["王某"],
                                                  "term_of_imprisonment": {"imprisonment": months,
                                                                           "death_penalty": False,
                                                                           "life_imprisonment": False}}},
                          ensure_ascii=False)

    rows = [line(f"被告人王某{i}持刀故意伤害被害人赵某{i}，致其轻伤二级。被告人王某{i}赔偿被害人{1000 * i}元并取得谅解。",
                 "故意伤害", 234, 6 + i, 0) for i in range(6)]
    rows += [line(f"被告人王某{i}在商场盗窃手机{i + 1}部，价值人民币{3000 + 500 * i}元。", "盗窃", 264, 7 + i, 2000)
             for i in range(6)]
    (cail / "data_train.jsonl").write_text("\n".join(rows[::2]) + "\n", encoding="utf-8")
    (cail / "data_test.jsonl").write_text("\n".join(rows[1::2]) + "\n", encoding="utf-8")
    return cail


def _files(path: Path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index

    root = tmp_path_factory.mktemp("recipes")
    data = _judge_folder(root)
    enc = FakeEncoder()
    idx = build_index(root / "index", load_statutes(data / "data" / "law_corpus.jsonl"), ("bm25", "dense"),
                      lang="zh", make_encoder=lambda *a, **k: enc)
    dense = next(n for n in idx.names if n.startswith("dense"))
    return root, data, _cail_folder(root), enc, dense


def _run(args, enc):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.wiring import Root

    res = CliRunner().invoke(app, [str(a) for a in args], obj=Root(encoder=enc))
    return res.exit_code, res.output + (str(res.exception) if res.exception and res.exit_code else "")


def test_the_structure_and_citation_recipes_write_models_of_the_shipped_format(setup):
    from legalrag.citepredict.service import build_predictor
    from legalrag.corpora.statutes import load_statutes
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.retrieval.index import open_index
    from legalrag.shipped import checked, shipped_models, verify

    root, data, cail, enc, dense = setup
    split = root / "cail-split.json"
    code, out = _run(["train", "cail-split", "--data", data, "--cail", cail, "--out", split], enc)
    assert code == 0, out
    record = json.loads(split.read_text(encoding="utf-8"))
    assert record["cases"] == 12 and record["holdout"] == 2 and record["holdout_charges"] == 2
    assert record["command"].startswith("legalrag train cail-split")

    structure = root / "structure"
    code, out = _run(["train", "judge-structure", "--data", data, "--index", root / "index", "--retriever", dense,
                      "--cail", cail, "--cail-split", split, "-o", "cail_rows=all", "--out", structure,
                      "--no-progress"], enc)
    assert code == 0, out
    man = json.loads((structure / "manifest.json").read_text(encoding="utf-8"))
    shipped = json.loads((MODELS / "judge-structure" / "manifest.json").read_text(encoding="utf-8"))
    assert man["format"] == shipped["format"] and set(shipped) <= set(man)
    assert man["n_judge_cases"] == N_CASES and man["n_cail_cases"] == 10 and man["n_cail_cases_with_rows"] == 10
    assert man["command"].startswith("legalrag train judge-structure")
    assert set(checked("judge-structure").files) == _files(structure)
    statutes = load_statutes(data / "data" / "law_corpus.jsonl")
    model = StructurePredictor.load(structure, statutes, enc)
    s = model.predict("公诉机关指控：被告人周某在超市盗窃商品，价值人民币5000元。被告人周某如实供述。")
    assert s.charges[0].name == "盗窃罪" and "264" in {a.name for a in s.articles}

    cite = root / "cite"
    code, out = _run(["train", "judge-cite", "--data", data, "--index", root / "index", "--retriever", dense,
                      "--cail", cail, "--cail-split", split, "--out", cite, "--no-progress"], enc)
    assert code == 0, out
    assert _files(cite) == set(checked("judge-cite").files)
    config = json.loads((cite / "config.json").read_text(encoding="utf-8"))
    ship_config = json.loads((MODELS / "judge-cite" / "config.json").read_text(encoding="utf-8"))
    assert set(config) == set(ship_config) and config["retriever"] == dense
    assert {k: config[k] for k in ("candidates", "case_neighbours", "case_weight", "max_query_chars")} == \
        {k: ship_config[k] for k in ("candidates", "case_neighbours", "case_weight", "max_query_chars")}
    on_disk = "".join((cite / f).read_text(encoding="utf-8", errors="ignore") for f in _files(cite)
                      if f.endswith((".json", ".jsonl")))
    assert "醉酒驾驶" not in on_disk and "持刀" not in on_disk  # no case text, as shipped
    pred = build_predictor(open_index(root / "index", lambda *a, **k: enc), model_dir=cite)
    assert "264" in pred.predict("被告人周某在超市盗窃商品，价值人民币5000元。").provisions

    # packed as a shipped model: the card lists every file and they check
    packed = root / "models" / "judge-cite"
    code, out = _run(["train", "pack-model", cite, packed, "--name", "judge-cite", "--kind", "citation-model"], enc)
    assert code == 0, out
    model_card = next(m for m in shipped_models(root / "models") if m.name == "judge-cite")
    assert not verify(model_card) and set(model_card.files) == _files(cite)


def test_the_structure_recipe_without_an_index_uses_the_bm25_signal(setup, tmp_path):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.training.recipes import judge_structure, load_judge

    _, data, _, _, _ = setup
    model = judge_structure(load_judge(data), tmp_path / "m", progress=False)
    again = StructurePredictor.load(tmp_path / "m", load_statutes(data / "data" / "law_corpus.jsonl"))
    facts = "公诉机关指控：被告人钱某醉酒驾驶机动车在道路上行驶，血液中乙醇含量为180mg/100ml。"
    assert again.predict(facts).to_dict() == model.predict(facts).to_dict()
    assert again.predict(facts).charges[0].name == "危险驾驶罪"


def test_bad_input_is_named(setup, tmp_path):
    root, data, cail, enc, dense = setup
    code, out = _run(["train", "judge-structure", "--data", tmp_path, "--out", tmp_path / "m"], enc)
    assert code != 0 and "test.json" in out and "--data" in out
    code, out = _run(["train", "judge-structure", "--data", data, "--cail", cail, "--out", tmp_path / "m"], enc)
    assert code != 0 and "--cail-split" in out
    code, out = _run(["train", "judge-structure", "--data", data, "--index", root / "index", "--out",
                      tmp_path / "m"], enc)
    assert code != 0 and "--retriever" in out
    code, out = _run(["train", "judge-structure", "--data", data, "-o", "case_texts=false", "--out", tmp_path / "m"], enc)
    assert code != 0 and "--case-texts" in out
    code, out = _run(["train", "judge-cite", "--data", data, "--index", root / "index", "--retriever", "bm25",
                      "--out", tmp_path / "c"], enc)
    assert code != 0 and "dense" in out
    assert not (tmp_path / "m").exists() and not (tmp_path / "c").exists()
