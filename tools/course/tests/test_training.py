"""The training tasks: the data subset they are graded on, and the scripts the grader takes."""

import gzip
from dataclasses import replace

import pytest

from mtcourse.config import load_calendar
from mtcourse.grader.grading import find_submission
from mtcourse.grader.splice import Unit
from mtcourse.layers import CourseError
from mtcourse.starter import assign
from mtcourse.suite import data_subset
from mtcourse.training_data import GRADED, DataError, make_subset

CAL = load_calendar()


def idx(kind: int, sizes: list[int], payload: bytes) -> bytes:
    head = bytes([0, 0, 8, len(sizes)]) + b"".join(s.to_bytes(4, "big") for s in sizes)
    return head + payload


@pytest.fixture
def real(tmp_path):
    """A miniature of the real data's layout: 5 MNIST images of 2 x 2, 3 SST-2 sentences."""
    root = tmp_path / "real"
    (root / "mnist").mkdir(parents=True)
    for stem, n in (("train", 5), ("t10k", 4)):
        with gzip.open(root / f"mnist/{stem}-images-idx3-ubyte.gz", "wb") as f:
            f.write(idx(3, [n, 2, 2], bytes(range(4 * n))))
        (root / f"mnist/{stem}-labels-idx1-ubyte").write_bytes(idx(1, [n], bytes(range(n))))
    (root / "sst2").mkdir()
    rows = "sentence\tlabel\na fine film\t1\na dull one\t0\nmore words here\t1\n"
    (root / "sst2/train.tsv").write_text(rows)
    (root / "sst2/dev.tsv").write_text("sentence\tlabel\nfine\t1\n")
    (root / "glove").mkdir()
    vectors = "".join(f"{w} 0.1 0.2\n" for w in ("a", "fine", "film", "dull", "one", "more"))
    with gzip.open(root / "glove/glove50_sst2.txt.gz", "wt") as f:
        f.write(vectors)
    return root


def test_subset_is_the_first_items_in_the_same_format(real, tmp_path):
    counts = {"mnist-train": 3, "mnist-test": 2, "sst2-train": 2, "sst2-dev": 1}
    out = make_subset(real, tmp_path / "a", counts)
    images = gzip.decompress((out / "mnist/train-images-idx3-ubyte.gz").read_bytes())
    assert images == idx(3, [3, 2, 2], bytes(range(12)))
    labels = gzip.decompress((out / "mnist/t10k-labels-idx1-ubyte.gz").read_bytes())
    assert labels == idx(1, [2], bytes(range(2)))
    assert (out / "sst2/train.tsv").read_text().splitlines() == [
        "sentence\tlabel",
        "a fine film\t1",
        "a dull one\t0",
    ]
    glove = gzip.decompress((out / "glove/glove50_sst2.txt.gz").read_bytes()).decode()
    # The vectors of the subset's words only ("more" is in the third sentence).
    assert [line.split()[0] for line in glove.splitlines()] == ["a", "fine", "film", "dull", "one"]
    # The same bytes every time (gzip without a timestamp): a bundle is reproducible.
    again = make_subset(real, tmp_path / "b", counts)
    for path in out.rglob("*.gz"):
        assert path.read_bytes() == (again / path.relative_to(out)).read_bytes()


def test_missing_or_small_data_is_a_clear_error(real, tmp_path):
    with pytest.raises(DataError, match="holds 5 items, fewer than the 9"):
        make_subset(real, tmp_path / "a", {"mnist-train": 9})
    with pytest.raises(DataError, match="MINITORCH_DATA"):
        make_subset(tmp_path / "nothing", tmp_path / "b", {"sst2-dev": 1})
    with pytest.raises(DataError, match="unknown training-data"):
        make_subset(real, tmp_path / "c", {"cifar-train": 1})


def test_the_grader_reads_the_students_script_and_never_its_helpers(tmp_path):
    starter = tmp_path / "starter"
    (starter / "src/minitorch/tensor").mkdir(parents=True)
    (starter / "src/minitorch/tensor/__init__.py").write_text("")
    (starter / "mt_examples").mkdir()
    (starter / "mt_examples/train_tensor.py").write_text("NETWORK = 'mine'\n")
    (starter / "mt_examples/toy.py").write_text("CHEAT = True\n")  # not the student's to grade
    units = [
        Unit("mt_examples/train_tensor.py", "Network.forward", "task2_5", False),
        Unit("tensor_data.py", "to_index", "task2_1", False),
    ]
    sub = find_submission(starter, "tensor", units)
    assert sub.files["mt_examples/train_tensor.py"] == "NETWORK = 'mine'\n"
    assert set(sub.files) == {"mt_examples/train_tensor.py", "tensor_data.py"}  # no toy.py
    # A submission without the script still grades its package (the training tests fail).
    (starter / "mt_examples/train_tensor.py").unlink()
    sub = find_submission(starter, "tensor", units)
    assert sub.files["mt_examples/train_tensor.py"] is None
    assert any(n.startswith("mt_examples/train_tensor.py: not found") for n in sub.notes)


def test_the_graded_subset_is_the_one_the_starters_command_makes(tmp_path, real):
    # course.toml's counts are the ones mt_examples/subset.py (in the starter) cuts out.
    nn = CAL.layer("nn")
    assert nn.training_data == GRADED
    other = replace(nn, training_data={**GRADED, "mnist-train": 10})
    with pytest.raises(CourseError, match=r"is not GRADED of examples/mt_examples/subset\.py"):
        data_subset(other, tmp_path / "data", real, required=True)


def test_the_nn_starter_trains_task_4_5_as_graded_and_its_workflow_says_what_it_runs(tmp_path):
    assign("nn", tmp_path / "s", cal=CAL, wheels=False)
    starter = tmp_path / "s"
    assert {"graded.py", "subset.py"} <= {p.name for p in (starter / "mt_examples").iterdir()}
    readme = (starter / "README.md").read_text()
    section = readme.split("### Task 4.5: ")[1].split("### ")[0]
    assert "train it as the grader does with `python -m mt_examples.graded task4_5`" in section
    title = "Training: the MNIST and sentiment networks"
    assert f"| 4.5 | {title} | `python -m mt_examples.graded task4_5` |" in readme
    workflow = (starter / ".github/workflows/tests.yml").read_text()
    step = workflow.split('"Task 4.5: ')[1].split("- name:")[0]
    assert "(the layers and data readers its scripts use)" in step
    assert "run: python -m pytest -m task4_5" in step
