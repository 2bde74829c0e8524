"""The interchange precedences of one machine keep the first optimal schedule in rank order."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds.hetero_dp import Grid, tail_rank, tardiness_precedences
from bounds.hetero_precedence import interchange_precedences
from bounds.hetero_ti import tardiness_costs


_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)
_first_optimal = _oracle.first_optimal


# small integers: ties in processing times, weights and due dates are frequent, zero weights too, and due
# dates up to the horizon so that jobs on time near the end (where the new pairs come from) are common
tiny = st.integers(2, 7).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 4), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.lists(st.integers(0, 24), min_size=n, max_size=n),
    st.booleans()))


@settings(max_examples=250, deadline=None)
@given(tiny)
def test_pairs_windows_and_grid_keep_the_first_optimal_schedule(data):
    p, w, d = (np.array(x) for x in data[:3])
    if len(p) == 7 and p.sum() > 20:
        p = np.minimum(p, 2)              # keep the enumeration of 7! orders cheap
    grid = Grid(p, tardiness_costs(p, w, d), rank=tail_rank(p, w, d) if data[3] else None, weights=w)
    seq, C, opt = _first_optimal(p, w, d, grid.rank)
    prec = interchange_precedences(p, w, d, grid.rank)
    assert not (tardiness_precedences(p, w, d, grid.rank) & ~prec).any()
    _oracle.assert_pairs_keep(grid, prec, seq, C, opt)


def test_job_on_time_in_the_other_place_follows_despite_a_larger_weight():
    # P = 9; job 2 follows job 0 by the weight rule (shorter, heavier, earlier due), so job 0 ends by
    # A_0 = 6; job 1 (d = 6) is then on time wherever it could take job 0's place, and the shorter job 0 goes
    # first although w_0 < w_1, a pair the weight condition of the older rule leaves out
    p, w, rank = np.array([2, 4, 3]), np.array([1, 5, 1]), np.array([0, 1, 2])
    d = np.array([1, 6, 2])
    assert interchange_precedences(p, w, d, rank)[0, 1]
    assert not tardiness_precedences(p, w, d, rank)[0, 1]
    assert list(_first_optimal(p, w, d, rank)[0]).index(0) < list(_first_optimal(p, w, d, rank)[0]).index(1)
    # d_1 = 5: job 1 may be late in job 0's place, with the larger weight; the interchange may cost more
    assert not interchange_precedences(p, w, np.array([1, 5, 2]), rank)[0, 1]


def test_exact_method_with_the_new_pairs_matches_the_subset_dp_on_few_late_jobs():
    # OR-Library-style instances with few late jobs (TF 0.4, RDD 0.6-0.8), where the rule adds most pairs: the
    # solve's optimum must be the subset DP's, and its schedule pass the checker
    from bounds import hetero as hb
    from instances import hetero
    from milp.hetero_ssdp import solve_ssdp

    by_subsets = _oracle.by_subsets
    added = 0
    for k, rdd in enumerate([0.6, 0.8, 0.6, 0.8, 0.6, 0.8]):
        pb = hetero.generate_orlib(14, tf=0.4, rdd=rdd, seed=180 + k)
        sm = hb.single_machine(pb)
        rank = tail_rank(sm.p, sm.w, sm.d)
        added += int((interchange_precedences(sm.p, sm.w, sm.d, rank)
                      & ~tardiness_precedences(sm.p, sm.w, sm.d, rank)).sum())
        res = solve_ssdp(pb, time_limit=60)
        opt = by_subsets(*([int(getattr(t, f)) for t in pb.tasks] for f in ("workload", "weight", "deadline")))
        assert res.lower_bound <= opt + 1e-9 <= res.objective + 2e-9
        assert res.status.name == "OPTIMAL"
        assert res.objective == pytest.approx(opt)
        assert not hetero.check(pb, res.schedule)
    assert added > 0


@settings(max_examples=100, deadline=None)
@given(tiny, st.integers(0, 2 ** 31 - 1))
def test_windows_before_the_build_give_the_same_paths_as_after(data, seed):
    # the windows applied before the arcs are built (fewer states to test) leave every path of the grid built first
    # and then restricted: the cheapest path through each state is the same, for any multipliers
    p, w, d = (np.array(x) for x in data[:3])
    rank = tail_rank(p, w, d) if data[3] else None
    after = Grid(p, tardiness_costs(p, w, d), rank=rank, weights=w)
    prec = interchange_precedences(p, w, d, after.rank)
    removed = after.restrict(prec)
    before = Grid(p, tardiness_costs(p, w, d), rank=rank, weights=w, prec=prec)
    assert before.windowed >= removed   # the build of the other had already dropped some of them
    assert not (before.alive & ~after.alive).any()
    mu = np.random.default_rng(seed).uniform(-3, 10, len(p))
    fa, fb = after.forward(mu), before.forward(mu)
    assert fa.bound == fb.bound
    ta, tb = after.through(fa, after.backward(mu)), before.through(fb, before.backward(mu))
    assert np.array_equal(np.where(before.alive, ta, np.inf), tb) and np.isinf(ta[after.alive & ~before.alive]).all()
