"""FAR phases 1-3 (FAR paper, Sec. 3 and 5): feasibility, a plain oracle, refinement, Sec. 5's bound."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import mig as mig_bounds
from heuristics import far, far_cli, far_refine
from instances import gpus, mig
from instances.errors import InstanceError, OptionError

PRESETS = [(w, t) for w in ("PoorScaling", "MixedScaling", "GoodScaling") for t in ("WideTimes", "NarrowTimes")]


# ---------------------------------------------------------------------------
# A deliberately plain phase 1 + 2 (Sec. 3.1, Algorithm 1): lists, linear scans, no pruning.

def oracle_family(problem):
    tasks = list(problem.tasks)
    alloc = {}
    for t in tasks:
        alloc[t.name] = min(t.sizes, key=lambda s: (s * t.time(s), s))
    out = [dict(alloc)]
    while True:
        longest = tasks[0]
        for t in tasks[1:]:
            if t.time(alloc[t.name]) > longest.time(alloc[longest.name]):
                longest = t
        larger = [s for s in longest.sizes if s > alloc[longest.name]]
        if not larger:
            return out
        alloc[longest.name] = min(larger, key=lambda s: (s * longest.time(s), s))
        out.append(dict(alloc))


def oracle_algorithm1(problem, alloc):
    gpu = problem.gpu
    order = {p.key(): i for i, p in enumerate(gpu.placements)}
    index = {t.name: i for i, t in enumerate(problem.tasks)}
    pending = {s: sorted((t for t in problem.tasks if alloc[t.name] == s), key=lambda t: (-t.time(s), index[t.name]))
               for s in gpu.sizes}
    open_nodes = [{"p": gpu.root, "end": 0.0, "tasks": []}]
    reconfig_end = 0.0
    makespan = 0.0
    while open_nodes:
        node = min(open_nodes, key=lambda nd: (nd["end"], order[nd["p"].key()]))
        open_nodes.remove(node)
        s = node["p"].size
        if pending[s]:
            if not node["tasks"]:
                reconfig_end = max(reconfig_end, node["end"]) + gpu.create_time[s]
                node["end"] = reconfig_end
            task = pending[s].pop(0)
            node["tasks"].append(task.name)
            node["end"] += task.time(s)
            makespan = max(makespan, node["end"])
            open_nodes.append(node)
        elif any(pending.values()):
            if node["tasks"]:
                reconfig_end = max(reconfig_end, node["end"]) + gpu.destroy_time[s]
            for c in gpu.children(node["p"]):
                open_nodes.append({"p": c, "end": node["end"], "tasks": []})
    return makespan


def oracle_far(problem):
    return min(oracle_algorithm1(problem, a) for a in oracle_family(problem))


def _instance(seed):
    rng = np.random.default_rng(seed)
    gpu = ["A30", "A100", "H100"][seed % 3]
    w, t = PRESETS[int(rng.integers(len(PRESETS)))]
    n = int(rng.integers(1, 26))
    p = mig.generate(n, gpu, w, t, seed=seed)
    return p.without_reconfiguration() if seed % 4 == 3 else p


def test_fast_phase2_equals_plain_oracle_on_500_instances():
    for seed in range(500):
        p = _instance(seed)
        fast = far.plan(p, refine=False)
        assert fast.phase2_makespan == oracle_far(p), seed
        assert fast.makespan == fast.phase2_makespan


def test_family_matches_oracle_and_pruning_is_exact():
    for seed in range(60):
        p = _instance(1000 + seed)
        assert far.family(p) == oracle_family(p)
        a = far.plan(p, refine=False)
        b = far.plan(p, refine=False, prune=False)
        assert a.phase2_makespan == b.phase2_makespan
        assert b.stats["allocations_pruned"] == 0 and b.stats["allocations_tried"] == len(oracle_family(p))


# ---------------------------------------------------------------------------
# Feasibility (reconfiguration rules 1-6) over generated workloads

@settings(max_examples=70)
@given(gpu=st.sampled_from(["A30", "A100"]), preset=st.sampled_from(PRESETS), n=st.integers(1, 60),
       seed=st.integers(0, 10_000), reconf=st.booleans(), refine=st.booleans())
def test_every_schedule_passes_the_checker(gpu, preset, n, seed, reconf, refine):
    p = mig.generate(n, gpu, preset[0], preset[1], seed=seed)
    if not reconf:
        p = p.without_reconfiguration()
    r = far.plan(p, refine=refine)
    assert mig.check(p, r.schedule) == []
    assert r.makespan == pytest.approx(r.schedule.makespan)
    if reconf:
        # every instance running tasks is created; a parent is destroyed before a child is created
        created = {o.placement.key() for o in r.schedule.reconfigurations if o.op == "create"}
        assert created == {t.placement.key() for t in r.schedule.tasks}
        ops = sorted(r.schedule.reconfigurations, key=lambda o: o.start)
        for a, b in zip(ops, ops[1:]):
            assert b.start >= a.end - 1e-9
    else:
        assert r.schedule.reconfigurations == ()


def test_refinement_never_worsens_and_sometimes_helps():
    gains = 0
    for seed in range(60):
        gpu = ["A30", "A100"][seed % 2]
        w, t = PRESETS[seed % len(PRESETS)]
        p = mig.generate(10 + seed % 25, gpu, w, t, seed=seed)
        plain = far.plan(p, refine=False)
        ref = far.plan(p)
        assert ref.phase2_makespan == plain.makespan
        assert ref.makespan <= plain.makespan
        assert ref.stats["p_ref"] >= 0
        assert mig.check(p, ref.schedule) == []
        gains += ref.makespan < plain.makespan
    assert gains >= 5  # moves/swaps do improve real instances (Table 6: ~10 % at n = 20)


def test_refinement_stop_rules():
    p = mig.generate(20, "A100", "MixedScaling", "NarrowTimes", seed=7)
    none = far.plan(p, max_iterations=0)
    assert none.makespan == none.phase2_makespan and none.stats["iterations"] == 0
    one = far.plan(p, max_iterations=1)
    assert one.stats["iterations"] <= 1
    assert far.plan(p).makespan <= one.makespan
    with pytest.raises(ValueError):
        far.plan(p, min_improvement=1.5)


def test_figure5_move_improves():
    # Figure 5's situation on an A30 without reconfiguration: a long size-1 task
    # lands after a short one on the slice that ends first; moving the short one
    # to the other slice of the same size shortens the makespan.
    a30 = gpus.get("A30").without_reconfiguration()
    tasks = [mig.Task("big", {1: 40.0, 2: 40.0, 4: 40.0}),
             mig.Task("j", {1: 10.0, 2: 10.0, 4: 10.0}),
             mig.Task("x", {1: 30.0, 2: 30.0, 4: 30.0}),
             mig.Task("y", {1: 20.0, 2: 20.0, 4: 20.0}),
             mig.Task("z", {1: 14.0, 2: 14.0, 4: 14.0})]
    p = mig.Problem(a30, tasks)
    r = far.plan(p)
    assert mig.check(p, r.schedule) == []
    assert r.makespan <= r.phase2_makespan
    assert r.makespan == pytest.approx(40.0)


def test_pick_move_and_swap():
    keys = [(-9.0, 0), (-5.0, 1), (-3.0, 2), (-1.0, 3)]
    assert far_refine.pick_move(keys, 8.0) == 1     # 5 < 8, |5 - 4| = 1 beats |3 - 4| = 1 (first wins)
    assert far_refine.pick_move(keys, 7.0) == 2     # 3 closest to 3.5
    assert far_refine.pick_move(keys, 1.0) is None  # nothing shorter than 1
    assert far_refine.pick_swap([(-10.0, 0)], [(-9.5, 1), (-4.0, 2)], 3.0) == (0, 0)
    assert far_refine.pick_swap([(-10.0, 0)], [(-10.0, 1)], 3.0) is None


# ---------------------------------------------------------------------------
# Sec. 5: the phase-2 bound with reconfiguration times 0

def _check_bound(p, alloc):
    r = far.schedule_allocation(p, alloc)
    work = sum(s * p.task(n).time(s) for n, s in alloc.items())
    h = max(p.task(n).time(s) for n, s in alloc.items())
    bound = mig_bounds.phase2_bound(p.gpu, work, h)
    assert r.makespan <= bound * (1 + 1e-12), (alloc, r.makespan, bound)
    assert mig.check(p, r.schedule) == []


@settings(max_examples=60)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), preset=st.sampled_from(PRESETS), n=st.integers(1, 40),
       seed=st.integers(0, 10_000))
def test_sec5_bound_for_every_family_allocation(gpu, preset, n, seed):
    p = mig.generate(n, gpu, preset[0], preset[1], seed=seed).without_reconfiguration()
    for alloc in far.family(p):
        _check_bound(p, alloc)


@settings(max_examples=80)
@given(gpu=st.sampled_from(["A30", "A100"]), n=st.integers(1, 14), seed=st.integers(0, 10_000), data=st.data())
def test_sec5_bound_for_arbitrary_allocations(gpu, n, seed, data):
    p = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed=seed).without_reconfiguration()
    sizes = p.gpu.sizes
    alloc = {t.name: data.draw(st.sampled_from(sizes)) for t in p.tasks}
    _check_bound(p, alloc)


# ---------------------------------------------------------------------------
# API details and errors

def test_small_cases_and_memory_limits():
    a100 = gpus.get("A100")
    one = mig.Problem(a100, [mig.Task("a", {1: 7.0, 2: 4.0, 3: 3.0, 4: 2.5, 7: 2.0})])
    r = far.plan(one)
    assert mig.check(one, r.schedule) == []
    # a lone task ends as early as possible: the first allocation family member of size 7 wins
    assert r.makespan == pytest.approx(min(a100.create_time[s] + one.tasks[0].time(s) for s in a100.sizes))
    big = mig.Problem(a100, [mig.Task("m", {3: 11.0, 4: 9.0, 7: 6.0}, memory_gb=18.0),
                             mig.Task("s", {1: 5.0, 2: 3.0, 3: 2.0, 4: 1.8, 7: 1.5})])
    r = far.plan(big)
    assert mig.check(big, r.schedule) == []
    assert r.allocation["m"] in (3, 4, 7)
    empty = far.plan(mig.Problem("A30", []))
    assert empty.makespan == 0.0 and empty.schedule.tasks == ()


def test_tree_report_and_stats():
    p = mig.generate(12, "A100", seed=0)
    r = far.plan(p)
    text = str(r.tree)
    assert text.startswith("Repartitioning tree (A100):")
    assert "Node(7@0" in text and f"Tree makespan: {r.makespan:.6g}" in text
    assert sum(len(nd.tasks) for nd in r.tree.nodes) == p.n
    for key in ("allocations", "allocations_tried", "allocations_pruned", "moves", "swaps", "iterations", "p_ref"):
        assert key in r.stats
    assert set(r.allocation) == {t.name for t in p.tasks}


def test_schedule_allocation_errors():
    p = mig.generate(3, "A30", seed=1)
    with pytest.raises(InstanceError, match="t0"):
        far.schedule_allocation(p, {"t1": 1, "t2": 1})
    with pytest.raises(InstanceError, match="size 3"):
        far.schedule_allocation(p, {"t0": 3, "t1": 1, "t2": 1})
    with pytest.raises(InstanceError):
        far.plan("not a problem")


# ---------------------------------------------------------------------------
# Command line

def test_cli_json_and_outputs(tmp_path, capsys):
    p = mig.generate(9, "A100", seed=3)
    src = tmp_path / "tasks.json"
    mig.save(p, src)
    out, png = tmp_path / "s.json", tmp_path / "g.png"
    assert far_cli.main([str(src), "--json", str(out), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "Repartitioning tree" in text and "makespan" in text
    sched = mig.Schedule.load(out)
    assert mig.check(p, sched) == [] and png.stat().st_size > 0
    assert far_cli.main([str(src), "--no-refine", "--gpu", "H100"]) == 0


def test_cli_text_task_lists(tmp_path, capsys):
    ref = tmp_path / "profile.txt"
    ref.write_text("======\nProfiled times for the tasks:\nTask gauss:\nSize 1: 10 seconds\nSize 2: 5.5 seconds\n"
                   "Size 4: 3 seconds\nTask lud:\nSize 1: 4 seconds\nSize 2: 2 seconds\nSize 4: 1.5 seconds\n")
    assert far_cli.main([str(ref), "--gpu", "A30"]) == 0
    lines = tmp_path / "list.txt"
    lines.write_text("# name t1 t2 t4\nbfs 8 4.5 3\nnw 1:6 2:3.5 4:2\n")
    assert far_cli.main([str(lines), "--gpu", "A30"]) == 0
    p = mig.load_tasklist(lines, "A30")
    assert [t.name for t in p.tasks] == ["bfs", "nw"] and p.task("nw").time(2) == 3.5
    capsys.readouterr()


def test_cli_errors(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("bfs 8 4.5\n")
    assert far_cli.main([str(bad), "--gpu", "A30"]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.txt" in err and "bfs" in err and "\n" not in err
    nonmono = tmp_path / "m.json"
    nonmono.write_text(json.dumps({"gpu": "A30", "tasks": [{"name": "a", "times": {"1": 1, "2": 2, "4": 1}}]}))
    assert far_cli.main([str(nonmono)]) == 2
    assert "task a" in capsys.readouterr().err
    assert far_cli.main([str(tmp_path / "missing.json")]) == 2
    with pytest.raises(SystemExit) as exc:
        far_cli.main([str(bad), "--gpu", "V100"])
    assert exc.value.code == 2


def test_ratio_to_area_bound_is_sane():
    # FAR / area bound (Sec. 6.4) stays below the A100 approximation factor 2 even with reconfiguration
    for seed in range(20):
        p = mig.generate(20, "A100", seed=seed)
        area = sum(min(s * t.time(s) for s in t.sizes) for t in p.tasks) / p.gpu.num_slices
        assert 1.0 <= far.plan(p).makespan / area < 2.0
    assert math.isfinite(area)


@settings(max_examples=40)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 25), seed=st.integers(0, 10_000),
       refine=st.booleans(), data=st.data())
def test_schedule_allocation_is_feasible_with_reconfiguration(gpu, n, seed, refine, data):
    p = mig.generate(n, gpu, "MixedScaling", "NarrowTimes", seed=seed)
    alloc = {t.name: data.draw(st.sampled_from(p.gpu.sizes)) for t in p.tasks}
    r = far.schedule_allocation(p, alloc, refine=refine)
    assert mig.check(p, r.schedule) == []
    assert r.makespan <= r.phase2_makespan
    assert {t.task: t.placement.size for t in r.schedule.tasks} == alloc


def test_cli_workload_file(tmp_path, capsys):
    w = mig.generate_workload([4, 5], [0.0, 20.0], "A30", seed=2)
    src = tmp_path / "w.json"
    mig.save(w, src)
    out = tmp_path / "s.json"
    assert far_cli.main([str(src), "--method", "reversed", "--json", str(out)]) == 0
    assert "Batch 1" in capsys.readouterr().out
    assert mig.check(w, mig.Schedule.load(out)) == []


# ---------------------------------------------------------------------------
# Options: unknown names and bad values are refused, never dropped

def test_unknown_options_are_refused_by_every_public_function():
    from heuristics import far_batch, far_multibatch

    p = mig.generate(5, "A30", seed=1)
    w = mig.generate_workload([3, 3], [0.0, 5.0], "A30", seed=1)
    calls = [
        (lambda: far.schedule(p, refine=False, anything=1), "far.schedule: unknown option 'anything'"),
        (lambda: far.plan(p, refin=False), "far.plan: unknown option 'refin'"),
        (lambda: far.plan(w, anything=1), "far.plan: unknown option 'anything'"),
        (lambda: far.schedule(w, refine=False, anything=1), "far.schedule: unknown option 'anything'"),
        (lambda: far.schedule_allocation(p, {t.name: 1 for t in p.tasks}, x=1), "unknown option 'x'"),
        (lambda: far_batch.plan(p, method="trivial"), "far_batch.plan: unknown option 'method'"),
        (lambda: far_multibatch.plan_workload(w, x=1), "unknown option 'x'"),
        (lambda: far_multibatch.compare_concatenations(w, x=1), "unknown option 'x'"),
    ]
    for call, message in calls:
        with pytest.raises(OptionError, match=message):
            call()


@pytest.mark.parametrize("kwargs, field", [
    ({"refine": "no"}, "refine"), ({"prune": 0}, "prune"), ({"max_iterations": 2.5}, "max_iterations"),
    ({"max_iterations": True}, "max_iterations"), ({"min_improvement": -0.1}, "min_improvement"),
    ({"method": "sideways"}, "method"), ({"max_ops": -1}, "max_ops"),
])
def test_bad_option_values(kwargs, field):
    for problem in (mig.generate(4, "A30", seed=2), mig.generate_workload([2, 2], [0.0, 1.0], "A30", seed=2)):
        with pytest.raises(OptionError, match=field):
            far.plan(problem, **kwargs)


def test_options_documented_for_workloads_are_accepted_for_one_batch():
    p = mig.generate(6, "A100", seed=4)
    assert far.schedule(p, method="trivial", max_ops=3) == far.schedule(p)


# ---------------------------------------------------------------------------
# Times too large for floating-point sums: a clear error, API and CLI

def _huge(gpu="A30", t=1e308):
    return mig.Problem(gpu, [mig.Task(f"t{i}", {s: t for s in gpus.get(gpu).sizes}) for i in range(3)])


def test_times_that_would_overflow_are_refused_with_a_clear_error():
    p = _huge()
    w = mig.Workload("A30", [p, mig.Problem("A30", [mig.Task("x", {1: 1.0, 2: 1.0, 4: 1.0})], release=1.0)])
    for call in (lambda: far.plan(p), lambda: far.schedule(p, refine=False), lambda: far.family(p),
                 lambda: far.schedule_allocation(p, {t.name: 1 for t in p.tasks}), lambda: far.schedule(w)):
        with pytest.raises(InstanceError, match="field times: task times too large.*larger units"):
            call()


def test_large_but_summable_times_are_scheduled():
    # without reconfiguration times: 0.24 s create times next to 1e305 s tasks would vanish (below)
    p = _huge("A100", 1e305).without_reconfiguration()
    sched = far.schedule(p)
    assert mig.check(p, sched) == [] and math.isfinite(sched.makespan)
    with pytest.raises(InstanceError, match="the shortest time, 0.[0-9]* s, would be lost"):
        far.schedule(_huge("A100", 1e305))


def test_cli_refuses_overflowing_times(tmp_path, capsys):
    src = tmp_path / "huge.json"
    mig.save(_huge(), src)
    assert far_cli.main([str(src)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m heuristics.far: error: ") and "too large" in err and "\n" not in err


def test_python_dash_m_heuristics_far(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    good, huge = tmp_path / "t.json", tmp_path / "huge.json"
    mig.save(mig.generate(6, "A30", seed=0), good)
    mig.save(_huge(), huge)
    run = lambda f: subprocess.run([sys.executable, "-m", "heuristics.far", str(f)], cwd=root, capture_output=True,
                                   text=True, timeout=120)
    ok = run(good)
    assert ok.returncode == 0 and ok.stdout.startswith("Repartitioning tree (A30):"), ok.stderr
    bad = run(huge)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1 and "too large" in bad.stderr


@pytest.mark.parametrize("release", [0.37, 25.0])
def test_a_released_batch_is_planned_from_zero_and_timed_from_its_release(release):
    # found infeasible before: a single batch's release was ignored
    for seed in range(6):
        p = mig.generate(12, ["A30", "A100"][seed % 2], seed=seed)
        q = mig.Problem(p.gpu, p.tasks, release=release)
        a, b = far.plan(p), far.plan(q)
        assert mig.check(q, b.schedule) == []
        assert b.allocation == a.allocation and b.node_tasks == a.node_tasks
        assert b.makespan == pytest.approx(a.makespan + release)
        assert b.phase2_makespan == pytest.approx(a.phase2_makespan + release)
        assert min(t.start for t in b.schedule.tasks) >= release
        r = far.schedule_allocation(q, a.allocation)
        assert mig.check(q, r.schedule) == []
