"""The independent feasibility checker of the heterogeneous-GPU family (eqs. 2-6)."""

from __future__ import annotations

import math

from instances.hetero_problem import PRECISION_TOL, HeteroProblem
from instances.hetero_schedule import Assignment, Schedule
from instances.options import typed

#: Absolute tolerance for time comparisons in the checker (time units).
TOL = PRECISION_TOL  # one value: HeteroProblem refuses data the checker cannot verify


@typed
def check(problem: HeteroProblem, schedule: Schedule, tol: float = TOL) -> list[str]:
    """Independent feasibility check; returns the violations ([] = feasible).

    Verifies: every task that fits some GPU is assigned exactly once to a
    known GPU (eq. 2) and tasks that fit none are listed as unscheduled;
    memory (eq. 3); duration ``end - start = L_i / v_j`` (eq. 4); arrival
    (eq. 5); no overlap on a GPU (eq. 6).

    Examples
    --------
    >>> from instances.hetero_problem import GPU, Task
    >>> pb = HeteroProblem((Task("a", 2, 0, 5), Task("b", 2, 0, 5)), (GPU("g", 1.0),))
    >>> check(pb, Schedule([Assignment("a", "g", 0, 2), Assignment("b", "g", 1, 3)]))
    ['GPU g: tasks a [0, 2] and b [1, 3] overlap']
    """
    errors: list[str] = []
    unfit = set(problem.unfit)
    seen: dict[str, int] = {}
    per_gpu: dict[str, list[Assignment]] = {g.name: [] for g in problem.gpus}
    for a in schedule.assignments:
        if a.task not in problem.index:
            errors.append(f"task {a.task}: not in the problem")
            continue
        seen[a.task] = seen.get(a.task, 0) + 1
        if a.gpu not in problem.gpu_index:
            errors.append(f"task {a.task}: unknown GPU {a.gpu}")
            continue
        i, j = problem.index[a.task], problem.gpu_index[a.gpu]
        task, gpu = problem.tasks[i], problem.gpus[j]
        if task.memory > gpu.memory:
            errors.append(f"task {a.task}: memory {task.memory:g} GB > GPU {a.gpu} memory {gpu.memory:g} GB")
        if not (math.isfinite(a.start) and math.isfinite(a.end)):
            errors.append(f"task {a.task}: non-finite start/end")
            continue
        if a.start < task.arrival - tol:
            errors.append(f"task {a.task}: starts at {a.start:g} before its arrival {task.arrival:g}")
        dur = task.workload / gpu.speed
        if abs((a.end - a.start) - dur) > tol * max(1.0, dur):
            errors.append(f"task {a.task}: runs {a.end - a.start:g} on GPU {a.gpu}, needs {dur:g}")
        per_gpu[a.gpu].append(a)
    for name, count in seen.items():
        if count > 1:
            errors.append(f"task {name}: assigned {count} times")
    for t in problem.tasks:
        if t.name in unfit:
            if t.name in seen:
                errors.append(f"task {t.name}: fits no GPU but is scheduled")
            if t.name not in schedule.unscheduled:
                errors.append(f"task {t.name}: fits no GPU and is not reported unscheduled")
        elif t.name not in seen:
            errors.append(f"task {t.name}: not scheduled")
    for name in schedule.unscheduled:
        if name not in unfit:
            errors.append(f"task {name}: reported unscheduled but fits a GPU")
    for gname, items in per_gpu.items():
        items.sort(key=lambda a: (a.start, a.end))
        for x, y in zip(items, items[1:]):
            if y.start < x.end - tol:
                errors.append(f"GPU {gname}: tasks {x.task} [{x.start:g}, {x.end:g}] and "
                              f"{y.task} [{y.start:g}, {y.end:g}] overlap")
    return errors
