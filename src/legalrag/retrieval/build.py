"""Streamed index building: the document store and the lexical postings, in bounded memory.

``build_index`` reads its documents once, writing ``documents.jsonl`` line by line; every later pass reads that
file back in chunks of ``chunk_docs`` documents. The lexical components (BM25, QLD) share one tokenisation,
:class:`SpilledPostings`:

1. each chunk is tokenised and its (term, document, count) postings, sorted by term, are spilled to ``.npy``
   files under the index's temp directory, while the vocabulary, the document lengths and the document
   frequencies are accumulated (the global statistics BM25 needs);
2. :meth:`SpilledPostings.blocks` merges the chunks term range by term range (at most ``MERGE_POSTINGS``
   postings at a time, or one term's postings when a term is in more documents), giving each term's postings in
   document order: exactly the column order of the documents x terms CSC matrices the components save;
3. the component turns each block into its values (BM25 scores, QLD counts) and appends them to its ``.npy``
   files with :class:`NpyWriter`, which writes the header first and the data in pieces.

What stays in memory: one chunk of documents and its tokens, the vocabulary (a dict of term strings),
per-document lengths (8 bytes a document), per-term frequencies (8 bytes a term) and one merge block.
Never the corpus text nor all postings. The spill files live in ``ROOT/.build`` and are removed before the
index directory is renamed into place, so an index never contains them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from legalrag.errors import InputError
from legalrag.retrieval.lexical import check_title_mode, document_text
from legalrag.types import Document, DocumentKind

DEFAULT_CHUNK_DOCS = 10_000  # documents tokenised and spilled at a time
MERGE_POSTINGS = 1 << 19  # postings merged at a time (about 50 MB of working arrays with BM25's float64 steps)
SPILL_DIR = ".build"
_KINDS = {k.value: k for k in DocumentKind}


def check_chunk_docs(chunk_docs: int) -> int:
    if not isinstance(chunk_docs, int) or isinstance(chunk_docs, bool) or chunk_docs < 1:
        raise InputError(f"chunk_docs must be a positive number of documents, got {chunk_docs!r}")
    return chunk_docs


class IdHashes:
    """64-bit hashes of the ids seen, in one numpy array (8 bytes a document instead of a set of strings): a
    repeated hash means a repeated id, almost surely; callers confirm with a second pass before refusing."""

    def __init__(self) -> None:
        self._h = np.zeros(1024, dtype=np.uint64)
        self._n = 0

    def add(self, doc_id: str) -> None:
        if self._n == len(self._h):
            self._h = np.concatenate([self._h, np.zeros(len(self._h), dtype=np.uint64)])
        self._h[self._n] = int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "little")
        self._n += 1

    def any_repeated(self) -> bool:
        h = np.sort(self._h[:self._n])
        return bool(np.any(h[1:] == h[:-1]))


def write_documents(path: Path, documents: Iterable[Document]) -> tuple[str, int, int]:
    """Write ``documents`` to ``path`` as JSONL, one at a time; return (sha256, bytes, count). Ids must be unique."""
    h = hashlib.sha256()
    size = count = 0
    ids = IdHashes()
    with path.open("wb") as fh:
        for doc in documents:
            ids.add(doc.id)
            line = (json.dumps(doc.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
            h.update(line)
            size += len(line)
            count += 1
            fh.write(line)
    if ids.any_repeated():
        seen: set[str] = set()
        for doc in iter_documents(path):
            if doc.id in seen:
                raise InputError(f"document id {doc.id!r} appears twice (source {doc.source or 'unknown'}); "
                                 "ids must be unique")
            seen.add(doc.id)
    return h.hexdigest(), size, count


def iter_documents(path: Path) -> Iterator[Document]:
    """The documents of a ``documents.jsonl`` written by :func:`write_documents`, one line at a time."""
    with path.open("rb") as fh:
        for line in fh:
            r = json.loads(line)
            yield Document(r["id"], r["text"], r["title"], _KINDS[r["kind"]], r["source"], r["metadata"])


def iter_chunks(path: Path, chunk_docs: int) -> Iterator[list[Document]]:
    chunk: list[Document] = []
    for doc in iter_documents(path):
        chunk.append(doc)
        if len(chunk) >= chunk_docs:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class NpyWriter:
    """A 1-D ``.npy`` file of known length written in pieces (header first), so it is never whole in memory."""

    def __init__(self, path: Path, dtype: Any, length: int):
        self.path, self.dtype, self.length, self.written = path, np.dtype(dtype), int(length), 0
        self._fh = path.open("wb")
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (self.length,)}
        np.lib.format.write_array_header_1_0(self._fh, header)

    def write(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        self._fh.write(values.tobytes())
        self.written += len(values)

    def close(self) -> None:
        self._fh.close()
        if self.written != self.length:
            raise RuntimeError(f"{self.path}: wrote {self.written} values, expected {self.length}")

    def __enter__(self) -> "NpyWriter":
        return self

    def __exit__(self, exc_type, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self._fh.close()


class SpilledPostings:
    """One tokenisation of the corpus, spilled to disk chunk by chunk (see the module docstring).

    ``vocab``: term -> id, ids in order of first occurrence (as the in-memory ``TokenizedCorpus``);
    ``doc_len``: tokens per document; ``df``: documents per term."""

    def __init__(self, directory: Path, vocab: dict[str, int], doc_len: np.ndarray, df: np.ndarray,
                 chunks: list[Path], merge_postings: int = MERGE_POSTINGS):
        self.directory, self.vocab, self.doc_len, self.df, self.chunks = directory, vocab, doc_len, df, chunks
        self.merge_postings = merge_postings

    @property
    def n_documents(self) -> int:
        return len(self.doc_len)

    @property
    def n_postings(self) -> int:
        return int(self.df.sum())

    @classmethod
    def build(cls, documents_file: Path, n_documents: int, tokenizer, title_mode: str, directory: Path,
              chunk_docs: int = DEFAULT_CHUNK_DOCS, progress: bool = False,
              merge_postings: int = MERGE_POSTINGS) -> "SpilledPostings":
        check_title_mode(title_mode)
        check_chunk_docs(chunk_docs)
        directory.mkdir(parents=True)
        vocab: dict[str, int] = {}
        doc_len = np.zeros(n_documents, dtype=np.int64)
        df = np.zeros(1024, dtype=np.int64)
        chunks: list[Path] = []
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n_documents, desc="tokenize", unit="doc")
        start = 0
        for chunk in iter_chunks(documents_file, chunk_docs):
            flat: list[int] = []
            for i, doc in enumerate(chunk):
                ids = [vocab.setdefault(t, len(vocab)) for t in tokenizer(document_text(doc, title_mode))]
                doc_len[start + i] = len(ids)
                flat.extend(ids)
            n = len(chunk)
            local = np.repeat(np.arange(n, dtype=np.int64), doc_len[start:start + n])
            # one key per token, ordered by term then document: unique keys are the chunk's postings, sorted
            keys, counts = np.unique(np.asarray(flat, dtype=np.int64) * n + local, return_counts=True)
            del flat, local
            terms = keys // n
            if len(vocab) > len(df):
                df = np.concatenate([df, np.zeros(max(len(vocab), 2 * len(df)) - len(df), dtype=np.int64)])
            df[:len(vocab)] += np.bincount(terms, minlength=len(vocab))
            start += n
            if bar is not None:
                bar.update(n)
            if not len(keys):  # no postings (documents without indexable words): nothing to merge
                continue
            path = directory / f"chunk{len(chunks):05d}"
            np.save(f"{path}.terms.npy", terms.astype(np.int32), allow_pickle=False)
            np.save(f"{path}.docs.npy", (keys % n + start - n).astype(np.int32), allow_pickle=False)
            np.save(f"{path}.tf.npy", counts.astype(np.int32), allow_pickle=False)
            chunks.append(path)
        if bar is not None:
            bar.close()
        if start != n_documents:
            raise RuntimeError(f"{documents_file} has {start} documents, expected {n_documents}")
        return cls(directory, vocab, doc_len, df[:len(vocab)].copy(), chunks, merge_postings)

    def blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(terms, documents, counts) of all postings in blocks of at most ``merge_postings`` (or one chunk's
        postings of one term, if more), sorted by term then document."""
        max_postings = self.merge_postings
        ends = np.cumsum(self.df)
        t0 = 0
        while t0 < len(self.df):
            base = ends[t0 - 1] if t0 else 0
            t1 = max(int(np.searchsorted(ends, base + max_postings, side="right")), t0 + 1)
            if t1 == t0 + 1 and self.df[t0] > max_postings:  # one term in many documents: split it by chunks
                yield from self._one_term(t0, max_postings)
            else:
                parts = [self._read(path, t0, t1) for path in self.chunks]
                terms = np.concatenate([p[0] for p in parts])
                # chunks are in document order, each sorted by (term, document): a stable sort by term suffices
                order = np.argsort(terms, kind="stable")
                yield (terms[order], np.concatenate([p[1] for p in parts])[order],
                       np.concatenate([p[2] for p in parts])[order])
            t0 = t1

    def _one_term(self, t: int, max_postings: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        size = 0
        for path in self.chunks:
            part = self._read(path, t, t + 1)
            if size and size + len(part[0]) > max_postings:
                yield tuple(np.concatenate(x) for x in zip(*parts))  # type: ignore[misc]
                parts, size = [], 0
            parts.append(part)
            size += len(part[0])
        if size:
            yield tuple(np.concatenate(x) for x in zip(*parts))  # type: ignore[misc]

    @staticmethod
    def _read(path: Path, t0: int, t1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # memory-mapped and copied slice by slice, so only this block's pages are touched (and then unmapped)
        terms = np.load(f"{path}.terms.npy", mmap_mode="r")
        a, b = int(np.searchsorted(terms, t0)), int(np.searchsorted(terms, t1))
        out = (np.array(terms[a:b]), np.array(np.load(f"{path}.docs.npy", mmap_mode="r")[a:b]),
               np.array(np.load(f"{path}.tf.npy", mmap_mode="r")[a:b]))
        del terms
        return out

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class BuildContext:
    """What component builders share during one build: the documents file (read in chunks), the resolved language,
    the tokenizers, the spilled tokenisations (one per tokenizer and title mode), the progress flag and the
    components built so far (``built``)."""

    def __init__(self, root: Path, documents_file: Path, n_documents: int, lang: str, progress: bool,
                 make_encoder: Callable[..., Any], chunk_docs: int = DEFAULT_CHUNK_DOCS,
                 merge_postings: int = MERGE_POSTINGS):
        self.root = root
        self.documents_file = documents_file
        self.n_documents = n_documents
        self.progress = progress
        self.encoder = make_encoder
        self.chunk_docs = check_chunk_docs(chunk_docs)
        self.merge_postings = merge_postings
        self.built: dict[str, dict[str, Any]] = {}
        self._lang = lang
        self._documents: Sequence[Document] | None = None
        self._tokenizers: dict[tuple, Any] = {}
        self._postings: dict[tuple, SpilledPostings] = {}

    @property
    def documents(self) -> Sequence[Document]:
        """All documents as a lazy list (for components that need random access, e.g. dense encoders)."""
        if self._documents is None:
            from legalrag.retrieval.docstore import LazyDocuments

            self._documents = LazyDocuments(self.documents_file, self.n_documents)
        return self._documents

    @property
    def lang(self) -> str:
        if self._lang == "auto":
            from legalrag.retrieval.tokenize import detect_lang

            self._lang = detect_lang(d.text for d in iter_documents(self.documents_file))
        return self._lang

    def tokenizer(self, **options: Any):
        from legalrag.retrieval.tokenize import tokenizer_for

        key = tuple(sorted(options.items()))
        if key not in self._tokenizers:
            self._tokenizers[key] = tokenizer_for(self.lang, **options)
        return self._tokenizers[key]

    def postings(self, tokenizer, title_mode: str) -> SpilledPostings:
        """The corpus tokenised once per (tokenizer config, title_mode) and spilled, shared by BM25 and QLD."""
        key = (tokenizer.config, title_mode)
        if key not in self._postings:
            directory = self.root / SPILL_DIR / f"tokens{len(self._postings)}"
            self._postings[key] = SpilledPostings.build(self.documents_file, self.n_documents, tokenizer,
                                                        title_mode, directory, self.chunk_docs, self.progress,
                                                        self.merge_postings)
        return self._postings[key]

    def cleanup(self) -> None:
        """Remove the spill files (before the index directory is renamed into place)."""
        shutil.rmtree(self.root / SPILL_DIR, ignore_errors=True)
        self._postings.clear()
