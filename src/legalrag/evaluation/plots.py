"""PNG charts of results people compare: Recall@K curves of retrieval runs, metrics per stage or mode.

matplotlib (the ``plot`` extra) is imported only here and only when a chart is drawn, with the Agg backend
(no display needed). Files are written beside the target and renamed into place.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from legalrag._optional import require
from legalrag.errors import InputError


def _pyplot():
    mpl = require("matplotlib", "plot")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_png_path(path: str | os.PathLike) -> Path:
    """Refuse a plot path that is not a .png before any long work starts."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise InputError("plots are written as PNG; give a file name ending in .png", path=str(target))
    return target


def _save(fig, path: str | os.PathLike) -> Path:
    target = check_png_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def plot_curves(curves: Mapping[str, Sequence[float]], path: str | os.PathLike, *, title: str = "",
                xlabel: str = "K", ylabel: str = "Recall@K") -> Path:
    """One line per name; point i is the value at K = i + 1."""
    if not curves:
        raise InputError("nothing to plot: no curves")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name, ys in curves.items():
            ax.plot(range(1, len(ys) + 1), list(ys), label=name)
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        if title:
            ax.set_title(title)
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_bars(rows: Mapping[str, Mapping[str, float]], path: str | os.PathLike, *, title: str = "",
              ylabel: str = "", ylim: tuple[float, float] = (0, 1)) -> Path:
    """Grouped bars: one group per row (a stage, a mode), one bar per metric."""
    if not rows:
        raise InputError("nothing to plot: no rows")
    metrics = list(dict.fromkeys(m for values in rows.values() for m in values))
    plt = _pyplot()
    names = list(rows)
    width = 0.8 / max(len(metrics), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names) + 2), 4.5))
    try:
        for j, metric in enumerate(metrics):
            xs = [i + (j - (len(metrics) - 1) / 2) * width for i in range(len(names))]
            ax.bar(xs, [rows[n].get(metric, 0.0) for n in names], width, label=metric)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(*ylim)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        if ylabel:
            ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_series(series: Mapping[str, Sequence[float]], path: str | os.PathLike, *, x: Sequence[float],
                title: str = "", xlabel: str = "", ylabel: str = "", ylim: tuple[float, float] = (0, 1)) -> Path:
    """One line per name over the same linear x values (e.g. recall at turn 1..5)."""
    if not series:
        raise InputError("nothing to plot: no series")
    bad = [name for name, ys in series.items() if len(ys) != len(x)]
    if bad:
        raise InputError(f"series {bad[:3]} do not have one value per x ({len(x)})")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name, ys in series.items():
            ax.plot(list(x), list(ys), marker="o", label=name)
        step = -(-len(x) // 20)  # at most about 20 tick labels, so that they stay readable
        ax.set_xticks(list(x)[::step])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(*ylim)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        if title:
            ax.set_title(title)
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_scaling(panels: Mapping[str, Mapping[str, Mapping[float, float]]], path: str | os.PathLike, *,
                 title: str = "", xlabel: str = "documents") -> Path:
    """Cost against size: one log-log panel per metric (``panels[metric][line][x] = y``), one line per name.
    A line may miss some x (a backend not run at that size); it is drawn through the points it has."""
    if not panels or not any(panels.values()):
        raise InputError("nothing to plot: no panels")
    plt = _pyplot()
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    names = list(dict.fromkeys(name for lines in panels.values() for name in lines))
    colors = {name: f"C{i % 10}" for i, name in enumerate(names)}
    try:
        for ax, (metric, lines) in zip(axes.flat, panels.items()):
            for name, points in lines.items():
                xs = sorted(x for x, y in points.items() if y is not None and y > 0)
                if xs:
                    ax.plot(xs, [points[x] for x in xs], marker="o", label=name, color=colors[name])
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_title(metric, fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        seen = {}  # one legend for the figure: every line's label once
        for ax in list(axes.flat)[:len(panels)]:
            handles, labels = ax.get_legend_handles_labels()
            seen.update(zip(labels, handles))
        fig.legend(list(seen.values()), list(seen.keys()), loc="lower center", ncol=min(5, len(seen)), fontsize=8,
                   bbox_to_anchor=(0.5, -0.02))
        fig.tight_layout(rect=(0, 0.06, 1, 0.97 if title else 1))
        if title:
            fig.suptitle(title)
        return _save(fig, path)
    finally:
        plt.close(fig)
