"""China's national law, shipped with the package: the default corpus and its ready dense vectors.

``legalrag/data/cn-law/`` holds the 55,515 articles of the national laws, administrative regulations and judicial
interpretations (``corpus.jsonl.xz``: id, name, content, one article a line) and their passage vectors from the
shipped ``stard-e5`` encoder, quantised to int8 with one scale per vector (``<encoder>.i8.npy`` and
``<encoder>.scale.npy``). ``manifest.json`` states the snapshot, the provenance, the encoder the vectors belong
to and the SHA-256 of every file.

Nothing is encoded on a user's machine: :func:`ensure_index` builds the default index once (BM25 over the
corpus, about 20 s on two cores; the dense component filled from the shipped vectors; their hybrid) into a
directory the composition root chooses, and later calls only open it. The build checks every file against its
hash first, so a missing, truncated or altered file is refused with its path and the way to restore it.
"""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from legalrag.errors import IndexError_, InputError
from legalrag.io import sha256_file

MANIFEST = "manifest.json"
CORPUS = "corpus.jsonl.xz"
RESTORE = ("restore it with `git checkout -- src/legalrag/data/cn-law` in a clone of legalrag, or "
           "`pip install --force-reinstall --no-deps legalrag` for an installed package")


def data_dir() -> Path:
    return Path(str(resources.files("legalrag").joinpath("data", "cn-law")))


@dataclass(frozen=True)
class NationalLaw:
    """The shipped corpus: where its files are and what its manifest says."""

    path: Path
    manifest: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def encoder(self) -> str:
        """The shipped encoder the vectors were made with (``stard-e5``)."""
        return str(self.manifest["vectors"]["encoder"])

    @property
    def digest(self) -> str:
        """One hash for the whole data set (the manifest names every file's hash)."""
        return sha256_file(self.path / MANIFEST)

    def coverage(self) -> dict[str, Any]:
        """What the corpus covers, for ``index info`` and the manifest of the index built from it."""
        m = self.manifest
        return {"national": m["name"], "title": m["title"], "snapshot": m["snapshot"], "n_laws": m["n_laws"],
                "n_articles": m["n_articles"], "note": m["note"], "provenance": m["provenance"]}

    def verify(self) -> None:
        """Every file present with its recorded SHA-256, or an InputError naming the file and the fix."""
        for name, digest in self.manifest["files_sha256"].items():
            p = self.path / name
            if not p.is_file():
                raise InputError(f"the national-law data file is missing; {RESTORE}", path=str(p))
            if sha256_file(p) != digest:
                raise InputError(f"the national-law data file is damaged (its SHA-256 is not the one in "
                                 f"{MANIFEST}: truncated or altered); {RESTORE}", path=str(p))

    def records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, {"id", "name", "content"}) of each article, read from the compressed corpus."""
        p = self.path / CORPUS
        try:
            with lzma.open(p, "rt", encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    if line.strip():
                        try:
                            yield lineno, json.loads(line)
                        except ValueError as exc:
                            raise InputError(f"not valid JSON ({exc}); {RESTORE}", path=str(p), line=lineno) from None
        except (lzma.LZMAError, EOFError) as exc:
            raise InputError(f"the compressed corpus cannot be read ({exc}); {RESTORE}", path=str(p)) from None

    def documents(self) -> Iterator:
        from legalrag.corpora.statutes import statute_document

        for lineno, rec in self.records():
            yield statute_document(str(rec["id"]), str(rec["content"]), str(rec["name"]),
                                   source=f"{self.name}:{lineno}")

    def vectors(self) -> np.ndarray:
        """The passage vectors, float32 (n, dimension), in corpus order."""
        v = self.manifest["vectors"]
        q = np.load(self.path / v["codes"], allow_pickle=False)
        scale = np.load(self.path / v["scales"], allow_pickle=False)
        if q.ndim != 2 or q.shape[0] != scale.shape[0] or q.shape[0] != self.manifest["n_articles"]:
            raise InputError(f"the shipped vectors have shape {q.shape}, scales {scale.shape}, for "
                             f"{self.manifest['n_articles']} articles; {RESTORE}", path=str(self.path / v["codes"]))
        return dequantise(q, scale)


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and one float32 scale per row (symmetric: ``scale = max |x| / 127``)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scale = np.abs(vectors).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    codes = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale.astype(np.float32)


def dequantise(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Back to float32, re-normalised to unit length (the encoders' vectors are unit vectors)."""
    v = codes.astype(np.float32) * scale[:, None].astype(np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


def national_law(path: Path | None = None) -> NationalLaw | None:
    """The shipped corpus, or None when the package was installed without it."""
    p = path or data_dir()
    mf = p / MANIFEST
    if not mf.is_file():
        return None
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc}); {RESTORE}", path=str(mf)) from None
    return NationalLaw(p, manifest)


class PrecomputedPassages:
    """An encoder whose passage vectors are looked up (by passage text) instead of computed; queries go to the
    real encoder. Used once, to build the dense component from the shipped vectors."""

    def __init__(self, encoder: Any, by_text: Mapping[str, np.ndarray]):
        self.encoder = encoder
        self.by_text = by_text
        self.model_id = encoder.model_id
        self.trained = getattr(encoder, "trained", False)

    @property
    def dimension(self) -> int:
        return self.encoder.dimension

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.encode_queries(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.by_text]
        if missing:
            raise IndexError_(f"{len(missing)} passages have no shipped vector (first: {missing[0][:40]!r}); "
                              "the corpus and the vectors do not belong together")
        return np.stack([self.by_text[t] for t in texts]).astype(np.float32)


def built_index(directory: Path, source: str, make_encoder: Callable[..., Any]):
    """The index at ``directory`` when it was built from ``source`` (its manifest's corpus source), else None
    (missing, damaged or built from other data: the caller builds it)."""
    from legalrag.retrieval.index import open_index

    try:
        index = open_index(directory, make_encoder)
    except IndexError_:
        return None
    return index if index.manifest["corpus"].get("source") == source else None


def ensure_index(directory: str | Path, law: NationalLaw, components: Callable[[], Sequence[Any]],
                 make_encoder: Callable[..., Any], *, progress: bool = False, announce: Callable[[str], None] | None = None):
    """The default index at ``directory``: opened when it was built from this data, else built first.

    ``components``: what to build, asked for only when building (the composition root passes BM25, the dense component of ``law.encoder`` and
    their hybrid); ``make_encoder``: the encoder factory the index opens with. The dense component is filled
    from the shipped vectors, which must belong to the encoder the factory builds (same model id)."""
    from legalrag.retrieval.dense import passage_text
    from legalrag.retrieval.index import build_index, open_index

    directory = Path(directory)
    source = f"legalrag:{law.name} sha256={law.digest}"
    index = built_index(directory, source, make_encoder)
    if index is not None:
        return index
    law.verify()
    if announce:
        announce(f"building the default index of {law.manifest['title']} once ({law.manifest['n_articles']:,} "
                 f"articles; about a minute) into {directory}")
    encoder = make_encoder(law.encoder)
    expected = law.manifest["vectors"]["model_id"]
    if encoder.model_id != expected:
        raise IndexError_(f"the shipped vectors belong to {expected}, but the encoder {law.encoder!r} is "
                          f"{encoder.model_id}; {RESTORE}")
    max_chars = int(law.manifest["vectors"]["max_chars"])
    vectors = law.vectors()
    by_text = {passage_text(d, max_chars): vectors[i] for i, d in enumerate(law.documents())}
    shipped = PrecomputedPassages(encoder, by_text)

    def build_factory(spec: str, **options: Any):
        return shipped if spec == law.encoder else make_encoder(spec, **options)

    build_index(directory, law.documents(), retrievers=components(), lang="zh", progress=progress, source=source,
                corpus_info=law.coverage(), make_encoder=build_factory)
    return open_index(directory, make_encoder)


CRIMINAL_LAW = "中华人民共和国刑法"


def ensure_law_index(directory: str | Path, law: NationalLaw, laws: Sequence[str], components: Callable[[], Sequence[Any]],
                     make_encoder: Callable[..., Any], *, article_ids: bool = False, progress: bool = False,
                     announce: Callable[[str], None] | None = None):
    """An index over the articles of ``laws`` only (e.g. the criminal law, the statute set the judgment and
    citation models decide over), built once from the shipped corpus; its components are encoded here (a few
    hundred articles), unlike the full index's. ``article_ids`` (one law only): each document's id is its
    article number (``264``, ``133-1``), the provision ids the judgment and citation models use (JuDGE's)."""
    from dataclasses import replace

    from legalrag.retrieval.index import build_index, open_index

    directory = Path(directory)
    wanted = set(laws)
    if article_ids and len(wanted) != 1:
        raise InputError("article numbers are ids only within one law; pass one law with article_ids")
    source = f"legalrag:{law.name} sha256={law.digest} laws={'|'.join(sorted(wanted))} ids={'article' if article_ids else 'corpus'}"
    index = built_index(directory, source, make_encoder)
    if index is not None:
        return index
    law.verify()
    docs = [d for d in law.documents() if d.metadata.get("law") in wanted]
    if article_ids:
        docs = [replace(d, id=d.metadata["article"]) for d in docs if d.metadata.get("article")]
    if not docs:
        raise InputError(f"the national-law data has no article of {', '.join(sorted(wanted))}")
    if announce:
        announce(f"building the index of {', '.join(sorted(wanted))} ({len(docs)} articles) once into {directory}")
    build_index(directory, docs, retrievers=components(), lang="zh", progress=progress, source=source,
                corpus_info={**law.coverage(), "laws": sorted(wanted)}, make_encoder=make_encoder)
    return open_index(directory, make_encoder)
