"""The compiled grid network of one machine (bounds.hetero_dp) against the numpy network and brute force."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import hetero as hb
from bounds.hetero_dp import Grid, Successive
from bounds.hetero_ti import INF, Network, tardiness_costs
from milp.hetero_modifiers import ModifierSearch


_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)
brute = _oracle.brute


small = _oracle.small_jobs()


@settings(max_examples=60, deadline=None)
@given(small, st.sampled_from([0.0, 3.0, 17.5]))
def test_the_two_oracles_agree(data, start):
    # brute force hands instances of more than 7 jobs to the subset DP: the two agree where both run
    p, w, d = data
    assert _oracle.by_subsets(p, w, d, start) == pytest.approx(brute(p, w, d, start))


@settings(max_examples=80, deadline=None)
@given(small, st.integers(0, 10 ** 6))
def test_grid_equals_the_numpy_network_and_stays_below_the_optimum(data, seed):
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    rng = np.random.default_rng(seed)
    cost = tardiness_costs(p, w, d)
    net, grid = Network(p, cost, weights=w), Grid(p, cost, weights=w)
    for _ in range(3):
        mu = rng.normal(0, 5, len(p))
        a, b = net.forward(mu), grid.forward(mu)
        assert b.value == pytest.approx(a.value) or a.value == b.value == INF
        assert b.bound <= opt + 1e-9
        bw = grid.backward(mu)
        assert bw.value == pytest.approx(b.value) or bw.value == b.value == INF
        path = grid.path(b)
        assert sum(cost[t, j] - mu[j] for j, t in path) == pytest.approx(b.value)
        assert [t for _, t in path] == list(np.cumsum([p[j] for j, _ in path]))
        # the cheap first-stage relaxation is weaker and still a bound
        s = Successive(grid).forward(mu)
        assert s.bound <= b.bound + 1e-9
        sp = Successive(grid).path(s)
        assert sum(cost[t, j] - mu[j] for j, t in sp) == pytest.approx(s.value)
    # elimination at any multipliers keeps an optimal schedule when the threshold is the optimum
    mu = rng.normal(0, 3, len(p))
    grid.eliminate(mu, opt + 0.5)
    net.eliminate(mu, opt + 0.5)
    assert grid.forward(np.zeros(len(p))).value <= opt + 1e-9
    assert grid.forward(mu).value == pytest.approx(net.forward(mu).value)
    # elimination keeps relaxed paths no dearer than the threshold and never lowers the relaxation
    low = Grid(p, cost, weights=w)
    before = low.forward(mu).bound
    low.eliminate(mu, opt - 0.5)
    after = low.forward(mu).bound
    assert after == INF or before - 1e-9 <= after <= opt - 0.5 + 1e-9


@settings(max_examples=60, deadline=None)
@given(small, st.integers(0, 10 ** 6), st.integers(0, 3))
def test_two_stage_bound_valid_with_any_incumbent(data, seed, above):
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    ub = opt + above
    order = list(np.random.default_rng(seed).permutation(len(p)))
    grid = Grid(p, tardiness_costs(p, w, d), weights=w, max_cost=ub - 0.5)
    r = hb.relax_grid(grid, float(ub), order, max_iter=40)
    assert r.bound <= opt + 1e-9
    if above == 0 and r.proved:
        assert r.bound == pytest.approx(opt)


@settings(max_examples=60, deadline=None)
@given(small, st.integers(0, 10 ** 6))
def test_modifier_passes_bound_and_with_every_job_solve(data, seed):
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    rng = np.random.default_rng(seed)
    mu = rng.normal(0, 4, len(p))
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    search = ModifierSearch(grid, mu, opt + 0.5)
    order = rng.permutation(len(p))
    search.add(order[:len(p) // 2])
    for out in (search.backward(), search.forward()):
        assert out.bound <= opt + 1e-9
    search.add(order)
    out = search.backward()
    assert out.bound == pytest.approx(opt)
    assert sorted(j for j, _ in out.path) == list(range(len(p)))
    out = search.forward()
    assert out.bound == pytest.approx(opt)
    assert sorted(j for j, _ in out.path) == list(range(len(p)))
    cost = tardiness_costs(p, w, d)
    assert sum(cost[t, j] for j, t in out.path) == pytest.approx(opt)


def test_small_label_arrays_grow_and_give_the_same_answer():
    # a pass that outgrows its first label arrays and hash tables resumes where it stopped
    from milp import hetero_modifiers as hm

    rng = np.random.default_rng(7)
    p, w, d = rng.integers(1, 10, 9), rng.integers(1, 6, 9), rng.integers(0, 30, 9)
    opt = brute(p, w, d)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    search = hm.ModifierSearch(grid, np.zeros(9), opt + 0.5)
    search.add(range(9))
    old = hm._Arrays.CAP, hm._Arrays.SLOTS
    hm._Arrays.CAP, hm._Arrays.SLOTS = 4, 2
    try:
        out = search.forward()
    finally:
        hm._Arrays.CAP, hm._Arrays.SLOTS = old
    assert not out.aborted and out.bound == pytest.approx(opt)


def test_label_limit_aborts_the_pass():
    rng = np.random.default_rng(8)
    p, w, d = rng.integers(1, 10, 9), rng.integers(1, 6, 9), rng.integers(0, 30, 9)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    search = ModifierSearch(grid, np.zeros(9), 1e9)
    search.add(range(9))
    out = search.forward(max_labels=10)
    assert out.aborted and out.bound == -INF


_first_optimal = _oracle.first_optimal


tiny = st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 4), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.lists(st.integers(0, 16), min_size=n, max_size=n)))


@settings(max_examples=120, deadline=None)
@given(tiny)
def test_precedences_windows_and_three_job_rule_keep_the_first_optimal_schedule(data):
    _check_first_optimal_kept(data, tail=False)


@settings(max_examples=120, deadline=None)
@given(tiny)
def test_on_time_tail_with_its_rank_keeps_the_first_optimal_schedule(data):
    # the tail's pairs (every other job before it, the tail in rank order) and the rank that puts it last must
    # keep the same schedule as the adjacency, three-job and precedence rules
    _check_first_optimal_kept(data, tail=True)


def test_on_time_tail_cascades_and_gives_pairs_only_with_its_rank():
    from bounds.hetero_dp import on_time_tail, tail_rank, tardiness_precedences

    # P = 12: jobs 0 (d = P) and 3 (w = 0) are on time anywhere; then job 1 (d 9 >= 12 - 4), then job 2
    # (d 6 >= 8 - 2); job 4 would be late last (d 1 < 6 - 4)
    p, w, d = np.array([3, 2, 4, 1, 2]), np.array([1, 1, 1, 0, 3]), np.array([12, 9, 6, 0, 1])
    assert on_time_tail(p, w, d).tolist() == [1, 2, 3, 1, 0]
    rank = tail_rank(p, w, d)
    assert rank.tolist() == [3, 2, 1, 4, 0]
    prec = tardiness_precedences(p, w, d, rank)
    assert prec[4, [0, 1, 2, 3]].all() and prec[2, [0, 1, 3]].all() and prec[1, [0, 3]].all() and prec[0, 3]
    seq, _, _ = _first_optimal(p, w, d, rank)
    assert list(seq) == [4, 2, 1, 0, 3]
    # a rank that does not put the tail last: no tail pairs (job 4 before job 0 is not implied by the other rule)
    assert not tardiness_precedences(p, w, d, np.arange(5))[4, 0]


def _check_first_optimal_kept(data, tail: bool):
    # ties are frequent (small integers, zero weights): every rule must keep the one schedule that comes first
    # in the tie-break order among the optimal ones, arc by arc
    from bounds.hetero_dp import tail_rank, tardiness_precedences

    p, w, d = (np.array(x) for x in data)
    grid = Grid(p, tardiness_costs(p, w, d), rank=tail_rank(p, w, d) if tail else None, weights=w)
    seq, C, opt = _first_optimal(p, w, d, grid.rank)
    prec = tardiness_precedences(p, w, d, grid.rank)
    _oracle.assert_pairs_keep(grid, prec, seq, C, opt)
    # fewer modifiers, any multipliers: still a lower bound, in both directions
    rng = np.random.default_rng(len(p) * 1000 + opt)
    search = ModifierSearch(grid, rng.normal(0, 4, len(p)), INF, prec=prec)
    search.add(rng.permutation(len(p))[:rng.integers(0, len(p) + 1)])
    assert search.forward().bound <= opt + 1e-6
    assert search.backward().bound <= opt + 1e-6


def test_three_job_rule_clears_arcs_and_keeps_the_bound_valid():
    rng = np.random.default_rng(5)
    cleared = 0
    for _ in range(15):
        n = 6
        p, w, d = rng.integers(1, 8, n), rng.integers(1, 6, n), rng.integers(0, 25, n)
        opt = brute(p, w, d)
        grid = Grid(p, tardiness_costs(p, w, d), weights=w)
        before = grid.arcs()
        cleared += grid.dominate3()
        assert grid.arcs() <= before
        mu = rng.normal(0, 5, n)
        assert grid.forward(mu).bound <= opt + 1e-6
    assert cleared > 0
