"""The independent checker: valid schedules pass, each single-rule violation is named.

The hypothesis test builds random valid schedules with a constructor of its
own (phases of random partitions), sharing nothing with FAR or the exact models.
"""

import dataclasses

from hypothesis import given, settings, strategies as st

from instances import gpus, mig

A30 = gpus.get("A30")
P = A30.placement
C = {s: A30.create_time[s] for s in A30.sizes}
D = {s: A30.destroy_time[s] for s in A30.sizes}

PROBLEM = mig.Problem("A30", [
    mig.Task("a", {1: 8.0, 2: 4.0, 4: 2.0}),
    mig.Task("b", {1: 6.0, 2: 3.0, 4: 2.0}),
    mig.Task("c", {1: 5.0, 2: 3.5, 4: 3.0}),
])


def T(name, size, start_slice, begin):
    dur = PROBLEM.task(name).times[size]
    return mig.ScheduledTask(name, P(size, start_slice), begin, begin + dur)


def op(kind, size, start_slice, begin):
    dur = (C if kind == "create" else D)[size]
    return mig.Reconfiguration(kind, P(size, start_slice), begin, begin + dur)


def valid_schedule():
    """a on 4@0; then 4@0 is split into 2@0 (b) and 2@2 (c)."""
    t = C[4]
    a = T("a", 4, 0, t)
    d = a.end
    c20 = d + D[4]
    c22 = c20 + C[2]
    return mig.Schedule("A30", [a, T("b", 2, 0, c20 + C[2]), T("c", 2, 2, c22 + C[2])],
                        [op("create", 4, 0, 0.0), op("destroy", 4, 0, d), op("create", 2, 0, c20),
                         op("create", 2, 2, c22)])


def replace_task(s, name, **changes):
    tasks = [dataclasses.replace(t, **changes) if t.task == name else t for t in s.tasks]
    return mig.Schedule(s.gpu, tasks, s.reconfigurations)


def test_hand_built_valid_schedule_passes():
    s = valid_schedule()
    assert mig.check(PROBLEM, s) == []
    assert mig.check(PROBLEM, mig.Schedule.from_json(s.to_json())) == []


def test_reused_instance_and_no_destroy_at_the_end_pass():
    # b then c on the same 2@0 instance, a on 2@2; nothing destroyed at the end
    s = mig.Schedule("A30", [T("b", 2, 0, C[2]), T("c", 2, 0, C[2] + 3.0), T("a", 2, 2, 2 * C[2])],
                     [op("create", 2, 0, 0.0), op("create", 2, 2, C[2])])
    assert mig.check(PROBLEM, s) == []


def only(violations, rule):
    assert violations, "expected a violation"
    assert all(v.startswith(rule) for v in violations), violations
    return violations


def test_rule1_tasks_need_a_created_instance():
    s = valid_schedule()
    s = mig.Schedule("A30", s.tasks, [r for r in s.reconfigurations if r.placement.name != "4@0"])
    v = mig.check(PROBLEM, s)
    assert any("task a on 4@0" in x and x.startswith("rule 2 (sessions)") for x in v)


def test_rule1_nothing_before_time_zero():
    s = valid_schedule()
    recs = [dataclasses.replace(r, start=r.start - 0.5, end=r.end - 0.5) if r.placement.name == "4@0"
            and r.op == "create" else r for r in s.reconfigurations]
    tasks = [dataclasses.replace(t, start=t.start - 0.5, end=t.end - 0.5) if t.task == "a" else t for t in s.tasks]
    v = mig.check(PROBLEM, mig.Schedule("A30", tasks, recs))
    assert any(x.startswith("rule 1 (time zero)") for x in v)
    assert all(x.startswith("rule 1") for x in v), v


def test_rule2_task_before_create_ends():
    s = replace_task(valid_schedule(), "a", start=0.05, end=2.05)
    only(mig.check(PROBLEM, s),
         "rule 2 (sessions)")


def test_rule2_destroy_before_last_task_ends():
    s = valid_schedule()
    a = s.by_task()["a"]
    # shift the destroy 0.05 s earlier: it now overlaps a's run; nothing else changes
    recs = [dataclasses.replace(r, start=r.start - 0.05, end=r.end - 0.05) if r.op == "destroy" else r
            for r in s.reconfigurations]
    v = only(mig.check(PROBLEM, mig.Schedule("A30", s.tasks, recs)), "rule 2 (sessions)")
    assert "task a on 4@0" in v[0] and a.end > recs[1].start


def test_rule2_instance_without_tasks():
    s = valid_schedule()
    end = s.makespan
    s2 = mig.Schedule("A30", s.tasks, list(s.reconfigurations) + [op("create", 1, 0, end + 5)])
    v = mig.check(PROBLEM, s2)
    # 1@0 created while 2@0 still exists is also a slice conflict; the empty session is named
    assert any("1@0 created at" in x and "runs no task" in x for x in v)


def test_rule2_created_twice():
    s = valid_schedule()
    extra = op("create", 2, 2, s.makespan + 1)
    v = mig.check(PROBLEM, mig.Schedule("A30", s.tasks, list(s.reconfigurations) + [extra]))
    assert any(x.startswith("rule 2 (sessions): 2@2 is created at") for x in v)


def test_zero_reconfiguration_times_mean_no_reconfiguration():
    """A GPU whose create/destroy times are all zero is the problem without reconfiguration:
    no operation is required, slice-sharing tasks still never overlap, and a user-defined GPU
    without times behaves like problem.without_reconfiguration()."""
    spec = A30.to_dict()
    del spec["create_time"], spec["destroy_time"]
    spec["name"] = "A30-free"
    free = gpus.from_dict(spec)
    assert not free.reconfigurable and not PROBLEM.without_reconfiguration().gpu.reconfigurable
    for p0 in (PROBLEM.without_reconfiguration(), mig.Problem(free, PROBLEM.tasks)):
        def run(name, size, start_slice, begin):
            dur = p0.task(name).times[size]
            return mig.ScheduledTask(name, P(size, start_slice), begin, begin + dur)

        ok = mig.Schedule(p0.gpu.name, [run("a", 4, 0, 0.0), run("b", 2, 0, 2.0), run("c", 2, 2, 2.0)])
        assert mig.check(p0, ok) == [] and mig.is_feasible(p0, ok)
        clash = mig.Schedule(p0.gpu.name, [run("a", 4, 0, 0.0), run("b", 2, 0, 1.0), run("c", 2, 2, 2.0)])
        assert [v for v in mig.check(p0, clash) if v.startswith("rule 3")]
        assert not [v for v in mig.check(p0, clash) if v.startswith("rule 2")]


def test_rule3_sessions_of_intersecting_placements_overlap():
    # 4@0 is never destroyed, but 2@0 / 2@2 are created later on its slices
    s = valid_schedule()
    recs = [r for r in s.reconfigurations if r.op != "destroy"]
    # keep the ops at their times (serialised, durations right): only rule 3 breaks
    v = only(mig.check(PROBLEM, mig.Schedule("A30", s.tasks, recs)), "rule 3 (slice conflict)")
    assert any("instance 4@0" in x and "end of time" in x for x in v)


def test_rule3_task_level_overlap_without_reconfiguration():
    p0 = PROBLEM.without_reconfiguration()
    s = mig.Schedule("A30", [T("a", 4, 0, 0.0), T("b", 2, 0, 1.0), T("c", 1, 3, 1.5)])
    v = only(mig.check(p0, s), "rule 3 (slice conflict)")
    assert len(v) == 2  # a-b on slices 0,1 and a-c on slice 3
    ok = mig.Schedule("A30", [T("a", 4, 0, 0.0), T("b", 2, 0, 2.0), T("c", 2, 2, 2.0)])
    assert mig.check(p0, ok) == []
    assert mig.check(PROBLEM.without_reconfiguration(), ok) == []
    # the same schedule with real reconfiguration times lacks its instances
    assert any(x.startswith("rule 2") for x in mig.check(PROBLEM, ok))


def test_rule4_operations_overlap():
    s = valid_schedule()
    recs = list(s.reconfigurations)
    # move create 2@2 to start together with create 2@0 (and c with it)
    c20 = recs[2].start
    recs[3] = op("create", 2, 2, c20)
    tasks = [T("c", 2, 2, c20 + C[2]) if t.task == "c" else t for t in s.tasks]
    v = only(mig.check(PROBLEM, mig.Schedule("A30", tasks, recs)), "rule 4 (serialised reconfiguration)")
    assert "create of 2@0" in v[0] and "create of 2@2" in v[0]


def test_rule4_operation_duration():
    s = valid_schedule()
    recs = list(s.reconfigurations)
    recs[0] = dataclasses.replace(recs[0], end=0.1)  # create 4@0 takes 0.13 s on an A30
    v = only(mig.check(PROBLEM, mig.Schedule("A30", s.tasks, recs)), "rule 4 (operation duration)")
    assert "t_create(4) = 0.13" in v[0]


def test_rule5_duration():
    s = valid_schedule()
    b = s.by_task()["b"]
    v = only(mig.check(PROBLEM, replace_task(s, "b", end=b.end - 0.5)), "rule 5 (duration)")
    assert "task b on 2@0" in v[0] and "its time on size 2 is 3" in v[0]


def test_rule5_task_set():
    s = valid_schedule()
    missing = mig.Schedule("A30", [t for t in s.tasks if t.task != "c"], s.reconfigurations)
    v = mig.check(PROBLEM, missing)
    assert "rule 5 (task set): task c is not scheduled" in v
    assert any("runs no task" in x for x in v)  # its instance 2@2 is now empty
    dup = mig.Schedule("A30", list(s.tasks) + [T("a", 4, 0, s.makespan + 10)], s.reconfigurations)
    assert "rule 5 (task set): task a is scheduled 2 times" in mig.check(PROBLEM, dup)
    alien = mig.Schedule("A30", list(s.tasks) + [mig.ScheduledTask("zz", P(1, 0), 0, 1)], s.reconfigurations)
    assert "rule 5 (task set): task zz is not in the problem" in mig.check(PROBLEM, alien)


def test_rule5_size_forbidden_by_memory():
    p = mig.Problem("A30", [mig.Task("m", {2: 3.0, 4: 2.0}, memory_gb=10)])
    s = mig.Schedule("A30", [mig.ScheduledTask("m", P(1, 0), C[1], C[1] + 3.0)], [op("create", 1, 0, 0.0)])
    only(mig.check(p, s), "rule 5 (size)")


def test_rule6_makespan():
    s = valid_schedule()
    wrong = mig.Schedule("A30", s.tasks, s.reconfigurations, makespan=s.makespan - 1)
    v = only(mig.check(PROBLEM, wrong), "rule 6 (makespan)")
    assert len(v) == 1


def test_release_of_a_batch():
    b0 = mig.Problem("A30", [PROBLEM.task("a")])
    b1 = mig.Problem("A30", [PROBLEM.task("b"), PROBLEM.task("c")], release=2.0)
    w = mig.Workload("A30", [b0, b1])
    s = valid_schedule()
    assert mig.check(w, s) == []  # b and c start after 2.0 anyway
    w_late = mig.Workload("A30", [b0, mig.Problem("A30", b1.tasks, release=10.0)])
    v = only(mig.check(w_late, s), "release")
    assert len(v) == 2


def test_wrong_gpu_and_unknown_placement():
    s = valid_schedule()
    a100 = gpus.get("A100")
    bad = mig.Schedule("A100", [dataclasses.replace(t, placement=a100.placement(3, 4)) if t.task == "c" else t
                                for t in s.tasks], s.reconfigurations)
    v = mig.check(PROBLEM, bad)
    assert any(x.startswith("gpu:") for x in v)
    assert any(x.startswith("placement: task c uses 3@4") for x in v)


# ---------------------------------------------------------------------------
# hypothesis: random valid schedules from an independent constructor


def phased_schedule(problem, rng_choices, gaps):
    """Schedule tasks in phases; each phase uses one random partition of the GPU.

    Between phases, instances not kept are destroyed and new ones created,
    one operation at a time; kept instances carry on (reuse).
    """
    gpu = problem.gpu
    parts = gpu.partitions()
    tasks = list(problem.tasks)
    out_tasks, ops = [], []
    live: dict = {}  # placement -> time its last task ends
    clock = 0.0
    i = 0
    k = 0
    while i < len(tasks):
        part = parts[rng_choices[k % len(rng_choices)] % len(parts)]
        k += 1
        # wait for every live instance to finish, then reconfigure serially
        clock = max([clock] + list(live.values()))
        for p in sorted(live, key=lambda p: p.key()):
            if p not in part:
                ops.append(mig.Reconfiguration("destroy", p, clock, clock + gpu.destroy_time[p.size]))
                clock = ops[-1].end
                del live[p]
        ready = {}
        for p in sorted(part, key=lambda p: p.key()):
            if p in live:
                ready[p] = live[p]
            else:
                ops.append(mig.Reconfiguration("create", p, clock, clock + gpu.create_time[p.size]))
                clock = ops[-1].end
                ready[p] = clock
        # give each instance of the partition some tasks (at least one per new instance)
        used = set()
        for p in sorted(part, key=lambda p: p.key()):
            if i >= len(tasks):
                break
            take = 1 + gaps[(i + k) % len(gaps)] % 2
            for _ in range(take):
                if i >= len(tasks):
                    break
                t = tasks[i]
                i += 1
                begin = ready[p] + (gaps[i % len(gaps)] % 3) * 0.25
                end = begin + t.times[p.size]
                out_tasks.append(mig.ScheduledTask(t.name, p, begin, end))
                ready[p] = end
                used.add(p)
        # instances of this phase that got no task are destroyed again at once
        for p in sorted(part, key=lambda p: p.key()):
            if p not in used and p not in live:
                # never got a task: undo its creation (drop the op) to keep sessions non-empty
                ops = [o for o in ops if not (o.placement == p and o.op == "create" and o.end == ready[p])]
            elif p in used or p in live:
                live[p] = ready[p]
    return mig.Schedule(gpu, out_tasks, ops)


@settings(max_examples=60)
@given(n=st.integers(1, 14), gpu=st.sampled_from(["A30", "A100", "H100"]), seed=st.integers(0, 10_000),
       choices=st.lists(st.integers(0, 100), min_size=1, max_size=6),
       gaps=st.lists(st.integers(0, 5), min_size=1, max_size=6), reconf=st.booleans())
def test_random_valid_schedules_pass(n, gpu, seed, choices, gaps, reconf):
    problem = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed)
    if not reconf:
        problem = problem.without_reconfiguration()
    s = phased_schedule(problem, choices, gaps)
    assert mig.check(problem, s) == []
    assert mig.check(problem, mig.Schedule.from_json(s.to_json())) == []
    # and a single-rule mutation of it is caught: shorten the first task
    first = s.tasks[0]
    broken = replace_task(s, first.task, end=first.end - 0.01)
    v = mig.check(problem, broken)
    assert any(x.startswith("rule 5 (duration)") for x in v) or any(x.startswith("rule 6") for x in v)
