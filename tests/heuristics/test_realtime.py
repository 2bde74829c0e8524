"""Real-time partitioning heuristics: Algorithm 1-3 by hand, feasibility of every solution, never better
than the exact optimum, ACT semantics, 1G."""

import itertools

import pytest

from heuristics import realtime as h
from instances import realtime as rt
from milp.realtime import solve

NAMES = ["SMS_ACT", "SMS_INA", "BF_ACT", "BF_INA"]


def hand_problem(sms):
    """Three tasks with D = T = 100 and b = 0, so a partition of m SMs is schedulable iff
    sum_i C_i(m) <= 100 (the density and demand tests coincide; conflicts use k of Sec. 7.1).

    Lemma 2 sizes: t0 (compute, a=150): 150/m <= 100 -> 2; t1 (memory, a=150) -> 2;
    t2 (memory, a=60) -> 1.  Pi = 5.
    """
    def t(name, kind, a):
        k = rt.K_CONFLICT[kind]
        return rt.Task(name, 100, 100, kind, a, 0.0, k * a, 0.0)
    return rt.RealtimeProblem((t("t0", "compute", 150), t("t1", "memory", 150),
                               t("t2", "memory", 60)), sms=sms)


@pytest.mark.parametrize("name", NAMES)
def test_algorithm_1_hand_worked(name):
    # par_list in decreasing workload: t0 (1.5), t1 (1.5), t2 (0.6); P = t0.
    # merge(t0, t1): no conflict; sizes in [2, 3]: on 3 SMs 50 + 50 <= 100, on 2: 150 > 100 -> 3.
    # merge(t0, t2): no conflict; sizes in [2, 2]: 75 + 30 = 105 > 100 -> invalid.
    # SMS takes the only valid merge; BF tries t2 first (workload 2.1 < 3.0), fails, then t1.
    # Pi = 3 + 1 = 4 <= M = 4: success.
    res = h.run(hand_problem(4), name)
    assert res.success
    assert sorted((p.size, p.tasks) for p in res.solution.partitions) == [(1, (2,)), (3, (0, 1))]
    # Asked to go below 4 SMs, the next merge {t0,t1} + {t2} puts two memory tasks together:
    # 150/m + 2.3 (150 + 60)/m <= 100 needs m >= 6.33 > 3 + 1 - 1 -> invalid, nothing left.
    al = h.Allocator(hand_problem(4), "sms" if name.startswith("SMS") else "bf",
                     exhaustive=name.endswith("ACT"))
    res3 = al.run(target=3)
    assert res3.solution.total_sms == 4
    if name.endswith("ACT"):
        # ACT found beforehand that t2 merges with neither t0 (105 > 100) nor t1 (conflict)
        assert al.forbidden_tasks[2] == 0b011 and al.forbidden_merges == set()
    else:
        failed = {frozenset((frozenset({0, 1}), frozenset({2})))}
        if name == "BF_INA":   # BF tried t0 + t2 first (Algorithm 1, line 14)
            failed.add(frozenset((frozenset({0}), frozenset({2}))))
        assert al.forbidden_merges == failed
    # On M = 3 Lemma 1 already rejects it: sum C^n(1)/T = 1.5 + 1.5 + 0.6 = 3.6 > 3.
    assert h.run(hand_problem(3), name).reason == "lemma1"


def test_hand_example_exact_optimum():
    # optimum by hand: {t0,t1} on 3 + {t2} on 1 = 4 ({t0,t2} needs 3, {t1,t2} conflicts)
    for test in rt.TESTS:
        assert solve(hand_problem(68), backend="enumerate", test=test).objective == 4
    assert str(solve(hand_problem(3), backend="enumerate").status) == "INFEASIBLE"


def test_merge_binary_search_matches_linear_scan():
    p = rt.generate(n=30, utilization=20, seed=4)
    parts = h.init_partitions(p)
    for a, b in itertools.combinations(parts[:12], 2):
        got = h.merge(p, a, b)
        linear = None
        for m in range(max(a.size, b.size), a.size + b.size):   # Algorithm 2 as printed
            if rt.schedulable(p, a.tasks + b.tasks, m):
                linear = m
                break
        assert (got.size if got else None) == linear


@pytest.mark.parametrize("n,util", [(30, 20), (50, 40), (50, 46)])
def test_every_solution_is_feasible(n, util):
    for seed in range(2):
        p = rt.generate(n=n, utilization=util, seed=seed)
        for name in NAMES:
            for test in rt.TESTS:
                res = h.run(p, name, test=test)
                assert res.solution is not None
                assert sorted(i for q in res.solution.partitions for i in q.tasks) == list(range(n))
                if res.success:
                    assert rt.check(p, res.solution) == []
                    if test == "density":
                        assert rt.check(p, res.solution, test="density") == []
                else:
                    assert res.solution.total_sms > p.sms
                # every partition is schedulable at every step (Sec. 5.1), also on failure, and
                # minimal: Lemma 2 sizes are minimal and Algorithm 2 starts at max(|P1|, |P2|),
                # which never exceeds the union's minimum
                for q in res.solution.partitions:
                    assert rt.schedulable(p, q.tasks, q.size, test)
                    assert q.size == 1 or not rt.schedulable(p, q.tasks, q.size - 1, test)


@pytest.mark.parametrize("seed", range(4))
def test_heuristics_never_beat_the_exact_optimum(seed):
    p = rt.generate(n=7, utilization=3 + 2 * seed, sms=68, seed=seed)
    opt = {test: solve(p, backend="enumerate", test=test, capacity=False).objective
           for test in rt.TESTS}
    assert opt["demand"] <= opt["density"]
    for name in NAMES:
        for test in rt.TESTS:
            res = h.run(p, name, test=test, target=0)
            assert res.success
            assert rt.check(p, res.solution) == []
            assert res.solution.total_sms >= opt[test]


def test_act_never_allocates_a_forbidden_pair_together():
    p = rt.generate(n=40, utilization=30, seed=7)
    al = h.Allocator(p, "sms", exhaustive=True)
    res = al.run(target=0)
    pairs = [(i, j) for i in range(p.n) for j in range(p.n) if al.forbidden_tasks[i] >> j & 1]
    assert pairs, "the instance should have non-mergeable pairs"
    for q in res.solution.partitions:
        for i, j in itertools.combinations(q.tasks, 2):
            assert not al.forbidden_tasks[i] >> j & 1


def test_one_gpu_baseline():
    p = rt.generate(n=10, utilization=2, seed=0)
    res = h.run(p, "1G")
    assert res.success == rt.schedulable(p, range(10), p.sms)
    assert [q.size for q in res.solution.partitions] == [68]
    if res.success:
        assert rt.check(p, res.solution) == []
    # a heavier set: EDF on one 68-SM partition fails although the fluid bound holds
    q = rt.generate(n=50, utilization=20, seed=0)
    assert not h.run(q, "1G").success and h.one_gpu_fluid(q)


def test_rejections_and_errors():
    heavy = rt.RealtimeProblem(hand_problem(1).tasks, sms=1)   # Lemma 1: 3.6 > 1
    assert h.run(heavy, "SMS_INA").reason == "lemma1"
    big = rt.RealtimeProblem((rt.Task("x", 100, 75, "memory", 100, 80, 230, 184),), sms=68)
    assert h.run(big, "BF_ACT").reason == "lemma2"
    with pytest.raises(ValueError, match="unknown heuristic"):
        h.run(big, "FF")
    with pytest.raises(ValueError, match="schedulability test"):
        h.run(big, "BF_ACT", test="rta")
