"""Statute corpora from JSONL, in the shapes found in the wild, with a field mapping for anything else.

Known shapes:
- STARD: ``{"id": int, "name": "中华人民共和国民法典第一条", "content": "..."}``
- JuDGE: ``{"text_id": "1", "text": "...", "name": "中华人民共和国刑法第一条"}``

Every document gets ``metadata["law"]`` (the law title) and, when the name ends in an article marker,
``metadata["article"]`` (e.g. "120-1" for 第一百二十条之一) and ``metadata["article_label"]`` (第一百二十条之一).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from legalrag.errors import InputError
from legalrag.io import read_jsonl
from legalrag.numerals import NUMERAL_CHARS, to_int
from legalrag.types import Document, DocumentKind

_ARTICLE_AT_END = re.compile(rf"第([{NUMERAL_CHARS}0-9]+)条(?:之([{NUMERAL_CHARS}0-9]+))?$")


@dataclass(frozen=True)
class FieldMap:
    """Which JSON fields hold the id, the text and the name (title) of each record."""

    id: str = "id"
    text: str = "content"
    name: str = "name"

    @classmethod
    def parse(cls, spec: str) -> "FieldMap":
        """Parse ``"id=text_id,text=text,name=name"`` as given on the command line."""
        values = {}
        for part in spec.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in ("id", "text", "name") or not value.strip():
                raise InputError(f"bad field mapping {spec!r}: use id=FIELD,text=FIELD,name=FIELD")
            values[key] = value.strip()
        return cls(**values)


STARD = FieldMap("id", "content", "name")
JUDGE = FieldMap("text_id", "text", "name")


def detect_fields(record: dict) -> FieldMap:
    for fm in (STARD, JUDGE):
        if fm.id in record and fm.text in record:
            return fm
    raise InputError(
        f"unknown corpus shape (fields: {sorted(record)}); pass a field mapping such as "
        "-o fields=id=ID_FIELD,text=TEXT_FIELD,name=NAME_FIELD (`index build`)"
    )


def split_article_name(name: str) -> tuple[str, str | None, str | None]:
    """``"中华人民共和国刑法第一百二十条之一"`` -> ``("中华人民共和国刑法", "120-1", "第一百二十条之一")``."""
    m = _ARTICLE_AT_END.search(name)
    if not m:
        return name, None, None
    try:
        number = str(to_int(m.group(1)))
        if m.group(2):
            number += f"-{to_int(m.group(2))}"
    except ValueError:
        return name, None, None
    return name[: m.start()], number, m.group(0)


def statute_document(doc_id: str, text: str, name: str, source: str = "") -> Document:
    law, article, label = split_article_name(name)
    meta = {"law": law}
    if article is not None:
        meta["article"] = article
        meta["article_label"] = label
    return Document(id=doc_id, text=text.strip(), title=name, kind=DocumentKind.STATUTE, source=source, metadata=meta)


def iter_statutes(path: str | Path, fields: FieldMap | None = None, unique_ids: bool = True) -> Iterator[Document]:
    """Yield statute documents; raise InputError naming file, line and field for bad records, repeated ids or
    repeated article names (``unique_ids=False``: the caller checks them, e.g. a streamed index build that keeps
    no set of them)."""
    seen: set[str] = set()
    names: dict[str, int] = {}
    fm = fields
    for lineno, rec in read_jsonl(path):
        if fm is None:
            try:
                fm = detect_fields(rec)
            except InputError as exc:
                raise InputError(str(exc), path=str(path), line=lineno) from None
        for key in (fm.id, fm.text):
            if key not in rec or rec[key] is None:
                raise InputError("missing field; every record needs an id and a text", path=str(path),
                                 line=lineno, field=key)
            if not isinstance(rec[key], (str, int)) or isinstance(rec[key], bool):
                raise InputError(f"expected a string, got {type(rec[key]).__name__}", path=str(path),
                                 line=lineno, field=key)
        doc_id = str(rec[fm.id])
        if unique_ids and doc_id in seen:
            raise InputError(f"id {doc_id!r} appears twice; ids must be unique", path=str(path), line=lineno,
                             field=fm.id)
        if unique_ids:
            seen.add(doc_id)
        name = str(rec.get(fm.name) or "")
        if unique_ids and name:
            if name in names:
                raise InputError(f"article name {name!r} appears twice (lines {names[name]} and {lineno}); citations "
                                 "are resolved by name, so give each article its own name (e.g. "
                                 "中华人民共和国民法典第六百八十条)", path=str(path), line=lineno, field=fm.name)
            names[name] = lineno
        yield statute_document(doc_id, str(rec[fm.text]), name, source=f"{path}:{lineno}")


def load_statutes(path: str | Path, fields: FieldMap | None = None) -> list[Document]:
    docs = list(iter_statutes(path, fields))
    if not docs:
        raise InputError("the corpus has no records", path=str(path))
    return docs
