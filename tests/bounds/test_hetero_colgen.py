"""The column-generation bound of the heterogeneous problem: never above the optimum (brute force, CP-SAT)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds.hetero_colgen import colgen_bound, grid
from bounds.hetero_multi import multi_bound
from bounds.hetero_pricing import backward, columns, forward, trace
from instances import hetero
from instances.hetero import GPU, HeteroProblem, Task
from milp import solve_optimal


def brute_multi(pb: HeteroProblem) -> float:
    """Least total weighted tardiness by enumeration: every split of every order of the tasks over the GPUs,
    each GPU's sequence run semi-actively (start = max(arrival, previous end))."""
    tasks = [i for i in range(pb.n) if pb.eligible[i].any()]
    sep = [-1] * (pb.m - 1)
    best = math.inf
    for perm in set(itertools.permutations(tasks + sep)):
        seqs, cur = [], []
        for x in perm:
            if x < 0:
                seqs.append(cur)
                cur = []
            else:
                cur.append(x)
        seqs.append(cur)
        cost, ok = 0.0, True
        for j, seq in enumerate(seqs):
            t = 0.0
            for i in seq:
                if not pb.eligible[i, j]:
                    ok = False
                    break
                t = max(t, pb.arrival[i]) + pb.p[i, j]
                cost += pb.weight[i] * max(0.0, t - pb.deadline[i])
            if not ok:
                break
        if ok:
            best = min(best, cost)
    return best


@st.composite
def tiny(draw):
    """Up to 5 tasks on 1-3 GPUs; speeds from the generator's (exact decimal grids) or awkward ones like 3
    (run times 1/3: the grid is rounded, in the safe direction); memories that leave some tasks on few GPUs."""
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 3))
    speeds = draw(st.lists(st.sampled_from([1.0, 2.0, 2.5, 3.0, 5.0, 7.0]), min_size=m, max_size=m))
    mems = draw(st.lists(st.sampled_from([16.0, 32.0, 80.0]), min_size=m, max_size=m))
    mems[0] = 80.0      # every task fits somewhere
    tasks = []
    for i in range(n):
        tasks.append(Task(f"t{i}", float(draw(st.integers(1, 12))), float(draw(st.sampled_from([4, 24, 64]))),
                          float(draw(st.integers(0, 20))), float(draw(st.integers(0, 5))),
                          float(draw(st.integers(0, 8)))))
    return HeteroProblem(tuple(tasks), tuple(GPU(f"g{j}", speeds[j], mems[j]) for j in range(m)))


@settings(max_examples=80, deadline=None)
@given(tiny(), st.integers(1, 40), st.booleans())
def test_bound_never_above_the_brute_force_optimum(pb, passes, tentative):
    opt = brute_multi(pb)
    res = colgen_bound(pb, time_limit=None, max_iter=passes, tentative=tentative)
    assert res is not None
    assert res.bound <= opt + 1e-9 * max(1.0, opt)
    if res.proved:
        assert res.bound == pytest.approx(opt)
        assert res.upper == pytest.approx(opt)


@settings(max_examples=30, deadline=None)
@given(tiny(), st.integers(0, 10 ** 6))
def test_pricing_labels_match_their_pseudo_schedules(pb, seed):
    # the traced pseudo-schedule of each task costs what its label says, keeps the rules (semi-active,
    # no task twice in a row, no 2-cycle) and stays above the backward bound through each of its nodes
    g = grid(pb, ub=1e6)
    if g is None:
        return
    rng = np.random.default_rng(seed)
    j = int(rng.integers(pb.m))
    ks = np.flatnonzero(g.eligible[:, j])
    if len(ks) == 0:
        return
    P, A, D, W = g.P[ks, j], g.A[ks, j], g.D[ks, j], g.Wj[ks, j]
    H = int(A.max() + P.sum())
    t = np.arange(H + 1)[:, None]
    alive = (t >= (A + P)[None, :]) & (rng.random((H + 1, len(ks))) < 0.9)
    pi = rng.normal(5.0, 10.0, len(ks)).round(1)
    lab = forward(P, A, alive, W, D, pi)
    b = backward(P, A, alive, W, D, pi)
    for k in range(len(ks)):
        if not math.isfinite(lab.best[k]):
            continue
        seq = trace(lab, P, k)
        assert seq[-1][0] == k
        cost = sum(W[i] * max(0, c - D[i]) - pi[i] for i, c in seq)
        assert cost == pytest.approx(lab.best[k])
        prev, before = 0, []
        for i, c in seq:
            assert alive[c, i] and c - P[i] == max(prev, A[i])
            assert not before or before[-1] != i
            assert len(before) < 2 or before[-2] != i
            before.append(i)
            prev = c
        # the rest of the sequence after each node costs at least the backward bound
        for q, (i, c) in enumerate(seq):
            rest = sum(W[x] * max(0, cc - D[x]) - pi[x] for x, cc in seq[q + 1:])
            assert b[c, i] <= rest + 1e-9
    assert lab.value <= 0.0


@pytest.mark.parametrize("n,seed", [(8, 1), pytest.param(9, 2, marks=pytest.mark.slow),
                                    pytest.param(10, 3, marks=pytest.mark.slow)])
def test_bound_below_the_cpsat_optimum_and_at_least_the_lagrangian(n, seed):
    pb = hetero.generate(n, seed=seed)
    opt = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert opt.proven
    res = colgen_bound(pb, time_limit=60)
    assert res.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)
    # the per-GPU Lagrangian bound targeted at the optimal schedule (it stops once it meets it)
    old = multi_bound(pb, opt.schedule, time_limit=20).bound
    assert res.bound >= old - 1e-9
    # the grid of the generator's data is exact: the bound is a multiple of its cost unit
    assert res.grid.exact


def _n20():
    from heuristics import hetero as heur

    pb = hetero.generate(20, seed=7)
    sched = heur.ils(pb, time_limit=None, max_iter=300, seed=0)
    return pb, sched, colgen_bound(pb, sched, time_limit=60)


def test_generated_n20_bound_close_to_an_ils_schedule():
    pb, sched, res = _n20()
    ub = hetero.weighted_tardiness(pb, sched)
    assert res.bound <= ub + 1e-9
    assert res.converged or res.proved
    assert res.bound >= 0.9 * ub


@pytest.mark.slow
def test_generated_n20_bound_at_least_the_lagrangian():
    pb, sched, res = _n20()
    assert res.bound >= multi_bound(pb, sched, time_limit=20).bound


def test_rounded_grid_stays_below_the_optimum():
    # speeds 3 and 7 put run times off any decimal grid: the bound rounds and says so
    tasks = tuple(Task(f"t{i}", float(w), 0.0, float(d), float(wt), float(a))
                  for i, (w, d, wt, a) in enumerate([(7, 3, 2, 0), (5, 4, 1, 1), (9, 5, 3, 0), (4, 2, 2, 3)]))
    pb = HeteroProblem(tasks, (GPU("a", 3.0), GPU("b", 7.0)))
    res = colgen_bound(pb, time_limit=None)
    assert not res.grid.exact
    assert 0 < res.bound <= brute_multi(pb) + 1e-9
    assert not res.proved


def test_empty_and_zero_cases():
    pb = HeteroProblem((), (GPU("g", 1.0),))
    assert colgen_bound(pb).bound == 0.0
    easy = HeteroProblem((Task("a", 2, 0, 10, 1, 0),), (GPU("g", 1.0),))
    res = colgen_bound(easy)
    assert res.bound == 0.0 and res.proved


@settings(max_examples=40, deadline=None)
@given(tiny(), st.integers(1, 30), st.integers(1, 3))
def test_heuristic_pricing_on_coarse_views_keeps_the_bound_valid(pb, passes, run_steps):
    # every class gets a coarse view (steps of about a run time / run_steps): its columns only join the
    # master; the bound must still come out below the brute-force optimum
    import bounds.hetero_classes as hc

    old = hc.COARSE_MIN_STEPS, hc.COARSE_RUN_STEPS
    hc.COARSE_MIN_STEPS, hc.COARSE_RUN_STEPS = 0, run_steps
    try:
        res = colgen_bound(pb, time_limit=None, max_iter=passes)
    finally:
        hc.COARSE_MIN_STEPS, hc.COARSE_RUN_STEPS = old
    opt = brute_multi(pb)
    assert res.bound <= opt + 1e-9 * max(1.0, opt)
    if res.converged:
        assert res.lp <= res.bound + 1e-6 * max(1.0, res.bound)


def test_coarse_views_price_and_the_bound_stays_below_cpsat(monkeypatch):
    import bounds.hetero_classes as hc

    monkeypatch.setattr(hc, "COARSE_MIN_STEPS", 0)
    pb = hetero.generate(9, seed=5)
    opt = solve_optimal(pb, backend="cpsat", time_limit=60)
    assert opt.proven
    res = colgen_bound(pb, time_limit=60)
    assert res.info["heuristic_passes"] > 0
    assert res.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)
    assert res.converged or res.proved
    plain = colgen_bound(pb, time_limit=60, coarse=False)
    assert plain.info["heuristic_passes"] == 0
    assert plain.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)


def test_lower_bound_keeps_a_short_time_limit_at_n100():
    import time

    from bounds.hetero import lower_bound

    pb = hetero.generate(100, seed=12)
    # the limit excludes the process's one-time loading of the compiled pricing kernels (about 0.45 s on a quiet
    # machine, more under load), which a worker that has not priced yet pays in its first call
    lower_bound(hetero.generate(6, seed=12), time_limit=5)
    t = time.perf_counter()
    b = lower_bound(pb, time_limit=0.5)
    assert time.perf_counter() - t <= 0.5
    assert b >= 0.0


def test_a_fresh_process_keeps_a_short_time_limit():
    # the first compiled call of a process loads numba's implementations (0.25-0.6 s) and cannot be cut short:
    # a cold process with less time than that starts no pass; once warm, short limits run passes as before
    import pathlib
    import subprocess
    import sys

    code = """
import sys, time
from bounds import hetero_colgen
from bounds.hetero import lower_bound
from instances import hetero
assert hetero_colgen._cold()
pb = hetero.generate(100, seed=12)
for limit in (0.1, 0.2, 0.4):
    t = time.perf_counter()
    b = lower_bound(pb, time_limit=limit)
    assert time.perf_counter() - t <= limit and b >= 0.0, (limit, time.perf_counter() - t, b)
assert hetero_colgen._cold()
small = hetero.generate(6, seed=12)
assert lower_bound(small, time_limit=5) > 0.0
assert not hetero_colgen._cold()
t = time.perf_counter()
b = lower_bound(pb, time_limit=0.5)
assert time.perf_counter() - t <= 0.5 and b >= 0.0
print("ok")
"""
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_a_master_lp_that_fails_twice_ends_the_search_with_a_valid_bound(monkeypatch):
    """HiGHS answering neither optimal nor out of time: the master retries from scratch, then the search stops
    as at its deadline with its best Lagrangian value (below the optimum), and says so in ``info``."""
    import highspy

    pb = hetero.generate(9, seed=2)
    opt = solve_optimal(pb, backend="cpsat", time_limit=120)
    assert opt.proven
    monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: highspy.HighsModelStatus.kUnknown)
    res = colgen_bound(pb, time_limit=30)
    assert res.info["lp_failures"] and not res.converged
    assert 0.0 <= res.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)


def _fifo_and_optimum(n, seed):
    """A generated problem, its FIFO schedule and CP-SAT's proven optimum."""
    from heuristics.hetero import fifo

    pb = hetero.generate(n, seed=seed)
    opt = solve_optimal(pb, backend="cpsat", time_limit=60)
    assert opt.proven
    return pb, fifo(pb), opt


@pytest.mark.parametrize("n,seed", [(10, 1), (14, 3)])
def test_tentative_fixing_keeps_the_bound_below_the_optimum_and_at_least_the_lp(n, seed):
    """Fixing against the restricted master's value (below the FIFO incumbent's cost) restricts the networks to
    the schedules no dearer than it: the bound stays below CP-SAT's optimum, and at convergence it is at least
    the LP value of the unrestricted column generation."""
    pb, start, opt = _fifo_and_optimum(n, seed)
    plain = colgen_bound(pb, start, time_limit=60, ng=False, tentative=False)
    tent = colgen_bound(pb, start, time_limit=60, ng=False, tentative=True)
    assert plain.converged and (tent.converged or tent.proved)
    assert tent.info["restores"] >= 1      # the master's value was reached: the networks were restored
    assert tent.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)
    assert tent.bound >= plain.lp - 1e-6 * max(1.0, plain.lp)
    # stopped after a few passes, the capped bound is still below the optimum
    for passes in (3, 8, 15):
        early = colgen_bound(pb, start, time_limit=60, max_iter=passes, tentative=True)
        assert early.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)


@pytest.mark.parametrize("n,seed", [(10, 1), (14, 3)])
def test_the_covering_master_is_a_relaxation_and_ends_unperturbed(n, seed):
    """The bound alone's master has covering task rows, perturbed below 1 at the start: at convergence its LP
    is not above the partitioning master's, its bound stays below CP-SAT's optimum, and its last LP covers every
    task at least once (the perturbation was lifted)."""
    pb, start, opt = _fifo_and_optimum(n, seed)
    plain = colgen_bound(pb, start, time_limit=60, ng=False, cover=False)
    cover = colgen_bound(pb, start, time_limit=60, ng=False, cover=True)
    assert plain.converged and cover.converged
    assert cover.lp <= plain.lp + 1e-6 * max(1.0, plain.lp)
    assert cover.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)
    counts = np.zeros(pb.n)
    for _, tasks, _, lam in cover.support:
        np.add.at(counts, list(tasks), lam)
    assert (counts >= 1 - 1e-6).all()
    for passes in (1, 3, 8):
        early = colgen_bound(pb, start, time_limit=60, max_iter=passes, cover=True)
        assert early.bound <= opt.objective + 1e-6 * max(1.0, opt.objective)


@pytest.mark.parametrize("eps,floor", [(0.05, 0.05 / 8), (0.2, 0.2)])
def test_the_bound_alone_stays_below_the_optimum_whatever_the_perturbation(monkeypatch, eps, floor):
    """The task rows' perturbation (its size and how many lifts) changes only the path of the prices: with
    tentative fixing, the bound after a few passes and at convergence stays below CP-SAT's optimum, and the
    converged LP covers every task at least once (the rows were put back at 1)."""
    import bounds.hetero_colgen as cg

    monkeypatch.setattr(cg, "PERTURB", eps)
    monkeypatch.setattr(cg, "PERTURB_FLOOR", floor)
    pb, start, opt = _fifo_and_optimum(10, 1)
    top = opt.objective + 1e-6 * max(1.0, opt.objective)
    for passes in (1, 4, 10):
        assert colgen_bound(pb, start, time_limit=60, max_iter=passes, tentative=True).bound <= top
    res = colgen_bound(pb, start, time_limit=60, ng=False, tentative=True)
    assert res.converged and res.bound <= top
    counts = np.zeros(pb.n)
    for _, tasks, _, lam in res.support:
        np.add.at(counts, list(tasks), lam)
    assert (counts >= 1 - 1e-6).all()


def test_the_perturbation_is_lifted_in_halves():
    """Each lift halves the task rows' perturbation (the same shape of draws) until it would fall below the
    floor; the next lift puts the rows back at 1."""
    from bounds.hetero_classes import GpuClass
    from bounds.hetero_colgen import _Master

    pb = hetero.generate(12, seed=5)
    g = grid(pb, 1e6)
    cls = [GpuClass(g, [j], j) for j in range(pb.m) if g.eligible[:, j].any()]
    m = _Master(len(g.tasks), cls, cover=True)
    m.perturb(0.08)
    shape = 1.0 - np.asarray(m.h.getLp().row_lower_)[:m.n]
    assert 0 < shape.max() <= 0.08 and m.perturbed
    for eps in (0.04, 0.02, 0.01):
        m.unperturb(0.01)
        low = np.asarray(m.h.getLp().row_lower_)[:m.n]
        assert np.allclose(1.0 - low, shape * eps / 0.08) and m.perturbed
    m.unperturb(0.01)
    assert not m.perturbed and np.allclose(np.asarray(m.h.getLp().row_lower_)[:m.n], 1.0)


@pytest.mark.parametrize("n,seed", [(12, 2), (30, 8)])
def test_the_incumbents_neighbours_are_real_sequences_one_move_away(n, seed):
    """The start columns next to the incumbent: each class's sequence less one task, or with one task of
    another GPU in; no task twice, timed semi-actively on the class's grid at the cost the grid gives."""
    from bounds.hetero_classes import GpuClass, _incumbent_columns, _neighbour_columns
    from heuristics.hetero import fifo

    pb = hetero.generate(n, seed=seed)
    start = fifo(pb)
    g = grid(pb, sum(pb.weight[pb.index[x.task]] * max(0.0, x.end - pb.deadline[pb.index[x.task]])
                     for x in start.assignments) + 1.0)
    cls = [GpuClass(g, [j], j) for j in range(pb.m) if g.eligible[:, j].any()]
    inc, _ = _incumbent_columns(pb, g, start, cls)
    base = {c.row: [k for k, _ in seq] for c, seq, _ in inc}
    cols = _neighbour_columns(cls, inc)
    assert cols
    for c, seq, cost in cols:
        ks = [k for k, _ in seq]
        assert len(set(ks)) == len(ks)
        ts, want = c.retime(ks)
        assert [t for _, t in seq] == ts.tolist() and cost == want
        old = base[c.row]
        if len(ks) < len(old):
            assert len(ks) == len(old) - 1 and set(ks) < set(old)
        else:
            assert len(ks) == len(old) + 1 and set(old) < set(ks) and [k for k in ks if k in set(old)] == old


def test_the_pass_before_the_deadline_is_exact():
    """The bound comes from exact passes only: where the deadline stops an unconverged column generation, the
    heuristic pass that would leave no time for another exact one is replaced by an exact pass. The time
    limit holds and the bound stays below a known schedule's cost."""
    import time

    from heuristics.hetero import fifo

    colgen_bound(hetero.generate(20, seed=27), time_limit=10)     # kernels compiled outside the timed call
    pb = hetero.generate(80, seed=27)
    start = fifo(pb)
    t = time.perf_counter()
    res = colgen_bound(pb, start, time_limit=2.0)
    assert time.perf_counter() - t <= 2.5
    assert not res.converged and res.info["heuristic_passes"] > 0
    assert res.info["final_exact"] >= 1
    assert 0.0 <= res.bound <= hetero.weighted_tardiness(pb, start) + 1e-9


@pytest.mark.parametrize("n,seed,limit", [(40, 25, 1.5), (60, 26, 3.0)])
def test_lower_bound_keeps_its_time_limit_across_restored_networks(n, seed, limit):
    """The bound alone fixes against tentative values and restores its networks when the bound passes them:
    the passes after a restore are longer, and the time limit still holds."""
    import time

    from bounds.hetero import lower_bound
    from heuristics.hetero import fifo

    pb = hetero.generate(n, seed=seed)
    start = fifo(pb)
    # a first call in a fresh checkout compiles the kernels inside its limit (docs/models/hetero.md, "numba
    # pinned"); what is timed here is the method, so every kernel is compiled first by untimed calls that run
    # to convergence (a call stopped at the limit may not reach the later phases' kernels)
    for m in (12, 20):
        small = hetero.generate(m, seed=seed)
        lower_bound(small, fifo(small), time_limit=60)
    t = time.perf_counter()
    b = lower_bound(pb, start, time_limit=limit)
    assert time.perf_counter() - t <= limit
    assert 0.0 <= b <= hetero.weighted_tardiness(pb, start) + 1e-9


def test_master_columns_count_repeats_and_dead_completions_drop_exactly_their_columns():
    """The master's matrix counts a repeated task twice and puts 1 on the class row; ``drop_dead`` removes the
    columns through a removed completion (or past the horizon), no other, never the incumbent's."""
    from bounds.hetero_colgen import GpuClass, _Master

    pb = hetero.generate(8, seed=3)
    g = grid(pb, 1e4)
    classes = [GpuClass(g, [j], r) for r, j in enumerate(range(pb.m)) if g.eligible[:, j].any()]
    master = _Master(len(g.tasks), classes)
    c = classes[-1]
    k0, k1, k2 = 0, 1, 2
    # completions the network allows: the first, second and third allowed step of each task
    t = [np.flatnonzero(c.alive[:, k]) for k in (k0, k1, k2)]
    cols = [(c, [(k0, t[0][0]), (k1, t[1][1]), (k0, t[0][2])], 5.0), (c, [(k1, t[1][0]), (k2, t[2][1])], 3.0),
            (c, [(k2, t[2][2])], 1.0), (classes[0], [], 0.0)]
    master.add(cols)
    lp = master.h.getLp()
    a = lp.a_matrix_
    starts, index, value = list(a.start_), list(a.index_), list(a.value_)
    n = len(g.tasks)
    for q, (cl, seq, cost) in enumerate(cols):
        entries = dict(zip(index[starts[q]:starts[q + 1]], value[starts[q]:starts[q + 1]]))
        want: dict = {}
        for k, _ in seq:
            want[int(cl.tasks[k])] = want.get(int(cl.tasks[k]), 0.0) + 1.0
        want[n + cl.row] = 1.0
        assert entries == want
        assert lp.col_cost_[q] == cost
    # the same columns given as pairs of arrays make the same matrix
    twin = _Master(len(g.tasks), classes)
    twin.add([(cl, (np.array([k for k, _ in seq], np.int64), np.array([u for _, u in seq], np.int64)), cost)
              for cl, seq, cost in cols])
    b = twin.h.getLp().a_matrix_
    assert (list(b.start_), list(b.index_), list(b.value_)) == (starts, index, value)
    assert [(ks.tolist(), ts.tolist()) for _, ks, ts in twin.cols] == [(ks.tolist(), ts.tolist())
                                                                     for _, ks, ts in master.cols]
    master.keep = 1
    assert master.drop_dead() == 0
    c.alive[t[2][1], k2] = False     # the second column's last completion
    c.alive[t[0][0], k0] = False     # the first (kept) column's: it stays
    assert master.drop_dead() == 1
    assert [len(ks) for _, ks, _ in master.cols] == [3, 1, 0]
    c.H = int(t[2][2]) - 1           # the third column's completion now lies past the horizon
    assert master.drop_dead() == 1
    assert [len(ks) for _, ks, _ in master.cols] == [3, 0]


def test_batched_retiming_and_column_arrays_match_the_one_column_forms():
    """``GpuClass.retime_all`` is ``retime`` of each sequence, and ``class_column_arrays`` lists what
    ``class_columns`` gives, for 2-cycle and ng labels."""
    from bounds import hetero_ng
    from bounds.hetero_classes import GpuClass, class_column_arrays, class_columns

    pb = hetero.generate(14, seed=3)
    g = grid(pb, 1e4)
    c = GpuClass(g, [0], 0)
    rng = np.random.default_rng(5)
    seqs = [rng.choice(len(c.tasks), size=rng.integers(1, 6)) for _ in range(20)]
    ts, costs = c.retime_all(np.concatenate(seqs).astype(np.int64), np.array([len(x) for x in seqs], np.int64))
    at = 0
    for q, seq in enumerate(seqs):
        want_ts, want_cost = c.retime(seq)
        assert ts[at:at + len(seq)].tolist() == want_ts.tolist() and costs[q] == want_cost
        at += len(seq)
    pi = rng.uniform(0.0, 3.0 * float(c.W.max()) * c.H / len(c.tasks), len(c.tasks))
    c.N = hetero_ng.neighbourhoods(c.D, 4)
    ng = c.forward(c.alive, pi)
    assert isinstance(ng, hetero_ng.NgLabels)
    for lab in (forward(c.P, c.A, c.alive, c.W, c.D, pi), ng):
        cols = class_columns(lab, c, pi, 8)
        ks, ts, lens, costs = class_column_arrays(lab, c, 8)
        assert len(cols) == len(lens) > 0
        at = 0
        for (_, seq, cost), m, got in zip(cols, lens.tolist(), costs.tolist()):
            assert list(zip(ks[at:at + m].tolist(), ts[at:at + m].tolist())) == seq and got == cost
            at += m
