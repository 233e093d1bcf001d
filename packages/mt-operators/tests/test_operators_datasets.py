"""The six toy datasets: shape, ranges, reproducibility, no global RNG side effects."""

import random

import pytest

from minitorch.operators import Graph, datasets

pytestmark = pytest.mark.task0_5

NAMES = ["simple", "diag", "split", "xor", "circle", "spiral"]
RANDOM_NAMES = [n for n in NAMES if n != "spiral"]


def test_all_six_datasets_are_registered():
    assert set(datasets) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [0, 1, 7, 50])
def test_graph_shape_and_ranges(name, n):
    g = datasets[name](n, seed=0)
    assert isinstance(g, Graph)
    assert (g.N, len(g.X), len(g.y)) == (n, n, n)
    for x1, x2 in g.X:
        assert 0.0 <= x1 <= 1.0
        assert 0.0 <= x2 <= 1.0
    assert set(g.y) <= {0, 1}


@pytest.mark.parametrize("name", NAMES)
def test_both_classes_present(name):
    assert set(datasets[name](200, seed=1).y) == {0, 1}


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_reproduces(name):
    assert datasets[name](40, seed=3) == datasets[name](40, seed=3)


@pytest.mark.parametrize("name", RANDOM_NAMES)
def test_different_seeds_differ(name):
    assert datasets[name](40, seed=1).X != datasets[name](40, seed=2).X


def test_spiral_is_deterministic():
    assert datasets["spiral"](40, seed=1) == datasets["spiral"](40, seed=2)
    assert datasets["spiral"](40) == datasets["spiral"](40, seed=5)


@pytest.mark.parametrize("name", NAMES)
def test_global_random_state_untouched(name):
    random.seed(1234)
    before = random.getstate()
    datasets[name](30, seed=9)
    datasets[name](30)  # seed=None draws fresh entropy, still into its own Random
    assert random.getstate() == before


@pytest.mark.parametrize("name", RANDOM_NAMES)
def test_labels_follow_the_documented_rule(name):
    rules = {
        "simple": lambda x1, x2: x1 < 0.5,
        "diag": lambda x1, x2: x1 + x2 < 0.5,
        "split": lambda x1, x2: x1 < 0.2 or x1 > 0.8,
        "xor": lambda x1, x2: (x1 < 0.5) != (x2 < 0.5),
        "circle": lambda x1, x2: (x1 - 0.5) ** 2 + (x2 - 0.5) ** 2 > 0.1,
    }
    g = datasets[name](100, seed=4)
    assert g.y == [int(rules[name](x1, x2)) for x1, x2 in g.X]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [-1, 2.5, "10", None, True])
def test_bad_n_raises_value_error(name, bad):
    with pytest.raises(ValueError, match="N must be a non-negative int"):
        datasets[name](bad)
