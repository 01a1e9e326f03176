"""What the front-door tests of 刑法第十二条 share: a structure model trained on tiny labelled cases of theft and of
非法经营同类营业罪 (刑法第一百六十五条), the facts of a private company's manager whose acts took place in 2023, and
the versions of the Criminal Law the draft reads (the two-version library of ``test_temporal``, built from the
real texts before and after 刑法修正案（十二）, or the shipped versions when installed)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from legalrag.corpora.statutes import statute_document
from unit.judgment.test_temporal import LIB, NEW_165
from unit.judgment.test_structure import STATUTES, _cases, _gold

CRIMINAL_LAW = "中华人民共和国刑法"
MANAGER = ("被告人张某系某民营科技有限公司总经理，利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益人民币"
           "三百万元，数额巨大。被告人张某到案后如实供述。")
ACTS_2023 = "公诉机关指控：2023年5月至2023年11月，" + MANAGER
STATUTES_165 = [*STATUTES, statute_document("165", NEW_165.replace("\n\n", ""), "中华人民共和国刑法第一百六十五条")]
TWO_VERSIONS = LIB  # the library of test_temporal: 2020-12-26 (in force 2021-03-01) and 2023-12-29 (2024-03-01)


def _manager_cases() -> tuple[dict, dict]:
    facts, gold = _cases()
    for i in range(8):
        cid = f"m{i}"
        facts[cid] = (f"公诉机关指控：被告人王{i}系某公司总经理，利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益"
                      f"人民币{100 + 20 * i}万元，数额巨大。被告人王{i}到案后如实供述。")
        gold[cid] = _gold(f"王{i}", "非法经营同类营业罪", 12 + 2 * i, 50000 + 10000 * i, [165, 67, 52])
    return facts, gold


@lru_cache(maxsize=1)
def manager_model():
    """A StructurePredictor over :data:`STATUTES_165` that convicts the manager of 非法经营同类营业罪 (art. 165)."""
    pytest.importorskip("lightgbm")
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor

    facts, gold = _manager_cases()
    labels = label_cases(facts, gold)
    assert not labels.skipped, labels.skipped
    return StructurePredictor(labels.cases, STATUTES_165, select=False).train()


def saved_model(directory: Path) -> tuple[Path, Path]:
    """:func:`manager_model` saved under ``directory``, and its statutes as a JuDGE-shaped JSONL file."""
    manager_model().save(directory / "model")
    law = directory / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES_165), encoding="utf-8")
    return directory / "model", law


def shipped_versions_or_skip():
    """The versions of the national law shipped with legalrag, when they hold the Criminal Law's two texts."""
    from legalrag.errors import InputError
    from legalrag.national_versions import law_library

    try:
        lib = law_library()
    except InputError:
        pytest.skip("no versions of the national law installed")
    law = lib.law(CRIMINAL_LAW)
    if law is None or len(law.versions) < 2:
        pytest.skip("the Criminal Law's two versions are not installed")
    return lib


def article(law_versions: dict, number: str = "165") -> dict:
    """The entry of article ``number`` in a ``law_versions`` JSON."""
    return {a["article"]: a for a in law_versions["articles"]}[number]
