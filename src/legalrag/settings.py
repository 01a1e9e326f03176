"""Saved settings: a TOML file in the platform's config directory, named profiles, ``LEGALRAG_*`` variables.

Only the edges read settings (``legalrag.wiring``, ``legalrag.cli``, the server's launcher); the library below
them receives plain values as arguments. One value comes from, lowest precedence first:

1. the built-in default;
2. the file's top-level tables (``[llm]``, ``[index]``...);
3. the active profile's tables (``[profiles.NAME.llm]``...); the profile is ``--profile``, else
   ``$LEGALRAG_PROFILE``, else the file's top-level ``profile = "NAME"``;
4. the environment variable named in :data:`KEYS` (``LEGALRAG_MODEL``...);
5. a command-line flag (the caller applies it: a flag given is used, else the setting).

The file is ``--config PATH``, else ``$LEGALRAG_CONFIG``, else ``config.toml`` in the platform's config
directory (``~/.config/legalrag`` on Linux). A file that does not exist is an empty one. ``legalrag config set``
keeps the file's comments and order (tomlkit) and stores a path absolute, so that a setting means the same from
any directory; a relative path written into the file by hand is relative to the file. Example::

    profile = "remote"

    [llm]
    model = "qwen2.5-coder-1.5b"

    [index]
    path = "~/indexes/stard"

    [profiles.remote.llm]
    endpoint = "http://127.0.0.1:8000/v1"
    endpoint_model = "qwen"
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from legalrag.errors import InputError

APP_NAME = "legalrag"
CONFIG_ENV = "LEGALRAG_CONFIG"
PROFILE_ENV = "LEGALRAG_PROFILE"
DEFAULT_LLM_SERVER = "127.0.0.1:8000"  # where `legalrag llm serve` listens by default
DEFAULT_MAX_FILE_MB = 100.0

# Profiles that ship with legalrag; a file's ``[profiles.NAME.*]`` of the same name overrides them key by key.
# `fast`: the 0.5B with 3 articles and 200 evidence tokens, the quickest cell of the evidence-budget curve
# (bench/results/evidence-curve.json) whose answer metrics did not fall below the default's; the results page
# states its cost and how far the comparison's sample size reaches.
BUILTIN_PROFILES: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "fast": {"llm": {"model": "qwen2.5-coder-0.5b"}, "answer": {"k": 3, "evidence_tokens": 200}},
}


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


@dataclass(frozen=True)
class LLMSettings:
    model: str | None
    endpoint: str | None
    endpoint_model: str | None
    server: ServerAddress


@dataclass(frozen=True)
class AnswerChoices:
    """What a user saved for answers (``answer.*``); None leaves the answer engine's default. ``evidence_tokens``
    0 means whole articles."""

    k: int | None = None
    evidence_tokens: int | None = None
    style: str | None = None
    max_tokens: int | None = None
    select: bool | None = None
    time_cap_s: float | None = None


@dataclass(frozen=True)
class Settings:
    """The settings in effect. ``origin`` says where each dotted key's value came from."""

    llm: LLMSettings
    index: Path | None
    encoder: str
    embeddings_base_url: str | None
    serve_host: str
    serve_port: int
    threads: int | None
    home: Path
    llm_cache: Path
    models_dir: Path
    max_file_mb: float
    answer: "AnswerChoices" = None  # type: ignore[assignment]  # filled by load_settings
    law_corpus: Path | None = None
    judgment_model: str | None = None
    judgment_encoder: str | None = None
    profile: str | None = None
    file: Path | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    origin: Mapping[str, str] = field(default_factory=dict)


def config_path(config: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The settings file: ``config``, else ``$LEGALRAG_CONFIG``, else the platform's config directory."""
    env = os.environ if env is None else env
    if config:
        return Path(config).expanduser()
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    import click  # comes with typer; get_app_dir follows each platform's convention ($XDG_CONFIG_HOME on Linux)

    return Path(click.get_app_dir(APP_NAME)) / "config.toml"


def read_file(path: Path) -> dict[str, Any]:
    """The file's tables, checked; a missing file is empty. Bad TOML or an unknown key names file and line."""
    import tomllib

    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        raise InputError(f"not valid TOML: {exc}; fix the line or delete the file (`legalrag config path` names it)",
                         path=str(path), line=int(m.group(1)) if m else None) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the settings file ({exc})", path=str(path)) from None
    _check_tables(data, path, text, "")
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise InputError("`profiles` must be a table of [profiles.NAME.TABLE] tables", path=str(path),
                         line=_line_of(text, "profiles"))
    for name, body in profiles.items():
        if not isinstance(body, dict):
            raise InputError(f"profile {name!r} must be a table", path=str(path), line=_line_of(text, name))
        _check_tables(body, path, text, f"profiles.{name}.")
    if "profile" in data and not isinstance(data["profile"], str):
        raise InputError("`profile` must be a profile name (a string)", path=str(path), line=_line_of(text, "profile"))
    return data


def _line_of(text: str, word: str) -> int | None:
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*(\[[^\]]*\b{re.escape(word)}\b[^\]]*\]|\"?{re.escape(word)}\"?\s*=)", line):
            return n
    return None


def _check_tables(data: Mapping[str, Any], path: Path, text: str, prefix: str) -> None:
    tables = {k.table for k in KEYS}
    for table, body in data.items():
        if not prefix and table in ("profile", "profiles"):
            continue
        if table not in tables or not isinstance(body, dict):
            raise InputError(f"unknown setting {prefix + table!r}; known tables: {', '.join(sorted(tables))}"
                             + ("" if prefix else ", profile, profiles"), path=str(path), line=_line_of(text, table))
        for name, value in body.items():
            key = KEYS_BY_NAME.get(f"{table}.{name}")
            if key is None:
                raise InputError(f"unknown setting {prefix}{table}.{name}; known: "
                                 f"{', '.join(k.name for k in KEYS if k.table == table)}",
                                 path=str(path), line=_line_of(text, name))
            try:
                convert_value(key, value)
            except InputError as exc:
                raise InputError(str(exc), path=str(path), line=_line_of(text, name)) from None


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


def load_settings(config: str | os.PathLike | None = None, profile: str | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """The settings in effect: defaults < file < profile < environment. ``config`` (``--config``) must exist
    when given; ``profile`` (``--profile``) must be defined in the file."""
    env = os.environ if env is None else env
    path = config_path(config, env)
    if config and not path.exists():
        raise InputError("settings file not found; create it with `legalrag config set KEY VALUE --config PATH`",
                         path=str(path))
    data = read_file(path)
    active = profile or env.get(PROFILE_ENV) or data.get("profile") or None
    profiles = merged_profiles(data)
    if active and active not in profiles:
        known = ", ".join(sorted(profiles)) or "none defined"
        raise InputError(f"unknown profile {active!r} (profiles: {known}); add one with "
                         f"`legalrag config set --profile {active} KEY VALUE`", path=str(path))
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key in KEYS:
        values[key.name], origin[key.name] = key.default, "default"
        # a relative path written into the file by hand means the same from any directory: relative to the file
        if key.field in data.get(key.table, {}):
            values[key.name] = absolute(key, convert_value(key, data[key.table][key.field]), path.parent)
            origin[key.name] = "file"
        if active and key.field in profiles[active].get(key.table, {}):
            values[key.name] = absolute(key, convert_value(key, profiles[active][key.table][key.field]), path.parent)
            origin[key.name] = f"profile {active}"
        raw = env.get(key.env)
        if raw is not None and raw.strip():
            try:
                values[key.name] = convert_value(key, raw.strip())
            except InputError as exc:
                raise InputError(f"${key.env}: {exc}") from None
            origin[key.name] = f"${key.env}"
    home = Path(values["paths.home"]).expanduser() if values["paths.home"] else Path.home() / ".cache" / APP_NAME
    return Settings(
        llm=LLMSettings(values["llm.model"], values["llm.endpoint"], values["llm.endpoint_model"],
                        ServerAddress.parse(values["llm.server"])),
        index=Path(values["index.path"]).expanduser() if values["index.path"] else None,
        encoder=values["encoder.name"],
        embeddings_base_url=values["encoder.base_url"],
        serve_host=values["serve.host"],
        serve_port=values["serve.port"],
        threads=values["runtime.threads"],
        home=home,
        llm_cache=Path(values["paths.llm_cache"]).expanduser() if values["paths.llm_cache"]
        else home / "llm-cache.sqlite",
        models_dir=Path(values["paths.models_dir"]).expanduser() if values["paths.models_dir"] else home / "models",
        max_file_mb=values["documents.max_file_mb"],
        answer=AnswerChoices(values["answer.k"], values["answer.evidence_tokens"], values["answer.style"],
                             values["answer.max_tokens"], values["answer.select"], values["answer.time_cap_s"]),
        law_corpus=Path(values["judgment.law_corpus"]).expanduser() if values["judgment.law_corpus"] else None,
        judgment_model=values["judgment.model"], judgment_encoder=values["judgment.encoder"],
        profile=active, file=path, values=values, origin=origin)


def key_named(name: str) -> Key:
    """The :class:`Key` called ``name``; a clear error naming the known keys otherwise."""
    key = KEYS_BY_NAME.get(name)
    if key is None:
        raise InputError(f"unknown setting {name!r}; known: {', '.join(KEYS_BY_NAME)}")
    return key


def merged_profiles(data: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The built-in profiles with the file's ``profiles`` tables over them (key by key), then the file's own."""
    out = {name: {table: dict(body) for table, body in tables.items()} for name, tables in BUILTIN_PROFILES.items()}
    for name, tables in data.get("profiles", {}).items():
        mine = out.setdefault(name, {})
        for table, body in tables.items():
            mine[table] = {**mine.get(table, {}), **body}
    return out


def profiles(path: Path) -> list[tuple[str, bool]]:
    """The profiles in effect, each with whether it is built in: the file's, in file order, then the built-in
    ones it does not redefine."""
    own = list(read_file(path).get("profiles", {}))
    return [(name, False) for name in own] + [(name, True) for name in BUILTIN_PROFILES if name not in own]


def get_value(settings: Settings, name: str) -> Any:
    """The value of ``name`` in effect (after file, profile and environment; derived paths filled in)."""
    key_named(name)
    derived = {"paths.home": settings.home, "paths.llm_cache": settings.llm_cache,
               "paths.models_dir": settings.models_dir}
    return derived[name] if name in derived else settings.values[name]
