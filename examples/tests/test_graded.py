"""``mt_examples.graded``: the graded settings of the toy training tasks and their command.

Task 4.5's graded command is tested with the nn examples (test_nn_examples.py).
"""

from __future__ import annotations

import pytest

from mt_examples import graded, train_scalar, train_tensor

pytestmark = pytest.mark.task2_5


def test_every_task_trains_on_the_graded_points_with_its_options() -> None:
    for task in graded.TASKS.values():
        argv = task.argv("xor")
        assert argv[:6] == ["--dataset", "xor", "--points", "50", "--seed", "0"]
        assert argv[6:] == list(task.options)
        assert "--epochs 7" in " ".join(task.argv("xor", epochs=7))
        assert graded.command(task, "xor").startswith(f"python {task.script}.py --dataset xor")


def test_a_score_passes_at_the_threshold_and_not_below() -> None:
    assert graded.Score("xor", 45, 50).passed
    assert not graded.Score("xor", 44, 50).passed
    assert "44 of 50 points correctly (88.0%); at least 90% is needed: FAIL" in (
        graded.Score("xor", 44, 50).message
    )


def test_score_counts_the_points_in_their_class() -> None:
    every_one = graded.score("xor", lambda points: [True] * len(points))
    every_zero = graded.score("xor", lambda points: [False] * len(points))
    assert every_one.total == every_zero.total == graded.HELD_OUT_POINTS
    assert every_one.correct + every_zero.correct == graded.HELD_OUT_POINTS
    with pytest.raises(ValueError, match="1 labels for 500 points"):
        graded.score("xor", lambda points: [True])


@pytest.mark.parametrize(("name", "script"), [("task1_5", train_scalar), ("task2_5", train_tensor)])
def test_a_trained_network_is_scored_like_its_own_final_accuracy(name, script) -> None:
    task = graded.TASKS[name]
    result = graded.train(task, script, "simple", epochs=3)
    got = graded.score("simple", graded.labels(task, result.model), seed=graded.SEED)
    assert got.correct == round(result.final_accuracy * got.total)


def test_a_network_is_scored_on_points_it_never_trained_on(monkeypatch) -> None:
    """A lookup table of the training points (the course's loop trains nothing) fails."""
    from mt_examples.toy import ToyConfig, make_data

    for dataset in graded.DATASETS:
        seen, _ = make_data(ToyConfig(dataset, points=graded.POINTS, seed=graded.SEED))
        table = {tuple(x): y == 1 for x, y in zip(seen.X, seen.y, strict=True)}

        def lookup(points: list[list[float]], table: dict = table) -> list[bool]:
            return [table.get(tuple(p), False) for p in points]

        assert graded.score(dataset, lookup, seed=graded.SEED).correct == graded.POINTS
        held_out = graded.score(dataset, lookup)
        assert held_out.items == "held-out points"
        assert not held_out.passed, held_out.message
    monkeypatch.setenv(graded.HELD_OUT_ENV, "12345")  # grading's own seed
    assert graded.held_out_seed() == 12345
    monkeypatch.setenv(graded.HELD_OUT_ENV, str(graded.SEED))
    with pytest.raises(ValueError, match="training seed"):
        graded.held_out_seed()
    monkeypatch.setenv(graded.HELD_OUT_ENV, "x")
    with pytest.raises(ValueError, match="integer seed"):
        graded.held_out_seed()


def test_main_prints_each_score_and_exits_1_below_the_threshold(capsys) -> None:
    assert graded.main(["task1_5", "--dataset", "split", "--epochs", "1"]) == 1
    out = capsys.readouterr().out
    assert "$ python train_scalar.py --dataset split --points 50 --seed 0" in out
    assert "split: the trained network labels" in out
    assert "(trained 1 epochs, not the graded number)" in out


def test_main_refuses_an_unknown_task_and_a_bad_epoch_count() -> None:
    with pytest.raises(SystemExit):
        graded.main(["task9_9"])
    with pytest.raises(SystemExit):
        graded.main(["task1_5", "--epochs", "0"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("task1_5 --data-dir data", "--data-dir is for task 4.5; task1_5 trains on generated"),
        ("task1_5 --dataset mnist", "task1_5 trains on simple, split, xor, not mnist"),
    ],
)
def test_main_refuses_task_4_5s_options_for_a_toy_task(argv, message, capsys) -> None:
    with pytest.raises(SystemExit):
        graded.main(argv.split())
    assert message in capsys.readouterr().err


def test_a_missing_earlier_task_is_named_in_one_line_with_status_1(monkeypatch, capsys) -> None:
    """On a starter whose task 2.3 is not done, training task 2.5 stops at that task's stub.

    It said so with a raw traceback; now one line names the task, and the status is 1.
    """
    from minitorch.tensor import SimpleBackend

    def stub(*args, **kwargs):  # what a starter's unfinished task 2.3 raises
        raise NotImplementedError("Task 2.3: SimpleOps.zip_kernel (tensor_ops.py)")

    monkeypatch.setattr(SimpleBackend, "mul_zip", stub)
    assert graded.main(["task2_5", "--dataset", "xor", "--epochs", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: cannot train task2_5: it runs the code of task 2.3, which")
    assert "not done yet (NotImplementedError: Task 2.3: SimpleOps.zip_kernel" in err
    assert "Traceback" not in err


def test_a_stub_without_a_task_number_still_gives_one_line(monkeypatch, capsys) -> None:
    def bare_stub(argv):
        raise NotImplementedError

    monkeypatch.setattr(train_tensor, "main", bare_stub)
    assert graded.main(["task2_5", "--dataset", "simple", "--epochs", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: cannot train task2_5: it runs the code of a task, which is not done yet "
        "(NotImplementedError: NotImplementedError)"
    )
