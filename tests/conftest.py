"""Shared fixtures. Real benchmark data lives in ../shared/data; tests that need it skip when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = REPO / "tests" / "data"
SHARED_DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """Path to ../shared/data (or $LEGALRAG_SHARED_DATA); skip the test with a reason when it is missing."""
    if not (SHARED_DATA / "stard").is_dir() or not (SHARED_DATA / "judge").is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA}; set LEGALRAG_SHARED_DATA to the folder "
                    "that holds stard/ and judge/")
    return SHARED_DATA


@pytest.fixture
def test_data() -> Path:
    return TEST_DATA
