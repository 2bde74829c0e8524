"""The node of g MIG GPUs: problem data, JSON, and the checker's node and per-GPU rules."""

import json

import pytest

from instances import gpus, mig, mig_node
from instances.errors import InstanceError
from instances.mig_node import NodeProblem, NodeSchedule, check


def _problem(g=2, reconfiguration=False):
    p = NodeProblem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 3.0, 2: 2.0, 4: 1.0})],
                    gpus=g)
    return p if reconfiguration else p.without_reconfiguration()


def _run(name, size, start, t0, t1, gpu="A30"):
    return mig.ScheduledTask(name, gpus.get(gpu).placement(size, start), t0, t1)


def test_problem_json_round_trip_and_generator(tmp_path):
    p = mig_node.generate(7, "A100", gpus=3, seed=5)
    path = tmp_path / "node.json"
    mig_node.save(p, path)
    assert mig_node.load(path) == p
    assert json.loads(path.read_text())["gpus"] == 3
    assert mig_node.generate(7, "A100", gpus=3, seed=5) == p
    assert p.tasks == mig.generate(7, "A100", seed=5).tasks


@pytest.mark.parametrize("data, match", [
    ({"gpu": "A30", "tasks": []}, "missing 'gpus'"),
    ({"gpu": "A30", "gpus": 0, "tasks": []}, "field gpus: must be an integer between 1 and 64"),
    ({"gpu": "A30", "gpus": 2.0, "tasks": []}, "field gpus: 2.0 is not an integer"),
    ({"gpu": "A30", "gpus": True, "tasks": []}, "field gpus"),
    ({"gpu": "A30", "gpus": 2, "release": 1.0, "tasks": []}, "field release: unknown field"),
    ({"gpu": "A30", "gpus": 2, "batches": []}, "field batches: unknown field"),
    ({"gpu": "A30", "gpus": 2, "tasks": [{"name": "a", "times": {"1": 1.0}}]}, "task a: field times.2: missing"),
])
def test_bad_problem_data_is_one_located_error(data, match):
    with pytest.raises(InstanceError, match=match):
        mig_node.from_dict(data, source="node.json")


def test_a_released_batch_is_refused():
    with pytest.raises(InstanceError, match="released at 0"):
        NodeProblem.from_problem(mig.generate(3, "A30", seed=0, release=2.0), 2)


def test_schedule_json_round_trip_keeps_gpu_indices():
    p = _problem(reconfiguration=True)
    a30 = p.gpu
    s = NodeSchedule("A30", 2, [(0, _run("a", 4, 0, 0.13, 1.63)), (1, _run("b", 2, 2, 0.12, 2.12))],
                     [(0, mig.Reconfiguration("create", a30.placement(4, 0), 0.0, 0.13)),
                      (1, mig.Reconfiguration("create", a30.placement(2, 2), 0.0, 0.12))])
    assert check(p, s) == []
    back = NodeSchedule.from_json(s.to_json())
    assert back == s and back.assignment() == {"a": 0, "b": 1}
    assert check(p, back) == []


@pytest.mark.parametrize("entry, match", [
    ({"task": "a", "placement": {"size": 4, "start": 0}, "start": 0.0, "end": 1.5}, "missing 'gpu_index'"),
    ({"gpu_index": -1, "task": "a", "placement": {"size": 4, "start": 0}, "start": 0.0, "end": 1.5},
     "gpu_index: must be an integer >= 0"),
    ({"gpu_index": "0", "task": "a", "placement": {"size": 4, "start": 0}, "start": 0.0, "end": 1.5},
     "gpu_index: '0' is not an integer"),
    ({"gpu_index": 0, "task": "a", "placement": {"size": 4, "start": 0}, "start": "0", "end": 1.5},
     "tasks\\[0\\].start"),
    ({"gpu_index": 0, "task": "a", "placement": {"size": 4, "start": 0}, "begin": 0.0, "end": 1.5},
     "unknown field"),
])
def test_bad_schedule_data_is_one_located_error(entry, match):
    with pytest.raises(InstanceError, match=match):
        NodeSchedule.from_json({"gpu": "A30", "gpus": 2, "tasks": [entry]}, source="s.json")


def test_each_gpu_is_its_own_machine():
    p = _problem()
    # the same placement at the same time on two GPUs is fine; on one GPU it is a slice conflict
    two = NodeSchedule("A30", 2, [(0, _run("a", 4, 0, 0.0, 1.5)), (1, _run("b", 4, 0, 0.0, 1.0))])
    assert check(p, two) == []
    one = NodeSchedule("A30", 2, [(0, _run("a", 4, 0, 0.0, 1.5)), (0, _run("b", 4, 0, 0.0, 1.0))])
    assert any(v.startswith("GPU 0: rule 3 (slice conflict)") for v in check(p, one))


def test_each_gpu_has_its_own_channel():
    p = _problem(reconfiguration=True)
    a30 = p.gpu
    create = mig.Reconfiguration("create", a30.placement(4, 0), 0.0, 0.13)
    runs = [(0, _run("a", 4, 0, 0.13, 1.63)), (1, _run("b", 4, 0, 0.13, 1.13))]
    # two creates at the same time on two GPUs: allowed (rule 4 holds per GPU)
    assert check(p, NodeSchedule("A30", 2, runs, [(0, create), (1, create)])) == []
    # the second GPU's task without its own create: rule 2 on that GPU
    broken = check(p, NodeSchedule("A30", 2, runs, [(0, create)]))
    assert broken and all(v.startswith("GPU 1: rule 2") for v in broken)


def test_node_rules():
    p = _problem(g=2)
    a, b = _run("a", 4, 0, 0.0, 1.5), _run("b", 4, 0, 0.0, 1.0)
    assert check(p, NodeSchedule("A30", 2, [(0, a), (1, a), (1, _run("b", 2, 0, 1.5, 3.5))])) == \
        ["node: task a runs on GPUs 0 and 1 (each task runs once, on one GPU)"]
    assert "node: task b is not scheduled" in check(p, NodeSchedule("A30", 2, [(0, a)]))
    assert "node: task a is on GPU index 2; the node has GPUs 0..1" in check(p, NodeSchedule("A30", 2, [(2, a), (0, b)]))
    assert "node: the schedule is for 3 GPUs, the node has 2" in check(p, NodeSchedule("A30", 3, [(0, a), (1, b)]))
    assert any("unknown" not in v and "task c is not in the problem" in v
               for v in check(p, NodeSchedule("A30", 2, [(0, a), (1, b), (1, _run("c", 1, 0, 0.0, 1.0))])))
    late = NodeSchedule("A30", 2, [(0, a), (1, b)], makespan=2.0)
    assert check(p, late) == ["node: rule 6 (makespan): declared 2, last task ends at 1.5"]
    wrong_duration = check(p, NodeSchedule("A30", 2, [(0, _run("a", 4, 0, 0.0, 1.0)), (1, b)]))
    assert len(wrong_duration) == 1 and wrong_duration[0].startswith("GPU 0: rule 5 (duration)")
    op = mig.Reconfiguration("create", p.gpu.placement(4, 0), 0.0, 0.0)
    assert any("create of 4@0 at 0 is on GPU index 5" in v
               for v in check(p, NodeSchedule("A30", 2, [(0, a), (1, b)], [(5, op)])))


def test_a_schedule_of_another_gpu_model_is_refused():
    p = _problem()
    s = NodeSchedule("A100", 2, [(0, _run("a", 4, 0, 0.0, 1.5, "A100")), (1, _run("b", 4, 0, 0.0, 1.0, "A100"))])
    assert check(p, s) == ["node: the schedule is for 'A100', the problem for 'A30'"]


def test_one_gpu_node_is_the_single_gpu_problem():
    single = mig.generate(6, "A100", seed=2)
    node = NodeProblem.from_problem(single, 1)
    s = mig.Schedule("A100", [mig.ScheduledTask(t.name, single.gpu.root, 0.0, 1.0) for t in single.tasks])
    assert [v.removeprefix("GPU 0: ") for v in check(node, NodeSchedule.from_parts("A100", [s]))] == \
        mig.check(single, s)
