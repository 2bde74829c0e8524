"""Algorithm 1 of the co-scheduling paper: configuration search, Edmonds, split, baselines, C = 3."""

import importlib.util
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from heuristics import pairing as H
from instances import pairing as P

# the test-only reference search (plain loops), tests/pairing_reference.py
_spec = importlib.util.spec_from_file_location("pairing_reference",
                                               Path(__file__).parents[1] / "pairing_reference.py")
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)
plain_search = _reference.plain_search


def _brute(costs, C=2):
    """Optimal total by enumerating every partition into sets of <= C jobs."""
    W = costs.W

    def rec(left):
        if not left:
            return 0.0
        first, rest = left[0], left[1:]
        best = math.inf
        for k in range(0, min(C - 1, len(rest)) + 1):
            for comb in itertools.combinations(rest, k):
                t = costs.set_time((first, *comb))
                if math.isfinite(t):
                    best = min(best, t + rec([x for x in rest if x not in comb]))
        return best

    return rec(list(range(W)))


# ------------------------------------------------------ configuration search

@pytest.mark.parametrize("W, p_total, budget", [(5, 350, "equal"), (4, 400, "at_most"),
                                                (6, 400, "equal")])
def test_vectorised_search_equals_plain_loop(W, p_total, budget):
    prob = P.PairingProblem(P.generate(W, seed=W), P.ConfigSpace(p_total=p_total, budget=budget))
    fast, slow = H.search(prob), plain_search(prob)
    np.testing.assert_allclose(fast.solo, slow.solo, rtol=1e-12)
    np.testing.assert_allclose(fast.corun, slow.corun, rtol=1e-12)
    assert fast.solo_config == slow.solo_config
    np.testing.assert_array_equal(fast.corun_k, slow.corun_k)


def test_vectorised_search_equals_plain_loop_with_a_table_model(tmp_path):
    apps = {a: P.Job(a, a, **P.APPS[a]) for a in ("gaussian", "lud", "hotspot")}
    space = P.ConfigSpace(p_total=350)
    path = str(tmp_path / "t.csv")
    P.TableModel.from_model(P.AnalyticModel(), apps, space).to_csv(path)
    prob = P.PairingProblem(P.generate(6, seed=1, apps=list(apps)), space,
                            P.TableModel.from_csv(path))
    fast, slow = H.search(prob), plain_search(prob)
    np.testing.assert_allclose(fast.corun, slow.corun, rtol=1e-12)
    np.testing.assert_array_equal(fast.corun_k, slow.corun_k)
    assert P.check(prob, H.algorithm1(prob)) == []


def test_missing_measurement_stops_the_search(tmp_path):
    apps = {a: P.Job(a, a, **P.APPS[a]) for a in ("gaussian", "lud")}
    space = P.ConfigSpace(p_total=350)
    path = str(tmp_path / "solo_only.csv")
    P.TableModel.from_model(P.AnalyticModel(), apps, space, sizes=(1,)).to_csv(path)
    prob = P.PairingProblem(P.generate(3, seed=0, apps=list(apps)), space,
                            P.TableModel.from_csv(path))
    with pytest.raises(P.InstanceError, match="no measurement for .* beside"):
        H.search(prob)


def test_best_pair_configuration_is_returned_and_recomputes():
    prob = P.PairingProblem(P.job_mix(2))
    c = H.search(prob)
    for i, j in itertools.combinations(range(prob.W), 2):
        cfg = c.pair_config(j, i)   # listed as (j, i)
        t = P.set_time(prob, [prob.jobs[j], prob.jobs[i]], cfg)
        assert t == pytest.approx(c.corun[i, j], rel=1e-12)


# ------------------------------------------------------------- matching ---

@pytest.mark.parametrize("W", [2, 3, 4, 5, 7, 8, 9, 10])
@pytest.mark.parametrize("seed", range(4))
def test_edmonds_equals_brute_force_on_random_weights(W, seed):
    q = P.WeightedQueue.random(W, seed=seed)
    costs = H.costs_of(q)
    best = _brute(costs)
    for method in ("perfect", "pruned"):
        plan = H.algorithm1(q, method=method)
        assert plan.total_time == pytest.approx(best, abs=W * 1e-6)
        assert P.check(q, plan) == []


@pytest.mark.parametrize("W", [7, 13, 25, 41])
def test_pruned_matching_equals_networkx_on_the_complete_graph(W):
    for seed in range(3):
        prob = P.PairingProblem(P.generate(W, seed=seed), P.ConfigSpace(p_total=350 + 50 * (seed % 2)))
        costs = H.search(prob)
        a = H.algorithm1(prob, method="perfect", costs=costs)
        b = H.algorithm1(prob, method="pruned", costs=costs)
        assert a.total_time == pytest.approx(b.total_time, abs=W * 1e-6)
        assert P.check(prob, b) == []


@pytest.mark.parametrize("method", ["perfect", "pruned"])
def test_odd_window_leaves_exactly_the_right_job_alone(method):
    # Job 2 pairs badly with everyone; 0-1 and 3-4 pair well. W = 5 is odd.
    solo = np.array([4.0, 4.0, 5.0, 3.0, 3.0])
    pair = np.full((5, 5), 20.0)
    pair[0, 1] = pair[1, 0] = 5.0
    pair[3, 4] = pair[4, 3] = 4.0
    np.fill_diagonal(pair, np.inf)
    q = P.WeightedQueue(solo, pair)
    plan = H.algorithm1(q, method=method)
    assert plan.pairs() == [("j0", "j1"), ("j2",), ("j3", "j4")]
    assert plan.total_time == pytest.approx(14.0)
    assert P.check(q, plan) == []


def test_window_of_one_job():
    prob = P.PairingProblem(P.generate(1, seed=0))
    plan = H.algorithm1(prob)
    assert len(plan.sets) == 1 and P.check(prob, plan) == []


def test_pairs_that_do_not_pay_are_split_into_solo_runs():
    # Algorithm 1, lines 19-31: every co-run is slower than time sharing.
    W = 6
    solo = np.arange(1.0, W + 1)
    pair = solo[:, None] + solo[None, :] + 1.0
    np.fill_diagonal(pair, np.inf)
    q = P.WeightedQueue(solo, pair)
    for method in ("perfect", "pruned"):
        plan = H.algorithm1(q, method=method)
        assert all(len(s.jobs) == 1 for s in plan.sets)
        assert plan.total_time == pytest.approx(solo.sum())


def test_split_keeps_the_solo_configurations_of_the_pair():
    prob = P.PairingProblem(P.job_mix(3))
    costs = H.search(prob)
    costs.corun[:] = np.inf       # forbid every co-run: all jobs must run alone
    plan = H.algorithm1(prob, costs=costs)
    assert [len(s.jobs) for s in plan.sets] == [1] * prob.W
    assert P.check(prob, plan) == []
    assert plan.total_time == pytest.approx(H.time_sharing(prob, "optimal").total_time)


# ------------------------------------------------------------ baselines ---

@pytest.mark.parametrize("mix", [1, 2, 3])
@pytest.mark.parametrize("p_total", [350, 400])
def test_policies_are_ordered_on_the_table6_mixes(mix, p_total):
    prob = P.PairingProblem(P.job_mix(mix), P.ConfigSpace(p_total=p_total))
    naive = H.time_sharing(prob, "naive")
    opt = H.time_sharing(prob, "optimal")
    co = H.algorithm1(prob)
    for plan in (naive, opt, co):
        assert P.check(prob, plan) == []
    assert co.total_time <= opt.total_time + 1e-9 <= naive.total_time + 2e-9
    assert all(s.config.cpu_cap == s.config.gpu_cap == p_total / 2 for s in naive.sets)


def test_bad_policy_names():
    prob = P.PairingProblem(P.job_mix(1))
    with pytest.raises(ValueError):
        H.time_sharing(prob, "even")
    with pytest.raises(ValueError):
        H.edmonds(np.zeros((2, 2)), np.ones(2), method="blossom")


# ---------------------------------------------------------------- C = 3 ---

@pytest.mark.parametrize("seed", range(4))
def test_local_search_for_triples_is_feasible_and_between_bounds(seed):
    q = P.WeightedQueue.random(7, seed=seed, concurrency=3)
    costs = H.costs_of(q)
    best3 = _brute(costs, C=3)
    plan = H.local_search(q, costs=costs)
    assert P.check(q, plan) == []
    assert best3 - 1e-9 <= plan.total_time <= H.algorithm1(q, costs=costs).total_time + 1e-9
    g = H.greedy(q, costs=costs)
    assert P.check(q, g) == [] and g.total_time >= best3 - 1e-9


def test_triple_costs_match_plain_evaluation():
    prob = P.PairingProblem(P.generate(5, seed=2), concurrency=3)
    times, cfgs = H.triple_costs(prob)
    assert len(times) == 10
    for t, val in list(times.items())[:2]:
        members = [prob.jobs[i] for i in t]
        assert P.set_time(prob, members, cfgs[t]) == pytest.approx(val, rel=1e-12)
        brute = min(P.set_time(prob, members, c) for c in prob.space.corun_configs(3))
        assert brute == pytest.approx(val, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("W", [60, 101, 150])
@pytest.mark.parametrize("seed", range(3))
def test_pruned_matching_equals_networkx_on_large_windows(W, seed):
    prob = P.PairingProblem(P.generate(W, seed=seed), P.ConfigSpace(p_total=(350, 400)[seed % 2]))
    costs = H.search(prob)
    a = H.algorithm1(prob, method="perfect", costs=costs)
    b = H.algorithm1(prob, method="pruned", costs=costs)
    assert a.total_time == pytest.approx(b.total_time, abs=W * 1e-6)
    q = P.WeightedQueue.random(W, seed=seed)
    assert H.algorithm1(q, method="perfect").total_time == pytest.approx(
        H.algorithm1(q, method="pruned").total_time, abs=W * 1e-6)


@pytest.mark.parametrize("p_total", [350, 400])
def test_shipped_sample_table_reproduces_the_analytic_plan(p_total):
    space = P.ConfigSpace(p_total=p_total)
    prob_t = P.PairingProblem(P.job_mix(1), space, P.TableModel.from_csv(P.SAMPLE_TABLE))
    prob_a = P.PairingProblem(P.job_mix(1), space)
    a, t = H.algorithm1(prob_a), H.algorithm1(prob_t)
    assert P.check(prob_t, t) == []
    assert t.pairs() == a.pairs()
    assert t.total_time == pytest.approx(a.total_time, rel=1e-12)


@pytest.mark.parametrize("p_total", [300, 350, 400, 450])
def test_equal_and_at_most_budgets_give_the_same_optimum_for_the_analytic_model(p_total):
    # The analytic slowdown never grows with a cap and every grid pair under
    # P_total is dominated by one on the budget line, so the two readings of
    # Table 4 (Sec. 3.2 "<=" vs Sec. 5.1.2's measured "=") agree here.
    jobs = P.generate(9, seed=p_total)
    eq = H.algorithm1(P.PairingProblem(jobs, P.ConfigSpace(p_total=p_total)))
    le = H.algorithm1(P.PairingProblem(jobs, P.ConfigSpace(p_total=p_total, budget="at_most")))
    assert eq.total_time == pytest.approx(le.total_time, rel=1e-12)
