"""MIG problem data: validation with located errors, exact JSON round trips."""

import json
import math

import pytest
from hypothesis import given, strategies as st

from instances import mig
from instances.errors import InstanceError

A30_TIMES = {1: 4.0, 2: 2.5, 4: 1.5}


def write(tmp_path, data, name="tasks.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("times,field,reason", [
    ({"1": 4.0, "2": 0.0, "4": 1.0}, "times.2", "must be a finite number > 0"),
    ({"1": 4.0, "2": -1.0, "4": 1.0}, "times.2", "must be a finite number > 0"),
    ({"1": 4.0, "2": 5.0, "4": 1.0}, "times.2", "non-increasing"),
    ({"1": 4.0, "4": 1.0}, "times.2", "missing the time for size 2"),
    ({"1": 4.0, "2": 2.0, "3": 1.5, "4": 1.0}, "times.3", "not a compute size of A30"),
    ({"1": 4.0, "2": "fast", "4": 1.0}, "times.2", "not a number"),
    ({"1": 4.0, "2": 2.0, "4": float("inf")}, "times.4", "finite"),
])
def test_bad_task_file_names_file_task_and_field(tmp_path, times, field, reason):
    path = write(tmp_path, {"gpu": "A30", "tasks": [{"name": "ok", "times": A30_TIMES},
                                                    {"name": "bad", "times": times}]}
                 if "inf" not in str(times) else
                 '{"gpu": "A30", "tasks": [{"name": "bad", "times": {"1": 4.0, "2": 2.0, "4": Infinity}}]}')
    with pytest.raises(InstanceError) as info:
        mig.load(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(str(path)), msg
    assert "task bad" in msg and f"field {field}" in msg and reason in msg, msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("data,needle", [
    ({"gpu": "A30", "tasks": [{"name": "a", "times": A30_TIMES}, {"name": "a", "times": A30_TIMES}]},
     "task a: field name: task name used twice"),
    ({"gpu": "B300", "tasks": []}, "field gpu: unknown GPU 'B300'"),
    ({"tasks": []}, "field gpu: missing 'gpu'"),
    ({"gpu": "A30", "tasks": [{"times": A30_TIMES}]}, "task #0: field name"),
    ({"gpu": "A30", "tasks": [{"name": "a", "times": A30_TIMES, "prio": 1}]}, "task a: field prio"),
    ({"gpu": "A30", "batches": [{"release": 5, "tasks": []}, {"release": 1, "tasks": []}]},
     "field batches[1].release"),
    ("{not json", "not valid JSON"),
])
def test_bad_problem_files(tmp_path, data, needle):
    path = write(tmp_path, data)
    with pytest.raises(InstanceError, match=None) as info:
        mig.load(path)
    assert needle in str(info.value) and str(path) in str(info.value), str(info.value)


def test_missing_file():
    with pytest.raises(InstanceError, match="nope.json: file not found"):
        mig.load("nope.json")


def test_memory_requirement_rules_out_small_placements():
    t = mig.Task("big", {4: 3.0, 7: 2.0}, memory_gb=18)  # A100: 1g 5 GB, 2g 10 GB, 3g/4g 20 GB
    with pytest.raises(InstanceError, match="missing the time for size 3"):
        mig.Problem("A100", [t])
    p = mig.Problem("A100", [mig.Task("big", {3: 3.5, 4: 3.0, 7: 2.0}, memory_gb=18)])
    assert p.task("big").sizes == (3, 4, 7)
    with pytest.raises(InstanceError, match="size 2 has 10.0 GB"):
        mig.Problem("A100", [mig.Task("big", {2: 9, 3: 3.5, 4: 3.0, 7: 2.0}, memory_gb=18)])
    with pytest.raises(InstanceError, match="largest A100 instance has 40.0 GB"):
        mig.Problem("A100", [mig.Task("huge", {7: 1.0}, memory_gb=80)])


def test_super_linear_work_is_allowed():
    # work s*t(s) falls from 4.0 to 3.0: super-linear speed-up is real and allowed
    p = mig.Problem("A30", [mig.Task("s", {1: 4.0, 2: 1.5, 4: 1.0})])
    assert p.task("s").work(2) < p.task("s").work(1)


times_strategy = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(raw=st.lists(st.tuples(times_strategy, times_strategy, times_strategy), min_size=1, max_size=6),
       release=st.floats(min_value=0, max_value=1e5))
def test_json_round_trip_is_exact(tmp_path_factory, raw, release):
    tasks = [mig.Task(f"t{i}", dict(zip((1, 2, 4), sorted(ts, reverse=True)))) for i, ts in enumerate(raw)]
    p = mig.Problem("A30", tasks, release)
    path = tmp_path_factory.mktemp("rt") / "p.json"
    mig.save(p, path)
    q = mig.load(path)
    assert q == p
    assert all(q.task(t.name).times[s] == t.times[s] for t in tasks for s in (1, 2, 4))


def test_workload_round_trip_and_releases(tmp_path):
    w = mig.generate_workload([3, 2, 4], [0.0, 10.5, 30.25], "A100", seed=7)
    mig.save(w, tmp_path / "w.json")
    v = mig.load(tmp_path / "w.json")
    assert v == w and v.n == 9
    assert set(v.releases().values()) == {0.0, 10.5, 30.25}


def test_custom_gpu_inline_round_trip(tmp_path):
    p = mig.generate(4, "A30", seed=1).without_reconfiguration()
    mig.save(p, tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert isinstance(data["gpu"], dict)  # not the built-in A30: written inline
    q = mig.load(tmp_path / "p.json")
    assert q == p and not q.gpu.reconfigurable and math.isclose(q.gpu.memory_gb[4], 24.0)
