"""Rebuild the shipped charge catalogue (src/legalrag/data/judge/charges.tsv) from the charge-name rules.

    python tools/make_charge_table.py [--rules $LEGALRAG_DATA/laws-2025/司法解释]
                                      [--law $LEGALRAG_DATA/laws-2025/刑法/刑法.md] [--check]

Each row holds the charge, its articles and paragraphs, the rule that named it, its former names and the law
text of its paragraphs (from the consolidated Criminal Law).

``--check`` compares the built table with the shipped one and exits 1 when they differ.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from legalrag.judgment.charges import EXPECTED_COUNT, build_catalogue, catalogue_text, with_texts, write_catalogue

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "src" / "legalrag" / "data" / "judge" / "charges.tsv"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=Path,
                    default=Path(os.environ.get("LEGALRAG_DATA", REPO.parent / "shared" / "data")) / "laws-2025" / "司法解释")
    ap.add_argument("--law", type=Path, default=None)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--vectors", action="store_true", help="also write the judge-e5 vectors of the charge texts")
    a = ap.parse_args()
    charges = with_texts(build_catalogue(a.rules), a.law or a.rules.parent / "刑法" / "刑法.md")
    if len(charges) != EXPECTED_COUNT:
        print(f"built {len(charges)} charges, expected {EXPECTED_COUNT}", file=sys.stderr)
        return 1
    if a.check:
        same = TABLE.is_file() and TABLE.read_text(encoding="utf-8") == catalogue_text(charges)
        print("up to date" if same else f"{TABLE} differs from the rules' table")
        return 0 if same else 1
    write_catalogue(charges, TABLE)
    TABLE.chmod(0o644)
    print(f"{len(charges)} charges written to {TABLE}")
    if a.vectors:
        from legalrag.judgment.charges import load_catalogue
        from legalrag.judgment.law_candidates import LawCandidates
        from legalrag.wiring import make_encoder

        load_catalogue.cache_clear()
        path = LawCandidates(make_encoder("judge-e5")).save_vectors()
        path.chmod(0o644)
        print(f"vectors written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
