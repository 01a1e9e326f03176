"""Every ``legalrag eval`` command, one module per area: retrieval, compare, fuse, answers, conversation, the
consultation benchmark (generate, score, compare, judge), judgment, cite and mcq.

The commands are thin: each reads its inputs, calls the benchmark's library code (``evaluation/``,
``evaluation/answers/``, ``evaluation/lexrag/``, ``judgment/evaluate.py``, ``citepredict/runner.py``,
``agents/qa/mcq_eval.py``) and prints. Without ``--index`` a command uses the default index, as ``search``
does (the index.path setting, else the national-law index shipped with legalrag; ``eval cite``: the criminal
law of it, which the shipped citation model decides over). The LLM is ``--model SPEC`` (an embedded model, a
GGUF path or an endpoint ``URL#MODEL``); threads come from the runtime.threads setting; tuning knobs are
``-o KEY=VALUE`` (``cli/_options.py``).

``eval conversation`` scores conversational retrieval (processor x retriever, overall and per turn) and saves
runs that ``eval compare`` can test; ``eval consultation-generate`` answers LexRAG turns in the zero-shot,
retriever and reference settings and scores them against the reference answers (``eval consultation-score``
scores a saved run again, e.g. with the BERTScore-style F1); ``eval consultation-judge`` has an LLM judge score
a generation run on five dimensions, with its reliability figures.

The area modules (``retrieval``, ``answers``, ``conversation``, ``consultation``, ``judgment``, ``cite``) register
their commands on the shared ``eval_app`` when imported; this package imports every one of them, as ``cli/``
imports its command modules (a module whose name starts with ``_`` holds helpers only).
"""

from __future__ import annotations

import importlib
import pkgutil

for _mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")
