"""Lazy imports of optional extras with an actionable error."""

from __future__ import annotations

import importlib
from types import ModuleType

from legalrag.errors import MissingDependencyError


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise a MissingDependencyError that says which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{module!r} is not installed; it is needed for this feature. "
            f"Install it with: pip install 'legalrag[{extra}]'"
        ) from exc
