"""The charge catalogue: every charge of the Criminal Law with the article and paragraph that define it.

Built from the official charge-name rules, applied in date order: the 1997 list (最高人民检察院关于适用刑法分则
规定的犯罪的罪名的意见, 414 charges, each as ``N．X罪（第M条第K款）``) and the supplements 确定罪名的补充规定
(2002) and (二) to (八), whose tables map an article (``第一百三十三条之一``, ``第229条第1款、第2款 第3款``) to
its charge names, each with the names it abolishes (``（取消……罪名）``); (八) renames one charge in prose
(``由“A”修改为“B”``). A row that gives one article a single new name, without abolishing anything, replaces the
one charge listed for exactly that article and paragraph (``编造并传播证券交易虚假信息罪`` becomes ``编造并传播证
券、期货交易虚假信息罪``); otherwise names are added. The result, 483 charges, is shipped as
``data/judge/charges.tsv`` (:func:`write_catalogue`; ``python tools/make_charge_table.py`` rebuilds it from the
rules) and read with :func:`load_catalogue`, which is what the judgment models predict over.

Article keys are the statute corpus's (``"264"``, ``"133-1"`` for 第一百三十三条之一); ``article_number`` is the
base number JuDGE's evaluator reads (133 for 之一). 骗购外汇罪 is defined by the 1998 decision on foreign
exchange, not by an article of the Criminal Law: its article is empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Sequence

from legalrag.errors import InputError
from legalrag.numerals import to_chinese, to_int

CATALOGUE_FILE = "data/judge/charges.tsv"
RULES_1997 = "最高人民检察院关于适用刑法分则规定的犯罪的罪名的意见"
SUPPLEMENT = "确定罪名的补充规定"
EXPECTED_COUNT = 483  # the count after 补充规定（七） (2021); （八） only renames
_NUM = r"[0-9０-９零一二三四五六七八九十百千]+"
_BARE_PARA = re.compile(rf"^第({_NUM})款")
_ITEM_1997 = re.compile(r"(?:\d+．)?\s*((?:[^\s（）．0-9]|（[边境]）)+?罪)（(第[^）]*)）")
_SOURCE_NOTE = re.compile(r"（《[^》]*》[^）]*）")
_CANCEL = re.compile(r"（?取消([^）]*)）?")
_RENAME = re.compile(r"第([^条]+)条[^“]*?罪名由“([^”]+)”修改为“([^”]+)”")
_TYPO = str.maketrans({"剌": "刺"})
# slips in the 1997 text, against the name the courts use
_NAME_FIXES = {"伪造变造国家有价证券罪": "伪造、变造国家有价证券罪"}


@dataclass(frozen=True)
class ArticleRef:
    article: str  # "264", "133-1"
    paragraph: int | None = None

    @property
    def article_number(self) -> int:
        return int(self.article.split("-")[0])

    @property
    def label(self) -> str:
        """``第一百三十三条之一``, ``第二百七十七条第五款``."""
        base, _, suffix = self.article.partition("-")
        text = f"第{to_chinese(int(base))}条" + (f"之{to_chinese(int(suffix))}" if suffix else "")
        return text + (f"第{to_chinese(self.paragraph)}款" if self.paragraph else "")

    def __str__(self) -> str:
        return self.article + (f":{self.paragraph}" if self.paragraph else "")

    @classmethod
    def parse(cls, text: str) -> "ArticleRef":
        article, _, para = text.partition(":")
        return cls(article, int(para) if para else None)


@dataclass(frozen=True)
class Charge:
    name: str
    refs: tuple[ArticleRef, ...]  # the articles (and paragraphs) that define it, as the rules list them
    source: str  # the rule that gave it its current name ("1997", "补充规定（七）", ...)
    former: tuple[str, ...] = ()  # the names the rules replaced by this one (older cases are labelled with them)
    text: str = ""  # the law text defining it (the paragraphs named, from the consolidated Criminal Law)

    @property
    def article(self) -> str | None:
        """The charge's own article: the first the rules list (None for 骗购外汇罪)."""
        return self.refs[0].article if self.refs else None

    @property
    def articles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.article for r in self.refs))

    @property
    def article_numbers(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(r.article_number for r in self.refs))

    @property
    def citation(self) -> str:
        """``第二百六十四条``, ``第一百一十四条、第一百一十五条第一款``."""
        return "、".join(r.label for r in self.refs)


# ------------------------------------------------------------------------------------------- parsing

def _int(text: str) -> int:
    return to_int(text)


def parse_refs(text: str) -> list[ArticleRef]:
    """``第114条、第115条第1款`` -> [114, 115:1]; ``第127条第1款、第2款`` -> [127:1, 127:2];
    ``第一百二十条之一`` -> [120-1]; a bare ``第3款`` continues the last article."""
    text = _SOURCE_NOTE.sub("", text)
    out: list[ArticleRef] = []
    for m in re.finditer(rf"第({_NUM})条(?:之({_NUM}))?|第({_NUM})款", text):
        if m.group(1):
            article = str(_int(m.group(1))) + (f"-{_int(m.group(2))}" if m.group(2) else "")
            out.append(ArticleRef(article))
        elif out:
            para = _int(m.group(3))
            last = out[-1]
            if last.paragraph is None and (not out[:-1] or out[-2].article != last.article):
                out[-1] = ArticleRef(last.article, para)
            else:
                out.append(ArticleRef(last.article, para))
    return out


def _names_in(text: str) -> list[str]:
    names, buf = [], ""
    for token in re.split(r"[\s；;]+|(?<=[^犯]罪)、", text):
        buf += token.strip()
        if buf.endswith("罪"):
            names.append(_NAME_FIXES.get(buf, buf).translate(_TYPO))
            buf = ""
    return names


def _cancelled_in(body: str) -> list[str]:
    body = re.sub(r"罪名$", "", re.sub(r"^刑法原第[^项]+项", "", body.strip()))
    return [(p if p.endswith("罪") else p + "罪").translate(_TYPO) for p in re.split(r"罪和", body) if p]


def _split_names(cell: str) -> list[tuple[str | None, list[str]]]:
    """A table cell -> [(a name it gives, the names that name replaces)]; a cancellation follows the name it
    belongs to (``A罪（取消B罪罪名） C罪（取消D罪罪名）``); one with no name before it comes as (None, names)."""
    out: list[tuple[str | None, list[str]]] = []
    pos = 0
    for m in _CANCEL.finditer(cell):
        names = _names_in(cell[pos:m.start()])
        out += [(n, []) for n in names]
        if out and out[-1][0] is not None and names:
            out[-1] = (out[-1][0], _cancelled_in(m.group(1)))
        else:
            out.append((None, _cancelled_in(m.group(1))))
        pos = m.end()
    out += [(n, []) for n in _names_in(cell[pos:])]
    return out


def _ref_groups(cell: str) -> list[list[ArticleRef]]:
    """An article cell split where the rules separate paragraphs by a space (``第229条第1款、第2款 第3款``)."""
    cell = _SOURCE_NOTE.sub("", cell).strip()
    groups, current = [], ""
    for part in cell.split():
        if _BARE_PARA.match(part) and current:
            groups.append(current)
            current = re.match(rf"第{_NUM}条(?:之{_NUM})?", groups[0]).group() + part  # type: ignore[union-attr]
        else:
            current += part
    if current:
        groups.append(current)
    return [parse_refs(g) for g in groups]


def parse_1997(text: str) -> list[Charge]:
    out = []
    text = re.sub(r"(第\d+条)第(\d+)条", r"\1第\2款", text)  # 第371条第2条: a slip for 第2款
    for m in _ITEM_1997.finditer(text):
        name = m.group(1).translate(_TYPO)
        name = _NAME_FIXES.get(name, name)
        out.append(Charge(name, tuple(parse_refs(m.group(2))), "1997"))
    return out


def _table_rows(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or "-----" in line or "刑法条文" in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2:
            rows.append((cells[0], cells[1]))
    return rows


def _supplement_label(path: Path) -> str:
    m = re.search(r"补充规定(（[一二三四五六七八九十]+）)?", path.name)
    return "补充规定" + (m.group(1) if m and m.group(1) else "")


def _date(path: Path) -> str:
    m = re.search(r"\((\d{4}-\d{2}-\d{2})\)", path.name)
    return m.group(1) if m else ""


def build_catalogue(rules_dir: str | Path) -> list[Charge]:
    """Every charge of the Criminal Law, from the rules in ``rules_dir`` (the 司法解释 folder)."""
    rules_dir = Path(rules_dir)
    base = sorted(rules_dir.glob(f"*{RULES_1997}*.md"))
    supplements = sorted(rules_dir.glob(f"*{SUPPLEMENT}*.md"), key=_date)
    if not base:
        raise InputError(f"the 1997 charge-name rules ({RULES_1997}) are not in this folder", path=str(rules_dir))
    charges: dict[str, Charge] = {c.name: c for c in parse_1997(base[0].read_text(encoding="utf-8"))}

    def replace(old: str, new: str, refs: tuple[ArticleRef, ...], label: str) -> None:
        gone = charges.pop(old, None)
        if gone is None:
            return
        mine = charges.get(new)
        former = tuple(dict.fromkeys((mine.former if mine else ()) + (old,) + gone.former))
        charges[new] = Charge(new, refs or gone.refs, label, former)

    for path in supplements:
        label = _supplement_label(path)
        text = path.read_text(encoding="utf-8")
        previous: list[list[ArticleRef]] = [[]]
        for art_cell, name_cell in _table_rows(text):
            # an empty article cell continues the row above: its names are added, never replacements
            groups = _ref_groups(art_cell) if art_cell else previous
            previous = groups
            if "《决定》" in art_cell:
                groups = [[]]
            entries = _split_names(name_cell)
            names = [n for n, _ in entries if n]
            any_cancel = any(c for _, c in entries)
            shared = len(names) > 1 and sum(1 for _, c in entries if c) == 1  # one cancellation for the row
            for i, (name, cancelled) in enumerate(entries):
                if name is None:  # 取消嫖宿幼女罪罪名: abolished, no successor
                    for c in cancelled:
                        charges.pop(c, None)
                    continue
                k = names.index(name)
                refs = tuple(groups[k] if len(groups) == len(names) else [r for g in groups for r in g])
                existing = charges.get(name)
                charges[name] = Charge(name, refs or (existing.refs if existing else ()), label,
                                       existing.former if existing else ())
                for c in cancelled:
                    if shared:
                        charges.pop(c, None)
                    else:
                        replace(c, name, refs, label)
                if art_cell and not any_cancel and len(names) == 1 and existing is None:
                    same = [c for c in charges.values() if refs and c.refs == refs and c.name != name]
                    if len(same) == 1:
                        replace(same[0].name, name, refs, label)
        for m in _RENAME.finditer(text):
            old, new = m.group(2), m.group(3)
            if old in charges:
                charges[new] = Charge(new, charges[old].refs, label, ())
                replace(old, new, charges[old].refs, label)
    return sorted(charges.values(), key=_order)


def _order(c: Charge) -> tuple:
    if not c.refs:
        return (10_000, 0, 0, c.name)
    r = c.refs[0]
    base, _, suffix = r.article.partition("-")
    return (int(base), int(suffix or 0), r.paragraph or 0, c.name)


# ------------------------------------------------------------------------------------- the law text

_ARTICLE_LINE = re.compile(rf"^第({_NUM})条(?:之({_NUM}))?\s+(.*)$")


def criminal_law_articles(path: str | Path, specific_only: bool = True) -> dict[str, list[str]]:
    """Article key -> its paragraphs (款), from the consolidated Criminal Law in Markdown; an item line
    (``（一）……``) belongs to the paragraph above it. ``specific_only``: the specific part (分则) alone."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_specific = not specific_only
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("#"):
            if "分则" in line:
                in_specific = True
            elif "附则" in line or "附件" in line:
                in_specific = False if specific_only else in_specific
                current = None
            continue
        if not line or line.startswith("<!--"):
            continue
        m = _ARTICLE_LINE.match(line)
        if m:
            key = str(_int(m.group(1))) + (f"-{_int(m.group(2))}" if m.group(2) else "")
            current = out.setdefault(key, []) if in_specific else None
            if current is not None:
                current.append(m.group(3).strip())
        elif current is not None:
            if line.startswith("（") and current:
                current[-1] += line
            else:
                current.append(line)
    return out


def charge_text(charge: "Charge", articles: dict[str, list[str]]) -> str:
    """The law text that defines ``charge``: the paragraphs its rules name, or the whole article."""
    parts = []
    for r in charge.refs:
        paras = articles.get(r.article, [])
        if r.paragraph and r.paragraph <= len(paras):
            parts.append(paras[r.paragraph - 1])
        elif paras:
            parts.append("".join(paras))
    return "".join(dict.fromkeys(parts))


def with_texts(charges: Sequence["Charge"], law_path: str | Path) -> list["Charge"]:
    from dataclasses import replace

    arts = criminal_law_articles(law_path)
    return [replace(c, text=charge_text(c, arts)) for c in charges]


# --------------------------------------------------------------------------------------------- file

HEADER = "charge\tarticles\tsource\tformer\ttext"


def catalogue_text(charges: Sequence[Charge]) -> str:
    lines = [HEADER] + [f"{c.name}\t{';'.join(map(str, c.refs))}\t{c.source}\t{';'.join(c.former)}\t{c.text}"
                        for c in charges]
    return "\n".join(lines) + "\n"


def write_catalogue(charges: Sequence[Charge], path: str | Path) -> Path:
    from legalrag.io import atomic_write_text

    path = Path(path)
    atomic_write_text(path, catalogue_text(charges))
    return path


def parse_catalogue(text: str, origin: str = CATALOGUE_FILE) -> tuple[Charge, ...]:
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if lineno == 1 or not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 5 or not cells[0].endswith("罪"):
            raise InputError(f"charge table line {lineno}: expected 'charge<TAB>articles<TAB>source<TAB>former"
                             "<TAB>text' "
                             f"with a "
                             f"name ending in 罪; rebuild it with tools/make_charge_table.py", path=origin)
        refs = tuple(ArticleRef.parse(r) for r in cells[1].split(";") if r)
        out.append(Charge(cells[0], refs, cells[2], tuple(n for n in cells[3].split(";") if n), cells[4]))
    return tuple(out)


@lru_cache(maxsize=4)
def load_catalogue(path: str | None = None) -> tuple[Charge, ...]:
    """The shipped catalogue (or the one at ``path``)."""
    if path is None:
        text = resources.files("legalrag").joinpath(CATALOGUE_FILE).read_text(encoding="utf-8")
        return parse_catalogue(text)
    return parse_catalogue(Path(path).read_text(encoding="utf-8"), path)


def by_name(charges: Iterable[Charge] | None = None) -> dict[str, Charge]:
    return {c.name: c for c in (load_catalogue() if charges is None else charges)}


def by_article(charges: Iterable[Charge] | None = None) -> dict[str, list[Charge]]:
    """Article key (``"264"``, ``"133-1"``) -> the charges it defines, in catalogue order."""
    out: dict[str, list[Charge]] = {}
    for c in (load_catalogue() if charges is None else charges):
        for a in c.articles:
            out.setdefault(a, []).append(c)
    return out


def by_any_name(charges: Iterable[Charge] | None = None) -> dict[str, Charge]:
    """Every name, current or former, -> the charge that carries it now (生产、销售假药罪 -> 生产、销售、提供假药罪)."""
    out: dict[str, Charge] = {}
    for c in (load_catalogue() if charges is None else charges):
        for n in c.former:
            out.setdefault(n, c)
    for c in (load_catalogue() if charges is None else charges):
        out[c.name] = c
    for name, c in list(out.items()):  # the JuDGE list spells 刺探 as 剌探
        out.setdefault(name.replace("刺", "剌"), c)
    return out
