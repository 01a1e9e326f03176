"""Time `corpus update` (national_versions.update_corpus): the whole 2023-06-05 -> 2025-04-19 difference, then one
changed law, into a fresh data folder; the shipped corpus's vectors are reused, only new passages encoded.

    LEGALRAG_DATA=../shared/data nice -n 10 python bench/laws/bench_update.py --out bench/results/laws-update.json

The first update's new passages come from the vector cache when the shipped versions were built on the same
machine (tools/build_laws_data.py); their encoding time is recorded there, in src/legalrag/data/cn-law/laws.json.
The second update changes one article of one law (公司法 2023, 第四十七条: 五年 -> 三年) in a copy of the
checkout, so exactly one passage is encoded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from legalrag.evaluation.record import write_result


def _command(args) -> str:
    """This run's command, with the data folder (a temp folder or --home) named HOME."""
    home = " --home HOME" if args.home else ""
    return f"python bench/laws/bench_update.py{home} --out {args.out}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laws", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", "../shared/data")) / "laws-2025")
    ap.add_argument("--home", type=Path, help="keep the data folder here (default: a temp folder, removed)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.national import national_law
    from legalrag.national_versions import update_corpus
    from legalrag.retrieval.index import open_index
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.wiring import expand_components, make_encoder

    law = national_law()
    encoder = make_encoder(law.encoder, progress=False, threads=1)
    components = lambda: expand_components(["hybrid"], [law.encoder])  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        whole = update_corpus(home, args.laws, encoder, components(), base=law, today="2025-04-19")
        copy = Path(tmp) / "laws"
        shutil.copytree(args.laws, copy)
        f = copy / "民法商法" / "公司法(2023-12-29).md"
        f.write_text(f.read_text(encoding="utf-8").replace("自公司成立之日起五年内缴足", "自公司成立之日起三年内缴足"),
                     encoding="utf-8")
        t0 = time.perf_counter()
        one = update_corpus(home, copy, encoder, components(), base=law, today="2025-04-19")
        one_s = time.perf_counter() - t0
        idx = open_index(one.directory / "index", lambda spec, **_: encoder)
        hits = build_pipeline(idx).search("有限责任公司股东认缴出资的期限", k=3)
        size = sum(p.stat().st_size for p in one.directory.rglob("*") if p.is_file())
        metrics = {"whole": {"seconds": round(whole.seconds, 1), "encoded": whole.encoded,
                             "laws_added": len(whole.laws_added), "articles_changed": whole.articles_changed,
                             "laws_repealed": len(whole.laws_repealed)},
                   "one_law": {"seconds": round(one_s, 1), "encoded": one.encoded,
                               "articles_changed": one.articles_changed, "versions_added": len(one.versions_added)},
                   "top_hit_after": hits[0].document.title if hits else None,
                   "top_hit_text_has_change": bool(hits and "三年内缴足" in hits[0].document.text),
                   "corpus_folder_bytes": size, "documents": idx.manifest["corpus"]["n_documents"]}
    write_result(args.out, metrics, name="laws: corpus update, the whole 2023 -> 2025 difference and one changed law",
                 data="LawRefBook/Laws 2025-04-19 ($LEGALRAG_DATA/laws-2025), one article edited by us for the second",
                 command=_command(args),
                 source="docs/lab/laws.md#updating",
                 page={"section": "laws", "order": 120, "rows": [{
                     "configuration": "`legalrag corpus update FOLDER` (incremental, atomic swap, rollback)",
                     "default": False,
                     "result": "one changed law: {metrics[one_law][seconds]} s ({metrics[one_law][encoded]} passage "
                               "encoded); whole 2023 -> 2025: {metrics[whole][seconds]} s",
                     "cost": "index of {metrics[documents]} documents", "needs": "CPU", "anchor": ""}]})
    print(json.dumps(metrics, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
