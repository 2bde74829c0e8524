"""The performance metrics of the heterogeneous-GPU scheduling paper, Sec. I.E."""

from __future__ import annotations

from dataclasses import dataclass

from instances.hetero_check import TOL
from instances.hetero_problem import HeteroProblem
from instances.hetero_schedule import Schedule
from instances.options import typed


@dataclass(frozen=True)
class Metrics:
    """The performance metrics of the heterogeneous-GPU scheduling paper Sec. I.E, over the scheduled tasks."""

    twt: float          #: total weighted tardiness, eq. (1)
    twct: float         #: total weighted completion (flow) time, eq. (7)
    act: float          #: average completion (flow) time, eq. (8)
    dmc: int            #: deadline miss count, eq. (9)
    dmr: float          #: deadline miss rate, eq. (10)
    makespan: float     #: C_max, eq. (11)
    utilisation: float  #: eta, eq. (12)
    unscheduled: int    #: tasks that fit no GPU (not in the sums above)


@typed
def metrics(problem: HeteroProblem, schedule: Schedule, tol: float = TOL) -> Metrics:
    """Metrics (1), (7)-(12) of a schedule.

    ``c_i - a_i`` is used in (7) and (8) exactly as written (flow time). In
    (12) the window starts at the earliest arrival of a scheduled task; a
    window of length 0 (no work) gives utilisation 0. A task is late when
    ``c_i > d_i + tol``.

    Examples
    --------
    >>> from instances.hetero_problem import GPU, Task
    >>> from instances.hetero_schedule import Assignment
    >>> pb = HeteroProblem((Task("a", 2, 0, 1, 3, 0),), (GPU("g", 1.0), GPU("h", 2.0)))
    >>> metrics(pb, Schedule([Assignment("a", "g", 0, 2)]))
    Metrics(twt=3.0, twct=6.0, act=2.0, dmc=1, dmr=1.0, makespan=2.0, utilisation=0.5, unscheduled=0)
    """
    rows = [(problem.tasks[problem.index[a.task]], a) for a in schedule.assignments]
    n = len(rows)
    if n == 0:
        return Metrics(0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, len(schedule.unscheduled))
    twt = sum(t.weight * max(0.0, a.end - t.deadline) for t, a in rows)
    twct = sum(t.weight * (a.end - t.arrival) for t, a in rows)
    act = sum(a.end - t.arrival for t, a in rows) / n
    dmc = sum(1 for t, a in rows if a.end > t.deadline + tol)
    cmax = max(a.end for _, a in rows)
    window = cmax - min(t.arrival for t, _ in rows)
    busy = sum(a.end - a.start for _, a in rows)
    eta = busy / (problem.m * window) if window > 0 else 0.0
    return Metrics(float(twt), float(twct), float(act), dmc, dmc / n, float(cmax), float(eta),
                   len(schedule.unscheduled))
