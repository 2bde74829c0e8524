"""FAR multi-batch concatenation (FAR paper, Sec. 4): feasibility on workloads, reuse, move/swap."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far, far_multibatch
from instances import gpus, mig
from instances.errors import InstanceError

PRESETS = [(w, t) for w in ("PoorScaling", "MixedScaling", "GoodScaling") for t in ("WideTimes", "NarrowTimes")]


@settings(max_examples=40)
@given(gpu=st.sampled_from(["A30", "A100"]), preset=st.sampled_from(PRESETS),
       sizes=st.lists(st.integers(1, 15), min_size=1, max_size=4),
       gaps=st.lists(st.floats(0, 150), min_size=4, max_size=4),
       seed=st.integers(0, 10_000), reconf=st.booleans(), method=st.sampled_from(far_multibatch.CONCATENATIONS))
def test_combined_schedule_passes_the_checker(gpu, preset, sizes, gaps, seed, reconf, method):
    releases = [0.0]
    for g in gaps[: len(sizes) - 1]:
        releases.append(releases[-1] + g)
    w = mig.generate_workload(sizes, releases, gpu, preset[0], preset[1], seed=seed)
    if not reconf:
        w = w.without_reconfiguration()
    r = far.plan(w, method=method)
    assert mig.check(w, r.schedule) == []  # releases, sessions across batch boundaries, serialised ops
    by_task = r.schedule.by_task()
    for b in w.batches:
        assert min(by_task[t.name].start for t in b.tasks) >= b.release - 1e-9
    assert r.makespan == pytest.approx(r.schedule.makespan)


def test_methods_compare_and_move_swap_never_worse_than_reversed():
    improved = 0
    for seed in range(12):
        w = mig.generate_workload([10, 10, 10], [0.0, 0.0, 0.0], "A100", seed=seed)
        res = far_multibatch.compare_concatenations(w)
        assert res["move_swap"] <= res["reversed"] + 1e-9
        assert res["p_move_swap"] == pytest.approx((res["trivial"] / res["move_swap"] - 1) * 100)
        improved += res["move_swap"] < res["trivial"]
    assert improved >= 6  # overlapping batches beats waiting for the last task (Table 7)


def test_instance_reused_across_batches():
    # Two batches whose tasks all prefer the whole GPU: the reversed second batch
    # keeps running on the 7@0 instance the first one left alive (no create).
    a100 = gpus.get("A100")
    mk = lambda name, t7: mig.Task(name, {1: 7 * t7, 2: 3.6 * t7, 3: 2.4 * t7, 4: 1.8 * t7, 7: t7})
    b0 = mig.Problem(a100, [mk("a", 5.0), mk("b", 4.0)])
    b1 = mig.Problem(a100, [mk("c", 3.0), mk("d", 2.0)], release=1.0)
    w = mig.Workload(a100, [b0, b1])
    r = far.plan(w, method="reversed")
    assert mig.check(w, r.schedule) == []
    assert r.stats["reused"] == 1
    creates = [o for o in r.schedule.reconfigurations if o.op == "create"]
    assert len(creates) == 1 and not [o for o in r.schedule.reconfigurations if o.op == "destroy"]
    assert r.makespan == pytest.approx(a100.create_time[7] + 14.0)


def test_trivial_waits_for_previous_batch():
    w = mig.generate_workload([6, 6], [0.0, 0.0], "A30", seed=3)
    r = far.plan(w, method="trivial")
    first_end = max(t.end for t in r.schedule.tasks if t.task.startswith("b0_"))
    assert min(t.start for t in r.schedule.tasks if t.task.startswith("b1_")) >= first_end - 1e-9


def test_single_batch_workload_and_errors():
    p = mig.generate(8, "A30", seed=1)
    w = mig.Workload("A30", [p])
    r = far.plan(w)
    assert mig.check(w, r.schedule) == []
    assert "Batch 0" in r.tree
    with pytest.raises(InstanceError, match="method"):
        far.plan(w, method="sideways")
    with pytest.raises(InstanceError):
        far_multibatch.plan_workload(p)


def _zero_times(gpu, sizes):
    g = gpus.get(gpu)
    return dataclasses.replace(g, **{k: MappingProxyType({s: 0.0 if s in sizes else t for s, t in getattr(g, k).items()})
                                     for k in ("create_time", "destroy_time")})


# Found infeasible before the multi-batch concatenation used the shared channel:
# a zero-length destroy was placed without being booked, inside another operation.
@pytest.mark.parametrize("gpu, size, seed, method", [("A30", 2, 7, "reversed"), ("A100", 2, 4, "move_swap"),
                                                     ("A100", 3, 46, "reversed"), ("A100", 4, 33, "trivial")])
def test_zero_length_operations_never_sit_inside_others(gpu, size, seed, method):
    w = mig.generate_workload([5, 6, 4], [0.0, 3.0, 6.0], _zero_times(gpu, {size}), seed=seed)
    assert mig.check(w, far.schedule(w, method=method)) == []


@settings(max_examples=30)
@given(gpu=st.sampled_from(["A30", "A100"]), zero=st.data(), seed=st.integers(0, 10_000),
       method=st.sampled_from(far_multibatch.CONCATENATIONS))
def test_gpu_with_some_zero_reconfiguration_times(gpu, zero, seed, method):
    sizes = zero.draw(st.lists(st.sampled_from(gpus.get(gpu).sizes), min_size=1, max_size=3, unique=True))
    w = mig.generate_workload([5, 6, 4], [0.0, 3.0, 6.0], _zero_times(gpu, set(sizes)), seed=seed)
    assert mig.check(w, far.schedule(w, method=method)) == []
