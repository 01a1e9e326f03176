"""Counting for the property-based fuzz tests: how many examples each target was given.

``LEGALRAG_FUZZ_EXAMPLES`` sets hypothesis's ``max_examples`` (default 150, so the suite stays fast);
``LEGALRAG_FUZZ_REPORT=FILE`` adds this run's counts per target to FILE (JSON) when the process exits, e.g.::

    LEGALRAG_FUZZ_EXAMPLES=3000 LEGALRAG_FUZZ_REPORT=fuzz.json pytest tests/test_fuzz_*.py -q
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("LEGALRAG_FUZZ_EXAMPLES", "150"))
COUNTS: Counter[str] = Counter()

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


def tried(target: str) -> None:
    COUNTS[target] += 1


def _report() -> None:
    path = os.environ.get("LEGALRAG_FUZZ_REPORT")
    if not path or not COUNTS:
        return
    p = Path(path)
    old = json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
    for k, v in COUNTS.items():
        old[k] = old.get(k, 0) + v
    p.write_text(json.dumps(old, ensure_ascii=False, indent=2, sort_keys=True), encoding="utf-8")


atexit.register(_report)
