"""Build the deterministic scale-benchmark corpus (issue 21): >= 1,000,000 legal passages from the shared data.
Not part of `make test`; the output lives outside git (indexes/ is ignored).

    python tools/make_scale_corpus.py --n 1000000 --out indexes/scale-corpus

What it holds, in this order (so that the first 100k passages are a prefix of the 1M corpus):

1. base passages, all real text:
   - every STARD article (55,515), as `legalrag.corpora.statutes` loads it (same ids, so STARD's gold ids and
     the vector cache still apply);
   - the rest of each STARD article longer than one window: windows of WINDOW characters every STRIDE
     characters after the first window (ids ``ID#wK``);
   - the JuDGE law corpus (452 Criminal Law articles, ids ``judge-law:ID``);
   - the JuDGE test judgments' full texts (501), windowed the same way (ids ``judge-case:ID#wK``).
   JuDGE's Example_Output.jsonl is left out: it is model output, not legal text.
2. variants until --n: round j = 1, 2, ... walks the base passages in order; variant (j, i) is the first half
   (by characters) of base passage i's encoded text followed by the second half of base passage
   partner_j(i)'s, where partner_j is a permutation of the base drawn by ``random.Random(j)`` (a passage
   paired with itself takes the next one). ids ``v{j}:{i}``; metadata ``parents`` = the two base ids.

Why variants are a fair load: every variant is real legal text with the base's length distribution (half of
one real passage, half of another), so BM25 posting lists and document lengths grow as in a larger legal
corpus, and every document is distinct (a new pair of halves), unlike duplicated rows. What it does not model:
the vocabulary stops growing after the base (a real 1M corpus would bring new terms), and the halves join in
mid-sentence. For dense vectors at sizes too large to encode here, ``bench_scale.py prepare --encode-first``
derives a variant's vector from its parents' (the normalised sum); the benchmark reports how close that is to
the real encoding where both exist.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
WINDOW, STRIDE, MAX_CHARS = 256, 192, 256


def windows(text: str, start: int = 0):
    """(k, window) for windows of WINDOW characters every STRIDE characters from ``start``."""
    k, pos = 0, start
    while pos < len(text):
        yield k, text[pos:pos + WINDOW]
        if pos + WINDOW >= len(text):
            break
        k, pos = k + 1, pos + STRIDE


def base_passages(data: Path):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.types import Document, DocumentKind

    stard = load_statutes(data / "stard" / "corpus.jsonl")
    yield from (("stard", d) for d in stard)
    for d in stard:  # the tails of long articles (the article itself is cut at MAX_CHARS when encoded)
        if len(d.text) > WINDOW:
            for k, w in windows(d.text, STRIDE):
                yield "stard-window", Document(f"{d.id}#w{k + 1}", w, title=d.title, kind=d.kind,
                                               metadata=dict(d.metadata, window=k + 1))
    for d in load_statutes(data / "judge" / "data" / "law_corpus.jsonl"):
        yield "judge-law", Document(f"judge-law:{d.id}", d.text, title=d.title, kind=d.kind,
                                    metadata=dict(d.metadata))
    with (data / "judge" / "data" / "test.json").open(encoding="utf-8") as fh:  # JSON lines despite the name
        cases = [json.loads(line) for line in fh if line.strip()]
    for case in cases:
        for k, w in windows(case["fd"].strip()):
            yield "judge-case", Document(f"judge-case:{case['text_id']}#w{k}", w, kind=DocumentKind.JUDGMENT,
                                         metadata={"case": case["text_id"], "window": k})


def variants(base, n: int):
    """Up to ``n`` variants (see the module docstring), deterministic for a given base."""
    from legalrag.retrieval.dense import passage_text
    from legalrag.types import Document

    texts = [passage_text(d, MAX_CHARS) for d in base]
    made, j = 0, 0
    while made < n:
        j += 1
        perm = list(range(len(base)))
        random.Random(j).shuffle(perm)
        for i, d in enumerate(base):
            if made >= n:
                return
            p = perm[i] if perm[i] != i else (i + 1) % len(base)
            a, b = texts[i], texts[p]
            text = a[:len(a) // 2] + b[len(b) // 2:]
            yield Document(f"v{j}:{i}", text, kind=d.kind, metadata={"variant": j, "parents": [d.id, base[p].id]})
            made += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=Path("indexes/scale-corpus"))
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (stard/, judge/)")
    a = ap.parse_args()
    from tqdm import tqdm

    counts: dict[str, int] = {}
    base = []
    for source, d in base_passages(a.data):
        counts[source] = counts.get(source, 0) + 1
        base.append(d)
    base = base[:a.n]
    a.out.mkdir(parents=True, exist_ok=True)
    tmp = a.out / "corpus.jsonl.tmp"
    digest = hashlib.sha256()
    with tmp.open("w", encoding="utf-8") as fh:
        for d in tqdm([*base], desc="base", unit="doc"):
            line = json.dumps(d.to_dict(), ensure_ascii=False) + "\n"
            fh.write(line)
            digest.update(line.encode())
        n_var = 0
        for d in tqdm(variants(base, a.n - len(base)), total=max(0, a.n - len(base)), desc="variants", unit="doc"):
            line = json.dumps(d.to_dict(), ensure_ascii=False) + "\n"
            fh.write(line)
            digest.update(line.encode())
            n_var += 1
    tmp.replace(a.out / "corpus.jsonl")
    manifest = {"documents": len(base) + n_var, "base": len(base), "base_by_source": counts, "variants": n_var,
                "window": WINDOW, "stride": STRIDE, "sha256": digest.hexdigest()}
    (a.out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    print(json.dumps(manifest))


if __name__ == "__main__":
    main()
