"""The explorer's computations without Streamlit: expressions, graphs, strides, training."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from mt_testing import require_app_packages

require_app_packages()

from minitorch.autodiff import Scalar  # noqa: E402
from mt_explorer.autodiff_graph import graph_nodes, node_derivatives, to_dot  # noqa: E402
from mt_explorer.expression import ExpressionError, evaluate, parse_variables  # noqa: E402
from mt_explorer.strides import StrideError, explore, parse_shape, position_formula  # noqa: E402
from mt_explorer.training import (  # noqa: E402
    TrainingConfig,
    TrainingJob,
    backend_problem,
    config_from_query,
    probability_grid,
)

# --- expressions -------------------------------------------------------------------------


@pytest.mark.task1_4
def test_expression_builds_the_graph_and_backward_matches_the_math() -> None:
    result = evaluate("(x * y + x.exp()).log()", {"x": 2.0, "y": 0.5})
    result.output.backward()
    inner = 2.0 * 0.5 + math.exp(2.0)
    assert result.output.data == pytest.approx(math.log(inner))
    assert result.variables["x"].derivative == pytest.approx((0.5 + math.exp(2.0)) / inner)
    assert result.variables["y"].derivative == pytest.approx(2.0 / inner)


@pytest.mark.task1_4
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x - y / 2", 2.0 - 0.5 / 2),
        ("-x * 3 + 1", -5.0),
        ("x.sigmoid() * y.relu()", 0.5 / (1 + math.exp(-2.0))),
        ("(-x).relu() + (2).exp()", math.exp(2.0)),
    ],
)
def test_expression_values(text: str, expected: float) -> None:
    assert evaluate(text, {"x": 2.0, "y": 0.5}).output.data == pytest.approx(expected)


def _evaluate(text: str) -> object:
    return evaluate(text, {"x": 2.0, "y": 0.5})


def _explore(code: str) -> object:
    return explore((2, 3), code)


STRIDES = (_explore, parse_shape)
# What the pages refuse, and the words of the message: expressions and variable lists
# (ExpressionError, task 1.4), then shapes and calls on t (StrideError, which keeps the
# library's own message; task 2.1).
REFUSED = [
    (_evaluate, "__import__('os')", "calling __import__(...) is not allowed"),
    (_evaluate, "__import__('os').system('true')", "method .system() is not allowed"),
    (_evaluate, "x.__class__", "the attribute .__class__ is not allowed"),
    (_evaluate, "x.data", "the attribute .data is not allowed"),
    (_evaluate, "x ** 2", "the operator ** is not allowed"),
    (_evaluate, "x.log(2)", ".log() takes no arguments"),
    (_evaluate, "x.backward()", "method .backward() is not allowed"),
    (_evaluate, "z + 1", "unknown name 'z'"),
    (_evaluate, "'a' + x", "only numbers are allowed"),
    (_evaluate, "True * x", "only numbers are allowed"),
    (_evaluate, "[x][0]", "is not allowed"),
    (_evaluate, "x if y else x", "is not allowed"),
    (_evaluate, "lambda: x", "is not allowed"),
    (_evaluate, "x < y", "a comparison is not allowed"),
    (_evaluate, "(x", "not a valid expression"),
    (_evaluate, "1 / 0", "division by zero"),
    (_evaluate, "x / 0", "division by zero"),  # Scalar division alone would give inf
    (_evaluate, "x / (y - 0.5)", "division by zero"),
    (_evaluate, "2 + 3", "does not use any variable"),
    (_evaluate, "", "type an expression"),
    (_evaluate, "x + " * 100 + "x", "characters long"),
    (parse_variables, "x", "needs a value"),
    (parse_variables, "x = a", "not a number"),
    (parse_variables, "x = 1, x = 2", "declared twice"),
    (parse_variables, "x = 1, \uff58 = 2", "declared twice"),  # full-width x is x (NFKC)
    (parse_variables, "1x = 2", "not a usable variable name"),
    (parse_variables, "for = 2", "not a usable variable name"),
    (parse_variables, "x = inf", "must be finite"),
    (parse_variables, " , ", "declare at least one variable"),
    (_explore, "t.permute(1, 0).view(6)", "contiguous"),
    (_explore, "t.view(4)", "cannot view"),
    (_explore, "t.permute(0)", "not a permutation"),
    (_explore, "t.reshape(6)", "not one of"),
    (_explore, "t.view(n)", "must be integers"),
    (_explore, "__import__('os')", "chain of calls on t"),
    (_explore, "t.view(1, 1, 1, 6)", "at most 3"),
    (parse_shape, "", "1 to 3 dimensions"),
    (parse_shape, "2, x", "a list of whole numbers"),
    (parse_shape, "0, 3", "at least 1"),
    (parse_shape, "1, 2, 3, 4", "1 to 3 dimensions"),
    (parse_shape, "11, 11", "has 121 elements"),
]


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        pytest.param(*c, marks=pytest.mark.task2_1 if c[0] in STRIDES else pytest.mark.task1_4)
        for c in REFUSED
    ],
)
def test_what_the_pages_cannot_show_is_refused_with_a_clear_message(
    parse: Callable[[str], object], text: str, message: str
) -> None:
    error = StrideError if parse in STRIDES else ExpressionError
    with pytest.raises(error) as exc:
        parse(text)
    assert message in str(exc.value)


@pytest.mark.task1_4
def test_a_full_width_variable_name_can_be_used() -> None:
    variables = parse_variables("\uff58 = 2, y = 0.5")  # declared as full-width x
    assert variables == {"x": 2.0, "y": 0.5}
    for text in ("\uff58 * y", "x * y"):  # Python reads both names as x
        assert evaluate(text, variables).output.data == pytest.approx(1.0)
    assert evaluate("\uff58 + 1", {"\uff58": 1.0}).output.data == pytest.approx(2.0)


@pytest.mark.task1_4
def test_node_derivatives_agree_with_backward_on_the_leaves() -> None:
    result = evaluate("(x * y - x / y).sigmoid() * x", {"x": 1.5, "y": -0.7})
    derivatives = node_derivatives(result.output)
    result.output.backward()
    for leaf in result.variables.values():
        assert derivatives[leaf.unique_id] == pytest.approx(leaf.derivative)


@pytest.mark.task1_4
def test_graph_nodes_and_dot() -> None:
    result = evaluate("x * x + 3", {"x": 2.0})
    nodes = graph_nodes(result.output)
    kinds = [n.kind for n in nodes]
    assert kinds[0] == "output"
    assert kinds.count("variable") == 1  # x is one node, used twice
    assert kinds.count("constant") == 1
    (x,) = (n for n in nodes if n.kind == "variable")
    assert x.derivative == pytest.approx(4.0)
    mul = next(n for n in nodes if n.label == "Mul")
    assert mul.inputs == (x.key, x.key)
    source = to_dot(nodes).source
    assert "Add (output)" in source
    assert "grad 4" in source
    assert source.count("->") == sum(len(n.inputs) for n in nodes)
    # A leaf used directly: the output's one input is the variable.
    assert [n.kind for n in graph_nodes(Scalar(3.0, name="x").exp())] == ["output", "variable"]


# --- strides -----------------------------------------------------------------------------


@pytest.mark.task2_1
def test_permute_shares_storage_and_swaps_strides() -> None:
    view = explore((2, 3), "t.permute(1, 0)")
    assert [s.strides for s in view.steps] == [(3, 1), (1, 3)]
    assert [s.contiguous for s in view.steps] == [True, False]
    assert all(s.shares_storage for s in view.steps)
    assert view.positions.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert view.values.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert view.storage.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.task2_1
def test_contiguous_copies_then_view_works() -> None:
    view = explore((2, 3), ".permute(1, 0).contiguous().view(6)")
    assert view.shape == (6,)
    assert view.steps[2].shares_storage is False
    assert view.storage.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert view.positions.tolist() == list(range(6))


@pytest.mark.task2_1
def test_three_dims_positions_follow_the_strides() -> None:
    view = explore((2, 3, 4), "t.permute(2, 0, 1)")
    assert view.strides == (1, 12, 4)
    for index in np.ndindex(*view.shape):
        assert view.positions[index] == sum(i * s for i, s in zip(index, view.strides, strict=True))
    assert position_formula((3, 1, 2), view.strides) == "3*1 + 1*12 + 2*4 = 23"


# --- training ------------------------------------------------------------------------------


@pytest.mark.task2_5
def test_config_from_query_ignores_bad_values() -> None:
    cfg = config_from_query({"dataset": "spiral", "epochs": "20", "lr": "nan", "backend": "x"})
    assert (cfg.dataset, cfg.epochs) == ("spiral", 20)
    assert cfg.lr == TrainingConfig().lr
    assert cfg.backend == TrainingConfig().backend
    assert config_from_query({"seed": "0", "hidden": "-3"}).hidden == TrainingConfig().hidden


@pytest.mark.task2_5
def test_backend_problem_names_the_package() -> None:
    assert backend_problem("scalar") is None
    assert backend_problem("simple") is None
    assert "unknown backend" in (backend_problem("gpu9000") or "")


@pytest.mark.task2_5
def test_job_reports_a_failure(stop_training: list) -> None:
    job = TrainingJob(TrainingConfig(dataset="nope", backend="scalar", epochs=1)).start()
    stop_training.append(job)
    assert job.join(timeout=30)
    p = job.snapshot()
    assert p.status == "failed"
    assert "unknown dataset 'nope'" in (p.error or "")


@pytest.mark.task2_5
def test_probability_grid_of_the_tensor_model() -> None:
    from mt_examples import train_tensor
    from mt_examples.toy import ToyConfig

    result = train_tensor.train(ToyConfig("simple", points=6, hidden=2, epochs=1))
    grid = probability_grid(result.model, "simple", 5)
    assert grid.shape == (5, 5)
    assert ((grid >= 0.0) & (grid <= 1.0)).all()
