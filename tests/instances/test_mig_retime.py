"""The shared re-timing routine: feasible, never longer, and exact in the problem's own float times."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from heuristics import far
from instances import gpus, mig
from instances.mig_retime import Session, canonical, plan_from_schedule, retime_order, retime_sessions


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), gpu=st.sampled_from(["A30", "A100", "H100"]), seed=st.integers(0, 10_000),
       reconf=st.booleans())
def test_retiming_a_feasible_schedule_never_lengthens_it(n, gpu, seed, reconf):
    p = mig.generate(n, gpu, "MixedScaling", "WideTimes", seed)
    p = p if reconf else p.without_reconfiguration()
    s = far.schedule(p)
    plan = plan_from_schedule(p, s)
    assert mig.check(p, plan.schedule) == []
    assert plan.makespan <= s.makespan * (1 + 1e-12)
    can = canonical(p, s)
    assert mig.check(p, can) == [] and can.makespan == s.makespan
    order = {t.name: i for i, t in enumerate(p.tasks)}
    for left, right in p.gpu.symmetric_subtrees():
        on = sorted((order[r.task], r.placement) for r in can.tasks if r.placement in left + right)
        assert not on or on[0][1] in left


def test_order_and_sessions_use_the_float_times():
    p = mig.Problem("A30", [mig.Task("a", {1: 3e-7, 2: 2e-7, 4: 1e-7}), mig.Task("b", {1: 3e-7, 2: 2e-7, 4: 1e-7})])
    g = p.gpu
    free = p.without_reconfiguration()
    assert retime_order(free, [("a", g.placement(4, 0)), ("b", g.placement(4, 0))]).makespan == 2e-7
    plan = retime_sessions(p, [Session(g.placement(2, 0), ("a",)), Session(g.placement(2, 2), ("b",))],
                           [0.0, 1.0], [math.inf, math.inf])
    assert mig.check(p, plan.schedule) == []
    assert plan.makespan == pytest.approx(0.12 + 0.12 + 2e-7, rel=1e-15)


def test_a_plan_that_contradicts_itself_is_refused():
    p = mig.Problem("A30", [mig.Task("a", {1: 3.0, 2: 2.0, 4: 1.0}), mig.Task("b", {1: 3.0, 2: 2.0, 4: 1.0})])
    g = p.gpu
    # 4@0 created first, never destroyed, yet 2@0 needs its slices later
    with pytest.raises(ValueError, match="never destroyed"):
        retime_sessions(p, [Session(g.placement(4, 0), ("a",)), Session(g.placement(2, 0), ("b",))],
                        [0.0, 1.0], [math.inf, math.inf])


def test_gpu_symmetries_are_cached_and_in_preorder():
    g = gpus.get("A100")
    assert g.symmetric_subtrees() is g.symmetric_subtrees()
    assert [p.name for p in g.subtree(g.placement(3, 0))] == ["3@0", "2@0", "1@0", "1@1", "2@2", "1@2", "1@3"]
    assert len(g.subtree(g.root)) == len(g.placements)
