"""Problem data, OR-Library reader, checker and metrics of the hetero family (the heterogeneous-GPU scheduling paper)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from instances import hetero
from instances.errors import InstanceError
from instances.hetero import GPU, Assignment, HeteroProblem, Schedule, Task

RAW = Path(__file__).resolve().parents[2] / "instances" / "data" / "orlib-wt"

# An optimal sequence of wt40 instance 1, found by heuristics.hetero.ils
# (the OR-Library lists the optimum 913 but no sequence).
WT40_1_SEQUENCE = [38, 19, 37, 36, 26, 25, 6, 23, 22, 34, 35, 20, 12, 17, 7, 11, 2, 30, 33, 39,
                   27, 28, 1, 16, 10, 31, 14, 5, 15, 3, 9, 4, 21, 24, 29, 18, 32, 40, 8, 13]


def small():
    """Two GPUs (slow big, fast small) and three tasks; used for hand-computed checks."""
    tasks = (Task("a", workload=4, memory=8, deadline=3, weight=2, arrival=0),
             Task("b", workload=6, memory=20, deadline=10, weight=1, arrival=1),
             Task("c", workload=2, memory=4, deadline=4, weight=3, arrival=2))
    gpus = (GPU("slow", speed=1.0, memory=32), GPU("fast", speed=2.0, memory=16))
    return HeteroProblem(tasks, gpus, name="small")


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("field,value", [("workload", 0), ("workload", -1), ("memory", -2),
                                         ("weight", -1), ("arrival", -0.5), ("deadline", math.nan)])
def test_bad_task_field_names_task_and_field(field, value):
    entry = {"name": "t7", "workload": 3, "memory": 1, "deadline": 5, "weight": 1, "arrival": 0}
    entry[field] = value
    with pytest.raises(InstanceError) as exc:
        hetero.from_dict({"gpus": [{"name": "g", "speed": 1}], "tasks": [entry]}, source="x.json")
    msg = str(exc.value)
    assert "x.json" in msg and "task t7" in msg and f"field {field}" in msg


def test_missing_fields_and_bad_gpus():
    with pytest.raises(InstanceError, match="task t0: field deadline: missing"):
        hetero.from_dict({"gpus": [{"name": "g", "speed": 1}], "tasks": [{"name": "t0", "workload": 1}]})
    with pytest.raises(InstanceError, match="speed"):
        hetero.from_dict({"gpus": [{"name": "g", "speed": 0}], "tasks": []})
    with pytest.raises(InstanceError, match="at least one GPU"):
        hetero.from_dict({"gpus": [], "tasks": []})
    with pytest.raises(InstanceError, match="duplicate"):
        HeteroProblem((Task("a", 1), Task("a", 2)), (GPU("g", 1.0),))
    with pytest.raises(InstanceError, match="must be a number"):
        hetero.from_dict({"gpus": [{"name": "g", "speed": "fast"}], "tasks": []})


def test_load_bad_file_names_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(InstanceError, match="broken.json: not valid JSON"):
        hetero.load(path)
    with pytest.raises(InstanceError, match="cannot read"):
        hetero.load(tmp_path / "missing.json")


def test_json_round_trip(tmp_path):
    pb = hetero.generate(9, gpus=("T4", "H100"), seed=5, unfit=1)
    path = tmp_path / "pb.json"
    hetero.save(pb, path)
    back = hetero.load(path)
    assert back == pb
    assert np.array_equal(back.p, pb.p) and back.unfit == pb.unfit
    # infinite memory survives as null
    wt = hetero.orlib_wt40(2)
    hetero.save(wt, path)
    assert hetero.load(path) == wt


def test_schedule_json_round_trip():
    s = Schedule([Assignment("a", "g", 0.0, 1.5), Assignment("b", "h", 2.0, 3.0)], ["z"])
    back = Schedule.from_json(s.to_json())
    assert back == s and json.loads(s.to_json())["makespan"] == 3.0
    with pytest.raises(InstanceError):
        Schedule.from_json('{"tasks": [{"task": "a"}]}')


# --------------------------------------------------------------------------- generator

def test_generator_is_seeded_and_documented_ranges():
    a = hetero.generate(30, gpus=("T4", "V100", "A100-80GB"), seed=11)
    assert a == hetero.generate(30, gpus=("T4", "V100", "A100-80GB"), seed=11)
    assert a != hetero.generate(30, gpus=("T4", "V100", "A100-80GB"), seed=12)
    w = a.weight
    assert np.all((w >= 1) & (w <= 10) & (w == np.rint(w)))
    assert np.all(a.arrival == np.rint(a.arrival)) and a.arrival[0] == 0
    assert np.all(np.diff(a.arrival) >= 0)
    pmin = np.where(a.eligible, a.p, np.inf).min(axis=1)
    assert np.all(a.deadline >= a.arrival + pmin - 1e-9)  # nobody late by construction
    assert not a.unfit and a.eligible.any(axis=1).all()
    assert {t.memory for t in a.tasks} <= set(hetero.MEMORY_LEVELS)


def test_generator_unfit_and_bad_arguments():
    pb = hetero.generate(5, gpus=("T4",), seed=0, unfit=2)
    assert pb.n == 7 and pb.unfit == ("t5", "t6")
    with pytest.raises(InstanceError, match="unknown GPU model"):
        hetero.generate(3, gpus=("B200",))
    with pytest.raises(InstanceError, match="tightness"):
        hetero.generate(3, tightness=1.5)


def test_tightness_makes_deadlines_earlier():
    loose = hetero.generate(200, seed=3, tightness=0.2)
    tight = hetero.generate(200, seed=3, tightness=1.0)
    assert tight.deadline.mean() < loose.deadline.mean()


# --------------------------------------------------------------------------- OR-Library

def test_orlib_reader_matches_raw_file():
    raw = [int(x) for x in (RAW / "wt40.txt").read_text().split()]
    assert len(raw) == 125 * 120
    for k in (1, 64, 125):
        pb = hetero.orlib_wt40(k)
        block = raw[(k - 1) * 120: k * 120]
        assert [t.workload for t in pb.tasks] == block[:40]
        assert [t.weight for t in pb.tasks] == block[40:80]
        assert [t.deadline for t in pb.tasks] == block[80:]
        assert pb.m == 1 and not pb.arrival.any() and pb.eligible.all()
    assert len(hetero.orlib_wt40_all()) == 125
    assert hetero.orlib_wt40_optimum(1) == 913
    assert hetero.orlib_wt40_optimum()[:3] == [913, 1225, 537]
    assert (RAW / "README.txt").read_text().count("MIT") >= 1  # licence shipped beside the data
    with pytest.raises(InstanceError):
        hetero.orlib_wt40(126)


def test_orlib_first_instance_optimum_reproduced():
    pb = hetero.orlib_wt40(1)
    seq = [pb.index[f"j{k}"] for k in WT40_1_SEQUENCE]
    assert sorted(seq) == list(range(40))
    sched = hetero.evaluate_sequences(pb, [seq])
    assert hetero.check(pb, sched) == []
    # recompute by hand from the raw numbers, independent of evaluate_sequences
    t, total = 0, 0
    for k in WT40_1_SEQUENCE:
        task = pb.tasks[k - 1]
        t += task.workload
        total += task.weight * max(0, t - task.deadline)
    assert total == hetero.weighted_tardiness(pb, sched) == hetero.orlib_wt40_optimum(1) == 913


# --------------------------------------------------------------------------- checker

def feasible_small():
    # by hand: fast GPU runs a [0, 2] then c [2, 3]; slow GPU runs b [1, 7] (b needs 20 GB > 16 GB)
    return Schedule([Assignment("a", "fast", 0, 2), Assignment("c", "fast", 2, 3),
                     Assignment("b", "slow", 1, 7)])


def test_checker_accepts_feasible():
    assert hetero.check(small(), feasible_small()) == []


@pytest.mark.parametrize("assignments,expected", [
    ([("a", "fast", 0, 2), ("c", "fast", 1, 2), ("b", "slow", 1, 7)], "overlap"),
    ([("a", "fast", 0, 2), ("c", "fast", 2, 3), ("b", "fast", 3, 6)], "memory"),
    ([("a", "fast", 0, 2), ("c", "fast", 2, 3), ("b", "slow", 0, 6)], "before its arrival"),
    ([("a", "fast", 0, 3), ("c", "fast", 3, 4), ("b", "slow", 1, 7)], "needs 2"),
    ([("a", "fast", 0, 2), ("b", "slow", 1, 7)], "task c: not scheduled"),
    ([("a", "fast", 0, 2), ("c", "fast", 2, 3), ("c", "slow", 3, 5), ("b", "slow", 5, 11)], "assigned 2 times"),
    ([("a", "fast", 0, 2), ("c", "gpu9", 2, 3), ("b", "slow", 1, 7)], "unknown GPU"),
])
def test_checker_finds_each_violation(assignments, expected):
    errs = hetero.check(small(), Schedule([Assignment(*a) for a in assignments]))
    assert any(expected in e for e in errs), errs


def test_checker_requires_unfit_tasks_reported():
    tasks = (Task("a", 1, memory=8, deadline=5), Task("huge", 1, memory=100, deadline=5))
    pb = HeteroProblem(tasks, (GPU("g", 1.0, 16),))
    assert pb.unfit == ("huge",)
    assert any("not reported unscheduled" in e for e in hetero.check(pb, Schedule([Assignment("a", "g", 0, 1)])))
    assert hetero.check(pb, Schedule([Assignment("a", "g", 0, 1)], ["huge"])) == []
    assert any("fits a GPU" in e for e in hetero.check(pb, Schedule([], ["a", "huge"])))


# --------------------------------------------------------------------------- metrics

def test_metrics_hand_computed():
    pb, s = small(), feasible_small()
    m = hetero.metrics(pb, s)
    # completions: a 2 (d 3), c 3 (d 4), b 7 (d 10): nobody late
    assert m.twt == 0 and m.dmc == 0 and m.dmr == 0
    # (7): 2*(2-0) + 3*(3-2) + 1*(7-1) = 13; (8): (2 + 1 + 6) / 3 = 3
    assert m.twct == 13 and m.act == 3
    # (11), (12): busy 2 + 1 + 6 = 9 over 2 GPUs * (7 - 0)
    assert m.makespan == 7 and m.utilisation == pytest.approx(9 / 14)


def test_metrics_hand_computed_with_misses():
    pb = small()
    # everything on the slow GPU in order a, c, b: a [0,4], c [4,6], b [6,12]
    s = Schedule([Assignment("a", "slow", 0, 4), Assignment("c", "slow", 4, 6),
                  Assignment("b", "slow", 6, 12)])
    assert hetero.check(pb, s) == []
    m = hetero.metrics(pb, s)
    # tardiness: a 1 (w 2), c 2 (w 3), b 2 (w 1) -> 2 + 6 + 2 = 10
    assert m.twt == 10 == hetero.weighted_tardiness(pb, s)
    assert m.dmc == 3 and m.dmr == 1.0
    assert m.twct == 2 * 4 + 3 * 4 + 1 * 11 and m.act == pytest.approx(19 / 3)
    assert m.utilisation == pytest.approx(12 / (2 * 12))


def test_evaluate_sequences_is_semi_active():
    pb = small()
    s = hetero.evaluate_sequences(pb, [[1], [0, 2]])
    by = {a.task: a for a in s.assignments}
    assert (by["b"].start, by["b"].end) == (1, 7)
    assert (by["a"].start, by["a"].end, by["c"].start, by["c"].end) == (0, 2, 2, 3)
    assert hetero.check(pb, s) == []
