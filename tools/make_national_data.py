"""Write the shipped national-law data (src/legalrag/data/cn-law/) from the STARD corpus and its stard-e5 vectors.

    python tools/make_national_data.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl --out src/legalrag/data/cn-law

The passage vectors are read from the vector cache that `legalrag index build --encoder stard-e5` fills (build
the index first: bench/results/national-default.json has the command), so nothing is encoded twice; a passage
missing from the cache is encoded here. They are quantised to int8 with one scale per vector. The corpus is
stored xz-compressed, line for line (its SHA-256 before compression is recorded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
from legalrag.io import sha256_file, sha256_text
from legalrag.national import CORPUS, MANIFEST, quantise

PROVENANCE = (
    "Rebuilt for STARD (Su et al., EMNLP Findings 2024) from github.com/LawRefBook/Laws at commit "
    "245637f7a9318a64be5404964e987e98d228e01b (2023-06-05): every national-level law, administrative regulation "
    "and judicial interpretation (local regulations and cases excluded), split into articles at 第X条 / 第X条之N "
    "markers and named <title>第<numeral>条; only the latest dated version of each title is kept. Statutes, "
    "regulations and judicial interpretations are excluded from copyright by PRC Copyright Law art. 5; the "
    "repository's maintainer states that its content is not protected by copyright and was only collected and "
    "reformatted.")
NOTE = ("A snapshot of 2023-06-05: laws revised or enacted since (for example the 2023 revision of the Company "
        "Law, in force 2024-07-01, or the 2023 Administrative Reconsideration Law) are not in it, and repealed laws "
        "that were still listed then may be. Local regulations and cases are not included. To answer from another "
        "corpus, build an index (`legalrag index build --corpus FILE --out DIR --retriever hybrid --encoder "
        "stard-e5`) and pass --index DIR or save it with `legalrag config set index.path DIR`.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "src" / "legalrag" / "data" / "cn-law")
    ap.add_argument("--encoder", default="stard-e5")
    ap.add_argument("--max-chars", type=int, default=512)
    args = ap.parse_args(argv)

    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    docs = load_statutes(args.corpus)
    enc = make_encoder(args.encoder, progress=True)
    texts = [passage_text(d, args.max_chars) for d in docs]
    vectors = enc.encode_documents(texts)  # from the vector cache when the index was built with this encoder
    codes, scales = quantise(vectors)

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    raw = args.corpus.read_bytes()
    with lzma.open(out / (CORPUS + ".tmp"), "wb", preset=9 | lzma.PRESET_EXTREME) as fh:
        fh.write(raw)
    (out / (CORPUS + ".tmp")).replace(out / CORPUS)
    slug = args.encoder
    np.save(out / f"{slug}.i8.npy", codes, allow_pickle=False)
    np.save(out / f"{slug}.scale.npy", scales, allow_pickle=False)
    laws = sorted({d.metadata.get("law", "") for d in docs})
    manifest = {
        "name": "cn-law",
        "title": "中华人民共和国国家法律、行政法规和司法解释 (national laws, administrative regulations and judicial "
                 "interpretations of the People's Republic of China)",
        "snapshot": "2023-06-05",
        "n_laws": len(laws),
        "n_articles": len(docs),
        "note": NOTE,
        "provenance": PROVENANCE,
        "corpus": {"file": CORPUS, "sha256_uncompressed": hashlib.sha256(raw).hexdigest(),
                   "md5_uncompressed": hashlib.md5(raw).hexdigest(), "fields": ["id", "name", "content"]},
        "vectors": {"encoder": args.encoder, "model_id": enc.model_id, "dimension": int(codes.shape[1]),
                    "max_chars": args.max_chars, "codes": f"{slug}.i8.npy", "scales": f"{slug}.scale.npy",
                    "quantisation": "int8, one float32 scale per vector (max |x| / 127); dequantised vectors are "
                                    "re-normalised to unit length",
                    "texts_sha256": sha256_text("\n".join(texts))},
        "files_sha256": {name: sha256_file(out / name) for name in (CORPUS, f"{slug}.i8.npy", f"{slug}.scale.npy")},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    size = sum((out / n).stat().st_size for n in manifest["files_sha256"]) + (out / MANIFEST).stat().st_size
    print(f"{len(docs)} articles of {len(laws)} laws; {size / 1e6:.1f} MB in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
