"""The support model's one builder: ``full`` is one scorer per process over the shipped ``stard-e5`` (built once,
even when the first calls race), ``lexical`` has no encoder, and an unknown name is refused naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from legalrag.errors import InputError
from legalrag.wiring import Root, make_support_scorer

SRC = Path(__file__).resolve().parents[3] / "src"


def test_the_full_model_is_one_scorer_per_process_even_when_first_asked_from_many_threads():
    code = ("import threading\n"
            "from legalrag.wiring import Root, make_support_scorer\n"
            "import legalrag.wiring.encoders as e\n"
            "built = []\n"
            "real = e.make_encoder\n"
            "e.make_encoder = lambda *a, **k: built.append(1) or real(*a, **k)\n"
            "got = []\n"
            "ts = [threading.Thread(target=lambda: got.append(make_support_scorer())) for _ in range(8)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "got.append(Root().make_support_scorer())\n"
            "print(len({id(s) for s in got}), len(built), got[0].model.name, type(got[0].encoder).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(SRC), "PATH": ""})
    assert out.stdout.split() == ["1", "1", "full", "OnnxEncoder"], out.stderr


def test_the_lexical_model_has_no_encoder_and_an_unknown_name_is_refused():
    lexical = make_support_scorer("lexical")
    assert lexical.encoder is None and lexical.model.name == "lexical" and not lexical.model.needs_cosine
    assert make_support_scorer(None).model.name == "lexical"
    assert Root().make_support_scorer("stard-e5") is make_support_scorer("full")
    with pytest.raises(InputError, match="unknown support model 'bm25'; choose one of full, lexical") as err:
        make_support_scorer("bm25")
    assert err.value.field == "support"
