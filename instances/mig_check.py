"""The independent feasibility checker for MIG schedules.

It shares no logic with any scheduler: it rebuilds instance sessions from the
schedule's own create/destroy operations and checks the
reconfiguration rules 1-6 (FAR paper, Sec. 2.1-2.2) literally:

1. At t = 0 the GPU has no instances: every task runs inside a session that the
   schedule itself creates; nothing happens before t = 0.
2. A session of placement p is a create (lasting t_create(size)), one or more
   tasks one after another, then (optionally, if p's slices are used later) a
   destroy (lasting t_destroy(size)) starting no earlier than its last task's
   end. It occupies p's slices from the create's start to the destroy's end
   (forever when never destroyed).
3. Sessions whose occupied slices intersect never overlap in time.
4. All create and destroy operations run one at a time, with their durations.
5. Each task runs exactly once, for exactly t_i(size) (no preemption), on a
   placement of the GPU its memory allows, not before its batch's release.
6. Makespan = the last task end.

The problem carries whether reconfiguration applies: a GPU whose create and
destroy times are all zero (``problem.without_reconfiguration()``) is the
problem without it. There rules 2-4 reduce to: tasks whose placements share an
occupied slice never overlap in time, and no create/destroy operation is
required. (Operations a schedule does list are still checked against rules
1-4, with their zero durations.)

Every violation is reported (not just the first), as a message starting with
the rule it breaks, e.g. ``"rule 3 (slice conflict): ..."``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Union

from instances import mig_problem
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule
from instances.errors import ArgumentTypeError

__all__ = ["check", "is_feasible", "TOLERANCE"]

#: Absolute tolerance (seconds) for comparing times; scaled up for large values.
TOLERANCE = mig_problem.TOLERANCE  # one value: check_scale refuses data the checker cannot verify


def _tol(*values: float) -> float:
    # infinite times (an overflowed sum) must not widen the tolerance to inf; with only
    # those, max() would get the bare 1.0 and fail, hence the list
    return TOLERANCE * max([1.0, *(abs(v) for v in values if math.isfinite(v))])


def _lt(a: float, b: float) -> bool:
    """a < b by more than the tolerance."""
    return a < b - _tol(a, b)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _tol(a, b)


def check(problem: Union[Problem, Workload], schedule: Schedule) -> list[str]:
    """Every rule the schedule breaks, as human-readable messages; ``[]`` means feasible.

    Parameters
    ----------
    problem
        A :class:`Problem` (one batch) or a :class:`Workload` (release times per batch).
    schedule
        The schedule to verify. Instance sessions and create/destroy
        operations (rules 1-4) are checked when the GPU has non-zero
        reconfiguration times or the schedule lists operations; otherwise only
        the task-level rules (slice-sharing tasks never overlap).

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> pl = p.gpu.placement(4, 0)
    >>> good = mig.Schedule("A30", [mig.ScheduledTask("a", pl, 0.13, 1.63)],
    ...                     [mig.Reconfiguration("create", pl, 0.0, 0.13)])
    >>> check(p, good)
    []
    >>> late = mig.Schedule("A30", [mig.ScheduledTask("a", pl, 0.0, 1.5)])
    >>> check(p, late)[0][:32]
    'rule 2 (sessions): task a on 4@0'
    >>> check(p.without_reconfiguration(), late)  # zero create/destroy times: no instances needed
    []
    """
    # the type checks of instances.options are not used here: the checker shares no code with the methods
    if not isinstance(problem, (Problem, Workload)):
        raise ArgumentTypeError("instances.mig.check: problem must be a Problem or Workload, got "
                                f"{type(problem).__name__}")
    if not isinstance(schedule, Schedule):
        raise ArgumentTypeError(f"instances.mig.check: schedule must be a Schedule, got {type(schedule).__name__}")
    gpu = problem.gpu
    out: list[str] = []
    reconfiguration = gpu.reconfigurable or bool(schedule.reconfigurations)

    if schedule.gpu != gpu.name:
        out.append(f"gpu: the schedule is for {schedule.gpu!r}, the problem for {gpu.name!r}")

    # -- rule 5: the task set, placements, durations, releases ---------------
    tasks_by_name = {t.name: t for t in problem.tasks}
    releases = problem.releases()
    seen: dict[str, int] = defaultdict(int)
    for st in schedule.tasks:
        seen[st.task] += 1
    for name, count in seen.items():
        if name not in tasks_by_name:
            out.append(f"rule 5 (task set): task {name} is not in the problem")
        elif count > 1:
            out.append(f"rule 5 (task set): task {name} is scheduled {count} times")
    for name in tasks_by_name:
        if name not in seen:
            out.append(f"rule 5 (task set): task {name} is not scheduled")

    valid_runs = []
    for st in schedule.tasks:
        p = st.placement
        if not gpu.has_placement(p.size, p.start) or gpu.placement(p.size, p.start).slices != p.slices:
            out.append(f"placement: task {st.task} uses {p.name} slices {sorted(p.slices)}, "
                       f"which is not a placement of {gpu.name}")
            continue
        if not (math.isfinite(st.start) and math.isfinite(st.end)):
            out.append(f"rule 5 (duration): task {st.task} has a non-finite start or end")
            continue
        task = tasks_by_name.get(st.task)
        if task is not None:
            if p.size not in task.times:
                out.append(f"rule 5 (size): task {st.task} cannot run on size {p.size} "
                           f"(allowed {sorted(task.times)}; memory requirement {task.memory_gb})")
            elif not _close(st.end - st.start, task.times[p.size]):
                out.append(f"rule 5 (duration): task {st.task} on {p.name} runs {st.end - st.start:.9g} s "
                           f"({st.start:.9g}-{st.end:.9g}); its time on size {p.size} is {task.times[p.size]:.9g} s")
            if releases[st.task] > 0 and _lt(st.start, releases[st.task]):  # t < 0 is rule 1's
                out.append(f"release: task {st.task} starts at {st.start:.9g}, before its batch's release "
                           f"{releases[st.task]:.9g}")
        if _lt(st.start, 0.0):
            out.append(f"rule 1 (time zero): task {st.task} starts at {st.start:.9g} < 0")
        valid_runs.append(st)

    # -- rule 6: makespan ----------------------------------------------------
    last_end = max((st.end for st in schedule.tasks), default=0.0)
    if not _close(schedule.makespan, last_end):
        out.append(f"rule 6 (makespan): declared {schedule.makespan:.9g}, last task ends at {last_end:.9g}")

    # -- tasks on slice-sharing placements never overlap (rule 3 at task level,
    #    and rule 2's "one after another" for tasks of one instance) ---------
    per_slice: dict[int, list] = defaultdict(list)
    for st in valid_runs:
        for s in st.placement.slices:
            per_slice[s].append(st)
    reported: set[tuple[str, str]] = set()
    for s, runs in sorted(per_slice.items()):
        runs.sort(key=lambda r: (r.start, r.end))
        latest = None  # the run reaching furthest so far
        for r in runs:
            if latest is not None and _lt(r.start, latest.end):
                pair = tuple(sorted((latest.task, r.task)))
                if pair not in reported:
                    reported.add(pair)
                    out.append(f"rule 3 (slice conflict): tasks {latest.task} on {latest.placement.name} "
                               f"({latest.start:.9g}-{latest.end:.9g}) and {r.task} on {r.placement.name} "
                               f"({r.start:.9g}-{r.end:.9g}) overlap on slice {s}")
            if latest is None or r.end > latest.end:
                latest = r

    if not reconfiguration:
        return out

    # -- rule 4: operations have their durations and run one at a time ------
    ops = []
    for i, op in enumerate(schedule.reconfigurations):
        p = op.placement
        if not gpu.has_placement(p.size, p.start) or gpu.placement(p.size, p.start).slices != p.slices:
            out.append(f"placement: {op.op} #{i} uses {p.name}, which is not a placement of {gpu.name}")
            continue
        want = (gpu.create_time if op.op == "create" else gpu.destroy_time)[p.size]
        if not _close(op.end - op.start, want):
            out.append(f"rule 4 (operation duration): {op.op} of {p.name} at {op.start:.9g} lasts "
                       f"{op.end - op.start:.9g} s; t_{op.op}({p.size}) = {want:.9g} s")
        if _lt(op.start, 0.0):
            out.append(f"rule 1 (time zero): {op.op} of {p.name} starts at {op.start:.9g} < 0")
        ops.append(op)
    by_start = sorted(ops, key=lambda o: (o.start, o.end))
    for a, b in zip(by_start, by_start[1:]):
        if _lt(b.start, a.end):
            out.append(f"rule 4 (serialised reconfiguration): {a.op} of {a.placement.name} "
                       f"({a.start:.9g}-{a.end:.9g}) overlaps {b.op} of {b.placement.name} "
                       f"({b.start:.9g}-{b.end:.9g})")

    # -- rule 2: sessions from each placement's own operations ---------------
    sessions = []  # (placement, create_op, destroy_op or None)
    by_placement: dict[tuple[int, int], list] = defaultdict(list)
    for op in ops:
        by_placement[op.placement.key()].append(op)
    for key, plist in sorted(by_placement.items()):
        plist.sort(key=lambda o: (o.start, 0 if o.op == "destroy" else 1))
        open_create = None
        name = f"{key[0]}@{key[1]}"
        for op in plist:
            if op.op == "create":
                if open_create is not None:
                    out.append(f"rule 2 (sessions): {name} is created at {op.start:.9g} while its instance "
                               f"created at {open_create.start:.9g} still exists")
                    sessions.append((open_create.placement, open_create, None))
                open_create = op
            else:
                if open_create is None:
                    out.append(f"rule 2 (sessions): {name} is destroyed at {op.start:.9g} without an instance")
                    continue
                sessions.append((op.placement, open_create, op))
                open_create = None
        if open_create is not None:
            sessions.append((open_create.placement, open_create, None))

    # each task inside a session of its placement, after the create, before the destroy
    session_tasks: dict[int, list] = defaultdict(list)
    for st in valid_runs:
        home = None
        for idx, (p, c, d) in enumerate(sessions):
            if p.key() != st.placement.key():
                continue
            if not _lt(st.start, c.end) and (d is None or not _lt(d.start, st.end)):
                home = idx
                break
        if home is None:
            out.append(f"rule 2 (sessions): task {st.task} on {st.placement.name} ({st.start:.9g}-{st.end:.9g}) "
                       f"is not inside an instance created before it and destroyed after it")
        else:
            session_tasks[home].append(st)
    for idx, (p, c, d) in enumerate(sessions):
        if not session_tasks[idx]:
            out.append(f"rule 2 (sessions): the instance {p.name} created at {c.start:.9g} runs no task")

    # -- rule 3: sessions of intersecting placements never overlap ----------
    def span(sess):
        p, c, d = sess
        return c.start, (math.inf if d is None else d.end)

    for i in range(len(sessions)):
        pi = sessions[i][0]
        si, ei = span(sessions[i])
        for j in range(i + 1, len(sessions)):
            pj = sessions[j][0]
            if not pi.intersects(pj):
                continue
            sj, ej = span(sessions[j])
            if _lt(si, ej) and _lt(sj, ei):
                def fmt(x):
                    return "end of time" if x == math.inf else f"{x:.9g}"
                out.append(f"rule 3 (slice conflict): instance {pi.name} ({fmt(si)}-{fmt(ei)}) and instance "
                           f"{pj.name} ({fmt(sj)}-{fmt(ej)}) share slices "
                           f"{sorted(pi.slices & pj.slices)} at the same time")
    return out


def is_feasible(problem: Union[Problem, Workload], schedule: Schedule) -> bool:
    """``check(problem, schedule) == []``."""
    return not check(problem, schedule)
