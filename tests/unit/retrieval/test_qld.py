import math

import numpy as np
import pytest

from legalrag.errors import InputError
from legalrag.retrieval.base import law_title_filter
from legalrag.retrieval.lexical import TokenizedCorpus
from legalrag.retrieval.qld import QLDRetriever
from legalrag.retrieval.tokenize import tokenizer_for
from legalrag.types import Document

ROWS = [
    ("a1", "Lease", "the landlord shall repair the leased house and the house roof"),
    ("a2", "Lease", "the tenant shall pay rent on time every month"),
    ("b1", "Labour", "an employer shall sign a written labour contract with the worker"),
    ("b2", "Labour", "wages shall be paid monthly to the worker in money"),
    ("c1", "Loan", "a borrower shall repay the loan and interest on time"),
    ("c2", "Loan", "interest on a private loan above the legal cap is not protected interest"),
]


def docs():
    return [Document(id=i, text=t, title=law, metadata={"law": law}) for i, law, t in ROWS]


def brute_force_log_likelihood(token_docs, query_tokens, mu):
    total = sum(map(len, token_docs))
    out = []
    for d in token_docs:
        s = 0.0
        for t in query_tokens:
            cf = sum(x.count(t) for x in token_docs)
            if not cf:
                continue  # out-of-vocabulary query terms are ignored
            s += math.log((d.count(t) + mu * cf / total) / (len(d) + mu))
        out.append(s)
    return np.array(out)


@pytest.mark.parametrize("mu", [1.0, 50.0, 2000.0])
def test_scores_are_the_dirichlet_log_likelihood(mu):
    tok = tokenizer_for("en", stemmer=None)
    d = docs()
    r = QLDRetriever.from_documents(d, tok, mu=mu, title_mode="none")
    token_docs = [tok(x.text) for x in d]
    for query in ["interest on a loan interest", "worker wages", "house repair unknownword"]:
        expected = brute_force_log_likelihood(token_docs, tok(query), mu)
        np.testing.assert_allclose(r.log_likelihood(query), expected, rtol=1e-5)
        hits = r.retrieve(query, k=10)
        matching = [i for i, td in enumerate(token_docs) if set(td) & set(tok(query))]
        assert {h.id for h in hits} == {d[i].id for i in matching}  # only documents sharing a term
        for h in hits:
            assert h.score == pytest.approx(expected[[x.id for x in d].index(h.id)], rel=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_length_normalisation_prefers_the_focused_document():
    r = QLDRetriever.from_documents(docs(), lang="en", mu=10)
    assert r.retrieve("loan interest", k=1)[0].id == "c2"  # interest twice in c2


def test_filter_batch_and_round_trip(tmp_path):
    d = docs()
    r = QLDRetriever.from_documents(d, lang="en", mu=100)
    hits = r.retrieve("worker interest house", k=2, filter=law_title_filter(["Loan"]))
    assert {h.id for h in hits} == {"c1", "c2"}
    qs = ["worker", "interest loan", "rent", "nothing matches zzz"]
    assert r.retrieve_batch(qs, k=3) == [r.retrieve(q, k=3) for q in qs]
    assert r.retrieve("zzz", k=3) == []
    r.save(tmp_path / "qld")
    again = QLDRetriever.load(tmp_path / "qld", d)
    assert again.params == r.params
    assert again.retrieve("interest loan", k=3) == r.retrieve("interest loan", k=3)
    other_mu = QLDRetriever.load(tmp_path / "qld", d, mu=5.0)
    assert other_mu.mu == 5.0


def test_shares_a_tokenisation_with_bm25():
    from legalrag.retrieval.bm25 import BM25Retriever

    d = docs()
    tok = tokenizer_for("en")
    tc = TokenizedCorpus.build(d, tok, title_mode="law")
    q = QLDRetriever.from_documents(d, tok, tokens=tc)
    b = BM25Retriever.from_documents(d, tok, tokens=tc)
    assert q.vocab == b.model.vocab_dict
    assert q.counts.shape == (len(d), len(tc.vocab))


def test_bad_inputs():
    with pytest.raises(InputError, match="mu"):
        QLDRetriever.from_documents(docs(), lang="en", mu=0)
    with pytest.raises(InputError, match="no documents"):
        QLDRetriever.from_documents([], lang="en")
    with pytest.raises(InputError, match="no indexable words"):
        QLDRetriever.from_documents([Document(id="x", text="the of a")], lang="en")
