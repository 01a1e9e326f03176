"""Where the repository and the shared data are, for tests and their helpers."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data"))
