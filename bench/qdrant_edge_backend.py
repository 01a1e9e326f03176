"""Qdrant Edge (``qdrant-edge-py``, Qdrant's Rust engine run inside the process) as a benchmark backend for
bench/bench_scale.py: the measured alternative to the Milvus backend (issue 21). A thin adapter, not a
legalrag index component: it builds a shard from documents and precomputed vectors and answers
``retrieve(query, k)`` like a Retriever.

Layout: one shard per index directory with a named dense vector ``dense`` (cosine; exact search for
``qdrant-flat``, the engine's HNSW for ``qdrant-hnsw``) or a sparse vector ``bm25`` (Qdrant's BM25 model with
its multilingual tokenizer, which segments Chinese, and the engine's IDF modifier) for ``qdrant-bm25``. The
payload holds the document id.
"""

from __future__ import annotations

from pathlib import Path

from legalrag.types import Hit

BATCH = 1000
HNSW_M, HNSW_EF_CONSTRUCT, HNSW_EF = 32, 200, 128  # the FAISS HNSW settings' order of magnitude


def _qe():
    from legalrag._optional import require

    return require("qdrant_edge", "scale")


def _bm25_model(avg_len: float):
    qe = _qe()
    return qe.Bm25(qe.Bm25Config(tokenizer=qe.TokenizerType.Multilingual, language="chinese", avg_len=avg_len))


class QdrantEdgeIndex:
    def __init__(self, shard, documents, kind: str, query_vectors=None, bm25=None):
        self.shard, self.documents, self.kind = shard, documents, kind
        self.name = f"qdrant-{kind}"
        self._qv, self._bm25 = query_vectors, bm25

    @classmethod
    def build(cls, path: Path, kind: str, documents, texts, vectors=None, query_vectors=None):
        """``kind``: flat | hnsw | bm25. ``texts``: what each document is indexed as; ``query_vectors``: text ->
        vector for dense queries (so that the engine, not an encoder, is timed)."""
        qe = _qe()
        if kind == "bm25":
            probe = _bm25_model(256.0)  # unique tokens per document, to set BM25's average length
            sample = texts[:: max(1, len(texts) // 2000)]
            avg = sum(len(probe.embed_query(t).indices) for t in sample) / max(1, len(sample))
            bm25 = _bm25_model(avg)
            cfg = qe.EdgeConfig(sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                                wal_enabled=False)
        else:
            bm25 = None
            hnsw = qe.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                      full_scan_threshold=10 if kind == "hnsw" else 10**9, max_indexing_threads=1)
            cfg = qe.EdgeConfig(vectors={"dense": qe.EdgeVectorParams(size=int(vectors.shape[1]),
                                                                     distance=qe.Distance.Cosine)},
                                hnsw_config=hnsw, max_search_threads=1, wal_enabled=False)
        # no write-ahead log: a full build is durable once flush() returns, and the WAL would only slow it
        shard = qe.EdgeShard.create(str(path), cfg)
        for start in range(0, len(documents), BATCH):
            points = []
            for i in range(start, min(start + BATCH, len(documents))):
                vec = {"bm25": bm25.embed_document(texts[i])} if bm25 else {"dense": vectors[i].tolist()}
                points.append(qe.Point(i, vec, {"id": documents[i].id}))
            shard.update(qe.UpdateOperation.upsert_points(points))
        shard.flush()
        shard.optimize()  # builds the HNSW graph (and merges segments) before any query
        return cls(shard, list(documents), kind, query_vectors, bm25)

    def _request(self, query: str, k: int):
        qe = _qe()
        if self.kind == "bm25":
            return qe.QueryRequest(limit=k, query=qe.Query.Nearest(self._bm25.embed_query(query), using="bm25"))
        return qe.QueryRequest(limit=k, query=qe.Query.Nearest(self._qv(query).tolist(), using="dense"),
                               params=qe.SearchParams(exact=self.kind == "flat", hnsw_ef=HNSW_EF))

    def _hits(self, points):
        return [Hit(self.documents[int(p.id)], float(p.score), rank=r + 1, retriever=self.name)
                for r, p in enumerate(points)]

    def retrieve(self, query: str, k: int = 10, filter=None):
        return self._hits(self.shard.query(self._request(query, k)))

    def retrieve_batch(self, queries, k: int = 10, filter=None):
        batch = _qe().QueryBatchRequest([self._request(q, k) for q in queries])
        return [self._hits(points) for points in self.shard.query_batch(batch)]

    def close(self) -> None:
        self.shard.close()
