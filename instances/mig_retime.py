"""Re-timing a MIG plan into an exact schedule: the one routine every method shares.

A *plan* is the combinatorial part of a MIG schedule: which placement each
task uses and in which order things happen. Times are recomputed from the
plan with the problem's own float durations (earliest start on a precedence
graph), so a plan read off a rounded or scaled model, whose times carry
rounding and solver tolerances, becomes an exact schedule that the
independent checker (:mod:`instances.mig_check`, which shares no code with
this module) accepts. Earliest starts on a graph whose edges the plan's own
times satisfy never come later than those times, so re-timing never lengthens
a schedule whose durations were not shortened.

* Without reconfiguration a plan is an order of ``(task, placement)``: a task
  starts when its release has passed and every earlier task on a
  slice-sharing placement has ended (:func:`retime_order`).
* With reconfiguration a plan is a list of instance sessions (placement and
  task sequence), each with a nominal create and destroy time that only fixes
  the order of the operations on the serialised channel (rule 4). Of two
  intersecting sessions the one created first is destroyed before the other
  is created (rule 3); a session is destroyed only when such a later session
  exists (rule 2) (:func:`retime_sessions`).

Whether reconfiguration applies is read from the problem: a GPU with zero
create/destroy times (``problem.without_reconfiguration()``) has none.

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> sessions = [Session(p.gpu.placement(2, 0), ("a",)), Session(p.gpu.placement(2, 2), ("b",))]
>>> plan = retime_sessions(p, sessions, [0.0, 1.0], [9.0, 9.0])
>>> round(plan.makespan, 2), [op for op, _, _ in plan.ops]  # two creates of 0.12 s, then 2.5 s
(2.74, ['create', 'create'])
"""

from __future__ import annotations

import graphlib
import math
from dataclasses import dataclass, replace
from typing import Sequence, Union

from instances.errors import InstanceError
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.options import typed

__all__ = ["Session", "TimedPlan", "retime_order", "retime_sessions", "sessionize", "plan_from_runs",
           "plan_from_schedule", "canonical"]

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
    reconfiguration. ``order`` is the task order by start.
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


@typed
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


@typed
def retime_sessions(problem: AnyProblem, sessions: Sequence[Session], create_at: Sequence[float],
                    destroy_at: Sequence[float]) -> TimedPlan:
    """Earliest-time schedule with reconfiguration for a session plan.

    Parameters
    ----------
    sessions
        The sessions, each with its task sequence.
    create_at, destroy_at
        Nominal times of each session's create and destroy operation (``inf``
        for a session the plan never destroys); they only order the channel
        (ties: destroys first). Sessions are numbered again in create order.

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
    for j in range(m):
        if later[j] and math.isinf(destroy_at[j]):
            raise ValueError(f"inconsistent session plan: session {j} on {sessions[j].placement.name} is never "
                             "destroyed but a later session needs its slices")
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


@typed
def plan_from_runs(problem: AnyProblem, runs: Sequence[ScheduledTask]) -> TimedPlan:
    """Re-time task runs by their start order (grouped into sessions when the GPU reconfigures)."""
    if not problem.gpu.reconfigurable:
        return retime_order(problem, [(r.task, r.placement) for r in sorted(runs, key=lambda r: (r.start, r.task))])
    sessions, c_at, d_at = sessionize(runs)
    return retime_sessions(problem, sessions, c_at, d_at)


@typed
def plan_from_schedule(problem: AnyProblem, schedule: Schedule) -> TimedPlan:
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
    if not gpu.reconfigurable:
        return plan_from_runs(problem, runs)
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


@typed
def canonical(problem: AnyProblem, plan: TimedPlan | Schedule) -> TimedPlan | Schedule:
    """The plan (or schedule) mapped by GPU automorphisms onto the symmetry-broken form of the exact models.

    For every pair (A, B) of :meth:`~instances.gpus.GPUSpec.symmetric_subtrees`,
    outer pairs first, the lowest-indexed task placed in A or B ends up in A.
    Times are unchanged: exchanging isomorphic sibling subtrees preserves sizes
    and intersections, and inner swaps never change an outer subtree's tasks.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})]).without_reconfiguration()
    >>> s = mig.Schedule("A30", [mig.ScheduledTask("a", p.gpu.placement(1, 3), 0.0, 4.0)])
    >>> canonical(p, s).tasks[0].placement.name
    '1@0'
    """
    order = {t.name: i for i, t in enumerate(problem.tasks)}
    for A, B in problem.gpu.symmetric_subtrees():
        sched = plan.schedule if isinstance(plan, TimedPlan) else plan
        on = [(order[st.task], st.placement) for st in sched.tasks if st.placement in A or st.placement in B]
        if not on or min(on, key=lambda x: x[0])[1] in A:
            continue
        perm = dict(zip(A, B))
        perm.update(zip(B, A))

        def mp(p: Placement) -> Placement:
            return perm.get(p, p)

        new = Schedule(sched.gpu, [replace(st, placement=mp(st.placement)) for st in sched.tasks],
                       [replace(op, placement=mp(op.placement)) for op in sched.reconfigurations])
        if isinstance(plan, TimedPlan):
            plan = TimedPlan(new, [Session(mp(s.placement), s.tasks) for s in plan.sessions], list(plan.ops),
                             [(nm, mp(p)) for nm, p in plan.order])
        else:
            plan = new
    return plan
