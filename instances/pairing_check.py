"""The pairing family's independent checker (Sec. 3.2 of the co-scheduling paper).

Plain loops over the scalar slowdown interface; shares no code with the
search (:mod:`instances.pairing_costs`) it checks.
"""

from __future__ import annotations

import math
from typing import Sequence

from instances.errors import InstanceError
from instances.pairing_jobs import Job
from instances.options import typed
from instances.pairing_plan import Plan
from instances.pairing_problem import PairingProblem, WeightedQueue
from instances.pairing_space import Config


@typed
def set_time(problem: PairingProblem, members: Sequence[Job], config: Config) -> float:
    """``CoRunTime(JS, HC)`` (Sec. 4.1.1) by a plain evaluation of the model.

    The max over the jobs of slowdown x solo time, each job viewed first.
    """
    times = []
    for p, job in enumerate(members):
        order = [p] + [q for q in range(len(members)) if q != p]
        others = [members[q] for q in order[1:]]
        times.append(problem.slowdown(job, others, config.permuted(order)) * job.solo_time)
    return max(times)


@typed
def solo_time_at(problem: PairingProblem, job: Job) -> tuple[float, Config]:
    """``SoloRunAppTime_j(P_total)`` and its best solo configuration (plain loop)."""
    best = None
    for cfg in problem.space.solo_configs():
        t = problem.slowdown(job, (), cfg) * job.solo_time
        if best is None or t < best[0]:
            best = (t, cfg)
    return best


def _given_time(queue: WeightedQueue, members: Sequence[int]) -> float:
    """A queue's own time for a job set (plain lookup, independent of :class:`Costs`)."""
    s = tuple(sorted(members))
    if len(s) == 1:
        return float(queue.solo[s[0]])
    if len(s) == 2:
        return float(queue.pair[s[0], s[1]])
    if len(s) == 3 and queue.triple is not None:
        return float(queue.triple.get(s, math.inf))
    return math.inf


@typed
def check(problem: PairingProblem | WeightedQueue, plan: Plan, tol: float = 1e-6,
          require_corun_pays: bool = True) -> list[str]:
    """Independent checker: the list of violations of ``plan`` ([] = feasible).

    Checks (Sec. 3.2): every job of the window in exactly one set, ``1 <=
    |JS| <= C``, each configuration inside the space (caps within
    ``P_total``), each set time equal to a fresh evaluation of the model
    (within ``tol`` relative, so that tiny and huge times are checked alike), and,
    when ``require_corun_pays``, ``CoRunTime <= SoloRunTime(JS, P_total)``
    for every co-run set. Plain loops over the scalar slowdown interface,
    sharing no code with the search.

    Examples
    --------
    >>> from instances.pairing_plan import JobSet
    >>> q = WeightedQueue.random(2, seed=0)
    >>> check(q, Plan([JobSet(("j0",), None, float(q.solo[0]))]))
    ['job j1 is in no set']
    """
    errs: list[str] = []
    names = list(problem.names) if isinstance(problem, WeightedQueue) else [j.name for j in problem.jobs]
    index = {n: i for i, n in enumerate(names)}
    seen: dict[str, int] = {}
    for k, s in enumerate(plan.sets):
        if not (1 <= len(s.jobs) <= problem.concurrency):
            errs.append(f"set {k} has {len(s.jobs)} jobs; allowed 1..{problem.concurrency}")
        for n in s.jobs:
            if n not in index:
                errs.append(f"set {k}: unknown job {n}")
            elif n in seen:
                errs.append(f"job {n} is in sets {seen[n]} and {k}")
            else:
                seen[n] = k
    for n in names:
        if n not in seen:
            errs.append(f"job {n} is in no set")
    if errs:
        return errs
    for k, s in enumerate(plan.sets):
        if not math.isfinite(s.time):
            errs.append(f"set {k}: time {s.time}")
            continue
        if isinstance(problem, WeightedQueue):
            true = _given_time(problem, [index[n] for n in s.jobs])
            solo_sum = sum(float(problem.solo[index[n]]) for n in s.jobs)
        else:
            members = [problem.jobs[index[n]] for n in s.jobs]
            if s.config is None:
                errs.append(f"set {k}: no hardware configuration")
                continue
            if not len(s.config.cores) == len(s.config.gpcs) == len(members):
                # one core share and one GPC share per job: a shorter list has no share for some
                # job, a longer one shares resources with a job the set does not have
                errs.append(f"set {k}: configuration {s.config} does not fit {len(members)} jobs")
                continue
            try:
                true = set_time(problem, members, s.config)
            except InstanceError as e:
                errs.append(f"set {k}: {e}")
                continue
            solo_sum = sum(solo_time_at(problem, j)[0] for j in members)
        if not math.isfinite(true):
            errs.append(f"set {k} {s.jobs}: not an allowed set")
        elif abs(true - s.time) > tol * abs(true):
            errs.append(f"set {k} {s.jobs}: time {s.time:.9g} but the model gives {true:.9g}")
        if require_corun_pays and len(s.jobs) > 1 and true > solo_sum * (1 + tol):
            errs.append(f"set {k} {s.jobs}: co-run {true:.6g} s slower than running its jobs "
                        f"alone {solo_sum:.6g} s (Sec. 3.2 constraint 1)")
    return errs
