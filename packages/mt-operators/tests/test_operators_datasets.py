"""The six toy datasets: shape, ranges, reproducibility (a seed, or random.seed), course keys."""

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
def test_a_seed_leaves_the_global_random_state_untouched(name):
    random.seed(1234)
    before = random.getstate()
    datasets[name](30, seed=9)
    assert random.getstate() == before


@pytest.mark.parametrize("name", RANDOM_NAMES)
def test_without_a_seed_random_seed_reproduces_the_data(name):
    # The course's datasets draw from the global random module: random.seed(n) fixes them.
    random.seed(42)
    first = datasets[name](30)
    random.seed(42)
    assert datasets[name](30) == first
    assert datasets[name](30) != first  # the global state moved on


@pytest.mark.parametrize("name", NAMES)
def test_course_spelling_of_the_keys(name):
    course = name.capitalize()  # the course's keys: "Simple", "Diag", "Split", "Xor", ...
    assert course in datasets
    assert datasets[course] is datasets[name]
    assert datasets[name.upper()] is datasets[name]


def test_unknown_dataset_names_the_known_ones():
    with pytest.raises(KeyError, match=r"no dataset named 'moons'.*simple"):
        datasets["moons"]
    assert "moons" not in datasets
    assert 3 not in datasets
    assert len(datasets) == len(NAMES)
    assert list(datasets) == list(NAMES)


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
