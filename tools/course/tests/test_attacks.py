"""The grader under attack: the hostile submissions of `course:attacks`, graded for real."""

import ast
import json
from collections import Counter

import pytest

from mtcourse.attacks import ATTACKS, run_attacks
from mtcourse.config import load_calendar
from mtcourse.starter import assign

CAL = load_calendar()


def test_the_catalogue_covers_every_kind_of_attack_and_each_applies_to_the_starter(tmp_path):
    assert len(ATTACKS) >= 25
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)
    assert set(Counter(a.category for a in ATTACKS)) == {
        "forge outcomes",
        "rewrite files",
        "outlive the run",
        "read the solution",
        "read the hidden tests",
        "change what is graded",
        "lying objects",
        "exhaust resources",
    }
    base = tmp_path / "base"
    assign("operators", base, keep=frozenset({"task0_1"}), cal=CAL, wheels=False)
    for attack in ATTACKS:
        target = tmp_path / attack.name
        import shutil

        shutil.copytree(base, target)
        attack.edit(target)
        changed = [
            p
            for p in target.rglob("*")
            if p.is_symlink()  # a link where the starter has a folder or a file
            or (
                p.is_file()
                and (
                    not (base / p.relative_to(target)).exists()
                    or (base / p.relative_to(target)).read_bytes() != p.read_bytes()
                )
            )
        ]
        assert changed, f"{attack.name} changes nothing"
        for p in changed:
            if p.suffix == ".py" and not p.is_symlink():
                ast.parse(p.read_text(), str(p))


@pytest.mark.packaging
def test_every_attack_earns_only_what_it_solved_locally_and_in_the_bundle(tmp_path, capsys):
    out = tmp_path / "attacks.json"
    status = run_attacks("operators", jobs=2, json_out=out, cal=CAL)
    printed = capsys.readouterr().out
    assert status == 0, printed[-6000:]
    verdicts = json.loads(out.read_text())
    assert {v["where"] for v in verdicts} == {"local", "bundle"}
    assert {v["attack"] for v in verdicts} == {a.name for a in ATTACKS} | {"solution"}
    for v in verdicts:
        assert not v["leaks"], v
        assert not v["survivors"], v
        assert not v["rewritten"], v
    solution = [v for v in verdicts if v["attack"] == "solution"]
    points = sum(t.points for t in CAL.layer("operators").tasks)
    assert all(sum(v["got"].values()) == points for v in solution)
