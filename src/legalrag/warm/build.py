"""Which legalrag a process runs: the version and a digest of the package's source files.

A warm server started before the code changed answers with the old code; comparing builds (not only the
version string, which stays the same between releases) tells a client that the server is stale. The digest
is over each file's path, size and modification time, not its bytes: a client computes it on every `ask`,
and reading every file cost 0.16 s on a busy machine where a stat of each costs a few milliseconds.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
SUFFIXES = (".py", ".md", ".j2")  # code and prompt templates: what changes an answer
SKIP = {"__pycache__", "data"}  # bytecode; shipped data and model parts (not code)


@lru_cache(maxsize=1)
def build_id() -> str:
    """``VERSION+DIGEST``: the version and 12 hex digits of SHA-1 over every source file's path, size and
    modification time (computed once per process)."""
    from legalrag import __version__

    digest = hashlib.sha1()
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in sorted(n for n in names if n.endswith(SUFFIXES)):
            st = os.stat(os.path.join(folder, name))
            rel = os.path.relpath(os.path.join(folder, name), PACKAGE)
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"
