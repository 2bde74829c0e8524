"""The independent feasibility checker of the CASE family (Algorithms 1-2's guarantees, from the data alone)."""

from __future__ import annotations

import heapq

from instances.case_problem import Workload
from instances.case_trace import Hold, TaskRun, Trace
from instances.options import typed


def _shared_holds(trace: Trace, tol: float) -> list[tuple[int, int]]:
    """``(hold, task)`` index pairs, in trace order, of each task of another job that overlaps a hold
    on its instance (by more than ``tol`` at either end).

    Per instance, the holds are taken by start and the tasks by start, and a
    heap keeps the tasks begun before the hold's end by their end, so the
    work grows as ``n log n`` plus the pairs found. The sweep needs the
    holds' ends in the order of their starts (holds that do not nest: so in
    every trace that keeps them apart) and no NaN; other instances are
    compared pair by pair.
    """
    holds: dict[int, list[int]] = {}
    tasks: dict[int, list[int]] = {}
    for k, h in enumerate(trace.holds):
        holds.setdefault(h.instance, []).append(k)
    for k, tr in enumerate(trace.tasks):
        if tr.instance in holds:
            tasks.setdefault(tr.instance, []).append(k)
    found: list[tuple[int, int]] = []
    for inst, hs in holds.items():
        ts = tasks.get(inst, [])
        H, T = trace.holds, trace.tasks
        numbers = [x for k in hs for x in (H[k].start, H[k].end)] + [x for k in ts for x in (T[k].start, T[k].end)]
        hs = sorted(hs, key=lambda k: (H[k].start, H[k].end)) if all(x == x for x in numbers) else []
        if any(H[a].end > H[b].end for a, b in zip(hs, hs[1:])) or not hs:
            found.extend((a, b) for a in holds[inst] for b in ts
                         if T[b].job != H[a].job and T[b].start < H[a].end - tol and T[b].end > H[a].start + tol)
            continue
        ts = sorted(ts, key=lambda k: T[k].start)
        live: list[tuple[float, int]] = []  # (end, task) of the tasks begun before the current hold's end
        p = 0
        for a in hs:
            h = H[a]
            while p < len(ts) and T[ts[p]].start < h.end - tol:
                heapq.heappush(live, (T[ts[p]].end, ts[p]))
                p += 1
            while live and not live[0][0] > h.start + tol:  # over before this hold, so before every later one
                heapq.heappop(live)
            found.extend((a, b) for _, b in live if T[b].job != h.job)
    return sorted(found)


@typed
def check(workload: Workload, trace: Trace, *, tol: float = 1e-6) -> list[str]:
    """Independent feasibility check of a trace; ``[]`` means feasible.

    Verifies, from the data alone: every task of every job runs exactly once,
    in order, after its host phase; it lasts at least its standalone duration
    and at most ``1 + slowdown.cap`` times it; no instance's memory is ever
    exceeded (Algorithm 2's guarantee); every isolated job holds one instance
    and no other job's task or hold overlaps that hold (Algorithm 1's
    guarantee); holds on an instance never overlap; an exclusive job's tasks
    lie inside its hold; and the number of live jobs never exceeds
    ``trace.workers``.

    Examples
    --------
    >>> from instances.case import *
    >>> cfg = custom_config("A30", [[(1, 0)]])
    >>> w = Workload(cfg, (Job("a", (Task(4, 10, 5.0),), False), Job("b", (Task(3, 10, 5.0),), False)))
    >>> t = Trace("hand", (JobRun("a", 0, 0, 5), JobRun("b", 0, 0, 5)),
    ...           (TaskRun("a", 0, 0, 0, 5), TaskRun("b", 0, 0, 0, 5)))
    >>> check(w, t)
    ['instance 0 (1g.6gb): 7 GB in use at t=0 > 6 GB']
    """
    out: list[str] = []
    ins = workload.config.instances
    cap = workload.slowdown.cap
    jobs = {j.name: j for j in workload.jobs}
    runs = {}
    for jr in trace.jobs:
        if jr.job not in jobs:
            out.append(f"trace has unknown job {jr.job!r}")
        elif jr.job in runs:
            out.append(f"job {jr.job}: listed twice")
        else:
            runs[jr.job] = jr
    for name in jobs:
        if name not in runs:
            out.append(f"job {name}: missing from the trace")
    by_job: dict[str, dict[int, TaskRun]] = {n: {} for n in jobs}
    for tr in trace.tasks:
        if tr.job not in jobs:
            out.append(f"task of unknown job {tr.job!r}")
            continue
        if not (0 <= tr.instance < len(ins)):
            out.append(f"job {tr.job} task {tr.index}: no instance {tr.instance}")
            continue
        if tr.index in by_job[tr.job]:
            out.append(f"job {tr.job} task {tr.index}: runs twice")
        by_job[tr.job][tr.index] = tr
    for name, job in jobs.items():
        got = by_job[name]
        if sorted(got) != list(range(len(job.tasks))):
            out.append(f"job {name}: tasks {sorted(got)} ran, expected 0..{len(job.tasks) - 1}")
            continue
        jr = runs.get(name)
        prev_end = jr.start if jr else 0.0
        if jr and not (0 <= jr.launch + tol and jr.launch <= jr.start + tol):
            out.append(f"job {name}: launch {jr.launch} must be in [0, start {jr.start}]")
        for k, t in enumerate(job.tasks):
            tr = got[k]
            if tr.start < prev_end + t.cpu - tol:
                out.append(f"job {name} task {k}: starts at {tr.start:g} before its host phase ends "
                           f"({prev_end + t.cpu:g})")
            d = tr.end - tr.start
            if d < t.duration - tol or d > t.duration * (1 + cap) + tol:
                out.append(f"job {name} task {k}: lasts {d:g}, must be in [{t.duration:g}, "
                           f"{t.duration * (1 + cap):g}]")
            if t.memory_gb > ins[tr.instance].memory_gb + tol:
                out.append(f"job {name} task {k}: {t.memory_gb} GB does not fit instance {tr.instance}")
            prev_end = tr.end
        if jr and jr.end < prev_end - tol:
            out.append(f"job {name}: ends at {jr.end:g} before its last task ({prev_end:g})")
    # memory: sweep each instance, releases before acquisitions at equal times
    events: dict[int, list[tuple[float, int, float]]] = {}
    for tr in trace.tasks:
        if tr.job in jobs and tr.index < len(jobs[tr.job].tasks):
            m = jobs[tr.job].tasks[tr.index].memory_gb
            events.setdefault(tr.instance, []).extend(((tr.start, 1, m), (tr.end - tol, 0, -m)))
    for i in ins:
        ev = events.get(i.index, [])
        used = 0.0
        for time, _, dm in sorted(ev):
            used += dm
            if used > i.memory_gb + tol:
                out.append(f"instance {i.index} ({i.profile}): {used:g} GB in use at t={time:g} > {i.memory_gb:g} GB")
                break
    # exclusivity
    holds_of: dict[str, list[Hold]] = {}
    for h in trace.holds:
        holds_of.setdefault(h.job, []).append(h)
        if not (0 <= h.instance < len(ins)):
            out.append(f"hold of {h.job}: no instance {h.instance}")
    for name, job in jobs.items():
        hs = holds_of.get(name, [])
        if job.isolated and len(hs) != 1:
            out.append(f"job {name}: isolated but has {len(hs)} instance holds")
        for h in hs:
            for tr in by_job[name].values():
                if tr.instance != h.instance or tr.start < h.start - tol or tr.end > h.end + tol:
                    out.append(f"job {name} task {tr.index}: outside its hold of instance {h.instance}")
            if job.isolated and ins[h.instance].memory_gb < job.footprint_gb - tol:
                out.append(f"job {name}: footprint {job.footprint_gb} GB exceeds its instance {h.instance}")
    for a, b in _shared_holds(trace, tol):
        h, tr = trace.holds[a], trace.tasks[b]
        kind = "isolated job" if h.job in jobs and jobs[h.job].isolated else "exclusive job"
        out.append(f"{kind} {h.job} shares instance {h.instance} with job {tr.job} task {tr.index} "
                   f"at t={max(h.start, tr.start):g}")
    hs_sorted = sorted(trace.holds, key=lambda h: (h.instance, h.start))
    for h1, h2 in zip(hs_sorted, hs_sorted[1:]):
        if h1.instance == h2.instance and h2.start < h1.end - tol:
            out.append(f"holds of {h1.job} and {h2.job} overlap on instance {h1.instance}")
    if trace.workers is not None:
        ev = sorted([(r.launch, 1) for r in trace.jobs] + [(r.end - tol, -1) for r in trace.jobs])
        live = 0
        for time, d in ev:
            live += d
            if live > trace.workers:
                out.append(f"{live} jobs live at t={time:g} > {trace.workers} workers")
                break
    return out
