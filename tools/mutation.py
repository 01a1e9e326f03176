"""Mutation testing of the modules that decide what a person is told, by mutmut (3.x), one module at a time.

    nice -n 15 python tools/mutation.py run --budget-min 90          # every module, smallest first (resumable)
    python tools/mutation.py run --module citecheck.marks             # one module
    python tools/mutation.py run --module answer.carry --tests tests/unit/answer/test_carry.py   # explicit test files
    python tools/mutation.py report                                   # bench/results/mutation.json from what ran
    python tools/mutation.py survivors --module citecheck.marks       # the diff of every surviving mutant
    python tools/mutation.py try FILE OLD NEW TEST...                 # one hand-written mutant on a copy

mutmut writes every mutant of a module into one copy of ``src`` (a trampoline picks the live mutant by an
environment variable), runs the module's fast tests once to learn which tests reach which function, then runs,
per mutant, only those tests in a process forked from a server that has imported and collected them: no pytest
start-up per mutant, which is what makes a run fit on two shared cores. (Forked from a server that has not run a
test: a process that had would hand every mutant the caches its tests filled, e.g. a table built by the
unmutated constructor, and those mutants would survive untested.) Each module runs in its own folder ``runs/mutation/<module>/``
(its ``mutants/`` copy and the per-mutant verdicts, saved after every mutant), so:

- a run stopped by the budget, Ctrl-C or ``kill -9`` resumes where it stopped: ``run`` again; a verdict file
  torn by the kill is restored from the last good copy this driver took of it (every 20 s), else that module's
  mutants are generated again;
- ``--fresh`` starts a module over (after a change of its source or tests, mutmut also re-checks on its own);
- the tests run inside ``mutants/``, mutmut's copy of the tree, which holds the rest of the repository as links
  (``bench/data``, ``docs``, ``tools``: what tests read outside ``src`` and ``tests``), and whose package data is
  brought up to date before each run (mutmut itself refreshes only the ``.py`` files of the copy): the folder is
  made ready by ``tools/mutation_copy.py``.

The fast tests of a module are the unit tests listed in ``MODULES`` (``tools/mutation_targets.py``; no embedded
LLM, no browser, no Ray, no Milvus: ``-m`` deselects those markers too). The paths are those of the mirrored test layout
(``tests/unit/...``); where such a file does not exist yet, its older flat name (``FLAT``) is used, and
``--tests`` replaces the list. A module whose tests all skip or whose file does not exist is reported as
skipped with the reason; mutants judged equivalent are listed in ``EQUIVALENT`` with why.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _neighbour(name: str):
    """A script beside this one, loaded by its file: this one may itself be loaded by path (a test), with tools/
    not on ``sys.path``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


_copy, _targets = _neighbour("mutation_copy"), _neighbour("mutation_targets")
keep_good_copies, metas, prepare, replace_text = (_copy.keep_good_copies, _copy.metas, _copy.prepare,
                                                  _copy.replace_text)
EQUIVALENT, FLAT, MODULES, Target = _targets.EQUIVALENT, _targets.FLAT, _targets.MODULES, _targets.Target

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "runs" / "mutation"
RESULTS = REPO / "bench" / "results" / "mutation.json"
DESELECT = "not llm and not shared_data and not ray and not ray_cluster"

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no_tests", 33: "no_tests", 34: "not_run", 36: "timeout",
          -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", 37: "killed", None: "not_checked"}


def test_paths(target: Target, explicit: list[str] | None, baseline: bool = False) -> tuple[list[str], list[str]]:
    """The test files to run (new layout, else the flat name) and the ones found under neither name;
    ``baseline``: only the module's older test files (those with a flat name), for the kill rate before."""
    if explicit:
        return [p for p in explicit if (REPO / p.split("::")[0]).exists()], [p for p in explicit
                                                                             if not (REPO / p.split("::")[0]).exists()]
    found, missing = [], []
    for p in (t for t in target.tests if t in FLAT or not baseline):
        if (REPO / p).exists():
            found.append(p)
        elif p in FLAT and (REPO / FLAT[p]).exists():
            found.append(FLAT[p])
        else:
            missing.append(p)
    return found, missing


def write_config(work: Path, target: Target, tests: list[str], timeout_multiplier: float) -> None:
    lines = ["[mutmut]", "source_paths = src", "only_mutate ="] + [f"    {f}" for f in target.files]
    lines += ["pytest_add_cli_args_test_selection ="] + [f"    {t}" for t in tests]
    lines += ["pytest_add_cli_args =", "    -q", "    -p", "    no:cacheprovider", "    -x", "    -m",
              f"    {DESELECT}", f"timeout_multiplier = {timeout_multiplier}", "use_git_change_detection = false",
              "process_isolation = forkserver", "forkserver_warmup = collect", ""]
    replace_text(work / "setup.cfg", "\n".join(lines))


def run_module(name: str, target: Target, *, explicit: list[str] | None, seconds: float, fresh: bool,
               timeout_multiplier: float, baseline: bool = False) -> dict:
    work = workdir(name, baseline)
    tests, missing = test_paths(target, explicit, baseline)
    info = {"tests": tests, "missing_tests": missing}
    if target.skip:
        return {**info, "skipped": target.skip}
    absent = [f for f in target.files if not (REPO / f).exists()]
    if absent:
        return {**info, "skipped": f"no such source file ({', '.join(absent)})"}
    if not tests:
        return {**info, "skipped": f"none of its test files exists ({', '.join(missing)})"}
    same_as_before = not baseline and tests == test_paths(target, explicit, True)[0]
    if fresh and work.is_symlink():
        work.unlink()
    if same_as_before and not work.exists() and workdir(name, True).exists():
        work.parent.mkdir(parents=True, exist_ok=True)
        work.symlink_to(workdir(name, True).resolve())  # the same tests as before: the same verdicts, run once
    elif not same_as_before and work.is_symlink():
        work.unlink()
    prepare(work, fresh and not work.is_symlink(), REPO)
    write_config(work, target, tests, timeout_multiplier)
    env = {**os.environ, "LEGALRAG_SHARED_DATA": os.environ.get("LEGALRAG_SHARED_DATA",
                                                                 str(REPO.parent / "shared" / "data"))}
    mutmut = Path(sys.executable).with_name("mutmut")
    cmd = [str(mutmut), "run", "--max-children", "1"]
    started = time.monotonic()
    log = (work / "mutmut.log").open("a", encoding="utf-8")
    stop_leftover(work)
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (work / "mutmut.pgid").write_text(str(proc.pid), encoding="utf-8")
    stopped = ""
    try:
        while proc.poll() is None:
            time.sleep(2)
            if int(time.monotonic() - started) % 20 < 2:
                keep_good_copies(work)
            if time.monotonic() - started > seconds:
                stopped = "budget"
                break
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    (work / "mutmut.pgid").unlink(missing_ok=True)
    keep_good_copies(work)
    wall = round(time.monotonic() - started, 1)
    out = {**info, "wall_s": wall, "exit": proc.returncode, "nice": os.nice(0), "fresh": fresh}
    if stopped:
        out["stopped"] = f"{stopped}: resume with the same command"
    elif proc.returncode != 0:
        tail = (work / "mutmut.log").read_text(encoding="utf-8", errors="replace")[-1500:]
        out["error"] = tail.strip().splitlines()[-1] if tail.strip() else f"mutmut exited {proc.returncode}"
    if stopped == "interrupted":
        raise KeyboardInterrupt
    return out


def workdir(name: str, baseline: bool = False) -> Path:
    return WORK / "baseline" / name if baseline else WORK / name


def stop_leftover(work: Path) -> None:
    """The mutmut of a run whose driver was killed (kill -9 leaves it running): stopped before resuming."""
    pgid_file = work / "mutmut.pgid"
    if not pgid_file.exists():
        return
    try:
        pgid = int(pgid_file.read_text(encoding="utf-8"))
        proc = Path(f"/proc/{pgid}")
        # only our mutmut, in this module's folder (the number may since belong to another process)
        if b"mutmut" not in (proc / "cmdline").read_bytes() or (proc / "cwd").resolve() != work.resolve():
            raise ProcessLookupError
        os.killpg(pgid, signal.SIGTERM)
        time.sleep(3)
        os.killpg(pgid, signal.SIGKILL)
    except (ValueError, OSError):
        pass
    pgid_file.unlink(missing_ok=True)


def verdicts(name: str, baseline: bool = False) -> dict[str, str]:
    out: dict[str, str] = {}
    for meta in metas(workdir(name, baseline)):
        try:
            codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        except (ValueError, KeyError):
            continue
        for key, code in codes.items():
            out[key] = "equivalent" if key in EQUIVALENT else STATUS.get(code, "suspicious")
    return out


def fingerprint(target: Target) -> str:
    """SHA-256 (first 16 hex) of the module's sources and test files: a recorded result whose fingerprint
    differs was measured on other code or other tests."""
    h = hashlib.sha256()
    for p in list(target.files) + list(target.tests):
        f = REPO / p if (REPO / p).exists() else REPO / FLAT.get(p, p)
        h.update(p.encode() + b"\0" + (f.read_bytes() if f.exists() else b"") + b"\0")
    return h.hexdigest()[:16]


SUMMARY_KEYS = ("mutants", "killed", "survived", "no_tests", "timeout", "equivalent", "not_checked", "not_run",
                "suspicious", "kill_rate", "survivors", "equivalent_reasons", "fingerprint", "measured_at")


def recorded(kept: dict, target: Target) -> dict:
    """A module's recorded counts, kept where its verdicts are not on this machine (a fresh checkout holds no
    ``runs/``): marked stale when its sources or tests have changed since they were measured."""
    out = {k: kept[k] for k in SUMMARY_KEYS if k in kept}
    if out.get("fingerprint") != fingerprint(target):
        out["stale"] = "its sources or tests changed since: rerun it"
    return out


def summary(name: str, baseline: bool = False) -> dict:
    v = verdicts(name, baseline)
    counts = {s: sum(x == s for x in v.values()) for s in
              ("killed", "survived", "no_tests", "timeout", "equivalent", "not_checked", "not_run", "suspicious")}
    judged = counts["killed"] + counts["survived"] + counts["no_tests"] + counts["timeout"]
    killed = counts["killed"] + counts["timeout"]  # a mutant that hangs the tests is caught
    return {"mutants": len(v), **counts, "kill_rate": round(killed / judged, 4) if judged else None,
            "survivors": sorted(k for k, s in v.items() if s in ("survived", "no_tests")),
            "equivalent_reasons": {k: EQUIVALENT[k] for k in sorted(v) if k in EQUIVALENT},
            "fingerprint": fingerprint(MODULES[name])}


RUN_KEYS = ("tests", "missing_tests", "wall_s", "exit", "stopped", "error", "skipped", "nice")


def merged_run(kept: dict, new: dict) -> dict:
    """A run's fields over the recorded ones; a resumed run (not ``--fresh``) adds its wall time to theirs, and
    a run's own outcome (stopped, error) replaces the recorded one."""
    if "wall_s" not in new:
        return {**kept, **new}
    wall = new["wall_s"]
    if not new.get("fresh") and isinstance(kept.get("wall_s"), (int, float)):
        wall = round(kept["wall_s"] + wall, 1)
    base = {k: v for k, v in kept.items() if k not in ("stopped", "error")}
    return {**base, **{k: v for k, v in new.items() if k != "fresh"}, "wall_s": wall}


def write_report(runs: dict[str, dict], command: str, baseline: bool = False) -> dict:
    old: dict = {}
    if RESULTS.exists():
        try:
            old = json.loads(RESULTS.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    def entries(key: str, is_baseline: bool) -> dict:
        out = {}
        for name, target in MODULES.items():
            old_entry = old.get(key, {}).get(name, {})
            kept = {k: v for k, v in old_entry.items() if k in RUN_KEYS}
            entry = {"files": list(target.files), **merged_run(kept, runs.get(name, {}) if is_baseline == baseline
                                                               else {})}
            if not isinstance(entry.get("skipped"), str):
                now = summary(name, is_baseline)
                # no verdicts here (a fresh checkout): the recorded counts stand, not a row of zeros
                entry.update(now if now["mutants"] or not old_entry.get("mutants") else recorded(old_entry, target))
            out[name] = entry
        return out

    modules, before = entries("modules", False), entries("before", True)
    overall, overall_before = totals(modules), totals(before)
    fields = {"tool": f"mutmut {_mutmut_version()}", "target": ">= 0.90 of the non-equivalent mutants killed",
              "modules": modules, "overall": overall, "before": before, "overall_before": overall_before,
              "commands": list({**dict.fromkeys(old.get("commands", [])), command: None}),
              "skipped": {n: m["skipped"] for n, m in modules.items() if isinstance(m.get("skipped"), str)},
              "note": "kill_rate = (killed + timed out) / (killed + timed out + survived + no tests); equivalent "
                      "and not yet checked mutants are left out",
              "page": page_rows(modules, before, overall, overall_before)}
    try:
        from legalrag.evaluation.record import write_result

        return write_result(RESULTS, None, name="mutation testing of the modules that decide what a person is told",
                            command=command,
                            machine_note="2 cores shared with other jobs (an LLM benchmark among them); each "
                                         "module's niceness is its `nice`",
                            source="docs/lab/testing.md", **fields)
    except ImportError:  # the record helper is part of the package; plain JSON without it
        replace_text(RESULTS, json.dumps({"command": command, **fields}, ensure_ascii=False, indent=1) + "\n")
        return fields


def _rate(m: dict) -> str:
    r = m.get("kill_rate")
    return "not run" if r is None else f"{100 * r:.1f}%"


def _before(m: dict, after: dict) -> str:
    """The kill rate before, where it was measured on the same mutants (a module rewritten since has others)."""
    if m.get("kill_rate") is None or m.get("mutants") != after.get("mutants"):
        return ""
    return f"; before the pinning tests {_rate(m)}"


def page_rows(modules: dict, before: dict, overall: dict, overall_before: dict) -> dict:
    """The results page's rows: the kill rate of each module that ran, before the tests that pin it and after."""
    rows = []
    for name, m in modules.items():
        if isinstance(m.get("skipped"), str):
            rows.append({"configuration": f"`{name}`", "result": f"skipped: {m['skipped']}", "needs": "CPU"})
            continue
        if m.get("kill_rate") is None:
            continue
        judged = m["killed"] + m["timeout"] + m["survived"] + m["no_tests"]
        done = "" if not m.get("not_checked") else f", {m['not_checked']} not yet checked"
        if m.get("stale"):
            done += "; measured on an earlier version of the module or its tests"
        rows.append({"configuration": f"`{name}`",
                     "result": f"{_rate(m)} killed ({m['killed'] + m['timeout']} of {judged}; "
                               f"{m['equivalent']} equivalent{done})" + _before(before.get(name, {}), m),
                     "cost": f"{m.get('wall_s', 0):.0f} s", "needs": "CPU",
                     "anchor": "bar: 90%" + (" (not measured to the end)" if m.get("not_checked") or m.get("stale")
                                             else " (met)" if m["kill_rate"] >= 0.9 else " (missed)")})
    # the modules at the bar share one row (the page stays short; each module's figures are in the lab record)
    met = [r for r in rows if r.get("anchor") == "bar: 90% (met)"]
    if len(met) > 1:
        rest = [r for r in rows if r not in met]
        names = ", ".join(f"{r['configuration'].strip('`')} {r['result'].split('%')[0]}%" for r in met)
        rows = [{"configuration": f"{len(met)} modules at the bar", "result": names, "needs": "CPU",
                 "anchor": "bar: 90% (met)"}] + rest
    rows.append({"configuration": "all modules run", "default": True,
                 "result": f"{_rate(overall)} killed ({overall['mutants']} mutants); before {_rate(overall_before)}",
                 "needs": "CPU", "anchor": "bar: 90%"})
    return {"section": "mutation", "rows": rows}


def totals(modules: dict) -> dict:
    tot = {k: sum(m.get(k, 0) for m in modules.values() if not isinstance(m.get("skipped"), str))
           for k in ("mutants", "killed", "survived", "no_tests", "timeout", "equivalent", "not_checked")}
    judged = tot["killed"] + tot["survived"] + tot["no_tests"] + tot["timeout"]
    return {**tot, "kill_rate": round((tot["killed"] + tot["timeout"]) / judged, 4) if judged else None}


def _mutmut_version() -> str:
    try:
        from importlib.metadata import version

        return version("mutmut")
    except Exception:  # noqa: BLE001 - only the label of the report
        return "3.x"


def show_survivors(name: str) -> None:
    work = WORK / name
    mutmut = Path(sys.executable).with_name("mutmut")
    for key in summary(name)["survivors"]:
        subprocess.run([str(mutmut), "show", key], cwd=work, check=False)


def try_mutant(file: str, old: str, new: str, tests: list[str]) -> int:
    """Apply one textual mutant to a copy of ``src`` and run ``tests`` against it (exit 0: it survives)."""
    source = (REPO / file).read_text(encoding="utf-8")
    if source.count(old) != 1:
        print(f"{old!r} occurs {source.count(old)} times in {file}; it must occur exactly once")
        return 2
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        copy = Path(tmp) / "src"
        shutil.copytree(REPO / "src", copy, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
        (Path(tmp) / file).write_text(source.replace(old, new), encoding="utf-8")
        (Path(tmp) / "tests").symlink_to(REPO / "tests")
        shutil.copy2(REPO / "pyproject.toml", Path(tmp) / "pyproject.toml")  # pytest's pythonpath: the copy's src
        rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", DESELECT,
                             *tests], check=False, cwd=tmp).returncode
    print("SURVIVED" if rc == 0 else f"KILLED (pytest exit {rc})")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="mutate the modules (resumable) and write the report")
    r.add_argument("--module", action="append", choices=sorted(MODULES), help="one module (repeatable)")
    r.add_argument("--tests", nargs="+", help="explicit test paths (replace the module's list)")
    r.add_argument("--budget-min", type=float, default=90.0, help="stop (resumably) after this many minutes")
    r.add_argument("--fresh", action="store_true", help="start the modules over")
    r.add_argument("--baseline", action="store_true",
                   help="only the older test files of each module (the kill rate before), in runs/mutation/baseline")
    r.add_argument("--timeout-multiplier", type=float, default=10.0,
                   help="a mutant times out after this many times its tests' CPU time (and 1 s)")
    sub.add_parser("report", help="write bench/results/mutation.json from what has run")
    s = sub.add_parser("survivors", help="show the diff of each surviving mutant")
    s.add_argument("--module", required=True, choices=sorted(MODULES))
    t = sub.add_parser("try", help="one hand-written mutant, on a copy of src")
    t.add_argument("file")
    t.add_argument("old")
    t.add_argument("new")
    t.add_argument("tests", nargs="+")
    a = ap.parse_args(argv)
    # Ctrl-C, and a kill (TERM) of a run in the background, stop it between mutants, its verdicts kept
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    line = "python tools/mutation.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if a.cmd == "try":
        return 0 if try_mutant(a.file, a.old, a.new, a.tests) else 1
    if a.cmd == "survivors":
        show_survivors(a.module)
        return 0
    runs: dict[str, dict] = {}
    if a.cmd == "run":
        deadline = time.monotonic() + a.budget_min * 60
        try:
            for name in a.module or list(MODULES):
                left = deadline - time.monotonic()
                if left <= 30:
                    runs[name] = {"stopped": "budget spent before it started: resume with the same command"}
                    continue
                print(f"{name}: mutating ({left / 60:.0f} min of budget left)", flush=True)
                runs[name] = run_module(name, MODULES[name], explicit=a.tests, seconds=left, fresh=a.fresh,
                                        timeout_multiplier=a.timeout_multiplier, baseline=a.baseline)
                print(f"{name}: {json.dumps({**runs[name], **summary(name, a.baseline), 'survivors': None})}",
                      flush=True)
        except KeyboardInterrupt:
            print("interrupted: the verdicts so far are kept; run again to resume")
    report = write_report(runs, line, baseline=getattr(a, "baseline", False))
    for name, m in report["before" if getattr(a, "baseline", False) else "modules"].items():
        print(f"{name:24s} {m.get('skipped') or ('kill rate ' + str(m.get('kill_rate')) + ' of ' + str(m.get('mutants')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())