"""Index directories: documents plus one sub-directory per retrieval component, written atomically.

Layout::

    INDEX/
      manifest.json     format, version, legalrag version, corpus sha256 and size, components and parameters
      documents.jsonl   one Document per line, in index order (row i of every matrix is line i)
      bm25/ qld/ ...    one directory per component (JSON + .npy, never pickle)

Adding a component kind (the extension hook)
--------------------------------------------
Component kinds are looked up in :data:`COMPONENT_KINDS` by name. Each entry holds two functions (the
component modules import only numpy at load time; their heavy libraries are imported when used):

- ``build(ctx: BuildContext, directory: Path, **params) -> dict``: write the component into ``directory``
  (already created) and return the parameters to record in the manifest. ``ctx`` (``retrieval/build.py``)
  gives the documents (``ctx.documents``, lazy; ``ctx.documents_file`` to stream them in chunks), the
  resolved language, shared tokenizers and a shared tokenisation spilled to disk (``ctx.postings``), the
  progress flag and the components built so far (``ctx.built``), so e.g. a hybrid component can refer to
  ``bm25``.
- ``load(index: Index, directory: Path, params: dict, **options) -> Retriever``: load it back;
  ``index.retriever(other)`` gives sibling components.

Components that need an encoder (``dense``) get it from the encoder factory the index was opened or built
with (``make_encoder(spec, **options)``; ``legalrag.wiring`` passes its own), so this layer never turns a
model name into a model. A new kind is registered with :func:`register_component_kind` by the composition
root (``legalrag.wiring``). A component's directory is its name, which defaults
to its kind (``ComponentSpec("dense", name="dense-e5-small", params={...})`` for a per-encoder name).
:func:`add_components` adds components to an existing index (atomically, keeping the others).
"""

from __future__ import annotations

import datetime as _dt
import inspect
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from legalrag.errors import IndexError_, InputError
from legalrag.io import atomic_dir
from legalrag.retrieval import bm25, dense, hybrid, qld
from legalrag.retrieval.strength import component_strength, default_component  # noqa: F401 (re-exported)
from legalrag.retrieval.build import DEFAULT_CHUNK_DOCS, BuildContext, check_chunk_docs, write_documents
from legalrag.types import Document

FORMAT = "legalrag-index"
VERSION = 1
MANIFEST = "manifest.json"
DOCUMENTS = "documents.jsonl"


EncoderFactory = Callable[..., Any]  # make_encoder(spec, **options) -> retrieval.encoders.Encoder


@dataclass(frozen=True)
class ComponentKind:
    kind: str
    build: Callable[..., dict[str, Any]]  # build(ctx, directory, **params) -> recorded params
    load: Callable[..., Any]  # load(index, directory, params, **options) -> Retriever


COMPONENT_KINDS: dict[str, ComponentKind] = {
    "bm25": ComponentKind("bm25", bm25.build_component, bm25.load_component),
    "qld": ComponentKind("qld", qld.build_component, qld.load_component),
    "dense": ComponentKind("dense", dense.build_component, dense.load_component),
    "hybrid": ComponentKind("hybrid", hybrid.build_component, hybrid.load_component),
}


def _no_encoder_factory(spec: str, **_: Any) -> Any:
    raise InputError(f"this index needs the encoder {spec!r}, but it was opened without an encoder factory; "
                     "open it with legalrag.wiring.Root().index(PATH) (or pass make_encoder=)")


def register_component_kind(kind: ComponentKind) -> None:
    COMPONENT_KINDS[kind.kind] = kind


@dataclass(frozen=True)
class ComponentSpec:
    """What to build: a kind, its parameters and (optionally) a directory name other than the kind."""

    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None

    @property
    def dirname(self) -> str:
        return self.name or self.kind


def _kind(name: str) -> ComponentKind:
    try:
        return COMPONENT_KINDS[name]
    except KeyError:
        raise InputError(f"unknown index component {name!r}; known: {', '.join(sorted(COMPONENT_KINDS))}") from None


def _as_spec(x: str | ComponentSpec, params: Mapping[str, Mapping[str, Any]]) -> ComponentSpec:
    if isinstance(x, ComponentSpec):
        return x
    return ComponentSpec(kind=x, params=dict(params.get(x, {})))


def _build_components(ctx: BuildContext, specs: Sequence[ComponentSpec], components: dict[str, Any]) -> None:
    for spec in specs:
        kind = _kind(spec.kind)
        if spec.dirname in components or spec.dirname in (MANIFEST, DOCUMENTS):
            raise InputError(f"index component {spec.dirname!r} given twice")
        directory = ctx.root / spec.dirname
        directory.mkdir()
        builder = kind.build
        try:
            inspect.signature(builder).bind(ctx, directory, **spec.params)
        except TypeError as exc:
            raise InputError(f"bad parameters for index component {spec.kind!r}: {exc}") from None
        recorded = builder(ctx, directory, **spec.params)
        components[spec.dirname] = {"kind": spec.kind, "dir": spec.dirname, "params": recorded}
        ctx.built[spec.dirname] = recorded


def build_index(out: str | Path, documents: Iterable[Document],
                retrievers: Iterable[str | ComponentSpec] = ("bm25",), lang: str = "auto",
                params: Mapping[str, Mapping[str, Any]] | None = None, progress: bool = False,
                source: str | None = None, corpus_info: Mapping[str, Any] | None = None,
                make_encoder: EncoderFactory | None = None, chunk_docs: int = DEFAULT_CHUNK_DOCS) -> "Index":
    """Build an index directory at ``out`` (replacing any index there only once the new one is complete).

    ``documents`` is read once, in order, and may be a generator (a corpus larger than memory is streamed:
    see ``retrieval/build.py``); ``retrievers``: component kinds or :class:`ComponentSpec` s; ``params``:
    per-kind parameters (e.g. ``{"bm25": {"k1": 1.2}}``); ``lang``: zh, en or auto (detected from the
    documents); ``corpus_info``: more to record under the manifest's ``corpus`` (e.g. a folder's file hashes);
    ``make_encoder``: the encoder factory dense components are built (and later loaded) with; ``chunk_docs``:
    documents tokenised at a time by the lexical components (bounds their memory).
    """
    specs = [_as_spec(x, params or {}) for x in retrievers]
    if not specs:
        raise InputError("no index components requested")
    for s in specs:
        _kind(s.kind)
    check_chunk_docs(chunk_docs)
    with atomic_dir(out) as tmp:
        sha, size, n_documents = write_documents(tmp / DOCUMENTS, documents)
        if not n_documents:
            raise InputError("no documents to index; check the corpus path and its contents")
        ctx = BuildContext(tmp, tmp / DOCUMENTS, n_documents, lang, progress, make_encoder or _no_encoder_factory,
                           chunk_docs)
        components: dict[str, Any] = {}
        _build_components(ctx, specs, components)
        ctx.cleanup()
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "legalrag_version": _version(),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "lang": ctx.lang,
            "corpus": {"sha256": sha, "bytes": size, "n_documents": n_documents, "source": source or "",
                       **dict(corpus_info or {})},
            "components": components,
            "default": default_component(components),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return open_index(out, make_encoder)


def add_components(path: str | Path, retrievers: Iterable[str | ComponentSpec],
                   params: Mapping[str, Mapping[str, Any]] | None = None, progress: bool = False,
                   replace: bool = False, make_encoder: EncoderFactory | None = None,
                   chunk_docs: int = DEFAULT_CHUNK_DOCS) -> "Index":
    """Add components to an existing index; the index is copied, extended and renamed into place."""
    index = open_index(path, make_encoder)
    specs = [_as_spec(x, params or {}) for x in retrievers]
    with atomic_dir(index.path) as tmp:
        manifest = json.loads(json.dumps(index.manifest))
        for child in index.path.iterdir():
            if child.name == MANIFEST:
                continue
            if replace and child.name in {s.dirname for s in specs}:
                manifest["components"].pop(child.name, None)
                continue
            (shutil.copytree if child.is_dir() else shutil.copy2)(child, tmp / child.name)
        ctx = BuildContext(tmp, tmp / DOCUMENTS, manifest["corpus"]["n_documents"], manifest.get("lang", "auto"),
                           progress, make_encoder or _no_encoder_factory, chunk_docs)
        ctx.built.update({k: v["params"] for k, v in manifest["components"].items()})
        _build_components(ctx, specs, manifest["components"])
        ctx.cleanup()
        if not manifest.get("default_chosen"):  # a component stronger than the old default takes over
            manifest["default"] = default_component(manifest["components"])
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return open_index(index.path, make_encoder)


class Index:
    """An opened index directory. Documents load on first use; components load on first request.

    ``encoder(spec, **options)`` is the encoder factory dense components are loaded with."""

    def __init__(self, path: Path, manifest: dict[str, Any], make_encoder: EncoderFactory | None = None):
        self.path = path
        self.manifest = manifest
        self.encoder = make_encoder or _no_encoder_factory
        self._documents: Sequence[Document] | None = None
        self._by_id: dict[str, int] | None = None
        self._retrievers: dict[tuple, Any] = {}

    def __repr__(self) -> str:
        return f"Index({str(self.path)!r}, components={self.names})"

    @property
    def names(self) -> list[str]:
        return list(self.manifest["components"])

    @property
    def default(self) -> str:
        """The component that answers when none is named: the builder's choice where the manifest records one
        (``default_chosen``), else the strongest by :func:`legalrag.retrieval.strength.default_component` (the
        rule applied when the index is opened, so an index built under an older rule follows the current one)."""
        if self.manifest.get("default_chosen") and self.manifest.get("default") in self.manifest["components"]:
            return self.manifest["default"]
        return default_component(self.manifest["components"]) if self.manifest["components"] else self.names[0]

    @property
    def corpus_sha256(self) -> str:
        return self.manifest["corpus"]["sha256"]

    @property
    def documents(self) -> Sequence[Document]:
        """The documents in index order: a read-only list-like that parses each line on first use."""
        if self._documents is None:
            from legalrag.retrieval.docstore import LazyDocuments

            self._documents = LazyDocuments(self.path / DOCUMENTS, self.manifest["corpus"]["n_documents"])
        return self._documents

    def position(self, doc_id: str) -> int:
        if self._by_id is None:
            self._by_id = {d.id: i for i, d in enumerate(self.documents)}
        try:
            return self._by_id[str(doc_id)]
        except KeyError:
            raise KeyError(f"document {doc_id!r} is not in the index at {self.path}") from None

    def get(self, doc_id: str) -> Document:
        return self.documents[self.position(doc_id)]

    def __contains__(self, doc_id: object) -> bool:
        try:
            self.position(str(doc_id))
        except KeyError:
            return False
        return True

    def component_dir(self, name: str) -> Path:
        return self.path / self.manifest["components"][name]["dir"]

    def component_params(self, name: str) -> dict[str, Any]:
        return dict(self.manifest["components"][name]["params"])

    def retriever(self, name: str | None = None, **options: Any):
        """Load (once) and return the component ``name`` (default: the first one built)."""
        name = name or self.default
        if name not in self.manifest["components"]:
            raise InputError(f"the index at {self.path} has no component {name!r}; it has: {', '.join(self.names)}. "
                             f"Add one with `legalrag index build --retriever {name}`")
        key: tuple | None = (name, tuple(sorted(options.items())))
        try:
            hash(key)
        except TypeError:  # unhashable options (e.g. a dict): load afresh, do not cache
            key = None
        if key is None or key not in self._retrievers:
            entry = self.manifest["components"][name]
            directory = self.component_dir(name)
            if not directory.is_dir():
                raise IndexError_(f"{directory} is missing; the index is damaged: rebuild it")
            loaded = _kind(entry["kind"]).load(self, directory, dict(entry["params"]), **options)
            if key is None:
                return loaded
            self._retrievers[key] = loaded
        return self._retrievers[key]


def open_index(path: str | Path, make_encoder: EncoderFactory | None = None) -> Index:
    """Open an index directory, checking that it is a legalrag index of a version this code reads.

    ``make_encoder`` is needed only to load dense components (``legalrag.wiring.Root.index`` passes it)."""
    p = Path(path)
    if not p.exists():
        raise IndexError_(f"no index at {p}; build one with `legalrag index build --corpus FILE --out {p}`")
    if not p.is_dir():
        raise IndexError_(f"{p} is a file, not an index directory; pass the directory `legalrag index build` wrote")
    mf = p / MANIFEST
    if not mf.exists():
        raise IndexError_(f"{p} is not a legalrag index ({MANIFEST} is missing); build one with "
                          "`legalrag index build`")
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexError_(f"{mf}: not valid JSON ({exc}); rebuild the index") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexError_(f"{mf}: not a legalrag index manifest (field 'format' is "
                          f"{manifest.get('format') if isinstance(manifest, dict) else None!r}, expected {FORMAT!r})")
    version = manifest.get("version")
    if version != VERSION:
        if isinstance(version, int) and version > VERSION:
            hint = "it was written by a newer legalrag; upgrade legalrag"
        else:
            hint = "it was written by an older legalrag; rebuild it with `legalrag index build`"
        raise IndexError_(f"{mf}: index format version {version!r} (field 'version'), this legalrag reads "
                          f"version {VERSION}; {hint}")
    for key in ("corpus", "components"):
        if key not in manifest:
            raise IndexError_(f"{mf}: field {key!r} is missing; the index is damaged: rebuild it")
    if not (p / DOCUMENTS).exists():
        raise IndexError_(f"{p / DOCUMENTS} is missing; the index is damaged: rebuild it")
    return Index(p, manifest, make_encoder)


def _version() -> str:
    from legalrag import __version__

    return __version__



class CorpusFile(Iterable[Document]):
    """The documents of a JSONL statute corpus, read afresh (one line at a time) each time it is iterated, so
    ``build_index`` streams a corpus larger than memory. Bad records raise ``InputError`` while iterating."""

    def __init__(self, path: Path, fields: Any = None):
        self.path, self.fields = path, fields
        self.unparsed_names: list[int] = []  # lines whose article name is not a citation (after an iteration)
        self.n_unparsed = 0

    def __iter__(self):
        from legalrag.corpora.statutes import iter_statutes
        from legalrag.retrieval.build import IdHashes

        ids, names = IdHashes(), IdHashes()  # the reader's own check keeps every id; this keeps 8 bytes a document
        self.unparsed_names, self.n_unparsed = [], 0
        for lineno, doc in enumerate(iter_statutes(self.path, self.fields, unique_ids=False), 1):
            ids.add(doc.id)
            if doc.title:
                names.add(doc.title)
                if "article" not in doc.metadata:
                    self.n_unparsed += 1
                    if len(self.unparsed_names) < 5:
                        self.unparsed_names.append(int(doc.source.rsplit(":", 1)[1]) if ":" in doc.source else lineno)
            yield doc
        if ids.any_repeated() or names.any_repeated():
            for _ in iter_statutes(self.path, self.fields):  # names the file, line and field of the repeated one
                pass

    def __repr__(self) -> str:
        return f"CorpusFile({str(self.path)!r})"


def read_corpus(path: str | Path, fields: Any = None, previous: str | Path | None = None,
                progress: bool = False, max_file_mb: float | None = None) -> tuple[Iterable[Document], dict[str, Any]]:
    """Documents from a JSONL statute corpus (shape detected, or ``fields``: a corpora.statutes.FieldMap) or from
    a folder of user documents (``legalrag.corpora.documents``), and what to record about the corpus.

    A JSONL corpus comes back as a :class:`CorpusFile` (read lazily, when iterated); a folder as a list.

    For a folder, ``previous`` may name an index built from the same folder earlier: only added and changed
    files are read again (by content hash), the windows of unchanged files are taken from that index.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("corpus not found; check the path", path=str(p))
    if not p.is_dir():
        return CorpusFile(p, fields), {}
    try:
        from legalrag.corpora import documents as user_docs
    except ImportError:
        raise InputError("reading a folder of documents is not available in this build; pass a JSONL corpus "
                         "file instead", path=str(p)) from None
    old = None
    if previous is not None and (Path(previous) / MANIFEST).exists():
        try:
            old = open_index(previous)
        except IndexError_:
            old = None
    old_files = (old.manifest["corpus"].get("files") if old is not None else None) or None
    if old_files is not None and old.manifest["corpus"].get("folder") == str(p.resolve()):
        update = user_docs.plan_update(p, old_files)
        docs, files = user_docs.apply_update(old.documents, update, p, progress=progress,
                                             max_file_mb=max_file_mb)
        info = {"added": len(update.added), "changed": len(update.changed), "removed": len(update.removed),
                "unchanged": len(update.unchanged)}
    else:
        docs, files = user_docs.load_folder(p, progress=progress, max_file_mb=max_file_mb)
        info = {"added": len(files), "changed": 0, "removed": 0, "unchanged": 0}
    if not docs:
        raise InputError("the folder has no readable text (all files are empty)", path=str(p))
    return docs, {"folder": str(p.resolve()), "files": files, "update": info}
