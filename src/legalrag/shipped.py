"""The trained models that ship inside the package (``legalrag/data/models/<name>/``), found by name.

Each folder carries ``legalrag_model.json``: its name, kind (encoder, citation-model, judgment-model), where it
came from, the command that reproduces it, its figures and the SHA-256 of every file. A model is handed out only
after its files are checked against those hashes (a few tens of milliseconds), so a truncated or corrupted file
is refused with its path and the way to restore it, never loaded half-way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from legalrag.errors import InputError, ModelError

CARD = "legalrag_model.json"


def models_root() -> Path:
    return Path(__file__).resolve().parent / "data" / "models"


@dataclass(frozen=True)
class ShippedModel:
    name: str
    kind: str
    path: Path
    card: Mapping[str, Any] = field(default_factory=dict)

    @property
    def files(self) -> Mapping[str, str]:
        return self.card.get("files_sha256") or {}

    @property
    def restore_hint(self) -> str:
        return (f"restore it with `git checkout -- src/legalrag/data/models/{self.name}` in a clone of legalrag, or "
                "`pip install --force-reinstall --no-deps legalrag` for an installed package")


def shipped_models(root: Path | None = None) -> list[ShippedModel]:
    root = root or models_root()
    out = []
    for card_path in sorted(root.glob(f"*/{CARD}")) if root.is_dir() else []:
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{card_path}: unreadable model card ({exc})") from exc
        out.append(ShippedModel(card.get("name", card_path.parent.name), card.get("kind", ""), card_path.parent, card))
    return out


def find_shipped(name: str, kind: str | None = None, root: Path | None = None) -> ShippedModel | None:
    for m in shipped_models(root):
        if m.name == name and (kind is None or m.kind == kind):
            return m
    return None


def verify(model: ShippedModel) -> list[str]:
    """Problems with the model's files (missing, wrong size, wrong SHA-256); empty when all is well."""
    from legalrag.io import sha256_file

    if not model.files:
        return [f"{model.path / CARD}: the card lists no files"]
    problems = []
    for rel, digest in model.files.items():
        path = model.path / rel
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif sha256_file(path) != digest:
            problems.append(f"{path}: SHA-256 differs from the model card (truncated or corrupted)")
    return problems


def checked(name: str, kind: str | None = None, root: Path | None = None) -> ShippedModel:
    """The shipped model ``name`` after its files are verified; raises with the path and the fix otherwise."""
    model = find_shipped(name, kind, root)
    if model is None:
        names = ", ".join(m.name for m in shipped_models(root) if kind is None or m.kind == kind) or "none"
        raise InputError(f"no shipped {kind or 'model'} named {name!r}; shipped: {names} (`legalrag models list`)")
    problems = verify(model)
    if problems:
        raise ModelError(f"refusing the shipped model {name!r}: {'; '.join(problems)}; {model.restore_hint}")
    return model


def model_dir(value: str | Path | None, kind: str, default: str | None = None) -> Path | None:
    """A model directory option: an existing path (or any path with a folder part) as given; a bare name of a
    shipped model of ``kind``, its files checked; ``None``: the shipped ``default`` when this install carries it,
    else None. A bare name that is neither is returned as a path, for the caller's own "not found" message."""
    if value is not None and (Path(value).exists() or Path(value).parent != Path(".")):
        return Path(value)
    name = default if value is None else str(value)
    if name is None or find_shipped(name, kind) is None:
        return None if value is None else Path(value)
    return checked(name, kind).path

