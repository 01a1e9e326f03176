"""Query files for retrieval evaluation.

JSONL, one query per line, in the shape of STARD's ``train.jsonl``: ``query_id``, ``query`` and either
``gold_ids`` (corpus document ids) or ``gold_names`` (article names such as 中华人民共和国民法典第九百六十七条,
resolved through the corpus by title). Other shapes map their fields, e.g. JuDGE's ``test.json``:
``QueryFields.parse("query_id=text_id,query=text,gold_ids=la")``.

Every gold id or name must resolve to a corpus document: an unknown one is an :class:`InputError` naming
the file, line and field (a silent drop would inflate the scores).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Sequence

from legalrag.errors import InputError
from legalrag.io import read_jsonl
from legalrag.types import Document, Query


@dataclass(frozen=True)
class QueryFields:
    query_id: str = "query_id"
    query: str = "query"
    gold_ids: str = "gold_ids"
    gold_names: str = "gold_names"

    @classmethod
    def parse(cls, spec: str) -> "QueryFields":
        """``"query_id=text_id,query=text,gold_ids=la"``: the fields not named keep their defaults."""
        names = {f.name for f in fields(cls)}
        values = {}
        for part in spec.split(","):
            key, sep, value = part.partition("=")
            if not sep or key.strip() not in names or not value.strip():
                raise InputError(f"bad query field mapping {spec!r}: use e.g. query_id=ID,query=TEXT,gold_ids=GOLD "
                                 f"(keys: {', '.join(sorted(names))})")
            values[key.strip()] = value.strip()
        return cls(**values)


def _normalise_name(name: str) -> str:
    return "".join(ch for ch in name if ch not in "《》〈〉 \u3000\t")


class _CorpusLookup:
    def __init__(self, documents: Sequence[Document]):
        self.ids = {d.id for d in documents}
        self.by_name: dict[str, str] = {}
        for d in documents:
            if d.title:
                self.by_name.setdefault(_normalise_name(d.title), d.id)
        self.size = len(documents)


def load_queries(path: str | Path, corpus: Any = None, query_fields: QueryFields | None = None,
                 require_gold: bool = True) -> list[Query]:
    """Read queries; ``corpus`` (an Index or a sequence of Documents) checks gold ids and resolves gold names.

    Without a corpus, gold ids are taken as given and gold names cannot be used.
    """
    fm = query_fields or QueryFields()
    docs = getattr(corpus, "documents", corpus)
    lookup = _CorpusLookup(docs) if docs is not None else None
    out: list[Query] = []
    seen: set[str] = set()
    for lineno, rec in read_jsonl(path):
        def fail(msg: str, field: str) -> InputError:
            return InputError(msg, path=str(path), line=lineno, field=field)

        text = rec.get(fm.query)
        if not isinstance(text, str) or not text.strip():
            raise fail("missing or empty query text", fm.query)
        qid = str(rec[fm.query_id]) if rec.get(fm.query_id) is not None else str(lineno)
        if qid in seen:
            raise fail(f"query id {qid!r} appears twice; ids must be unique", fm.query_id)
        seen.add(qid)
        gold: list[str] = []
        if rec.get(fm.gold_ids) is not None:
            raw = rec[fm.gold_ids]
            if not isinstance(raw, list):
                raise fail("expected a list of document ids", fm.gold_ids)
            gold = [str(x) for x in raw]
            if lookup is not None:
                for g in gold:
                    if g not in lookup.ids:
                        raise fail(f"gold id {g!r} is not in the corpus ({lookup.size} documents); check that the "
                                   "query file belongs to this corpus/index", fm.gold_ids)
        elif rec.get(fm.gold_names) is not None:
            raw = rec[fm.gold_names]
            if not isinstance(raw, list):
                raise fail("expected a list of article names", fm.gold_names)
            if lookup is None:
                raise fail("gold names need a corpus to resolve them; pass the index", fm.gold_names)
            for name in raw:
                doc_id = lookup.by_name.get(_normalise_name(str(name)))
                if doc_id is None:
                    raise fail(f"gold name {name!r} matches no document title in the corpus; check the name or "
                               "give gold_ids instead", fm.gold_names)
                gold.append(doc_id)
        if require_gold and not gold:
            raise fail(f"no gold documents (neither {fm.gold_ids!r} nor {fm.gold_names!r} is set)", fm.gold_ids)
        out.append(Query(text=text, id=qid, gold_ids=tuple(dict.fromkeys(gold))))
    if not out:
        raise InputError("the query file has no queries", path=str(path))
    return out
