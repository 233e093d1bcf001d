"""Add PyTorch's CPU build to the test environment: the oracle of the PyTorch comparisons.

``hatch run test:all`` runs this before pytest (hatch.toml), so a newcomer's first run
installs PyTorch and compares with it as CI does; once torch imports it returns at once. It
installs exactly ``torch==2.13.0+cpu`` as a wheel. That version exists only as a CPU build:
never the multi-GB CUDA build that PyPI serves as plain ``torch``. It is taken

1. from what pip is already configured with (a local wheel, a wheel folder or a CPU index
   in pip's configuration), checked first with a dry run that touches nothing; else
2. from PyTorch's CPU wheel index, https://download.pytorch.org/whl/cpu.

When neither works (offline, a Python with no such wheel) it prints one line that says so
and exits 0: the tests run, and the comparisons skip, saying why. It remembers that in the
environment (a file beside its Python) and does not try again until ``--retry``.

    python tools/install_torch.py            # what test:all runs
    python tools/install_torch.py --retry    # try again after a failed attempt
    python tools/install_torch.py --check    # exit 1 unless torch imports
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote

TORCH = "torch==2.13.0+cpu"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
FAILED_MARK = Path(sys.prefix) / "minitorch-no-torch-wheel"


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def resolves_to_cpu_wheel(*index_args: str) -> bool:
    """True if pip, as configured (plus ``index_args``), would install a ``+cpu`` torch wheel."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        dry = _pip(
            "install", "--quiet", "--dry-run", "--only-binary", ":all:",
            "--report", str(report), *index_args, TORCH,
        )  # fmt: skip
        if dry.returncode != 0 or not report.exists():
            return False
        install = json.loads(report.read_text())["install"]
    urls = [unquote(item["download_info"]["url"]) for item in install]
    torch = [url for url in urls if url.rsplit("/", 1)[-1].startswith("torch-")]
    return len(torch) == 1 and "+cpu" in torch[0]


def install(retry: bool = False) -> int:
    """Install the CPU build if it is missing; 0 even when it cannot be (a note says so)."""
    if importlib.util.find_spec("torch") is not None:
        return 0
    if FAILED_MARK.exists() and not retry:
        print(f"note: no PyTorch here (an earlier attempt failed; `{Path(__file__).name} --retry`)")
        return 0
    for index_args in ((), ("--extra-index-url", CPU_INDEX, "--timeout", "30", "--retries", "1")):
        if resolves_to_cpu_wheel(*index_args):
            done = _pip("install", "--quiet", "--only-binary", ":all:", *index_args, TORCH)
            if done.returncode == 0:
                print(f"installed {TORCH} (PyTorch's CPU build) for the PyTorch comparisons")
                return 0
            sys.stderr.write(done.stderr)
    print(
        f"note: no CPU wheel of {TORCH} can be installed here (pip's configuration, "
        f"{CPU_INDEX}); the tests that compare with PyTorch will skip"
    )
    FAILED_MARK.write_text(f"{TORCH}: no wheel from pip's configuration or {CPU_INDEX}\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Install (the default) or, with ``--check``, report whether torch imports."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless torch imports")
    parser.add_argument("--retry", action="store_true", help="try again after a failed attempt")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if importlib.util.find_spec("torch") is not None else 1
    return install(retry=args.retry)


if __name__ == "__main__":
    sys.exit(main())
