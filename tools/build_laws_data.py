"""Build the shipped versions of the national law (``src/legalrag/data/cn-law/laws.*``) from a dated-Markdown
checkout: every article of every version as records, and stard-e5 vectors (int8) for the passages the shipped
2023-06-05 corpus lacks; the corpus file and its vectors are left as they are (benchmarks score on them).

    LEGALRAG_DATA=../shared/data nice -n 10 python tools/build_laws_data.py --laws ../shared/data/laws-2025

Encodes only the new passages (7,167 for the 2025-04-19 checkout) that the vectors already shipped lack, through
the vector cache, so a rerun after an interruption resumes.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laws", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    from legalrag.laws.reader import read_folder
    from legalrag.laws.versions import add_snapshot, build_library
    from legalrag.national import CRIMINAL_LAW, national_law
    from legalrag.national_versions import (LAWS, LAWS_MANIFEST, NEW_CODES, NEW_SCALES, law_library, versions_passages,
                                            write_versions)
    from legalrag.wiring import make_encoder

    law = national_law()
    lib = add_snapshot(build_library(read_folder(args.laws)), (r for _, r in law.records()),
                       str(law.manifest["snapshot"]), titles=[CRIMINAL_LAW])
    lib = type(lib)(lib.laws, lib.problems, lib.skipped, snapshot="2025-04-19")
    encoder = make_encoder(law.encoder, threads=args.threads, progress=True)
    # the vectors shipped already: a rebuild (a new field of the records) encodes only the texts they lack
    known = versions_passages(law.path, law_library(law=law), base=law) if (law.path / LAWS_MANIFEST).is_file() else {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "laws"
        manifest = write_versions(out, lib, encoder, base=law, known=known, info={
            "source": "github.com/LawRefBook/Laws at commit 2f4c5c23716267af9dbebbbbd6cbbf732b101981 (2025-04-19); "
                      "the Criminal Law before 刑法修正案（十二） from the 2023-06-05 corpus"})
        for name in (LAWS, NEW_CODES, NEW_SCALES, LAWS_MANIFEST):  # the manifest last: it names the others' hashes
            dest = law.path / name
            shutil.copyfile(out / name, dest.with_name(dest.name + ".tmp"))
            dest.with_name(dest.name + ".tmp").replace(dest)
    print({k: v for k, v in manifest.items() if k != "files_sha256"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
