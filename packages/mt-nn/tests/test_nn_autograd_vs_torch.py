"""Differential test of autograd: small programs run under PyTorch and under MiniTorch.

Each program is written once, against a thin adapter (``lib.tensor``, ``lib.no_grad``,
``lib.linear``...), and records what it prints: gradients (shape and values), flags,
``grad_fn`` names, whether reading ``.grad`` warned, and the type of each error raised.
The record made under PyTorch is the expected one; MiniTorch must make the same on every
backend (simple, fast, and CUDA when mt-cuda runs here, on a GPU or the simulator).

Run them with pytest on this file (PyTorch needed: without it each test skips). A
program's record is also the output of
``run(program, TorchLib())`` / ``run(program, MiniLib(backend))``, to read side by side.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch.tensor as mt
from minitorch.fast import FastBackend
from minitorch.nn import Linear
from minitorch.tensor import SimpleBackend, TensorBackend, no_grad

try:
    import torch
except ImportError:  # each test skips, so `-k` deselects them like any others
    torch = None
pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ---------------------------------------------------------------------------- the adapters
class TorchLib:
    """The programs' vocabulary in PyTorch (float64 throughout)."""

    name = "torch"

    def tensor(self, data: Any, requires_grad: bool = False) -> Any:
        return torch.tensor(data, dtype=torch.float64, requires_grad=requires_grad)

    def no_grad(self) -> Any:
        return torch.no_grad()

    def linear(self, n_in: int, n_out: int) -> Any:
        return torch.nn.Linear(n_in, n_out, dtype=torch.float64)

    def set_linear(self, m: Any, weight: list[list[float]], bias: list[float]) -> None:
        """Copy ``weight`` (PyTorch's layout: ``(out, in)``) and ``bias`` in place."""
        m.weight.copy_(self.tensor(weight))
        m.bias.copy_(self.tensor(bias))

    def weight_grad(self, m: Any) -> Any:
        """The weight's gradient in PyTorch's layout ``(out, in)``."""
        return m.weight.grad


class MiniLib:
    """The same vocabulary in MiniTorch, on one backend."""

    def __init__(self, backend: TensorBackend) -> None:
        self.backend = backend
        self.name = backend.name

    def tensor(self, data: Any, requires_grad: bool = False) -> Any:
        return mt.tensor(data, backend=self.backend, requires_grad=requires_grad)

    def no_grad(self) -> Any:
        return no_grad()

    def linear(self, n_in: int, n_out: int) -> Any:
        return Linear(n_in, n_out, backend=self.backend, seed=0)

    def set_linear(self, m: Any, weight: list[list[float]], bias: list[float]) -> None:
        """MiniTorch's weight is ``(in, out)``: copy the transpose of PyTorch's layout."""
        m.weight.copy_(self.tensor(weight).permute(1, 0))
        m.bias.copy_(self.tensor(bias))

    def weight_grad(self, m: Any) -> Any:
        g = m.weight.grad
        return None if g is None else g.permute(1, 0)


# ---------------------------------------------------------------------------- the record
def _values(t: Any) -> Any:
    """A tensor (or None, or a plain value) as something both libraries print alike."""
    if t is None or isinstance(t, (bool, str)):
        return t
    if isinstance(t, (int, float)):
        return round(float(t), 9)
    if isinstance(t, list):
        return [round(float(v), 9) for v in np.asarray(t, dtype=float).ravel()]
    flat = np.asarray(t.tolist(), dtype=float).ravel()
    return (tuple(t.shape), [round(float(v), 9) for v in flat])


class Record:
    """What a program printed, line by line."""

    def __init__(self) -> None:
        self.lines: list[tuple[Any, ...]] = []

    def show(self, label: str, value: Any) -> None:
        """Print a tensor, a flag, a name or None."""
        self.lines.append((label, _values(value)))

    def grad(self, label: str, t: Any) -> None:
        """Print ``t.grad``, and whether reading it warned (a non-leaf that did not retain)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = t.grad
        warned = any("not a leaf Tensor" in str(w.message) for w in caught)
        self.lines.append((label, _values(g), "warned" if warned else "quiet"))

    def raises(self, label: str, fn: Callable[[], Any]) -> None:
        """Run ``fn`` and print the type of the exception it raised, or that it raised none."""
        try:
            fn()
        except Exception as e:  # the type is what is compared
            self.lines.append((label, type(e).__name__))
        else:
            self.lines.append((label, "no error"))


def _name(node: Any) -> str | None:
    """A node's class name (``name()`` of PyTorch's AccumulateGrad has a C++ namespace)."""
    return None if node is None else type(node).__name__


# ---------------------------------------------------------------------------- the programs
def issue_program(lib: Any, out: Record) -> None:
    """The program of the issue: a Linear filled with ones, frozen, on an unbatched input."""
    m = lib.linear(2, 2)
    m.eval()
    with lib.no_grad():
        for param in m.parameters():
            param.fill_(1)
    m.requires_grad_(False)
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = m(a)
    d = c * 2
    d.sum().backward()
    out.grad("a.grad", a)
    out.grad("c.grad", c)
    out.grad("d.grad", d)
    out.grad("M.weight.grad", m.weight)
    out.show("d.grad_fn", _name(d.grad_fn))
    out.show("c", c)


def leaves_and_non_leaves(lib: Any, out: Record) -> None:
    """is_leaf, requires_grad and grad_fn of a leaf, results, and a constant."""
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    k = lib.tensor([2.0, 2.0, 2.0])
    y = x * k
    z = y.exp()
    for label, t in [("x", x), ("k", k), ("y", y), ("z", z)]:
        out.show(f"{label}.is_leaf", bool(t.is_leaf))
        out.show(f"{label}.requires_grad", t.requires_grad)
        out.show(f"{label}.grad_fn", _name(t.grad_fn))
    out.show("if y.is_leaf", "yes" if y.is_leaf else "no")


def walk_next_functions(lib: Any, out: Record) -> None:
    """The graph of ``sigmoid(x * w + b).sum()`` walked through ``next_functions``."""
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = lib.tensor([[0.5, -1.0], [0.25, 2.0]], requires_grad=True)
    b = lib.tensor([0.1, 0.2], requires_grad=True)
    loss = (x * w + b).sigmoid().sum()
    names: list[Any] = []
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        names.append(_name(node))
        if node is not None:
            stack.extend(reversed([n for n, _ in node.next_functions]))
    out.show("walk", " ".join(str(n) for n in names))
    acc = loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[1][0]
    out.show("AccumulateGrad.variable is b", acc.variable is b)
    loss.backward()
    out.grad("w.grad", w)
    out.grad("b.grad", b)


def accumulate_over_two_backwards(lib: Any, out: Record) -> None:
    """Two graphs, two backward calls: the leaf's gradient is the sum."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    out.grad("after one", x)
    (x * x * x).sum().backward()
    out.grad("after two", x)


def second_backward_raises(lib: Any, out: Record) -> None:
    """A graph whose saved tensors were freed by the first backward refuses a second."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    out.raises("second backward", lambda: y.backward())
    out.grad("x.grad", x)
    e = x.exp().sum()
    e.backward()
    out.raises("second backward through exp", lambda: e.backward())


def retain_graph_keeps_it(lib: Any, out: Record) -> None:
    """retain_graph=True allows another backward; the one after that frees the graph."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sigmoid().sum()
    y.backward(retain_graph=True)
    out.grad("x.grad once", x)
    y.backward()
    out.grad("x.grad twice", x)
    out.raises("third backward", lambda: y.backward())


def graph_without_saved_tensors(lib: Any, out: Record) -> None:
    """Sums and additions save no tensors: a second backward through them works."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.sum()
    y.backward()
    y.backward()
    out.grad("x.grad", x)


def retain_grad_of_a_non_leaf(lib: Any, out: Record) -> None:
    """retain_grad keeps a non-leaf's gradient; others warn and give None."""
    x = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = y * y
    z.sum().backward()
    out.show("y.retains_grad", y.retains_grad)
    out.show("z.retains_grad", z.retains_grad)
    out.grad("y.grad", y)
    out.grad("z.grad", z)
    out.grad("x.grad", x)


def retained_grad_accumulates(lib: Any, out: Record) -> None:
    """A retained gradient adds up over two backward passes, like a leaf's."""
    x = lib.tensor([2.0, 5.0], requires_grad=True)
    y = x.exp()
    y.retain_grad()
    loss = (y * x).sum()
    loss.backward(retain_graph=True)
    out.grad("y.grad once", y)
    loss.backward()
    out.grad("y.grad twice", y)
    out.grad("x.grad twice", x)


def hook_replaces_a_gradient(lib: Any, out: Record) -> None:
    """A hook on a non-leaf sees its gradient and its return value replaces it."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    seen: list[Any] = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    (y * y).sum().backward()
    out.show("hook saw", seen[0])
    out.grad("y.grad", y)
    out.grad("x.grad", x)


def hook_on_a_leaf_and_removal(lib: Any, out: Record) -> None:
    """A hook on a leaf changes what is accumulated; after ``remove()`` it no longer runs."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    out.grad("with hook", x)
    handle.remove()
    (x * 3).sum().backward()
    out.grad("hook removed", x)


def hooks_need_grad(lib: Any, out: Record) -> None:
    """Hooks and retain_grad on a tensor that does not require grad are errors."""
    k = lib.tensor([1.0, 2.0])
    out.raises("register_hook", lambda: k.register_hook(lambda g: g))
    out.raises("retain_grad", lambda: k.retain_grad())
    x = lib.tensor([1.0], requires_grad=True)
    x.retain_grad()  # a leaf: nothing to do
    out.show("leaf retains_grad", x.retains_grad)


def detach_cuts_the_graph(lib: Any, out: Record) -> None:
    """A detached value is a constant leaf: no gradient flows through it."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    z = y.detach()
    out.show("z.requires_grad", z.requires_grad)
    out.show("z.is_leaf", bool(z.is_leaf))
    out.show("z.grad_fn", _name(z.grad_fn))
    (z * x).sum().backward()
    out.grad("x.grad", x)


def no_grad_records_nothing(lib: Any, out: Record) -> None:
    """Inside no_grad results are constants; backward on one is an error."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        y = (x * 2).sum()
    out.show("y.requires_grad", y.requires_grad)
    out.show("y.is_leaf", bool(y.is_leaf))
    out.show("y.grad_fn", _name(y.grad_fn))
    out.raises("y.backward()", lambda: y.backward())
    out.grad("x.grad", x)


def requires_grad_on_a_module(lib: Any, out: Record) -> None:
    """A frozen Linear gives gradients to its input only; unfrozen, to its parameters too."""
    m = lib.linear(3, 2)
    with lib.no_grad():
        lib.set_linear(m, [[1.0, -1.0, 0.5], [2.0, 0.0, -0.5]], [0.1, -0.2])
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=True)
    m.requires_grad_(False)
    out.show("frozen weight.requires_grad", m.weight.requires_grad)
    (m(x) * m(x)).sum().backward()
    out.grad("x.grad", x)
    out.show("frozen weight.grad", lib.weight_grad(m))
    m.requires_grad_(True)
    x.grad = None
    (m(x) * m(x)).sum().backward()
    out.show("weight.grad", lib.weight_grad(m))
    out.grad("bias.grad", m.bias)
    out.grad("x.grad", x)


def in_place_fills_under_no_grad(lib: Any, out: Record) -> None:
    """fill_, zero_ and copy_ initialise parameters under no_grad; training then works."""
    m = lib.linear(2, 3)
    with lib.no_grad():
        m.weight.fill_(0.5)
        m.bias.zero_()
        m.bias.copy_(lib.tensor([1.0, 2.0, 3.0]))
    out.show("bias", m.bias)
    x = lib.tensor([[1.0, -1.0], [2.0, 3.0]])
    m(x).sum().backward()
    out.grad("bias.grad", m.bias)
    out.show("weight.grad", lib.weight_grad(m))
    uniform = lib.tensor([0.0] * 200)
    uniform.uniform_(2.0, 3.0)
    values = uniform.tolist()
    out.show("uniform_ within [2, 3)", all(2.0 <= v < 3.0 for v in values))
    out.show("uniform_ not constant", len(set(values)) > 100)


def in_place_on_a_leaf_outside_no_grad(lib: Any, out: Record) -> None:
    """An in-place write to a leaf that requires grad raises; under no_grad it is allowed."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out.raises("x.fill_(0)", lambda: x.fill_(0))
    out.raises("x.zero_()", lambda: x.zero_())
    out.raises("x.copy_(...)", lambda: x.copy_(lib.tensor([3.0, 4.0])))

    def setitem() -> None:
        x[0] = 5.0

    out.raises("x[0] = 5", setitem)
    with lib.no_grad():
        x.fill_(3.0)
    out.show("x after fill_ under no_grad", x)
    out.show("x still a leaf", bool(x.is_leaf) and x.requires_grad)


def in_place_change_of_a_saved_tensor(lib: Any, out: Record) -> None:
    """Changing a tensor saved for backward is caught when backward runs."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with lib.no_grad():
        x.fill_(5.0)
    out.raises("backward after x changed", lambda: y.backward())
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    e = w.exp()
    loss = e.sum()
    with lib.no_grad():
        e.zero_()
    out.raises("backward after exp's result changed", lambda: loss.backward())
    s = lib.tensor([1.0, 2.0], requires_grad=True)
    t = s + 1  # saves nothing: an in-place change of t does not matter to it
    with lib.no_grad():
        t.fill_(0.0)
    t.sum().backward()
    out.grad("s.grad", s)


def requires_grad_flags(lib: Any, out: Record) -> None:
    """requires_grad_ and the requires_grad setter: leaves only."""
    x = lib.tensor([1.0, 2.0])
    x.requires_grad_()
    out.show("x.requires_grad", x.requires_grad)
    y = x * 2
    out.raises("y.requires_grad_(False)", lambda: y.requires_grad_(False))

    def set_flag() -> None:
        y.requires_grad = False

    out.raises("y.requires_grad = False", set_flag)
    x.requires_grad = False
    out.show("x.requires_grad after = False", x.requires_grad)
    out.show("x*2 requires_grad", (x * 2).requires_grad)


def gradients_are_not_shared(lib: Any, out: Record) -> None:
    """Zeroing one leaf's gradient in place leaves another's, even after ``a + b``."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    out.grad("a.grad", a)
    out.grad("b.grad", b)
    g = lib.tensor([5.0, 6.0])
    c = lib.tensor([0.0, 0.0], requires_grad=True)
    (c + 0).backward(g)
    with lib.no_grad():
        g.fill_(0.0)
    out.grad("c.grad after the caller's gradient changed", c)


PROGRAMS = [
    issue_program,
    leaves_and_non_leaves,
    walk_next_functions,
    accumulate_over_two_backwards,
    second_backward_raises,
    retain_graph_keeps_it,
    graph_without_saved_tensors,
    retain_grad_of_a_non_leaf,
    retained_grad_accumulates,
    hook_replaces_a_gradient,
    hook_on_a_leaf_and_removal,
    hooks_need_grad,
    detach_cuts_the_graph,
    no_grad_records_nothing,
    requires_grad_on_a_module,
    in_place_fills_under_no_grad,
    in_place_on_a_leaf_outside_no_grad,
    in_place_change_of_a_saved_tensor,
    requires_grad_flags,
    gradients_are_not_shared,
]


def _cuda() -> TensorBackend | None:
    """``CudaBackend`` if mt-cuda is installed and runs here (a GPU or the simulator)."""
    try:
        import minitorch.cuda as mc
    except ImportError:
        return None
    return mc.CudaBackend if mc.is_available() else None


BACKENDS = [SimpleBackend, FastBackend] + [b for b in [_cuda()] if b is not None]


def run(program: Callable[[Any, Record], None], lib: Any) -> list[tuple[Any, ...]]:
    """The record of ``program`` under ``lib``."""
    record = Record()
    program(lib, record)
    return record.lines


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_prints_what_pytorch_prints(
    program: Callable[[Any, Record], None], backend: TensorBackend
) -> None:
    expected = run(program, TorchLib())
    assert run(program, MiniLib(backend)) == expected


def test_the_programs_are_not_trivial() -> None:
    """Every program prints something, and the suite has gradients, errors and warnings."""
    lines = [line for p in PROGRAMS for line in run(p, TorchLib())]
    assert all(run(p, TorchLib()) for p in PROGRAMS)
    assert sum(1 for line in lines if line[1] == "RuntimeError") >= 8
    assert sum(1 for line in lines if line[-1] == "warned") >= 3
    assert len(PROGRAMS) >= 15


# ---------------------------------------------------------------------------- layer nodes
def _layer_ops(nn: Any, F: Any, lib: str) -> dict[str, Callable[[Any, Any], Any]]:
    """Each Module 4 operation, as ``op(x, w)`` for a ``(1, 2, 4, 4)`` input ``x``."""
    if lib == "torch":
        return {
            "conv2d": lambda x, w: F.conv2d(x, w),
            "conv1d": lambda x, w: F.conv1d(x[:, :, 0], w[:, :, 0]),
            "avgpool2d": lambda x, w: F.avg_pool2d(x, 2),
            "maxpool2d": lambda x, w: F.max_pool2d(x, 2),
            "softmax": lambda x, w: F.softmax(x, 1),
            "logsoftmax": lambda x, w: F.log_softmax(x, 1),
            "dropout": lambda x, w: F.dropout(x, 0.5, True),
            "nll_loss": lambda x, w: F.nll_loss(F.log_softmax(x[:, :, 0, 0], 1), torch.tensor([0])),
        }
    return {
        "conv2d": lambda x, w: nn.conv2d(x, w),
        "conv1d": lambda x, w: nn.conv1d(x[:, :, 0], w[:, :, 0]),
        "avgpool2d": lambda x, w: nn.avgpool2d(x, (2, 2)),
        "maxpool2d": lambda x, w: nn.maxpool2d(x, (2, 2)),
        "softmax": lambda x, w: nn.softmax(x, 1),
        "logsoftmax": lambda x, w: nn.logsoftmax(x, 1),
        "dropout": lambda x, w: nn.dropout(x, 0.5, seed=0),
        "nll_loss": lambda x, w: nn.nll_loss(nn.logsoftmax(x[:, :, 0, 0], 1), [0]),
    }


@pytest.mark.parametrize(
    "op",
    [
        pytest.param("conv2d", marks=pytest.mark.task4_1),
        pytest.param("conv1d", marks=pytest.mark.task4_1),
        pytest.param("avgpool2d", marks=pytest.mark.task4_3),
        pytest.param("maxpool2d", marks=pytest.mark.task4_3),
        pytest.param("softmax", marks=pytest.mark.task4_4),
        pytest.param("logsoftmax", marks=pytest.mark.task4_4),
        pytest.param("dropout", marks=pytest.mark.task4_4),
        pytest.param("nll_loss", marks=pytest.mark.task4_4),
    ],
)
def test_layer_nodes_are_named_as_pytorchs(op: str) -> None:
    import minitorch.nn as nn

    F = torch.nn.functional
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 2, 2))
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    expected = _layer_ops(nn, F, "torch")[op](tx, tw).grad_fn.name()
    mine = _layer_ops(nn, F, "minitorch")[op](
        mt.tensor(x.tolist(), requires_grad=True), mt.tensor(w.tolist(), requires_grad=True)
    )
    assert mine.grad_fn.name() == expected
