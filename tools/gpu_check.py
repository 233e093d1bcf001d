"""The GPU check: mt-cuda's tests, mt-nn's CUDA tests and bench:cuda in one run, one report.

On a machine with an NVIDIA GPU it runs, with the kernels on the GPU:

1. every test of mt-cuda (``packages/mt-cuda/tests``);
2. mt-nn's tests on the CUDA backend (``packages/mt-nn/tests -k cuda``: the CUDA
   convolutions, pooling and softmax, their PTX, the conv kernel table);
3. the course-style program (``tests/test_course_programs.py``: ``import minitorch`` and
   the course's names, ``TensorBackend(CudaOps)`` where Numba sees a GPU);
4. the benchmark ``python -m mt_bench.cuda`` (bench:cuda), every figure beside its limit.

The course's view of the same tests (what ``pytest -m task3_3`` ... selects) is read from
their markers, so the report also says, task by task, how the CUDA exercises fare.

It writes ``report.json`` and ``report.txt`` to ``--out``: the device, driver and package
versions, each test's outcome, each figure (beside them each step's JUnit XML,
``bench.json`` and ``steps.log``, every command's output). The exit status is 0 when every
test passed and the benchmark ran, 1 otherwise.

``--simulator`` runs the same flow on Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``
in the steps' environment), where the benchmark only checks that its code runs
(``--simulator-smoke``): no timing is kept, and the report says it is not a measurement.
``--quick`` runs a few tests of the first two steps (and bench:cuda's small sizes).

It needs only the Python that runs it: the mt-* packages, numba-cuda, pytest and hypothesis
installed there (``hatch run gpu:check`` does that), or ``--wheels DIR``, which installs the
wheels of DIR (``hatch run dist``) into a scratch folder first, offline, for a copy of the
tree on a machine without the workspace. The file uses the standard library only, and is
also the pytest plugin (``-p gpu_check``) that writes each test's course markers into the
JUnit XML.

    hatch run gpu:check                          # on a GPU
    python tools/gpu_check.py --wheels dist      # a copy of the tree, offline
    python tools/gpu_check.py --simulator --quick --out /tmp/check
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
#: Test selections of ``--quick``: a few tests of each step, seconds on the simulator.
QUICK_CUDA = "test_cuda_public or practice or test_storage_is_device_memory"
QUICK_NN = "conv1d_cuda or conv_backends"
#: Every step's command and output, one after the other, in the report's folder.
LOG = "steps.log"
#: What the probe prints as JSON: the packages' versions and the device, as the steps see it.
PROBE = r"""
import importlib.metadata as md, json, os, platform, sys
names = ["mt-root", "mt-operators", "mt-autodiff", "mt-tensor", "mt-fast", "mt-cuda", "mt-nn",
         "numba", "numba-cuda", "llvmlite", "numpy", "pytest", "hypothesis", "torch",
         "cupy-cuda12x", "cupy-cuda13x"]
versions = {}
for n in names:
    try:
        versions[n] = md.version(n)
    except md.PackageNotFoundError:
        versions[n] = None
out = {"python": sys.version.split()[0], "executable": sys.executable,
       "platform": platform.platform(), "packages": versions, "device": {}}
try:
    import minitorch.cuda
    from minitorch.cuda import is_available, simulator_enabled
    out["mt_cuda_from"] = os.path.dirname(minitorch.cuda.__file__)
    dev = {"simulator": simulator_enabled(), "available": is_available()}
    if dev["available"] and not dev["simulator"]:
        from numba import cuda
        gpu = cuda.get_current_device()
        name = gpu.name
        dev["name"] = name.decode() if isinstance(name, bytes) else str(name)
        from numba.cuda.cudadrv import driver, runtime
        for key, get in [("compute_capability", lambda: gpu.compute_capability),
                         ("driver_cuda_version", driver.get_version),
                         ("runtime_cuda_version", runtime.get_version)]:
            try:
                dev[key] = ".".join(map(str, get()))
            except Exception as e:  # a detail the report can do without
                dev[key] = f"unknown ({type(e).__name__}: {e})"
    elif dev["simulator"]:
        dev["name"] = "Numba's CUDA simulator"
    out["device"] = dev
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""


# The pytest plugin (``-p gpu_check``): each test's course markers go into the JUnit XML.
def pytest_collection_finish(session: Any) -> None:
    """Record each test's ``task*`` markers and node id as JUnit properties."""
    for item in session.items:
        tasks = sorted({m.name for m in item.iter_markers() if m.name.startswith("task")})
        item.user_properties.append(("nodeid", item.nodeid))
        item.user_properties.append(("course_tasks", ",".join(tasks)))


@dataclass
class TestStep:
    """A pytest run of the check: its name, what it is, its arguments and ``--quick``'s.

    ``quick`` None: the step does not run with ``--quick``.
    """

    name: str
    title: str
    args: list[str]
    quick: list[str] | None


STEPS = [
    TestStep(
        "mt-cuda",
        "every mt-cuda test",
        ["packages/mt-cuda/tests"],
        ["packages/mt-cuda/tests", "-k", QUICK_CUDA],
    ),
    TestStep(
        "mt-nn-cuda",
        "mt-nn's tests on the CUDA backend",
        ["packages/mt-nn/tests", "-k", "cuda"],
        ["packages/mt-nn/tests", "-k", f"cuda and ({QUICK_NN})"],
    ),
    TestStep(
        "course-program",
        "a course-style program (tests/test_course_programs.py): `import minitorch` and the "
        "course's names; it builds TensorBackend(CudaOps) where numba.cuda.is_available()",
        ["tests/test_course_programs.py"],
        None,
    ),
]


def parse_junit(path: Path) -> list[dict[str, Any]]:
    """Each test case of a JUnit XML file: id, outcome, seconds, message, course tasks.

    The outcome is ``failed`` (an assertion), ``error`` (setup, teardown or collection),
    ``skipped`` or ``passed``.
    """
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (found.get("message") or found.text or "").strip()[:300]
                break
        name = props.get("nodeid") or f"{case.get('classname')}::{case.get('name')}"
        tasks = [t for t in props.get("course_tasks", "").split(",") if t]
        tests.append(
            {
                "id": name,
                "outcome": outcome,
                "seconds": float(case.get("time") or 0),
                "message": message,
                "course_tasks": tasks,
            }
        )
    return tests


def count(tests: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many tests had each outcome."""
    counts = dict.fromkeys(("passed", "failed", "error", "skipped"), 0)
    for t in tests:
        counts[t["outcome"]] += 1
    return counts


def run_logged(command: list[str], env: dict[str, str], cwd: Path, log: Path) -> int:
    """Run ``command``, its output appended to ``log`` and shown; return its status."""
    header = "$ " + " ".join(command)
    print(header, flush=True)
    proc = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, errors="replace", check=False
    )
    output = proc.stdout + proc.stderr
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{header}\n{output}\n(exit status {proc.returncode})\n\n")
    print(output[-2000:], flush=True)
    return proc.returncode


def run_tests(step: TestStep, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Run one pytest step; its record: command, status, counts, every test."""
    out: Path = args.out
    junit = out / f"junit-{step.name}.xml"
    junit.unlink(missing_ok=True)
    record: dict[str, Any] = {"name": step.name, "kind": "pytest", "title": step.title}
    if args.quick and step.quick is None:
        record.update(status="skipped", reason="not run with --quick", counts=count([]), tests=[])
        return record
    command = [
        sys.executable,
        "-m",
        "pytest",
        *(step.quick if args.quick and step.quick is not None else step.args),
        "-p",
        "gpu_check",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        *args.pytest_args,
    ]
    rc = run_logged(command, env, args.root, out / LOG)
    record.update(command=command, returncode=rc)
    tests = parse_junit(junit) if junit.exists() else []
    record["counts"], record["tests"] = count(tests), tests
    c = record["counts"]
    if rc == 0 and tests:
        record["status"] = "passed"
    elif rc == 1 or (rc != 5 and (c["failed"] or c["error"])):
        record["status"] = "failed"
    else:  # 5: nothing collected; else pytest itself failed (usage, internal error)
        record["status"] = "error"
        record["reason"] = f"pytest exited with {rc}" + (" (no tests collected)" if rc == 5 else "")
    return record


def run_bench(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Run bench:cuda (on the simulator its untimed smoke run); its record with the rows."""
    out: Path = args.out
    result = out / "bench.json"
    result.unlink(missing_ok=True)
    flags = ["--simulator-smoke"] if args.simulator else (["--quick"] if args.quick else [])
    # Run as a module from examples/: the checkout's mt_bench (as a file, its folder would
    # come first on sys.path, and its cuda.py would hide NVIDIA's cuda package).
    command = [sys.executable, "-m", "mt_bench.cuda", *flags, "--json", str(result)]
    record: dict[str, Any] = {"name": "bench-cuda", "kind": "benchmark", "command": command}
    if args.simulator:
        record["title"] = "bench:cuda, smoke run on the simulator (not a measurement)"
    else:
        record["title"] = "bench:cuda" + (" --quick" if args.quick else "")
    record["returncode"] = rc = run_logged(command, env, args.root / "examples", out / LOG)
    if rc != 0 or not result.exists():
        record.update(status="failed", measurement=False, reason=f"bench_cuda exited with {rc}")
        return record
    data = json.loads(result.read_text(encoding="utf-8"))
    record.update(status="passed", measurement=bool(data.get("measurement")), figures=data)
    if not record["measurement"]:
        record["reason"] = data.get("note") or "not a measurement"
    return record


def course_tasks(steps: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Outcome counts per course task marker over every test step."""
    tasks: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        for test in step.get("tests", []):
            for task in test["course_tasks"]:
                tasks.setdefault(task, []).append(test)
    return {task: count(tests) for task, tests in sorted(tasks.items())}


def nvidia_smi() -> dict[str, str] | None:
    """The first GPU's name, driver version and memory from ``nvidia-smi``, if it is there."""
    if shutil.which("nvidia-smi") is None:
        return None
    query = "name,driver_version,memory.total,compute_cap"
    try:
        line = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    fields = [f.strip() for f in line.splitlines()[0].split(",")] if line.strip() else []
    return dict(zip(query.split(","), fields, strict=False))


def install_wheels(wheels: Path, env: dict[str, str]) -> list[str]:
    """Install every wheel of ``wheels`` into a scratch folder, offline; put it on PYTHONPATH.

    Only those wheels are installed (``--no-deps``): their third-party dependencies must be
    there already. Returns the wheels' file names.
    """
    files = sorted(wheels.glob("*.whl"))
    if not files:
        sys.exit(f"gpu_check: no wheels (*.whl) in {wheels}; build them with `hatch run dist`")
    target = Path(tempfile.mkdtemp(prefix="gpu-check-site-"))
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-index",
        "--no-deps",
        "--no-compile",
        "--target",
        str(target),
        *map(str, files),
    ]
    if subprocess.run(command, check=False).returncode != 0:
        sys.exit(f"gpu_check: installing the wheels of {wheels} failed (see above)")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    return [f.name for f in files]


def step_environment(args: argparse.Namespace) -> dict[str, str]:
    """The steps' environment: the simulator on or off, this file importable as a plugin."""
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if args.simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TOOLS), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def probe(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Versions and the device as the steps will see them (a child Python, same environment)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    try:
        found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        found = {"error": (proc.stderr or proc.stdout).strip()[-500:]}
    return found


def text_report(report: dict[str, Any]) -> str:
    """The report in plain text: device, each step's counts and failures, tasks, figures."""
    dev, env = report["device"], report["environment"]
    lines = [
        f"MiniTorch GPU check ({report['mode']}{', quick' if report['quick'] else ''}): "
        f"{'OK' if report['ok'] else 'NOT OK'}",
        f"date {report['started']}, {report['seconds']:.0f} s; Python {env.get('python')}",
        f"device: {dev.get('name', 'none found')}"
        + (
            f", compute capability {dev['compute_capability']}"
            if "compute_capability" in dev
            else ""
        )
        + (f", driver CUDA {dev['driver_cuda_version']}" if "driver_cuda_version" in dev else "")
        + (f", runtime {dev['runtime_cuda_version']}" if "runtime_cuda_version" in dev else ""),
    ]
    smi = report.get("nvidia_smi")
    if smi:
        lines.append("nvidia-smi: " + ", ".join(f"{k} {v}" for k, v in smi.items()))
    pkgs = env.get("packages", {})
    lines.append("packages: " + ", ".join(f"{k} {v}" for k, v in pkgs.items() if v))
    if env.get("mt_cuda_from"):
        lines.append(f"mt-cuda imported from {env['mt_cuda_from']}")
    if report.get("wheels"):
        lines.append("installed from wheels: " + ", ".join(report["wheels"]))
    for step in report["steps"]:
        lines += ["", f"[{step['status'].upper()}] {step['name']}: {step['title']}"]
        if "reason" in step:
            lines.append(f"  {step['reason']}")
        if step["kind"] == "pytest":
            lines.append("  " + ", ".join(f"{n} {k}" for k, n in step["counts"].items()))
            for t in step["tests"]:
                if t["outcome"] in ("failed", "error"):
                    message = " ".join(t["message"].split())[:200]  # one line
                    lines.append(f"  {t['outcome'].upper()} {t['id']}: {message}")
        elif "figures" in step:
            fig = step["figures"]
            if step["measurement"]:
                copy = fig.get("copy_gbps")
                lines.append(f"  reference: {fig.get('reference') or 'none installed'}; "
                             f"copy bandwidth (the limit of GB/s rows): "
                             f"{'-' if copy is None else f'{copy:.1f} GB/s'}")  # fmt: skip
            for row in fig["rows"]:
                lines.append("  " + bench_line(row, step["measurement"]))
    if report["course_tasks"]:
        lines += ["", "course tasks (the same tests, by marker: what `pytest -m TASK` selects):"]
        for task, c in report["course_tasks"].items():
            lines.append(f"  {task}: " + ", ".join(f"{n} {k}" for k, n in c.items() if n))
    return "\n".join(lines) + "\n"


def bench_line(row: dict[str, Any], measurement: bool) -> str:
    """One benchmark row in text: its rate (or time) beside the reference's and the limit."""
    if not measurement:
        note = f" ({row['note']})" if row["note"] else ""
        return f"{row['name']}: {'ran' if row['ran'] else 'did not run'}{note}"

    def rate(prefix: str) -> str:
        for key, unit in (("gflops", "GFLOP/s"), ("gbps", "GB/s")):
            if row.get(prefix + key) is not None:
                return f"{row[prefix + key]:.1f} {unit}"
        secs = row.get(prefix + "seconds" if prefix else "seconds")
        return "-" if secs is None else f"{secs * 1e6:.1f} us"

    limit = f", {row['of_limit']:.0%} of limit" if row.get("of_limit") is not None else ""
    text = f"{row['name']}: {rate('')} (reference {rate('reference_')}){limit}"
    return text + (f"; {row['note']}" if row["note"] else "")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The check's options."""
    p = argparse.ArgumentParser(prog="gpu_check", description=(__doc__ or "").split("\n\n")[0])
    add = p.add_argument
    add("--simulator", action="store_true",
        help="run on Numba's CUDA simulator (the benchmark untimed)")  # fmt: skip
    add("--quick", action="store_true", help="a few tests of mt-cuda and mt-nn, bench --quick")
    add("--out", type=Path, default=Path("gpu-check"), metavar="DIR",
        help="the report's folder (default: gpu-check)")  # fmt: skip
    add("--wheels", type=Path, metavar="DIR",
        help="first install the wheels of DIR offline, without dependencies")  # fmt: skip
    add("--root", type=Path, default=TOOLS.parent, metavar="DIR",
        help="the repository whose tests run (default: this file's)")  # fmt: skip
    add("--no-bench", action="store_true", help="run the tests only")
    add("--pytest-args", nargs=argparse.REMAINDER, default=[], metavar="ARG",
        help="the rest of the line goes to every pytest step")  # fmt: skip
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check, write ``report.json`` and ``report.txt``; 0 when everything passed."""
    args = parse_args(argv)
    if not args.simulator and os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        sys.exit(
            "gpu_check: NUMBA_ENABLE_CUDASIM is set, but this run is for a GPU: unset "
            "it, or pass --simulator to run the check on the simulator"
        )
    args.root = args.root.resolve()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / LOG).unlink(missing_ok=True)
    env = step_environment(args)
    started = time.time()
    report: dict[str, Any] = {
        "schema": 1,
        "mode": "simulator" if args.simulator else "gpu",
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "command": [sys.executable, *sys.argv] if argv is None else ["gpu_check", *argv],
        "platform": platform.platform(),
    }
    if args.wheels is not None:
        report["wheels"] = install_wheels(args.wheels, env)
    report["environment"] = probe(env, args.root)
    report["device"] = report["environment"].get("device", {})
    report["nvidia_smi"] = None if args.simulator else nvidia_smi()
    steps: list[dict[str, Any]] = []
    if not report["device"].get("available"):
        why = report["environment"].get("error") or "no CUDA GPU found (and no --simulator)"
        steps.append(
            {
                "name": "device",
                "kind": "probe",
                "title": "find the GPU",
                "status": "error",
                "reason": why,
            }
        )
    else:
        steps += [run_tests(step, args, env) for step in STEPS]
        if args.no_bench:
            steps.append(
                {
                    "name": "bench-cuda",
                    "kind": "benchmark",
                    "title": "bench:cuda",
                    "status": "skipped",
                    "reason": "--no-bench",
                }
            )
        else:
            steps.append(run_bench(args, env))
    report["steps"] = steps
    report["course_tasks"] = course_tasks(steps)
    report["ok"] = all(s["status"] in ("passed", "skipped") for s in steps)
    report["seconds"] = time.time() - started
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = text_report(report)
    (args.out / "report.txt").write_text(text, encoding="utf-8")
    print("\n" + text + f"\nreport: {args.out / 'report.txt'} and report.json", flush=True)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
