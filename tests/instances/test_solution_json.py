"""JSON of the solution types of the pairing and CASE families: exact round trips, strict reading.

Every solution a family's heuristics produce must write and read back equal
(floats through ``repr``) and still pass the family's checker; a malformed
file must raise one located ``InstanceError`` line naming the field.
"""

from __future__ import annotations

import json

import pytest

from heuristics import case as case_heuristics
from heuristics import pairing as pairing_heuristics
from instances import case, pairing
from instances.errors import InstanceError

PAIRING_PROBLEMS = {
    "C=2 analytic W=7": lambda: pairing.PairingProblem(pairing.generate(7, seed=4)),
    "C=3 analytic W=6": lambda: pairing.PairingProblem(pairing.generate(6, seed=1), concurrency=3),
    "C=2 at_most 400 W": lambda: pairing.PairingProblem(
        pairing.job_mix(2), pairing.ConfigSpace(p_total=400, budget="at_most")),
    "queue C=3 W=7": lambda: pairing.WeightedQueue.random(7, seed=5, concurrency=3),
}


def _without_costs(info: dict) -> dict:
    return {k: v for k, v in info.items() if k != "costs"}


@pytest.mark.parametrize("problem", list(PAIRING_PROBLEMS), ids=list(PAIRING_PROBLEMS))
@pytest.mark.parametrize("method", list(pairing_heuristics.METHODS))
def test_pairing_plans_of_every_heuristic_round_trip(problem, method):
    prob = PAIRING_PROBLEMS[problem]()
    if method == "ts-naive" and isinstance(prob, pairing.WeightedQueue):
        pytest.skip("naive caps need a PairingProblem")
    plan = pairing_heuristics.METHODS[method](prob)
    assert pairing.check(prob, plan) == []
    text = plan.to_json()
    back = pairing.Plan.from_json(text, source="plan.json")
    assert back.sets == plan.sets and back.policy == plan.policy
    assert back.info == _without_costs(plan.info)  # the Costs object is dropped, as documented
    assert back.total_time == plan.total_time  # bit for bit
    assert pairing.check(prob, back) == []
    assert back.to_json() == text
    assert pairing.Plan.from_json(back.to_json()) == back


def test_pairing_plan_info_keeps_plain_json_and_drops_the_rest():
    import numpy as np

    info = {"n": 3, "gap": 0.1 + 0.2, "nested": {"a": [1, None, True, "x"]}, "costs": object(),
            "tuple": (1, 2), "array": np.arange(3), "nan": float("nan"), 5: "int key"}
    plan = pairing.Plan([pairing.JobSet(("a",), None, 1.0)], policy="p", info=info)
    back = pairing.Plan.from_json(plan.to_json())
    assert back.info == {"n": 3, "gap": 0.1 + 0.2, "nested": {"a": [1, None, True, "x"]}}


@pytest.mark.parametrize("method", list(case_heuristics.METHODS))
@pytest.mark.parametrize("cfg,ratio,n,seed", [("A", "1:1", 8, 0), ("D", "1:2", 10, 3), ("B", "2:1", 12, 1)])
def test_case_traces_of_every_policy_round_trip(tmp_path, method, cfg, ratio, n, seed):
    w = case.generate(cfg, ratio=ratio, n=n, seed=seed)
    trace = case_heuristics.METHODS[method](w)
    assert case.check(w, trace) == []
    text = trace.to_json()
    back = case.Trace.from_json(text, source="t.json")
    assert back == trace and back.makespan == trace.makespan
    assert case.check(w, back) == []
    assert back.to_json() == text
    trace.save(tmp_path / "t.json")
    assert case.load_trace(tmp_path / "t.json") == trace


def test_case_trace_with_numpy_numbers_writes_plain_json():
    import numpy as np

    t = case.Trace("np", (case.JobRun("a", np.float64(0.0), np.float64(0.5), np.float64(5.5)),),
                   (case.TaskRun("a", np.int64(0), np.int64(1), np.float64(0.5), np.float64(5.5)),),
                   (case.Hold("a", np.int64(1), 0.5, 5.5),), workers=np.int64(4))
    back = case.Trace.from_json(t.to_json())
    assert back == t and type(back.tasks[0].instance) is int and back.workers == 4


def _plan_text() -> dict:
    return {"policy": "p", "sets": [
        {"jobs": ["j0", "j1"], "config": {"cores": [16, 16], "gpcs": [3, 4], "cpu_cap": 175.0, "gpu_cap": 175.0},
         "time": 2.5}], "info": {}}


def _bad_plan(edit) -> str:
    data = _plan_text()
    edit(data)
    return json.dumps(data)


BAD_PLANS = [
    (lambda d: d.update(sets=5), "field sets: must be a list, got 5"),
    (lambda d: d.pop("sets"), "field sets: missing"),
    (lambda d: d.update(polcy="x"), "field polcy: unknown field"),
    (lambda d: d["sets"][0].update(tme=1), "field sets[0].tme: unknown field"),
    (lambda d: d["sets"][0].update(time="2.5"), "field sets[0].time: must be a number, got '2.5'"),
    (lambda d: d["sets"][0].update(time=True), "field sets[0].time: must be a number, got True"),
    (lambda d: d["sets"][0].pop("time"), "field sets[0].time: missing"),
    (lambda d: d["sets"][0].update(jobs="j0"), "field sets[0].jobs: must be a list of job names"),
    (lambda d: d["sets"][0].update(jobs=["j0", 7]), "field sets[0].jobs[1]: 7 is not a string"),
    (lambda d: d["sets"][0]["config"].update(cores=[16.5, 16]), "field sets[0].config.cores[0]: 16.5 is not an"),
    (lambda d: d["sets"][0]["config"].update(gpcs=[True, 4]), "field sets[0].config.gpcs[0]: True is not an"),
    (lambda d: d["sets"][0]["config"].update(cpu_cap="175"), "field sets[0].config.cpu_cap: must be a number"),
    (lambda d: d["sets"][0]["config"].update(cpucap=175), "field sets[0].config.cpucap: unknown field"),
    (lambda d: d["sets"][0]["config"].pop("gpu_cap"), "field sets[0].config.gpu_cap: missing"),
    (lambda d: d["sets"][0].update(config=[16, 16]), "field sets[0].config: must be an object or null"),
    (lambda d: d.update(info=[1]), "field info: must be an object"),
    (lambda d: d.update(policy=3), "field policy: 3 is not a string"),
]


@pytest.mark.parametrize("edit,needle", BAD_PLANS, ids=[b[1] for b in BAD_PLANS])
def test_bad_plan_is_one_located_line(edit, needle):
    with pytest.raises(InstanceError) as info:
        pairing.Plan.from_json(_bad_plan(edit), source="plan.json")
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and msg.startswith("plan.json: ") and needle in msg, msg


@pytest.mark.parametrize("text,needle", [
    ('{"sets": [{"jobs": ["a"], "config": null, "time": NaN}]}', "field sets[0].time: must be a finite number"),
    ('{"sets": [{"jobs": ["a"], "config": null, "time": 1e400}]}', "field sets[0].time: must be a finite number"),
    ('{"sets": [], "info": {"x": [Infinity]}}', "field info.x[0]: must be a finite number"),
    ('{"sets": [{"jobs": ["a"], "time": 1, "time": 2}]}', "key 'time' appears twice"),
    ('{"sets": [{"jobs": ["a\\nb"], "time": 1}]}', "control character U+000A"),
    ("[1, 2]", "a plan must be a JSON object"),
    ('{"sets": [', "not valid JSON"),
])
def test_bad_plan_literals(text, needle):
    with pytest.raises(InstanceError) as info:
        pairing.Plan.from_json(text, source="plan.json")
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and msg.startswith("plan.json: ") and needle in msg, msg


def _trace_dict() -> dict:
    return case.Trace("hand", (case.JobRun("a", 0.0, 0.0, 5.5),), (case.TaskRun("a", 0, 1, 0.5, 5.5),),
                      (case.Hold("a", 1, 0.0, 5.5),), workers=4).to_dict()


BAD_TRACES = [
    (lambda d: d.update(jobs=5), "field jobs: must be a list, got 5"),
    (lambda d: d.pop("tasks"), "field tasks: missing"),
    (lambda d: d.update(polcy="x"), "field polcy: unknown field"),
    (lambda d: d.update(workers=1.5), "field workers: 1.5 is not an integer"),
    (lambda d: d.update(workers=0), "field workers: must be an integer >= 1"),
    (lambda d: d.update(makespan=6.0), "field makespan: 6.0 is not the last job end, 5.5"),
    (lambda d: d["jobs"][0].update(end="5.5"), "task a: field jobs[0].end: must be a number, got '5.5'"),
    (lambda d: d["jobs"][0].update(lunch=0), "task a: field jobs[0].lunch: unknown field"),
    (lambda d: d["tasks"][0].update(instance=True), "task a: field tasks[0].instance: True is not an integer"),
    (lambda d: d["tasks"][0].update(index=-1), "task a: field tasks[0].index: must be an integer >= 0"),
    (lambda d: d["tasks"][0].pop("start"), "task a: field tasks[0].start: missing"),
    (lambda d: d["holds"][0].update(instance=1.0), "task a: field holds[0].instance: 1.0 is not an integer"),
    (lambda d: d["holds"][0].update(job=None), "field holds[0].job: None is not a string"),
    (lambda d: d["holds"].append([1]), "field holds[1]: must be an object"),
]


@pytest.mark.parametrize("edit,needle", BAD_TRACES, ids=[b[1] for b in BAD_TRACES])
def test_bad_trace_is_one_located_line(tmp_path, edit, needle):
    data = _trace_dict()
    edit(data)
    with pytest.raises(case.CaseError) as info:
        case.Trace.from_json(json.dumps(data), source="t.json")
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and msg.startswith("t.json: ") and needle in msg, msg
    (tmp_path / "t.json").write_text(json.dumps(data))
    with pytest.raises(case.CaseError, match="t.json: "):
        case.load_trace(tmp_path / "t.json")
