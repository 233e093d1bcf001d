"""Routes each graded function to the implementation of the run at hand.

The grader builds two copies of the layer, and after each function that holds a solution
block it adds one line, ``name = __mtc_route__("file.py:Class.name", name, factory)``:

- the grader's copy (``SIDE = "T"``) is the course's solution: a call runs the solution,
  except a call of the function being graded (``ACTIVE``), which goes to the worker;
- the worker's copy (``SIDE = "U"``) is the starter with the student's functions: a call
  of ``ACTIVE`` runs the student's code, any other goes back to the grader's solution.

So each run grades exactly one of the student's functions, with everything around it the
course's. A *factory* (a function whose solution block sits in a function it returns: a
kernel) is routed when what it returned is called, since a backend builds its kernels once,
before any run: each call of the kernel chooses anew whose code runs. Copied into both
copies' folders as ``_mtcourse_route.py``; it needs nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from typing import Any

SIDE = "local"
"""``"T"`` (the grader's tests), ``"U"`` (the worker) or ``"local"`` (no channel)."""

ACTIVE: str | None = None
"""The key of the function being graded in this run, if any; ``EVERY`` grades the
student's whole copy at once (a training task of a layer whose objects are scalars)."""

EVERY = "*"
"""``ACTIVE`` for a run in which every graded function is the student's."""

ENDPOINT: Any = None
"""The channel (``wire.Endpoint``), once connected."""

USED: set[str] | None = None
"""On the grader's side, while surveying: the keys the running test used."""

REGISTRY: dict[str, tuple[Callable[..., Any], bool]] = {}
"""Key -> (this side's implementation, whether it is a factory)."""

SWAP: dict[str, Callable[..., Any]] = {}
"""On the grader's side, while a student's tests are graded: a mutant of a graded function
(key -> the mutated function) that runs in place of the course's, whoever calls it."""

PURE: dict[str, tuple[int, ...]] = {}
"""On the worker's side: graded functions whose answer depends on their arguments alone
(the index helpers), by key, with the positions of the arguments they write into. Their
answers from the grader are remembered: a student's kernel calls them per element."""

_PRODUCTS: dict[tuple[Any, ...], tuple[Any, Callable[..., Any]]] = {}
_MEMO: dict[tuple[Any, ...], tuple[Any, list[tuple[int, Any]]]] = {}


def _arg_key(v: Any) -> Any:
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is tuple:
        return ("t", tuple(_arg_key(x) for x in v))
    tobytes = getattr(v, "tobytes", None)
    if tobytes is not None and hasattr(v, "dtype") and hasattr(v, "shape"):
        return ("a", str(v.dtype), tuple(v.shape), tobytes())
    raise TypeError("not a plain argument")


def _remembered(key: str, outputs: tuple[int, ...], args: tuple[Any, ...]) -> Any:
    """``key``'s answer for ``args``, asked of the grader once per distinct input."""
    try:
        memo_key = (key, tuple(_arg_key(a) for i, a in enumerate(args) if i not in outputs))
    except TypeError:
        return ENDPOINT.request("call", key, args, {})
    found = _MEMO.get(memo_key)
    if found is None:
        result = ENDPOINT.request("call", key, args, {})
        written = [
            (i, args[i].copy()) for i in outputs if i < len(args) and hasattr(args[i], "copy")
        ]
        if len(_MEMO) > 200_000:
            _MEMO.clear()
        found = _MEMO[memo_key] = (result, written)
    result, written = found
    for i, value in written:
        args[i][...] = value
    return result


def route(key: str, obj: Any, factory: bool = False) -> Any:
    """Return ``obj`` (a function, method, static/class method or property) routed by ``key``."""
    if isinstance(obj, staticmethod):
        return staticmethod(route(key, obj.__func__, factory))
    if isinstance(obj, classmethod):
        return classmethod(route(key, obj.__func__, factory))
    if isinstance(obj, property):
        return property(route(key, obj.fget, factory), obj.fset, obj.fdel, obj.__doc__)
    impl = obj
    REGISTRY[key] = (impl, factory)
    if _is_gpu_kernel(obj):
        return Launcher(key, obj)

    if factory:

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return make_product(key, impl, args, kwargs)

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return call(key, impl, args, kwargs)

    named = getattr(impl, "py_func", impl)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        with contextlib.suppress(AttributeError, TypeError):
            setattr(wrapper, attr, getattr(named, attr))
    if hasattr(impl, "parallel_diagnostics"):
        # A Numba kernel: its report and its Python function are this side's (the
        # course's, on the grader's side): a compiled kernel cannot be inspected across
        # the channel, and code compiled anew from ``py_func`` is not routed.
        wrapper.parallel_diagnostics = impl.parallel_diagnostics  # type: ignore[attr-defined]
        wrapper.py_func = impl.py_func  # type: ignore[attr-defined]
    wrapper.__mtc_key__ = key  # type: ignore[attr-defined]
    return wrapper


def _is_gpu_kernel(obj: Any) -> bool:
    """A Numba CUDA kernel (a GPU's, or the simulator's): launched as ``kernel[grid, block]``."""
    return type(obj).__module__.startswith(("numba.cuda", "numba_cuda")) and hasattr(
        type(obj), "__getitem__"
    )


class Launcher:
    """A routed CUDA kernel: ``launcher[grid, block](*args)`` launches the run's choice.

    A kernel is not called but launched with a configuration, so its route is the launch:
    the configuration and the arguments (device arrays cross as their data, and what the
    kernel wrote comes back) go to whichever side runs the kernel.
    """

    __slots__ = ("__weakref__", "kernel", "key")

    def __init__(self, key: str, kernel: Any) -> None:
        self.key = key
        self.kernel = kernel

    def __getitem__(self, config: Any) -> Callable[..., Any]:
        key, kernel = self.key, self.kernel

        def launch(*args: Any) -> Any:
            return call_launch(key, kernel, config, args)

        return launch

    def __repr__(self) -> str:
        return f"<kernel {self.key}>"


def call_launch(key: str, kernel: Any, config: Any, args: tuple[Any, ...]) -> Any:
    """Launch ``key``'s kernel here or on the other side, as this run wants."""
    if SIDE == "U":
        if key == ACTIVE or ACTIVE == EVERY:
            return kernel[config](*args)
        return ENDPOINT.request("launch", key, config, args)
    if USED is not None:
        USED.add(key)
    if ENDPOINT is not None and (key == ACTIVE or ACTIVE == EVERY):
        return ENDPOINT.request("launch", key, config, args)
    return kernel[config](*args)


MAX_LAUNCH_THREADS = 1 << 22
"""Threads one launch the other side asks for may start (a block holds at most 1,024)."""


def _dims(value: Any) -> int:
    """The number of blocks or threads ``value`` (an int or up to three ints) stands for."""
    dims = value if type(value) is tuple else (value,)
    count = 1
    for d in dims:
        try:
            n = operator.index(d)  # an int or a numpy integer
        except TypeError:
            n = 0
        if isinstance(d, bool) or n < 1 or not 1 <= len(dims) <= 3:
            raise ValueError(f"a launch dimension of positive ints, got {value!r}")
        count *= n
    return count


def _check_launch(config: Any) -> None:
    """Refuse a launch configuration the course's kernels never use (``(grid, block)``).

    The side that runs a launch asked for by the other does the work: a worker must not
    be able to make the grader run a billion simulated threads.
    """
    if type(config) is not tuple or len(config) != 2:
        raise ValueError(f"a launch configuration is (grid, block), got {config!r}")
    blocks, threads = _dims(config[0]), _dims(config[1])
    if threads > 1024 or blocks * threads > MAX_LAUNCH_THREADS:
        raise ValueError(f"a launch of {blocks} blocks of {threads} threads is too large")


def broken(qualname: str, error: BaseException) -> Callable[..., Any]:
    """Stands for a student's function whose definition raised (its decorator, say)."""
    text = f"{qualname} could not be defined: {type(error).__name__}: {error}"

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(text)

    fails.__name__ = qualname.rpartition(".")[2]
    fails.__qualname__ = qualname
    return fails


def call(key: str, impl: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``key``'s function here or on the other side, as this run wants."""
    if SIDE == "U":
        if key == ACTIVE or ACTIVE == EVERY:
            return impl(*args, **kwargs)
        outputs = PURE.get(key)
        if outputs is not None and not kwargs:
            return _remembered(key, outputs, args)
        return ENDPOINT.request("call", key, args, kwargs)
    if USED is not None:
        USED.add(key)
    if ENDPOINT is not None and (key == ACTIVE or ACTIVE == EVERY):
        return ENDPOINT.request("call", key, args, kwargs)
    return SWAP.get(key, impl)(*args, **kwargs)


class Product:
    """What a routed factory returned: calling it runs the kernel of the run's choice."""

    __mtc_state__ = ("key", "fargs", "fkwargs")
    __slots__ = ("__weakref__", "_built", "fargs", "fkwargs", "key")
    _built: Callable[..., Any]

    def __init__(self, key: str, fargs: tuple[Any, ...], fkwargs: dict[str, Any]) -> None:
        self.key = key
        self.fargs = fargs
        self.fkwargs = fkwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel of the run's choice (see :func:`call_product`)."""
        return call_product(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<kernel of {self.key}>"

    def __getattr__(self, name: str) -> Any:
        """An attribute of this side's kernel (Numba's ``parallel_diagnostics``, say).

        On the grader's side that is the course's kernel: a compiled kernel in the
        worker cannot be inspected across the channel.
        """
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(_built_here(self), name)


def make_product(
    key: str, impl: Callable[..., Any], fargs: tuple[Any, ...], fkwargs: dict[str, Any]
) -> Product:
    """A factory's call: a :class:`Product`.

    The grader's side builds the solution's product at once (its checks run where the
    solution runs them); the worker builds the student's on first use.
    """
    p = Product(key, fargs, fkwargs)
    if SIDE != "U":
        p._built = SWAP.get(key, impl)(*fargs, **fkwargs)
    return p


def _factory(key: str) -> Callable[..., Any]:
    try:
        impl, factory = REGISTRY[key]
    except KeyError:
        raise LookupError(f"no graded function {key}") from None
    if not factory:
        raise LookupError(f"{key} makes no kernel")
    return SWAP.get(key, impl)  # a mutant factory while a student's tests are graded


def _cache_key(key: str, fargs: tuple[Any, ...], fkwargs: dict[str, Any]) -> tuple[Any, ...]:
    def one(v: Any) -> Any:
        return v if v is None or type(v) in (bool, int, float, str) else ("id", id(v))

    return (key, tuple(one(v) for v in fargs), tuple((k, one(v)) for k, v in fkwargs.items()))


def _built_here(p: Product) -> Any:
    """What ``p``'s factory makes on this side (built on first use)."""
    try:
        return p._built
    except AttributeError:
        built = p._built = _factory(p.key)(*p.fargs, **p.fkwargs)
        return built


def call_product(p: Product, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call what the factory ``p.key`` made for ``p.fargs`` (see :class:`Product`)."""
    key = p.key
    if SIDE == "U":
        if key != ACTIVE and ACTIVE != EVERY:
            return ENDPOINT.request("product", key, p.fargs, p.fkwargs, args, kwargs)
        ck = _cache_key(key, p.fargs, p.fkwargs)
        found = _PRODUCTS.get(ck)
        if found is None:
            found = _PRODUCTS[ck] = ((p.fargs, p.fkwargs), _factory(key)(*p.fargs, **p.fkwargs))
        return found[1](*args, **kwargs)
    if USED is not None:
        USED.add(key)
    if ENDPOINT is not None and (key == ACTIVE or ACTIVE == EVERY):
        return ENDPOINT.request("product", key, p.fargs, p.fkwargs, args, kwargs)
    return _built_here(p)(*args, **kwargs)


def serve(kind: str, payload: list[Any]) -> Any:
    """Run a request of the other side (``call``, ``product``) on this side."""
    if kind == "call":
        key, args, kwargs = payload
        impl, factory = REGISTRY[key]
        if factory:
            return make_product(key, impl, tuple(args), dict(kwargs))
        return call(key, impl, tuple(args), dict(kwargs))
    if kind == "product":
        key, fargs, fkwargs, args, kwargs = payload
        _factory(key)
        return call_product(Product(key, tuple(fargs), dict(fkwargs)), tuple(args), dict(kwargs))
    if kind == "launch":
        key, config, args = payload
        impl, _ = REGISTRY[key]
        if not _is_gpu_kernel(impl):
            raise LookupError(f"{key} is not a kernel")
        _check_launch(config)
        return call_launch(key, impl, config, tuple(args))
    raise LookupError(f"no request {kind!r}")
