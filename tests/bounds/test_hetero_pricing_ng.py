"""The ng-route pricing of the heterogeneous column generation against enumeration, and the bound it gives."""

import itertools

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import hetero_ng as ng
from bounds import hetero_pricing
from bounds.hetero_colgen import colgen_bound
from instances import hetero
from milp import solve_optimal


def _tard(W, D, k, t):
    return W[k] * max(0, t - D[k])


def enumerate_min(P, A, alive, W, D, pi, allowed) -> float:
    """Least value over every pseudo-schedule that ``allowed(sequence)`` accepts, by depth-first search:
    semi-active starts, allowed completions, no adjacent pair the interchange beats (the pricing's rules)."""
    n, H = len(P), alive.shape[0] - 1
    best = [0.0]

    def dfs(seq, t, v, prev):
        best[0] = min(best[0], v)
        for k in range(n):
            if not allowed(seq + [k]):
                continue
            s = max(t, A[k])
            e = s + P[k]
            if e > H or not alive[e, k]:
                continue
            if prev is not None and s == t:
                j, sj = prev
                if sj >= A[k]:
                    lhs = _tard(W, D, j, s) + _tard(W, D, k, e)
                    rhs = _tard(W, D, k, sj + P[k]) + _tard(W, D, j, e)
                    if lhs > rhs or (lhs == rhs and j > k):
                        continue
            dfs(seq + [k], e, v + _tard(W, D, k, e) - pi[k], (k, s))

    dfs([], 0, 0.0, None)
    return best[0]


@st.composite
def network(draw):
    n = draw(st.integers(1, 5))
    H = draw(st.integers(3, 11))
    ints = lambda lo, hi: np.array(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))  # noqa: E731
    P, A, W, D, pi = ints(1, 3), ints(0, 3), ints(1, 3).astype(float), ints(0, 8), ints(0, 12).astype(float)
    seed = draw(st.integers(0, 10 ** 6))
    alive = np.random.default_rng(seed).random((H + 1, n)) < 0.85
    size = draw(st.integers(1, n))
    return P, A, alive, W, D, pi, ng.neighbourhoods(D, size)


@settings(max_examples=120, deadline=None)
@given(network())
def test_minimum_equals_the_enumeration_of_ng_routes(net):
    P, A, alive, W, D, pi, N = net
    lab = ng.forward(P, A, alive, W, D, pi, N, cap=64)
    assert lab.merges == 0
    assert lab.value == pytest.approx(enumerate_min(P, A, alive, W, D, pi, lambda s: ng.feasible(N, s)))
    # the columns cost what their labels say and are ng-routes
    for v, seq, cost in ng.columns(lab, P, W, D, pi, len(P)):
        tasks = [k for k, _ in seq]
        assert ng.feasible(N, tasks)
        assert cost == pytest.approx(sum(_tard(W, D, k, t) for k, t in seq))
        assert v == pytest.approx(cost - pi[tasks].sum())
        assert all(alive[t, k] for k, t in seq)


@settings(max_examples=120, deadline=None)
@given(network())
def test_merged_buckets_stay_below_the_ng_routes_and_full_memories_are_elementary(net):
    P, A, alive, W, D, pi, N = net
    ngmin = enumerate_min(P, A, alive, W, D, pi, lambda s: ng.feasible(N, s))
    small = ng.forward(P, A, alive, W, D, pi, N, cap=1)
    assert small.value <= ngmin + 1e-9
    # a merged label's path still has its value
    for v, seq, cost in ng.columns(small, P, W, D, pi, len(P)):
        assert v == pytest.approx(sum(_tard(W, D, k, t) - pi[k] for k, t in seq))
    # neighbourhoods of every task: the elementary pseudo-schedules exactly, never fewer
    full = ng.neighbourhoods(D, len(P))
    elementary = enumerate_min(P, A, alive, W, D, pi, lambda s: len(set(s)) == len(s))
    assert ng.forward(P, A, alive, W, D, pi, full, cap=64).value == pytest.approx(elementary)
    assert ngmin <= elementary + 1e-9


@settings(max_examples=80, deadline=None)
@given(network())
def test_single_neighbourhoods_are_the_two_cycle_pricing(net):
    P, A, alive, W, D, pi, _ = net
    plain = hetero_pricing.forward(P, A, alive, W, D, pi).value
    assert ng.forward(P, A, alive, W, D, pi, ng.neighbourhoods(D, 1)).value == pytest.approx(plain)


@settings(max_examples=60, deadline=None)
@given(network())
def test_labels_with_the_admission_table_are_those_without(net):
    # the table of a work dict (shared with the 2-cycle pricing of the class) against the pair tests
    P, A, alive, W, D, pi, N = net
    work: dict = {}
    hetero_pricing.forward(P, A, alive, W, D, pi, work)
    smaller = alive & (np.random.default_rng(len(P)).random(alive.shape) < 0.7)
    for net_t in (alive, smaller):
        a, b = ng.forward(P, A, net_t, W, D, pi, N, work), ng.forward(P, A, net_t, W, D, pi, N)
        assert np.array_equal(a.df1, b.df1) and np.array_equal(a.best, b.best) and a.merges == b.merges


def test_feasible_and_grow():
    N = ng.neighbourhoods(np.arange(5.0), 1)
    assert ng.feasible(N, [0, 1, 2, 0]) and not ng.feasible(N, [0, 1, 0]) and not ng.feasible(N, [3, 3])
    assert ng.grow(N, [0, 1, 2, 0]) == 2       # 0 joins the neighbourhoods of 1 and 2
    assert not ng.feasible(N, [0, 1, 2, 0]) and ng.feasible(N, [0, 3, 2, 0])
    assert ng.grow(N, [0, 1, 2, 0]) == 0
    # every permutation stays allowed whatever the neighbourhoods
    full = ng.neighbourhoods(np.arange(5.0), 5)
    assert all(ng.feasible(full, p) for p in itertools.permutations(range(5)))


@pytest.mark.parametrize("n,seed", [(7, 4), (8, 1)])
def test_ng_bound_below_the_cpsat_optimum_and_the_lp_at_least_the_plain_one(n, seed):
    pb = hetero.generate(n, seed=seed)
    opt = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert opt.proven
    plain = colgen_bound(pb, time_limit=60)
    res = colgen_bound(pb, time_limit=60, ng=True)
    assert res.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)
    if plain.converged and res.converged:
        assert res.lp >= plain.lp - 1e-6 * max(1.0, plain.lp)


def test_ng_phase_lifts_the_lp_and_keeps_the_time_limit():
    """An instance whose converged LP repeats tasks: the ng phase (neighbourhoods grown from the LP's cycles)
    converges higher, and a limit that ends inside that phase is kept."""
    import time

    pb = hetero.generate(30, seed=22)
    plain = colgen_bound(pb, time_limit=60, ng=False)
    res = colgen_bound(pb, time_limit=60, ng=True)
    assert plain.converged and res.converged and res.info["ng_growth"] > 0
    assert res.lp > plain.lp + 1.0
    assert res.bound >= plain.bound
    t = time.perf_counter()
    cut = colgen_bound(pb, time_limit=2.0 * plain.info["seconds"], ng=True)
    assert time.perf_counter() - t <= 2.0 * plain.info["seconds"] + 0.2
    # at most the converged run's bound: its LP rounded up to the exact grid's cost unit (a cut run that
    # converges in time reaches it, above the LP value itself)
    assert res.info["exact_grid"] and res.bound <= math.ceil(res.lp * res.grid.scale - 1e-6) / res.grid.scale + 1e-9
    assert cut.bound <= res.bound + 1e-6 * res.bound
