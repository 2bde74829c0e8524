"""The live-state list of a reduced grid (bounds.hetero_compact) against the grid itself and brute force."""

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bounds.hetero_compact import Compact
from bounds.hetero_dp import Grid, tail_rank
from bounds.hetero_precedence import interchange_precedences
from bounds.hetero_subgradient import optimize
from bounds.hetero_ti import INF, tardiness_costs

_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)


# an elimination that clears arcs but no state (the list once kept them, and the passes relaxed them)
@example(([1, 7, 1, 5, 1, 1], [0, 1, 1, 1, 1, 0], [0, 13, 14, 14, 2, 0]), 4, 1.0)
@example(([1, 7, 1, 5, 1, 1], [0, 1, 1, 1, 1, 0], [0, 13, 14, 14, 2, 0]), 0, 1.0)
@settings(max_examples=50, deadline=None)
@given(_oracle.small_jobs(), st.integers(0, 10 ** 6), st.sampled_from([1.0, 1e-3]))
def test_compact_passes_equal_the_grid_and_stay_below_the_optimum(data, seed, memory):
    p, w, d = (np.array(x) for x in data)
    opt = _oracle.brute(p, w, d)
    rng = np.random.default_rng(seed)
    cost = tardiness_costs(p, w, d)
    grid = Grid(p, cost, weights=w)
    twin = copy.deepcopy(grid)
    # memory 1e-3: too little for an arc list on all but the smallest networks, so the calls go to the grid
    c = Compact(twin, arc_memory=memory)
    assert c.compact or memory < 1.0
    for _ in range(3):
        mu = rng.normal(0, 5, len(p))
        a, b = grid.forward(mu), c.forward(mu)
        assert b.value == a.value and b.last == a.last
        assert b.bound <= opt + 1e-9
        if a.value < INF:
            assert c.path(b) == grid.path(a)
        # an elimination at the optimum clears the same arcs and states in the grid and keeps an optimal schedule
        assert c.eliminate(mu, opt + 0.5) == grid.eliminate(mu, opt + 0.5)
        assert np.array_equal(twin.alive, grid.alive) and np.array_equal(twin.mask, grid.mask)
        assert c.arcs() == grid.arcs()
        assert c.forward(np.zeros(len(p))).value <= opt + 1e-9
    # and so does one below it, which may leave no path
    mu = rng.normal(0, 5, len(p))
    assert c.eliminate(mu, opt - 0.5) == grid.eliminate(mu, opt - 0.5)
    assert np.array_equal(twin.alive, grid.alive) and np.array_equal(twin.mask, grid.mask)
    assert c.arcs() == grid.arcs()
    assert c.forward(mu).value == grid.forward(mu).value


def test_an_elimination_that_clears_arcs_only_leaves_them_out_of_the_list():
    p, w, d = np.array([1, 7, 1, 5, 1, 1]), np.array([0, 1, 1, 1, 1, 0]), np.array([0, 13, 14, 14, 2, 0])
    opt = _oracle.brute(p, w, d)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    twin = copy.deepcopy(grid)
    c = Compact(twin)
    rng = np.random.default_rng(4)
    cleared_arcs_only = False
    for _ in range(3):
        mu = rng.normal(0, 5, len(p))
        a, b = grid.forward(mu), c.forward(mu)
        assert b.value == a.value and c.path(b) == grid.path(a)
        assert b.bound <= opt + 1e-9
        before = grid.arcs()
        removed = grid.eliminate(mu, opt + 0.5)
        assert c.eliminate(mu, opt + 0.5) == removed
        cleared_arcs_only |= removed == 0 and grid.arcs() < before
        assert c.compact and c.arcs() == grid.arcs() and np.array_equal(twin.mask, grid.mask)
    # the case the list must follow happened: arcs cleared while every state stayed
    assert cleared_arcs_only


def test_multiplier_search_on_the_list_is_the_grids_pass_for_pass():
    rng = np.random.default_rng(5)
    n = 14
    p = rng.integers(1, 20, n)
    w = rng.integers(1, 10, n)
    d = rng.integers(0, int(p.sum() * 0.6), n)
    cost = tardiness_costs(p, w, d)
    rank = tail_rank(p, w, d)
    prec = interchange_precedences(p, w, d, rank)
    seq = np.argsort(d, kind="stable").tolist()
    ub = float(sum(cost[t, j] for j, t in zip(seq, np.cumsum(p[seq]))))
    grid = Grid(p, cost, rank=rank, weights=w, prec=prec)
    twin = copy.deepcopy(grid)
    kw = dict(max_iter=120, patience=12, expand=1.2, restarts=2, slower=4.0, min_scale=0.01, level_gap=0.001)
    a = optimize(grid, ub, seq, **kw)
    c = Compact(twin)
    b = optimize(c, ub, seq, **kw)
    assert a.trace == b.trace and a.evaluations == b.evaluations and a.path == b.path
    assert np.array_equal(a.mu, b.mu) and a.bound == b.bound
    assert np.array_equal(twin.alive, grid.alive) and np.array_equal(twin.mask, grid.mask)
    assert grid.N < (grid.T + 1) * n   # the search eliminated, so the list was laid out again
    assert b.bound <= _oracle.by_subsets(p.tolist(), w.tolist(), d.tolist()) + 1e-6
