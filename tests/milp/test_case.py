"""milp.case: the offline CP-SAT makespan reference, against both simulated policies."""

import dataclasses

import pytest

from heuristics import case as sim
from instances import case
from instances.case import Job, Slowdown, Task, Workload, check, custom_config
from milp import Status, solve_optimal


def hand_example():
    cfg = custom_config("A30", [[(1, 0), (1, 1)]], name="hand")
    jobs = (Job("iso", (Task(2.0, 100, 10.0),), True),
            Job("a", (Task(4.0, 200, 4.0), Task(5.0, 200, 3.0, cpu=2.0)), False),
            Job("b", (Task(3.0, 300, 6.0, cpu=1.0),), False))
    return Workload(cfg, jobs, Slowdown(0.0, 0.1))


def test_hand_example_optimum():
    # CASE rules: a's 5 GB task cannot start before 10 in any schedule that keeps
    # iso alone for 10 s, so 13 is optimal (and CASE attains it). Slurm rules:
    # 10 + 9 + 7 s of exclusive lives on two instances: best split {iso}, {a, b} = 16.
    w = hand_example()
    r = solve_optimal(w, time_limit=10, workers=1)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(13) and r.lower_bound == pytest.approx(13)
    assert check(w, r.schedule) == []
    rs = solve_optimal(w, time_limit=10, workers=1, rules="slurm")
    assert rs.status is Status.OPTIMAL and rs.objective == pytest.approx(16)
    assert all(len([h for h in rs.schedule.holds if h.job == j.name]) == 1 for j in w.jobs)


@pytest.mark.parametrize("cfg, ratio, n, seed", [("A", "1:1", 10, 0), ("A", "0:1", 12, 1), ("A", "1:4", 10, 2),
                                                 ("D", "1:2", 10, 3), ("D", "1:0", 8, 4), ("B", "2:1", 12, 5)])
def test_policies_never_beat_the_exact_bound(cfg, ratio, n, seed):
    w = case.generate(cfg, ratio, n=n, seed=seed)
    s, c = sim.simulate(w, "slurm"), sim.simulate(w, "case")
    # 2 s: the properties hold for a time-limited answer too (one case, D 1:0 n = 8, is not proven in 5 s)
    r = solve_optimal(w, time_limit=2, workers=1, hint=s)
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert check(w, r.schedule) == []
    assert r.lower_bound <= r.objective + 1e-9
    assert r.objective <= s.makespan + 1e-6          # the hint (Slurm's trace) is feasible
    for t in (s, c):
        assert t.makespan >= r.lower_bound - 1e-6
        if r.status is Status.OPTIMAL:
            assert t.makespan >= r.objective - 1e-6
    rs = solve_optimal(w, time_limit=2, workers=1, rules="slurm", hint=s)
    assert s.makespan >= rs.lower_bound - 1e-6
    # Slurm's rules are a restriction of CASE's: its optimum cannot be lower
    assert rs.objective >= r.lower_bound - 1e-6
    if ratio == "1:0" and r.status is Status.OPTIMAL and rs.status is Status.OPTIMAL:
        assert rs.objective == pytest.approx(r.objective)  # every job exclusive: the same problem


def test_off_grid_data_keep_a_valid_bound():
    # times and memory on no power-of-ten grid: two rounded models, a relaxation and a restriction
    w = case.generate("A", "1:2", n=8, seed=6)
    jobs = tuple(dataclasses.replace(j, tasks=tuple(dataclasses.replace(t, duration=t.duration * (1 + 2 ** 0.5 * 1e-4),
                                                                        memory_gb=t.memory_gb - 0.00042 * 2 ** 0.5)
                                                    for t in j.tasks), footprint_gb=0.0)
                 for j in w.jobs)
    w2 = dataclasses.replace(w, jobs=jobs)
    r = solve_optimal(w2, time_limit=6, workers=1)
    assert r.info["exact_grid"] is False
    assert check(w2, r.schedule) == []
    assert r.lower_bound <= r.objective
    for method in sim.METHODS.values():
        assert method(w2).makespan >= r.lower_bound - 1e-6


def test_bad_arguments():
    w = hand_example()
    with pytest.raises(ValueError, match="cpsat"):
        solve_optimal(w, backend="highs")
    with pytest.raises(ValueError, match="rules"):
        solve_optimal(w, rules="fifo")
