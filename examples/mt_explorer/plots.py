"""The Plotly figures of the explorer's pages.

Colours: label 0 is blue and label 1 is red everywhere, and the decision boundary shades
the plane from blue (``P(y = 1) = 0``) to red (``1``) with the ``0.5`` line drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from minitorch.operators import Graph

#: Plotly options for ``st.plotly_chart(..., config=CONFIG)``: no toolbar over the titles.
CONFIG = {"displayModeBar": False}
#: Marker colour of each label.
LABEL_COLORS = {0: "#1f77b4", 1: "#d62728"}
_SCALE = [[0.0, "#aec7e8"], [0.5, "#f7f7f7"], [1.0, "#f4a6a6"]]
_POSITIONS = "Viridis"
_CELL = 70  # pixels per cell of the stride pictures
_MIN_WIDTH, _MAX_WIDTH = 400, 1100
_MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}


def _mark(fig: go.Figure, x: int, y: int, **subplot: int) -> None:
    """Frame the cell at ``(x, y)`` in red."""
    red = {"color": "red", "width": 4}
    fig.add_shape(type="rect", x0=x - 0.5, x1=x + 0.5, y0=y - 0.5, y1=y + 0.5, line=red, **subplot)


def dataset_figure(data: Graph, title: str, height: int = 320) -> go.Figure:
    """A scatter plot of a toy dataset, one trace per label."""
    return boundary_figure(data, None, title, height)


def boundary_figure(
    data: Graph | None, probs: np.ndarray | None, title: str, height: int = 420
) -> go.Figure:
    """The model's ``P(y = 1)`` on a grid (shaded, with the 0.5 contour) under the points."""
    traces: list[go.BaseTraceType] = []
    if probs is not None:
        ticks = np.linspace(0.0, 1.0, probs.shape[0]).tolist()
        grid = {"x": ticks, "y": ticks, "z": probs.tolist()}
        traces.append(
            go.Contour(
                **grid,
                zmin=0.0,
                zmax=1.0,
                colorscale=_SCALE,
                contours={"start": 0.0, "end": 1.0, "size": 0.1},
                line={"width": 0},
                colorbar={"title": {"text": "P(y=1)"}, "thickness": 12},
                name="P(y = 1)",
            )
        )
        traces.append(
            go.Contour(
                **grid,
                contours={"start": 0.5, "end": 0.5, "size": 1.0, "coloring": "none"},
                line={"width": 2, "color": "black"},
                showscale=False,
                name="boundary",
                hoverinfo="skip",
            )
        )
    for label in (0, 1) if data is not None else ():
        pts = [x for x, y in zip(data.X, data.y, strict=True) if y == label]
        marker = {"color": LABEL_COLORS[label], "size": 7, "line": {"width": 0.5, "color": "white"}}
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        traces.append(go.Scatter(x=xs, y=ys, mode="markers", name=f"y = {label}", marker=marker))
    fig = go.Figure(traces)
    fig.update_layout(title=title, showlegend=False, height=height, margin=_MARGIN)
    fig.update_xaxes(range=[-0.02, 1.02], title_text="x1", constrain="domain")
    fig.update_yaxes(
        range=[-0.02, 1.02], title_text="x2", scaleanchor="x", scaleratio=1, constrain="domain"
    )
    return fig


def loss_figure(
    losses: Sequence[float], accuracies: Sequence[float], height: int = 420
) -> go.Figure:
    """The loss per epoch (left axis) and the training accuracy (right axis)."""
    epochs = list(range(1, len(losses) + 1))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(x=epochs, y=list(losses), name="loss", mode="lines", line={"color": "#1f77b4"})
    )
    accuracy = {"color": "#ff7f0e", "width": 1}
    fig.add_trace(
        go.Scatter(x=epochs, y=list(accuracies), name="accuracy", mode="lines", line=accuracy),
        secondary_y=True,
    )
    fig.update_layout(
        title="Loss and accuracy",
        height=height,
        margin=_MARGIN,
        legend={"orientation": "h", "y": -0.15},
    )
    fig.update_xaxes(title_text="epoch", rangemode="tozero")
    fig.update_yaxes(title_text="mean loss", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(
        title_text="accuracy",
        range=[0, 1.05],
        tickmode="linear",
        tick0=0,
        dtick=0.25,
        tickformat=".0%",
        showgrid=False,
        secondary_y=True,
    )
    return fig


def storage_figure(storage: np.ndarray, highlight: int | None) -> go.Figure:
    """The flat storage as one row of cells: position below, value inside.

    Cells are coloured by position, with the same colours as ``tensor_figure``, so a cell
    of the tensor and the storage cell it reads share a colour.
    """
    size = len(storage)
    fig = go.Figure(
        go.Heatmap(
            z=[list(range(size))],
            x=list(range(size)),
            text=[[f"{v:g}" for v in storage]],
            texttemplate="%{text}",
            colorscale=_POSITIONS,
            zmin=0,
            zmax=max(size - 1, 1),
            showscale=False,
            xgap=2,
            hovertemplate="position %{x}<br>value %{text}<extra></extra>",
        )
    )
    if highlight is not None:
        _mark(fig, highlight, 0)
    fig.update_layout(
        title="storage",
        height=150,
        width=min(_MAX_WIDTH, max(_MIN_WIDTH, 40 + _CELL * size)),
        margin=_MARGIN,
    )
    fig.update_xaxes(title_text="position", dtick=1)
    fig.update_yaxes(visible=False)
    return fig


def tensor_figure(
    positions: np.ndarray, values: np.ndarray, highlight: tuple[int, ...] | None
) -> go.Figure:
    """The tensor as a grid per index of its first dimension (1-D and 2-D: one grid).

    Each cell shows its value and ``@ position``, the storage cell it reads.
    """
    if positions.ndim == 1:
        positions, values = positions[None, None, :], values[None, None, :]
        highlight = None if highlight is None else (0, 0, *highlight)
        titles = ["t[j]"]
    elif positions.ndim == 2:
        positions, values = positions[None], values[None]
        highlight = None if highlight is None else (0, *highlight)
        titles = ["t[i, j]"]
    else:
        titles = [f"t[{k}, i, j]" for k in range(positions.shape[0])]
    panels, rows, cols = positions.shape
    top = int(positions.max()) if positions.size else 1
    fig = make_subplots(rows=1, cols=panels, subplot_titles=titles, horizontal_spacing=0.04)
    for k in range(panels):
        text = [
            [f"{values[k, i, j]:g}<br>@{positions[k, i, j]}" for j in range(cols)]
            for i in range(rows)
        ]
        fig.add_trace(
            go.Heatmap(
                z=positions[k].tolist(),
                text=text,
                texttemplate="%{text}",
                colorscale=_POSITIONS,
                zmin=0,
                zmax=max(top, 1),
                showscale=False,
                xgap=2,
                ygap=2,
                hovertemplate="index (%{y}, %{x})<br>%{text}<extra></extra>",
            ),
            row=1,
            col=k + 1,
        )
        fig.update_yaxes(autorange="reversed", dtick=1, row=1, col=k + 1)
        fig.update_xaxes(dtick=1, side="top", row=1, col=k + 1)
    if highlight is not None:
        k, i, j = highlight
        _mark(fig, j, i, row=1, col=k + 1)
    fig.update_annotations(yshift=30)  # the panel titles, above the column numbers
    fig.update_layout(
        title="tensor: value and @ storage position",
        height=130 + 60 * rows,
        width=min(_MAX_WIDTH, max(_MIN_WIDTH, 60 + (_CELL * cols + 30) * panels)),
        margin={"l": 10, "r": 10, "t": 100, "b": 10},
    )
    return fig


def filters_figure(images: np.ndarray, titles: Sequence[str], columns: int = 8) -> go.Figure:
    """Small grey-scale images (filters or feature maps) in a grid."""
    count = len(images)
    columns = max(1, min(columns, count))
    rows = (count + columns - 1) // columns
    fig = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=list(titles),
        horizontal_spacing=0.02,
        vertical_spacing=0.08,
    )
    for n, image in enumerate(images):
        fig.add_trace(
            go.Heatmap(z=np.asarray(image).tolist(), colorscale="RdBu", zmid=0.0, showscale=False),
            row=n // columns + 1,
            col=n % columns + 1,
        )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed", scaleanchor="x")
    fig.update_layout(height=40 + 130 * rows, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig
