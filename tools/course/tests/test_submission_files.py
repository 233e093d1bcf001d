"""A submission is read once, as plain files: no link on any path is followed.

The family: a path of the submission that leads outside it (a symbolic link as the file,
as its folder or as any parent, in a folder or inside a zip), a file that is not one (a
fifo, a device), and an archive that cannot be unpacked. Each is refused with a line that
says why, and none of them reads a byte outside the submission.
"""

import os
import stat
import zipfile
from pathlib import Path

import pytest

from mtcourse.grader.grading import MAX_FILE, SubmissionError, find_submission, read_tree
from mtcourse.grader.splice import Unit

UNITS = [Unit("operators.py", "mul", "task0_1", False)]
SECRET = "def mul(x, y):\n    return x * y  # the course's solution\n"


def starter(root: Path, text: str = "def mul(x, y):\n    raise NotImplementedError\n") -> Path:
    pkg = root / "src" / "minitorch" / "operators"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "operators.py").write_text(text)
    return root


@pytest.fixture
def solution(tmp_path) -> Path:
    """A folder outside the submission holding what a cheat wants: the course's package."""
    return starter(tmp_path / "course" / "solution", SECRET)


def never_reads(sub, secret: str = SECRET) -> None:
    assert all(secret != t for t in sub.files.values())


@pytest.mark.parametrize("link", ["src", "src/minitorch", "src/minitorch/operators"])
def test_a_linked_parent_folder_is_refused_and_never_read(tmp_path, solution, link):
    root = tmp_path / "student"
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(solution / link)
    with pytest.raises(SubmissionError, match="symbolic link"):
        find_submission(root, "operators", UNITS)


def test_a_linked_package_beside_a_real_one_deeper_is_not_taken(tmp_path, solution):
    """The shallowest real package is graded; the link above it is refused, not followed."""
    starter(tmp_path / "student" / "deep" / "er")
    (tmp_path / "student" / "src").symlink_to(solution / "src")
    sub = find_submission(tmp_path / "student", "operators", UNITS)
    assert "NotImplementedError" in (sub.files["operators.py"] or "")


def test_a_linked_file_is_refused_with_a_line_of_feedback(tmp_path, solution):
    root = starter(tmp_path / "student")
    target = root / "src/minitorch/operators/operators.py"
    target.unlink()
    target.symlink_to(solution / "src/minitorch/operators/operators.py")
    sub = find_submission(root, "operators", UNITS)
    assert sub.files["operators.py"] is None
    assert any("symbolic link" in n and n.startswith("operators.py") for n in sub.notes), sub.notes


def test_the_submission_itself_as_a_link_is_refused(tmp_path, solution):
    (tmp_path / "submission").symlink_to(solution)
    with pytest.raises(SubmissionError, match="symbolic link"):
        find_submission(tmp_path / "submission", "operators", UNITS)


def test_a_fifo_is_refused_without_waiting_on_it(tmp_path):
    root = starter(tmp_path / "student")
    target = root / "src/minitorch/operators/operators.py"
    target.unlink()
    os.mkfifo(target)  # opening it for reading would wait for a writer forever
    sub = find_submission(root, "operators", UNITS)
    assert sub.files["operators.py"] is None
    assert any("fifo" in n for n in sub.notes), sub.notes


def test_a_device_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    root = starter(tmp_path / "student")
    target = root / "src/minitorch/operators/operators.py"
    target.unlink()
    os.mknod(target, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    sub = find_submission(root, "operators", UNITS)
    assert sub.files["operators.py"] is None
    assert any("device" in n for n in sub.notes), sub.notes


def zipped(where: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(where, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return where


def test_zip_members_are_read_into_memory_and_links_refused(tmp_path):
    z = zipped(
        tmp_path / "sub.zip",
        {"s/src/minitorch/operators/__init__.py": b""},
        {"s/src/minitorch/operators/operators.py": "/etc/passwd"},
    )
    sub = find_submission(z, "operators", UNITS)
    assert sub.files["operators.py"] is None
    assert any("symbolic link" in n for n in sub.notes), sub.notes


def test_a_member_name_the_disk_would_refuse_grades_the_rest(tmp_path):
    """Nothing is unpacked to disk: a name longer than any file system allows is harmless."""
    long = "x" * 300
    z = zipped(
        tmp_path / "sub.zip",
        {
            "src/minitorch/operators/__init__.py": b"",
            "src/minitorch/operators/operators.py": b"def mul(x, y):\n    return 1\n",
            f"src/{long}/{long}.py": b"print()",
        },
    )
    sub = find_submission(z, "operators", UNITS)
    assert sub.files["operators.py"] == "def mul(x, y):\n    return 1\n"


@pytest.mark.parametrize("name", ["../outside.py", "/etc/outside.py", "C:/outside.py"])
def test_a_zip_path_outside_it_is_refused(tmp_path, name):
    z = zipped(tmp_path / "sub.zip", {name: b"x", "src/minitorch/operators/__init__.py": b""})
    with pytest.raises(SubmissionError, match="outside"):
        find_submission(z, "operators", UNITS)


def test_a_corrupt_zip_is_a_submission_error_not_a_crash(tmp_path):
    z = zipped(tmp_path / "sub.zip", {"src/minitorch/operators/__init__.py": b"a" * 1000})
    raw = bytearray(z.read_bytes())
    at = raw.find(b"a" * 100)
    raw[at : at + 100] = b"b" * 100  # the member's CRC no longer matches
    z.write_bytes(bytes(raw))
    with pytest.raises(SubmissionError, match="zip"):
        find_submission(z, "operators", UNITS)


def test_a_zip_that_lies_about_its_sizes_reads_at_most_the_limit(tmp_path):
    big = b"#" * (MAX_FILE + 10)
    z = zipped(
        tmp_path / "sub.zip",
        {"src/minitorch/operators/__init__.py": b"", "src/minitorch/operators/operators.py": big},
    )
    sub = find_submission(z, "operators", UNITS)
    assert sub.files["operators.py"] is None


def test_the_tree_is_one_value_of_texts(tmp_path):
    root = starter(tmp_path / "student")
    (root / "notes.txt").write_bytes(b"\xff\xfe")
    tree = read_tree(root, "operators")
    assert tree.files["src/minitorch/operators/__init__.py"] == ""
    assert tree.files["notes.txt"] is None  # not UTF-8: kept as unreadable, never decoded


def test_a_students_downloaded_data_is_neither_read_nor_counted(tmp_path, monkeypatch):
    """A starter folder with data beside the code (task 4.5 downloads into ./data) grades."""
    from mtcourse.grader import grading

    monkeypatch.setattr(grading, "MAX_BYTES", 1 << 20)
    root = starter(tmp_path / "student")
    (root / "data").mkdir()
    for i in range(3):
        (root / "data" / f"part{i}.gz").write_bytes(b"\0" * (1 << 20))
    sub = find_submission(root, "operators", UNITS)
    assert "NotImplementedError" in (sub.files["operators.py"] or "")
    assert not any(r.startswith("data/") for r in read_tree(root, "operators").files)
