"""tools/install_torch.py: the test command's PyTorch step, without touching pip or the network."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("install_torch", ROOT / "tools/install_torch.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_test_command_runs_it_before_pytest() -> None:
    text = (ROOT / "hatch.toml").read_text()
    assert 'all = ["python tools/install_torch.py", "pytest {args}"]' in text


def test_an_installed_torch_calls_no_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    monkeypatch.setattr(tool.importlib.util, "find_spec", lambda name: object())

    def no_pip(*args: str) -> Any:
        raise AssertionError(f"pip was called: {args}")

    monkeypatch.setattr(tool, "_pip", no_pip)
    assert tool.install() == 0
    assert tool.main(["--check"]) == 0


def test_no_wheel_anywhere_is_a_note_remembered_until_retry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _tool()
    calls: list[tuple[str, ...]] = []

    def failing_pip(*args: str) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return subprocess.CompletedProcess(args, 1, "", "no matching distribution")

    monkeypatch.setattr(tool.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(tool, "_pip", failing_pip)
    monkeypatch.setattr(tool, "FAILED_MARK", tmp_path / "mark")
    assert tool.install() == 0
    assert "no CPU wheel of torch==2.13.0+cpu" in capsys.readouterr().out
    # the configured sources first, then PyTorch's CPU index; both only as dry runs
    assert len(calls) == 2
    assert all("--dry-run" in c for c in calls)
    assert tool.CPU_INDEX in calls[1]
    assert (tmp_path / "mark").exists()
    assert tool.install() == 0  # remembered: no second attempt
    assert len(calls) == 2
    assert tool.install(retry=True) == 0
    assert len(calls) == 4
    assert tool.main(["--check"]) == 1


def test_only_a_cpu_wheel_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()

    def report_of(url: str) -> Any:
        def pip(*args: str) -> subprocess.CompletedProcess[str]:
            report = Path(args[args.index("--report") + 1])
            report.write_text(f'{{"install": [{{"download_info": {{"url": "{url}"}}}}]}}')
            return subprocess.CompletedProcess(args, 0, "", "")

        return pip

    monkeypatch.setattr(tool, "_pip", report_of("file:///w/torch-2.13.0%2Bcpu-cp311-none.whl"))
    assert tool.resolves_to_cpu_wheel()
    monkeypatch.setattr(tool, "_pip", report_of("https://files/torch-2.13.0-cp311-none.whl"))
    assert not tool.resolves_to_cpu_wheel()
