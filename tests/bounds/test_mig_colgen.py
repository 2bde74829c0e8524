"""The column-generation bound of the MIG problem (bounds.mig_colgen): exact pricing, validity, strength."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bounds import mig as mig_bounds
from bounds.mig_colgen import colgen_bound
from bounds.mig_colgen_pricing import BlockPricer, price_slice
from instances import mig
from instances.errors import OptionError
from milp import solve_optimal

FAMILIES = [(w, t) for w in ("PoorScaling", "MixedScaling", "GoodScaling") for t in ("WideTimes", "NarrowTimes")]


def _optimum(problem, reconfiguration):
    res = solve_optimal(problem, reconfiguration=reconfiguration, time_limit=60, workers=2)
    assert str(res.status) == "OPTIMAL"
    return res.objective


# -- pricing ----------------------------------------------------------------------------------------

def _brute_slice(n, chain, units, overhead, profit, cap):
    best = 0.0
    for choice in itertools.product([None] + list(range(len(chain))), repeat=n):
        pairs = [(i, chain[b]) for i, b in enumerate(choice) if b is not None]
        if any(key not in units for key in pairs):
            continue
        mask = sum(1 << b for b in set(b for b in choice if b is not None))
        load = sum(units[key] for key in pairs) + (overhead[mask] if pairs else 0)
        if load <= cap:
            best = max(best, sum(profit[key] for key in pairs))
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_slice_pricing_is_exact(n, L, data):
    chain = list(range(10, 10 + L))
    units = {(i, j): data.draw(st.integers(1, 20)) for i in range(n) for j in chain}
    profit = {key: data.draw(st.floats(-2, 3, allow_nan=False)) for key in units}
    per = [data.draw(st.integers(0, 3)) for _ in chain]
    overhead = [sum(per[b] for b in range(L) if m >> b & 1) for m in range(1 << L)]
    cap = data.draw(st.integers(0, 40))
    found = price_slice(n, chain, units, overhead, profit, cap)
    best = found[0][0] if found else 0.0
    assert best == pytest.approx(_brute_slice(n, chain, units, overhead, profit, cap), abs=1e-9)
    for value, pattern, load in found:  # every pattern returned is real, with its value and load
        assert load <= cap
        assert value == pytest.approx(sum(profit[key] for key in pattern))
        assert len({i for i, _ in pattern}) == len(pattern)


def test_block_pricing_bounds_every_pattern():
    """The MILP of slices 4-6 of an A100 against enumeration of every pattern of three tasks."""
    p = mig.generate(n=3, gpu="A100", seed=11)
    gpu = p.gpu
    places = list(gpu.placements)
    block = [4, 5, 6]
    chains = {k: sorted((j for j, q in enumerate(places) if k in q.slices), key=lambda j: -len(places[j].slices))
              for k in range(7)}
    pairs = {(i, j): t.times[q.size] for i, t in enumerate(p.tasks) for j, q in enumerate(places)}
    create = {j: gpu.create_time[q.size] for j, q in enumerate(places)}
    destroy = {j: gpu.destroy_time[q.size] for j, q in enumerate(places)}
    pricer = BlockPricer(block, chains, pairs, create, destroy)
    mine = sorted({j for k in block for j in chains[k]})
    profit = {(i, j): ((i + 1) * (j + 3)) % 5 - 1.0 for i in range(3) for j in mine}
    T = 1.2 * max(t.times[1] for t in p.tasks)
    bound, found = pricer.price(profit, T, None)
    best = 0.0
    for choice in itertools.product([None] + mine, repeat=3):
        pattern = tuple((i, j) for i, j in enumerate(choice) if j is not None)
        if pricer.load(pattern) <= T:
            best = max(best, sum(profit[key] for key in pattern))
    assert bound >= best - 1e-7
    assert bound == pytest.approx(best, abs=1e-6)
    for value, pattern, load in found:
        assert load <= T * (1 + 1e-9) and value == pytest.approx(sum(profit[key] for key in pattern))


# -- validity against proven optima -------------------------------------------------------------------

# three families by default; the other three (the slowest to prove) with --run-slow
@pytest.mark.parametrize("workload,times", [pytest.param(*f, marks=pytest.mark.slow)
                                            if f in (("GoodScaling", "WideTimes"), ("GoodScaling", "NarrowTimes"),
                                                     ("MixedScaling", "WideTimes")) else f for f in FAMILIES])
def test_bound_is_below_the_proven_optimum_a100(workload, times):
    p = mig.generate(n=6, gpu="A100", workload=workload, times=times, seed=21)
    opt = _optimum(p, True)
    basic = mig_bounds.lower_bound(p)
    for blocks in ("halves", "slices"):
        rep = colgen_bound(p, time_limit=120, lower=basic, blocks=blocks)
        assert basic <= rep.bound <= opt + 1e-9, blocks
        assert rep.converged, blocks
        # the steps agree with monotony: every proven-infeasible makespan lies below every feasible one
        bad = [T for T, verdict, _ in rep.steps if verdict == "infeasible"]
        good = [T for T, verdict, _ in rep.steps if verdict == "feasible"]
        assert not good or not bad or max(bad) < min(good)


@pytest.mark.parametrize("gpu,seed", [("A30", 3), ("A100", 4)])
def test_bound_is_below_the_optimum_without_reconfiguration(gpu, seed):
    p = mig.generate(n=7, gpu=gpu, seed=seed).without_reconfiguration()
    opt = _optimum(p, False)
    rep = colgen_bound(p, time_limit=120, lower=mig_bounds.lower_bound(p))
    assert rep.bound <= opt + 1e-9
    # the half patterns' LP is almost the laminar optimum itself
    assert rep.bound >= opt * (1 - 0.02)


def test_halves_improve_on_the_closed_form_bound_and_on_slices():
    p = mig.generate(n=7, gpu="A100", seed=3)
    basic = mig_bounds.lower_bound(p)
    halves = colgen_bound(p, time_limit=120, lower=basic)
    slices = colgen_bound(p, time_limit=120, lower=basic, blocks="slices")
    pairs = colgen_bound(p, time_limit=120, lower=basic, blocks="pairs")
    opt = _optimum(p, True)
    assert basic < slices.bound <= halves.bound <= opt + 1e-9
    # coarser blocks, a stronger LP (each bound is within the search's bracket of its LP value)
    assert slices.bound <= pairs.bound * (1 + 2e-4) and pairs.bound <= halves.bound * (1 + 2e-4)


def test_lower_bound_with_method_colgen_is_the_halves_bound():
    p = mig.generate(n=5, gpu="A100", seed=1)
    halves = colgen_bound(p, time_limit=120, lower=mig_bounds.lower_bound(p))
    assert mig_bounds.lower_bound(p, method="colgen", time_limit=120) == pytest.approx(halves.bound, rel=1e-3)


def test_a_stopped_search_keeps_a_valid_bound():
    p = mig.generate(n=7, gpu="A100", seed=3)
    basic = mig_bounds.lower_bound(p)
    rep = colgen_bound(p, time_limit=0.3, lower=basic)
    full = colgen_bound(p, time_limit=300, lower=basic)
    assert basic <= rep.bound <= full.bound + 1e-9
    assert full.bound <= _optimum(p, True) + 1e-9


def test_workloads_drop_their_releases():
    w = mig.generate_workload([3, 3], [0.0, 20.0], gpu="A30", seed=5)
    opt = solve_optimal(w, reconfiguration=True, time_limit=60, workers=2)
    assert str(opt.status) == "OPTIMAL"
    assert colgen_bound(w, time_limit=60, lower=1.0).bound <= opt.objective + 1e-9


def test_bad_options():
    p = mig.generate(n=3, gpu="A30", seed=0)
    with pytest.raises(OptionError):
        colgen_bound(p, blocks="quarters")
    with pytest.raises(OptionError):
        colgen_bound(p, tolerance=0)
    with pytest.raises(OptionError):
        mig_bounds.lower_bound(p, method="lp")


_TIMES = st.lists(st.floats(0.5, 20.0, allow_nan=False), min_size=5, max_size=5)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["A30", "A100"]), st.lists(_TIMES, min_size=1, max_size=4), st.booleans())
def test_tiny_instances_never_exceed_the_optimum(gpu, rows, reconfiguration):
    sizes = mig.Problem(gpu, []).gpu.sizes
    tasks = []
    for i, row in enumerate(rows):
        times = sorted(row[:len(sizes)], reverse=True)  # non-increasing in the size
        tasks.append(mig.Task(f"t{i}", dict(zip(sizes, times))))
    p = mig.Problem(gpu, tasks)
    if not reconfiguration:
        p = p.without_reconfiguration()
    opt = _optimum(p, reconfiguration)
    rep = colgen_bound(p, time_limit=60, lower=mig_bounds.lower_bound(p))
    assert rep.bound <= opt + 1e-9 and not math.isnan(rep.bound)
