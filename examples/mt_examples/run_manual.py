"""Task 0.5: a network whose weights you choose by hand (module 0 has no training yet).

You build the network from your own ``Module``, ``Parameter`` and operators. ``Linear``
computes ``y_j = b_j + sum_i x_i * w_ij``; ``Network`` passes a point ``(x1, x2)``
through an optional hidden layer of ReLUs, then one output unit and a sigmoid, which gives
``P(y = 1 | x)``: the network says "label 1" where that is above 0.5. Then you choose the
weights. On ``simple`` and ``diag`` the output reads the point directly (no hidden layer):
its weights and bias draw one line, label 1 on one side. On ``split`` two hidden units
each draw a line; their ReLUs are zero on one side of it, and the output adds them up.

Set the weights with sliders and watch the decision boundary move (needs ``pip install
streamlit plotly``)::

    python run_manual.py --app

Its Save button writes ``mt_examples/manual_weights.json``: the export that grading reads
(each dataset's weights, the accuracy they reach and the picture of ``P(y = 1)``). The
same without a browser::

    python run_manual.py --set simple output.weight_0_0=-10 output.bias_0=5
    python run_manual.py                   # each dataset's accuracy, as grading scores it

Run them from the folder that holds ``mt_examples/``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from minitorch.operators import Graph, Module, Parameter, add, mul, relu, sigmoid
from mt_examples import graded

#: Each graded dataset and the hidden units of its network (0: no hidden layer).
HIDDEN = {"simple": 0, "diag": 0, "split": 2}
DATASETS = tuple(HIDDEN)
#: The file the page's Save button and ``--set`` write, beside this script.
EXPORT_NAME = "manual_weights.json"
#: The export's ``format`` field; grading reads no other.
FORMAT = "minitorch-manual/1"
#: The largest export grading reads, in bytes (a real one is about 5 kB).
MAX_EXPORT_BYTES = 65536
#: The range of the page's sliders (any finite value is accepted elsewhere).
WEIGHT_RANGE = (-20.0, 20.0)
#: The picture's grid: ``P(y = 1)`` at ``GRID x GRID`` points of the unit square.
GRID = 21


class ExportError(ValueError):
    """An export that cannot be read (missing, not JSON, wrong format or weights)."""


class Linear(Module):
    """A fully connected layer ``y_j = b_j + sum_i x_i * w_ij`` of float parameters.

    Its parameters are ``weight_i_j`` (input ``i`` to output ``j``) and ``bias_j``, all
    0.0 until you set them.
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        self.in_size = in_size
        self.out_size = out_size
        self.weights: list[list[Parameter]] = [
            [self.add_parameter(f"weight_{i}_{j}", 0.0) for j in range(out_size)]
            for i in range(in_size)
        ]
        self.bias: list[Parameter] = [self.add_parameter(f"bias_{j}", 0.0) for j in range(out_size)]

    def forward(self, inputs: Sequence[float]) -> list[float]:
        """Return the ``out_size`` outputs for ``in_size`` inputs, with ``add`` and ``mul``.

        Raises:
            ValueError: if ``inputs`` does not have ``in_size`` values.
        """
        # BEGIN SOLUTION task0_5
        if len(inputs) != self.in_size:
            raise ValueError(f"Linear expects {self.in_size} inputs, got {len(inputs)}")
        outputs = []
        for j in range(self.out_size):
            total = self.bias[j].value
            for i, x in enumerate(inputs):
                total = add(total, mul(x, self.weights[i][j].value))
            outputs.append(total)
        return outputs
        # END SOLUTION


class Network(Module):
    """``P(y = 1 | x)`` for a point ``x = (x1, x2)``: hidden ReLUs (if any), then a sigmoid.

    With ``hidden`` 0 the output unit reads the point: ``sigmoid(output(x))``; otherwise
    ``sigmoid(output(relu(layer1(x))))``, ``relu`` applied to each hidden value.
    """

    def __init__(self, hidden: int = 0) -> None:
        super().__init__()
        self.hidden = hidden
        if hidden:
            self.layer1 = Linear(2, hidden)
        self.output = Linear(hidden or 2, 1)

    def forward(self, x: Sequence[float]) -> float:
        """Return ``P(y = 1)`` for one point, with the operators ``relu`` and ``sigmoid``."""
        # BEGIN SOLUTION task0_5
        values = list(x)
        if self.hidden:
            values = [relu(v) for v in self.layer1.forward(values)]
        return sigmoid(self.output.forward(values)[0])
        # END SOLUTION


def parameter_names(dataset: str) -> list[str]:
    """The names of the weights of ``dataset``'s network, as ``named_parameters`` gives them."""
    return [name for name, _ in Network(_hidden(dataset)).named_parameters()]


def build(dataset: str, weights: Mapping[str, float] | None = None, network: type = Network) -> Any:
    """``dataset``'s network (of class ``network``) with ``weights`` (name -> value) set.

    Raises:
        ExportError: for a weight the network does not have, one it lacks, or a value that
            is not a finite number.
    """
    net = network(_hidden(dataset))
    if weights is None:
        return net
    params = dict(net.named_parameters())
    unknown = sorted(set(weights) - set(params))
    missing = sorted(set(params) - set(weights))
    if unknown or missing:
        problems = [f"no weight {', '.join(unknown)}" if unknown else ""]
        problems.append(f"missing {', '.join(missing)}" if missing else "")
        raise ExportError(
            f"{dataset}: the network's weights are {', '.join(params)}; "
            + "; ".join(p for p in problems if p)
        )
    for name, value in weights.items():
        params[name].update(_finite(value, f"{dataset}: {name}"))
    return net


def probability(net: Any, points: Sequence[Sequence[float]]) -> list[float]:
    """``net.forward`` of each point, as floats (a non-number is an error naming it)."""
    out = []
    for x in points:
        p = net.forward(list(x))
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"Network.forward returned {type(p).__name__}, not a float")
        out.append(float(p))
    return out


def graded_data(dataset: str) -> Graph:
    """The points ``dataset``'s network is graded on (those of the toy training tasks)."""
    from mt_examples.toy import ToyConfig, make_data

    _hidden(dataset)
    return make_data(ToyConfig(dataset, points=graded.POINTS, seed=graded.SEED))[0]


def score(dataset: str, net: Any) -> graded.Score:
    """How many of ``dataset``'s graded points ``net`` labels correctly (as grading counts).

    Task 0.5 trains nothing: its weights are set by hand on the points the page shows,
    and those are the points it is scored on (the training tasks score held-out points).
    """
    return graded.score(
        dataset, lambda points: [p > 0.5 for p in probability(net, points)], seed=graded.SEED
    )


def picture(net: Any, steps: int = GRID) -> list[list[float]]:
    """``P(y = 1)`` on a ``steps x steps`` grid of the unit square.

    Row ``r`` is at ``x2 = r / (steps - 1)``, column ``c`` at ``x1 = c / (steps - 1)``.
    """
    ticks = [k / (steps - 1) for k in range(steps)]
    return [[round(p, 4) for p in probability(net, [(x1, x2) for x1 in ticks])] for x2 in ticks]


def export_entry(dataset: str, weights: Mapping[str, float], network: type = Network) -> dict:
    """One dataset's part of the export: its weights, the accuracy they reach, the picture."""
    net = build(dataset, weights, network)
    s = score(dataset, net)
    return {
        "hidden": _hidden(dataset),
        "weights": {name: float(weights[name]) for name in parameter_names(dataset)},
        "accuracy": s.correct / s.total,
        "picture": picture(net),
    }


def write_export(path: Path, networks: Mapping[str, Mapping[str, float]]) -> dict:
    """Write the export of ``networks`` (dataset -> weights) to ``path``, atomically."""
    data = {
        "format": FORMAT,
        "networks": {d: export_entry(d, networks[d]) for d in DATASETS if d in networks},
    }
    text = json.dumps(data, indent=1) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return data


def read_export(text: str | bytes) -> dict[str, dict[str, float]]:
    """The weights of each dataset in an export's text: dataset -> name -> value.

    Only the weights are read: the accuracy and the picture are recomputed from them.

    Raises:
        ExportError: if the text is too long, not JSON, not this format, or a dataset's
            weights are not a table of names to finite numbers.
    """
    if len(text) > MAX_EXPORT_BYTES:
        raise ExportError(f"the export has {len(text)} bytes; at most {MAX_EXPORT_BYTES} are read")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ExportError(f"the export is not JSON: {e}") from None
    except RecursionError:
        raise ExportError("the export is nested too deeply to be an export") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f'the export\'s "format" must be "{FORMAT}"')
    networks = data.get("networks")
    if not isinstance(networks, dict):
        raise ExportError('the export has no "networks" table')
    out = {}
    for dataset, entry in networks.items():
        if dataset not in HIDDEN:
            raise ExportError(
                f"the export has a network for {dataset!r}; graded: {', '.join(DATASETS)}"
            )
        weights = entry.get("weights") if isinstance(entry, dict) else None
        if not isinstance(weights, dict):
            raise ExportError(f'{dataset}: no "weights" table')
        out[dataset] = {str(k): _finite(v, f"{dataset}: {k}") for k, v in weights.items()}
    return out


def export_path() -> Path:
    """Where the export lives: ``manual_weights.json`` beside this script."""
    return Path(__file__).with_name(EXPORT_NAME)


def load_export(path: Path | None = None) -> dict[str, dict[str, float]]:
    """Read the export at ``path`` (default :func:`export_path`); {} if there is none."""
    path = path or export_path()
    if not path.is_file():
        return {}
    return read_export(path.read_bytes())


def _hidden(dataset: str) -> int:
    if dataset not in HIDDEN:
        raise ExportError(f"no network for {dataset!r}; the datasets are {', '.join(DATASETS)}")
    return HIDDEN[dataset]


def _finite(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ExportError(f"{where} must be a finite number, got {value!r}")
    return float(value)


def _assignment(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not sep or not name or not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, got {text!r}")
    return name, number


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: print the export's scores, ``--set`` weights, or open the page."""
    parser = argparse.ArgumentParser(
        prog="python run_manual.py",
        description=(
            "Task 0.5: print each dataset's accuracy with the exported weights (as grading "
            "scores them), set weights, or open the page with sliders."
        ),
    )
    parser.add_argument(
        "--export", type=Path, help=f"the export (default: mt_examples/{EXPORT_NAME})"
    )
    parser.add_argument(
        "--set",
        nargs="+",
        metavar=("DATASET", "NAME=VALUE"),
        help="set weights of DATASET's network and write the export (the others start at 0)",
    )
    parser.add_argument("--app", action="store_true", help="open the page (Streamlit)")
    args = parser.parse_args(argv)
    path = args.export or export_path()
    try:
        if args.app:
            return _run_app(path)
        networks = load_export(path)
        if args.set:
            dataset, *pairs = args.set
            current = dict.fromkeys(parameter_names(dataset), 0.0) | networks.get(dataset, {})
            for text in pairs:
                name, value = _assignment(text)
                if name not in current:
                    parser.error(f"{dataset}'s weights are {', '.join(current)}, not {name}")
                current[name] = value
            networks[dataset] = current
            write_export(path, networks)
            print(f"wrote {path}")
        if not networks:
            print(f"no export at {path}: open the page (--app) and press Save, or use --set")
            return 1
        scores = [score(d, build(d, networks[d])) if d in networks else None for d in DATASETS]
    except (ExportError, argparse.ArgumentTypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except NotImplementedError as e:
        print(f"error: {e} (write it first)", file=sys.stderr)
        return 1
    for dataset, s in zip(DATASETS, scores, strict=True):
        print(
            s.message.replace("trained ", "") if s else f"{dataset}: no weights in the export: FAIL"
        )
    return 0 if all(s is not None and s.passed for s in scores) else 1


def _in_streamlit() -> bool:
    try:
        from streamlit import runtime
    except ImportError:
        return False
    return bool(runtime.exists())


def _run_app(path: Path) -> int:
    try:
        import plotly  # noqa: F401
        import streamlit  # noqa: F401
    except ImportError as e:
        print(f"the page needs Streamlit and Plotly: pip install streamlit plotly ({e})")
        return 1
    env = dict(os.environ, MINITORCH_MANUAL_EXPORT=str(path.resolve()))
    here = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "streamlit", "run", str(Path(__file__).resolve())]
    return subprocess.call(cmd, env=env)


def page(network: type = Network, path: Path | None = None) -> None:
    """The page: sliders for one dataset's weights, its boundary and accuracy, Save.

    The explorer's Manual page is this function; ``python run_manual.py --app`` opens it
    alone. ``path`` is the export (default: ``$MINITORCH_MANUAL_EXPORT``, else
    :func:`export_path`).
    """
    import streamlit as st

    path = path or Path(os.environ.get("MINITORCH_MANUAL_EXPORT") or export_path())
    st.title("Set the weights by hand")
    st.caption(
        "Task 0.5: your `Network` from `mt_examples/run_manual.py`. Move the weights until "
        "the black line (P(y = 1) = 0.5) separates the red points (label 1) from the blue "
        "ones, on each dataset; then Save."
    )
    try:
        saved = load_export(path)
    except ExportError as e:
        st.error(f"{path} cannot be read ({e}); Save writes a new one.")
        saved = {}
    dataset = st.radio("Dataset", DATASETS, horizontal=True, key="manual_dataset")
    try:
        names = parameter_names(dataset)
    except NotImplementedError as e:  # the page names the weights with task 0.4's code
        st.warning(f"{e}: the page lists the network's weights with it; write it first.")
        return
    low, high = WEIGHT_RANGE
    columns = st.columns(min(len(names), 3))
    # Each dataset's weights as last set, kept while another dataset is shown (Streamlit
    # forgets the state of a slider that is not drawn); at first, the export's.
    chosen = st.session_state.setdefault("manual_weights", {})
    weights = chosen.setdefault(dataset, {})
    for k, name in enumerate(names):
        start = min(max(weights.get(name, saved.get(dataset, {}).get(name, 0.0)), low), high)
        weights[name] = columns[k % len(columns)].slider(
            name, low, high, start, 0.5, key=f"manual_{dataset}_{name}"
        )
    try:
        net = build(dataset, weights, network)
        s = score(dataset, net)
        grid = picture(net)
    except NotImplementedError as e:
        st.warning(f"{e}: write it in mt_examples/run_manual.py, then reload the page.")
        return
    st.metric("accuracy", f"{s.correct / s.total:.0%}", help=s.message)
    st.plotly_chart(_figure(dataset, grid), key="manual_chart")
    if st.button("Save", type="primary", key="manual_save"):
        data = write_export(path, {**saved, **chosen})
        done = ", ".join(f"{d} {e['accuracy']:.0%}" for d, e in data["networks"].items())
        st.success(f"Saved to {path}: {done}.")
    if path.is_file():
        st.download_button(
            "Download the export", path.read_bytes(), EXPORT_NAME, key="manual_download"
        )


def _figure(dataset: str, grid: list[list[float]]) -> Any:
    """The graded points over the shaded ``P(y = 1)`` and its 0.5 contour."""
    import plotly.graph_objects as go

    ticks = [k / (len(grid) - 1) for k in range(len(grid))]
    data = graded_data(dataset)
    fig = go.Figure(
        [
            go.Contour(
                x=ticks,
                y=ticks,
                z=grid,
                name="P(y = 1)",
                zmin=0,
                zmax=1,
                colorscale="RdBu_r",
                opacity=0.4,
                showscale=False,
                contours={"coloring": "heatmap"},
            ),
            go.Contour(
                x=ticks,
                y=ticks,
                z=grid,
                name="P(y = 1) = 0.5",
                showlegend=True,
                showscale=False,
                contours_coloring="none",
                contours={"start": 0.5, "end": 0.5, "size": 1},
                line={"color": "black", "width": 3},
            ),
            *[
                go.Scatter(
                    x=[p[0] for p, y in zip(data.X, data.y, strict=True) if y == label],
                    y=[p[1] for p, y in zip(data.X, data.y, strict=True) if y == label],
                    mode="markers",
                    name=f"label {label}",
                    marker={"color": "#d62728" if label else "#1f77b4", "size": 9},
                )
                for label in (0, 1)
            ],
        ]
    )
    fig.update_layout(
        height=480,
        xaxis={"range": [0, 1], "title": "x1"},
        yaxis={"range": [0, 1], "title": "x2", "scaleanchor": "x"},
    )
    return fig


if __name__ == "__main__":
    # ``--app`` runs this file under Streamlit: there it draws the page and must not end
    # the script with ``sys.exit``, which stops Streamlit's run before the page is done.
    if _in_streamlit():
        page()
    else:
        sys.exit(main())
