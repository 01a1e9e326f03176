"""Small helpers shared by command modules."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def root(ctx: Any):
    """The composition root handed to the CLI (``app(obj=Root(...))``), else the default one."""
    from legalrag.wiring import Root

    obj = getattr(ctx, "obj", None)
    return obj if isinstance(obj, Root) else Root()
