"""Times whose sums a double can no longer hold are refused; all others give schedules the checker accepts.

A MIG task released at 1e17 s once made FAR return a schedule the checker
rejected ("runs 0 s (1e+17-1e+17)": ``1e17 + 4 == 1e17``) and its command
line exit 1 with "internal error"; a heterogeneous task arriving at 1e17 did
the same. The guards (``mig_problem.check_scale``, the ``HeteroProblem``
constructor) refuse data whose horizon holds the shortest time less
precisely than the checker's tolerance. Property, over random offsets and
scales: either one ``InstanceError`` line, or the heuristics' schedules pass
the family's own checker, and the command line exits 0 or 2, never 1.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heuristics import far, far_baselines, far_node
from heuristics import hetero as hh
from instances import case, gpus, hetero, mig, mig_node
from instances.errors import InstanceError
from instances.hetero_problem import HeteroProblem, Task as HTask

OFFSETS = st.one_of(st.just(0.0), st.builds(lambda m, e: m * 10.0 ** e, st.floats(1.0, 9.99), st.integers(0, 300)))
SCALES = st.builds(lambda m, e: m * 10.0 ** e, st.floats(1.0, 9.99), st.integers(-12, 12))
COMMON = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _scaled(problem: mig.Problem, scale: float, release: float, create: float) -> mig.Problem:
    gpu = problem.gpu
    if create != 1.0:
        gpu = dataclasses.replace(gpu, name=f"{gpu.name}-slow",
                                  create_time={s: t * create for s, t in gpu.create_time.items()},
                                  destroy_time={s: t * create for s, t in gpu.destroy_time.items()})
    tasks = [mig.Task(t.name, {s: v * scale for s, v in t.times.items()}) for t in problem.tasks]
    return mig.Problem(gpu, tasks, release)


def _one_line_refusal(call):
    try:
        return call()
    except InstanceError as exc:
        assert "\n" not in str(exc)
        return None


@COMMON
@given(n=st.integers(1, 6), gpu=st.sampled_from(["A30", "A100"]), seed=st.integers(0, 1000), release=OFFSETS,
       scale=SCALES, create=st.one_of(st.just(1.0), SCALES))
# found by hypothesis: times of 1e-11 s at a release of 1e6 s (ulp 1.2e-10 s) were within the checker's
# absolute tolerance, yet creates and destroys they kept apart fell on the same instant (rule 2)
@example(n=3, gpu="A30", seed=0, release=1e6, scale=1e-11, create=1e-10)
def test_mig_far_and_baselines_are_refused_or_checked(n, gpu, seed, release, scale, create):
    try:
        problem = _scaled(mig.generate(n, gpu, seed=seed), scale, release, create)
    except InstanceError:
        return  # a time the loader itself refuses (no longer finite, or 0)
    for method in (far.schedule, far_baselines.fixpart_best):
        schedule = _one_line_refusal(lambda: method(problem))
        if schedule is not None:
            assert mig.check(problem, schedule) == [], (method.__name__, release, scale, create)


@COMMON
@given(seed=st.integers(0, 1000), release=OFFSETS, scale=SCALES)
def test_a_late_batch_of_a_workload_is_refused_or_checked(seed, release, scale):
    first = _scaled(mig.generate(3, "A30", seed=seed), scale, 0.0, 1.0)
    second = _scaled(mig.generate(2, "A30", seed=seed + 1, prefix="u"), scale, release, 1.0)
    workload = mig.Workload("A30", [first, second])
    schedule = _one_line_refusal(lambda: far.schedule(workload))
    if schedule is not None:
        assert mig.check(workload, schedule) == []


@COMMON
@given(seed=st.integers(0, 1000), factor=OFFSETS, g=st.integers(1, 3))
def test_a_node_is_refused_or_checked(seed, factor, g):
    """A node batch has no release: one task's times ``factor`` times longer mixes the scales instead."""
    batch = mig.generate(4, "A30", seed=seed)
    first = batch.tasks[0]
    try:
        longest = mig.Task(first.name, {s: t * max(factor, 1.0) for s, t in first.times.items()})
    except InstanceError:
        return
    problem = mig_node.NodeProblem.from_problem(mig.Problem("A30", (longest, *batch.tasks[1:])), g)
    schedule = _one_line_refusal(lambda: far_node.schedule(problem))
    if schedule is not None:
        assert mig.check_node(problem, schedule) == []


@COMMON
@given(seed=st.integers(0, 1000), offset=OFFSETS, n=st.integers(1, 8))
def test_hetero_is_refused_or_checked(seed, offset, n):
    base = hetero.generate(n, ("T4", "H100"), seed=seed)
    try:
        problem = HeteroProblem(tuple(HTask(t.name, t.workload, t.memory, t.deadline + offset, t.weight,
                                            t.arrival + offset) for t in base.tasks), base.gpus)
    except InstanceError as exc:
        assert "\n" not in str(exc)
        return
    for method in (hh.greedy, hh.fifo, lambda p: hh.ils(p, time_limit=None, max_iter=5, seed=0)):
        assert hetero.check(problem, method(problem)) == []


@COMMON
@given(seed=st.integers(0, 100), scale=SCALES)
def test_case_is_refused_or_checked(seed, scale):
    from heuristics import case as hc

    base = case.generate("A", n=4, seed=seed)
    # one job's times scaled: the others' short times must survive next to its long ones
    first = base.jobs[0]
    jobs = (dataclasses.replace(first, tasks=tuple(dataclasses.replace(t, duration=t.duration * scale,
                                                                       cpu=t.cpu * scale) for t in first.tasks)),
            *base.jobs[1:])
    try:
        workload = dataclasses.replace(base, jobs=jobs)
    except InstanceError:
        return
    trace = _one_line_refusal(lambda: hc.simulate(workload))
    if trace is not None:
        assert case.check(workload, trace) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100), scale=st.one_of(SCALES, st.sampled_from([1e-300, 1e300])), mixed=st.booleans())
@example(seed=0, scale=1e-300, mixed=False)
def test_realtime_is_refused_or_checked(seed, scale, mixed):
    """Periods and times in any unit: a one-line refusal or a partition the checker accepts.

    Small units once made the demand test's deadline grid astronomically long (an absolute 1e-9 of
    slack next to periods of 1e-298) and ended in numpy's "Maximum allowed size exceeded".
    """
    from heuristics import realtime as hr
    from instances import realtime as rt

    base = rt.generate(5, 2.5, sms=16, seed=seed)
    k = 1 if mixed else base.n
    tasks = [dataclasses.replace(t, period=t.period * scale, deadline=t.deadline * scale, a_n=t.a_n * scale,
                                 b_n=t.b_n * scale, a_c=t.a_c * scale, b_c=t.b_c * scale) for t in base.tasks[:k]]
    try:
        problem = rt.RealtimeProblem((*tasks, *base.tasks[k:]), sms=16)
    except InstanceError:
        return
    for name, method in hr.METHODS.items():
        solution = _one_line_refusal(lambda: method(problem))
        if solution is not None:
            assert rt.check(problem, solution) == [], name


def test_the_issue_examples_are_refused_by_name():
    a30 = mig.generate(5, "A30", seed=0)
    with pytest.raises(InstanceError, match="field release: times reach 1e\\+17"):
        mig.check_scale(mig.Problem("A30", a30.tasks, release=1e17))
    slow = dataclasses.replace(gpus.get("A30"), name="slow", create_time={s: 1e300 for s in a30.gpu.create_time})
    with pytest.raises(InstanceError, match="field (gpu.create_time|times)"):
        far.schedule(mig.Problem(slow, a30.tasks))
    h = hetero.generate(3, ("T4",), seed=0)
    with pytest.raises(InstanceError, match="field arrival: times reach"):
        HeteroProblem(tuple(dataclasses.replace(t, arrival=1e17, deadline=t.deadline + 1e17) for t in h.tasks),
                      h.gpus)


def test_a_long_but_exact_horizon_is_kept():
    """100,000 tasks of the paper's WideTimes span about 7e7 s: far inside the rule."""
    a100 = mig.generate(50, "A100", seed=4)
    mig.check_scale(mig.Problem("A100", a100.tasks, release=5e7))
    schedule = far.schedule(mig.Problem("A100", a100.tasks, release=5e7))
    assert mig.check(mig.Problem("A100", a100.tasks, release=5e7), schedule) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(release=OFFSETS, scale=SCALES, seed=st.integers(0, 100))
def test_far_command_line_exits_0_or_2(tmp_path, release, scale, seed):
    """FAR's command line on any offset and unit: a checked schedule (0) or one error line (2), never 1."""
    from heuristics import far_cli

    try:
        problem = _scaled(mig.generate(4, "A30", seed=seed), scale, release, 1.0)
    except InstanceError:
        return
    path = tmp_path / "p.json"
    path.write_text(json.dumps(problem.to_dict()))
    assert far_cli.main([str(path)]) in (0, 2)


@pytest.mark.parametrize("release", [1e17, 1e300])
def test_far_command_line_exits_2_not_1(tmp_path, release):
    problem = mig.Problem("A30", mig.generate(4, "A30", seed=0).tasks, release=release)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(problem.to_dict()))
    run = subprocess.run([sys.executable, "-m", "heuristics.far", str(path)], capture_output=True, text=True)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert len(run.stderr.strip().splitlines()) == 1 and "release" in run.stderr, run.stderr
