"""Writing the settings file (`legalrag config set` / `unset`): one key at a time, with the file's comments, order
and layout kept (tomlkit), a path stored absolute, and the file written to a temp path and renamed into place.
Reading, checking and the precedence of values are :mod:`legalrag.settings`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legalrag.settings import absolute, convert_value, key_named, read_file


def _read_document(path: Path):
    """The file as a tomlkit document (comments, order and layout kept); checked as :func:`read_file` does."""
    import tomlkit

    read_file(path)  # the same checks and messages as a read
    return tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()


def _write_document(path: Path, doc) -> None:
    import tomlkit

    from legalrag.io import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, tomlkit.dumps(doc))


def _scope(doc, profile: str | None, create: bool):
    """The table that holds top-level keys (the document) or a profile's (``[profiles.NAME]``)."""
    import tomlkit

    if not profile:
        return doc
    if "profiles" not in doc:
        if not create:
            return None
        doc.add("profiles", tomlkit.table(is_super_table=True))
    profiles = doc["profiles"]
    if profile not in profiles:
        if not create:
            return None
        profiles.add(profile, tomlkit.table(is_super_table=True))
    return profiles[profile]


def set_value(path: Path, name: str, value: str, profile: str | None = None, *, cwd: Path | None = None) -> Any:
    """Write ``name = value`` (converted to the key's type; a path made absolute, see :func:`absolute`) into the
    file, under ``profile`` when given. The file's comments, order and layout are kept (tomlkit); it is
    written to a temp file and renamed into place."""
    import tomlkit

    key = key_named(name)
    typed = absolute(key, convert_value(key, value), cwd)
    doc = _read_document(path)
    scope = _scope(doc, profile, create=True)
    if key.table not in scope:
        scope.add(key.table, tomlkit.table())
    scope[key.table][key.field] = typed
    _write_document(path, doc)
    return typed


def unset_value(path: Path, name: str, profile: str | None = None) -> bool:
    """Remove ``name`` from the file (or from ``profile``), keeping everything else as written; True when it
    was there."""
    key = key_named(name)
    doc = _read_document(path)
    scope = _scope(doc, profile, create=False)
    if scope is None or key.table not in scope or key.field not in scope[key.table]:
        return False
    del scope[key.table][key.field]
    if not scope[key.table] and not scope[key.table].as_string().strip():  # empty, and no comment left in it
        del scope[key.table]
    _write_document(path, doc)
    return True
