"""The LexRAG consultation formats: whole dialogues, per-turn items and the article library.

- dialogues (LexRAG ``dataset.json``): ``{"id", "conversation": [{"user", "assistant", "article": [names],
  "keywords": [...]}, ...]}`` (five turns in LexRAG).
- per-turn items (LexRAG ``turn_N.json``): ``{"id", "history": [{"user", "assistant"}, ...], "current_question",
  "reference", "keywords", "article": [names], "article_context"}``; turn N has N - 1 history turns.
- ``law_library.jsonl``: one article a line, ``{"name", "content"}`` (an ``id`` is used when present).

Either form may be one JSON array or JSON Lines (one dialogue or item a line), under any file name: the form
is read from the records themselves (``conversation`` or ``current_question``), or stated with ``fmt``.
Both load into the same :class:`ConsultTurn` rows. ``article_context`` may be LexRAG's list of
``{name: text}`` (kept per name, so :mod:`legalrag.evaluation.lexrag.gold` can compare it with the resolved article)
or plain text. Gold names such as ``《中华人民共和国民法典》第四百二十八条`` are resolved by
:func:`legalrag.evaluation.lexrag.gold.resolve_gold`.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from legalrag.errors import InputError
from legalrag.types import Document, Turn

TURN_FILE = re.compile(r"^turn_(\d+)\.jsonl?$")
SHAPES = ("dialogues {\"id\", \"conversation\": [{\"user\", \"assistant\", \"article\": [...]}, ...]} (LexRAG "
          "dataset.json) or per-turn items {\"id\", \"history\", \"current_question\", \"article\": [...]} (LexRAG "
          "turn_N.json), as one JSON array or as JSON Lines (one record a line)")


class DataFormat(str, enum.Enum):
    """What a consultation file holds."""

    AUTO = "auto"  # read from the records: 'conversation' -> dialogues, 'current_question' -> turns
    DIALOGUES = "dialogues"
    TURNS = "turns"


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
    article_context: str = ""  # the gold articles' text as the data gives it, joined
    gold_ids: tuple[str, ...] = ()  # set by resolve_gold
    unresolved: tuple[str, ...] = ()  # set by resolve_gold
    article_texts: tuple[tuple[str, str], ...] = ()  # (gold name, its text) where the data names them

    @property
    def id(self) -> str:
        return f"{self.dialogue_id}-t{self.turn}"

    @property
    def turns(self) -> list[Turn]:
        """The dialogue up to and including this question, as the conversation processors take it."""
        return [*self.history, Turn("user", self.question)]


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


def _unescape(text: str) -> str:
    # LexRAG's article_context carries escaped line breaks ("\\n") inside its strings.
    return text.replace("\\n", "\n").strip()


def _context(value: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(joined text, (name, text) pairs): LexRAG writes a list of ``{name: text}``; plain text has no names."""
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        pairs, plain = [], []
        for v in value:
            if isinstance(v, dict):
                pairs += [(str(k).strip(), _unescape(str(t))) for k, t in v.items()]
            elif v:
                plain.append(_unescape(str(v)))
        return "\n".join([t for _, t in pairs] + plain), tuple(pairs)
    return _unescape(str(value or "")), ()


def read_records(path: str | Path) -> list[tuple[int | None, dict[str, Any]]]:
    """The records of a consultation file: (line number for JSON Lines else None, record). One JSON array
    (or one object), or JSON Lines; anything else is an InputError that names the shapes read."""
    from legalrag.io import read_jsonl

    p = Path(path)
    if not p.is_file():
        raise InputError("file not found; check the path" if not p.exists() else "expected a file", path=str(p))
    text = p.read_text(encoding="utf-8-sig")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data" and not p.suffix == ".jsonl":
            raise InputError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); expected "
                             f"{SHAPES}", path=str(p)) from None
        return list(read_jsonl(p))  # JSON Lines: a bad line is named by read_jsonl
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(f"holds a JSON {type(data).__name__}; expected {SHAPES}", path=str(p))
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise InputError(f"record {i} is a {type(rec).__name__}, not an object; expected {SHAPES}", path=str(p))
    return [(None, rec) for rec in data]


def _kind(rec: dict[str, Any]) -> DataFormat | None:
    if isinstance(rec.get("conversation"), list):
        return DataFormat.DIALOGUES
    if "current_question" in rec:
        return DataFormat.TURNS
    return None


def detect_format(records: Sequence[tuple[int | None, dict[str, Any]]], path: Path,
                  fmt: DataFormat | str = DataFormat.AUTO) -> DataFormat:
    """The form every record has; a record of neither form, or of the other form than ``fmt`` states,
    is an InputError naming it and the shapes read."""
    fmt = DataFormat(fmt)
    if not records:
        raise InputError(f"holds no records; expected {SHAPES}", path=str(path))
    found = fmt if fmt is not DataFormat.AUTO else _kind(records[0][1])
    for i, (line, rec) in enumerate(records):
        kind = _kind(rec)
        where = f"line {line}" if line is not None else f"record {i}"
        if kind is None:
            raise InputError(f"{where} has neither a 'conversation' list nor a 'current_question' (keys: "
                             f"{', '.join(sorted(rec)) or 'none'}); expected {SHAPES}", path=str(path))
        if kind is not found:
            stated = "--format " + found.value if fmt is not DataFormat.AUTO else f"the first record ({found.value})"
            raise InputError(f"{where} holds {kind.value} but {stated} says {found.value}; one file holds one form "
                             f"(use --format {kind.value} or auto)", path=str(path))
    return found


def _dialogue_rows(records, p: Path, turns: int | None) -> list[ConsultTurn]:
    out: list[ConsultTurn] = []
    seen: set[str] = set()
    for i, (_, dialogue) in enumerate(records):
        did = str(dialogue.get("id", i)).strip().replace(" ", "_")
        if did in seen:
            raise InputError(f"dialogue id {did!r} appears twice; ids must be unique", path=str(p))
        seen.add(did)
        conv = _pairs_of_messages(dialogue["conversation"], did, p)
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
            context, pairs = _context(item.get("article_context"))
            out.append(ConsultTurn(did, t, tuple(history), question, answer,
                                   _names(item.get("keywords"), f"{where} field 'keywords'", p),
                                   _names(item.get("article", item.get("articles")), f"{where} field 'article'", p),
                                   context, article_texts=pairs))
            history += [Turn("user", question), Turn("assistant", answer)]
    return out


def _pairs_of_messages(conv: list, did: str, path: Path) -> list:
    """A conversation written as ``{"role", "content"}`` messages, as ``{"user", "assistant"}`` turns; the roles
    must alternate user, assistant, user, ... (an error names the dialogue, the turn and the message)."""
    if not conv or not all(isinstance(m, dict) and "role" in m and "user" not in m for m in conv):
        return conv
    out: list[dict[str, Any]] = []
    for j, m in enumerate(conv, 1):
        role, turn = str(m.get("role")), (j + 1) // 2
        expected = "user" if j % 2 else "assistant"
        if role != expected:
            raise InputError(f"dialogue {did!r} turn {turn} (message {j}) has role {role!r} where {expected!r} "
                             "belongs: the roles must alternate user, assistant, user, ...; merge or reorder the "
                             "messages", path=str(path))
        if role == "user":
            out.append({k: v for k, v in m.items() if k not in ("role", "content")} | {"user": m.get("content")})
        else:
            out[-1]["assistant"] = m.get("content")
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
            expected = "user" if not turns or turns[-1].role == "assistant" else "assistant"
            if role != expected:
                raise InputError(f"{where} history entry {j} has role {role!r} where {expected!r} belongs: the roles "
                                 "must alternate user, assistant, user, ...; merge or reorder the entries", path=str(path))
            turns.append(Turn(role, _text(h.get("content"), f"{where} history entry {j}", path, required=False)))
        else:  # {"user", "assistant"} pairs, as LexRAG writes them
            turns.append(Turn("user", _text(h.get("user"), f"{where} history entry {j} 'user'", path, required=True)))
            turns.append(Turn("assistant", _text(h.get("assistant"), f"{where} history entry {j} 'assistant'",
                                                 path, required=False)))
    return tuple(turns)


def _turn_rows(records, p: Path, turn: int | None) -> list[ConsultTurn]:
    out = []
    for i, (_, item) in enumerate(records):
        did = str(item.get("id", i)).strip().replace(" ", "_")
        where = f"item {did!r}"
        history = _history(item.get("history"), where, p)
        asked = sum(1 for h in history if h.role == "user")
        n = turn if turn is not None else asked + 1
        if asked < n - 1:
            raise InputError(f"{where} has {asked} history turns, fewer than the {n - 1} a turn_{n} item states; "
                             f"complete its history or move it to turn_{asked + 1}.json", path=str(p))
        question = _text(item.get("current_question"), f"{where} field 'current_question'", p, required=True)
        context, pairs = _context(item.get("article_context"))
        out.append(ConsultTurn(did, n, history, question,
                               _text(item.get("reference"), f"{where} field 'reference'", p, required=False),
                               _names(item.get("keywords"), f"{where} field 'keywords'", p),
                               _names(item.get("article", item.get("articles")), f"{where} field 'article'", p),
                               context, article_texts=pairs))
    return out


def load_consultation_file(path: str | Path, turns: int | None = 5, fmt: DataFormat | str = DataFormat.AUTO) -> list[ConsultTurn]:
    """Every turn a consultation file holds, whatever its name: dialogues or per-turn items (read from the
    records, or ``fmt``), as a JSON array or JSON Lines. A per-turn file named ``turn_N.json`` states N;
    otherwise each item's turn is its history's length + 1."""
    p = Path(path)
    records = read_records(p)
    if detect_format(records, p, fmt) is DataFormat.DIALOGUES:
        return _dialogue_rows(records, p, turns)
    m = TURN_FILE.match(p.name)
    return _turn_rows(records, p, int(m.group(1)) if m else None)


def load_dialogues(path: str | Path, turns: int | None = 5) -> list[ConsultTurn]:
    """Every turn of every dialogue of a ``dataset.json``. ``turns`` is the number each dialogue must have
    (LexRAG: 5); a dialogue with fewer is an InputError naming it (``None`` accepts any length)."""
    return load_consultation_file(path, turns, DataFormat.DIALOGUES)


def load_turn_file(path: str | Path, turn: int | None = None) -> list[ConsultTurn]:
    """The items of one per-turn file; N comes from ``turn``, the file name ``turn_N.json``, or each item's
    history. An item whose history is shorter than N - 1 turns is an InputError naming it."""
    p = Path(path)
    if turn is None:
        return load_consultation_file(p, None, DataFormat.TURNS)
    records = read_records(p)
    detect_format(records, p, DataFormat.TURNS)
    return _turn_rows(records, p, turn)


def load_consultations(path: str | Path, turns: int | None = 5,
                       fmt: DataFormat | str = DataFormat.AUTO) -> list[ConsultTurn]:
    """A consultation file (:func:`load_file`), or a directory of ``turn_N.json[l]`` files (or a dataset.json[l])."""
    p = Path(path)
    if p.is_dir():
        files = sorted((f for f in p.iterdir() if TURN_FILE.match(f.name)),
                       key=lambda f: int(TURN_FILE.match(f.name).group(1)))
        if files:
            rows = [t for f in files for t in load_consultation_file(f, turns, fmt)]
            return sorted(rows, key=lambda t: (t.turn, t.dialogue_id))
        for name in ("dataset.json", "dataset.jsonl"):
            if (p / name).is_file():
                return load_consultation_file(p / name, turns, fmt)
        raise InputError("no turn_N.json files and no dataset.json in this directory; give a file instead "
                         f"({SHAPES})", path=str(p))
    return load_consultation_file(p, turns, fmt)


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
            "keywords": list(t.keywords), "article": list(t.articles),
            "article_context": [{n: x} for n, x in t.article_texts] if t.article_texts else t.article_context})
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
