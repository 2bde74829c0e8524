"""The exact-result contract for the real-time partitioning models (CP-SAT, HiGHS, enumeration)."""

import dataclasses
import math
import time

import pyomo.contrib.appsi.solvers.highs  # noqa: F401  imports are not part of a solve's budget
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import realtime as h
from instances import realtime as rt
from instances.errors import InstanceError, OptionError
from milp import TOLERANCE, Status, solve_optimal
from milp import realtime as mr
from milp.realtime import solve

BACKENDS = ("cpsat", "highs", "enumerate")


def scaled(p: rt.RealtimeProblem, factor) -> rt.RealtimeProblem:
    """Task i's times all multiplied by factor(i): its densities do not change."""
    return rt.RealtimeProblem(tuple(dataclasses.replace(
        t, period=t.period * factor(i), deadline=t.deadline * factor(i), a_n=t.a_n * factor(i),
        b_n=t.b_n * factor(i), a_c=t.a_c * factor(i), b_c=t.b_c * factor(i)) for i, t in enumerate(p.tasks)), p.sms)


SCALES = {"unit": lambda i: 1.0, "tiny": lambda i: 1e-6, "huge": lambda i: 1e6,
          "mixed": lambda i: 1e-6 if i % 2 else 1e6}


def assert_contract(problem, r, test="density"):
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert rt.check(problem, r.schedule, test="density" if test == "density" else "edf") == []
    assert r.objective == r.schedule.total_sms
    assert r.lower_bound <= r.objective
    if r.status is Status.OPTIMAL:
        assert r.gap <= TOLERANCE


def test_the_tolerance_is_the_checkers():
    assert mr.REL == rt._REL


@settings(max_examples=10)
@given(n=st.integers(1, 7), util=st.floats(0.5, 6.0), seed=st.integers(0, 10**6),
       scale=st.sampled_from(sorted(SCALES)))
def test_optimal_means_proven_and_the_backends_agree(n, util, seed, scale):
    p = scaled(rt.generate(n=n, utilization=min(util, 0.8 * n), sms=68, seed=seed), SCALES[scale])
    results = [solve(p, backend=b, time_limit=30) for b in BACKENDS]
    statuses = {r.status for r in results}
    if statuses == {Status.INFEASIBLE}:
        return
    for r in results:
        assert_contract(p, r)
        assert r.status is Status.OPTIMAL
    assert len({r.objective for r in results}) == 1
    # the SMS heuristic never beats the optimum
    sol = h.METHODS["SMS_INA"](p, test="density", target=0)
    assert sol is None or sol.total_sms >= results[0].objective


def trap(fx: float = 1.0, fy: float = 1.0) -> rt.RealtimeProblem:
    """Two tasks whose union on 9 SMs has density 1 + 5e-7: at a 1e-6 coefficient scale the
    relaxation takes it (9 SMs) while the true optimum is 10."""
    X = rt.Task("X", fx, fx, "compute", 4.4999955 * fx, 0.5 * fx, 4.4999955 * fx, 0.5 * fx)
    Y = rt.Task("Y", fy, fy, "memory", 4.5e-6 * fy, 5e-7 * fy, 4.5e-6 * fy, 5e-7 * fy)
    return rt.RealtimeProblem((X, Y), sms=68)


@pytest.mark.parametrize("fx, fy", [(1, 1), (1e6, 1e-6), (1e-6, 1e6)])
@pytest.mark.parametrize("backend", BACKENDS)
def test_coefficient_rounding_regression(backend, fx, fy):
    # A fixed 1e6 scale left CP-SAT at FEASIBLE 10 with bound 9; it now re-solves at 1e9 and proves 10.
    p = trap(fx, fy)
    r = solve(p, backend=backend, time_limit=30)
    assert_contract(p, r)
    assert r.status is Status.OPTIMAL and r.objective == 10
    if backend == "cpsat":
        assert r.info["scales"] == [10**6, 10**9]


@pytest.mark.parametrize("backend, n", [("cpsat", 20), ("highs", 20), ("enumerate", 14)])
@pytest.mark.parametrize("limit", [1e-3, 0.3])
def test_time_limited_solve_returns_the_warm_start_or_better_on_time(backend, n, limit):
    p = rt.generate(n=n, utilization=0.6 * n, sms=68, seed=7)
    solve(rt.generate(n=3, utilization=1, seed=0), backend=backend)   # imports are not part of the budget
    t0 = time.perf_counter()
    r = solve(p, backend=backend, time_limit=limit)
    wall = time.perf_counter() - t0
    assert wall <= limit + max(1.0, 0.1 * limit)
    assert_contract(p, r)
    warm = h.METHODS["SMS_INA"](p, test="density", target=0)
    assert r.objective <= warm.total_sms


def test_demand_test_on_the_enumeration_backend_under_a_limit():
    p = rt.generate(n=14, utilization=8, sms=68, seed=3)
    r = solve(p, backend="enumerate", test="demand", time_limit=0.2)
    assert_contract(p, r, test="demand")


BAD = [({"time_limit": -1}, "time_limit"), ({"time_limit": 0}, "time_limit"), ({"time_limit": math.nan}, "time_limit"),
       ({"time_limit": math.inf}, "time_limit"), ({"time_limit": True}, "time_limit"),
       ({"time_limit": "5"}, "time_limit"), ({"workers": 0}, "workers"), ({"workers": -3}, "workers"),
       ({"workers": True}, "workers"), ({"hint": "no"}, "hint"), ({"capacity": 1}, "capacity"),
       ({"log": "yes"}, "log"), ({"test": "rta"}, "test"), ({"reconfiguration": False}, "unknown option")]


@pytest.mark.parametrize("options, word", BAD)
def test_bad_options_raise_one_line_option_error_alike_for_every_backend(options, word):
    p = rt.generate(n=4, utilization=2, seed=0)
    messages = set()
    for backend in BACKENDS:
        with pytest.raises(OptionError, match=word) as exc:
            solve_optimal(p, backend=backend, **options)
        messages.add(str(exc.value))
    assert len(messages) == 1 and "\n" not in messages.pop()


def test_an_empty_task_set_is_a_clear_instance_error():
    with pytest.raises(InstanceError, match="at least one task"):
        rt.RealtimeProblem((), sms=68)


def test_infeasible_is_proven_only():
    p = rt.generate(n=5, utilization=4, sms=68, seed=4)
    need = solve(p, backend="enumerate").objective
    for backend in BACKENDS:
        assert solve(rt.RealtimeProblem(p.tasks, sms=int(need) - 1), backend=backend, time_limit=20).status \
            is Status.INFEASIBLE


@pytest.mark.slow
@settings(max_examples=80)
@given(n=st.integers(1, 9), util=st.floats(0.5, 8.0), seed=st.integers(0, 10**6),
       scale=st.sampled_from(sorted(SCALES)))
def test_contract_sweep(n, util, seed, scale):
    test_optimal_means_proven_and_the_backends_agree.hypothesis.inner_test(n, util, seed, scale)
