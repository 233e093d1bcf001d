"""Task 4.5: layers, initialisation and losses."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch.nn as nn
from minitorch.autodiff import Adam
from minitorch.fast import FastBackend
from minitorch.operators import Module
from minitorch.tensor import SimpleBackend, from_numpy, grad_check, no_grad, tensor

pytestmark = pytest.mark.task4_5


def test_linear_shapes_init_and_forward() -> None:
    layer = nn.Linear(5, 3, backend=FastBackend, seed=0)
    names = dict(layer.named_parameters())
    assert set(names) == {"weight", "bias"}
    w, b = names["weight"].value, names["bias"].value
    assert w.shape == (5, 3)
    assert b.shape == (3,)
    assert w.backend is FastBackend
    bound = 1 / math.sqrt(5)
    assert np.abs(w.to_numpy()).max() <= bound
    assert np.abs(b.to_numpy()).max() <= bound
    x = np.random.default_rng(0).standard_normal((4, 5))
    out = layer(from_numpy(x, FastBackend))
    np.testing.assert_allclose(out.to_numpy(), x @ w.to_numpy() + b.to_numpy(), atol=1e-12)


def test_layers_are_reproducible_by_seed() -> None:
    a, b = nn.Conv2d(2, 3, 3, seed=4), nn.Conv2d(2, 3, 3, seed=4)
    np.testing.assert_array_equal(a.weight.value.to_numpy(), b.weight.value.to_numpy())
    c = nn.Conv2d(2, 3, 3, seed=5)
    assert not np.array_equal(a.weight.value.to_numpy(), c.weight.value.to_numpy())


def test_conv_layers_match_functional(ref) -> None:
    x1 = np.random.default_rng(1).standard_normal((2, 3, 7))
    layer1 = nn.Conv1d(3, 4, 3, backend=SimpleBackend, seed=0)
    assert layer1.weight.value.shape == (4, 3, 3)
    assert layer1.bias.value.shape == (4,)
    w, b = layer1.weight.value.to_numpy(), layer1.bias.value.to_numpy()
    np.testing.assert_allclose(
        layer1(from_numpy(x1, SimpleBackend)).to_numpy(), ref.conv(x1, w, b), atol=1e-12
    )
    bound = 1 / math.sqrt(3 * 3)
    assert np.abs(w).max() <= bound
    x2 = np.random.default_rng(2).standard_normal((2, 2, 5, 6))
    layer2 = nn.Conv2d(2, 3, (2, 3), backend="fast", seed=0)
    assert layer2.weight.value.shape == (3, 2, 2, 3)
    w, b = layer2.weight.value.to_numpy(), layer2.bias.value.to_numpy()
    np.testing.assert_allclose(
        layer2(from_numpy(x2, FastBackend)).to_numpy(), ref.conv(x2, w, b), atol=1e-12
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Linear(0, 3),
        lambda: nn.Linear(2, -1),
        lambda: nn.Conv1d(2, 3, 0),
        lambda: nn.Conv2d(2, 3, (3, 0)),
        lambda: nn.Conv2d(2, 3, np.int64(0)),
    ],
)
def test_bad_layer_sizes_raise(make) -> None:
    with pytest.raises(ValueError, match="must be a positive int"):
        make()


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Conv2d(1.5, 3, 3),  # type: ignore[arg-type]
        lambda: nn.Linear(True, 3),
        lambda: nn.Linear("2", 3),  # type: ignore[arg-type]
        lambda: nn.Conv2d(2, 3, (3, 3, 3)),  # type: ignore[arg-type]
    ],
)
def test_layer_sizes_that_are_not_ints_raise_a_type_error(make) -> None:
    with pytest.raises(TypeError, match=r"must be an int|must be an int or a pair"):
        make()


def test_numpy_integers_are_sizes_as_pytorch_takes_them() -> None:
    """``Linear(np.int64(2), 3)``: NumPy's integers are ints (a shape read from an array)."""
    lin = nn.Linear(np.int64(2), np.int32(3), seed=0)
    assert lin.weight.value.shape == (2, 3)
    assert type(lin.in_size) is int
    conv = nn.Conv2d(np.int64(1), 2, np.int64(3), seed=0)
    assert conv.weight.value.shape == (2, 1, 3, 3)
    conv1 = nn.Conv1d(1, np.int16(2), np.int64(3), seed=0)
    assert conv1.weight.value.shape == (2, 1, 3)


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("Linear", lambda seed: nn.Linear(2, 3, seed=seed)),
        ("Conv1d", lambda seed: nn.Conv1d(1, 2, 3, seed=seed)),
        ("Conv2d", lambda seed: nn.Conv2d(1, 2, 3, seed=seed)),
        ("dropout", lambda seed: nn.dropout(from_numpy(np.ones((2, 2))), 0.5, seed=seed)),
    ],
)
@pytest.mark.parametrize(("seed", "error"), [("x", TypeError), (1.5, TypeError), (-1, ValueError)])
def test_a_bad_seed_is_named(name, make, seed, error) -> None:
    # Regression: a string seed reached numpy ("SeedSequence expects int or sequence of ints")
    with pytest.raises(error, match=rf"^{name}: seed must be"):
        make(seed)


def test_linear_rejects_a_wrong_input_shape() -> None:
    with pytest.raises(ValueError, match=r"\(batch, 5\)"):
        nn.Linear(5, 3)(from_numpy(np.ones((2, 4)), FastBackend))


def test_nll_loss_and_cross_entropy(backend) -> None:
    logits = np.random.default_rng(3).standard_normal((4, 3))
    labels = [0, 2, 1, 2]
    lp = nn.logsoftmax(from_numpy(logits, backend), 1)
    loss = nn.nll_loss(lp, labels)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    expected = -log_probs[np.arange(4), labels].mean()
    assert loss.shape == (1,)
    assert loss.item() == pytest.approx(expected)
    assert nn.cross_entropy(from_numpy(logits, backend), labels).item() == pytest.approx(expected)
    onehot = from_numpy(nn.one_hot(labels, 3), backend)
    assert nn.nll_loss(lp, onehot).item() == pytest.approx(expected)
    grad_check(lambda z: nn.cross_entropy(z, labels), from_numpy(logits, backend), samples=None)


def test_losses_match_torch(torch_ref) -> None:
    torch = torch_ref.torch
    logits = np.random.default_rng(4).standard_normal((5, 4))
    labels = np.array([3, 0, 1, 1, 2])
    tz = torch.from_numpy(logits).requires_grad_(True)
    torch.nn.functional.cross_entropy(tz, torch.from_numpy(labels)).backward()
    z = from_numpy(logits, FastBackend).requires_grad_(True)
    loss = nn.cross_entropy(z, labels)
    loss.backward()
    expected = torch.nn.functional.cross_entropy(torch.from_numpy(logits), torch.from_numpy(labels))
    assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
    np.testing.assert_allclose(z.grad.to_numpy(), tz.grad.numpy(), atol=1e-12)


def test_loss_errors() -> None:
    lp = tensor([[0.0, 0.0], [0.0, 0.0]], backend=FastBackend)
    with pytest.raises(ValueError, match=r"ints in \[0, 2\)"):
        nn.nll_loss(lp, [0, 2])
    with pytest.raises(ValueError, match="does not match"):
        nn.nll_loss(lp, [0, 1, 1])
    with pytest.raises(ValueError, match="classes"):
        nn.nll_loss(tensor([0.0, 1.0]), [0])
    with pytest.raises(ValueError, match="class indices"):
        nn.one_hot([[0, 1]], 2)


@pytest.mark.parametrize(
    ("classes", "error"), [("x", TypeError), (2.0, TypeError), (0, ValueError)]
)
def test_one_hot_names_a_bad_class_count(classes, error) -> None:
    # Regression: one_hot([0, 1], 'x') ended in numpy's UFuncTypeError
    with pytest.raises(error, match=r"^one_hot: classes must be"):
        nn.one_hot([0, 1], classes)


def test_a_small_conv_network_learns() -> None:
    """Bright-left vs bright-right 6x6 images: the loss falls and the net classifies them."""

    class Net(Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, backend=FastBackend, seed=0)
            self.linear = nn.Linear(2 * 3 * 3, 2, backend=FastBackend, seed=1)

        def forward(self, x):
            h = nn.avgpool2d(self.conv(x).relu(), (2, 2))
            return nn.logsoftmax(self.linear(h.view(x.shape[0], 18)), 1)

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 32)
    images = rng.random((32, 1, 6, 6)) * 0.2
    for k, y in enumerate(labels):
        images[k, 0, :, :3] += y
        images[k, 0, :, 3:] += 1 - y
    model = Net()
    opt = Adam(model.parameters(), lr=0.05)
    x = from_numpy(images, FastBackend)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        out = model(x)
        loss = nn.nll_loss(out, labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    model.eval()
    assert (np.argmax(model(x).to_numpy(), axis=1) == labels).all()


def test_layers_use_the_default_backend() -> None:
    """Layers put their parameters where tensor()/rand() put tensors."""
    from minitorch.tensor import default_backend, get_default_backend

    for layer in (nn.Linear(2, 3), nn.Conv1d(1, 2, 2), nn.Conv2d(1, 2, 2)):
        assert all(p.value.backend == get_default_backend() for p in layer.parameters())
    with default_backend("fast"):
        for layer in (nn.Linear(2, 3), nn.Conv1d(1, 2, 2), nn.Conv2d(1, 2, 2)):
            assert all(p.value.backend == FastBackend for p in layer.parameters())


def test_the_issue_program_runs_and_gives_pytorchs_numbers(backend) -> None:
    """The autograd walk-through of the guide: a frozen Linear on an unbatched input.

    PyTorch prints ``tensor([4., 4.]) None None None`` and ``<MulBackward0 ...>``: with
    every parameter 1, ``d = 2 (W a + b)`` and ``d(sum d)/da = 2 * (column sums of W)``.
    """
    m = nn.Linear(2, 2, backend=backend)
    m.eval()
    with no_grad():
        for param in m.parameters():
            param.value.fill_(1)
    m.requires_grad_(False)
    a = tensor([1.0, 2.0], backend=backend, requires_grad=True)
    c = m(a)
    d = c * 2
    d.sum().backward()
    assert c.shape == (2,)
    assert c.tolist() == [4.0, 4.0]
    assert a.grad is not None
    assert a.grad.tolist() == [4.0, 4.0]
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        grads = (c.grad, d.grad)
    assert grads == (None, None)
    assert m.weight.value.grad is None
    assert m.weight.grad is None
    assert d.grad_fn is not None
    assert d.grad_fn.name() == "MulBackward0"


def test_layers_take_unbatched_and_many_dimensional_input_as_pytorch(backend) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    ours = nn.Linear(3, 2, backend=backend, seed=1)
    theirs = torch.nn.Linear(3, 2, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.value.to_numpy().T.copy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.value.to_numpy().copy()))
    for shape in [(3,), (4, 3), (2, 4, 3)]:
        x = rng.standard_normal(shape)
        mine = ours(from_numpy(x, backend))
        ref = theirs(torch.from_numpy(x))
        assert mine.shape == tuple(ref.shape)
        np.testing.assert_allclose(mine.to_numpy(), ref.detach().numpy(), atol=1e-12)
    with pytest.raises(ValueError, match=r"\(3,\)"):
        ours(from_numpy(np.ones(4), backend))
    for layer, shape, out in [
        (nn.Conv1d(2, 3, 2, backend=backend, seed=0), (2, 5), (3, 5)),
        (nn.Conv2d(2, 3, 2, backend=backend, seed=0), (2, 4, 5), (3, 4, 5)),
    ]:
        x = rng.standard_normal(shape)
        single = layer(from_numpy(x, backend))
        batched = layer(from_numpy(x[None], backend))
        assert single.shape == out
        np.testing.assert_allclose(single.to_numpy(), batched.to_numpy()[0])


def test_an_unbatched_linear_input_gets_its_gradient(backend) -> None:
    layer = nn.Linear(3, 2, backend=backend, seed=2)
    x = from_numpy(np.array([0.5, -1.0, 2.0]), backend)
    grad_check(lambda t: layer(t), x)


class Net(Module):
    """A small network of this layer's modules (module level, so pickle finds its class)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 2, backend=FastBackend, seed=0)
        self.head = nn.Linear(2 * 3 * 3, 2, backend=FastBackend, seed=1)

    def forward(self, x):  # type: ignore[no-untyped-def]
        return self.head(self.conv(x).relu().view(x.shape[0], 2 * 3 * 3))


def test_models_deepcopy_and_pickle_and_the_copy_trains_on_its_own() -> None:
    """``copy.deepcopy(model)`` and ``pickle`` work, as with torch.nn modules.

    (``deepcopy(model)`` raised ``TypeError: TensorBackend.__new__() missing ... 'ops'``.)
    """
    import copy
    import pickle

    model = Net()
    x = from_numpy(np.random.default_rng(2).standard_normal((2, 1, 3, 3)), FastBackend)
    expected = model(x).to_numpy()
    for twin in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert [n for n, _ in twin.named_parameters()] == [n for n, _ in model.named_parameters()]
        np.testing.assert_array_equal(twin(x).to_numpy(), expected)
        for p in twin.parameters():
            assert p.value.backend is FastBackend
            assert p.value.is_leaf
            assert p.value.requires_grad
        twin(x).sum().backward()
        Adam(twin.parameters(), lr=0.1).step()
        assert not np.array_equal(twin(x).to_numpy(), expected)
        np.testing.assert_array_equal(model(x).to_numpy(), expected)  # the original is as it was
