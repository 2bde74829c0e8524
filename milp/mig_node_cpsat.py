"""CP-SAT models of a node of g MIG GPUs without reconfiguration.

Without create/destroy times the six rules of :mod:`instances.mig_check`
reduce, on each GPU, to: tasks whose placements share an occupied slice never
overlap in time (``docs/models/mig_node.md``).

* :func:`solve_laminar` -- the slice-load model. Occupied slices form the
  repartitioning tree (FAR paper, Fig. 4), so for fixed placements, running
  each tree node's tasks back to back once all its ancestors' tasks are done
  ends at the largest slice load, and no schedule of those placements ends
  earlier (the tasks covering one slice pairwise conflict). Booleans
  ``x_ikp`` (task i on placement p of GPU k, one per task) and one row per
  GPU and slice: ``sum d_i(p) x_ikp <= C``; no time variables.
* :func:`solve_intervals` -- the same problem with time: a start ``S_i`` per
  task, an optional interval ``[S_i, S_i + d_i(p))`` per GPU and placement
  present when ``x_ikp``, NoOverlap per GPU and slice, a redundant Cumulative
  and area row per GPU, ``C >= S_i + d_i``. A second formulation, to check
  the first.

Both break the symmetry of the identical GPUs by first use: task 0 is on GPU
0 and task i may use GPU k > 0 only if a task before it uses GPU k - 1 (every
assignment has exactly one such relabelling). Times are scaled as in the
single-GPU model (``docs/models/mig_cpsat.md``, "Integer time"): a
power-of-two resolution R and durations rounded down, so the rounded model is
a relaxation and a bound B of the model gives ``OPT >= B / R`` (slice loads)
or ``OPT >= (B - E) / R`` (intervals, whose durations are at least one unit;
E is that excess). The model's solution is re-timed on the float durations
GPU by GPU (:mod:`instances.mig_retime`) and checked by
:func:`instances.mig_node.check`.
"""

from __future__ import annotations

import math
from typing import Any

from ortools.sat.python import cp_model

from bounds import mig_node as node_bounds
from instances.mig_node import NodeProblem, NodeSchedule, check
from instances.mig_retime import plan_from_runs, retime_order
from instances.mig_schedule import ScheduledTask
from instances import options as opt
from instances.options import Deadline, known_options
from milp.cpsat import run, set_hints
from milp.result import TOLERANCE, Result

__all__ = ["solve_intervals", "resolution", "MAX_UNITS"]

#: The horizon stays below this many units, far inside 64-bit rows.
MAX_UNITS = 2.0 ** 40


@known_options
def resolution(problem: NodeProblem, lower_bound: float, horizon: float) -> float:
    """Units per second, a power of two: a rounded optimum is within the tolerance of the float one.

    Rounding costs at most one unit per task on a chain (n + 1 activities) on
    each side, so ``R >= 2 (n + 1) / (0.9 * TOLERANCE * lower_bound)``
    suffices; R is capped so that the horizon stays below :data:`MAX_UNITS`.

    Examples
    --------
    >>> from instances import mig_node
    >>> p = mig_node.generate(6, "A30", gpus=2, seed=0)
    >>> resolution(p, 50.0, 100.0)
    524288.0
    """
    need = 2 * (problem.n + 1) / (0.9 * TOLERANCE * max(lower_bound, 1e-300))
    cap = MAX_UNITS / max(horizon, 1e-300)
    return 2.0 ** min(math.ceil(math.log2(need)), math.floor(math.log2(cap)))


def _canonical(assignment: list[int]) -> list[int]:
    """GPU indices relabelled by first use in task order (the model's symmetry-broken form)."""
    label: dict[int, int] = {}
    return [label.setdefault(k, len(label)) for k in assignment]


@known_options
def solve_intervals(problem: NodeProblem, *, deadline: Deadline, incumbent: NodeSchedule,
                    workers: int | None = None, log: bool = False, seed: int = 0,
                    info: dict[str, Any] | None = None) -> Result:
    """The optional-interval model on a node without reconfiguration.

    Parameters
    ----------
    problem
        A node whose GPU has zero create/destroy times.
    deadline
        The whole call's budget (the caller started it).
    incumbent
        A checked schedule of ``problem``: the solution hint, and the result
        when the model finds nothing better.
    workers, log, seed
        CP-SAT's workers, search log and random seed.
    """
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    info = dict(info or {})
    gpu, g = problem.gpu, problem.gpus
    tasks = problem.tasks
    S = gpu.num_slices
    lb0 = node_bounds.lower_bound(problem)
    R = resolution(problem, lb0, incumbent.makespan)
    units = [{s: max(1, math.floor(R * t)) for s, t in task.times.items()} for task in tasks]
    excess = math.fsum(max(0.0, 1.0 - R * min(task.times.values())) for task in tasks)
    horizon = math.floor(R * incumbent.makespan + excess) + 1
    info.update(method="intervals", resolution=R, excess_units=excess)

    m = cp_model.CpModel()
    start = [m.new_int_var(0, horizon, f"S{i}") for i in range(len(tasks))]
    cmax = m.new_int_var(0, horizon, "C")
    x: dict[tuple[int, int, Any], Any] = {}
    on_slice: dict[tuple[int, int], list] = {}
    per_gpu: dict[int, list] = {k: [] for k in range(g)}
    for i, task in enumerate(tasks):
        for k in range(g):
            for p in gpu.placements:
                # a size longer than the horizon cannot be used by a schedule the model must keep
                if p.size not in task.times or units[i][p.size] > horizon:
                    continue
                d = units[i][p.size]
                lit = m.new_bool_var(f"x{i}_{k}_{p.name}")
                iv = m.new_optional_fixed_size_interval_var(start[i], d, lit, f"I{i}_{k}_{p.name}")
                x[i, k, p] = lit
                per_gpu[k].append((iv, len(p.slices), p.size * d, lit))
                for q in p.slices:
                    on_slice.setdefault((k, q), []).append(iv)
        mine = [(lit, units[i][p.size]) for (j, _, p), lit in x.items() if j == i]
        m.add_exactly_one(lit for lit, _ in mine)
        m.add(cmax >= start[i] + sum(d * lit for lit, d in mine))
    for ivs in on_slice.values():
        m.add_no_overlap(ivs)
    for k, rows in per_gpu.items():
        m.add_cumulative([r[0] for r in rows], [r[1] for r in rows], S)
        m.add(sum(r[2] * r[3] for r in rows) <= S * cmax)
    use = {(i, k): sum(lit for (j, kk, _), lit in x.items() if j == i and kk == k)
           for i in range(len(tasks)) for k in range(g)}
    if tasks:
        m.add(use[0, 0] == 1)
    for i in range(1, len(tasks)):
        for k in range(1, g):
            m.add(use[i, k] <= sum(use[j, k - 1] for j in range(i)))
    m.minimize(cmax)

    # hint: the incumbent, GPUs relabelled into the symmetry-broken form
    where = {st.task: (k, st) for k, st in incumbent.tasks}
    labels = _canonical([where[t.name][0] for t in tasks])
    hints = []
    for i, task in enumerate(tasks):
        k, st = where[task.name]
        hints.append((start[i], min(horizon, math.floor(R * st.start))))
        for (j, kk, p), lit in x.items():
            if j == i:
                hints.append((lit, kk == labels[i] and p.key() == st.placement.key()))
    set_hints(m, hints)

    out = run(m, time_limit=deadline, workers=workers, seed=seed, log=log)
    info["solver"] = out.stats
    best = incumbent
    if out.has_solution:
        runs: dict[int, list[ScheduledTask]] = {k: [] for k in range(g)}
        for (i, k, p), lit in x.items():
            if out.boolean(lit):
                s0 = out.value(start[i]) / R
                runs[k].append(ScheduledTask(tasks[i].name, p, s0, s0 + tasks[i].times[p.size]))
        parts = [plan_from_runs(problem.subproblem(r.task for r in runs[k]), runs[k]).schedule for k in range(g)]
        found = NodeSchedule.from_parts(gpu, parts)
        violations = check(problem, found)
        if violations:  # never return an unchecked schedule; the incumbent stands
            info["rejected"] = violations[0]
        elif found.makespan < best.makespan:
            best = found
    bound = lb0
    if out.bound is not None:
        # the rounded model is a relaxation up to the excess E (docs/models/mig_cpsat.md)
        bound = max(bound, (out.bound - excess) / R * (1 - 1e-12))
    return Result.from_bounds(best.makespan, bound, schedule=best,
                              runtime=deadline.elapsed(), backend="cpsat", info=info)


@known_options
def solve_laminar(problem: NodeProblem, *, deadline: Deadline, incumbent: NodeSchedule,
                  workers: int | None = None, log: bool = False, seed: int = 0,
                  info: dict[str, Any] | None = None) -> Result:
    """The slice-load assignment model on a node without reconfiguration (see the module docstring)."""
    info = dict(info or {})
    gpu, g = problem.gpu, problem.gpus
    tasks = problem.tasks
    lb0 = node_bounds.lower_bound(problem)
    R = resolution(problem, lb0, incumbent.makespan)
    horizon = math.floor(R * incumbent.makespan) + 1
    info.update(method="laminar", resolution=R)
    m = cp_model.CpModel()
    cmax = m.new_int_var(0, horizon, "C")
    x: dict[tuple[int, int, Any], Any] = {}
    load: dict[tuple[int, int], list] = {}
    for i, task in enumerate(tasks):
        mine = []
        for k in range(g):
            for p in gpu.placements:
                if p.size not in task.times or R * task.times[p.size] > horizon:
                    continue
                lit = x[i, k, p] = m.new_bool_var(f"x{i}_{k}_{p.name}")
                mine.append(lit)
                for q in p.slices:
                    load.setdefault((k, q), []).append((math.floor(R * task.times[p.size]), lit))
        m.add_exactly_one(mine)
    for terms in load.values():
        m.add(sum(d * lit for d, lit in terms) <= cmax)
    use = {(i, k): sum(lit for (j, kk, _), lit in x.items() if j == i and kk == k)
           for i in range(len(tasks)) for k in range(g)}
    if tasks:
        m.add(use[0, 0] == 1)
    for i in range(1, len(tasks)):
        for k in range(1, g):
            m.add(use[i, k] <= sum(use[j, k - 1] for j in range(i)))
    m.minimize(cmax)
    where = {st.task: (k, st) for k, st in incumbent.tasks}
    labels = _canonical([where[t.name][0] for t in tasks])
    set_hints(m, [(lit, kk == labels[i] and p.key() == where[tasks[i].name][1].placement.key())
                  for (i, kk, p), lit in x.items()])
    out = run(m, time_limit=deadline, workers=workers, seed=seed, log=log)
    info["solver"] = out.stats
    best = incumbent
    if out.has_solution:
        order: dict[int, list] = {k: [] for k in range(g)}
        rank = {p.key(): r for r, p in enumerate(gpu.placements)}  # breadth-first: ancestors first
        for (i, k, p), lit in x.items():
            if out.boolean(lit):
                order[k].append((rank[p.key()], i, tasks[i].name, p))
        parts = []
        for k in range(g):
            runs = [(name, p) for _, _, name, p in sorted(order[k])]
            parts.append(retime_order(problem.subproblem(name for name, _ in runs), runs).schedule)
        found = NodeSchedule.from_parts(gpu, parts)
        violations = check(problem, found)
        if violations:
            info["rejected"] = violations[0]
        elif found.makespan < best.makespan:
            best = found
    bound = lb0 if out.bound is None else max(lb0, out.bound / R * (1 - 1e-12))
    return Result.from_bounds(best.makespan, bound, schedule=best, runtime=deadline.elapsed(), backend="cpsat",
                              info=info)
