"""The proximal bundle search of the single-machine multipliers (bounds.hetero_bundle).

Checked against independent oracles: the linear program of the path
relaxation solved by HiGHS (whose optimum the Lagrangian dual equals: the
path polytope is integral), the optimum by enumeration or subset DP, and
HiGHS's QP solver for the master problem.
"""

import importlib.util
import itertools
import time
from pathlib import Path

import highspy
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import hetero_bundle as hb
from bounds.hetero_compact import optimize_grid
from bounds.hetero_dp import Grid, Successive, tail_rank
from bounds.hetero_precedence import interchange_precedences
from bounds.hetero_subgradient import optimize as subgradient
from bounds.hetero_ti import tardiness_costs
from instances.errors import OptionError

_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)


def _path_lp(grid: Grid) -> float:
    """The LP of :class:`Successive`'s relaxation, by HiGHS: a unit flow from time 0 to ``T`` over the grid's
    live states ``(t, j)`` (job ``j`` ends at ``t``), an arc from ``(t - p_j, i)`` to ``(t, j)`` for ``i != j``,
    each job's inflow 1. Relaxing the job rows with multipliers ``mu`` leaves the shortest path, so the
    Lagrangian dual's optimum is this LP's."""
    p, cost, T, n = grid.p, grid.cost, grid.T, grid.jobs
    states = [(t, j) for t in range(1, T + 1) for j in range(n) if grid.alive[t, j] and t >= p[j]]
    index = {s: k for k, s in enumerate(states)}
    arcs = []   # (from state or None for time 0, to state)
    for (t, j) in states:
        s = t - p[j]
        if s == 0:
            arcs.append((None, (t, j)))
        else:
            arcs += [((s, i), (t, j)) for i in range(n) if i != j and (s, i) in index]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    m = len(arcs)
    h.addVars(m, np.zeros(m), np.full(m, highspy.kHighsInf))
    h.changeColsCost(m, np.arange(m, dtype=np.int32), np.array([cost[b] for _, b in arcs], dtype=float))
    into = {b: [] for b in states}
    out = {b: [] for b in states}
    start = []
    job = [[] for _ in range(n)]
    for k, (a, b) in enumerate(arcs):
        into[b].append(k)
        job[b[1]].append(k)
        (start if a is None else out[a]).append(k)

    def row(lo, hi, plus, minus=()):
        idx = np.array(list(plus) + list(minus), dtype=np.int32)
        h.addRow(lo, hi, len(idx), idx, np.array([1.0] * len(plus) + [-1.0] * len(minus)))

    row(1.0, 1.0, start)                       # one unit leaves time 0
    for b in states:
        if b[0] < T:
            row(0.0, 0.0, into[b], out[b])     # what enters a state before T leaves it
    for j in range(n):
        row(1.0, 1.0, job[j])                  # each job once
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def _instance(seed: int, n: int):
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 8, n)
    w = rng.integers(1, 6, n)
    d = rng.integers(0, int(p.sum() * 0.7) + 1, n)
    return p, w, d


def _schedule_cost(cost, p, seq) -> float:
    return float(sum(cost[t, j] for j, t in zip(seq, np.cumsum(p[list(seq)]))))


@pytest.mark.parametrize("seed", range(6))
def test_bound_reaches_the_lp_optimum_of_the_path_relaxation(seed):
    p, w, d = _instance(seed, 6)
    cost = tardiness_costs(p, w, d)
    grid = Grid(p, cost, weights=w)
    lp = _path_lp(grid)
    # an incumbent far above: the search stops at the dual optimum, not at a proof
    upper = _schedule_cost(cost, p, range(len(p))) + 1000.0
    r = hb.optimize(Successive(grid), upper, mu0=np.zeros(len(p)), eliminate_every=0, integral=False,
                    max_iter=2000)
    assert r.bound <= lp + 1e-6 * max(1.0, abs(lp))
    assert r.bound >= lp - 1e-3 * max(1.0, abs(lp))
    # and at least where a long subgradient run gets
    s = subgradient(Successive(grid), upper, mu0=np.zeros(len(p)), eliminate_every=0, integral=False,
                    max_iter=2000, restarts=3)
    assert r.bound >= s.bound - 1e-3 * max(1.0, abs(lp))
    assert r.evaluations <= 2000


@settings(max_examples=40, deadline=None)
@given(_oracle.small_jobs(min_n=2), st.integers(0, 2 ** 20), st.sampled_from([1, 8]))
def test_bound_never_exceeds_the_optimum_and_proofs_are_right(data, seed, every):
    p, w, d = (np.array(x) for x in data)
    opt = _oracle.brute(p.tolist(), w.tolist(), d.tolist())
    cost = tardiness_costs(p, w, d)
    rank = tail_rank(p, w, d)
    grid = Grid(p, cost, rank=rank, weights=w, prec=interchange_precedences(p, w, d, rank))
    seq = np.random.default_rng(seed).permutation(len(p))
    upper = _schedule_cost(cost, p, seq)
    found = []

    def improve(path):
        # a schedule of the optimal cost, once: upper drops to it, as a repaired relaxed path would
        if found:
            return None
        found.append(opt)
        return opt

    r = optimize_grid(grid, upper, method="bundle", sequence=seq, max_iter=200, eliminate_every=every,
                      improve=improve if seed % 2 else None, improve_every=5)
    assert r.network is grid
    assert r.bound <= opt + 1e-6
    assert r.upper in (upper, opt)
    if r.proved:
        assert r.upper == opt and r.bound == opt


def test_a_better_schedule_lowers_the_incumbent_and_proves_it():
    rng = np.random.default_rng(3)
    n = 12
    p, w = rng.integers(1, 15, n), rng.integers(1, 8, n)
    d = rng.integers(0, int(p.sum() * 0.6), n)
    cost = tardiness_costs(p, w, d)
    opt = _oracle.by_subsets(p.tolist(), w.tolist(), d.tolist())
    rank = tail_rank(p, w, d)
    grid = Grid(p, cost, rank=rank, weights=w, prec=interchange_precedences(p, w, d, rank))
    upper = _schedule_cost(cost, p, np.argsort(-d))
    assert upper > opt
    calls = []

    def improve(path):
        calls.append(len(path))
        return opt

    r = optimize_grid(grid, upper, method="bundle", sequence=np.argsort(d), max_iter=500, improve=improve,
                      improve_every=10)
    assert calls and r.upper == opt
    assert r.bound <= opt + 1e-6
    assert r.proved   # the grid's relaxation with eliminations at the optimum closes these small instances


def test_the_deadline_is_kept():
    rng = np.random.default_rng(9)
    n = 60
    p, w = rng.integers(1, 40, n), rng.integers(1, 10, n)
    d = rng.integers(0, int(p.sum() * 0.5), n)
    cost = tardiness_costs(p, w, d)
    grid = Grid(p, cost, weights=w)
    seq = np.argsort(d)
    upper = _schedule_cost(cost, p, seq)
    t0 = time.perf_counter()
    fw = grid.forward(np.zeros(n))
    t_pass = time.perf_counter() - t0
    budget = 30 * t_pass
    t0 = time.perf_counter()
    r = optimize_grid(grid, upper, method="bundle", sequence=seq, max_iter=10 ** 6, deadline=t0 + budget)
    spent = time.perf_counter() - t0
    assert fw.bound >= 0 and r.evaluations >= 1
    # no pass is started that would not fit (a pass may vary in length: a little slack)
    assert spent <= budget + 2 * t_pass + 0.05
    assert not r.proved or r.bound >= r.upper


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 2 ** 20), st.sampled_from([1e-3, 1.0, 50.0]))
def test_the_master_matches_highs_qp(k, n, seed, t):
    rng = np.random.default_rng(seed)
    G = rng.integers(-2, 2, size=(k, n)).astype(float)
    if k > 2:
        G[-1] = G[0]   # repeated cuts: a singular Hessian
    e = rng.random(k) * rng.choice([0.0, 1.0, 100.0])
    a = hb.dual_master(G, e, t)
    b = hb._highs_master(t * (G @ G.T), e)

    def f(x):
        return 0.5 * t * float((x @ G) @ (x @ G)) + float(x @ e)

    assert np.all(a >= 0) and abs(a.sum() - 1) < 1e-9
    assert f(a) <= f(b) + 1e-7 * max(1.0, abs(f(b)))
    # warm-started from any other weights, the same value
    c = hb.dual_master(G, e, t, start=rng.random(k))
    assert abs(f(c) - f(a)) <= 1e-7 * max(1.0, abs(f(a)))


def test_unknown_options_and_methods_are_refused():
    p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    with pytest.raises(OptionError):
        hb.optimize(Successive(grid), 20.0, [0, 1, 2], patience=3)   # a subgradient option
    with pytest.raises(OptionError):
        optimize_grid(grid, 20.0, method="level")
    with pytest.raises(OptionError):
        hb.optimize(Successive(grid), 20.0, [0, 1, 2], bundle_size=1)


def test_lp_oracle_agrees_with_the_relaxation_on_schedules():
    # the oracle's LP is a relaxation of the schedules: never above the optimum; its integral paths are the
    # relaxed paths, so at mu = 0 the shortest path is no cheaper than the LP
    for seed in range(3):
        p, w, d = _instance(seed + 10, 5)
        cost = tardiness_costs(p, w, d)
        grid = Grid(p, cost, weights=w)
        lp = _path_lp(grid)
        best = min(_schedule_cost(cost, p, s) for s in itertools.permutations(range(len(p))))
        assert lp <= best + 1e-6
        assert Successive(grid).forward(np.zeros(len(p))).bound <= lp + 1e-6
