"""The guide's figures, drawn when the site is built (matplotlib, printed as inline SVG).

Each function takes what the library computed (a tensor, a Scalar, a trained model's
probabilities) and returns an HTML ``<div class="guide-figure">`` holding an SVG, for a
``markdown-exec`` block with ``html="1"``. Nothing here computes what it shows: the
positions come from ``index_to_position``, the derivatives from the Scalar's own
``chain_rule``, the boundaries from the trained network.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

plt.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: searchable, no embedded glyphs
        "svg.hashsalt": "minitorch-guide",  # the same SVG for the same figure
        "font.size": 10,
        "font.family": "sans-serif",
    }
)

CELL = "#fde2d4"
EDGE = "#bf360c"
MUTED = "#666666"


def svg(fig: plt.Figure, alt: str) -> str:
    """The figure as an inline SVG in a ``guide-figure`` div (the figure is closed)."""
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = out.getvalue()
    text = text[text.index("<svg") :]
    return f'<div class="guide-figure" role="img" aria-label="{alt}">{text}</div>'


def _cells(ax, values, positions, x0, y0, title, highlight=None) -> None:  # type: ignore[no-untyped-def]
    rows, cols = values.shape
    for i in range(rows):
        for j in range(cols):
            face = "#ffab91" if highlight is not None and (i, j) == highlight else CELL
            ax.add_patch(Rectangle((x0 + j, y0 - i), 1, 1, facecolor=face, edgecolor=EDGE))
            ax.text(x0 + j + 0.5, y0 - i + 0.6, f"{values[i, j]:g}", ha="center", va="center")
            ax.text(
                x0 + j + 0.5,
                y0 - i + 0.22,
                f"@{positions[i, j]}",
                ha="center",
                va="center",
                fontsize=7,
                color=MUTED,
            )
    ax.text(x0, y0 + 1.15, title, ha="left", va="bottom", linespacing=1.3)


def strides_figure(shape: tuple[int, int], code: str) -> str:
    """A contiguous tensor of ``shape`` (0, 1, 2, ...) and ``t<code>`` over one storage.

    Top: the storage, one cell per position. Below: the tensor and the view, each cell
    with its value and (``@k``) the storage position ``index_to_position`` gives it.
    """
    from mt_explorer.strides import explore

    base = explore(shape, "")
    view = explore(shape, code)
    n = len(base.storage)
    fig, ax = plt.subplots(figsize=(max(6.0, n * 0.55), 3.6))
    for k, value in enumerate(base.storage):
        ax.add_patch(Rectangle((k, 5), 1, 1, facecolor=CELL, edgecolor=EDGE))
        ax.text(k + 0.5, 5.5, f"{value:g}", ha="center", va="center")
        ax.text(k + 0.5, 6.2, str(k), ha="center", va="center", fontsize=7, color=MUTED)
    ax.text(0, 6.6, "storage (position above each cell)", ha="left", va="bottom")
    title = f"t\nshape {base.shape}\nstrides {base.strides}"
    _cells(ax, base.values, base.positions, 0, 1.5, title)
    x0 = base.shape[1] + 3
    _cells(
        ax,
        view.values,
        view.positions,
        x0,
        1.5,
        f"t{code}\nshape {view.shape}\nstrides {view.strides}",
    )
    ax.set_xlim(-0.2, max(n, x0 + view.shape[1]) + 0.2)
    ax.set_ylim(1.5 - max(base.shape[0], view.shape[0]) + 0.8, 7.2)
    ax.set_aspect("equal")
    ax.axis("off")
    return svg(fig, f"storage of a {shape} tensor and of t{code}")


def graph_figure(output) -> str:  # type: ignore[no-untyped-def]
    """The computation graph of a Scalar: each node's value and d output / d node.

    Inputs on the left, the output on the right; functions are round, variables square.
    """
    from mt_explorer.autodiff_graph import graph_nodes

    nodes = graph_nodes(output)
    by_key = {n.key: n for n in nodes}
    depth = {nodes[0].key: 0}
    changed = True
    while changed:  # longest path from the output
        changed = False
        for node in nodes:
            for key in node.inputs:
                d = depth.get(node.key, 0) + 1
                if depth.get(key, -1) < d:
                    depth[key] = d
                    changed = True
    deepest = max(depth.values())
    columns: dict[int, list[str]] = {}
    for node in nodes:
        columns.setdefault(deepest - depth[node.key], []).append(node.key)
    place = {}
    for x, keys in columns.items():
        for i, key in enumerate(keys):
            place[key] = (x * 2.6, (len(keys) - 1) / 2 - i) if keys else (0, 0)
    height = max(len(k) for k in columns.values())
    fig, ax = plt.subplots(figsize=(2.1 * (deepest + 1), 1.1 * height + 0.6))
    for node in nodes:
        for key in node.inputs:
            ax.add_patch(
                FancyArrowPatch(
                    place[key],
                    place[node.key],
                    arrowstyle="-|>",
                    mutation_scale=12,
                    shrinkA=30,
                    shrinkB=30,
                    color=MUTED,
                )
            )
    for node in nodes:
        x, y = place[node.key]
        deriv = "" if node.derivative is None else f"\nd = {node.derivative:.4g}"
        style = "round,pad=0.35" if node.kind == "function" else "square,pad=0.35"
        face = {"output": "#ffab91", "function": "#fff3e0", "constant": "#eeeeee"}.get(
            node.kind, CELL
        )
        ax.text(
            x,
            y,
            f"{node.label}\n{node.value:.4g}{deriv}",
            ha="center",
            va="center",
            fontsize=8,
            bbox={"boxstyle": style, "facecolor": face, "edgecolor": EDGE},
        )
    ax.set_xlim(-1.2, deepest * 2.6 + 1.2)
    ax.set_ylim(-height / 2 - 0.2, height / 2 + 0.2)
    ax.axis("off")
    del by_key
    return svg(fig, "computation graph with values and derivatives")


def boundary_figure(
    snapshots: Sequence[tuple[str, np.ndarray]], points: np.ndarray, labels: np.ndarray
) -> str:
    """The model's ``P(y = 1)`` over ``[0, 1]^2`` at a few moments of training.

    ``snapshots`` are (title, grid) with ``grid[i, j]`` at ``x1 = j / (n - 1)``,
    ``x2 = i / (n - 1)``; the line is the decision boundary ``P = 0.5``.
    """
    fig, axes = plt.subplots(1, len(snapshots), figsize=(2.6 * len(snapshots), 2.7))
    for ax, (title, grid) in zip(np.atleast_1d(axes), snapshots, strict=True):
        ax.imshow(grid, origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r", vmin=0, vmax=1)
        ticks = np.linspace(0, 1, grid.shape[0])
        if grid.min() < 0.5 < grid.max():
            ax.contour(ticks, ticks, grid, levels=[0.5], colors="black", linewidths=1)
        ax.scatter(
            points[:, 0],
            points[:, 1],
            c=labels,
            cmap="RdBu_r",
            vmin=0,
            vmax=1,
            edgecolors="black",
            s=14,
        )
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
    return svg(fig, "decision boundary during training")


def conv_figure(
    image: np.ndarray, kernel: np.ndarray, out: np.ndarray, windows: Sequence[tuple[int, int]]
) -> str:
    """A 2-D convolution: each marked output cell is the sum over its input window.

    ``out[h, w] = sum_{i, j} image[h + i, w + j] * kernel[i, j]`` (zero outside the image);
    each window is outlined in the colour of its output cell.
    """
    colors = ["#d84315", "#1565c0", "#2e7d32"]
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.2), gridspec_kw={"width_ratios": [5, 3, 5]})
    for ax, grid, title in zip(
        axes, (image, kernel, out), ("input", "kernel", "output"), strict=True
    ):
        ax.imshow(np.zeros_like(grid), cmap="Greys", vmin=0, vmax=1)
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=8)
        ax.set_xticks(np.arange(-0.5, grid.shape[1], 1), minor=True)
        ax.set_yticks(np.arange(-0.5, grid.shape[0], 1), minor=True)
        ax.grid(which="minor", color=EDGE, linewidth=0.6)
        ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
        ax.set_title(title)
    kh, kw = kernel.shape
    for color, (h, w) in zip(colors, windows, strict=False):
        axes[0].add_patch(
            Rectangle((w - 0.5, h - 0.5), kw, kh, fill=False, edgecolor=color, linewidth=2.5)
        )
        axes[2].add_patch(
            Rectangle((w - 0.5, h - 0.5), 1, 1, fill=False, edgecolor=color, linewidth=2.5)
        )
    axes[0].set_xlim(-0.5, image.shape[1] + kw - 1.5)
    axes[0].set_ylim(image.shape[0] + kh - 1.5, -0.5)
    return svg(fig, "convolution windows")


def error_figure(steps: np.ndarray, errors: dict[str, np.ndarray]) -> str:
    """Log-log plot of the error of each derivative estimate against its step ``h``."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    for label, values in errors.items():
        ax.loglog(steps, np.maximum(values, 1e-18), marker="o", markersize=3, label=label)
    ax.set_xlabel("step h")
    ax.set_ylabel("|estimate - exact|")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    return svg(fig, "error of finite differences against the step")
