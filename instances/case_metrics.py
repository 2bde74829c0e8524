"""Metrics of a CASE run: throughput, turnaround, memory utilisation (Figure 4) and slowdown (Table 2)."""

from __future__ import annotations

import numpy as np

from instances.case_problem import Workload
from instances.case_trace import Trace
from instances.options import typed


@typed
def memory_profile(workload: Workload, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Memory in use over time, as a step function.

    Returns ``(times, fraction)``: from ``times[k]`` to ``times[k+1]`` the
    running tasks hold ``fraction[k]`` of the node's instance memory (the
    quantity of Figure 4). Isolated jobs count their tasks' memory, not the
    whole instance.
    """
    jobs = {j.name: j for j in workload.jobs}
    delta: dict[float, float] = {}
    for tr in trace.tasks:
        m = jobs[tr.job].tasks[tr.index].memory_gb
        delta[tr.start] = delta.get(tr.start, 0.0) + m
        delta[tr.end] = delta.get(tr.end, 0.0) - m
    times = np.array(sorted(delta) or [0.0])
    used = np.cumsum([delta.get(t, 0.0) for t in times])
    return times, np.clip(used, 0.0, None) / workload.config.total_memory_gb


@typed
def metrics(workload: Workload, trace: Trace) -> dict[str, float]:
    """Throughput, turnaround, memory utilisation and slowdown of one run.

    * ``makespan``: last job end (the whole batch is submitted at t = 0).
    * ``throughput``: jobs per hour, ``n / makespan``.
    * ``turnaround``: mean job end (submission at 0).
    * ``mem_util``: time-averaged fraction of instance memory held by running
      tasks over ``[0, makespan]``.
    * ``slowdown``: mean over the tasks of non-isolated jobs of
      ``(end - start) / duration - 1`` (the quantity of Table 2).

    Examples
    --------
    >>> from instances.case import generate
    >>> w = generate("A", "1:1", n=4, seed=0)
    >>> from instances.case import Trace
    >>> m = metrics(w, Trace("empty", (), ()))
    >>> m["makespan"]
    0.0
    """
    ms = trace.makespan
    jobs = {j.name: j for j in workload.jobs}
    times, frac = memory_profile(workload, trace)
    if ms > 0 and len(times) > 1:
        widths = np.diff(np.clip(times, 0, ms))
        util = float(np.sum(widths * frac[:-1]) / ms)
    else:
        util = 0.0
    sd = [(tr.end - tr.start) / jobs[tr.job].tasks[tr.index].duration - 1 for tr in trace.tasks
          if not jobs[tr.job].isolated]
    return {
        "makespan": ms,
        "throughput": 3600.0 * len(trace.jobs) / ms if ms > 0 else 0.0,
        "turnaround": float(np.mean([r.end for r in trace.jobs])) if trace.jobs else 0.0,
        "mem_util": util,
        "slowdown": float(np.mean(sd)) if sd else 0.0,
    }
