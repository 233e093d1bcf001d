"""Every deliberate difference of the op database from PyTorch is a row of docs/pytorch.md."""

import re
from pathlib import Path

from minitorch.tensor.opdb import DIFFERENCES, OPS

ROOT = Path(__file__).resolve().parents[1]


def table_rows() -> list[str]:
    """The first cells of the table under "Different, and why"."""
    text = (ROOT / "docs" / "pytorch.md").read_text()
    section = text.split("## Different, and why", 1)[1].split("\n## ", 1)[0]
    return [m.group(1).strip() for m in re.finditer(r"^\| ([^|]+?) \|", section, re.M)]


def test_every_declared_difference_has_its_row_in_the_guide() -> None:
    rows = table_rows()
    missing = [key for key in DIFFERENCES if key not in rows]
    assert not missing, f"docs/pytorch.md lacks rows for {missing}"


def test_every_entry_that_differs_names_a_documented_difference() -> None:
    unknown = {e.name: e.differs for e in OPS if e.differs and e.differs not in DIFFERENCES}
    assert not unknown, unknown


def test_every_entry_has_error_inputs_and_samples() -> None:
    assert all(e.samples for e in OPS)
    without = [e.name for e in OPS if not e.errors]
    assert without == [], without
