"""The exact-result contract for the CASE makespan model, on generated and rescaled batches."""

import dataclasses
import math
import time

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from heuristics import case as sim
from instances import case
from instances.case import Job, Slowdown, Task, Workload, custom_config
from instances.errors import InstanceError, OptionError
from milp import TOLERANCE, Status, solve_optimal
from milp.case import grid, solve


def scaled(w: Workload, factor) -> Workload:
    """Job k's durations and host phases multiplied by factor(k)."""
    jobs = tuple(dataclasses.replace(j, tasks=tuple(dataclasses.replace(t, duration=t.duration * factor(k),
                                                                        cpu=t.cpu * factor(k)) for t in j.tasks))
                 for k, j in enumerate(w.jobs))
    return dataclasses.replace(w, jobs=jobs)


SCALES = {"unit": lambda k: 1.0, "tiny": lambda k: 1e-6, "huge": lambda k: 1e6,
          "mixed": lambda k: 1e-6 if k % 2 else 1e6}


def assert_contract(w, r, rules="case"):
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert case.check(w, r.schedule) == []
    assert r.objective == r.schedule.makespan
    assert r.lower_bound <= r.objective
    if r.status is Status.OPTIMAL:
        assert r.gap <= TOLERANCE
    # the bound holds for every simulated policy (the model relaxes worker limits and slowdown)
    for name, method in sim.METHODS.items():
        if rules == "case" or name == "slurm":
            assert method(w).makespan >= r.lower_bound * (1 - 1e-12)


@settings(max_examples=8)
@given(cfg=st.sampled_from("AD"), ratio=st.sampled_from(["1:0", "1:1", "1:4", "0:1"]), n=st.integers(1, 6),
       seed=st.integers(0, 10**6), scale=st.sampled_from(sorted(SCALES)), rules=st.sampled_from(["case", "slurm"]))
def test_optimal_means_within_tolerance_and_the_bound_holds_for_every_policy(cfg, ratio, n, seed, scale, rules):
    try:
        w = scaled(case.generate(cfg, ratio, n=n, seed=seed), SCALES[scale])
    except InstanceError as exc:
        # long "huge" batches add up past what a double holds within the checker's absolute tolerance:
        # the workload refuses them (tests/instances/test_precision.py); the contract is for the rest
        assert "a double holds a time only to" in str(exc), exc
        reject()
    r = solve(w, time_limit=20, rules=rules)
    assert_contract(w, r, rules)


def hand(factor=lambda k: 1.0) -> Workload:
    """Three 4 GB tasks on two 6 GB instances (a tiny 1 GB one beside them): optimum 7, trivial bound 5."""
    cfg = custom_config("A30", [[(1, 0), (1, 1)]], name="hand")
    jobs = (Job("a", (Task(4.0, 100, 5.0 * factor(0)),), False),
            Job("b", (Task(4.0, 100, 4.0 * factor(1)),), False),
            Job("c", (Task(4.0, 100, 3.0 * factor(2)),), False),
            Job("d", (Task(1.0, 100, 2.0 * factor(3), cpu=1.0 * factor(3)),), False))
    return Workload(cfg, jobs, Slowdown(0.0, 0.1))


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_tiny_and_huge_times_regression(scale):
    # With a fixed 0.1 s grid, microsecond tasks rounded to 0 (bound) and 0.1 s (schedule): FEASIBLE
    # with a 99.98 % gap on the tiny batch; 1e6 s tasks made a 1e9-unit horizon that did not finish in 20 s.
    w = scaled(case.generate("A", "1:1", n=8, seed=2), SCALES[scale])
    r = solve(w, time_limit=30)
    assert_contract(w, r)
    assert r.status is Status.OPTIMAL


HAND_SCALES = dict(SCALES, mixed=lambda k: 1e6 if k < 3 else 1e-6)   # the tiny job beside three huge ones


@pytest.mark.parametrize("scale", sorted(HAND_SCALES))
def test_hand_batch_at_every_scale(scale):
    w = hand(HAND_SCALES[scale])
    r = solve(w, time_limit=30)
    assert_contract(w, r)
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(7.0 * HAND_SCALES[scale](0), rel=1e-9)
    assert r.info["exact_grid"] is (scale != "mixed")


def test_grid_is_chosen_from_the_data():
    assert grid(case.generate("A", "1:1", n=4, seed=0)) == (0.1, True, 1.0, True)
    tiny = grid(scaled(case.generate("A", "1:1", n=4, seed=0), SCALES["tiny"]))
    assert tiny[:2] == (1e-7, True)
    res, exact, _, _ = grid(hand(HAND_SCALES["mixed"]))   # 1e-6 s beside 5e6 s: no grid fits 2**40 units
    assert not exact and res <= 0.1 * TOLERANCE * 5e6 / 12


@pytest.mark.parametrize("limit", [1e-3, 0.3])
def test_time_limited_solve_returns_the_simulation_or_better_on_time(limit):
    w = case.generate("B", "1:2", n=24, seed=3)
    solve(case.generate("A", "1:1", n=3, seed=0), time_limit=5)   # imports are not part of the budget
    t0 = time.perf_counter()
    r = solve(w, time_limit=limit)
    wall = time.perf_counter() - t0
    assert wall <= limit + max(1.0, 0.1 * limit)
    assert_contract(w, r)
    assert r.status is Status.FEASIBLE
    assert r.objective <= min(sim.METHODS["slurm"](w).makespan, sim.METHODS["case"](w).makespan)


BAD = [({"time_limit": -1}, "time_limit"), ({"time_limit": 0}, "time_limit"), ({"time_limit": math.nan}, "time_limit"),
       ({"time_limit": math.inf}, "time_limit"), ({"time_limit": True}, "time_limit"),
       ({"time_limit": "5"}, "time_limit"), ({"workers": 0}, "workers"), ({"workers": True}, "workers"),
       ({"log": 1}, "log"), ({"rules": "fifo"}, "rules"), ({"resolution": 0}, "resolution"),
       ({"resolution": math.nan}, "resolution"), ({"hint": "slurm"}, "hint"), ({"backend": "highs"}, "backend"),
       ({"reconfiguration": False}, "unknown option")]


@pytest.mark.parametrize("options, word", BAD)
def test_bad_options_raise_one_line_option_error(options, word):
    with pytest.raises(OptionError, match=word) as exc:
        solve_optimal(hand(), **options)
    assert "\n" not in str(exc.value)


def test_an_infeasible_hint_is_refused():
    w = hand()
    bad = dataclasses.replace(sim.METHODS["case"](w), tasks=())
    with pytest.raises(OptionError, match="hint"):
        solve(w, hint=bad)


def test_an_empty_batch_is_a_clear_instance_error():
    with pytest.raises(InstanceError, match="at least one job"):
        Workload(case.config("A"), ())


@pytest.mark.slow
@settings(max_examples=40)
@given(cfg=st.sampled_from("ABD"), ratio=st.sampled_from(list(case.RATIOS)), n=st.integers(1, 9),
       seed=st.integers(0, 10**6), scale=st.sampled_from(sorted(SCALES)), rules=st.sampled_from(["case", "slurm"]))
def test_contract_sweep(cfg, ratio, n, seed, scale, rules):
    test_optimal_means_within_tolerance_and_the_bound_holds_for_every_policy.hypothesis.inner_test(
        cfg, ratio, n, seed, scale, rules)
