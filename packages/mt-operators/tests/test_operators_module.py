"""Module and Parameter: the tree of named, trainable values (PyTorch's nn.Module shape)."""

import pytest

from minitorch.operators import Module, Parameter

pytestmark = pytest.mark.task0_4


class Leaf(Module):
    def __init__(self, w=1.0):
        super().__init__()
        self.weight = Parameter(w)
        self.bias = Parameter(0.0)
        self.not_a_parameter = 5.0

    def forward(self, x):
        return x * self.weight.value + self.bias.value


class Middle(Module):
    def __init__(self):
        super().__init__()
        self.inner = Leaf(2.0)
        self.scale = Parameter(3.0)


class Top(Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Leaf(1.0)
        self.block = Middle()
        self.layer2 = Leaf(4.0)
        self.gain = Parameter(10.0)

    def forward(self, x, *, offset=0.0):
        return self.layer2(self.layer1(x)) + offset


class Recorder:
    """A value that supports requires_grad_, like a Scalar or a Tensor."""

    def __init__(self):
        self.calls = []
        self.name = None

    def requires_grad_(self, flag=True):
        self.calls.append(flag)
        return self


def test_named_parameters_use_dotted_paths():
    names = dict(Top().named_parameters())
    assert set(names) == {
        "gain",
        "layer1.weight",
        "layer1.bias",
        "block.scale",
        "block.inner.weight",
        "block.inner.bias",
        "layer2.weight",
        "layer2.bias",
    }
    assert names["block.inner.weight"].value == 2.0  # three levels deep
    assert names["layer2.weight"].value == 4.0


def test_parameters_match_named_parameters():
    top = Top()
    assert top.parameters() == [p for _, p in top.named_parameters()]
    assert len(top.parameters()) == 8
    assert all(isinstance(p, Parameter) for p in top.parameters())


def test_plain_attributes_are_not_registered():
    leaf = Leaf()
    assert leaf.not_a_parameter == 5.0
    assert "not_a_parameter" not in dict(leaf.named_parameters())
    assert leaf.children() == []


def test_children_are_direct_only_in_assignment_order():
    top = Top()
    assert top.children() == [top.layer1, top.block, top.layer2]
    assert [n for n, _ in top.named_children()] == ["layer1", "block", "layer2"]


def test_modules_includes_self_depth_first():
    top = Top()
    assert top.modules() == [top, top.layer1, top.block, top.block.inner, top.layer2]
    names = [n for n, _ in top.named_modules()]
    assert names == ["", "layer1", "block", "block.inner", "layer2"]


def test_train_and_eval_recurse():
    top = Top()
    assert all(m.training for m in top.modules())
    assert top.eval() is top
    assert [m.training for m in top.modules()] == [False] * 5
    assert top.train() is top
    assert [m.training for m in top.modules()] == [True] * 5
    top.block.eval()  # only a subtree
    assert [m.training for m in top.modules()] == [True, True, False, False, True]


def test_mode_follows_train_and_eval():
    # The course's networks read ``self.mode == "eval"`` to switch dropout off.
    top = Top()
    assert top.mode == "train"
    top.eval()
    assert [m.mode for m in top.modules()] == ["eval"] * 5
    top.train()
    assert top.block.inner.mode == "train"
    top.mode = "eval"  # setting it is train(False)/eval() on the subtree
    assert [m.training for m in top.modules()] == [False] * 5
    top.block.mode = "train"
    assert [m.mode for m in top.modules()] == ["eval", "eval", "train", "train", "eval"]


def test_mode_refuses_other_values():
    top = Top()
    with pytest.raises(ValueError, match="mode must be 'train' or 'eval', got 'test'"):
        top.mode = "test"
    assert top.training


def test_call_runs_forward_with_args_and_kwargs():
    top = Top()
    # layer1: x*1+0, layer2: y*4+0
    assert top(2.0) == 8.0
    assert top(2.0, offset=1.5) == 9.5
    assert Leaf(3.0)(2.0) == 6.0


def test_forward_not_implemented_names_the_class():
    with pytest.raises(NotImplementedError, match="Middle"):
        Middle()(1.0)


def test_repr_is_readable():
    text = repr(Top())
    for name in ("Top", "layer1", "block", "inner", "layer2", "Leaf", "Middle", "gain"):
        assert name in text
    assert repr(Module()) == "Module()"


def test_unknown_attribute_raises_attribute_error_with_name():
    top = Top()
    with pytest.raises(AttributeError, match="layer3"):
        _ = top.layer3
    assert not hasattr(top, "wieght")


def test_missing_super_init_is_reported():
    class Forgetful(Module):
        def __init__(self):
            self.weight = Parameter(1.0)

    with pytest.raises(AttributeError, match=r"super\(\).__init__"):
        Forgetful()


def test_add_parameter_registers_and_names():
    m = Module()
    p = m.add_parameter("alpha", 0.5)
    assert isinstance(p, Parameter)
    assert p.name == "alpha"
    assert p.value == 0.5
    assert m.alpha is p
    assert m.named_parameters() == [("alpha", p)]


def test_parameter_name_defaults_to_attribute_name():
    assert Leaf().weight.name == "weight"
    m = Module()
    m.foo = Parameter(1.0, name="custom")
    assert m.foo.name == "custom"


def test_reassigning_parameter_replaces_registry_entry():
    leaf = Leaf()
    new = Parameter(9.0)
    leaf.weight = new
    named = leaf.named_parameters()
    assert [n for n, _ in named].count("weight") == 1
    assert dict(named)["weight"] is new
    assert leaf.weight is new


def test_assigning_a_plain_value_over_a_parameter_raises_naming_it():
    """As PyTorch: ``m.w = value`` over a registered parameter is refused, not unregistered.

    (It used to unregister the parameter silently, so an optimizer stopped updating it.)
    None is allowed and keeps the name a parameter's, holding none.
    """
    leaf = Leaf()
    with pytest.raises(TypeError, match=r"cannot assign 'float' as parameter 'weight' \(Parameter"):
        leaf.weight = 3.0
    assert isinstance(leaf.weight, Parameter)
    assert [n for n, _ in leaf.named_parameters()] == ["weight", "bias"]
    leaf.weight = None
    assert leaf.weight is None
    assert [n for n, _ in leaf.named_parameters()] == ["bias"]
    assert "(weight): None" in repr(leaf)
    with pytest.raises(TypeError, match="as parameter 'weight'"):
        leaf.weight = 3.0  # still a parameter's name
    leaf.weight = Parameter(4.0)
    assert sorted(n for n, _ in leaf.named_parameters()) == ["bias", "weight"]
    del leaf.weight
    leaf.weight = 3.0  # deleted first: a plain attribute now
    assert leaf.weight == 3.0
    assert "weight" not in dict(leaf.named_parameters())


def test_a_parameter_registered_under_two_names_is_listed_once():
    """As PyTorch's ``parameters()`` and ``named_parameters()``: once, under its first name."""
    shared = Parameter(2.0)
    top = Top()
    top.layer1.weight = shared
    top.layer2.bias = shared
    top.tied = shared
    named = top.named_parameters()
    assert [n for n, p in named if p is shared] == ["tied"]  # this module's own come first
    assert len(top.parameters()) == len({id(p) for p in top.parameters()}) == 7


def test_reassigning_plain_value_to_parameter_registers_it():
    leaf = Leaf()
    p = Parameter(7.0)
    leaf.not_a_parameter = p
    assert leaf.not_a_parameter is p  # not the stale plain value
    assert dict(leaf.named_parameters())["not_a_parameter"] is p


def test_reassigning_child_replaces_or_removes_it():
    top = Top()
    replacement = Leaf(8.0)
    top.layer1 = replacement
    assert top.layer1 is replacement
    assert top.children().count(replacement) == 1
    assert len(top.children()) == 3
    top.layer1 = None
    assert top.layer1 is None
    assert replacement not in top.children()
    assert "layer1.weight" not in dict(top.named_parameters())


def test_delattr_removes_from_registry():
    top = Top()
    del top.layer2
    del top.gain
    assert len(top.children()) == 2
    assert "gain" not in dict(top.named_parameters())
    with pytest.raises(AttributeError, match="layer2"):
        _ = top.layer2


def test_parameter_marks_requires_grad_on_creation_and_update():
    first, second = Recorder(), Recorder()
    p = Parameter(first, name="w")
    assert first.calls == [True]
    assert first.name == "w"
    p.update(second)
    assert p.value is second
    assert second.calls == [True]
    assert second.name == "w"


def test_parameter_holds_plain_values():
    p = Parameter(1.5)
    p.update(2.5)
    assert p.value == 2.5
    assert str(p) == "2.5"
    assert repr(p) == "Parameter(2.5)"


class _Value:
    """A stand-in for a Scalar or Tensor: the duck-typed protocol Parameter uses."""

    def __init__(self, leaf: bool) -> None:
        self.leaf, self.wants_grad, self.detached = leaf, False, False

    def is_leaf(self) -> bool:
        return self.leaf

    def detach(self) -> "_Value":
        out = _Value(leaf=False)
        out.detached = True
        return out

    def requires_grad_(self, flag: bool = True) -> "_Value":
        self.wants_grad = flag
        self.leaf = flag
        return self


@pytest.mark.task0_4
def test_parameter_detaches_a_computed_value_so_it_becomes_a_leaf() -> None:
    """Regression: ``Parameter(rand(3) * 2 - 1)`` used to stay a non-leaf."""
    computed = _Value(leaf=False)
    p = Parameter(computed)
    assert p.value is not computed
    assert p.value.detached
    assert p.value.wants_grad
    assert p.value.is_leaf()
    already = _Value(leaf=True)
    assert Parameter(already).value is already
    p.update(_Value(leaf=False))
    assert p.value.detached
    assert p.value.is_leaf()
    assert Parameter(1.5).value == 1.5


class _Tensorish(_Value):
    """A stand-in with the attributes PyTorch code reads on a parameter."""

    def __init__(self) -> None:
        super().__init__(leaf=True)
        self.grad: object = None
        self.data = "the values"
        self.shape = (2, 3)
        self.filled: list[float] = []

    def fill_(self, v: float) -> "_Tensorish":
        self.filled.append(v)
        return self


def test_parameter_stands_for_its_value() -> None:
    value = _Tensorish()
    p = Parameter(value)
    assert p.shape == (2, 3)
    assert p.fill_(1) is value
    assert value.filled == [1]
    assert p.data == "the values"
    p.data = "new values"
    assert value.data == "new values"
    assert p.grad is None
    value.grad = "g"
    assert p.grad == "g"
    p.grad = None  # PyTorch's way to forget a gradient: it reaches the value
    assert value.grad is None
    assert "grad" not in vars(p)
    with pytest.raises(AttributeError, match="_Tensorish"):
        p.no_such_attribute  # noqa: B018
    with pytest.raises(AttributeError, match="Parameter"):
        p._private  # noqa: B018 - private names are not forwarded


def test_parameter_forwards_the_numeric_operators_to_its_value() -> None:
    """A Parameter stands for its value in arithmetic too, on either side of an operator.

    (Python looks operators up on the class, so ``__getattr__`` never forwarded them:
    ``Parameter(t) * 2`` and ``x @ p`` raised TypeError.)
    """
    import operator

    class Value:
        """Records the operations it takes part in."""

        def __init__(self, name: str) -> None:
            self.name = name

        def _op(name):
            return lambda self, other=None: (name, self.name, getattr(other, "name", other))

        for _name in ("add", "sub", "mul", "truediv", "matmul", "pow", "lt", "le", "gt", "ge"):
            locals()[f"__{_name}__"] = _op(_name)
            locals()[f"__r{_name}__"] = _op(f"r{_name}")
        __neg__, __pos__, __abs__ = _op("neg"), _op("pos"), _op("abs")

    p, q = Parameter(Value("p")), Parameter(Value("q"))
    assert p * 2 == ("mul", "p", 2)
    assert 2 * p == ("rmul", "p", 2)
    assert p @ q == ("matmul", "p", "q")  # both unwrapped
    assert operator.matmul(3, p) == ("rmatmul", "p", 3)
    assert p - 1 == ("sub", "p", 1)
    assert 1 - p == ("rsub", "p", 1)
    assert p + 1 == ("add", "p", 1)
    assert 1 + p == ("radd", "p", 1)
    assert p / 4 == ("truediv", "p", 4)
    assert 4 / p == ("rtruediv", "p", 4)
    assert p**2 == ("pow", "p", 2)
    assert 2**p == ("rpow", "p", 2)
    assert (p < 1, p <= 1, p > 1, p >= 1) == (
        ("lt", "p", 1),
        ("le", "p", 1),
        ("gt", "p", 1),
        ("ge", "p", 1),
    )
    assert (-p, +p, abs(p)) == (("neg", "p", None), ("pos", "p", None), ("abs", "p", None))
    # Plain floats, as a course module holds them.
    w = Parameter(1.5)
    assert (w * 2, 2 * w, w + w, 3 - w, -w, w**2, w < 2) == (3.0, 3.0, 3.0, 1.5, -1.5, 2.25, True)
    # Equality stays identity: parameters are found in lists and sets as themselves.
    assert w == w
    assert w != Parameter(1.5)
    assert w in [Parameter(1.5), w]


def test_parameter_survives_copy_and_pickle_despite_forwarding() -> None:
    import copy
    import pickle

    p = Parameter(1.5, "w")
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert (q.value, q.name, q.requires_grad) == (1.5, "w", True)


def test_module_requires_grad_switches_every_parameter_and_stays_across_updates() -> None:
    class Net(Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = Parameter(_Value(leaf=True))
            self.child = Leaf()
            self.child.weight = Parameter(_Value(leaf=True))

    net = Net()
    assert net.requires_grad_(False) is net
    assert not net.a.requires_grad
    assert not net.a.value.wants_grad
    assert not net.child.weight.value.wants_grad
    assert not net.child.bias.requires_grad  # a float: the flag is kept all the same
    net.a.update(_Value(leaf=True))
    assert not net.a.value.wants_grad  # an optimizer step does not switch it back on
    net.requires_grad_()
    assert net.a.requires_grad
    assert net.a.value.wants_grad
    net.a.requires_grad = False
    assert not net.a.value.wants_grad
