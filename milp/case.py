"""Offline optimum (or proven lower bound) of a CASE batch's makespan, CP-SAT (seed 001).

The seed compares two online managers and gives no exact model; this is the
reference the issue asks for. It solves, for a small batch
(:class:`instances.case.Workload`), the *offline* problem under the same
packing rules the simulator enforces:

* an exclusive job (an isolated job; under ``rules="slurm"`` every job) is
  one interval of its standalone lifetime (host phases + task durations) on
  one instance allowed by the workload's ``match`` rule, and takes all of
  that instance's memory meanwhile (Algorithm 1);
* every task of a non-isolated job is an interval of its standalone
  duration on any instance with enough memory; it starts no earlier than the
  previous task's end plus its host phase (tasks may wait, as blocked
  probes do), and on each instance the tasks' memory is a cumulative
  resource bounded by the instance's memory (Algorithm 2's guarantee).

Two relaxations make the optimum a lower bound on *every* policy's
makespan: no worker limit, and no slowdown (sharing only stretches tasks,
and a stretched task's interval contains the standalone one, so any
simulated trace maps to a feasible solution of this model with the same or
smaller makespan). Slurm's traces are feasible for both ``rules``.

Integers: times are counted in ``resolution`` seconds (default 0.1 s, the
generator's grid) and memory in MB. When the data lie on these grids the
model is exact. Otherwise two models are solved: one with every time and
demand rounded down and capacities rounded up, a relaxation whose bound is
valid (``floor(s) + floor(d) <= floor(s + d)`` keeps disjoint intervals
disjoint), and one rounded the other way, whose schedule, re-timed with the
true values, stays feasible.

Examples
--------
>>> from instances import case
>>> from milp import solve_optimal
>>> w = case.generate("A", ratio="1:2", n=5, seed=0)
>>> res = solve_optimal(w, time_limit=10, workers=1)
>>> str(res.status), case.check(w, res.schedule)
('OPTIMAL', [])
"""

from __future__ import annotations

import math
import time

from ortools.sat.python import cp_model

from instances.case import EPS, Hold, JobRun, TaskRun, Trace, Workload, check, eligible_instances
from instances.errors import OptionError
from milp.result import Result, Status

__all__ = ["solve", "build"]

MB = 1000.0  # memory units per GB in the model


def _on_grid(x: float, unit: float) -> bool:
    q = x / unit
    return abs(q - round(q)) <= 1e-7 * max(1.0, abs(q))


def _r(x: float, unit: float, up: bool) -> int:
    q = x / unit
    if abs(q - round(q)) <= 1e-7 * max(1.0, abs(q)):
        return int(round(q))
    return int(math.ceil(q) if up else math.floor(q))


class _Model:
    """The CP-SAT model with every time rounded ``up`` (schedule) or down (bound)."""

    def __init__(self, w: Workload, rules: str, res: float, up: bool) -> None:
        self.w, self.rules, self.res, self.up = w, rules, res, up
        m = self.m = cp_model.CpModel()
        ins = w.config.instances
        cap = [_r(i.memory_gb * MB, 1.0, not up) for i in ins]
        self.exclusive = [j for j in w.jobs if rules == "slurm" or j.isolated]
        excl_names = {j.name for j in self.exclusive}
        lengths = {j.name: _r(j.length, res, up) for j in self.exclusive}
        dur = {(j.name, k): _r(t.duration, res, up) for j in w.jobs for k, t in enumerate(j.tasks)}
        cpu = {(j.name, k): _r(t.cpu, res, up) for j in w.jobs for k, t in enumerate(j.tasks)}
        horizon = sum(lengths.values()) + sum(dur[j.name, k] + cpu[j.name, k] for j in w.jobs
                                              if j.name not in excl_names for k in range(len(j.tasks)))
        self.horizon = horizon
        per_inst: list[list[tuple[cp_model.IntervalVar, int]]] = [[] for _ in ins]
        self.ends = []
        self.x: dict[str, cp_model.IntVar] = {}
        self.xb: dict[str, dict[int, cp_model.IntVar]] = {}
        for j in self.exclusive:
            L = lengths[j.name]
            x = m.new_int_var(0, horizon - L, f"x[{j.name}]")
            lits = {}
            for i in eligible_instances(w, j):
                b = m.new_bool_var(f"on[{j.name},{i.index}]")
                per_inst[i.index].append((m.new_optional_fixed_size_interval_var(x, L, b, f"h[{j.name},{i.index}]"),
                                          cap[i.index]))
                lits[i.index] = b
            m.add_exactly_one(lits.values())
            self.x[j.name], self.xb[j.name] = x, lits
            self.ends.append(x + L)
        self.s: dict[tuple[str, int], cp_model.IntVar] = {}
        self.sb: dict[tuple[str, int], dict[int, cp_model.IntVar]] = {}
        self.demand: dict[tuple[str, int], int] = {}
        for j in w.jobs:
            if j.name in excl_names:
                continue
            prev_end = 0
            for k, t in enumerate(j.tasks):
                key = (j.name, k)
                d = dur[key]
                s = m.new_int_var(0, horizon - d, f"s[{j.name},{k}]")
                m.add(s >= prev_end + cpu[key])
                demand = self.demand[key] = _r(t.memory_gb * MB, 1.0, up)
                lits = {}
                for i in ins:
                    if demand <= cap[i.index]:
                        b = m.new_bool_var(f"on[{j.name},{k},{i.index}]")
                        per_inst[i.index].append((m.new_optional_fixed_size_interval_var(s, d, b, f"t[{j.name},{k},{i.index}]"),
                                                  demand))
                        lits[i.index] = b
                m.add_exactly_one(lits.values())
                self.s[key], self.sb[key] = s, lits
                prev_end = s + d
            self.ends.append(prev_end)
        for i, items in zip(ins, per_inst):
            if items:
                m.add_cumulative([iv for iv, _ in items], [dm for _, dm in items], cap[i.index])
        # Redundant energy constraints (they only tighten the bound): for each
        # memory class c, the jobs and tasks that can only run on instances of
        # at least c GB share those instances' total memory.
        self.energy: list = []
        for c in sorted(set(cap)):
            group = [i.index for i in ins if cap[i.index] >= c]
            ivs, dms = [], []
            for j in self.exclusive:
                if all(cap[i] >= c for i in self.xb[j.name]):
                    ivs.append(m.new_fixed_size_interval_var(self.x[j.name], lengths[j.name], f"X[{j.name},{c}]"))
                    dms.append(min(cap[i] for i in self.xb[j.name]))
            for key, lits in self.sb.items():
                if all(cap[i] >= c for i in lits):
                    ivs.append(m.new_fixed_size_interval_var(self.s[key], dur[key], f"S[{key},{c}]"))
                    dms.append(self.demand[key])
            if ivs:
                m.add_cumulative(ivs, dms, sum(cap[i] for i in group))
                self.energy.append((sum(cap[i] for i in group),
                                    sum(dm * iv.size_expr() for iv, dm in zip(ivs, dms))))
        self.makespan = m.new_int_var(0, horizon, "makespan")
        m.add_max_equality(self.makespan, self.ends)
        for capsum, area in self.energy:  # the same energy as a linear cut: all work ends by the makespan
            m.add(capsum * self.makespan >= area)
        m.minimize(self.makespan)

    def hint(self, trace: Trace) -> None:
        """Suggest a policy's trace (rounded up to the grid) as a starting point."""
        holds = {h.job: h for h in trace.holds}
        for name, x in self.x.items():
            if name in holds:
                self.m.add_hint(x, min(x.proto.domain[-1], _r(holds[name].start, self.res, True)))
                for i, b in self.xb[name].items():
                    self.m.add_hint(b, int(i == holds[name].instance))
        runs = {(t.job, t.index): t for t in trace.tasks}
        for key, s in self.s.items():
            if key in runs:
                self.m.add_hint(s, min(s.proto.domain[-1], _r(runs[key].start, self.res, True)))
                for i, b in self.sb[key].items():
                    self.m.add_hint(b, int(i == runs[key].instance))

    def solve(self, time_limit: float | None, workers: int | None, log: bool) -> tuple[cp_model.CpSolver, int]:
        solver = cp_model.CpSolver()
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = float(time_limit)
        solver.parameters.num_workers = int(workers or 2)
        solver.parameters.log_search_progress = bool(log)
        return solver, solver.solve(self.m)

    def trace(self, solver: cp_model.CpSolver) -> Trace:
        """The solution re-timed with the true float durations."""
        w, res = self.w, self.res
        jobs, tasks, holds = [], [], []
        for j in w.jobs:
            if j.name in self.x:
                x = solver.value(self.x[j.name]) * res
                inst = next(i for i, b in self.xb[j.name].items() if solver.boolean_value(b))
                t0 = x
                for k, t in enumerate(j.tasks):
                    t0 += t.cpu
                    tasks.append(TaskRun(j.name, k, inst, t0, t0 + t.duration))
                    t0 += t.duration
                holds.append(Hold(j.name, inst, x, t0))
                jobs.append(JobRun(j.name, x, x, t0))
            else:
                first = None
                end = 0.0
                for k, t in enumerate(j.tasks):
                    s = solver.value(self.s[j.name, k]) * res
                    inst = next(i for i, b in self.sb[j.name, k].items() if solver.boolean_value(b))
                    tasks.append(TaskRun(j.name, k, inst, s, s + t.duration))
                    first = s - t.cpu if first is None else first
                    end = s + t.duration
                start = max(0.0, first)
                jobs.append(JobRun(j.name, start, start, end))
        return Trace(f"opt-{self.rules}", tuple(jobs), tuple(sorted(tasks, key=lambda t: (t.start, t.instance))),
                     tuple(holds), None)


def build(workload: Workload, *, rules: str = "case", resolution: float = 0.1, up: bool = True) -> cp_model.CpModel:
    """The CP-SAT model alone (for inspection); ``up=False`` gives the rounded-down relaxation."""
    return _Model(workload, rules, resolution, up).m


def solve(problem: Workload, backend: str = "cpsat", time_limit: float | None = None, workers: int | None = None,
          *, rules: str = "case", resolution: float = 0.1, hint: Trace | None = None, log: bool = False,
          **options) -> Result:
    """Minimum makespan of ``problem`` under CASE's (or Slurm's) packing rules, or a proven bound.

    Parameters
    ----------
    problem
        A :class:`instances.case.Workload` (keep it small: tens of jobs).
    backend
        ``"cpsat"`` only (the issue asks for CP-SAT with cumulative memory).
    time_limit
        Seconds for CP-SAT (split in two when the data are off the grid).
    workers
        CP-SAT search workers (default 2).
    rules
        ``"case"``: isolated jobs exclusive, other jobs' tasks packed by memory;
        ``"slurm"``: every job exclusive for its lifetime.
    resolution
        Seconds per integer time unit.
    hint
        A feasible trace to start from, e.g. ``heuristics.case.simulate(w, "slurm")``.

    Returns
    -------
    Result
        ``objective``: makespan (s) of the checked schedule (a
        :class:`instances.case.Trace` with ``workers=None``);
        ``lower_bound``: proven bound on the optimum; status OPTIMAL only when
        they meet. ``info`` holds ``exact_grid`` and the solver status names.

    Examples
    --------
    >>> from instances import case
    >>> w = case.generate("A", ratio="0:1", n=4, seed=1)
    >>> r = solve(w, time_limit=10, workers=1)
    >>> r.lower_bound <= r.objective
    True
    """
    if backend != "cpsat":
        raise OptionError(f"milp.case supports backend='cpsat' only, got {backend!r}")
    if rules not in ("case", "slurm"):
        raise OptionError(f"rules must be 'case' or 'slurm', got {rules!r}")
    if options:
        raise TypeError(f"unknown options {sorted(options)}")
    if not resolution > 0:
        raise OptionError("resolution must be > 0")
    t0 = time.perf_counter()
    w = problem
    exact = all(_on_grid(t.duration, resolution) and _on_grid(t.cpu, resolution) and _on_grid(t.memory_gb * MB, 1.0)
                for j in w.jobs for t in j.tasks) and \
        all(_on_grid(i.memory_gb * MB, 1.0) for i in w.config.instances)
    info: dict = {"exact_grid": exact, "rules": rules, "resolution": resolution}
    trivial = max(j.length for j in w.jobs)
    start_trace = hint
    tl = None if time_limit is None else (time_limit if exact else time_limit / 2)
    lb = trivial
    if not exact:
        relaxed = _Model(w, rules, resolution, up=False)
        solver, st = relaxed.solve(tl, workers, log)
        info["bound_status"] = solver.status_name(st)
        if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            lb = max(lb, solver.best_objective_bound * resolution)
    model = _Model(w, rules, resolution, up=True)
    if start_trace is not None:
        model.hint(start_trace)
    solver, st = model.solve(tl, workers, log)
    info["status"] = solver.status_name(st)
    runtime = time.perf_counter() - t0
    if st == cp_model.INFEASIBLE:
        return Result(None, None, Status.INFEASIBLE, runtime, None, "cpsat", info)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Result(None, lb, Status.UNKNOWN, runtime, None, "cpsat", info)
    if exact:
        lb = max(lb, solver.best_objective_bound * resolution)
    trace = model.trace(solver)
    errs = check(w, trace)
    if errs:
        raise RuntimeError(f"milp.case produced an infeasible schedule: {errs[:3]}")
    obj = trace.makespan
    if lb > obj + EPS:
        raise RuntimeError(f"milp.case: bound {lb} above its own schedule's makespan {obj}")
    lb = min(lb, obj)  # float noise only
    proven = obj <= lb + EPS
    return Result(obj, lb, Status.OPTIMAL if proven else Status.FEASIBLE, runtime, trace, "cpsat", info)
