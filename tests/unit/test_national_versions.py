"""`corpus update` (national_versions.update_corpus): incremental, atomic swap, rollback, and an interrupted update
leaving the old corpus answering; on the fixture folder with the hashed test encoder (no shipped base)."""

from __future__ import annotations

import shutil

import pytest

from legalrag.errors import InputError
from legalrag.national_versions import current_corpus, read_versions, rollback_corpus, update_corpus
from legalrag.retrieval.index import open_index
from legalrag.testing import FakeEncoder
from legalrag.wiring import expand_components
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
COMPONENTS = lambda: expand_components(["bm25", "dense"], ["stard-e5"])  # noqa: E731  (built with the given encoder)


class Failing(FakeEncoder):
    def encode_documents(self, texts):
        raise RuntimeError("killed while encoding")


def answer(home, query="注册资本 出资额 五年内缴足"):
    enc = FakeEncoder()
    index = open_index(current_corpus(home) / "index", lambda spec, **_: enc)
    from legalrag.retrieval.pipeline import build_pipeline

    return build_pipeline(index, retriever="bm25").search(query, k=3)


@pytest.fixture()
def checkout(tmp_path):
    folder = tmp_path / "laws"
    shutil.copytree(MINI, folder)
    return folder


def test_update_encodes_only_new_text_swaps_and_rolls_back(tmp_path, checkout):
    home = tmp_path / "home"
    enc = FakeEncoder()
    first = update_corpus(home, checkout, enc, COMPONENTS(), base=None, today="2025-04-19")
    assert first.previous is None and first.encoded == enc.calls > 0
    assert "公司法" in first.laws_added
    hits = answer(home)
    assert hits[0].document.id == "公司法第五条@2023-12-29"
    old = [h for h in answer(home, "全体股东认缴的出资额 从其规定") if h.document.metadata.get("version") == "2018-10-26"]
    assert old and old[0].document.metadata["law"] == "公司法（2018-10-26版）"  # superseded: kept, marked

    changed = checkout / "民法商法" / "公司法(2023-12-29).md"
    changed.write_text(changed.read_text(encoding="utf-8").replace("五年内缴足", "三年内缴足"), encoding="utf-8")
    (checkout / "经济法" / "新法(2025-01-01).md").write_text(
        "# 新法\n\n2025年1月1日 通过\n\n<!-- INFO END -->\n\n第一条 新的条文。\n", encoding="utf-8")
    enc2 = FakeEncoder()
    second = update_corpus(home, checkout, enc2, COMPONENTS(), base=None, today="2025-04-19")
    assert second.encoded == enc2.calls == 2  # the changed article and the new law's one
    assert second.laws_added == ("新法",) and second.articles_changed == 2 and second.previous == first.directory
    assert "三年内缴足" in answer(home, "注册资本 三年内缴足")[0].document.text
    assert any("laws added: 1 (新法)" in line for line in second.lines())

    now, left = rollback_corpus(home)
    assert now == first.directory and left == second.directory
    assert "五年内缴足" in answer(home)[0].document.text
    assert read_versions(current_corpus(home)).law("新法") is None


def test_an_interrupted_update_leaves_the_old_corpus_answering(tmp_path, checkout):
    home = tmp_path / "home"
    update_corpus(home, checkout, FakeEncoder(), COMPONENTS(), base=None, today="2025-04-19")
    before = current_corpus(home)
    (checkout / "经济法" / "新法(2025-01-01).md").write_text(
        "# 新法\n\n2025年1月1日 通过\n\n<!-- INFO END -->\n\n第一条 新的条文。\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="killed"):
        update_corpus(home, checkout, Failing(), COMPONENTS(), base=None, today="2025-04-19")
    assert current_corpus(home) == before
    assert answer(home)[0].document.id == "公司法第五条@2023-12-29"
    with pytest.raises(InputError, match="no previous corpus"):
        rollback_corpus(home)


def test_a_folder_of_another_layout_is_refused_before_anything_changes(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.md").write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected layout"):
        update_corpus(tmp_path / "home", tmp_path / "x", FakeEncoder(), COMPONENTS(), base=None)
    assert current_corpus(tmp_path / "home") is None


KILLED = r"""
import sys, time
from pathlib import Path
from legalrag.national_versions import update_corpus
from legalrag.testing import FakeEncoder
from legalrag.wiring import expand_components

class Slow(FakeEncoder):
    def encode_documents(self, texts):
        Path(sys.argv[3]).write_text("encoding")
        time.sleep(60)

update_corpus(sys.argv[1], sys.argv[2], Slow(), expand_components(["bm25", "dense"], ["stard-e5"]), base=None)
"""


def test_an_update_killed_with_sigkill_leaves_the_old_corpus_answering(tmp_path, checkout):
    import signal
    import subprocess
    import sys
    import time

    home = tmp_path / "home"
    update_corpus(home, checkout, FakeEncoder(), COMPONENTS(), base=None, today="2025-04-19")
    before = current_corpus(home)
    (checkout / "经济法" / "新法(2025-01-01).md").write_text(
        "# 新法\n\n2025年1月1日 通过\n\n<!-- INFO END -->\n\n第一条 新的条文。\n", encoding="utf-8")
    flag = tmp_path / "encoding"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(home), str(checkout), str(flag)])
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert flag.exists(), "the update never reached its encoding"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert current_corpus(home) == before
    assert answer(home)[0].document.id == "公司法第五条@2023-12-29"
    after = update_corpus(home, checkout, FakeEncoder(), COMPONENTS(), base=None, today="2025-04-19")
    assert after.laws_added == ("新法",) and not list((home / "corpus" / "versions").glob(".*.tmp"))
