"""The compiled local search on per-GPU sequences (several GPUs, arrivals)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import hetero as heur
from heuristics import hetero_local as hl
from instances import hetero
from instances.errors import OptionError
from instances.hetero import GPU, HeteroProblem, Task


def _moved(seqs, move):
    """The sequences after ``move``, applied on plain lists."""
    kind, g, i, h, j = move
    out = [list(s) for s in seqs]
    if kind == "swap":
        out[g][i], out[h][j] = out[h][j], out[g][i]
    else:
        t = out[g].pop(i)
        out[h].insert(j, t)
    return out


def _all_moves(pb, seqs):
    """Every relocation and swap that keeps each task on a GPU it fits."""
    for g, s in enumerate(seqs):
        for i, t in enumerate(s):
            for h in range(pb.m):
                if not pb.eligible[t, h]:
                    continue
                for j in range(len(seqs[h]) + (h != g)):
                    if h != g or j != i:
                        yield ("relocate", g, i, h, j)
                for j, u in enumerate(seqs[h]):
                    if (h, j) != (g, i) and pb.eligible[u, g]:
                        yield ("swap", g, i, h, j)


def _random_sequences(pb, rng):
    seqs = [[] for _ in range(pb.m)]
    for i in rng.permutation(pb.n):
        ok = [g for g in range(pb.m) if pb.eligible[i, g]]
        if ok:
            seqs[ok[rng.integers(len(ok))]].append(int(i))
    return seqs


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 14), seed=st.integers(0, 10**6), pick=st.integers(0, 10**9))
def test_incremental_move_cost_equals_plain_evaluation(n, seed, pick):
    import numpy as np

    pb = hetero.generate(n, gpus=("T4", "V100", "A100-80GB"), seed=seed)
    rng = np.random.default_rng(pick)
    seqs = _random_sequences(pb, rng)
    moves = list(_all_moves(pb, seqs))
    if not moves:
        return
    for k in rng.choice(len(moves), size=min(25, len(moves)), replace=False):
        move = moves[int(k)]
        after = _moved(seqs, move)
        expected = heur.objective(pb, after)
        assert hl.move_cost(pb, seqs, move) == pytest.approx(expected, rel=1e-9, abs=1e-6)
        assert hetero.weighted_tardiness(pb, hetero.evaluate_sequences(pb, after)) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(6))
def test_local_search_reaches_a_local_optimum_no_worse_than_its_start(seed):
    import numpy as np

    pb = hetero.generate(12, seed=300 + seed)
    start = _random_sequences(pb, np.random.default_rng(seed))
    out = hl.local_search(pb, start, seed=seed)
    assert sorted(i for s in out for i in s) == sorted(i for s in start for i in s)
    assert not hetero.check(pb, hetero.evaluate_sequences(pb, out))
    value = heur.objective(pb, out)
    assert value <= heur.objective(pb, start) + 1e-9
    # brute force over the whole neighbourhood: no move improves
    for move in _all_moves(pb, out):
        assert heur.objective(pb, _moved(out, move)) >= value - 1e-6 * max(1.0, value)


def test_ils_schedules_pass_the_checker_and_report_unfit_tasks():
    for n, gpus, unfit in [(30, ("T4", "V100", "A100-80GB"), 2), (25, ("T4", "T4", "H100", "L4"), 0),
                           (15, ("T4",), 1)]:
        pb = hetero.generate(n, gpus=gpus, seed=7, unfit=unfit)
        s = heur.ils(pb, time_limit=None, max_iter=50, seed=3)
        assert hetero.check(pb, s) == []
        assert sorted(s.unscheduled) == sorted(pb.unfit)
        assert len(s.assignments) == n


def test_ils_is_deterministic_without_time_limit():
    pb = hetero.generate(40, seed=21)
    a = heur.ils(pb, time_limit=None, max_iter=150, seed=5)
    b = heur.ils(pb, time_limit=None, max_iter=150, seed=5)
    assert a == b
    assert hetero.weighted_tardiness(pb, a) <= hetero.weighted_tardiness(pb, heur.greedy(pb))


def test_ils_without_a_seed_draws_one():
    # seed=None means a fresh random walk on every path of ils, as numpy's default_rng(None)
    pb = hetero.generate(20, seed=21)
    s = heur.ils(pb, time_limit=None, max_iter=20, seed=None)
    assert hetero.check(pb, s) == []
    assert hetero.weighted_tardiness(pb, s) <= hetero.weighted_tardiness(pb, heur.greedy(pb))


def test_ils_walk_from_a_start_never_worsens_it_and_rejects_bad_starts():
    pb = hetero.generate(30, seed=22)
    start = heur.fifo(pb)
    s = heur.ils(pb, time_limit=None, max_iter=20, start=start)
    assert hetero.check(pb, s) == []
    assert hetero.weighted_tardiness(pb, s) <= hetero.weighted_tardiness(pb, start)
    partial = hetero.Schedule(start.assignments[1:], list(start.unscheduled))
    with pytest.raises(OptionError):
        heur.ils(pb, time_limit=None, max_iter=5, start=partial)


def test_ils_keeps_the_time_limit():
    import time

    pb = hetero.generate(120, seed=23)
    heur.ils(pb, time_limit=None, max_iter=1)  # loads the compiled kernels
    t = time.perf_counter()
    heur.ils(pb, time_limit=0.3)
    assert time.perf_counter() - t < 0.3 + 0.5


def test_ils_reaches_zero_and_handles_a_single_task():
    pb = HeteroProblem((Task("a", 2, memory=4, deadline=50, arrival=3), Task("b", 2, memory=4, deadline=50)),
                       (GPU("g0", 1.0, 16), GPU("g1", 2.0, 16)))
    assert hetero.weighted_tardiness(pb, heur.ils(pb, time_limit=None, max_iter=5)) == 0
    one = HeteroProblem((Task("a", 5, memory=4, deadline=1, arrival=2),), (GPU("g0", 1.0, 16), GPU("g1", 2.0, 16)))
    s = heur.ils(one, time_limit=None, max_iter=5)
    assert hetero.check(one, s) == [] and hetero.weighted_tardiness(one, s) == pytest.approx(3.5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ils_is_never_below_the_proven_optimum(seed):
    import milp

    pb = hetero.generate(9, seed=400 + seed)
    res = milp.solve_optimal(pb, time_limit=60)
    assert res.status.name == "OPTIMAL"
    value = hetero.weighted_tardiness(pb, heur.ils(pb, time_limit=None, max_iter=200, seed=seed))
    assert value >= res.objective - 1e-6 * max(1.0, res.objective)
    # small instances: the walk finds the optimum
    assert value == pytest.approx(res.objective, rel=1e-9, abs=1e-6)
