"""heuristics.case: the Slurm-like and CASE simulators (Algorithms 1-2)."""

import pytest

from heuristics import case as sim
from instances import case
from instances.case import Job, Slowdown, Task, Workload, check, custom_config, metrics


def three_jobs(policy_slowdown=Slowdown(0.0, 0.1)):
    """The hand-worked example: one A30 with two 1g.6gb instances.

    iso: isolated, one 2 GB task of 10 s.
    a:   non-isolated, 4 GB for 4 s, then 2 s on the host, then 5 GB for 3 s.
    b:   non-isolated, 1 s on the host, then 3 GB for 6 s.
    """
    cfg = custom_config("A30", [[(1, 0), (1, 1)]], name="hand")
    jobs = (Job("iso", (Task(2.0, 100, 10.0),), True),
            Job("a", (Task(4.0, 200, 4.0), Task(5.0, 200, 3.0, cpu=2.0)), False),
            Job("b", (Task(3.0, 300, 6.0, cpu=1.0),), False))
    return Workload(cfg, jobs, policy_slowdown)


def test_hand_worked_slurm():
    # Slurm, 2 workers, FIFO: iso holds instance 0 for [0,10]; a holds instance 1
    # for its whole life [0,9] (tasks [0,4] and [6,9]); b waits for a, holds
    # instance 1 from 9, runs its host phase to 10 and its task [10,16].
    w = three_jobs()
    t = sim.simulate(w, "slurm")
    assert check(w, t) == []
    assert [(r.job, r.start, r.end) for r in t.jobs] == [("iso", 0, 10), ("a", 0, 9), ("b", 9, 16)]
    assert sorted((r.job, r.index, r.instance, r.start, r.end) for r in t.tasks) == [
        ("a", 0, 1, 0, 4), ("a", 1, 1, 6, 9), ("b", 0, 1, 10, 16), ("iso", 0, 0, 0, 10)]
    assert sorted((h.job, h.instance, h.start, h.end) for h in t.holds) == [
        ("a", 1, 0, 9), ("b", 1, 9, 16), ("iso", 0, 0, 10)]
    m = metrics(w, t)
    assert m["makespan"] == 16 and m["turnaround"] == pytest.approx(35 / 3)
    # 69 GB*s of task memory over 12 GB x 16 s
    assert m["mem_util"] == pytest.approx(69 / 192)


def test_hand_worked_case():
    # CASE, 8 workers: iso takes instance 0 (Algorithm 1); a's first task goes to
    # instance 1 at 0 (the only one without an isolated job); b's probe at 1
    # needs 3 GB but only 2 GB are free, so it blocks until a's task ends at 4
    # and runs [4,10]; a's second probe at 6 needs 5 GB, 3 GB free: blocks; at 10
    # both instances are empty with 0 warps, the first (instance 0) wins: [10,13].
    w = three_jobs()
    t = sim.simulate(w, "case")
    assert check(w, t) == []
    assert [(r.job, r.launch, r.start, r.end) for r in t.jobs] == [
        ("iso", 0, 0, 10), ("a", 0, 0, 13), ("b", 0, 0, 10)]
    assert sorted((r.job, r.index, r.instance, r.start, r.end) for r in t.tasks) == [
        ("a", 0, 1, 0, 4), ("a", 1, 0, 10, 13), ("b", 0, 1, 4, 10), ("iso", 0, 0, 0, 10)]
    assert [(h.job, h.instance, h.start, h.end) for h in t.holds] == [("iso", 0, 0, 10)]
    m = metrics(w, t)
    assert m["makespan"] == 13 and m["turnaround"] == pytest.approx(11)
    assert m["mem_util"] == pytest.approx(69 / 156)


def test_min_warps_placement():
    # Algorithm 2: among instances with room, the one with the fewest warps in use.
    cfg = custom_config("A30", [[(1, 0), (1, 1)]])
    jobs = (Job("x", (Task(1.0, 800, 10.0),), False), Job("y", (Task(1.0, 100, 10.0),), False),
            Job("z", (Task(1.0, 50, 5.0, cpu=1.0),), False))
    w = Workload(cfg, jobs, Slowdown(0.0, 0.1))
    t = sim.simulate(w, "case")
    where = {r.job: r.instance for r in t.tasks}
    assert where == {"x": 0, "y": 1, "z": 1}
    # with y's task bigger than instance 1's room, z must go to instance 0 instead
    jobs2 = (jobs[0], Job("y", (Task(5.5, 100, 10.0),), False), jobs[2])
    where2 = {r.job: r.instance for r in sim.simulate(Workload(cfg, jobs2, Slowdown(0.0, 0.1)), "case").tasks}
    assert where2 == {"x": 0, "y": 1, "z": 0}


def test_slowdown_model_exact_rates():
    # two tasks share one 1g instance (896 warps), beta 0.05: p (448 warps) is
    # stretched by 1 + 0.05 * 896/896 = 1.05, q (896 warps) by 1.025. q ends at
    # 10.25; p has then done 10.25/1.05 of its 10 s and finishes the rest alone.
    cfg = custom_config("A30", [[(1, 0)]])
    jobs = (Job("p", (Task(1.0, 448, 10.0),), False), Job("q", (Task(1.0, 896, 10.0),), False))
    w = Workload(cfg, jobs, Slowdown(0.05, 0.10))
    t = sim.simulate(w, "case")
    assert check(w, t) == []
    end = {r.job: r.end for r in t.tasks}
    assert end["q"] == pytest.approx(10.25)
    assert end["p"] == pytest.approx(10.25 + 10 - 10.25 / 1.05)
    # the cap binds when the neighbour is heavier than 2x the instance
    assert Slowdown(0.05, 0.10).factor(10, 10 + 4000, 896) == pytest.approx(1.10)


@pytest.mark.parametrize("cfg", "ABCD")
def test_case_equals_slurm_when_every_job_is_isolated(cfg):
    # Sec. 3.2: "when the ratio is 1:0 ... Slurm and CASE have identical behavior"
    for seed in range(3):
        w = case.generate(cfg, "1:0", seed=seed)
        s, c = sim.simulate(w, "slurm"), sim.simulate(w, "case")
        assert check(w, s) == [] and check(w, c) == []
        assert [(r.job, r.start, r.end) for r in s.jobs] == [(r.job, r.start, r.end) for r in c.jobs]
        assert s.tasks == c.tasks and s.holds == c.holds
        r = sim.compare(w)
        assert r["throughput"] == 1.0 and r["turnaround"] == 1.0


@pytest.mark.parametrize("cfg, ratio, small", [("A", "4:1", False), ("B", "1:1", True), ("C", "1:4", False),
                                               ("D", "1:2", False), ("A", "0:1", True), ("D", "0:1", False)])
def test_traces_pass_the_checker(cfg, ratio, small):
    w = case.generate(cfg, ratio, seed=11, small=small)
    for name, method in sim.METHODS.items():
        t = method(w)
        assert check(w, t) == []
        assert t.workers == (w.config.workers_slurm if name == "slurm" else w.config.workers_case)
    m = metrics(w, sim.simulate(w, "case"))
    assert 0 <= m["slowdown"] <= w.slowdown.cap
    assert check(w, sim.simulate(w, "case", isolated_first=False)) == []


def test_isolated_job_waits_for_instance_to_drain():
    # Without the isolated-first preference, blocked tasks take freed instances
    # first; an isolated job that then claims a busy instance starts only after
    # its tasks end, and no new task is placed there meanwhile (checker: no sharing).
    w = case.generate("C", "4:1", seed=0)
    t = sim.simulate(w, "case", isolated_first=False)
    assert check(w, t) == []
    drained = [r for r in t.jobs if r.start > r.launch]
    assert drained and all(w.job(r.job).isolated for r in drained)
    for r in drained:
        hold = next(h for h in t.holds if h.job == r.job)
        # some other job's task ran on that instance between the claim and the start
        assert any(x.instance == hold.instance and x.job != r.job and x.end == pytest.approx(r.start)
                   for x in t.tasks)


def test_worker_limit_is_obeyed_and_binds():
    w = case.generate("A", "0:1", n=24, seed=5)
    few = sim.simulate(w, "case", workers=2)
    assert check(w, few) == []
    assert few.makespan > sim.simulate(w, "case").makespan
    with pytest.raises(ValueError, match="policy"):
        sim.simulate(w, "fifo")


def test_case_packs_non_isolated_jobs():
    # all non-isolated: CASE packs by memory and must beat whole-instance reservations
    for cfg in "ABC":
        r = sim.compare(case.generate(cfg, "0:1", seed=2, small=True))
        assert r["throughput"] > 1.3 and r["mem_util"] > 1.3
