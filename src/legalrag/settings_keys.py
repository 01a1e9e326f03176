"""The table of settings: every key's dotted name, type, overriding variable, default and help
(:data:`KEYS`), and how a value from the file, the environment or ``legalrag config set`` is checked and
stored (:func:`convert_value`, :func:`absolute`). Where values are read from and in which order is
:mod:`legalrag.settings`; writing the file is :mod:`legalrag.settings_edit`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legalrag.errors import InputError

DEFAULT_LLM_SERVER = "127.0.0.1:8000"  # where `legalrag llm serve` listens by default
DEFAULT_MAX_FILE_MB = 100.0


@dataclass(frozen=True)
class Key:
    """One setting: its dotted name in the file, its type, the variable that overrides it, its default."""

    name: str
    type: type
    env: str
    default: Any
    help: str
    path: bool = False  # a file or folder (or a name that may be one): stored absolute by `config set`
    minimum: int = 1  # 1: a number must be positive; 0: 0 is accepted too (evidence_tokens 0: whole articles)
    choices: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def field(self) -> str:
        return self.name.split(".", 1)[1]


KEYS: tuple[Key, ...] = (
    Key("llm.model", str, "LEGALRAG_MODEL", None,
        "embedded model: qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b or a .gguf path", path=True),
    Key("llm.endpoint", str, "LEGALRAG_ENDPOINT", None, "OpenAI-compatible endpoint URL used instead of the embedded model"),
    Key("llm.endpoint_model", str, "LEGALRAG_ENDPOINT_MODEL", None, "the model name the endpoint expects"),
    Key("llm.server", str, "LEGALRAG_LLM_SERVER", DEFAULT_LLM_SERVER,
        "HOST:PORT of a local `legalrag llm serve`, used when one is running"),
    Key("index.path", str, "LEGALRAG_INDEX", None, "the index directory commands use when --index is not given",
        path=True),
    Key("encoder.name", str, "LEGALRAG_ENCODER", "e5-small",
        "encoder for dense indexes: stard-e5, judge-e5 (shipped), e5-small, use-multilingual, a model directory or "
        "openai:MODEL", path=True),
    Key("encoder.base_url", str, "LEGALRAG_EMBEDDINGS_BASE_URL", None,
        "endpoint of openai:MODEL encoders (else $OPENAI_BASE_URL, else api.openai.com)"),
    Key("answer.k", int, "LEGALRAG_K", None, "articles retrieved for an answer (default: the answer engine's)"),
    Key("answer.evidence_tokens", int, "LEGALRAG_EVIDENCE_TOKENS", None,
        "token budget for the articles in an answer prompt (default: the answer engine's; 0: whole articles)",
        minimum=0),
    Key("answer.style", str, "LEGALRAG_STYLE", None, "answer style: guided (default) or brief",
        choices=("guided", "brief")),
    Key("answer.max_tokens", int, "LEGALRAG_MAX_TOKENS", None, "longest answer, in tokens (default: the answer "
        "engine's)"),
    Key("answer.select", bool, "LEGALRAG_SELECT", None, "whether the decisive-article selector chooses the quoted "
        "legal basis (default true; false: the retrieval order)"),
    Key("answer.time_cap_s", float, "LEGALRAG_TIME_CAP", None, "seconds after which an answer's generation stops "
        "(default: the answer engine's)", minimum=1),
    Key("judgment.law_corpus", str, "LEGALRAG_LAW_CORPUS", None,
        "statute corpus JSONL the judgment commands and `serve` read (STARD or JuDGE shape)", path=True),
    Key("judgment.model", str, "LEGALRAG_JUDGMENT_MODEL", None,
        "judgment structure model: a `legalrag train judge-structure` directory or a shipped name (default: "
        "judge-structure)", path=True),
    Key("judgment.encoder", str, "LEGALRAG_JUDGMENT_ENCODER", None,
        "encoder of a structure model trained on an encoder's signal (default: the one its manifest records)",
        path=True),
    Key("serve.host", str, "LEGALRAG_SERVE_HOST", "127.0.0.1", "address `legalrag serve` binds"),
    Key("serve.port", int, "LEGALRAG_SERVE_PORT", 8080, "port of `legalrag serve`"),
    # the server's limits (`legalrag serve` flags of the same name override them)
    Key("serve.max_k", int, "LEGALRAG_SERVE_MAX_K", 50, "largest k a request to `legalrag serve` may ask for "
        "(at most 1000)"),
    Key("serve.rate_limit", int, "LEGALRAG_SERVE_RATE_LIMIT", 120, "requests per minute per API key (per client "
        "address without keys); 0: no limit", minimum=0),
    Key("serve.max_waiting", int, "LEGALRAG_SERVE_MAX_WAITING", 16, "generations that may queue for the model; "
        "more get 503", minimum=0),
    Key("serve.max_body_kb", int, "LEGALRAG_SERVE_MAX_BODY_KB", 256, "largest request body, in KiB (at least 1)"),
    Key("serve.max_indexes", int, "LEGALRAG_SERVE_MAX_INDEXES", None, "other indexes a request may have the "
        "server open and keep (at most 16; default 2 on loopback, 0 on another address)", minimum=0),
    Key("runtime.threads", int, "LEGALRAG_THREADS", None, "CPU threads for models and encoders (default: all cores)"),
    Key("paths.home", str, "LEGALRAG_HOME", None, "cache folder for models, vectors, call cache (default ~/.cache/legalrag)",
        path=True),
    Key("paths.llm_cache", str, "LEGALRAG_LLM_CACHE", None, "LLM call-cache file (default HOME/llm-cache.sqlite)",
        path=True),
    Key("paths.models_dir", str, "LEGALRAG_MODELS_DIR", None, "where bundled models are assembled (default HOME/models)",
        path=True),
    Key("documents.max_file_mb", float, "LEGALRAG_MAX_FILE_MB", DEFAULT_MAX_FILE_MB,
        "largest user document read, in MiB"),
)
KEYS_BY_NAME = {k.name: k for k in KEYS}


@dataclass(frozen=True)
class ServerAddress:
    """``HOST:PORT`` of a local model server; ``url`` is its OpenAI-compatible base URL."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "ServerAddress":
        s = re.sub(r"^https?://", "", text.strip()).rstrip("/")
        s = s[:-3].rstrip("/") if s.endswith("/v1") else s
        host, sep, port = s.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InputError(f"llm.server must be HOST:PORT (e.g. {DEFAULT_LLM_SERVER}), got {text!r}")
        return cls(host.strip("[]"), int(port))

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def key_named(name: str) -> Key:
    """The :class:`Key` called ``name``; a clear error naming the known keys otherwise."""
    key = KEYS_BY_NAME.get(name)
    if key is None:
        raise InputError(f"unknown setting {name!r}; known: {', '.join(KEYS_BY_NAME)}")
    return key


def convert_value(key: Key, value: Any) -> Any:
    """``value`` (from TOML, the environment or `config set`) as ``key``'s type; a clear error otherwise."""
    if value is None:
        return None
    if key.type is str:
        if not isinstance(value, str):
            raise InputError(f"{key.name} must be a string, got {value!r}")
        if key.name == "llm.server":
            ServerAddress.parse(value)
        if key.choices and value not in key.choices:
            raise InputError(f"{key.name} must be one of {', '.join(key.choices)}, got {value!r}")
        return value
    if key.type is bool:
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        if isinstance(value, bool):
            return value
        raise InputError(f"{key.name} must be true or false, got {value!r}")
    if isinstance(value, bool):
        raise InputError(f"{key.name} must be a number, got {value!r}")
    try:
        out = key.type(value)
    except (TypeError, ValueError):
        raise InputError(f"{key.name} must be {'an integer' if key.type is int else 'a number'}, got {value!r}") \
            from None
    if out < 0 or (key.minimum > 0 and out == 0):
        raise InputError(f"{key.name} must be {'positive' if key.minimum > 0 else 'at least 0'}, got {value!r}")
    return out


def absolute(key: Key, value: Any, cwd: Path | None = None) -> Any:
    """``value`` as stored by `config set`: a path key's relative path made absolute (against ``cwd``, default
    the current directory) so that the setting means the same from any directory. A value that names a
    shipped model or a bundled one (``stard-e5``, ``qwen2.5-coder-0.5b``, ``openai:MODEL``) is kept as
    written: only what looks like a path (it exists, has a separator, starts with ``.`` or ``~``, or ends in
    ``.gguf`` / ``.jsonl``) is resolved."""
    if not key.path or not isinstance(value, str) or not value:
        return value
    p = Path(value).expanduser()
    base = Path.cwd() if cwd is None else cwd
    if ":" in value and not p.is_absolute():  # openai:MODEL, a URL
        return value
    looks_like_path = (p.is_absolute() or value.startswith(".") or "/" in value or os.sep in value
                       or p.suffix in (".gguf", ".jsonl", ".json") or (base / p).exists())
    if not looks_like_path:
        return value
    return str(p if p.is_absolute() else (base / p).resolve())


__all__ = ["DEFAULT_LLM_SERVER", "DEFAULT_MAX_FILE_MB", "KEYS", "KEYS_BY_NAME", "Key", "ServerAddress", "absolute",
           "convert_value", "key_named"]
