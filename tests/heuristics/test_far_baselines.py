"""Tests of the Sec. 6.5 baselines (heuristics/far_baselines.py) against the independent checker."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far_baselines as fb
from instances import mig
from instances.errors import InstanceError

WORKLOADS = sorted(mig.SCALING_PRESETS)
TIMES = sorted(mig.TIME_PRESETS)


def _problems():
    return st.builds(
        lambda n, gpu, wl, tm, seed, reconf: (lambda p: p if reconf else p.without_reconfiguration())(
            mig.generate(n, gpu, wl, tm, seed)),
        st.integers(1, 40), st.sampled_from(["A30", "A100"]), st.sampled_from(WORKLOADS),
        st.sampled_from(TIMES), st.integers(0, 10_000), st.booleans())


@settings(max_examples=40)
@given(_problems())
def test_every_baseline_is_feasible(problem):
    scheds = {"miso": fb.miso_opt(problem), "miso_slices": fb.miso_opt(problem, "slices"),
              "best": fb.fixpart_best(problem), "whole": fb.fixpart_whole(problem),
              "ones": fb.fixpart_ones(problem)}
    for name, s in scheds.items():
        assert mig.check(problem, s) == [], name
        # the checker with reconfiguration: ops are present exactly when they cost time
        assert bool(s.reconfigurations) == problem.gpu.reconfigurable, name


@settings(max_examples=25)
@given(_problems())
def test_fixpart_every_partition_feasible_and_best_is_min(problem):
    every = fb.fixpart_all(problem)
    assert len(every) == len(problem.gpu.partitions())
    best = fb.fixpart_best(problem)
    for part, s in every.items():
        assert mig.check(problem, s) == []
        assert {r.placement for r in s.tasks} <= set(part)
        assert best.makespan <= s.makespan + 1e-9


@settings(max_examples=25)
@given(_problems())
def test_fixpart_creates_only_at_start_serialised_and_never_destroys(problem):
    for part in problem.gpu.partitions():
        s = fb.fixpart(problem, part)
        ops = sorted(s.reconfigurations, key=lambda o: o.start)
        assert all(o.op == "create" for o in ops)
        if problem.gpu.reconfigurable:  # one create per used instance
            assert len(ops) == len({r.placement for r in s.tasks})
        t = 0.0
        for o in ops:  # back to back from t = 0
            assert o.start == pytest.approx(t)
            t = o.end


def test_hand_checked_fixpart_a30():
    # a: 4/2/1 s, b: 2/1.5/1 s, c: 1/1/1 s on (2@0, 2@2); creates 0.12 s each.
    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.0}), mig.Task("b", {1: 2.0, 2: 1.5, 4: 1.0}),
                            mig.Task("c", {1: 1.0, 2: 1.0, 4: 1.0})])
    s = fb.fixpart(p, ["2@0", "2@2"])
    got = {r.task: (r.placement.name, round(r.start, 6), round(r.end, 6)) for r in s.tasks}
    # a -> 2@0 after its create (0-0.12); b -> 2@2 created 0.12-0.24; c -> 2@2 free at 1.74 < 2.12
    assert got == {"a": ("2@0", 0.12, 2.12), "b": ("2@2", 0.24, 1.74), "c": ("2@2", 1.74, 2.74)}
    assert s.makespan == pytest.approx(2.74)
    assert mig.check(p, s) == []
    # FixPart(4): one after another after one create of 0.13 s
    assert fb.fixpart_whole(p).makespan == pytest.approx(0.13 + 3.0)


def test_hand_checked_miso_a30():
    # Speed-ups: a (1: 4, 2: 1, 4: 0.5) -> 4 on size 2, 8 on size 4; b, c, d flat (speed-up 1 everywhere).
    flat = {1: 3.0, 2: 3.0, 4: 3.0}
    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 1.0, 4: 0.5}), mig.Task("b", flat),
                            mig.Task("c", flat), mig.Task("d", flat)])
    s = fb.miso_opt(p)
    # Round 1: partitions score {4}: 8; {2,2}: 4+1; {2,1,1}: 4+1+1 = 6; {1,1,2}: 6; {1,1,1,1}: 4 -> {4@0}.
    # Round 2 (b, c, d): {1,1,1,1} / {2,1,1} score 3; the first in partitions() order wins.
    by = s.by_task()
    assert by["a"].placement.name == "4@0"
    assert by["a"].start == pytest.approx(0.13)  # after create 4@0
    rest = {by[t].placement.size for t in "bcd"}
    assert len({by[t].placement for t in "bcd"}) == 3
    first_round_2 = next(part for part in p.gpu.partitions() if len(part) >= 3)
    assert {by[t].placement for t in "bcd"} <= set(first_round_2)
    # barrier: round 2 starts after a ends and 4@0 is destroyed (0.10 s), creates serialised
    assert min(by[t].start for t in "bcd") >= by["a"].end + 0.10 + min(p.gpu.create_time[z] for z in rest) - 1e-9
    assert mig.check(p, s) == []


def test_miso_prefers_sum_of_speedups_over_balance():
    # Seven flat tasks and one that scales: MISO takes seven 1-slice instances (sum 7) for the first
    # seven tasks even though task 0 would gain from a bigger instance.
    flat = {1: 10.0, 2: 10.0, 3: 10.0, 4: 10.0, 7: 10.0}
    tasks = [mig.Task("s", {1: 70.0, 2: 36.0, 3: 24.0, 4: 18.0, 7: 10.5})] + [mig.Task(f"f{i}", flat) for i in range(6)]
    p = mig.Problem("A100", tasks)
    s = fb.miso_opt(p)
    # best: s on 7 alone scores 70/10.5 = 6.67 < 7 (all on size 1) but {4, 1, 1, 1}: 70/18 + 3 = 6.89;
    # {2,2,2,1}: 70/36+3 = 4.9 ... all-ones (7.0) wins
    assert {r.placement.size for r in s.tasks} == {1}
    assert mig.check(p, s) == []


def test_memory_limited_tasks():
    # A task needing 20 GB cannot use 1- or 2-slice A100 instances (5 / 10 GB).
    big = mig.Task("big", {3: 9.0, 4: 8.0, 7: 5.0}, memory_gb=20.0)
    small = mig.Task("small", {1: 4.0, 2: 2.0, 3: 1.5, 4: 1.2, 7: 1.0})
    p = mig.Problem("A100", [small, big, small.__class__("s2", small.times)])
    for s in (fb.miso_opt(p), fb.miso_opt(p, "slices"), fb.fixpart_best(p), fb.fixpart_whole(p)):
        assert mig.check(p, s) == []
        assert s.by_task()["big"].placement.size >= 3
    with pytest.raises(InstanceError, match="big"):
        fb.fixpart_ones(p)
    assert len(fb.fixpart_all(p)) < len(p.gpu.partitions())


def test_bad_partition_and_mode():
    p = mig.generate(3, "A100", seed=0)
    with pytest.raises(InstanceError, match="share slices"):
        fb.fixpart(p, ["4@0", "3@0"])
    with pytest.raises(InstanceError):
        fb.fixpart(p, ["5@0"])
    with pytest.raises(InstanceError, match="repartition"):
        fb.miso_opt(p, "nope")


def test_workload_releases_respected():
    w = mig.generate_workload([5, 5], [0.0, 30.0], "A100", seed=4)
    for s in (fb.miso_opt(w), fb.fixpart_best(w), fb.fixpart_ones(w)):
        assert mig.check(w, s) == []


@pytest.mark.slow
@settings(max_examples=300)
@given(st.integers(1, 60), st.sampled_from(["A30", "A100", "H100"]), st.sampled_from(WORKLOADS),
       st.sampled_from(TIMES), st.integers(0, 10**6), st.booleans())
def test_every_baseline_is_feasible_wide_sweep(n, gpu, wl, tm, seed, reconf):
    problem = mig.generate(n, gpu, wl, tm, seed)
    problem = problem if reconf else problem.without_reconfiguration()
    for s in (fb.miso_opt(problem), fb.miso_opt(problem, "slices"), *fb.fixpart_all(problem).values()):
        assert mig.check(problem, s) == []
