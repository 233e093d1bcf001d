"""The channel between the grader and the worker: plain data only, identity kept, lies refused.

Two endpoints run in one process over a socket pair, each served by a thread; the
grader's side has the trusted policy, the worker's the untrusted one.
"""

import socket
import threading

import numpy as np
import pytest
from numba import config, cuda

from mtcourse.grader import route, wire
from mtcourse.grader.wire import (
    Endpoint,
    Policy,
    RemoteCallable,
    RemoteError,
    WireError,
    resolve,
)

MODULES = ("minitorch.", "mt_examples.", "mtcourse.grader.route")


class Pair:
    """A grader endpoint here and a worker endpoint served by a thread."""

    def __init__(self, serve_worker=None, serve_grader=None):
        a, b = socket.socketpair()
        self.grader = Endpoint(a, Policy(MODULES, trusted=True), serve_grader or self._none)
        self.worker = Endpoint(b, Policy(MODULES, trusted=False), serve_worker or self._none)
        self.thread = threading.Thread(target=self.worker.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def _none(kind, payload):
        raise LookupError(kind)

    def close(self):
        self.grader.close()
        self.thread.join(5)


@pytest.fixture
def echo():
    """The worker runs ``fn(*args)`` for a request ``("run", fn, args)``."""

    def serve(kind, payload):
        fn, args = payload
        return fn(*args)

    pair = Pair(serve_worker=serve)
    yield pair
    pair.close()


def test_plain_values_round_trip(echo):
    values = [
        1,
        -2.5,
        float("nan"),
        float("inf"),
        "text",
        None,
        True,
        (1, (2.0, "x")),
        [1, [2]],
        {"a": 1, (1, 2): [3]},
        {1, 2},
        frozenset({3}),
        b"bytes",
        slice(1, None, 2),
        range(3, 9, 2),
        3 + 4j,
        np.float64(2.5),
        np.arange(6.0).reshape(2, 3),
        np.array([1, 2], dtype=np.int32),
    ]
    for v in values:
        got = echo.grader.request("run", lambda x: x, (v,))
        if isinstance(v, np.ndarray):
            assert got.dtype == v.dtype
            assert got.shape == v.shape
            assert (got == v).all()
        elif isinstance(v, float) and v != v:
            assert got != got
        else:
            assert got == v
            assert type(got) is type(v)


def test_identity_survives_a_round_trip_and_shared_objects_stay_shared(echo):
    inner = [1.0]
    outer = [inner, inner]
    got = echo.grader.request("run", lambda x: x, (outer,))
    assert got is outer  # the grader's own object comes back as itself


def test_a_mutation_in_the_worker_reaches_the_graders_object():
    out = np.zeros(3)
    leaf = {"derivative": None}

    def serve(kind, payload):
        arr, d = payload
        arr[:] = [1.0, 2.0, 3.0]  # a kernel filling its output
        d["derivative"] = 4.0  # backpropagate filling a leaf
        return None

    pair = Pair(serve_worker=serve)
    pair.grader.request("fill", out, leaf)
    pair.close()
    assert out.tolist() == [1.0, 2.0, 3.0]
    assert leaf["derivative"] == 4.0


def test_a_write_into_a_read_only_array_is_refused():
    shape = np.array([2, 3])
    shape.setflags(write=False)

    def serve(kind, payload):
        arr = payload[0]
        arr.setflags(write=True)  # the worker can flip its own copy's flag
        arr[0] = 99
        return None

    pair = Pair(serve_worker=serve)
    with pytest.raises(WireError, match="may only be read"):
        pair.grader.request("write", shape)
    pair.close()
    assert shape.tolist() == [2, 3]


def test_a_test_function_crosses_as_a_handle_and_runs_on_the_graders_side(echo):
    here = threading.get_ident()
    seen = []

    def callback(x):
        seen.append(threading.get_ident())
        return x * 2

    got = echo.grader.request("run", lambda f, v: f(v), (callback, 21))
    assert got == 42
    assert seen == [here]


def test_the_worker_gets_a_proxy_of_a_function_that_reads_the_tests_state():
    calls = []

    def record(x):
        calls.append(x)
        return x

    def serve(kind, payload):
        return type(payload[0]).__name__

    pair = Pair(serve_worker=serve)
    assert pair.grader.request("kind", record) == "RemoteCallable"
    pair.close()


def clamp01(x: float) -> float:
    """A test's own scalar function, as a kernel factory is given one."""
    return min(max(x, 0.0), 1.0)


def test_a_tests_scalar_function_is_defined_in_the_worker_once_and_comes_back_as_itself():
    """A kernel factory compiles the function it gets: a handle would not compile."""
    made = []

    def serve(kind, payload):
        fn = payload[0]
        made.append(fn)
        return type(fn).__name__, fn.__name__, fn(3.0), fn(-1.0), fn

    pair = Pair(serve_worker=serve)
    kind, name, high, low, back = pair.grader.request("run", clamp01)
    assert (kind, name, high, low) == ("function", "clamp01", 1.0, 0.0)
    assert back is clamp01  # the grader's own function, not a copy the worker made
    assert made[0] is not clamp01
    pair.grader.request("run", clamp01)
    assert made[1] is made[0]  # defined once: a factory's cache (and Numba's) keeps it
    twice = pair.grader.request("run", lambda x: x * 2.0)
    assert twice[:3] == ("function", "<lambda>", 6.0)
    pair.close()


def test_code_is_never_accepted_by_the_grader():
    pair = Pair()
    spec = {"src": "__mtc_shipped__ = lambda: 42\n", "n": "f", "q": "f", "g": [], "df": [], "h": 1}
    with pytest.raises(WireError, match="code sent to the grader"):
        pair.grader.decode(spec, [])
    pair.close()


def test_threads_of_a_test_take_turns_on_the_channel():
    """Threads of one test calling into the worker at once: each exchange stays whole."""

    def serve(kind, payload):
        fn, value = payload
        return fn(value) + 1  # a call back to the grader inside the exchange

    pair = Pair(serve_worker=serve)
    errors = []
    results: list[list[int]] = [[] for _ in range(4)]

    def work(k):
        try:
            for i in range(150):
                results[k].append(pair.grader.request("run", lambda v, k=k: v * 10 + k, i))
        except BaseException as e:  # raised again below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert results == [[i * 10 + k + 1 for i in range(150)] for k in range(4)]
    pair.close()


class Liar(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __bool__(self):
        return True

    def __float__(self):
        return 42.0


class LyingArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(self.shape, bool)


@pytest.mark.parametrize(
    "make", [lambda: Liar(1.0), AlwaysEqual, lambda: np.zeros(2).view(LyingArray)]
)
def test_an_object_of_a_class_the_grader_does_not_know_is_refused(make):
    pair = Pair(serve_worker=lambda kind, payload: make())
    with pytest.raises(WireError):
        pair.grader.request("lie")
    pair.close()


def test_an_exception_of_a_known_class_is_rebuilt_and_an_unknown_one_is_not():
    class Sneaky(ValueError):
        pass

    def serve(kind, payload):
        if payload[0] == "index":
            raise IndexError("out of range")
        raise Sneaky("boo")

    pair = Pair(serve_worker=serve)
    with pytest.raises(IndexError, match="out of range"):
        pair.grader.request("x", "index")
    with pytest.raises(RemoteError, match="Sneaky: boo"):
        pair.grader.request("x", "other")
    pair.close()


def test_names_that_may_not_cross_are_refused():
    policy = Policy(MODULES)
    for ref in [
        "os:system",
        "builtins:open",
        "builtins:eval",
        "operator:attrgetter",
        "numpy:save",
        "subprocess:run",
        "mtcourse.grader.route:__builtins__",
    ]:
        with pytest.raises(WireError):
            resolve(ref, policy)
    assert resolve("builtins:abs", policy) is abs
    assert resolve("numpy:add", policy) is np.add


def test_garbage_on_the_channel_is_a_wire_error():
    a, b = socket.socketpair()
    grader = Endpoint(a, Policy(MODULES), lambda k, p: None)
    b.sendall(b"\xff\xff\xff\x7f\x00\x00\x00\x00")  # a header of 2 GiB
    with pytest.raises(WireError):
        grader.request("x")
    b.close()


def test_a_closed_channel_is_a_wire_error_not_an_exception():
    a, b = socket.socketpair()
    grader = Endpoint(a, Policy(MODULES), lambda k, p: None)
    b.close()
    with pytest.raises(WireError):
        grader.request("x")
    assert not issubclass(WireError, Exception)  # a test's `except Exception` cannot hide it


def test_a_product_routes_by_the_run(monkeypatch):
    # The grader's side: not the active key, so the solution's product runs here.
    monkeypatch.setattr(route, "SIDE", "T")
    monkeypatch.setattr(route, "ACTIVE", None)
    made = route.route("f.py:make", lambda k: lambda x: x * k, factory=True)
    product = made(3)
    assert isinstance(product, route.Product)
    assert product(2) == 6


def _double(out, a):
    """A CUDA kernel's body (the simulator reads ``cuda`` from its globals)."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = 2.0 * a[i]


def test_a_cuda_kernel_is_routed_at_its_launch_and_its_writes_come_back(monkeypatch):
    """``kernel[grid, block](out, ...)`` on the graded kernel runs it in the worker."""
    if not config.ENABLE_CUDASIM:
        pytest.skip("needs Numba's CUDA simulator (the course environment sets it)")
    double = cuda.jit(_double)
    ran = []

    def serve(kind, payload):
        ran.append(kind)
        monkeypatch.setattr(route, "SIDE", "U")  # the worker's side of the route
        try:
            return route.serve(kind, list(payload))
        finally:
            monkeypatch.setattr(route, "SIDE", "T")

    pair = Pair(serve_worker=serve)
    monkeypatch.setattr(route, "SIDE", "T")
    monkeypatch.setattr(route, "ENDPOINT", pair.grader)
    monkeypatch.setattr(route, "USED", set())
    launcher = route.route("k.py:double", double)
    assert isinstance(launcher, route.Launcher)
    a = cuda.to_device(np.arange(5.0))
    out = cuda.to_device(np.zeros(5))
    monkeypatch.setattr(route, "ACTIVE", "k.py:double")
    launcher[1, 8](out, a)
    assert ran == ["launch"]
    assert out.copy_to_host().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert {"k.py:double"} == route.USED
    monkeypatch.setattr(route, "ACTIVE", None)  # another function's run: it runs here
    launcher[1, 8](out, out)
    assert ran == ["launch"]
    assert out.copy_to_host().tolist() == [0.0, 4.0, 8.0, 12.0, 16.0]
    pair.close()


def test_remote_callable_is_not_a_course_object():
    assert RemoteCallable.__module__ == "mtcourse.grader.wire"


def test_a_graph_twenty_thousand_deep_crosses_flat_and_comes_back_as_itself():
    # A chain of course objects (the history of a long Scalar expression), twenty times
    # deeper than Python's recursion limit and JSON's nesting: each object is described
    # once, flat, and referred to by number.
    def walk(kind, payload):
        node, n = payload[0], 0
        while node.fargs:
            node.key = f"seen {n}"  # a change the grader must get back
            node, n = node.fargs[0], n + 1
        return n, node

    head = route.Product("end", (), {})
    for i in range(20_000):
        head = route.Product(f"n{i}", (head,), {})
    pair = Pair(serve_worker=walk)
    n, last = pair.grader.request("walk", head)
    pair.close()
    assert n == 20_000
    assert last.key == "end"  # the grader's own last node
    assert head.key == "seen 0"
    assert head.fargs[0].fargs[0].key == "seen 2"


def test_an_array_first_sent_in_a_change_can_be_shared_by_a_new_object():
    """The layout arrays a view shares with its base: one written into a changed object
    and held by a new one, in the same answer, arrive as one array on both."""

    def serve(kind, payload):
        (old,) = payload
        shared = np.arange(3.0)
        old.fargs = (shared,)  # a change to an object the grader sent ...
        return route.Product("k", (shared,), {})  # ... and a new object holding the same

    pair = Pair(serve_worker=serve)
    old = route.Product("k", (), {})
    new = pair.grader.request("run", old)
    assert old.fargs[0] is new.fargs[0]
    assert old.fargs[0].tolist() == [0.0, 1.0, 2.0]
    pair.close()


def test_a_tests_random_generator_is_a_generator_in_the_worker_and_draws_stay_in_step():
    """dropout(x, seed=np.random.default_rng(1)): the student's ``isinstance`` check holds,
    each draw is the test's generator's (its state moves on the grader's side), and the
    proxy goes back as the test's own generator."""

    def serve(kind, payload):
        (rng,) = payload
        assert isinstance(rng, np.random.Generator)
        mask = rng.random((2, 3)) >= 0.5
        return rng, mask, rng.integers(0, 10, size=4)

    pair = Pair(serve_worker=serve)
    rng = np.random.default_rng(1)
    back, mask, ints = pair.grader.request("drop", rng)
    pair.close()
    ref = np.random.default_rng(1)
    assert back is rng
    np.testing.assert_array_equal(mask, ref.random((2, 3)) >= 0.5)
    np.testing.assert_array_equal(ints, ref.integers(0, 10, size=4))
    assert rng.random() == ref.random()  # the test's generator moved on as if drawn here


@pytest.mark.parametrize(
    ("draw", "error"),
    [
        (lambda g: g.random(1 << 30), "at most"),
        (lambda g: g.permutation(10**12), "at most"),
        (lambda g: g.normal(np.zeros(1 << 13), np.ones((1 << 12, 1))), "at most"),
        (lambda g: g.normal(0.0, 1.0, size=("a",)), "must be ints"),
        (lambda g: g.spawn(2), "only random"),
        (lambda g: g.bit_generator.state, "stays with the test"),
    ],
)
def test_a_worker_cannot_make_the_grader_draw_without_bound(draw, error):
    def serve(kind, payload):
        (rng,) = payload
        try:
            value = draw(rng)
        except Exception as e:
            return type(e).__name__ + ": " + str(e)
        return "drew " + repr(type(value).__name__)

    pair = Pair(serve_worker=serve)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    said = pair.grader.request("run", rng)
    pair.close()
    assert error in said
    assert rng.bit_generator.state == state  # nothing drawn from the test's generator


def test_neither_side_keeps_an_object_after_its_exchange():
    """A test may count the tensors alive after a backward pass (one saved by a graph
    must be freed with it): the channel holds no object of an exchange past its end."""
    import gc
    import weakref

    made = []

    def serve(kind, payload):
        product = route.Product("k", (np.arange(3.0),), {})
        made.append(weakref.ref(product))
        return product

    pair = Pair(serve_worker=serve)
    got = pair.grader.request("make")
    mine = weakref.ref(got)
    del got
    gc.collect()
    assert mine() is None  # the grader's copy
    pair.grader.request("make")  # the worker's next message ends its hold on the first
    gc.collect()
    assert made[0]() is None
    pair.close()


@pytest.mark.parametrize(
    "config",
    [(10**6, 1024), (1, 2048), (1, 0), ((2, 2, 2, 2), 1), "1, 1", (1.5, 32), (True, 32)],
)
def test_a_launch_the_course_never_makes_is_refused(config):
    """The side running a launch does its work: the worker cannot ask for a huge one."""
    with pytest.raises(ValueError, match="launch"):
        route._check_launch(config)


def test_launches_the_course_makes_pass_the_check():
    route._check_launch((4, 32))
    route._check_launch(((2, 3, 1), (32, 32)))
    route._check_launch((np.int64(7), np.int64(8)))


def _raised_at(filename: str, line: int) -> BaseException:
    """An exception raised in ``f`` at ``line`` of code compiled as ``filename``."""
    ns: dict = {}
    exec(compile("\n" * (line - 2) + "def f():\n    raise ValueError('x')\n", filename, "exec"), ns)
    try:
        ns["f"]()
    except ValueError as e:
        return e
    raise AssertionError("f did not raise")


def test_the_workers_frames_name_the_students_own_lines(monkeypatch):
    """Feedback named the worker's copy's line (``tensor_data.py:200`` for the student's 186)."""
    monkeypatch.setattr(wire, "_LINES", {"minitorch/operators/scalar.py": [[10, 20, 3]]})
    spliced = "/worker/code/minitorch/operators/scalar.py"
    assert wire._frames(_raised_at(spliced, 12)) == ["  at scalar.py:5 in f"]
    # The starter's code around the student's functions: no number of theirs to give.
    assert wire._frames(_raised_at(spliced, 25)) == ["  at scalar.py in f"]
    # A file of the package that is not spliced keeps its own numbering.
    other = "/worker/code/minitorch/operators/module.py"
    assert wire._frames(_raised_at(other, 7)) == ["  at module.py:7 in f"]
