import json

import pytest

from legalrag.errors import InputError
from legalrag.evaluation.datasets import QueryFields, load_queries
from legalrag.evaluation.runs import evaluate_retrieval, read_trec_run, save_run, write_trec_run
from legalrag.retrieval.bm25 import BM25Retriever
from legalrag.types import Document, Hit

DOCS = [
    Document(id="10", text="用人单位应当与劳动者订立书面劳动合同。", title="中华人民共和国劳动合同法第十条",
             metadata={"law": "中华人民共和国劳动合同法"}),
    Document(id="11", text="出租人应当履行租赁物的维修义务。", title="中华人民共和国民法典第七百一十二条",
             metadata={"law": "中华人民共和国民法典"}),
    Document(id="12", text="借款人应当按照约定的期限返还借款。", title="合伙企业法第四条", metadata={"law": "合伙企业法"}),
]


def write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n"
                            for r in rows), encoding="utf-8")
    return path


def test_gold_ids_and_gold_names(tmp_path):
    p = write(tmp_path / "q.jsonl", [
        {"query_id": 1, "query": "没签劳动合同怎么办", "gold_ids": [10]},
        {"query_id": 2, "query": "房东不修房子", "gold_names": ["《中华人民共和国民法典》第七百一十二条", "合伙企业法第四条"]},
        {"query_id": 3, "query": "两个都有", "gold_ids": ["11"], "gold_names": ["合伙企业法第四条"]},
    ])
    qs = load_queries(p, DOCS)
    assert [q.id for q in qs] == ["1", "2", "3"]
    assert qs[0].gold_ids == ("10",) and qs[1].gold_ids == ("11", "12")
    assert qs[2].gold_ids == ("11",)  # gold_ids win when both are given


def test_field_mapping_like_judge(tmp_path):
    p = write(tmp_path / "judge.jsonl", [{"text_id": "abc", "text": "被告人盗窃", "la": [12, 10]}])
    qs = load_queries(p, DOCS, QueryFields.parse("query_id=text_id,query=text,gold_ids=la"))
    assert qs[0].id == "abc" and qs[0].gold_ids == ("12", "10")
    with pytest.raises(InputError, match="bad query field mapping"):
        QueryFields.parse("qid=x")


@pytest.mark.parametrize("row,field,message", [
    ({"query_id": 1, "query": "x", "gold_ids": [99]}, "gold_ids", "gold id '99' is not in the corpus"),
    ({"query_id": 1, "query": "x", "gold_names": ["刑法第一条"]}, "gold_names", "matches no document title"),
    ({"query_id": 1, "gold_ids": [10]}, "query", "missing or empty query text"),
    ({"query_id": 1, "query": "x"}, "gold_ids", "no gold documents"),
    ({"query_id": 1, "query": "x", "gold_ids": 10}, "gold_ids", "expected a list"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, row, field, message):
    p = write(tmp_path / "q.jsonl", [{"query_id": 0, "query": "好的", "gold_ids": [10]}, row])
    with pytest.raises(InputError) as exc:
        load_queries(p, DOCS)
    text = str(exc.value)
    assert f"q.jsonl:2 (field '{field}')" in text and message in text


def test_bad_json_repeated_id_and_empty_file(tmp_path):
    p = write(tmp_path / "q.jsonl", [{"query_id": 0, "query": "a", "gold_ids": [10]}, "{oops"])
    with pytest.raises(InputError, match=r"q.jsonl:2: not valid JSON"):
        load_queries(p, DOCS)
    p = write(tmp_path / "q.jsonl", [{"query_id": 0, "query": "a", "gold_ids": [10]},
                                     {"query_id": 0, "query": "b", "gold_ids": [11]}])
    with pytest.raises(InputError, match="appears twice"):
        load_queries(p, DOCS)
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no queries"):
        load_queries(tmp_path / "empty.jsonl", DOCS)
    with pytest.raises(InputError, match="file not found"):
        load_queries(tmp_path / "nope.jsonl", DOCS)
    p = write(tmp_path / "n.jsonl", [{"query_id": 0, "query": "a", "gold_names": ["合伙企业法第四条"]}])
    with pytest.raises(InputError, match="need a corpus"):
        load_queries(p)


def test_evaluate_and_save_run(tmp_path):
    p = write(tmp_path / "q.jsonl", [
        {"query_id": "q1", "query": "没签书面劳动合同", "gold_ids": [10]},
        {"query_id": "q2", "query": "出租人不履行维修义务", "gold_ids": [11, 12]},
    ])
    qs = load_queries(p, DOCS)
    r = BM25Retriever.from_documents(DOCS, lang="zh")
    res = evaluate_retrieval(r, qs, k=2, ks=(1, 2))
    assert res.metrics["n_queries"] == 2
    assert res.metrics["hit@1"] == 1.0 and res.metrics["recall@2"] == pytest.approx((1 + 0.5) / 2)
    assert res.per_query["q2"]["recall@1"] == 0.5
    out = save_run(tmp_path / "run", res.hits, res.metrics, {"k": 2}, per_query=res.per_query, tag="bm25")
    assert sorted(x.name for x in out.iterdir()) == ["manifest.json", "metrics.json", "per_query.jsonl", "run.trec"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["legalrag_version"] and manifest["parameters"] == {"k": 2}
    assert read_trec_run(out / "run.trec") == {q: [h.id for h in hs] for q, hs in res.hits.items()}
    line = (out / "run.trec").read_text(encoding="utf-8").splitlines()[0].split()
    assert line[0] == "q1" and line[1] == "Q0" and line[3] == "1" and line[5] == "bm25"


def test_trec_run_bad_input(tmp_path):
    hit = Hit(document=DOCS[0], score=1.0, rank=1)
    with pytest.raises(InputError, match="without spaces"):
        write_trec_run(tmp_path / "r.trec", {"a b": [hit]})
    (tmp_path / "bad.trec").write_text("q1 Q0 d1 1 0.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.trec:1"):
        read_trec_run(tmp_path / "bad.trec")


def test_stard_training_queries_resolve_by_id_and_by_name(shared_data):
    from legalrag.corpora.statutes import load_statutes

    docs = load_statutes(shared_data / "stard" / "corpus.jsonl")
    qs = load_queries(shared_data / "stard" / "train.jsonl", docs)
    assert len(qs) == 1234 and all(q.gold_ids for q in qs)
    by_name = load_queries(shared_data / "stard" / "train.jsonl", docs,
                           QueryFields(gold_ids="no_such_field"))  # forces resolution through gold_names
    assert [q.gold_ids for q in by_name] == [q.gold_ids for q in qs]
