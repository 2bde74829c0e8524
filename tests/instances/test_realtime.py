"""Real-time partitioning problem data: conflict rule, execution times, Lemmas 1-2, EDF tests, generator,
checker and I/O."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instances import realtime as rt
from instances.errors import InstanceError


def task(name, kind, a, T=100.0, D=None, beta=None, k=None):
    """A task built with the Sec. 7.1 rules (b = beta a, conflict factor k)."""
    beta = rt.B_FACTOR[kind] if beta is None else beta
    k = rt.K_CONFLICT[kind] if k is None else k
    return rt.Task(name, T, T if D is None else D, kind, a, beta * a, k * a, k * beta * a)


def test_conflict_rule_sec_4_2_example():
    # Sec. 4.2: 10 kernels in one partition, 9 compute intensive: the memory kernel has no
    # conflict, the nine compute kernels are in conflict.
    flags = rt.in_conflict(np.array([False] * 9 + [True]))
    assert flags.tolist() == [True] * 9 + [False]
    # one task of each type: nobody in conflict; two memory tasks: both
    assert rt.in_conflict(np.array([True, False])).tolist() == [False, False]
    assert rt.in_conflict(np.array([True, True, False])).tolist() == [True, True, False]


def test_execution_times_by_hand_sec_7_1():
    # compute task, a = 50: b = 0.02 * 50 = 1; on 2 SMs: 50/2 + 1 = 26; conflict: 1.2 * 26
    # memory task,  a = 50: b = 0.1 * 50 = 5;  on 2 SMs: 25 + 5 = 30;   conflict: 2.3 * 30
    c, m, c2 = task("c", "compute", 50), task("m", "memory", 50), task("c2", "compute", 10)
    p = rt.RealtimeProblem((c, m, c2), sms=4)
    assert rt.wcets(p, [0, 1], 2) == pytest.approx([26.0, 30.0])
    assert rt.wcets(p, [0, 1, 2], 2) == pytest.approx([1.2 * 26, 30.0, 1.2 * (5 + 0.2)])
    assert rt.utilization(p, [0, 1], 1) == pytest.approx((51 + 55) / 100)


def test_lemma_2_by_hand_and_lemma_1():
    # compute a = 300, D = 75: 300/m + 6 <= 75  <=>  m >= 4.35 -> 5 SMs
    p = rt.RealtimeProblem((task("k", "compute", 300, T=100, D=75),), sms=68)
    assert rt.lemma2_min_size(p, 0) == 5
    assert p.tasks[0].wcet(5, False) <= 75 < p.tasks[0].wcet(4, False)
    # b alone exceeds D: no size works
    q = rt.RealtimeProblem((task("k", "memory", 800, T=100, D=75),), sms=68)
    assert rt.lemma2_min_size(q, 0) is None
    # Lemma 1: sum C^n(1)/T = 2 * 1.02 * 1.5 > M = 3 -> not schedulable
    two = rt.RealtimeProblem((task("a", "compute", 150), task("b", "compute", 150)), sms=3)
    assert rt.lemma1_unschedulable(two)
    assert not rt.lemma1_unschedulable(rt.RealtimeProblem(two.tasks, sms=4))


def test_demand_test_by_hand():
    # (C, D, T) = (2, 3, 4), (2, 4, 8): density 2/3 + 1/2 > 1, but dbf(t) <= t at the
    # deadlines 3, 4, 7, 11, 12 (2, 4, 6, 8, 10) -> EDF-schedulable.
    C, D, T = np.array([2.0, 2.0]), np.array([3.0, 4.0]), np.array([4.0, 8.0])
    assert not rt.density_test(C, D)
    assert rt.demand_test(C, D, T)
    assert rt.simulate_edf(C, D, T) is None
    # C2 = 3: dbf(4) = 2 + 3 = 5 > 4 -> unschedulable (U = 0.875 <= 1)
    C = np.array([2.0, 3.0])
    assert not rt.demand_test(C, D, T)
    assert rt.simulate_edf(C, D, T) is not None


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from([4, 5, 6, 8, 10, 12, 20]),
                          st.floats(0.3, 1.0), st.floats(0.05, 1.0)), min_size=1, max_size=5))
def test_density_implies_demand_and_demand_matches_simulation(spec):
    T = np.array([float(t) for t, _, _ in spec])
    D = np.array([max(0.5, round(t * f, 3)) for t, f, _ in spec])
    C = np.array([round(d * c * 0.6, 4) for d, (_, _, c) in zip(D, spec)])
    dens, dem = rt.density_test(C, D), rt.demand_test(C, D, T)
    if dens:
        assert dem
    assert dem == (rt.simulate_edf(C, D, T) is None)


def test_density_implies_demand_on_generated_partitions():
    p = rt.generate(n=12, utilization=3.0, sms=8, seed=5)
    for m in range(1, 9):
        for size in (2, 3, 5):
            for start in range(0, 12 - size, 3):
                idx = list(range(start, start + size))
                if rt.schedulable(p, idx, m, "density"):
                    assert rt.schedulable(p, idx, m, "demand")


def test_generator_follows_sec_7_1():
    p = rt.generate(n=200, utilization=40, sms=68, prm=0.5, seed=11)
    assert p == rt.generate(n=200, utilization=40, sms=68, prm=0.5, seed=11)
    assert p != rt.generate(n=200, utilization=40, sms=68, prm=0.5, seed=12)
    assert sum(t.a_n / t.period for t in p.tasks) == pytest.approx(40)
    kinds = [t.kind for t in p.tasks]
    assert 60 < kinds.count(rt.MEMORY) < 140
    for t in p.tasks:
        assert t.period in rt.PERIODS
        assert t.deadline == pytest.approx(0.75 * t.period)
        assert t.b_n == pytest.approx(rt.B_FACTOR[t.kind] * t.a_n)
        k = rt.K_CONFLICT[t.kind]
        assert (t.a_c, t.b_c) == pytest.approx((k * t.a_n, k * t.b_n))
        # raising rule: a base execution time below 1 only at the largest period
        assert t.a_n >= 1.0 or t.period == max(rt.PERIODS)
        assert rt.lemma2_min_size(p, p.tasks.index(t)) is not None
    assert 4000 % p.hyperperiod == 0
    assert {t.kind for t in rt.generate(n=20, utilization=5, prm=0.0, seed=0).tasks} == {rt.COMPUTE}
    assert {t.kind for t in rt.generate(n=20, utilization=5, prm=1.0, seed=0).tasks} == {rt.MEMORY}


def test_period_raising_rule():
    # 200 tasks at U = 2: u ~ 0.01, so a = u T < 1 at T = 50 and periods get raised
    p = rt.generate(n=200, utilization=2, seed=3)
    assert np.mean([t.period for t in p.tasks]) > np.mean(rt.PERIODS[:7])
    assert all(t.a_n >= 1.0 or t.period == 4000 for t in p.tasks)


def test_generator_rejects_bad_arguments():
    with pytest.raises(InstanceError, match="utilization"):
        rt.generate(n=5, utilization=-1)
    with pytest.raises(InstanceError, match="prm"):
        rt.generate(n=5, utilization=1, prm=2)
    with pytest.raises(InstanceError, match="UUniFast"):
        rt.generate(n=2, utilization=60, sms=68)   # two tasks cannot carry 60


def test_validation_names_task_and_field():
    with pytest.raises(InstanceError, match=r"task k: field deadline"):
        rt.RealtimeProblem((rt.Task("k", 10, 12, "compute", 1, 0, 1, 0),))
    with pytest.raises(InstanceError, match=r"task k: field type"):
        rt.RealtimeProblem((rt.Task("k", 10, 10, "gpu", 1, 0, 1, 0),))
    with pytest.raises(InstanceError, match=r"task k: field a_c"):
        rt.RealtimeProblem((rt.Task("k", 10, 10, "memory", 2, 0, 1, 0),))
    with pytest.raises(InstanceError, match=r"field sms"):
        rt.RealtimeProblem((rt.Task("k", 10, 10, "memory", 2, 0, 2, 0),), sms=0)
    with pytest.raises(InstanceError, match=r"task k: field name"):
        rt.RealtimeProblem((rt.Task("k", 10, 10, "memory", 2, 0, 2, 0),) * 2)


def test_load_save_and_errors(tmp_path):
    p = rt.generate(n=6, utilization=3, seed=1)
    path = tmp_path / "rt.json"
    rt.save(p, path)
    assert rt.load(path) == p
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sms": 8, "tasks": [{"name": "x", "period": 10, "type": "memory"}]}))
    with pytest.raises(InstanceError, match=r"bad.json: task x: field a_n"):
        rt.load(bad)


def test_checker_rules():
    ts = (task("c", "compute", 60, D=75), task("m", "memory", 60, D=75), task("c2", "compute", 10))
    p = rt.RealtimeProblem(ts, sms=4)
    good = rt.Solution((rt.Partition(2, (0, 1)), rt.Partition(1, (2,))))
    assert rt.check(p, good) == []
    assert rt.Solution.from_json(good.to_json(p), p) == good
    assert any("not allocated" in e for e in rt.check(p, rt.Solution((rt.Partition(2, (0, 1)),))))
    dup = rt.Solution((rt.Partition(2, (0, 1)), rt.Partition(1, (1, 2))))
    assert any("allocated to partitions" in e for e in rt.check(p, dup))
    big = rt.Solution((rt.Partition(4, (0, 1)), rt.Partition(1, (2,))))
    assert any("> M = 4" in e for e in rt.check(p, big))
    # c and m on 1 SM: utilisation (61.2 + 66) / 100 > 1
    over = rt.Solution((rt.Partition(1, (0, 1)), rt.Partition(1, (2,))))
    assert any("utilisation > 1" in e for e in rt.check(p, over))
    # the hand example of test_demand_test_by_hand with C2 = 3: U = 0.875 but a job is late
    q = rt.RealtimeProblem((task("x", "compute", 2, T=4, D=3, beta=0),
                            task("y", "memory", 3, T=8, D=4, beta=0)), sms=2)
    late = rt.Solution((rt.Partition(1, (0, 1)),))
    assert any("task y misses its deadline (job released at 0.0)" in e for e in rt.check(q, late))
    assert rt.check(q, rt.Solution((rt.Partition(1, (0,)), rt.Partition(1, (1,))))) == []
    # density check mode is stricter than EDF
    assert rt.check(p, good, test="density") == []


def test_efficiency_bounds():
    p = rt.generate(n=20, utilization=10, seed=2)
    best, worst = rt.utilization_bounds(p)
    assert best < worst
    one = rt.Solution((rt.Partition(68, tuple(range(20))),))
    assert rt.efficiency(p, one) == pytest.approx(0.0)
    singles = rt.Solution(tuple(rt.Partition(1, (i,)) for i in range(20)))
    assert rt.efficiency(p, singles) == pytest.approx(1.0)


@pytest.mark.parametrize("field", ["period", "deadline", "a_n", "b_n", "a_c", "b_c"])
def test_times_beyond_the_documented_maximum_are_one_line(field):
    from instances.errors import InstanceError

    d = rt.generate(n=3, utilization=1.0, seed=1).to_dict()
    d["tasks"][0].update({"period": 1e300, "deadline": 1e300} if field == "period" else {field: 1e300})
    with pytest.raises(InstanceError, match=f"field {field}: must be at most 1e\\+12") as info:
        rt.from_dict(d)
    assert "\n" not in str(info.value)
