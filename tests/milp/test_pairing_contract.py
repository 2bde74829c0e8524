"""The exact-result contract for the pairing models (CP-SAT and HiGHS), on random and scaled windows."""

import math
import time

import numpy as np
import pyomo.contrib.appsi.solvers.highs  # noqa: F401  imports are not part of a solve's budget
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import pairing as H
from instances import pairing as P
from instances.errors import InstanceError, OptionError
from milp import TOLERANCE, Status, solve_optimal
from milp.pairing import solve

BACKENDS = ("cpsat", "highs")


def scaled(q: P.WeightedQueue, factors: np.ndarray) -> P.WeightedQueue:
    """The queue with job i's times multiplied by factors[i] (a set by the largest of its jobs')."""
    f = np.asarray(factors, float)
    triple = None if q.triple is None else {t: c * float(f[list(t)].max()) for t, c in q.triple.items()}
    return P.WeightedQueue(q.solo * f, q.pair * np.maximum.outer(f, f), triple, q.concurrency)


SCALES = {"unit": lambda W: np.ones(W), "tiny": lambda W: np.full(W, 1e-6), "huge": lambda W: np.full(W, 1e6),
          "mixed": lambda W: np.where(np.arange(W) % 2 == 0, 1e-6, 1e6)}


def assert_contract(problem, r):
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert P.check(problem, r.schedule) == []
    assert r.objective == r.schedule.total_time
    assert r.lower_bound <= r.objective
    if r.status is Status.OPTIMAL:
        assert r.gap <= TOLERANCE


@settings(max_examples=12)
@given(W=st.integers(1, 11), seed=st.integers(0, 10**6), C=st.sampled_from([1, 2, 3]),
       scale=st.sampled_from(sorted(SCALES)))
def test_optimal_means_within_tolerance_and_the_backends_agree(W, seed, C, scale):
    q = scaled(P.WeightedQueue.random(W, seed=seed, concurrency=3), SCALES[scale](W))
    q = P.WeightedQueue(q.solo, q.pair, q.triple, C)
    results = [solve(q, backend=b, time_limit=30) for b in BACKENDS]
    for r in results:
        assert_contract(q, r)
        assert r.status is Status.OPTIMAL      # small windows: both prove the optimum
    a, b = (r.objective for r in results)
    assert abs(a - b) <= TOLERANCE * max(a, b)
    if C == 2:   # Edmonds' matching is exact for C = 2, at any time scale
        assert abs(H.algorithm1(q).total_time - a) <= TOLERANCE * a


@pytest.mark.parametrize("scale", sorted(SCALES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_and_huge_set_times_regression(scale, backend):
    # Before the data-chosen resolution, CP-SAT rounded 1e-6 s set times to whole microseconds
    # and called a plan 0.02 % above the optimum OPTIMAL (gap 18 %); HiGHS's absolute gap did the same.
    q = scaled(P.WeightedQueue.random(12, seed=3), SCALES[scale](12))
    r = solve(q, backend=backend, time_limit=30)
    assert_contract(q, r)
    assert r.status is Status.OPTIMAL
    exact = H.algorithm1(q, method="perfect").total_time
    assert abs(r.objective - exact) <= TOLERANCE * exact


def test_tiny_job_times_on_a_generated_problem():
    jobs = [P.Job(j.name, j.app, j.solo_time * (1e-6 if k % 2 else 1e6)) for k, j in enumerate(P.generate(8, seed=4))]
    prob = P.PairingProblem(tuple(jobs), P.ConfigSpace(p_total=350))
    for backend in BACKENDS:
        r = solve(prob, backend=backend, time_limit=30)
        assert_contract(prob, r)
        assert r.status is Status.OPTIMAL


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("limit", [1e-3, 0.3])
def test_time_limited_solve_returns_the_warm_start_or_better_on_time(backend, limit):
    q = P.WeightedQueue.random(40, seed=1, concurrency=3)
    solve(P.WeightedQueue.random(3, seed=0), backend=backend)   # imports are not part of the budget
    t0 = time.perf_counter()
    r = solve(q, backend=backend, time_limit=limit)
    wall = time.perf_counter() - t0
    assert wall <= limit + max(1.0, 0.1 * limit)
    assert_contract(q, r)
    assert r.status is Status.FEASIBLE
    assert r.objective <= H.algorithm1(q).total_time + 1e-9


def test_without_a_warm_start_an_interrupted_solve_may_know_nothing():
    q = P.WeightedQueue.random(40, seed=1, concurrency=3)
    r = solve(q, backend="cpsat", time_limit=1e-3, hint=False)
    assert r.status in (Status.UNKNOWN, Status.FEASIBLE)
    assert (r.status is Status.UNKNOWN) == (r.schedule is None)
    assert r.lower_bound is not None


BAD = [({"time_limit": -1}, "time_limit"), ({"time_limit": 0}, "time_limit"), ({"time_limit": math.nan}, "time_limit"),
       ({"time_limit": math.inf}, "time_limit"), ({"time_limit": True}, "time_limit"),
       ({"time_limit": "5"}, "time_limit"), ({"workers": 0}, "workers"), ({"workers": -3}, "workers"),
       ({"workers": 1.5}, "workers"), ({"workers": True}, "workers"), ({"hint": "no"}, "hint"),
       ({"hint": 1}, "hint"), ({"log": None}, "log"), ({"concurrency": 4}, "concurrency"),
       ({"concurrency": True}, "concurrency"), ({"reconfiguration": False}, "unknown option")]


@pytest.mark.parametrize("options, word", BAD)
def test_bad_options_raise_one_line_option_error_alike_for_every_backend(options, word):
    q = P.WeightedQueue.random(4, seed=0)
    messages = set()
    for backend in BACKENDS:
        with pytest.raises(OptionError, match=word) as exc:
            solve_optimal(q, backend=backend, **options)
        messages.add(str(exc.value))
    assert len(messages) == 1 and "\n" not in messages.pop()


def test_unknown_backend_and_foreign_costs():
    q = P.WeightedQueue.random(4, seed=0)
    with pytest.raises(OptionError, match="backend"):
        solve(q, backend="gurobi")
    with pytest.raises(OptionError, match="costs"):
        solve(q, costs=P.costs_of(P.WeightedQueue.random(5, seed=0)))


def test_an_empty_window_is_a_clear_instance_error():
    # Neither problem type admits W = 0, so "OPTIMAL 0" cannot be asked for; the error says why.
    with pytest.raises(InstanceError, match="no jobs"):
        P.PairingProblem(())
    with pytest.raises(InstanceError, match="at least one solo time"):
        P.WeightedQueue(np.zeros(0), np.zeros((0, 0)))


@pytest.mark.slow
@settings(max_examples=60)
@given(W=st.integers(1, 16), seed=st.integers(0, 10**6), C=st.sampled_from([2, 3]),
       scale=st.sampled_from(sorted(SCALES)))
def test_contract_sweep(W, seed, C, scale):
    test_optimal_means_within_tolerance_and_the_backends_agree.hypothesis.inner_test(W, seed, C, scale)
