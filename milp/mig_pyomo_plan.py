"""Discrete MIG plans and their re-timing into checked schedules (helpers of :mod:`milp.mig_pyomo`).

A *plan* is the combinatorial part of a MIG schedule (seed 000, Sec. 2.2;
DESIGN.md rules 1-6): which placement every task uses and in which order
things happen. Times are then recomputed from the plan with the true float
durations (earliest start on a precedence graph), so a plan read off a MILP
solution, whose times carry solver tolerances, becomes an exact schedule that
the independent checker accepts. Because earliest starts never exceed the
times the plan came from, re-timing never lengthens a schedule.

* Without reconfiguration a plan is an order of ``(task, placement)``: a task
  starts when its release has passed and every earlier task on a
  slice-sharing placement has ended.
* With reconfiguration a plan is a list of instance sessions (placement and
  task sequence), each with a nominal create and destroy time that only fixes
  the order of the operations on the serialised channel (rule 4). The session
  created first of two intersecting sessions is destroyed before the other is
  created (rule 3); a session is destroyed only when such a later session
  exists (rule 2).

The module also builds the plans that give the MILP its horizon and initial
incumbent: an append-only greedy list schedule, the serial schedule on the
whole GPU, and a user's hint.

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> best_plan(p, reconfiguration=False).makespan
2.5
>>> round(best_plan(p, reconfiguration=True).makespan, 2)
2.74
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from typing import Sequence, Union

from instances.errors import InstanceError
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask

__all__ = ["Session", "TimedPlan", "retime_order", "retime_sessions", "sessionize", "greedy_order",
           "serial_on_root", "plan_from_schedule", "improve_channel", "best_plan"]

AnyProblem = Union[Problem, Workload]


@dataclass(frozen=True)
class Session:
    """An instance session: one placement and the tasks it runs, in order (rule 2)."""

    placement: Placement
    tasks: tuple[str, ...]


@dataclass
class TimedPlan:
    """A re-timed plan: the exact schedule plus the structure it came from.

    ``sessions`` is in create order and ``ops`` lists the channel operations
    in order as ``(op, session index, start)``; both are empty without
    reconfiguration.
    """

    schedule: Schedule
    sessions: list[Session]
    ops: list[tuple[str, int, float]]
    order: list[tuple[str, Placement]]

    @property
    def makespan(self) -> float:
        return self.schedule.makespan


def _durations(problem: AnyProblem) -> dict[str, dict[int, float]]:
    return {t.name: dict(t.times) for t in problem.tasks}


def retime_order(problem: AnyProblem, order: Sequence[tuple[str, Placement]]) -> TimedPlan:
    """Earliest-start schedule without reconfiguration for a task order.

    Each task starts at its release or when the last earlier task on a
    slice-sharing placement ends, whichever is later. Any feasible schedule is
    reproduced or improved by re-timing the order of its start times.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> retime_order(p, [("a", p.gpu.placement(2, 2))]).makespan
    2.5
    """
    times = _durations(problem)
    releases = problem.releases()
    free: dict[int, float] = {}
    runs = []
    for name, p in order:
        start = max([releases[name]] + [free.get(k, 0.0) for k in p.slices])
        end = start + times[name][p.size]
        for k in p.slices:
            free[k] = end
        runs.append(ScheduledTask(name, p, start, end))
    return TimedPlan(Schedule(problem.gpu.name, runs), [], [], list(order))


def retime_sessions(problem: AnyProblem, sessions: Sequence[Session], create_at: Sequence[float],
                    destroy_at: Sequence[float]) -> TimedPlan:
    """Earliest-time schedule with reconfiguration for a session plan.

    Parameters
    ----------
    sessions
        The sessions, each with its task sequence.
    create_at, destroy_at
        Nominal times of each session's create and destroy operation; they only
        order the channel (ties: destroys first). Sessions are numbered again in
        create order.

    Raises
    ------
    ValueError
        If the nominal times contradict the plan (a cycle of precedences).
    """
    gpu = problem.gpu
    times = _durations(problem)
    releases = problem.releases()
    idx = sorted(range(len(sessions)), key=lambda j: (create_at[j], j))
    sessions = [sessions[j] for j in idx]
    create_at = [create_at[j] for j in idx]
    destroy_at = [destroy_at[j] for j in idx]
    m = len(sessions)
    # rule 3 with rule 2: of two intersecting sessions the earlier-created one is destroyed first
    later = {j: [l for l in range(j + 1, m) if sessions[j].placement.intersects(sessions[l].placement)]
             for j in range(m)}
    ops = [("create", j, create_at[j]) for j in range(m)]
    ops += [("destroy", j, destroy_at[j]) for j in range(m) if later[j]]
    ops.sort(key=lambda o: (o[2], 0 if o[0] == "destroy" else 1, o[1]))

    dur: dict[tuple, float] = {}
    preds: dict[tuple, list[tuple]] = {}
    for op, j, _ in ops:
        size = sessions[j].placement.size
        dur[(op, j)] = (gpu.create_time if op == "create" else gpu.destroy_time)[size]
        preds[(op, j)] = []
    for a, b in zip(ops, ops[1:]):
        preds[(b[0], b[1])].append((a[0], a[1]))
    for j, sess in enumerate(sessions):
        prev = ("create", j)
        for name in sess.tasks:
            node = ("task", name)
            dur[node] = times[name][sess.placement.size]
            preds[node] = [prev]
            prev = node
        if later[j]:
            preds[("destroy", j)].append(prev)
            for l in later[j]:
                preds[("create", l)].append(("destroy", j))
    start: dict[tuple, float] = {}
    try:
        topo = list(graphlib.TopologicalSorter(preds).static_order())
    except graphlib.CycleError as exc:
        raise ValueError(f"inconsistent session plan: {exc.args[0]}") from None
    for node in topo:
        lo = releases[node[1]] if node[0] == "task" else 0.0
        start[node] = max([lo] + [start[q] + dur[q] for q in preds[node]])
    runs = [ScheduledTask(name, s.placement, start[("task", name)], start[("task", name)] + dur[("task", name)])
            for s in sessions for name in s.tasks]
    recs = [Reconfiguration(op, sessions[j].placement, start[(op, j)], start[(op, j)] + dur[(op, j)])
            for op, j, _ in ops]
    timed_ops = sorted(((op, j, start[(op, j)]) for op, j, _ in ops), key=lambda o: (o[2], o[0] == "create"))
    runs.sort(key=lambda r: (r.start, r.task))
    return TimedPlan(Schedule(gpu.name, runs, recs), list(sessions), timed_ops,
                     [(r.task, r.placement) for r in runs])


def sessionize(runs: Sequence[ScheduledTask]) -> tuple[list[Session], list[float], list[float]]:
    """Group task runs into the fewest sessions their order allows.

    Consecutive runs on one placement share a session unless a run on another
    slice-sharing placement starts between them (merging two sessions with no
    intersecting session in between only removes two operations). Returns the
    sessions and nominal create / destroy times (first start, last end).
    """
    runs = sorted(runs, key=lambda r: (r.start, r.task))
    sessions: list[list] = []  # [placement, task names, first start, last end]
    open_of: dict[tuple[int, int], int] = {}
    for r in runs:
        p = r.placement
        for key in [k for k, j in open_of.items() if k != p.key() and sessions[j][0].intersects(p)]:
            del open_of[key]
        j = open_of.get(p.key())
        if j is None:
            sessions.append([p, [], r.start, r.end])
            j = open_of[p.key()] = len(sessions) - 1
        sessions[j][1].append(r.task)
        sessions[j][3] = max(sessions[j][3], r.end)
    return ([Session(s[0], tuple(s[1])) for s in sessions], [s[2] for s in sessions], [s[3] for s in sessions])


def _plan(problem: AnyProblem, runs: Sequence[ScheduledTask], reconfiguration: bool) -> TimedPlan:
    order = [(r.task, r.placement) for r in sorted(runs, key=lambda r: (r.start, r.task))]
    if not reconfiguration:
        return retime_order(problem, order)
    sessions, c_at, d_at = sessionize(runs)
    return retime_sessions(problem, sessions, c_at, d_at)


def greedy_order(problem: AnyProblem, key: str = "lpt", reconfiguration: bool = False,
                 cap: int | None = None) -> TimedPlan:
    """Append-only list schedule: tasks in ``key`` order, each on the placement where it ends first.

    ``key`` is ``"lpt"`` (longest time on the whole GPU first), ``"work"``
    (largest minimum area first) or ``"fifo"`` (input order); ``cap`` limits
    the sizes to those <= cap (a task whose sizes are all larger keeps its
    smallest). With
    reconfiguration every create time is charged to the task that needs it
    and the result is re-timed as sessions.
    """
    gpu = problem.gpu
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
    return _plan(problem, runs, reconfiguration)


def serial_on_root(problem: AnyProblem, reconfiguration: bool) -> TimedPlan:
    """Every task on the whole GPU, one after another in release order (a valid horizon)."""
    root = problem.gpu.root
    releases = problem.releases()
    names = sorted((t.name for t in problem.tasks), key=lambda n: releases[n])
    if not reconfiguration:
        return retime_order(problem, [(n, root) for n in names])
    return retime_sessions(problem, [Session(root, tuple(names))], [0.0], [0.0])


def plan_from_schedule(problem: AnyProblem, schedule: Schedule, reconfiguration: bool) -> TimedPlan:
    """Re-time a given schedule's decisions (placements, orders, channel order) into a plan.

    The channel is ordered by the schedule's own operations where they can be
    matched to the sessions, else by the sessions' first and last task times.
    The result is never longer than a feasible input schedule.

    Raises
    ------
    InstanceError
        If the schedule does not assign every task of the problem exactly once
        to a placement of the GPU that the task may use.
    """
    gpu = problem.gpu
    names = [r.task for r in schedule.tasks]
    want = {t.name for t in problem.tasks}
    if sorted(names) != sorted(want):
        raise InstanceError("hint: the schedule does not list every task of the problem exactly once",
                            field="hint")
    runs = []
    for r in schedule.tasks:
        p = r.placement
        if not gpu.has_placement(p.size, p.start) or p.size not in problem.task(r.task).times:
            raise InstanceError(f"hint: placement {p.name} is not usable", task=r.task, field="hint")
        runs.append(ScheduledTask(r.task, gpu.placement(p.size, p.start), r.start, r.end))
    if not reconfiguration:
        return _plan(problem, runs, False)
    sessions, c_task, d_task = sessionize(runs)
    c_at, d_at = list(c_task), list(d_task)
    for j, s in enumerate(sessions):
        mine = [o for o in schedule.reconfigurations if o.placement.key() == s.placement.key()]
        creates = [o for o in mine if o.op == "create" and o.start <= c_task[j]]
        destroys = [o for o in mine if o.op == "destroy" and o.start >= d_task[j]]
        if creates:
            o = max(creates, key=lambda o: o.start)
            c_at[j] = (o.start + o.end) / 2
        if destroys:
            o = min(destroys, key=lambda o: o.start)
            d_at[j] = (o.start + o.end) / 2
    try:
        return retime_sessions(problem, sessions, c_at, d_at)
    except ValueError:
        return retime_sessions(problem, sessions, c_task, d_task)


def improve_channel(problem: AnyProblem, plan: TimedPlan, passes: int = 4) -> TimedPlan:
    """Hill-climb on the channel order: swap adjacent operations while the makespan drops.

    Sessions and task orders stay; swapping two creates renumbers the
    sessions (and so which of two intersecting sessions comes first), and
    orders that contradict the plan are skipped.
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
            cand = chan[:k] + [chan[k + 1], chan[k]] + chan[k + 2:]
            pos = {o: i for i, o in enumerate(cand)}
            try:
                trial = retime_sessions(problem, plan.sessions, [pos[("create", j)] for j in range(m)],
                                        [pos[("destroy", j)] for j in range(m)])
            except ValueError:
                continue
            if trial.makespan < best.makespan - 1e-9:
                best, chan, improved = trial, cand, True
        if not improved:
            break
    return best


def best_plan(problem: AnyProblem, reconfiguration: bool, hints: Sequence[Schedule] = ()) -> TimedPlan:
    """The shortest of the greedy plans, the serial plan and the re-timed hints.

    Its makespan is a valid upper bound on the optimum (the MILP's horizon).
    """
    caps = problem.gpu.sizes
    plans = [greedy_order(problem, key, reconfiguration, cap) for key in ("lpt", "work", "fifo") for cap in caps]
    plans.append(serial_on_root(problem, reconfiguration))
    if reconfiguration:
        # the same list schedules as if reconfiguration were free, then sessionized
        plans += [_plan(problem, greedy_order(problem, key, False, cap).schedule.tasks, True)
                  for key in ("lpt", "work") for cap in caps]
    plans += [plan_from_schedule(problem, h, reconfiguration) for h in hints]
    best = min(plans, key=lambda pl: pl.makespan)
    if reconfiguration:
        best = min((improve_channel(problem, pl) for pl in sorted(plans, key=lambda pl: pl.makespan)[:3]),
                   key=lambda pl: pl.makespan)
    return best
