"""Starting plans for the Pyomo MIG model: list schedules, the serial schedule, a user's hint.

The plans give :mod:`milp.mig_pyomo` its horizon and initial incumbent. Each
is re-timed by the shared routine of :mod:`instances.mig_retime` into an
exact schedule; whether reconfiguration applies is read from the problem (a
GPU with zero create/destroy times has none).

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> best_plan(p.without_reconfiguration()).makespan
2.5
>>> round(best_plan(p).makespan, 2)
2.74
"""

from __future__ import annotations

from typing import Sequence, Union

from instances.mig_problem import Problem, Workload
from instances.options import Deadline
from instances.mig_retime import (Session, TimedPlan, plan_from_runs, plan_from_schedule, retime_order,
                                  retime_sessions)
from instances.mig_schedule import Schedule, ScheduledTask

__all__ = ["greedy_order", "serial_on_root", "improve_channel", "best_plan"]

AnyProblem = Union[Problem, Workload]


def greedy_order(problem: AnyProblem, key: str = "lpt", cap: int | None = None) -> TimedPlan:
    """Append-only list schedule: tasks in ``key`` order, each on the placement where it ends first.

    ``key`` is ``"lpt"`` (longest time on the whole GPU first), ``"work"``
    (largest minimum area first) or ``"fifo"`` (input order); ``cap`` limits
    the sizes to those <= cap (a task whose sizes are all larger keeps its
    smallest). With reconfiguration every create time is charged to the task
    that needs it and the result is re-timed as sessions.
    """
    gpu = problem.gpu
    reconfiguration = gpu.reconfigurable
    releases = problem.releases()
    tasks = list(problem.tasks)
    if key == "lpt":
        tasks = sorted(tasks, key=lambda t: (releases[t.name], -t.times[max(t.sizes)]))
    elif key == "work":
        tasks = sorted(tasks, key=lambda t: (releases[t.name], -min(t.work(s) for s in t.sizes)))
    elif key != "fifo":
        raise ValueError(f"unknown greedy key {key!r}")
    free: dict[int, float] = {}
    last_on: dict[int, tuple[int, int] | None] = {}
    runs = []
    for t in tasks:
        best = None
        limit = max(cap if cap is not None else max(t.sizes), min(t.sizes))
        for p in gpu.placements:
            if p.size not in t.times or p.size > limit:
                continue
            start = max([releases[t.name]] + [free.get(k, 0.0) for k in p.slices])
            if reconfiguration and any(last_on.get(k) != p.key() for k in p.slices):
                start += gpu.create_time[p.size] + max(gpu.destroy_time.values())
            end = start + t.times[p.size]
            cand = (end, len(p.slices) * t.times[p.size], p.size, p.start)
            if best is None or cand < best[0]:
                best = (cand, p, start, end)
        _, p, start, end = best
        for k in p.slices:
            free[k] = end
            last_on[k] = p.key()
        runs.append(ScheduledTask(t.name, p, start, end))
    return plan_from_runs(problem, runs)


def serial_on_root(problem: AnyProblem) -> TimedPlan:
    """Every task on the whole GPU, one after another in release order (a valid horizon)."""
    root = problem.gpu.root
    releases = problem.releases()
    names = sorted((t.name for t in problem.tasks), key=lambda n: releases[n])
    if not problem.gpu.reconfigurable:
        return retime_order(problem, [(n, root) for n in names])
    return retime_sessions(problem, [Session(root, tuple(names))], [0.0], [0.0])


def improve_channel(problem: AnyProblem, plan: TimedPlan, passes: int = 4,
                    deadline: Deadline | None = None) -> TimedPlan:
    """Hill-climb on the channel order: swap adjacent operations while the makespan drops.

    Sessions and task orders stay; swapping two creates renumbers the
    sessions (and so which of two intersecting sessions comes first), and
    orders that contradict the plan are skipped. Stops early when
    ``deadline`` expires.
    """
    if not plan.sessions:
        return plan
    m = len(plan.sessions)
    needed = {j for op, j, _ in plan.ops if op == "destroy"}
    chan = [(op, j) for op, j, _ in plan.ops]
    # sessions not destroyed keep a slot at the end: a swap may make their destroy needed
    chan += [("destroy", j) for j in range(m) if j not in needed]
    best = plan
    for _ in range(passes):
        improved = False
        for k in range(len(chan) - 1):
            if deadline is not None and deadline.expired():
                return best
            cand = chan[:k] + [chan[k + 1], chan[k]] + chan[k + 2:]
            pos = {o: i for i, o in enumerate(cand)}
            try:
                trial = retime_sessions(problem, plan.sessions, [pos[("create", j)] for j in range(m)],
                                        [pos[("destroy", j)] for j in range(m)])
            except ValueError:
                continue
            if trial.makespan < best.makespan * (1 - 1e-12):
                best, chan, improved = trial, cand, True
        if not improved:
            break
    return best


def best_plan(problem: AnyProblem, hints: Sequence[Schedule] = (), deadline: Deadline | None = None) -> TimedPlan:
    """The shortest of the greedy plans, the serial plan and the re-timed hints.

    Its makespan is a valid upper bound on the optimum (the MILP's horizon).
    The channel local search stops early when ``deadline`` expires.
    """
    reconfiguration = problem.gpu.reconfigurable
    caps = problem.gpu.sizes
    plans = [greedy_order(problem, key, cap) for key in ("lpt", "work", "fifo") for cap in caps]
    plans.append(serial_on_root(problem))
    if reconfiguration:
        # the same list schedules as if reconfiguration were free, then sessionized
        free = problem.without_reconfiguration()
        plans += [plan_from_runs(problem, greedy_order(free, key, cap).schedule.tasks)
                  for key in ("lpt", "work") for cap in caps]
    plans += [plan_from_schedule(problem, h) for h in hints]
    best = min(plans, key=lambda pl: pl.makespan)
    if reconfiguration:
        best = min((improve_channel(problem, pl, deadline=deadline)
                    for pl in sorted(plans, key=lambda pl: pl.makespan)[:3]),
                   key=lambda pl: pl.makespan)
    return best
