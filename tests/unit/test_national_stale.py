"""The default index is reused only while the data that built it is unchanged: after the shipped national-law
data changes (another snapshot, another article), the next open rebuilds it from the new data."""

from __future__ import annotations

import json
import lzma

import numpy as np

from legalrag.io import sha256_file
from legalrag.national import CORPUS, CRIMINAL_LAW, MANIFEST, ensure_index, ensure_law_index, national_law, quantise
from legalrag.retrieval.dense import passage_text
from legalrag.retrieval.index import ComponentSpec
from legalrag.testing import FakeEncoder

OLD = [(0, "中华人民共和国刑法第二百六十四条", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。"),
       (1, "劳动合同法第八十二条", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。")]
NEW = OLD + [(2, "中华人民共和国刑法第一百三十三条之一", "在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。")]
ENCODER = FakeEncoder(dimension=32)


def write_law(directory, articles, snapshot):
    """A national-law data set in the shipped layout (xz corpus, int8 vectors, manifest with every hash)."""
    from legalrag.corpora.statutes import statute_document

    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"id": i, "name": n, "content": c}, ensure_ascii=False) + "\n" for i, n, c in articles)
    with lzma.open(directory / CORPUS, "wt", encoding="utf-8") as fh:
        fh.write(lines)
    docs = [statute_document(str(i), c, n) for i, n, c in articles]
    codes, scales = quantise(ENCODER.encode_documents([passage_text(d, 512) for d in docs]))
    np.save(directory / "fake.i8.npy", codes, allow_pickle=False)
    np.save(directory / "fake.scale.npy", scales, allow_pickle=False)
    manifest = {"name": "cn-law-test", "title": "test law", "snapshot": snapshot, "n_laws": 2,
                "n_articles": len(articles), "note": "a test snapshot", "provenance": "written by the test",
                "vectors": {"encoder": "fake", "model_id": ENCODER.model_id, "dimension": ENCODER.dimension,
                            "max_chars": 512, "codes": "fake.i8.npy", "scales": "fake.scale.npy"},
                "files_sha256": {n: sha256_file(directory / n) for n in (CORPUS, "fake.i8.npy", "fake.scale.npy")}}
    (directory / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    return national_law(directory)


def factory(spec, **_):
    return ENCODER


def components():
    return ["bm25", ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake"), "hybrid"]


def titles(index):
    return sorted(d.title for d in index.documents)


def test_the_default_index_is_rebuilt_after_the_data_changes_and_reused_while_it_does_not(tmp_path):
    old = write_law(tmp_path / "data", OLD, "2023-06-05")
    first = ensure_index(tmp_path / "idx", old, components, factory)
    assert titles(first) == sorted(n for _, n, _ in OLD)
    old_digest = old.digest
    new = write_law(tmp_path / "data", NEW, "2024-01-01")
    assert new.digest != old_digest
    second = ensure_index(tmp_path / "idx", new, components, factory)
    assert titles(second) == sorted(n for _, n, _ in NEW)  # answers come from the new corpus
    assert second.manifest["corpus"]["source"].endswith(new.digest)
    built = (second.path / "manifest.json").stat().st_mtime_ns
    third = ensure_index(tmp_path / "idx", new, components, factory)
    assert (third.path / "manifest.json").stat().st_mtime_ns == built and titles(third) == titles(second)


def test_a_law_index_is_rebuilt_after_the_data_changes(tmp_path):
    old = write_law(tmp_path / "data", OLD, "2023-06-05")
    comps = lambda: ["bm25"]  # noqa: E731
    first = ensure_law_index(tmp_path / "crim", old, [CRIMINAL_LAW], comps, factory, article_ids=True)
    assert [d.id for d in first.documents] == ["264"]
    new = write_law(tmp_path / "data", NEW, "2024-01-01")
    second = ensure_law_index(tmp_path / "crim", new, [CRIMINAL_LAW], comps, factory, article_ids=True)
    assert sorted(d.id for d in second.documents) == ["133-1", "264"]
    ids = ensure_law_index(tmp_path / "crim", new, [CRIMINAL_LAW], comps, factory, article_ids=False)
    assert sorted(d.id for d in ids.documents) == ["0", "2"]  # another id scheme is another index
