"""The policy directory that ``legalrag train policy`` writes and ``-o policy=DIR`` reads.

``policy.json`` names the base model the adapters were trained on (its name and identity), the LoRA and
reward settings; ``adapter/`` holds peft's adapters, ``adapter.gguf`` the same as a llama.cpp adapter;
``training.json`` is the training record. Adapters only fit the base they were trained on, so a policy
is refused for any other base.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legalrag.errors import InputError

POLICY_FILE = "policy.json"
FORMAT = "legalrag-policy"


def read_policy(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    f = p / POLICY_FILE
    if not f.is_file():
        raise InputError(f"not a policy directory (no {POLICY_FILE}); give the --out directory of "
                         "`legalrag train policy`", path=str(p))
    meta = json.loads(f.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise InputError(f"{POLICY_FILE} is not a {FORMAT} manifest", path=str(f))
    if not (p / "adapter.gguf").is_file():
        raise InputError("the policy directory has no adapter.gguf (an interrupted export?); rerun the "
                         "training command to finish it", path=str(p))
    return meta


def check_base(meta: dict[str, Any], model: str, model_id: str, policy_dir: str | Path) -> None:
    """Refuse a policy trained on another base model, naming both."""
    base = meta.get("base", {})
    if base.get("id") != model_id:
        raise InputError(f"the policy in {policy_dir} was trained on {base.get('name')!r} ({base.get('id')}), "
                         f"not on {model!r} ({model_id}); use --model {base.get('name')} or a policy trained "
                         f"for {model!r}", path=str(policy_dir))


def base_identity(model: str) -> dict[str, str]:
    """``{"name", "id"}`` of a bundled model name or GGUF path, without assembling or hashing it."""
    from legalrag.llm.models import BUNDLED, check_gguf

    if model in BUNDLED:
        return {"name": model, "id": f"{model}:{BUNDLED[model].sha256[:16]}"}
    p = check_gguf(model)
    return {"name": str(model), "id": f"gguf:{p.name}:{p.stat().st_size}"}
