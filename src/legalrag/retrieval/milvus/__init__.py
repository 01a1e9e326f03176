"""Milvus as an index backend: dense vectors and BM25 full-text in one collection, behind the Retriever API.

One client API (pymilvus) covers both the embedded engine (Milvus Lite: a ``*.db`` path) and a standalone or
distributed Milvus server (``http://host:19530``), so the same component serves tests and production.

Collection layout (schema version :data:`SCHEMA_VERSION`, recorded in the collection's properties with the
encoder's model id and dimension): ``id`` (primary key, the document id), ``law`` and ``article``
(filterable scalars), ``title``, ``content`` (law title + text, analysed with jieba for BM25), ``sparse``
(filled by the engine's BM25 function), ``sha`` (content hash, so a sync skips unchanged documents) and, when
an encoder is given, ``vec`` (L2-normalised, inner product = cosine).

Atomic rebuilds: every build writes a new physical collection ``<alias>__<timestamp>`` and only when it is
complete (all rows inserted, counted and loaded) moves the alias to it and drops the previous one. A build
that fails leaves the alias, and so every reader, on the previous collection. Readers query the alias.

Index components (see ``retrieval/index.py``): ``milvus`` builds the collection (dense retrieval when it has
an encoder, else BM25) and ``milvus-bm25`` searches the full-text field of a sibling ``milvus`` component's
collection, so a ``hybrid`` component fuses the two exactly as it fuses local ``bm25`` and ``dense``.
"""

from legalrag.retrieval.milvus.components import (build_bm25_component, build_component, load_bm25_component,
                                                  load_component)
from legalrag.retrieval.milvus.retriever import FilterTranslator, MilvusRetriever
from legalrag.retrieval.milvus.rows import content_text, doc_sha, iter_rows, rows_for
from legalrag.retrieval.milvus.store import (EMBEDDED, ENGINE_INDEXES, PROP_DIM, PROP_MODEL, PROP_SCHEMA,
                                             SCHEMA_VERSION, MilvusStore, build_collection, connect, has_full_text,
                                             index_params_for, is_embedded, release, token_from_env)

__all__ = ["EMBEDDED", "ENGINE_INDEXES", "PROP_DIM", "PROP_MODEL", "PROP_SCHEMA", "SCHEMA_VERSION",
           "FilterTranslator", "MilvusRetriever", "MilvusStore", "build_bm25_component", "build_collection",
           "build_component", "connect", "content_text", "doc_sha", "has_full_text", "index_params_for",
           "is_embedded", "iter_rows", "load_bm25_component", "load_component", "release", "rows_for",
           "token_from_env"]
