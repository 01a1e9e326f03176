"""LoRA adapters as a llama.cpp adapter GGUF, so the embedded runtime samples with the trained policy.

llama.cpp reads an adapter file with ``general.type = adapter``, ``adapter.type = lora`` and
``adapter.lora.alpha``, holding for each adapted weight ``blk.N.<name>.weight.lora_a`` (peft's A, r x in)
and ``.lora_b`` (peft's B, out x r) unchanged; it applies ``B @ A * alpha / r`` like peft.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from legalrag._optional import require
from legalrag.errors import InputError

# Hugging Face module names of a Qwen2/Llama block -> llama.cpp tensor names
MODULES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
           "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
           "mlp.down_proj": "ffn_down"}
_PEFT_KEY = re.compile(r"layers\.(\d+)\.(\w+\.\w+)\.lora_([AB])(?:\.\w+)?\.weight$")


def gguf_tensors(state: Mapping[str, Any]) -> dict[str, Any]:
    """peft's adapter state dict -> ``{llama.cpp tensor name: float32 numpy array}``."""
    out: dict[str, Any] = {}
    for key, tensor in state.items():
        m = _PEFT_KEY.search(key)
        if not m:
            raise InputError(f"cannot place adapter tensor {key!r} in a llama.cpp model (only the attention and "
                             f"MLP projections of each block: {sorted(MODULES)})")
        layer, module, ab = m.groups()
        if module not in MODULES:
            raise InputError(f"adapter on {module!r}: llama.cpp has no tensor for it; train on {sorted(MODULES)}")
        out[f"blk.{layer}.{MODULES[module]}.weight.lora_{ab.lower()}"] = \
            tensor.detach().to("cpu").float().contiguous().numpy()
    return out


def write_lora_gguf(path: str | Path, state: Mapping[str, Any], *, alpha: float, architecture: str = "qwen2") -> Path:
    """Write the adapter file (atomically: a temp file renamed into place)."""
    gguf = require("gguf", "train")
    import os

    tensors = gguf_tensors(state)
    if not tensors:
        raise InputError("the adapter has no LoRA tensors to export")
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    writer = gguf.GGUFWriter(str(tmp), architecture)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(alpha))
    for name in sorted(tensors):
        writer.add_tensor(name, tensors[name])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, path)
    return path


def read_lora_gguf(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metadata, tensors)`` of an adapter file, for checks."""
    gguf = require("gguf", "train")
    import numpy as np

    reader = gguf.GGUFReader(str(path))
    meta: dict[str, Any] = {}
    for name in ("general.type", "adapter.type", "general.architecture", "adapter.lora.alpha"):
        field = reader.get_field(name)
        if field is not None:
            meta[name] = field.contents()
    # GGUF stores dimensions innermost first; the reader gives numpy arrays in the writer's (row-major) order
    tensors = {t.name: np.asarray(t.data).reshape([int(d) for d in reversed(t.shape)]) for t in reader.tensors}
    return meta, tensors
