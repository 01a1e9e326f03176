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
from legalrag.settings_keys import (DEFAULT_LLM_SERVER, DEFAULT_MAX_FILE_MB, KEYS, KEYS_BY_NAME, Key,
                                    ServerAddress, absolute, convert_value, key_named)

APP_NAME = "legalrag"
CONFIG_ENV = "LEGALRAG_CONFIG"
PROFILE_ENV = "LEGALRAG_PROFILE"

# Profiles that ship with legalrag; a file's ``[profiles.NAME.*]`` of the same name overrides them key by key.
# `fast`: the 0.5B with 3 articles and 200 evidence tokens, the quickest cell of the evidence-budget curve
# (bench/results/evidence-curve.json) whose answer metrics did not fall below the default's; the results page
# states its cost and how far the comparison's sample size reaches.
BUILTIN_PROFILES: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "fast": {"llm": {"model": "qwen2.5-coder-0.5b"}, "answer": {"k": 3, "evidence_tokens": 200}},
}


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


__all__ = ["APP_NAME", "BUILTIN_PROFILES", "CONFIG_ENV", "DEFAULT_LLM_SERVER", "DEFAULT_MAX_FILE_MB", "KEYS",
           "KEYS_BY_NAME", "PROFILE_ENV", "AnswerChoices", "Key", "LLMSettings", "ServerAddress", "Settings",
           "absolute", "config_path", "convert_value", "get_value", "key_named", "load_settings", "merged_profiles",
           "profiles", "read_file"]
