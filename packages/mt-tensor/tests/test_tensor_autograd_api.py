"""Autograd in PyTorch's vocabulary: grad_fn and its graph, is_leaf, retain_grad, hooks,
retain_graph and freed graphs, in-place fills and their errors, and gradients kept apart.

The same behaviours are compared with PyTorch program by program, on every backend, in
mt-nn's ``test_nn_autograd_vs_torch.py``; here each is pinned down on the simple backend.
"""

import gc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch.operators import Module, Parameter
from minitorch.tensor import (
    AccumulateGrad,
    CallableBool,
    Function,
    History,
    Node,
    RemovableHandle,
    Tensor,
    no_grad,
    ones,
    tensor,
    zeros,
)

pytestmark = pytest.mark.task2_4


def values(t: Tensor | None) -> list[float]:
    assert t is not None
    return [float(v) for v in t.to_numpy().ravel()]


# ------------------------------------------------------------------------------ is_leaf
def test_is_leaf_is_a_property_and_a_method_with_one_answer() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    k = tensor([1.0, 2.0])
    y = x * 2
    assert isinstance(x.is_leaf, CallableBool)
    assert x.is_leaf() is True
    assert k.is_leaf() is True
    assert y.is_leaf() is False
    assert bool(x.is_leaf)
    assert bool(k.is_leaf)
    assert not y.is_leaf
    assert ("leaf" if y.is_leaf else "result") == "result"  # a bound method was always truthy
    assert x.is_leaf
    assert not y.is_leaf
    assert (repr(x.is_leaf), str(y.is_leaf)) == ("True", "False")


def test_is_leaf_follows_pytorch_for_every_kind_of_tensor() -> None:
    torch = pytest.importorskip("torch")
    ours = tensor([1.0, 2.0], requires_grad=True)
    theirs = torch.tensor([1.0, 2.0], requires_grad=True)
    pairs = [
        (ours, theirs),
        (ours * 2, theirs * 2),
        (ours.detach(), theirs.detach()),
        (tensor([1.0]), torch.tensor([1.0])),
        (ours.sum(), theirs.sum()),
    ]
    with no_grad(), torch.no_grad():
        pairs.append((ours * 2, theirs * 2))
    for mine, ref in pairs:
        assert (bool(mine.is_leaf), mine.requires_grad) == (ref.is_leaf, ref.requires_grad)


# ------------------------------------------------------------------------------ grad_fn
def test_grad_fn_is_none_for_leaves_and_names_the_operation_otherwise() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    assert x.grad_fn is None
    assert tensor([1.0]).grad_fn is None
    y = (x * 2).exp().sum()
    assert isinstance(y.grad_fn, Node)
    assert y.grad_fn.name() == type(y.grad_fn).__name__ == "SumBackward0"
    assert repr(y.grad_fn).startswith("<SumBackward0 object at 0x")
    assert y.grad_fn is y.grad_fn  # one node per operation, while it is held


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda x: x * x, "MulBackward0"),
        (lambda x: x + x, "AddBackward0"),
        (lambda x: -x, "NegBackward0"),
        (lambda x: x.exp(), "ExpBackward0"),
        (lambda x: x.log(), "LogBackward0"),
        (lambda x: x.sigmoid(), "SigmoidBackward0"),
        (lambda x: x.relu(), "ReluBackward0"),
        (lambda x: x.sqrt(), "SqrtBackward0"),
        (lambda x: x.abs(), "AbsBackward0"),
        (lambda x: x**3, "PowBackward0"),
        (lambda x: x.sum(), "SumBackward0"),
        (lambda x: x.mean(), "MeanBackward0"),
        (lambda x: x.view(2, 2).permute(1, 0), "PermuteBackward0"),
        (lambda x: x.view(2, 2).permute(1, 0).contiguous(), "CloneBackward0"),
    ],
)
def test_grad_fn_names_are_pytorchs(make, name) -> None:  # type: ignore[no-untyped-def]
    x = tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    assert make(x).grad_fn.name() == name
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    assert type(make(t).grad_fn).__name__ == name


def test_view_and_matmul_nodes_are_named_as_pytorchs() -> None:
    x = tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    assert x.view(2, 2).grad_fn.name() == "ViewBackward0"
    assert (x.view(2, 2) @ x.view(2, 2)).grad_fn.name() == "MmBackward0"


def test_a_custom_function_is_named_as_pytorch_names_a_custom_function() -> None:
    class Twice(Function):
        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            return a.backend.add_zip(a, a)

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            return g.backend.add_zip(g, g)

    x = tensor([1.0], requires_grad=True)
    assert Twice.apply(x).grad_fn.name() == "TwiceBackward"


def test_next_functions_lead_to_inputs_accumulate_grad_and_none() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y + tensor([1.0, 1.0])
    (node_y, i), (none, j) = z.grad_fn.next_functions
    assert node_y is y.grad_fn
    assert none is None
    assert i == j == 0
    (acc, _), (const, _) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad)
    assert acc.variable is x
    assert const is None
    assert acc.next_functions == ()
    assert y.grad_fn.next_functions[0][0] is acc  # the leaf's node is kept while held


def test_saved_tensors_are_shown_and_freed_by_backward() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    k = tensor([3.0, 4.0])
    y = x * k
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 2
    assert saved[0] is x
    assert saved[1] is k
    e = x.exp()
    assert values(e.grad_fn.saved_tensors[0]) == values(e)  # exp keeps its result
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = y.grad_fn.saved_tensors


def test_a_grad_fn_does_not_keep_a_cycle_alive() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    node = y.grad_fn
    history = y.history
    assert history is not None
    assert history.node is not None
    assert history.node() is node
    del node
    gc.collect()
    assert history.node() is None  # held weakly by the history
    assert y.grad_fn is not None  # and made again on demand


# ------------------------------------------------------------------------------ .grad
def test_grad_of_a_non_leaf_warns_and_is_none() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (y * y).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None  # a leaf: no warning
        assert tensor([1.0]).grad is None  # a constant: no warning either


def test_grad_can_be_assigned_a_tensor_of_the_right_shape_or_none() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    x.grad = tensor([5.0, 6.0])
    assert values(x.grad) == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = tensor([1.0])
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = [1.0, 2.0]  # type: ignore[assignment]
    x.grad = None
    assert x.grad is None


def test_retain_grad_keeps_the_gradient_of_a_non_leaf() -> None:
    x = tensor([1.0, -2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    assert not x.retains_grad
    (y * y).sum().backward()
    assert values(y.grad) == [6.0, -12.0]  # 2 y
    assert values(x.grad) == [18.0, -36.0]  # 3 * 2 y
    x.retain_grad()  # a leaf: nothing changes
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tensor([1.0]).retain_grad()


# ------------------------------------------------------------------------------ hooks
def test_hooks_see_the_gradient_replace_it_and_are_removable() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen: list[list[float]] = []
    first = y.register_hook(lambda g: seen.append(values(g)))
    second = y.register_hook(lambda g: g * 10)
    assert isinstance(first, RemovableHandle)
    (y * y).sum().backward(retain_graph=True)
    assert seen == [[4.0, 8.0]]  # 2 y, before the second hook
    assert values(x.grad) == [80.0, 160.0]  # 2 * 10 * 2 y
    first.remove()
    second.remove()
    first.remove()  # twice is fine
    x.grad = None
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0]]
    assert values(x.grad) == [8.0, 16.0]


def test_removing_a_hook_twice_never_removes_a_later_one() -> None:
    """As PyTorch: a second ``remove()`` is a no-op, even after other hooks came and went.

    (Handle ids were reused: register two, remove the second, register a third, and the
    second's ``remove()`` removed the third.)
    """
    x = tensor([1.0, 2.0], requires_grad=True)
    ran: list[str] = []
    x.register_hook(lambda g: ran.append("first"))
    second = x.register_hook(lambda g: ran.append("second"))
    second.remove()
    third = x.register_hook(lambda g: ran.append("third"))
    second.remove()
    assert third.id != second.id
    (x * 1).sum().backward()
    assert ran == ["first", "third"]
    torch = pytest.importorskip("torch")
    tx, tran = torch.tensor([1.0, 2.0], requires_grad=True), []
    tx.register_hook(lambda g: tran.append("first"))
    tsecond = tx.register_hook(lambda g: tran.append("second"))
    tsecond.remove()
    tx.register_hook(lambda g: tran.append("third"))
    tsecond.remove()
    (tx * 1).sum().backward()
    assert tran == ran


def test_backward_runs_under_no_grad_so_hooks_record_no_graph() -> None:
    """A hook returning ``g * w`` (``w`` requires grad) leaves a constant ``x.grad``.

    PyTorch runs the backward pass with grad mode off (unless ``create_graph``); here the
    gradient was a non-leaf that required grad, so ``x.grad.zero_()`` raised.
    """
    x = tensor([1.0, 2.0], requires_grad=True)
    w = tensor([3.0, 4.0], requires_grad=True)
    x.register_hook(lambda g: g * w)
    (x * 1).sum().backward()
    assert x.grad is not None
    assert not x.grad.requires_grad
    assert x.grad.is_leaf
    assert values(x.grad) == [3.0, 4.0]
    x.grad.zero_()
    assert values(x.grad) == [0.0, 0.0]
    torch = pytest.importorskip("torch")
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    tw = torch.tensor([3.0, 4.0], requires_grad=True)
    tx.register_hook(lambda g: g * tw)
    (tx * 1).sum().backward()
    assert (tx.grad.requires_grad, tx.grad.is_leaf) == (False, True)
    assert tx.grad.tolist() == [3.0, 4.0]


def test_backward_in_several_threads_into_one_leaf_loses_no_update() -> None:
    """Gradients accumulate into a shared leaf under a lock, as PyTorch's AccumulateGrad.

    (4 threads of 400 backward passes of ``(x * 2).sum()`` left about 2344, not 3200.)
    """
    import sys
    import threading

    x = tensor([1.0], requires_grad=True)
    start = threading.Barrier(4)

    errors: list[BaseException] = []

    def work() -> None:
        start.wait()
        try:
            for _ in range(400):
                (x * 2).sum().backward()
        except BaseException as e:  # raised again below, in the test's own thread
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, inside the accumulation too
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]
    assert values(x.grad) == [3200.0]


def test_a_leaf_hook_changes_what_is_accumulated() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    with x.register_hook(lambda g: g + 1):
        (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert values(x.grad) == [4.0 + 3.0, 4.0 + 3.0]


def test_hook_errors() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tensor([1.0]).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="callable"):
        x.register_hook(3)  # type: ignore[arg-type]
    x.register_hook(lambda g: tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"hook .* returned .*shape \(2,\)"):
        (x * 1).sum().backward()


# ------------------------------------------------------------------------------ retain_graph
def test_a_second_backward_through_saved_values_raises_unless_retained() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert values(x.grad) == [4.0, 8.0]  # accumulated: 2 * 2x
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()
    assert values(x.grad) == [4.0, 8.0]


def test_backward_frees_the_saved_values_of_the_graph() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    y = (h * h).sum()
    hist = y.history
    assert hist is not None
    mul = h * h
    mul.sum().backward()
    assert mul.history is not None
    assert mul.history.freed
    assert mul.history.ctx is not None
    assert mul.history.ctx.saved_values == ()
    assert mul.history.saved_versions == ()
    assert h.history is not None
    assert h.history.ctx is not None
    assert h.history.ctx.saved_values == ()  # exp's result, freed too


def test_a_graph_that_saved_no_tensor_can_be_walked_twice() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert values(x.grad) == [2.0, 2.0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=5))
def test_two_backward_calls_accumulate_twice_one(xs: list[float]) -> None:
    once = tensor(xs, requires_grad=True)
    (once * once * once).sum().backward()
    twice = tensor(xs, requires_grad=True)
    y = (twice * twice * twice).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(values(twice.grad), [2 * v for v in values(once.grad)])
    np.testing.assert_allclose(values(once.grad), [3 * v * v for v in xs], atol=1e-12)


# ------------------------------------------------------------------------------ requires_grad
def test_requires_grad_setter_and_method_change_leaves_only() -> None:
    x = tensor([1.0])
    x.requires_grad = True
    assert x.requires_grad
    assert x.is_leaf()
    y = x * 2
    y.requires_grad_(True)  # already does: fine
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False
    x.requires_grad = False
    assert not x.requires_grad
    assert not (x * 2).requires_grad


def test_data_is_a_constant_view_and_can_be_assigned() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad
    assert d.is_leaf()
    with no_grad():
        d.fill_(7.0)
    assert values(x) == [7.0, 7.0]
    x.data = tensor([[1.0, 2.0, 3.0]])
    assert x.shape == (1, 3)
    assert x.requires_grad
    with pytest.raises(TypeError, match="data must be a Tensor"):
        x.data = [1.0]  # type: ignore[assignment]


# ------------------------------------------------------------------------------ in place
def test_fills_write_in_place_and_bump_the_version() -> None:
    x = zeros((2, 3))
    assert x.fill_(2.5) is x
    assert values(x) == [2.5] * 6
    assert x.zero_() is x
    assert values(x) == [0.0] * 6
    x.copy_(tensor([1.0, 2.0, 3.0]))  # broadcast over the rows
    assert values(x) == [1.0, 2.0, 3.0] * 2
    x.fill_(tensor([4.0]))
    assert values(x) == [4.0] * 6
    assert x.version == 4


def test_copy_between_overlapping_views_reads_a_copy() -> None:
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    x.copy_(x.permute(1, 0))
    assert x.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_random_fills_are_reproducible_by_seed_and_in_range() -> None:
    a = zeros((50,)).uniform_(-2.0, 3.0, seed=4)
    b = zeros((50,)).uniform_(-2.0, 3.0, seed=4)
    assert values(a) == values(b)
    assert all(-2.0 <= v < 3.0 for v in values(a))
    assert len(set(values(a))) == 50
    n = zeros((4000,)).normal_(1.0, 0.5, seed=np.random.default_rng(0))
    assert abs(np.mean(values(n)) - 1.0) < 0.05
    assert abs(np.std(values(n)) - 0.5) < 0.05
    with pytest.raises(ValueError, match="std >= 0"):
        zeros((2,)).normal_(0.0, -1.0)
    with pytest.raises(TypeError, match="seed"):
        zeros((2,)).uniform_(seed="1")  # type: ignore[arg-type]


def test_fill_rejects_what_is_not_a_number() -> None:
    with pytest.raises(TypeError, match="real number"):
        zeros((2,)).fill_("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="one-element"):
        zeros((2,)).fill_(tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="copy_ takes a Tensor"):
        zeros((2,)).copy_([1.0, 2.0])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "write",
    [
        lambda t: t.fill_(1.0),
        lambda t: t.zero_(),
        lambda t: t.copy_(ones((2,))),
        lambda t: t.uniform_(),
        lambda t: t.normal_(),
        lambda t: t.__setitem__(0, 1.0),
        lambda t: t.__setitem__(slice(None), 1.0),
    ],
)
def test_in_place_writes_to_a_leaf_that_requires_grad_need_no_grad(write) -> None:  # type: ignore[no-untyped-def]
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        write(x)
    assert values(x) == [1.0, 2.0]
    assert x.version == 0
    with no_grad():
        write(x)
    assert x.version >= 1
    assert x.is_leaf()
    assert x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError, match=r"MulBackward0.*no_grad"):
        write(y)  # a non-leaf: the graph cannot record it


def test_fill_with_a_tensor_that_requires_grad_needs_no_grad_as_copy_does() -> None:
    """``fill_(v)`` with a ``v`` that requires grad is refused outside no_grad, as ``copy_``.

    (It took ``v``'s value and dropped the graph silently. PyTorch records FillBackward;
    MiniTorch cannot record an in-place write, so it refuses, as ``copy_`` of such a
    tensor already did.)
    """
    v = tensor([3.0], requires_grad=True)
    k = zeros((2,))
    with pytest.raises(RuntimeError, match="cannot record the fill"):
        k.fill_(v)
    assert values(k) == [0.0, 0.0]
    with no_grad():
        k.fill_(v)
    assert values(k) == [3.0, 3.0]
    assert not k.requires_grad
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.fill_(v)  # the target's own check first, as copy_


def test_copy_from_a_tensor_that_requires_grad_needs_no_grad() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    k = zeros((2,))
    with pytest.raises(RuntimeError, match="cannot record the copy"):
        k.copy_(x)
    with no_grad():
        k.copy_(x)
    assert values(k) == [1.0, 2.0]
    assert not k.requires_grad


def test_an_in_place_change_of_a_saved_tensor_is_caught_with_pytorchs_words() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    e = y.history.inputs[0]  # type: ignore[union-attr]
    with no_grad():
        e.zero_()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*ExpBackward0"):
        y.backward()


# ------------------------------------------------------------------------------ aliasing
def test_leaves_never_share_a_gradient_tensor() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    assert a.grad is not b.grad
    a.grad.zero_()  # type: ignore[union-attr]
    assert values(b.grad) == [1.0, 1.0]
    g = tensor([5.0, 6.0])
    c = tensor([0.0, 0.0], requires_grad=True)
    c.backward(g)
    assert c.grad is not g
    g.fill_(0.0)
    assert values(c.grad) == [5.0, 6.0]


def test_history_is_slotted_with_pytorchs_metadata_off_by_default() -> None:
    h = History()
    assert not hasattr(h, "__dict__")
    assert (h.hooks, h.retains_grad, h.freed, h.node) == (None, False, False, None)


# ------------------------------------------------------------------------------ copy, pickle
def test_deepcopy_of_a_leaf_keeps_requires_grad_and_grad_and_copies_the_values() -> None:
    """As PyTorch. (``copy.deepcopy(tensor([1.]))`` raised TypeError: the backend's
    ``__new__`` needs its ops; ``pickle.dumps`` failed on a kernel's local function.)"""
    import copy

    x = tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    c = copy.deepcopy(x)
    assert values(c) == [1.0, 2.0]
    assert c.requires_grad
    assert c.is_leaf
    assert values(c.grad) == [3.0, 3.0]
    assert c.grad is not x.grad
    with no_grad():
        c.fill_(5.0)
    assert values(x) == [1.0, 2.0]  # the copy has storage of its own
    assert c.backend is x.backend
    plain = copy.deepcopy(tensor([[1.0, 2.0]]).permute(1, 0))
    assert plain.tolist() == [[1.0], [2.0]]
    assert not plain.requires_grad
    shallow = copy.copy(x)
    assert shallow.requires_grad
    assert shallow.grad is None
    with no_grad():
        shallow.fill_(7.0)
    assert values(x) == [7.0, 7.0]
    torch = pytest.importorskip("torch")
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    (tx * 3).sum().backward()
    tc = copy.deepcopy(tx)
    assert (tc.requires_grad, tc.is_leaf, tc.grad.tolist()) == (True, True, [3.0, 3.0])
    assert copy.copy(tx).grad is None


def test_deepcopy_of_a_non_leaf_raises_pytorchs_error() -> None:
    import copy

    y = tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(y)
    assert values(copy.deepcopy(y.detach())) == [2.0]
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(torch.tensor([1.0], requires_grad=True) * 2)


def test_pickle_keeps_values_shape_backend_and_requires_grad_but_not_grad() -> None:
    """As PyTorch's pickling: the gradient is not saved, a non-leaf loads as a leaf."""
    import pickle

    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (x * 2).sum().backward()
    for original in (x, x.permute(1, 0), x[1], zeros((0, 2))):
        loaded = pickle.loads(pickle.dumps(original))
        assert loaded.shape == original.shape
        assert loaded.tolist() == original.tolist()
        assert loaded.backend is original.backend
        assert loaded.requires_grad == original.requires_grad
        assert loaded.grad is None
    made = pickle.loads(pickle.dumps(x * 2))
    assert made.is_leaf
    assert made.requires_grad
    assert made.tolist() == (x * 2).tolist()
    torch = pytest.importorskip("torch")
    tx = torch.tensor([1.0], requires_grad=True)
    (tx * 2).sum().backward()
    assert pickle.loads(pickle.dumps(tx)).grad is None
    ty = pickle.loads(pickle.dumps(tx * 2))
    assert (ty.is_leaf, ty.requires_grad) == (True, True)


class Affine(Module):
    """A model at module level, so pickle finds its class."""

    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(tensor([[1.0, -1.0], [2.0, 0.5]]))
        self.b = Parameter(tensor([0.25, 0.0]))

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.w.value + self.b.value


def test_models_deepcopy_and_pickle_with_their_parameters() -> None:
    """A Module of tensor Parameters copies and pickles; the copy trains on its own."""
    import copy
    import pickle

    model = Affine()
    for twin in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert [n for n, _ in twin.named_parameters()] == ["w", "b"]
        assert twin.w.value is not model.w.value
        assert twin.w.value.tolist() == model.w.value.tolist()
        assert twin.w.value.requires_grad
        assert twin.w.value.is_leaf
        twin(tensor([[1.0, 1.0]])).sum().backward()
        assert twin.w.value.grad is not None
        assert model.w.value.grad is None
