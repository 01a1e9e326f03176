"""legalrag: legal retrieval-augmented generation.

``legalrag.open()`` returns the Python front door (:mod:`legalrag.api`): ``lr.search``, ``lr.ask``, ``lr.check``,
``lr.cite``, ``lr.draft`` and ``lr.chat``. Importing the package is cheap: no model, index, HTTP client or heavy
library is loaded here, and :mod:`legalrag.api` itself is imported only when ``legalrag.open`` (or
``legalrag.Legalrag`` / ``legalrag.Chat``) is first asked for.
"""

from __future__ import annotations

from typing import Any

from legalrag.types import (
    Answer,
    Citation,
    Document,
    DocumentKind,
    Hit,
    Query,
    Step,
    Turn,
)

__version__ = "0.1.0"

_FRONT_DOOR = ("Chat", "Legalrag", "open")  # the names of legalrag.api reached through the package

# not "open": `from legalrag import *` must not shadow the built-in open
__all__ = ["Answer", "Chat", "Citation", "Document", "DocumentKind", "Hit", "Legalrag", "Query", "Step", "Turn",
           "__version__"]


def __getattr__(name: str) -> Any:
    """``legalrag.open`` and the classes it returns, imported on first use (the front door sits above every
    other layer, so the package reaches it lazily)."""
    if name in _FRONT_DOOR:
        from legalrag import api

        return getattr(api, name)
    raise AttributeError(f"module 'legalrag' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FRONT_DOOR))
