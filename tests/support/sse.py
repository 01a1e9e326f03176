"""The named events of a server-sent-event stream, for tests of the streaming routes."""

from __future__ import annotations

import json


def events(text: str) -> list[tuple[str, dict]]:
    """(event, data) of each event of ``text``, in order; SSE comment lines (``: wait``, the keep-alive sent while
    a stage runs long) carry no field and are left out."""
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out
