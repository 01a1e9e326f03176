"""The national law's versions: the dated versions shipped beside the 2023-06-05 snapshot (:mod:`legalrag.national`),
their index, and ``legalrag corpus update`` / ``corpus rollback`` into the user's data folder.

``data/cn-law/laws.jsonl.xz`` holds every article of every version held (``legalrag.laws``), with vectors only for
the passages the snapshot lacks; an index of the versions reuses the snapshot's vectors for the rest. An update
reads a newer checkout of the dated-Markdown format, encodes only the changed articles, and swaps the new corpus in
atomically, keeping the previous one for rollback.
"""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from legalrag.errors import IndexError_, InputError
from legalrag.io import sha256_file
from legalrag.national import (CRIMINAL_LAW, RESTORE, NationalLaw, PrecomputedPassages, built_index, dequantise,
                               national_law, quantise)

LAWS = "laws.jsonl.xz"  # every article of every version held (legalrag.laws.store.records), when shipped


def law_library(folder: str | Path | None = None, *, law: NationalLaw | None = None,
                fallback: str | Path | None = None):
    """The versions of the national law: read from ``folder`` (the dated-Markdown format), else the versions
    shipped with the package, else ``fallback`` (a folder); InputError when none is there."""
    from legalrag.laws.reader import read_folder
    from legalrag.laws.store import library_from_records
    from legalrag.laws.versions import build_library

    if folder is not None:
        return build_library(read_folder(folder))
    law = law or national_law()
    if law is not None and (law.path / LAWS).is_file():
        p = law.path / LAWS
        with lzma.open(p, "rt", encoding="utf-8") as fh:
            return library_from_records(((i, json.loads(line)) for i, line in enumerate(fh, 1) if line.strip()),
                                        source=str(p), snapshot=_shipped_snapshot(law))
    if fallback is not None and Path(fallback).is_dir():
        return build_library(read_folder(fallback))
    raise InputError("no versions of the national law are installed; pass --laws FOLDER (a checkout of "
                     "github.com/LawRefBook/Laws) or set LEGALRAG_DATA to a folder holding laws-2025/")


# -- the law over time: versions, the index of every version, and updates from a newer checkout -------------

NEW_CODES = "laws.stard-e5.i8.npy"  # vectors of the passages the 2023 corpus lacks, in first-appearance order
NEW_SCALES = "laws.stard-e5.scale.npy"
LAWS_MANIFEST = "laws.json"


def base_passages(law: NationalLaw | None) -> dict[str, np.ndarray]:
    """Passage text -> vector of the shipped 2023 corpus (empty without it)."""
    from legalrag.retrieval.dense import passage_text

    if law is None:
        return {}
    max_chars = int(law.manifest["vectors"]["max_chars"])
    vectors = law.vectors()
    return {passage_text(d, max_chars): vectors[i] for i, d in enumerate(law.documents())}


def version_documents(library, *, base_ids: Mapping[tuple[str, str], str] | None = None) -> Iterator:
    """Every article of every version as a Document. Metadata: law, article, article_label, version,
    in_force_from, in_force_until, ended_by, effective_source, path, oldest_held, enacted, original (the oldest
    version held is the law's first text: ``Law.original_held``). The version in force keeps its law title;
    an older version's ``law`` is ``<title>（<version>版）``, so that a citation resolves to the text in force
    and the older text stays reachable by ``--as-of`` (a filter on the interval). An article whose name and text
    are those of the 2023 corpus keeps its id there (``base_ids``), so gold ids of benchmarks on that corpus
    still find it where the text is unchanged; any other article's id is ``<name>@<version>``."""
    from legalrag.laws.versions import normalise
    from legalrag.types import Document, DocumentKind

    base_ids = base_ids or {}
    for law in library.laws.values():
        last = law.versions[-1]
        for v in law.versions:
            older = v is not last and v.ended_by == "superseded"
            for a in v.articles:
                name = f"{v.title}{a.label}"
                meta = {"law": f"{v.title}（{v.label}版）" if older else v.title, "article": a.number,
                        "article_label": a.label, "version": v.version, "in_force_from": v.in_force_from,
                        "in_force_until": v.in_force_until, "ended_by": v.ended_by,
                        "effective_source": v.effective_source, "path": " / ".join(a.path),
                        "oldest_held": v is law.versions[0], "enacted": law.enacted,
                        "original": law.original_held}
                doc_id = None if older else base_ids.get((name, normalise(a.text)))
                yield Document(id=doc_id or v.article_id(a), text=a.text.strip(), title=name,
                               kind=DocumentKind.STATUTE, source=v.files[0] if v.files else "", metadata=meta)


def base_ids(law: NationalLaw | None) -> dict[tuple[str, str], str]:
    from legalrag.laws.versions import normalise

    if law is None:
        return {}
    return {(str(r["name"]), normalise(str(r["content"]))): str(r["id"]) for _, r in law.records()}


def write_versions(directory: str | Path, library, encoder: Any, *, base: NationalLaw | None,
                   known: Mapping[str, np.ndarray] | None = None, max_chars: int = 512,
                   info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write ``directory`` (atomically: a temp folder renamed into place): the versions as article records
    (``laws.jsonl.xz``), vectors of the passages neither ``base`` nor ``known`` has (encoded here by
    ``encoder``: only the new texts), and ``laws.json`` (counts, hashes, what was encoded). Returns the manifest."""
    import shutil
    import tempfile
    import time

    from legalrag.io import atomic_write_text
    from legalrag.laws.store import records
    from legalrag.retrieval.dense import passage_text

    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    have = base_passages(base)
    known = known or {}
    docs = list(version_documents(library, base_ids=base_ids(base)))
    new_texts = list(dict.fromkeys(t for t in (passage_text(d, max_chars) for d in docs) if t not in have))
    to_encode = [t for t in new_texts if t not in known]
    t0 = time.perf_counter()
    encoded = dict(zip(to_encode, np.asarray(encoder.encode_documents(to_encode), dtype=np.float32))) \
        if to_encode else {}
    seconds = time.perf_counter() - t0
    dim = int(getattr(encoder, "dimension", 384))
    vectors = np.stack([encoded[t] if t in encoded else known[t] for t in new_texts]).astype(np.float32) \
        if new_texts else np.zeros((0, dim), dtype=np.float32)
    tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.", suffix=".tmp"))
    try:
        with lzma.open(tmp / LAWS, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as fh:
            for rec in records(library):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        codes, scales = quantise(vectors) if len(vectors) else (vectors.astype(np.int8), np.zeros(0, np.float32))
        np.save(tmp / NEW_CODES, codes, allow_pickle=False)
        np.save(tmp / NEW_SCALES, scales, allow_pickle=False)
        counts = library.counts()
        manifest = {"snapshot": library.snapshot, **(info or {}), "counts": counts,
                    "documents": len(docs), "new_passages": len(new_texts), "encoded": len(to_encode),
                    "encode_seconds": round(seconds, 1),
                    "encoder": getattr(encoder, "model_id", ""), "max_chars": max_chars,
                    "base": base.name if base else None,
                    "base_sha256": base.digest if base else None,
                    "new_texts_sha256": _texts_sha(new_texts),
                    "files_sha256": {n: sha256_file(tmp / n) for n in (LAWS, NEW_CODES, NEW_SCALES)}}
        atomic_write_text(tmp / LAWS_MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2))
        if directory.exists():
            shutil.rmtree(directory)
        tmp.rename(directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _texts_sha(texts: Sequence[str]) -> str:
    import hashlib

    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8") + b"\0")
    return h.hexdigest()


def versions_passages(directory: str | Path, library, *, base: NationalLaw | None,
                      max_chars: int = 512, docs: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
    """Passage text -> vector for every document of ``version_documents``: the base's, then the new ones of
    ``directory`` in the order :func:`write_versions` encoded them (``docs``: those documents, when the caller
    has them already)."""
    from legalrag.retrieval.dense import passage_text

    directory = Path(directory)
    have = base_passages(base)
    docs = docs if docs is not None else version_documents(library, base_ids=base_ids(base))
    new_texts = list(dict.fromkeys(t for t in (passage_text(d, max_chars) for d in docs) if t not in have))
    q = np.load(directory / NEW_CODES, allow_pickle=False)
    s = np.load(directory / NEW_SCALES, allow_pickle=False)
    if len(q) != len(new_texts):
        raise InputError(f"{len(q)} new vectors for {len(new_texts)} new passages: the versions and their "
                         "vectors do not belong together; run `legalrag corpus update` again", path=str(directory))
    if len(q):
        have.update(zip(new_texts, dequantise(q, s)))
    return have


def read_versions(directory: str | Path):
    """The Library written by :func:`write_versions` in ``directory``."""
    from legalrag.laws.store import library_from_records

    p = Path(directory) / LAWS
    if not p.is_file():
        raise InputError("no versions here; build them with `legalrag corpus update FOLDER`", path=str(p))
    manifest = json.loads((Path(directory) / LAWS_MANIFEST).read_text(encoding="utf-8"))
    with lzma.open(p, "rt", encoding="utf-8") as fh:
        return library_from_records(((i, json.loads(line)) for i, line in enumerate(fh, 1) if line.strip()),
                                    source=str(p), snapshot=manifest.get("snapshot"))


def build_versions_index(directory: str | Path, data: str | Path, library, encoder: Any, components: Sequence[Any],
                         *, base: NationalLaw | None, progress: bool = False, source: str | None = None):
    """An index of every version (:func:`version_documents`) at ``directory``, its dense component filled from
    the base's and ``data``'s vectors (nothing encoded but queries)."""
    from legalrag.laws.coverage import coverage
    from legalrag.retrieval.index import build_index

    docs = list(version_documents(library, base_ids=base_ids(base)))
    shipped = PrecomputedPassages(encoder, versions_passages(data, library, base=base, docs=docs))
    return build_index(directory, docs, retrievers=components, lang="zh", progress=progress,
                       source=source or f"legalrag:versions {Path(data).name}",
                       corpus_info=coverage(library, docs, base.documents() if base else (),
                                            base.manifest.get("snapshot") if base else None),
                       make_encoder=lambda spec, **_: shipped)


def _shipped_snapshot(law: NationalLaw) -> str | None:
    p = law.path / LAWS_MANIFEST
    return json.loads(p.read_text(encoding="utf-8")).get("snapshot") if p.is_file() else None


def shipped_versions(law: NationalLaw | None) -> bool:
    """Whether ``law`` (the shipped data) carries the dated versions and their vectors."""
    return law is not None and all((law.path / n).is_file() for n in (LAWS, NEW_CODES, NEW_SCALES, LAWS_MANIFEST))


def ensure_versions_index(directory: str | Path, law: NationalLaw, components: Callable[[], Sequence[Any]],
                          make_encoder: Callable[..., Any], *, progress: bool = False,
                          announce: Callable[[str], None] | None = None):
    """The default index of the law in force (every version shipped, superseded ones marked by their interval) at
    ``directory``: opened when it was built from this data, else built once from the shipped versions and vectors
    (nothing encoded but queries). A retrieval over it is read as of a day by :func:`legalrag.laws.select.dated`."""
    from legalrag.retrieval.index import open_index

    directory = Path(directory)
    laws_sha = sha256_file(law.path / LAWS_MANIFEST)
    source = f"legalrag:versions/4 {law.name} sha256={law.digest} laws={laws_sha}"
    index = built_index(directory, source, make_encoder)
    if index is not None:
        return index
    law.verify()
    manifest = json.loads((law.path / LAWS_MANIFEST).read_text(encoding="utf-8"))
    for name, digest in manifest.get("files_sha256", {}).items():
        if sha256_file(law.path / name) != digest:
            raise IndexError_(f"{law.path / name} does not match its hash in {LAWS_MANIFEST}; {RESTORE}")
    if announce:
        announce(f"building the default index of the law in force once ({manifest.get('documents', 0):,} articles "
                 f"of {manifest.get('counts', {}).get('versions', 0):,} versions, snapshot {manifest.get('snapshot')}; "
                 f"a minute or two) into {directory}")
    encoder = make_encoder(law.encoder)
    build_versions_index(directory, law.path, law_library(law=law), encoder, components(), base=law,
                         progress=progress, source=source)
    return open_index(directory, make_encoder)


@dataclass(frozen=True)
class Update:
    """What `corpus update` did: where the new corpus is, what changed, what was encoded, how long it took."""

    directory: Path
    previous: Path | None
    laws_added: tuple[str, ...]
    versions_added: tuple[str, ...]  # "<title> (<version>)"
    articles_changed: int  # articles in force today whose name or text the previous corpus lacks
    laws_repealed: tuple[str, ...]
    encoded: int
    seconds: float
    problems: int

    def lines(self) -> list[str]:
        def few(xs: Sequence[str]) -> str:
            return ", ".join(xs[:8]) + (f" and {len(xs) - 8} more" if len(xs) > 8 else "")

        return [f"laws added: {len(self.laws_added)}" + (f" ({few(self.laws_added)})" if self.laws_added else ""),
                f"versions added: {len(self.versions_added)}" + (f" ({few(self.versions_added)})"
                                                                 if self.versions_added else ""),
                f"articles changed or new (in force today): {self.articles_changed:,}",
                f"laws repealed: {len(self.laws_repealed)}" + (f" ({few(self.laws_repealed)})"
                                                              if self.laws_repealed else ""),
                f"passages encoded: {self.encoded:,}; {self.seconds:.1f} s; problems in the files read: {self.problems}",
                f"now answering from {self.directory}" + (f"; `legalrag corpus rollback` returns to "
                                                          f"{self.previous}" if self.previous else "")]


def corpus_root(home: str | Path) -> Path:
    return Path(home) / "corpus"


def current_corpus(home: str | Path) -> Path | None:
    """The corpus `corpus update` last swapped in (``<home>/corpus/current``), or None."""
    cur = corpus_root(home) / "current"
    return cur.resolve() if cur.is_symlink() and cur.resolve().is_dir() else None


def _point(root: Path, name: str, target: Path | None) -> None:
    """Point ``root/name`` at ``target`` atomically (a new symlink renamed over the old)."""
    import os

    link = root / name
    if target is None:
        if link.is_symlink():
            link.unlink()
        return
    tmp = root / f".{name}.{os.getpid()}.lnk"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target.relative_to(root), tmp)
    os.replace(tmp, link)


def _in_force_today(library, today: str) -> set[tuple[str, str]]:
    from legalrag.laws.versions import normalise

    return {(f"{v.title}{a.label}", normalise(a.text)) for v in library.in_force(today) for a in v.articles}


def update_corpus(home: str | Path, folder: str | Path | None, encoder: Any, components: Sequence[Any], *,
                  base: NationalLaw | None, snapshot_titles: Sequence[str] = (CRIMINAL_LAW,),
                  today: str | None = None, progress: bool = False) -> Update:
    """Read ``folder`` (the dated-Markdown format), write a new corpus beside the current one (encoding only the
    passages that neither the base nor the current corpus has; ``folder`` None: the shipped versions), build its
    index, then swap it in atomically
    (``<home>/corpus/current``, the previous one kept as ``previous`` for :func:`rollback_corpus`). An update
    that stops before the swap (an error, a kill) leaves the current corpus answering; its half-written folder
    is removed by the next update."""
    import datetime
    import shutil
    import time

    from legalrag.laws.reader import read_folder
    from legalrag.laws.versions import add_snapshot, build_library, title_key

    t0 = time.perf_counter()
    today = today or datetime.date.today().isoformat()
    root = corpus_root(home)
    (root / "versions").mkdir(parents=True, exist_ok=True)
    for stale in (root / "versions").glob(".*.tmp"):  # left by an interrupted update
        shutil.rmtree(stale, ignore_errors=True)
    previous = current_corpus(home)
    before = read_versions(previous) if previous else None
    known = versions_passages(previous, before, base=base) if previous else {}
    if folder is None:  # the versions shipped with the package (the Criminal Law's older text already in them)
        if base is None or not (base.path / LAWS).is_file():
            raise InputError("no folder given and no versions shipped; pass a checkout in the dated-Markdown format")
        lib, snapshot_titles = law_library(law=base), ()
    else:
        lib = build_library(read_folder(folder))
    if base is not None and snapshot_titles:
        lib = add_snapshot(lib, (r for _, r in base.records()), str(base.manifest["snapshot"]), titles=snapshot_titles)
    lib = type(lib)(lib.laws, lib.problems, lib.skipped, snapshot=max((v.version or "" for v in lib.versions()),
                                                                         default=None))
    if before is not None:
        old_titles = set(before.laws)
        old_versions = {(k, v.version) for k, law in before.laws.items() for v in law.versions}
        old_repealed = {k for k, law in before.laws.items() if law.repealed}
        old_live = _in_force_today(before, today)
    else:
        old_titles = {title_key(d.metadata.get("law", "")) for d in base.documents()} if base else set()
        old_versions, old_repealed = set(), set()
        old_live = {(str(r["name"]), _norm(str(r["content"]))) for _, r in base.records()} if base else set()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    final = root / "versions" / stamp
    staging = root / "versions" / f".{stamp}.tmp"
    manifest = write_versions(staging, lib, encoder, base=base, known=known,
                              info={"folder": str(folder), "built": stamp})
    build_versions_index(staging / "index", staging, lib, encoder, components, base=base, progress=progress)
    staging.rename(final)
    _point(root, "previous", previous)
    _point(root, "current", final)
    return Update(final, previous,
                  tuple(law.title for k, law in lib.laws.items() if k not in old_titles),
                  tuple(f"{law.title} ({v.label})" for k, law in lib.laws.items() for v in law.versions
                        if before is not None and (k, v.version) not in old_versions and k in old_titles),
                  len(_in_force_today(lib, today) - old_live),
                  tuple(law.title for k, law in lib.laws.items() if law.repealed and k not in old_repealed
                        and (law.repealed.on or "") <= today),
                  int(manifest["encoded"]), time.perf_counter() - t0, len(lib.problems))


def _norm(text: str) -> str:
    from legalrag.laws.versions import normalise

    return normalise(text)


def rollback_corpus(home: str | Path) -> tuple[Path, Path | None]:
    """Swap back to the corpus before the last update: (now current, the one rolled back from)."""
    root = corpus_root(home)
    cur, prev = current_corpus(home), (root / "previous").resolve() if (root / "previous").is_symlink() else None
    if prev is None or not prev.is_dir():
        raise InputError("no previous corpus to roll back to (`legalrag corpus update` keeps one)", path=str(root))
    _point(root, "current", prev)
    _point(root, "previous", cur)
    return prev, cur
