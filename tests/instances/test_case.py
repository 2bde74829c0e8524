"""instances.case: configurations (Table 1), generator (Sec. 3), validation and the independent checker."""

import dataclasses

import pytest

from instances.errors import OptionError

from instances import case
from instances.case import Hold, Job, JobRun, Slowdown, Task, TaskRun, Trace, Workload, check, custom_config


def two_instances():
    return custom_config("A30", [[(1, 0), (1, 1)]], name="two")


def test_table1_configurations():
    assert [len(case.config(k).instances) for k in "ABCD"] == [4, 8, 16, 5]
    assert [case.config(k).batch_size for k in "ABCD"] == [32, 64, 128, 32]
    assert {i.memory_gb for k in "ABC" for i in case.config(k).instances} == {6.0}
    d = case.config("D")
    assert sorted(i.memory_gb for i in d.instances) == [5.0, 5.0, 5.0, 10.0, 10.0]
    assert d.total_memory_gb == 35.0
    # Sec. 3.1 workers: 4 per 1g, 8 per 2g for CASE; one per instance for Slurm
    assert (d.workers_case, d.workers_slurm) == (28, 5)
    assert (case.config("C").workers_case, case.config("C").workers_slurm) == (64, 16)


def test_overlapping_layout_and_unknown_config_rejected():
    with pytest.raises(case.CaseError, match="share a slice"):
        custom_config("A30", [[(2, 0), (1, 1)]])
    with pytest.raises(case.CaseError, match="unknown configuration"):
        case.config("E")


@pytest.mark.parametrize("ratio", case.RATIOS)
def test_generator_ratio_and_reproducible(ratio):
    a, b = map(int, ratio.split(":"))
    w = case.generate("B", ratio, seed=7)
    assert w.n == 64
    assert sum(j.isolated for j in w.jobs) == round(64 * a / (a + b))
    assert case.generate("B", ratio, seed=7) == w
    assert case.generate("B", ratio, seed=8) != w


@pytest.mark.parametrize("small", [False, True])
def test_generator_a30_memory_ranges(small):
    w = case.generate("C", "1:1", seed=3, small=small)
    iso = [j.footprint_gb for j in w.jobs if j.isolated]
    non = [j.footprint_gb for j in w.jobs if not j.isolated]
    assert 1.5 <= min(iso) and max(iso) <= 2.5
    assert (0.3 if small else 1.0) <= min(non) and max(non) <= 6.0
    if small:
        assert min(non) < 1.0  # the Figure 2 range is really used
    for j in w.jobs:
        assert max(t.memory_gb for t in j.tasks) == pytest.approx(j.footprint_gb)
        assert j.kind in (case.ISOLATED_POOL if j.isolated else case.NONISOLATED_POOL)


def test_generator_a100_large_fractions():
    # 2/5 of isolated and 7/15 of non-isolated jobs have 5-10 GB footprints (Sec. 3.3)
    iso = [j for s in range(20) for j in case.generate("D", "1:0", seed=s).jobs]
    non = [j for s in range(20) for j in case.generate("D", "0:1", seed=s).jobs]
    big_iso = sum(j.footprint_gb > 5 for j in iso) / len(iso)
    big_non = sum(j.footprint_gb > 5 for j in non) / len(non)
    assert abs(big_iso - 2 / 5) < 0.06 and abs(big_non - 7 / 15) < 0.06
    assert max(j.footprint_gb for j in iso + non) <= 10.0


def test_eligible_instances_class_and_fit():
    w = case.generate("D", "1:0", n=6, seed=0)
    small = Job("s", (Task(3.0, 10, 1.0),), True)
    big = Job("b", (Task(7.0, 10, 1.0),), True)
    w = dataclasses.replace(w, jobs=(small, big))
    assert {i.memory_gb for i in case.eligible_instances(w, small)} == {5.0}
    assert {i.memory_gb for i in case.eligible_instances(w, big)} == {10.0}
    wf = dataclasses.replace(w, match="fit")
    assert len(case.eligible_instances(wf, small)) == 5


@pytest.mark.parametrize("task, field", [
    (Task(0.0, 10, 1.0), "tasks[0].memory_gb"),
    (Task(1.0, 10, -1.0), "tasks[0].duration"),
    (Task(1.0, 0, 1.0), "tasks[0].warps"),
    (Task(1.0, 10, 1.0, cpu=-2.0), "tasks[0].cpu"),
    (Task(7.0, 10, 1.0), "tasks[0].memory_gb"),   # larger than any A30 instance
])
def test_bad_task_is_a_clear_error(task, field):
    with pytest.raises(case.CaseError) as err:
        Workload(two_instances(), (Job("bad", (task,), False),))
    assert "task bad" in str(err.value) and f"field {field}" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_bad_footprint_and_duplicate_names():
    cfg = two_instances()
    with pytest.raises(case.CaseError, match="footprint"):
        Workload(cfg, (Job("x", (Task(3.0, 10, 1.0),), True, footprint_gb=2.0),))
    with pytest.raises(case.CaseError, match="twice"):
        Workload(cfg, (Job("x", (Task(1.0, 10, 1.0),), False), Job("x", (Task(1.0, 10, 1.0),), False)))
    with pytest.raises(OptionError, match="ratio"):
        case.generate("A", "2-1")
    with pytest.raises(OptionError, match="ratio"):
        case.generate("A", "1_0:1")  # read strictly: int() would take it as 10


def test_json_roundtrip(tmp_path):
    w = case.generate("D", "1:2", n=10, seed=4)
    assert Workload.from_dict(w.to_dict()) == w
    with pytest.raises(case.CaseError, match="f.json"):
        Workload.from_dict({"config": {}}, source="f.json")


# -- the checker ------------------------------------------------------------

def shared_pair():
    cfg = two_instances()
    jobs = (Job("iso", (Task(2.0, 100, 10.0),), True), Job("a", (Task(4.0, 100, 5.0),), False),
            Job("b", (Task(3.0, 100, 5.0, cpu=1.0),), False))
    return Workload(cfg, jobs, Slowdown(0.0, 0.1))


def good_trace():
    return Trace("hand", (JobRun("iso", 0, 0, 10), JobRun("a", 0, 0, 5), JobRun("b", 0, 0, 10)),
                 (TaskRun("iso", 0, 0, 0, 10), TaskRun("a", 0, 1, 0, 5), TaskRun("b", 0, 1, 5, 10)),
                 (Hold("iso", 0, 0, 10),), workers=3)


def test_checker_accepts_a_feasible_trace():
    assert check(shared_pair(), good_trace()) == []


def test_checker_catches_overcommitted_instance():
    t = good_trace()
    # b starts at 1 next to a: 4 + 3 GB on a 6 GB instance
    bad = dataclasses.replace(t, tasks=t.tasks[:2] + (TaskRun("b", 0, 1, 1, 6),),
                              jobs=t.jobs[:2] + (JobRun("b", 0, 0, 6),))
    errs = check(shared_pair(), bad)
    assert len(errs) == 1 and "7 GB in use" in errs[0] and "instance 1" in errs[0]


def test_checker_catches_shared_isolated_job():
    t = good_trace()
    bad = dataclasses.replace(t, tasks=t.tasks[:2] + (TaskRun("b", 0, 0, 5, 10),))
    errs = check(shared_pair(), bad)
    assert errs and all("isolated job iso shares instance 0 with job b" in e for e in errs)


def test_checker_catches_missing_hold_timing_and_workers():
    w = shared_pair()
    t = good_trace()
    assert any("isolated but has 0" in e for e in check(w, dataclasses.replace(t, holds=())))
    early = dataclasses.replace(t, tasks=t.tasks[:2] + (TaskRun("b", 0, 1, 0.5, 5.5),),
                                jobs=t.jobs[:2] + (JobRun("b", 0, 0, 5.5),))
    assert any("host phase" in e for e in check(w, early))
    short = dataclasses.replace(t, tasks=(TaskRun("iso", 0, 0, 0, 9),) + t.tasks[1:])
    assert any("lasts 9" in e for e in check(w, short))
    assert any("workers" in e for e in check(w, dataclasses.replace(t, workers=2)))
    assert any("missing" in e for e in check(w, dataclasses.replace(t, jobs=t.jobs[:2])))


def test_metrics_and_memory_profile():
    w, t = shared_pair(), good_trace()
    times, frac = case.memory_profile(w, t)
    assert list(times) == [0, 5, 10]
    assert list(frac) == pytest.approx([6 / 12, 5 / 12, 0])
    m = case.metrics(w, t)
    assert m["makespan"] == 10 and m["turnaround"] == pytest.approx(25 / 3)
    assert m["mem_util"] == pytest.approx((6 * 5 + 5 * 5) / 12 / 10)
    assert m["throughput"] == pytest.approx(3 * 360)
