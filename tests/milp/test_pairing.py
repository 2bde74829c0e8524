"""Exact references of the co-scheduling paper (set partitioning, CP-SAT and Pyomo + HiGHS) vs Edmonds."""

import pytest

from heuristics import pairing as H
from instances import pairing as P
from instances.errors import OptionError
from milp import Status, solve_optimal
from milp.pairing import solve


def _assert_all_equal(problem, W, costs=None):
    costs = costs if costs is not None else H.costs_of(problem, triples=False)
    edm = H.algorithm1(problem, costs=costs)
    assert P.check(problem, edm) == []
    literal = H.algorithm1(problem, costs=costs, method="perfect")   # line 17 as written
    assert literal.total_time == pytest.approx(edm.total_time, abs=W * 1e-6)
    for backend in ("cpsat", "highs"):
        res = solve(problem, backend=backend, costs=costs, concurrency=2, time_limit=60)
        assert res.status is Status.OPTIMAL, backend
        assert P.check(problem, res.schedule) == []
        # Weights are integers of 1e-6 s in networkx / CP-SAT: W/2 roundings at most.
        assert res.objective == pytest.approx(edm.total_time, abs=W * 1e-6), backend
        assert res.lower_bound <= res.objective + 1e-9


@pytest.mark.parametrize("W", [2, 3, 6, 11, 16, 30])
@pytest.mark.parametrize("seed", [0, 1])
def test_edmonds_equals_both_exact_models_on_random_weights(W, seed):
    _assert_all_equal(P.WeightedQueue.random(W, seed=seed), W)


@pytest.mark.parametrize("W, p_total", [(5, 350), (10, 400), (17, 350), (30, 400)])
def test_edmonds_equals_both_exact_models_on_generated_queues(W, p_total):
    prob = P.PairingProblem(P.generate(W, seed=W), P.ConfigSpace(p_total=p_total))
    _assert_all_equal(prob, W)


@pytest.mark.slow
@pytest.mark.parametrize("W", range(2, 31))
@pytest.mark.parametrize("seed", range(5))
def test_edmonds_equals_both_exact_models_sweep(W, seed):
    _assert_all_equal(P.WeightedQueue.random(W, seed=100 + seed), W)
    prob = P.PairingProblem(P.generate(W, seed=200 + seed),
                            P.ConfigSpace(p_total=(350, 400)[seed % 2],
                                          budget=("equal", "at_most")[seed % 2]))
    _assert_all_equal(prob, W)


@pytest.mark.parametrize("mix", [1, 2, 3])
def test_table6_mixes_through_solve_optimal(mix):
    prob = P.PairingProblem(P.job_mix(mix), P.ConfigSpace(p_total=400))
    res = solve_optimal(prob, backend="highs")
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(H.algorithm1(prob).total_time, abs=1e-5)


@pytest.mark.parametrize("W", [4, 6, 7, 9])
def test_triples_exact_models_agree_and_bound_the_heuristics(W):
    q = P.WeightedQueue.random(W, seed=W, concurrency=3)
    costs = H.costs_of(q)
    a = solve(q, backend="cpsat", costs=costs)
    b = solve(q, backend="highs", costs=costs)
    assert a.status is b.status is Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective, abs=W * 1e-6)
    assert P.check(q, a.schedule) == [] and P.check(q, b.schedule) == []
    ls = H.local_search(q, costs=costs).total_time
    c2 = H.algorithm1(q, costs=costs).total_time
    assert a.objective - 1e-5 <= ls <= c2 + 1e-9


def test_triples_on_a_generated_queue():
    prob = P.PairingProblem(P.generate(7, seed=3), P.ConfigSpace(p_total=350), concurrency=3)
    costs = H.costs_of(prob)
    res = solve_optimal(prob, backend="cpsat", costs=costs)
    assert res.status is Status.OPTIMAL
    assert P.check(prob, res.schedule) == []
    assert res.objective <= H.algorithm1(prob, costs=costs).total_time + 1e-6
    assert any(len(s.jobs) <= 3 for s in res.schedule.sets)


def test_concurrency_one_is_time_sharing_with_optimal_caps():
    prob = P.PairingProblem(P.job_mix(2))
    res = solve(prob, backend="cpsat", concurrency=1)
    assert res.objective == pytest.approx(H.time_sharing(prob, "optimal").total_time)


def test_bad_backend_and_options():
    q = P.WeightedQueue.random(4, seed=0)
    with pytest.raises(OptionError, match="backend"):
        solve(q, backend="gurobi")
    with pytest.raises(OptionError, match="unknown option"):
        solve(q, reconfiguration=True)
