"""One recipe per shipped model: the library function that made it, run by ``legalrag train <model>``.

| model | recipe | command |
|---|---|---|
| ``stard-e5`` | :func:`stard_e5` (``encoders.STARD_E5``) | ``legalrag train stard-e5`` |
| ``judge-e5`` | :func:`judge_e5` (``encoders.JUDGE_E5``) | ``legalrag train judge-e5`` |
| ``judge-structure`` | :func:`judge_structure` | ``legalrag train judge-structure`` |
| ``judge-cite`` | :func:`judge_cite` | ``legalrag train judge-cite`` |
| the citation support model (``data/citations/support_model.json``) | :func:`support_model` | ``legalrag train support-model`` |
| the scope decision (``data/models/scope/``) | :func:`~.scope.scope_model` | ``legalrag train scope-model`` |
| the decisive-article selector (``data/models/selector/``) | :func:`~.selector.train_selector` | ``legalrag train selector`` |

The data the judgment recipes read (JuDGE's 200/301 split, the CAIL2018 split) is :mod:`.judge_data`.
The benchmarks call these functions to train the variants they compare; they own no training code.
"""

from __future__ import annotations

from legalrag.training.recipes.encoders import ENCODER_RECIPES, JUDGE_E5, STARD_E5, judge_e5, stard_e5
from legalrag.training.recipes.judge_cite import judge_cite
from legalrag.training.recipes.judge_data import load_cail_split, load_judge, prepare_cail_split
from legalrag.training.recipes.judge_structure import build_structure, judge_structure
from legalrag.training.recipes.support import support_model

__all__ = ["ENCODER_RECIPES", "JUDGE_E5", "STARD_E5", "build_structure", "judge_cite", "judge_e5", "judge_structure",
           "load_cail_split", "load_judge", "prepare_cail_split", "stard_e5", "support_model"]
