"""Small helpers shared by command modules."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
