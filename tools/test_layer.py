"""One layer's tests, with pytest's options after the layer: ``hatch run test:pkg LAYER ...``.

``hatch run test:pkg tensor -q -x -k broadcast`` runs ``pytest packages/mt-tensor/tests -q
-x -k broadcast``: the first argument names the layer (``operators``, ``autodiff``,
``tensor``, ``fast``, ``cuda``, ``nn``, ``root``), everything after it goes to pytest as
it is. (Pasting all the arguments into the path, ``packages/mt-{args}/tests``, made
``test:pkg cuda -q`` the path ``packages/mt-cuda -q/tests``.)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def layers() -> list[str]:
    """The layers with tests: ``packages/mt-<layer>/tests``."""
    return sorted(p.parent.name.removeprefix("mt-") for p in ROOT.glob("packages/mt-*/tests"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run pytest on the first argument's layer with the other arguments; its exit status.

    A missing or unknown layer prints the usage and the layers, and returns 2 (pytest's
    status for a usage error).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    known = layers()
    if not args or args[0] not in known:
        got = f"unknown layer {args[0]!r}; " if args else ""
        print(
            f"usage: hatch run test:pkg LAYER [pytest options]: {got}LAYER is one of "
            f"{', '.join(known)} (e.g. hatch run test:pkg tensor -q -x)",
            file=sys.stderr,
        )
        return 2
    return int(pytest.main([str(ROOT / "packages" / f"mt-{args[0]}" / "tests"), *args[1:]]))


if __name__ == "__main__":
    sys.exit(main())
