"""Each layer's grader calibrates: the course's own solution earns every point through it.

Calibration (``grading.calibrate``, what the bundle's ``setup.sh`` runs on the grading
machine) grades the solution as if a student had written it: every graded function in the
worker, one at a time, with the course's code around it. It fails on any test the
solution fails there, on any function no test uses, and on any test that fails on the
solution in the grader's own copy. Operators' grading is calibrated by the other tests of
this folder; here a task of each layer whose objects cross the channel in other ways
(every task of a layer: its bundle's ``setup.sh``, as the README shows): tensors whose
views share layout arrays and version counters, a test's threads, kernel factories given
a test's own functions (Numba compiles them in the worker), and CUDA kernels launched on
Numba's simulator. Marked ``calibration``: CI runs these beside the starter proofs.
"""

import json

import pytest

from mtcourse.config import load_calendar
from mtcourse.grade import grading_env

pytestmark = [pytest.mark.packaging, pytest.mark.calibration]

CAL = load_calendar()

TASKS = {
    # 2.4: backward through the worker (views sharing their base's layout and version
    # counter, hooks), and a test that runs backward in four threads at once.
    "tensor": ("task2_4",),
    # 3.1: map, zip, reduce and fold given the tests' own functions; threads.
    "fast": ("task3_1",),
    # 3.3 and 3.4: CUDA kernels (the practice ones launched directly) on the simulator.
    "cuda": ("task3_3", "task3_4"),
}


@pytest.mark.parametrize("layer", sorted(TASKS))
def test_the_solution_earns_every_point_through_the_worker(layer, tmp_path):
    env = grading_env(layer, tmp_path / "env", cal=CAL, tasks=TASKS[layer])
    calibration = json.loads((env.course.root / "calibration.json").read_text())
    assert set(calibration["tasks"]) == set(TASKS[layer])
    for task, plan in calibration["tasks"].items():
        assert plan["tests"], f"{task}: no test graded"
        assert plan["runs"], f"{task}: no run through the worker"
