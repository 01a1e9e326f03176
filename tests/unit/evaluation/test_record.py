"""legalrag.evaluation.record: a result file holds its figures, command, machine and date, is written
atomically, and its paired tests are the compare module's randomization test."""

from __future__ import annotations

import json
import os
import platform

import pytest

from legalrag.errors import InputError
from legalrag.evaluation import record
from legalrag.evaluation.compare import paired_randomization_test


def test_the_file_holds_every_field(tmp_path):
    out = tmp_path / "results" / "x.json"
    wrote = record.write_result(out, {"bm25": {"recall@10": 0.454}}, name="BM25 on STARD", command="python b.py",
                                data="STARD", machine_note="shared with other jobs", date="2026-12-01",
                                page={"section": "retrieval"})
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data == wrote
    assert data["name"] == "BM25 on STARD" and data["command"] == "python b.py" and data["data"] == "STARD"
    assert data["metrics"] == {"bm25": {"recall@10": 0.454}} and data["date"] == "2026-12-01"
    assert data["page"] == {"section": "retrieval"}
    assert data["machine"].endswith("; shared with other jobs")
    assert set(data["machine_detail"]) == {"cpu", "cores", "memory_gib", "gpu", "os"}


def test_the_date_defaults_to_today_and_the_command_to_this_process(tmp_path, monkeypatch):
    import datetime

    monkeypatch.chdir(tmp_path)
    script = tmp_path / "bench" / "area" / "s.py"
    monkeypatch.setattr("sys.argv", [str(script), "--out", "a b.json"])
    data = record.write_result(tmp_path / "r.json", {"n": 1}, name="n")
    assert data["command"] == "python bench/area/s.py --out 'a b.json'"
    assert data["date"] == datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def test_the_machine_is_this_one_and_detected_once():
    m = record.machine()
    assert record.machine() is m
    assert m.cores == len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert m.memory_gib > 0 and m.cpu and m.gpu
    assert platform.system() in m.os and platform.machine() in m.os
    line = m.describe()
    assert f"{m.cores} cores" in line and m.cpu in line
    assert ("no GPU" in line) == (m.gpu == "none")


def test_the_write_is_atomic(tmp_path, monkeypatch):
    """A write that fails midway leaves the old file whole and no temp file behind."""
    out = tmp_path / "x.json"
    record.write_result(out, {"v": 1}, name="first", command="c")
    before = out.read_text(encoding="utf-8")

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        record.write_result(out, {"v": 2}, name="second", command="c")
    assert out.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_paired_is_the_compare_modules_test():
    a = [0.9, 0.4, 0.7, 0.1, 0.6, 0.8, 0.3, 0.5]
    b = [0.5, 0.4, 0.2, 0.1, 0.6, 0.3, 0.35, 0.1]
    t = record.paired(a, b, digits=None)
    assert t["p"] == paired_randomization_test(a, b)
    assert t["n"] == 8 and t["a_minus_b"] == pytest.approx(sum(a) / 8 - sum(b) / 8)
    assert record.paired(a, b, trials=500, seed=3, digits=None)["p"] == paired_randomization_test(a, b, 500, 3)


def test_paired_tests_over_two_runs_keep_the_shared_measured_items():
    before = {"1": {"f1": 0.2}, "2": {"f1": 0.5}, "3": {"f1": None}, "4": {"f1": 0.1}}
    after = {"1": {"f1": 0.6}, "2": {"f1": 0.9}, "3": {"f1": 1.0}, "5": {"f1": 1.0}}
    out = record.paired_tests(before, after, ["f1", "absent"])
    assert out["n"] == 3 and out["absent"] is None  # items in both runs; f1 was measured in two of them
    assert out["f1"] == {"n": 2, "before": 0.35, "after": 0.75,
                         "p": round(paired_randomization_test([0.6, 0.9], [0.2, 0.5]), 4)}


def test_paired_tests_land_in_the_file(tmp_path):
    t = record.paired([1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    data = record.write_result(tmp_path / "p.json", {}, name="p", command="c", paired={"x vs y": t})
    assert json.loads((tmp_path / "p.json").read_text())["paired"] == {"x vs y": t} == data["paired"]


def test_bad_input_names_the_field(tmp_path):
    with pytest.raises(InputError, match="name"):
        record.write_result(tmp_path / "x.json", {}, name="")
    with pytest.raises(InputError, match="metrics must be a mapping"):
        record.write_result(tmp_path / "x.json", [1, 2], name="n")
    with pytest.raises(InputError, match="machine"):
        record.write_result(tmp_path / "x.json", {}, name="n", machine="mine")
    with pytest.raises(InputError, match="3 values and b 2"):
        record.paired([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="no values"):
        record.percentile([], 50)
    assert not (tmp_path / "x.json").exists()


def test_percentile_is_a_measured_value():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert record.percentile(xs, 50) == 3.0 and record.percentile(xs, 0) == 1.0 and record.percentile(xs, 100) == 5.0
    assert record.percentile(xs, 95) in xs
