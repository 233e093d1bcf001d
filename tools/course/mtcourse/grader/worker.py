"""The worker: the only process that runs a student's code while grading.

Started by the grader's test process inside the sandbox (``sandbox.py``), with the
channel's socket as file descriptor ``MTC_FD``. It imports the layer from its own folder:
the starter with the student's functions (``splice.worker_copy``), every other graded
function routed back to the grader. It then answers the grader's requests (``active``:
which function this run grades, or ``*``: all of them; ``call``/``product``: run it;
``main``: train with a training script, all of it the student's) with plain data, and never
writes anything the grader reads: all it can say goes through the channel, and the
grader decides what its answers are worth.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # checked as part of the package; it runs as a top-level module
    from . import route
    from .wire import Endpoint, Policy, WireError
else:
    import _mtcourse_route as route
    from _mtcourse_wire import Endpoint, Policy, WireError


def _module_of(key: str, layer: str) -> str:
    """``tensor_data.py:to_index`` -> ``minitorch.tensor.tensor_data``."""
    file = key.split(":", 1)[0].removesuffix(".py")
    if file.startswith("mt_examples/"):
        return file.replace("/", ".")
    return f"minitorch.{layer}." + file.replace("/", ".").removesuffix(".__init__")


TEST_MODULE = "_mtcourse_student_tests"
"""The module the student's tests of a test-writing task are in, in the worker's folder."""


def run_tests(module: str, names: list[str], examples: int) -> dict[str, list[str]]:
    """Run the student's tests ``names`` of ``module``; each one's outcome and error type.

    Hypothesis draws ``examples`` inputs a test, the same ones every run (``derandomize``),
    and keeps no database. The outcome is ``passed``, ``failed``, ``skipped`` or
    ``missing`` (no such test). The grader trusts none of it beyond what it is worth: a
    run of the course's correct code must find every counted test passing.
    """
    if module != TEST_MODULE:
        raise LookupError(f"no tests in {module!r}")
    from hypothesis import HealthCheck, Phase, settings

    settings.register_profile(
        "mtc-grading",
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate),  # pass or fail is all the grader needs
    )
    settings.load_profile("mtc-grading")
    try:
        tests = importlib.import_module(module)
    except Exception as e:
        return {n: ["failed", f"{type(e).__name__} (importing your test file)"] for n in names}
    out: dict[str, list[str]] = {}
    for name in names:
        fn = getattr(tests, name, None)
        if not callable(fn):
            out[name] = ["missing", ""]
            continue
        try:
            fn()
        except Exception as e:
            out[name] = ["failed", type(e).__name__]
        except BaseException as e:  # pytest.skip and pytest.fail raise these
            if isinstance(e, WireError):
                raise
            kind = "skipped" if type(e).__name__ == "Skipped" else "failed"
            out[name] = [kind, type(e).__name__]
        else:
            out[name] = ["passed", ""]
    return out


def main() -> int:
    """Connect, import the student's copy of the layer, then serve until told to stop."""
    fd = int(os.environ["MTC_FD"])
    layer = os.environ["MTC_LAYER"]
    sock = socket.socket(fileno=fd)
    policy = Policy(("minitorch.", "mt_examples.", "_mtcourse_route"), trusted=False)

    def serve(kind: str, payload: list[Any]) -> Any:
        if kind == "active":
            (key,) = payload
            if key is not None and key != route.EVERY:
                importlib.import_module(_module_of(key, layer))
            route.ACTIVE = key
            return None
        if kind == "main" and route.ACTIVE == route.EVERY:
            # A whole training run on the student's copy: ``mt_examples.<script>.main``.
            module, argv = payload
            if not isinstance(module, str) or not module.startswith("mt_examples."):
                raise LookupError(f"no training script {module!r}")
            return importlib.import_module(module).main(list(argv))
        if kind == "tests" and route.ACTIVE is None:
            # A test-writing task: the student's tests, every graded function the grader's.
            module, names, examples = payload
            return run_tests(str(module), [str(n) for n in names], int(examples))
        if kind in ("call", "product", "launch"):
            key = payload[0]
            if key not in route.REGISTRY:
                importlib.import_module(_module_of(key, layer))
            return route.serve(kind, payload)
        raise LookupError(f"the worker does not serve {kind!r}")

    endpoint = Endpoint(sock, policy, serve)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        # The simulator runs each thread of a block (up to 1024) as a thread of this
        # process: with the default 8 MiB stacks they would not fit its address space.
        threading.stack_size(2 << 20)
    route.PURE = {k: tuple(v) for k, v in json.loads(os.environ.get("MTC_PURE", "{}")).items()}
    route.SIDE = "U"
    route.ENDPOINT = endpoint
    try:
        importlib.import_module(f"minitorch.{layer}")
        error = None
    except Exception as e:
        error = f"{type(e).__name__}: {e}"[:2000]
    try:
        endpoint.request("ready", error)
        endpoint.serve_forever()
    except WireError:
        traceback.print_exc()
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
