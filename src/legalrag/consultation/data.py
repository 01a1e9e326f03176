"""The LexRAG consultation formats: whole dialogues, per-turn files and the article library.

- ``dataset.json``: a list of dialogues, each ``{"id", "conversation": [{"user", "assistant", "article": [names],
  "keywords": [...]}, ...]}`` (five turns in LexRAG).
- ``turn_N.json``: a list of items ``{"id", "history": [{"user", "assistant"}, ...], "current_question",
  "reference", "keywords", "article": [names], "article_context"}``; turn N has N - 1 history turns.
- ``law_library.jsonl``: one article a line, ``{"name", "content"}`` (an ``id`` is used when present).

Both dialogue forms load into the same :class:`ConsultTurn` rows. Gold articles are names such as
``《中华人民共和国民法典》第四百二十八条``; :func:`resolve_gold` maps them to the documents of whatever statute
index is given, through the citation resolver, and returns every name that does not resolve with its reason
(they are counted and reported; a turn whose gold resolves to nothing is left out of retrieval averages).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from legalrag.errors import InputError
from legalrag.types import Document, Turn

TURN_FILE = re.compile(r"^turn_(\d+)\.json$")


@dataclass(frozen=True)
class ConsultTurn:
    """One turn to evaluate: the dialogue before it, the question, the reference answer and the gold."""

    dialogue_id: str
    turn: int  # 1-based position in the dialogue
    history: tuple[Turn, ...]  # earlier turns, user and assistant alternating
    question: str
    reference: str = ""
    keywords: tuple[str, ...] = ()
    articles: tuple[str, ...] = ()  # gold article names as written in the data
    article_context: str = ""
    gold_ids: tuple[str, ...] = ()  # set by resolve_gold
    unresolved: tuple[str, ...] = ()  # set by resolve_gold

    @property
    def id(self) -> str:
        return f"{self.dialogue_id}-t{self.turn}"

    @property
    def turns(self) -> list[Turn]:
        """The dialogue up to and including this question, as the conversation processors take it."""
        return [*self.history, Turn("user", self.question)]


@dataclass(frozen=True)
class GoldReport:
    """What resolving the gold names found: how many resolved, and each name that did not, with why."""

    names: int = 0
    resolved: int = 0
    unresolved: dict[str, str] = field(default_factory=dict)  # name -> reason
    turns_without_gold: tuple[str, ...] = ()  # turn ids whose gold resolved to nothing

    def to_dict(self) -> dict[str, Any]:
        return {"names": self.names, "resolved": self.resolved, "unresolved_count": len(self.unresolved),
                "unresolved": self.unresolved, "turns_without_gold": list(self.turns_without_gold)}


# -- reading ----------------------------------------------------------------------------------------------

def _text(value: Any, where: str, path: Path, *, required: bool) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InputError(f"{where} must be a string, got {type(value).__name__}", path=str(path))
    text = value.strip()
    if required and not text:
        raise InputError(f"{where} is empty; every turn needs a question", path=str(path))
    return text


def _names(value: Any, where: str, path: Path) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where} must be a list of strings", path=str(path))
    return tuple(v.strip() for v in value if v.strip())


def _context(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value or "")


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise InputError("file not found; check the path", path=str(path))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                         path=str(path)) from None


def load_dialogues(path: str | Path, turns: int | None = 5) -> list[ConsultTurn]:
    """Every turn of every dialogue of a ``dataset.json``. ``turns`` is the number each dialogue must have
    (LexRAG: 5); a dialogue with fewer is an InputError naming it (``None`` accepts any length)."""
    p = Path(path)
    data = _read_json(p)
    if not isinstance(data, list):
        raise InputError("expected a list of dialogues (LexRAG dataset.json)", path=str(p))
    out: list[ConsultTurn] = []
    seen: set[str] = set()
    for i, dialogue in enumerate(data):
        if not isinstance(dialogue, dict) or not isinstance(dialogue.get("conversation"), list):
            raise InputError(f"dialogue {i} has no 'conversation' list", path=str(p))
        did = str(dialogue.get("id", i)).strip().replace(" ", "_")
        if did in seen:
            raise InputError(f"dialogue id {did!r} appears twice; ids must be unique", path=str(p))
        seen.add(did)
        conv = dialogue["conversation"]
        if turns is not None and len(conv) < turns:
            raise InputError(f"dialogue {did!r} has {len(conv)} turns, fewer than the {turns} stated; complete it, "
                             f"drop it, or pass turns=None (--turns 0) to accept shorter dialogues", path=str(p))
        history: list[Turn] = []
        for t, item in enumerate(conv, 1):
            where = f"dialogue {did!r} turn {t}"
            if not isinstance(item, dict):
                raise InputError(f"{where} is not an object", path=str(p))
            question = _text(item.get("user"), f"{where} field 'user'", p, required=True)
            answer = _text(item.get("assistant"), f"{where} field 'assistant'", p, required=False)
            out.append(ConsultTurn(did, t, tuple(history), question, answer,
                                   _names(item.get("keywords"), f"{where} field 'keywords'", p),
                                   _names(item.get("article", item.get("articles")), f"{where} field 'article'", p),
                                   _context(item.get("article_context"))))
            history += [Turn("user", question), Turn("assistant", answer)]
    return out


def _history(value: Any, where: str, path: Path) -> tuple[Turn, ...]:
    if value in (None, ""):
        return ()
    if not isinstance(value, list):
        raise InputError(f"{where} 'history' must be a list of turns", path=str(path))
    turns: list[Turn] = []
    for j, h in enumerate(value, 1):
        if not isinstance(h, dict):
            raise InputError(f"{where} history entry {j} is not an object", path=str(path))
        if "role" in h:  # {"role", "content"} messages
            role = str(h["role"])
            if role not in ("user", "assistant"):
                raise InputError(f"{where} history entry {j} has role {role!r}; use user or assistant", path=str(path))
            turns.append(Turn(role, _text(h.get("content"), f"{where} history entry {j}", path, required=False)))
        else:  # {"user", "assistant"} pairs, as LexRAG writes them
            turns.append(Turn("user", _text(h.get("user"), f"{where} history entry {j} 'user'", path, required=True)))
            turns.append(Turn("assistant", _text(h.get("assistant"), f"{where} history entry {j} 'assistant'",
                                                 path, required=False)))
    return tuple(turns)


def load_turn_file(path: str | Path, turn: int | None = None) -> list[ConsultTurn]:
    """The items of one ``turn_N.json``; N comes from the file name (or ``turn``). An item whose history is
    shorter than N - 1 turns is an InputError naming it."""
    p = Path(path)
    if turn is None:
        m = TURN_FILE.match(p.name)
        turn = int(m.group(1)) if m else None
    data = _read_json(p)
    if not isinstance(data, list):
        raise InputError("expected a list of items (LexRAG turn_N.json)", path=str(p))
    out = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise InputError(f"item {i} is not an object", path=str(p))
        did = str(item.get("id", i)).strip().replace(" ", "_")
        where = f"item {did!r}"
        history = _history(item.get("history"), where, p)
        asked = sum(1 for h in history if h.role == "user")
        n = turn if turn is not None else asked + 1
        if asked < n - 1:
            raise InputError(f"{where} has {asked} history turns, fewer than the {n - 1} a turn_{n} item states; "
                             f"complete its history or move it to turn_{asked + 1}.json", path=str(p))
        question = _text(item.get("current_question"), f"{where} field 'current_question'", p, required=True)
        out.append(ConsultTurn(did, n, history, question,
                               _text(item.get("reference"), f"{where} field 'reference'", p, required=False),
                               _names(item.get("keywords"), f"{where} field 'keywords'", p),
                               _names(item.get("article", item.get("articles")), f"{where} field 'article'", p),
                               _context(item.get("article_context"))))
    return out


def load_consultations(path: str | Path, turns: int | None = 5) -> list[ConsultTurn]:
    """A ``dataset.json``, one ``turn_N.json``, or a directory of ``turn_N.json`` files (or a dataset.json)."""
    p = Path(path)
    if p.is_dir():
        files = sorted((f for f in p.iterdir() if TURN_FILE.match(f.name)),
                       key=lambda f: int(TURN_FILE.match(f.name).group(1)))
        if files:
            rows = [t for f in files for t in load_turn_file(f)]
            return sorted(rows, key=lambda t: (t.turn, t.dialogue_id))
        if (p / "dataset.json").is_file():
            return load_dialogues(p / "dataset.json", turns)
        raise InputError("no turn_N.json files and no dataset.json in this directory", path=str(p))
    if TURN_FILE.match(p.name):
        return load_turn_file(p)
    return load_dialogues(p, turns)


def load_law_library(path: str | Path) -> list[Document]:
    """``law_library.jsonl`` (``name`` + ``content``) as statute documents (law and article parsed from the name)."""
    from legalrag.corpora.statutes import statute_document
    from legalrag.io import read_jsonl

    docs, seen = [], set()
    for lineno, rec in read_jsonl(path):
        name = str(rec.get("name") or "").strip()
        text = rec.get("content", rec.get("text"))
        if not name or not isinstance(text, str):
            raise InputError("each line needs 'name' and 'content'", path=str(path), line=lineno)
        doc_id = str(rec.get("id", name))
        if doc_id in seen:
            raise InputError(f"id {doc_id!r} appears twice", path=str(path), line=lineno)
        seen.add(doc_id)
        docs.append(statute_document(doc_id, text, name.replace("《", "").replace("》", ""), source=f"{path}:{lineno}"))
    if not docs:
        raise InputError("the law library has no articles", path=str(path))
    return docs


# -- gold -------------------------------------------------------------------------------------------------

def resolve_gold(turns: Sequence[ConsultTurn], resolver: Any) -> tuple[list[ConsultTurn], GoldReport]:
    """Set ``gold_ids`` and ``unresolved`` of every turn through ``resolver`` (a ``CitationResolver`` or the
    index's documents). Names that do not resolve are kept on the turn and in the report, with the reason."""
    from legalrag.citations import CitationResolver, parse_citation

    if not isinstance(resolver, CitationResolver):
        resolver = CitationResolver.from_documents(resolver)
    cache: dict[str, tuple[str | None, str]] = {}

    def lookup(name: str) -> tuple[str | None, str]:
        if name not in cache:
            try:
                citation = parse_citation(name)
            except (ValueError, InputError) as exc:
                cache[name] = (None, f"not an article citation: {exc}")
            else:
                r = resolver.lookup(citation) if citation is not None else None
                if r is None:
                    cache[name] = (None, "not an article citation")
                else:
                    cache[name] = (r.document.id, "") if r.ok else (None, r.message)
        return cache[name]

    out, unresolved, empty = [], {}, []
    for t in turns:
        ids, missing = [], []
        for name in t.articles:
            doc_id, reason = lookup(name)
            if doc_id is None:
                missing.append(name)
                unresolved[name] = reason
            elif doc_id not in ids:
                ids.append(doc_id)
        if not ids:
            empty.append(t.id)
        out.append(replace(t, gold_ids=tuple(ids), unresolved=tuple(missing)))
    names = {n for t in turns for n in t.articles}
    return out, GoldReport(len(names), len(names) - len(unresolved), unresolved, tuple(empty))


# -- writing ----------------------------------------------------------------------------------------------

def turn_items(turns: Iterable[ConsultTurn]) -> dict[int, list[dict[str, Any]]]:
    """The per-turn form: turn number -> items as LexRAG's ``turn_N.json`` holds them."""
    files: dict[int, list[dict[str, Any]]] = {}
    for t in turns:
        pairs = []
        for i in range(0, len(t.history) - 1, 2):
            pairs.append({"user": t.history[i].content, "assistant": t.history[i + 1].content})
        files.setdefault(t.turn, []).append({
            "id": t.dialogue_id, "history": pairs, "current_question": t.question, "reference": t.reference,
            "keywords": list(t.keywords), "article": list(t.articles), "article_context": t.article_context})
    return files


def write_turn_files(turns: Iterable[ConsultTurn], out_dir: str | Path) -> list[Path]:
    """Write ``turn_N.json`` files (atomically) and return their paths."""
    from legalrag.io import atomic_write_text

    paths = []
    for n, items in sorted(turn_items(turns).items()):
        path = Path(out_dir) / f"turn_{n}.json"
        atomic_write_text(path, json.dumps(items, ensure_ascii=False, indent=1) + "\n")
        paths.append(path)
    return paths


def sample_turns(turns: Sequence[ConsultTurn], n: int) -> list[ConsultTurn]:
    """``n`` turns spread over dialogues and turn positions: dialogue i (in order) gives its turn
    ((i mod L) + 1), L the longest dialogue, then a second pass takes the next position, and so on."""
    by_dialogue: dict[str, dict[int, ConsultTurn]] = {}
    for t in turns:
        by_dialogue.setdefault(t.dialogue_id, {})[t.turn] = t
    length = max((max(d) for d in by_dialogue.values()), default=0)
    picked: list[ConsultTurn] = []
    for offset in range(length):
        for i, dialogue in enumerate(by_dialogue.values()):
            t = dialogue.get((i + offset) % length + 1)
            if t is not None and len(picked) < n:
                picked.append(t)
    return picked
