"""The Milvus collections behind one alias: connecting, the schema, writing rows, the atomic alias swap.

See the package docstring for the collection layout and the build protocol.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from legalrag._optional import require
from legalrag.errors import IndexError_, InputError
from legalrag.retrieval.encoders import unit_rows
from legalrag.retrieval.milvus.rows import INSERT_BATCH, VARCHAR_MAX, iter_rows, size_of
from legalrag.types import Document

SCHEMA_VERSION = 1
EMBEDDED = "milvus.db"  # the Milvus Lite database inside the index directory when no URI is given
PROP_SCHEMA, PROP_MODEL, PROP_DIM = "legalrag.schema", "legalrag.model_id", "legalrag.dimension"
PROP_FULL_TEXT = "legalrag.full_text"  # "1" when the collection holds the engine's BM25 field
FULL_TEXT_SINCE = (2, 5)  # Milvus server versions before 2.5 have no BM25 function (Milvus Lite has one)
HASH_PAGE = 1000
DROP_GRACE_S = 2.0  # seconds between moving a server's alias and dropping the collection it left
ENGINE_INDEXES = ("FLAT", "HNSW", "IVF_FLAT")
DEFAULT_INDEX_PARAMS = {"FLAT": {}, "HNSW": {"M": 32, "efConstruction": 200}, "IVF_FLAT": {"nlist": 128}}


def _pymilvus():
    return require("pymilvus", "scale")


def is_embedded(uri: str) -> bool:
    """A Milvus Lite database path (pymilvus's own rule: a local path ending in ``.db``)."""
    return uri.endswith(".db") and "://" not in uri


def _listening(uri: str, timeout: float = 2.0) -> bool:
    """Whether something accepts TCP connections at the URI's host and port (tells a refused login from a
    server that is not there: pymilvus reports both as "Fail connecting")."""
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(uri if "://" in uri else f"http://{uri}")
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 19530), timeout=timeout):
            return True
    except OSError:
        return False


def connect(uri: str, *, token: str = "", timeout: float = 10.0):
    """A ``MilvusClient`` for ``uri``; an engine that cannot be reached, or that refuses the credentials, is an
    IndexError_ naming the URI (never the credentials)."""
    pm = _pymilvus()
    if is_embedded(uri):
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    try:
        return pm.MilvusClient(uri=uri, token=token, timeout=timeout)
    except Exception as exc:  # pymilvus raises MilvusException, grpc errors or OSError for a dead address
        if is_embedded(uri):
            hint = "check that the path is writable and not used by another process (Milvus Lite locks it)"
        elif _listening(uri):
            hint = ("the server is up but refused the connection: check the credentials (" +
                    ("a token was sent" if token else "none were sent") + f"; set {TOKEN_ENV}=USER:PASSWORD or "
                    f"{USER_ENV} and {PASSWORD_ENV} in the environment, never on the command line) and TLS")
        else:
            hint = "check that the Milvus server is running and the URI (host:port) is right"
        raise IndexError_(f"cannot reach Milvus at {uri}: {_short(exc)}; {hint}") from None


TOKEN_ENV, USER_ENV, PASSWORD_ENV = "LEGALRAG_MILVUS_TOKEN", "LEGALRAG_MILVUS_USER", "LEGALRAG_MILVUS_PASSWORD"


def token_from_env(token_env: str | None = None) -> str:
    """The Milvus credentials from the environment: ``$token_env`` (default ``LEGALRAG_MILVUS_TOKEN``; an API key
    or ``user:password``), else ``LEGALRAG_MILVUS_USER`` and ``LEGALRAG_MILVUS_PASSWORD``. Indexes record the
    variable's name, never its value."""
    import os

    token = os.environ.get(token_env or TOKEN_ENV, "")
    if token:
        return token
    user = os.environ.get(USER_ENV, "")
    return f"{user}:{os.environ.get(PASSWORD_ENV, '')}" if user else ""


def server_version(client) -> str:
    try:
        return str(client.get_server_version())
    except Exception:
        return "unknown"


def has_full_text(version: str) -> bool:
    """Whether an engine of this version runs BM25 itself: Milvus Lite and Milvus 2.5 or later."""
    if version.startswith("milvus_lite"):
        return True
    m = re.match(r"v?(\d+)\.(\d+)", version)
    return m is None or (int(m.group(1)), int(m.group(2))) >= FULL_TEXT_SINCE


def release(uri: str) -> None:
    """Stop this process's Milvus Lite server for ``uri`` (needed before its directory is renamed)."""
    if is_embedded(uri):
        try:
            from milvus_lite import server_manager_instance
        except ImportError:
            return
        server_manager_instance.release_server(uri)


def index_params_for(engine_index: str, index_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The build parameters of the vector index: ``index_params`` over the type's defaults (HNSW: M 32,
    efConstruction 200; IVF_FLAT: nlist 128, the engine's own default). Unknown types and non-numeric values are
    refused before anything is written."""
    if engine_index not in ENGINE_INDEXES:
        raise InputError(f"unknown Milvus index type {engine_index!r}; use one of {', '.join(ENGINE_INDEXES)}")
    params = {**DEFAULT_INDEX_PARAMS[engine_index], **(index_params or {})}
    bad = {k: v for k, v in params.items() if isinstance(v, bool) or not isinstance(v, (int, float))}
    if bad:
        raise InputError(f"Milvus {engine_index} index parameters must be numbers, got {bad}")
    if engine_index == "FLAT" and params:
        raise InputError(f"a Milvus FLAT index takes no parameters, got {params}")
    return params


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]


class MilvusStore:
    """One alias on one Milvus: creating, filling and swapping its collections, reading its metadata."""

    def __init__(self, uri: str, alias: str, *, token: str = "", timeout: float = 10.0, client: Any = None):
        self.uri, self.alias = uri, alias
        self.client = client if client is not None else connect(uri, token=token, timeout=timeout)
        self.version = server_version(self.client)
        self.full_text = has_full_text(self.version)

    # -- metadata ------------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.alias in self._aliases() or self.client.has_collection(self.alias)

    def _aliases(self) -> list[str]:
        try:
            return list(self.client.list_aliases().get("aliases", []))
        except Exception:
            return []

    def current(self) -> str | None:
        """The physical collection the alias points to (None when there is none)."""
        if self.alias in self._aliases():
            return self.client.describe_alias(self.alias)["collection_name"]
        return None

    def meta(self) -> dict[str, Any]:
        """The legalrag properties of the collection behind the alias (schema version, model id, dimension)."""
        if not self.exists():
            raise IndexError_(f"Milvus at {self.uri} has no collection {self.alias!r}; build it with "
                              f"`legalrag index build -o backend=milvus -o uri={self.uri} -o collection={self.alias}`")
        info = self.client.describe_collection(self.alias)
        props = dict(info.get("properties") or {})
        dim = next((int(f["params"]["dim"]) for f in info["fields"] if f["name"] == "vec"), None)
        return {"schema": props.get(PROP_SCHEMA), "model_id": props.get(PROP_MODEL) or None, "dimension": dim,
                "collection": info.get("collection_name", self.alias),
                "full_text": any(f["name"] == "sparse" for f in info["fields"]),
                "fields": [f"{f['name']}:{getattr(f['type'], 'name', f['type'])}" for f in info["fields"]]}

    def check_replaceable(self) -> None:
        """Refuse to build over an alias (or a collection of that name) that is not a legalrag collection:
        swapping the alias would drop someone else's data. Names both sides."""
        if not self.exists():
            return
        meta = self.meta()
        if meta["schema"] is None:
            raise InputError(f"Milvus at {self.uri}: {self.alias!r} is the collection {meta['collection']!r} "
                             f"(fields {', '.join(meta['fields'])}), not a legalrag collection (no {PROP_SCHEMA} "
                             "property); legalrag will not replace it: choose another --collection name")

    def check(self, model_id: str | None, dimension: int | None) -> dict[str, Any]:
        """Refuse a collection of another schema version, encoder or dimension, naming both sides."""
        meta = self.meta()
        if str(meta["schema"]) != str(SCHEMA_VERSION):
            raise IndexError_(
                f"the Milvus collection {self.alias!r} at {self.uri} has legalrag schema version {meta['schema']!r}, "
                f"this legalrag reads version {SCHEMA_VERSION}; migrate it by rebuilding: `legalrag index build "
                f"-o backend=milvus -o uri={self.uri} -o collection={self.alias} --corpus FILE --out DIR` (the alias "
                "keeps serving the old collection until the new one is complete)")
        if model_id is not None and meta["model_id"] != model_id:
            raise InputError(f"the Milvus collection {self.alias!r} at {self.uri} was built with encoder "
                             f"{meta['model_id']!r}, not {model_id!r}; use --encoder for {meta['model_id']!r} or "
                             "rebuild the collection with the encoder you want")
        if dimension is not None and meta["dimension"] != int(dimension):
            raise InputError(f"the Milvus collection {self.alias!r} at {self.uri} holds {meta['dimension']}-d "
                             f"vectors, the encoder {model_id!r} gives {dimension}-d vectors; rebuild the collection")
        return meta

    # -- building -------------------------------------------------------------------------------------------
    def create(self, *, model_id: str | None, dimension: int | None, engine_index: str = "FLAT",
               index_params: dict[str, Any] | None = None, analyzer: dict[str, Any] | None = None,
               bm25_k1: float = 1.2, bm25_b: float = 0.75) -> str:
        """A new, empty physical collection for this alias (not yet serving); returns its name."""
        pm = _pymilvus()
        vec_params = index_params_for(engine_index, index_params)
        name = f"{self.alias}__{time.time_ns() // 1_000_000}"
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False,
                                           description="legalrag index collection")
        schema.add_field("id", pm.DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("law", pm.DataType.VARCHAR, max_length=1024)
        schema.add_field("article", pm.DataType.VARCHAR, max_length=128)
        schema.add_field("title", pm.DataType.VARCHAR, max_length=4096)
        schema.add_field("sha", pm.DataType.VARCHAR, max_length=64)
        index_params = self.client.prepare_index_params()
        if self.full_text:
            schema.add_field("content", pm.DataType.VARCHAR, max_length=VARCHAR_MAX, enable_analyzer=True,
                             analyzer_params=analyzer or {"tokenizer": {"type": "jieba", "mode": "search"}})
            schema.add_field("sparse", pm.DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(pm.Function(name="content_bm25", function_type=pm.FunctionType.BM25,
                                            input_field_names=["content"], output_field_names=["sparse"]))
            index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                                   params={"bm25_k1": bm25_k1, "bm25_b": bm25_b})
        else:  # the text is stored; BM25 runs in legalrag (see components.build_bm25_component)
            schema.add_field("content", pm.DataType.VARCHAR, max_length=VARCHAR_MAX)
        if dimension:
            schema.add_field("vec", pm.DataType.FLOAT_VECTOR, dim=int(dimension))
            index_params.add_index(field_name="vec", index_type=engine_index, metric_type="IP", params=vec_params)
        if not dimension and not self.full_text:
            raise InputError(f"Milvus {self.version} at {self.uri} has no server-side BM25 (it needs Milvus "
                             f"{'.'.join(map(str, FULL_TEXT_SINCE))}) and no encoder was given: there is nothing "
                             "for the engine to index; give --encoder, or build BM25 with -o backend=local")
        props = {PROP_SCHEMA: str(SCHEMA_VERSION), PROP_MODEL: model_id or "", PROP_DIM: str(dimension or 0),
                 PROP_FULL_TEXT: "1" if self.full_text else "0"}
        self.client.create_collection(name, schema=schema, index_params=index_params, properties=props)
        return name

    def insert(self, collection: str, rows: Iterable[dict[str, Any]], progress: bool = False,
               total: int | None = None, batch_size: int | None = None) -> int:
        """Write ``rows`` (any iterable, consumed once) in batches of ``batch_size`` (default
        :data:`INSERT_BATCH`); returns how many."""
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=total if total is not None else size_of(rows), desc=f"milvus insert ({collection})",
                       unit="doc")
        written, it = 0, iter(rows)
        while chunk := list(itertools.islice(it, batch_size or INSERT_BATCH)):
            self.client.insert(collection, chunk)
            written += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return written

    def publish(self, collection: str, expected: int) -> None:
        """Check ``collection`` holds ``expected`` rows, load it, point the alias at it, drop the old one."""
        self.client.flush(collection)
        self.client.load_collection(collection)
        count = self.count(collection)
        if count != expected:
            raise IndexError_(f"the new Milvus collection {collection!r} at {self.uri} holds {count} rows, "
                              f"{expected} were written; the alias {self.alias!r} still serves the previous one")
        old = self.current()
        if old is None:
            if self.client.has_collection(self.alias):
                raise InputError(f"Milvus at {self.uri} has a collection named {self.alias!r} that is not a "
                                 "legalrag alias; choose another --collection name")
            self.client.create_alias(collection, self.alias)
        else:
            self.client.alter_alias(collection, self.alias)
            if not is_embedded(self.uri):
                # A search the server routed to the old collection just before the swap answers empty (not
                # an error) if the collection is dropped under it: let such searches finish first.
                time.sleep(DROP_GRACE_S)
            self.client.drop_collection(old)

    def discard(self, collection: str) -> None:
        try:
            self.client.drop_collection(collection)
        except Exception:  # the engine went away: nothing more to clean up from here
            pass

    def count(self, collection: str | None = None) -> int:
        # Strong here and in hashes(): the build's check and a sync must see every write. Searches keep the
        # collection's default (Bounded): Strong made each search on a busy server wait for the time tick
        # (p50 2 s at 100k on the loaded 2-core machine); a write shows in searches within seconds.
        res = self.client.query(collection or self.alias, filter="", output_fields=["count(*)"],
                                consistency_level="Strong")
        return int(res[0]["count(*)"])

    def hashes(self) -> dict[str, str]:
        """Every document id in the collection and its content hash (read with Strong consistency, paged by
        primary key: pymilvus's query_iterator falls back to a client-side timestamp on a 2.3 server and then
        misses the latest writes). Checked against the row count, so a page lost is an error, not a gap."""
        out: dict[str, str] = {}
        last: str | None = None
        while True:
            flt = 'id != ""' if last is None else f"id > {json.dumps(last, ensure_ascii=False)}"
            page = self.client.query(self.alias, filter=flt, output_fields=["id", "sha"], limit=HASH_PAGE,
                                     consistency_level="Strong")
            if not page:
                break
            out.update({r["id"]: r["sha"] for r in page})
            last = max(r["id"] for r in page)
        total = self.count()
        if len(out) != total:
            raise IndexError_(f"read {len(out)} document hashes from {self.alias!r} at {self.uri}, which holds "
                              f"{total} rows; run the sync again")
        return out


def build_collection(store: MilvusStore, documents: Iterable[Document], encoder: Any = None, *,
                     vectors: Any = None, max_chars: int = 512, engine_index: str = "FLAT",
                     index_params: dict[str, Any] | None = None, bm25_k1: float = 1.2, bm25_b: float = 0.75,
                     progress: bool = False, batch_size: int | None = None) -> str:
    """Encode (when ``encoder`` is given) and write ``documents`` to a new collection, then swap the alias to it.

    ``documents`` may be any iterable: it is consumed once, batch by batch, and rows are built and sent a batch at
    a time. ``vectors`` (precomputed, aligned with the documents: an array or a ``np.memmap``, read a batch at a
    time) replaces the encoding; ``encoder`` then only names the model and dimension the collection records.
    ``index_params``: the vector index's build parameters (see :func:`index_params_for`). ``batch_size``: rows
    per insert call (default :data:`INSERT_BATCH`); the client holds one batch of rows at a time.

    On any failure the new collection is dropped and the alias keeps serving the previous one."""
    from legalrag.retrieval.dense import passage_text

    store.check_replaceable()
    index_params_for(engine_index, index_params)  # refuse bad parameters before anything is encoded
    if batch_size is not None and batch_size < 1:
        raise InputError(f"batch_size must be at least 1, got {batch_size}")
    if vectors is not None:
        if encoder is None:
            raise InputError("precomputed vectors need the encoder they came from (its model id and dimension)")
        shape = tuple(getattr(vectors, "shape", ()))
        if len(shape) != 2 or shape[1] != int(encoder.dimension):
            raise InputError(f"precomputed vectors of shape {shape} for encoder {encoder.model_id!r}, expected "
                             f"(n, {encoder.dimension})")
        n, m = size_of(documents), size_of(vectors)
        if n is not None and m is not None and n != m:
            raise InputError(f"{m} precomputed vectors for {n} documents")
    elif encoder is not None:  # encode first: a long encoding failure then leaves nothing in the engine
        documents = documents if isinstance(documents, Sequence) else list(documents)
        vectors = unit_rows(encoder.encode_documents([passage_text(d, max_chars) for d in documents]))
        if vectors.ndim != 2 or vectors.shape[1] != int(encoder.dimension):
            raise InputError(f"encoder {encoder.model_id!r} gave vectors of shape {tuple(vectors.shape)}, "
                             f"expected (n, {encoder.dimension})")
    name = store.create(model_id=getattr(encoder, "model_id", None),
                        dimension=int(encoder.dimension) if encoder is not None else None,
                        engine_index=engine_index, index_params=index_params, bm25_k1=bm25_k1, bm25_b=bm25_b)
    try:
        written = store.insert(name, iter_rows(documents, vectors, batch=batch_size), progress=progress,
                               total=size_of(documents), batch_size=batch_size)
        store.publish(name, written)
    except BaseException:
        store.discard(name)
        raise
    return name
