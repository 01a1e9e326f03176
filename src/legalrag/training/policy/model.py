"""The trainable policy: a Hugging Face causal LM (the dequantised embedded GGUF, or a local model
directory) with LoRA adapters on a frozen base, and the policy directory it is saved as."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from legalrag._optional import require
from legalrag.errors import InputError
from legalrag.io import atomic_dir
from legalrag.training.policy.grpo import GRPOSettings
from legalrag.training.policy.lora_gguf import write_lora_gguf
from legalrag.training.policy.store import FORMAT, POLICY_FILE


def load_base(model: str, *, progress: bool = True) -> tuple[Any, Any]:
    """``(model, tokenizer)`` in fp32 for a bundled model name, a GGUF path or a local model directory.

    transformers dequantises a GGUF into full-precision weights but still marks the model as GGUF-quantised,
    which peft and TRL refuse to train; the weights really are plain fp32, so the mark is removed."""
    require("gguf", "train")
    transformers = require("transformers", "train")
    import torch

    if Path(model).is_dir():
        kwargs: dict[str, Any] = {}
        where = str(model)
    else:
        from legalrag.llm.models import resolve_model

        path, _ = resolve_model(model, progress=progress)
        where, kwargs = str(path.parent), {"gguf_file": path.name}
    tok = transformers.AutoTokenizer.from_pretrained(where, **kwargs)
    lm = transformers.AutoModelForCausalLM.from_pretrained(where, dtype=torch.float32, **kwargs)
    lm.hf_quantizer = None
    lm.is_quantized = False
    if hasattr(lm.config, "quantization_config"):
        del lm.config.quantization_config
    return lm, tok


def add_lora(model: Any, settings: GRPOSettings) -> Any:
    """Freeze ``model`` and add trainable LoRA adapters (B starts at zero: the policy starts as the base)."""
    peft = require("peft", "train")
    import torch

    torch.manual_seed(settings.seed)
    for p in model.parameters():
        p.requires_grad_(False)
    cfg = peft.LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                          target_modules=list(settings.target_modules), bias="none", task_type="CAUSAL_LM")
    return peft.get_peft_model(model, cfg)


def adapter_state(model: Any) -> dict[str, Any]:
    peft = require("peft", "train")
    return peft.get_peft_model_state_dict(model)


def load_adapter_weights(model: Any, directory: str | Path) -> None:
    """Put adapters saved by ``save_pretrained`` in ``directory`` into ``model`` (same LoRA shape)."""
    peft = require("peft", "train")
    from safetensors.torch import load_file

    f = Path(directory) / "adapter_model.safetensors"
    if not f.is_file():
        raise InputError("no adapter_model.safetensors here", path=str(directory))
    result = peft.set_peft_model_state_dict(model, load_file(str(f)))
    if getattr(result, "unexpected_keys", None):
        raise InputError(f"the saved adapters do not fit this model: {result.unexpected_keys[:3]}", path=str(f))


class AdapterSaver:
    """What ``training.checkpoint.save_checkpoint`` saves: the adapters only (the base stays frozen)."""

    def __init__(self, model: Any):
        self.model = model

    def save(self, path: str) -> None:
        self.model.save_pretrained(path, save_embedding_layers=False)


def export_gguf(model: Any, path: str | Path, settings: GRPOSettings) -> Path:
    return write_lora_gguf(path, adapter_state(model), alpha=settings.lora_alpha,
                           architecture=getattr(model.config, "model_type", "qwen2"))


def save_policy(out: str | Path, model: Any, *, base: dict[str, str], settings: GRPOSettings,
                reward: dict[str, float], record: dict[str, Any] | None = None) -> Path:
    """Write the policy directory atomically: policy.json, adapter/, adapter.gguf, training.json."""
    with atomic_dir(out) as tmp:
        model.save_pretrained(str(tmp / "adapter"), save_embedding_layers=False)
        export_gguf(model, tmp / "adapter.gguf", settings)
        meta = {"format": FORMAT, "version": 1, "base": base, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                      time.gmtime()),
                "lora": {"r": settings.lora_r, "alpha": settings.lora_alpha,
                         "target_modules": list(settings.target_modules)},
                "grpo": settings.as_dict(), "reward": reward}
        (tmp / POLICY_FILE).write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
        if record is not None:
            (tmp / "training.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    return Path(out)
