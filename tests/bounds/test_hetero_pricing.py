"""The compiled 2-cycle pricing of the heterogeneous column generation against its labels' definition."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds.hetero_pricing import (_fix_completions, admissible, backward, column_arrays, columns, forward,
                                   interchange_beats)


def reference_labels(P, A, alive, W, D, pi):
    """For each completion ``(t, k)``: the cheapest value of a pseudo-schedule ending there, per task right
    before ``k`` (``n``: none), by the pricing's definition with every source scanned and every earlier
    completion looked at for idle time (no ordered scan, no two-label summaries, no carried idle labels)."""
    n, H = len(P), alive.shape[0] - 1
    F: dict[tuple[int, int], dict[int, float]] = {}

    def without(t, j, k):
        # the cheapest label of (t, j) whose task before j is not k (no 2-cycle k, j, k)
        return min((v for q, v in F.get((t, j), {}).items() if q != k), default=math.inf)

    for t in range(H + 1):
        for k in range(n):
            s = t - P[k]
            if not alive[t, k] or s < A[k]:
                continue
            cands = {}
            for j in range(n):
                if j != k and (s, j) in F and not interchange_beats(P, A, W, D, j, k, s, t):
                    cands[j] = without(s, j, k)
            if s == A[k]:
                cands[n] = 0.0
                for j in range(n):
                    if j != k:
                        idle = min((without(tt, j, k) for tt in range(s)), default=math.inf)
                        cands[j] = min(cands.get(j, math.inf), idle)
            c = W[k] * max(0, t - D[k]) - pi[k]
            vals = {j: v + c for j, v in cands.items() if v < math.inf}
            if vals:
                F[(t, k)] = vals
    return F


@st.composite
def network(draw):
    n = draw(st.integers(1, 6))
    P = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), np.int64)
    A = np.array(draw(st.lists(st.integers(0, 8), min_size=n, max_size=n)), np.int64)
    D = np.array(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), np.int64)
    W = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=n, max_size=n)))
    H = int(A.max() + P.sum()) + draw(st.integers(0, 4))
    rng = np.random.default_rng(draw(st.integers(0, 10 ** 6)))
    t = np.arange(H + 1)[:, None]
    alive = (t >= (A + P)[None, :]) & (rng.random((H + 1, n)) < draw(st.sampled_from([0.5, 0.9, 1.0])))
    # prices on a coarse grid as well: ties between labels of distinct tasks before
    pi = rng.normal(6.0, 8.0, n).round(draw(st.sampled_from([0, 1])))
    return P, A, alive, W, D, pi


@settings(max_examples=150, deadline=None)
@given(network())
def test_labels_are_the_two_cheapest_of_distinct_tasks_before(net):
    P, A, alive, W, D, pi = net
    n, H = len(P), alive.shape[0] - 1
    ref = reference_labels(P, A, alive, W, D, pi)
    lab = forward(P, A, alive, W, D, pi)
    for t in range(H + 1):
        for k in range(n):
            vals = sorted(ref.get((t, k), {}).values()) + [math.inf, math.inf]
            for got, want in ((lab.df1[t, k], vals[0]), (lab.df2[t, k], vals[1])):
                assert got == want or got == pytest.approx(want, rel=1e-9, abs=1e-9)
    for k in range(n):
        best = min((ref[(t, kk)] and min(ref[(t, kk)].values()) for t, kk in ref if kk == k), default=math.inf)
        assert lab.best[k] == best or lab.best[k] == pytest.approx(best, rel=1e-9, abs=1e-9)
    # each column is the cheapest pseudo-schedule ending with its task, traced back: its value is that label's
    for v, seq, cost in columns(lab, P, W, D, pi, n):
        assert v == pytest.approx(lab.best[seq[-1][0]], abs=1e-9)
        assert cost == pytest.approx(sum(W[i] * max(0, c - D[i]) for i, c in seq))


def test_labels_of_a_reused_work_dict_match_a_fresh_one():
    # the arrays of a longer horizon, and of another class's arrivals, are reused without leftovers
    rng = np.random.default_rng(3)
    work: dict = {}
    for H, n in ((60, 5), (40, 5), (60, 5), (30, 4)):
        P, A = rng.integers(1, 6, n), rng.integers(0, 12, n)
        W, D = rng.integers(0, 4, n).astype(float), rng.integers(0, 30, n)
        t = np.arange(H + 1)[:, None]
        alive = (t >= (A + P)[None, :]) & (rng.random((H + 1, n)) < 0.8)
        pi = rng.normal(6.0, 8.0, n)
        a, b = forward(P, A, alive, W, D, pi, work), forward(P, A, alive, W, D, pi)
        assert np.array_equal(a.df1, b.df1) and np.array_equal(a.df2, b.df2)
        assert columns(a, P, W, D, pi, n) == columns(b, P, W, D, pi, n)


def _wide(seed: int, n: int = 70, H: int = 90):
    """A network of more tasks than one 64-bit word of :func:`admissible` holds (bit 63 included)."""
    rng = np.random.default_rng(seed)
    P, A = rng.integers(1, 6, n), rng.integers(0, 30, n)
    W, D = rng.choice([0.0, 1.0, 2.0, 3.5], n), rng.integers(0, 80, n)
    t = np.arange(H + 1)[:, None]
    alive = (t >= (A + P)[None, :]) & (rng.random((H + 1, n)) < 0.7)
    return P, A, alive, W, D, rng.normal(6.0, 8.0, n).round(1)


def _bits(row, n):
    return [bool((int(row[j >> 6]) >> (j & 63)) & 1) for j in range(n)]


def _assert_admissible(P, A, alive, W, D):
    n = len(P)
    aidx, adm = admissible(P, A, alive, W, D)
    for t, k in zip(*np.nonzero(alive)):
        s = t - P[k]
        if s < A[k]:
            assert aidx[t, k] == -1
            continue
        want = [j != k and not interchange_beats(P, A, W, D, j, k, s, t) for j in range(n)]
        assert _bits(adm[aidx[t, k]], n) == want
    assert (aidx[~alive] == -1).all()


@settings(max_examples=60, deadline=None)
@given(network())
def test_admitted_sources_are_those_the_interchange_rule_keeps(net):
    _assert_admissible(*net[:5])


@pytest.mark.parametrize("seed", [0, 1])
def test_admitted_sources_of_a_network_wider_than_a_word(seed):
    # each pair against the rule, called one at a time: a few wide networks, not one per example above
    _assert_admissible(*_wide(seed)[:5])


@settings(max_examples=80, deadline=None)
@given(network(), st.integers(0, 10 ** 6))
def test_labels_with_the_admission_table_are_those_without(net, seed):
    """A ``work`` dict's table (none at its first call, then built on the second network, a smaller one as
    after fixing) gives the same labels there and on a larger network (completions without a row: tested
    pair by pair)."""
    rng = np.random.default_rng(seed)
    for P, A, alive, W, D, pi in (net, _wide(seed)):
        work: dict = {}
        smaller = alive & (rng.random(alive.shape) < 0.6)
        for net_t in (alive, smaller, alive | (rng.random(alive.shape) < 0.3)):
            a, b = forward(P, A, net_t, W, D, pi, work), forward(P, A, net_t, W, D, pi)
            for f in ("df1", "df2", "best", "best_t"):
                assert np.array_equal(getattr(a, f), getattr(b, f)), f
            fin = np.isfinite(a.df1)
            for f in ("dp1", "ds1"):
                assert np.array_equal(getattr(a, f)[fin], getattr(b, f)[fin]), f
            assert columns(a, P, W, D, pi, len(P)) == columns(b, P, W, D, pi, len(P))


@settings(max_examples=60, deadline=None)
@given(network(), st.integers(1, 8))
def test_column_arrays_are_the_columns_one_after_another(net, limit):
    P, A, alive, W, D, pi = net
    lab = forward(P, A, alive, W, D, pi)
    ks, ts, lens, costs = column_arrays(lab, P, W, D, limit)
    cols = columns(lab, P, W, D, pi, limit)
    assert len(lens) == len(costs) == len(cols) and lens.sum() == len(ks) == len(ts)
    at = 0
    for m, cost, (_, seq, want) in zip(lens.tolist(), costs.tolist(), cols):
        assert list(zip(ks[at:at + m].tolist(), ts[at:at + m].tolist())) == seq
        assert cost == want == pytest.approx(sum(W[i] * max(0, c - D[i]) for i, c in seq))
        at += m


@settings(max_examples=60, deadline=None)
@given(network(), st.floats(-20.0, 40.0), st.floats(-10.0, 10.0))
def test_fixing_clears_exactly_the_completions_of_its_definition(net, theta, offset):
    """The compiled reduced-cost fixing against its definition in numpy: a completion goes where its cheapest
    pseudo-schedule (forward label plus backward bound, plus ``offset``) costs more than ``theta``, or past
    its task's last time; the last time left is the largest row with a completion."""
    P, A, alive, W, D, pi = net
    lab = forward(P, A, alive, W, D, pi)
    b = backward(P, A, alive, W, D, pi)
    last = np.where(W > 0, D + np.floor(np.abs(theta) / np.where(W > 0, W, 1.0)), np.inf)
    want = alive & ~((offset + (lab.df1[:, :len(P)] + b) > theta)
                     | (np.arange(alive.shape[0])[:, None] > last[None, :]))
    got = alive.copy()
    removed, top = _fix_completions(got, lab.df1, b, offset, theta, last)
    assert np.array_equal(got, want)
    assert removed == int(alive.sum() - want.sum())
    rows = np.flatnonzero(want.any(axis=1))
    assert top == (int(rows[-1]) if len(rows) else -1)
