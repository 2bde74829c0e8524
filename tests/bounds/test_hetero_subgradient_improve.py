"""Multiplier search of the one-machine grid whose incumbent improves on the way (bounds.hetero_subgradient)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds.hetero_dp import Grid
from bounds.hetero_subgradient import TargetLevel, below_next_integer, optimize
from bounds.hetero_ti import tardiness_costs

_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)
brute = _oracle.brute

small = _oracle.small_jobs(min_n=2, min_w=1)


@settings(max_examples=60, deadline=None)
@given(small, st.integers(0, 10 ** 6), st.integers(1, 30), st.sampled_from([1, 2, 5]))
def test_a_better_incumbent_on_the_way_keeps_the_bound_valid(data, seed, above, every):
    # the search starts from a poor incumbent (optimum + above); the callback hands it the optimum after a
    # few passes: eliminations made for the old incumbent stay, the bound never passes the optimum, and a
    # proof is a proof of the new incumbent
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w, max_cost=opt + above - 0.5)
    calls = []

    def improve(path):
        calls.append(len(path))
        return float(opt) if len(calls) == 1 else None

    mu0 = np.random.default_rng(seed).normal(0, 3, len(p))
    r = optimize(grid, float(opt + above), mu0=mu0, max_iter=60, improve=improve, improve_every=every,
                 restarts=2, slower=4.0, min_scale=0.01)
    assert r.bound <= opt + 1e-9
    if calls:
        assert r.upper == opt
    if r.proved:
        assert r.bound == pytest.approx(r.upper)
    # the bound without the callback is no better than the optimum either, and the slower restarts only add passes
    plain = optimize(Grid(p, tardiness_costs(p, w, d), weights=w), float(opt + above), mu0=mu0, max_iter=60,
                     restarts=2, slower=4.0, min_scale=0.01)
    assert plain.bound <= opt + 1e-9 and plain.evaluations <= 60


def test_callback_schedule():
    # after improve_every / 5 and / 2 passes, then every improve_every passes, while no proof ends the search
    p = np.array([5, 4, 6, 3, 7, 2, 5, 4])
    w = np.array([3, 1, 4, 1, 5, 2, 6, 5])
    d = np.array([3, 5, 7, 2, 9, 4, 6, 8])
    seen = []
    grid = Grid(p, tardiness_costs(p, w, d), weights=w)
    r = optimize(grid, 1e6, mu0=np.zeros(len(p)), max_iter=120, improve=lambda path: seen.append(1),
                 improve_every=50, eliminate_every=0, integral=False)
    expect = [k for k in range(1, r.evaluations + 1) if k in (10, 25) or k % 50 == 0]
    assert len(seen) == len(expect)


MODES = [dict(level=True), dict(level_gap=0.0), dict(level_gap=0.01), dict(level=True, level_gap=0.05)]


@settings(max_examples=90, deadline=None)
@given(small, st.integers(0, 10 ** 6), st.integers(0, 30), st.integers(1, 12), st.sampled_from(MODES))
def test_the_target_level_rule_keeps_the_bound_valid(data, seed, above, patience, mode):
    # Polyak steps towards a level that moves with the bound (grows when reached, shrinks after patience passes
    # without), from the start or at restarts while the gap is wide, switching back and forth between the rules at
    # restarts: from random multipliers, a poor
    # incumbent that a better one replaces on the way, restarts; the bound never passes the brute-force optimum,
    # and a proof is one of the incumbent it ends with
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w, max_cost=opt + above - 0.5)
    mu0 = np.random.default_rng(seed).normal(0, 3, len(p))
    r = optimize(grid, float(opt + above), mu0=mu0, max_iter=80, patience=patience, restarts=2,
                 slower=4.0, min_scale=0.01, improve=lambda path: float(opt), improve_every=5, **mode)
    assert r.bound <= opt + 1e-9
    assert r.upper == opt or above == 0
    if r.proved:
        assert r.bound == pytest.approx(r.upper)


def test_the_target_level_moves_with_the_bound():
    # the level is the best bound plus delta, never above the incumbent; reaching part of delta grows it, a
    # stall of patience passes halves it, and each change sets the level from the best bound
    r = TargetLevel(patience=3, grow=2.0, reach=0.5)
    r.record(10.0, 100.0)
    assert (r.delta, r.level(100.0)) == (90.0, 100.0)
    r.record(60.0, 100.0)           # 50 >= 0.5 * 90: reached; grows, capped by the incumbent
    assert (r.best, r.delta, r.level(100.0)) == (60.0, 40.0, 100.0)
    for L in (50.0, 61.0, 59.0):    # 1 < 0.5 * 40: three passes without reaching it
        r.record(L, 100.0)
    assert (r.best, r.delta, r.level(100.0)) == (61.0, 20.0, 81.0)
    assert r.level(70.0) == 70.0    # a better incumbent caps the level
    r.restart(100.0)
    assert r.level(100.0) == 100.0 and r.stall == 0


@settings(max_examples=80, deadline=None)
@given(small, st.integers(0, 10 ** 6), st.sampled_from([0, 1]))
def test_the_integer_threshold_proves_only_the_optimum(data, seed, above):
    # the search stops and eliminates at upper - 1 plus a rounding tolerance (below_next_integer): with the
    # incumbent one unit above the optimum, the optimum's path stays and no proof is claimed; at the optimum a
    # proof may come, and the bound never passes the optimum
    p, w, d = (np.array(x) for x in data)
    opt = brute(p, w, d)
    upper = float(opt + above)
    grid = Grid(p, tardiness_costs(p, w, d), weights=w, max_cost=below_next_integer(upper))
    mu0 = np.random.default_rng(seed).normal(0, 3, len(p))
    r = optimize(grid, upper, mu0=mu0, max_iter=80, restarts=2, slower=4.0, min_scale=0.01)
    assert r.bound <= opt + 1e-9
    if above:
        assert not r.proved and np.isfinite(grid.forward(r.mu).value)
    assert below_next_integer(upper) < upper - 0.5 + 1e-12


def test_below_next_integer_keeps_a_rounding_margin():
    assert below_next_integer(10.0) == pytest.approx(9.00001)
    assert below_next_integer(3e6) == 2999999.5      # the margin stops at half a unit
    assert below_next_integer(0.0) == pytest.approx(-1.0 + 1e-6)
