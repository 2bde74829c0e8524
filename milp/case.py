"""Offline optimum (or proven lower bound) of a CASE batch's makespan, CP-SAT (CASE paper).

The CASE paper (Porter, Chen, Pande) compares two online managers and gives
no exact model; this is the offline reference. It solves, for a small batch
(:class:`instances.case.Workload`), the *offline* problem under the same
packing rules the simulator enforces:

* an exclusive job (an isolated job; under ``rules="slurm"`` every job) is
  one interval of its standalone lifetime (host phases + task durations) on
  one instance allowed by the workload's ``match`` rule, and takes all of
  that instance's memory meanwhile (the paper's Algorithm 1);
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

Integers: times are counted in ``resolution`` seconds and memory in a unit
of at most 1 MB, both chosen from the data (:func:`grid`). When every time
and memory value lies on the chosen grid (the generator's 0.1 s and 1 MB,
or any coarser or finer grid whose horizon fits int64 comfortably) one model
is exact. Otherwise the resolution is fine enough that rounding costs less
than a tenth of :data:`milp.TOLERANCE`, and two models are solved: one with
every time and demand rounded down and capacities rounded up, a relaxation
whose bound is valid (``floor(s) + floor(d) <= floor(s + d)`` keeps disjoint
intervals disjoint), and one rounded the other way, whose schedule, re-timed
with the true values, stays feasible.

The solve starts from the simulated Slurm (and, under CASE rules, CASE)
traces, so a time-limited solve returns at least the better of them,
FEASIBLE, with a valid bound.

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
import numbers
import time
from typing import Any

from ortools.sat.python import cp_model

from heuristics.case import simulate
from instances import options as opt
from instances.case import Hold, JobRun, TaskRun, Trace, Workload, check, eligible_instances
from instances.errors import OptionError, SolverError
from instances.options import Deadline, known_options
from milp import cpsat
from milp.result import TOLERANCE, Result

__all__ = ["solve", "grid", "BACKENDS", "RULES"]

BACKENDS = ("cpsat",)
RULES = ("case", "slurm")
MB = 1000.0  # MB per GB
#: Largest horizon, in time units, of a model (keeps every linear expression far inside int64).
_MAX_UNITS = 2**40
#: Share of :data:`milp.TOLERANCE` that rounding may cost when the data lie on no grid.
_ROUNDING_SHARE = 0.1
#: A value within this relative distance of a grid point counts as on it (float noise).
_ON_GRID = 1e-12


def _near(q: float) -> int | None:
    """The integer ``q`` is, up to float noise relative to ``q`` itself (``1e-12`` is no integer)."""
    r = round(q)
    return int(r) if abs(q - r) <= _ON_GRID * abs(q) else None


def _units(x: float, unit: float, up: bool) -> int:
    """``x / unit`` as an integer: the grid point when ``x`` is on it, else rounded up or down."""
    q = x / unit
    r = _near(q)
    if r is not None:
        return r
    return int(math.ceil(q) if up else math.floor(q))


def _times(w: Workload) -> list[float]:
    return [v for j in w.jobs for t in j.tasks for v in (t.duration, t.cpu) if v > 0]


def _memories(w: Workload) -> list[float]:
    return [t.memory_gb * MB for j in w.jobs for t in j.tasks] + [i.memory_gb * MB for i in w.config.instances]


@known_options
def grid(w: Workload) -> tuple[float, bool, float, bool]:
    """``(resolution, times on it, memory unit, memories on it)`` chosen from the data.

    The resolution is the coarsest power of ten on which every duration and
    host phase lies, provided the serial horizon stays below 2**40 units; if
    there is none, a power of ten small enough that rounding costs at most a
    tenth of :data:`milp.TOLERANCE` of the longest job. Memory is counted in
    the coarsest of 1, 0.1, 0.01, 0.001 MB that holds every value.

    Examples
    --------
    >>> from instances import case
    >>> grid(case.generate("A", ratio="1:1", n=4, seed=0))
    (0.1, True, 1.0, True)
    """
    times = _times(w)
    horizon = sum(j.length for j in w.jobs)
    res, exact = None, False
    for k in range(6, -13, -1):
        unit = 10.0 ** k
        if horizon / unit > _MAX_UNITS:
            break
        if all(_near(x / unit) is not None for x in times):
            res, exact = unit, True
            break
    if res is None:
        longest = max(j.length for j in w.jobs)
        items = sum(2 * len(j.tasks) + 1 for j in w.jobs)
        fine = _ROUNDING_SHARE * TOLERANCE * longest / items
        res = 10.0 ** math.floor(math.log10(fine))
        while horizon / res > _MAX_UNITS:
            res *= 10
    mems = _memories(w)
    for unit in (1.0, 0.1, 0.01, 0.001):
        if all(_near(m / unit) is not None for m in mems):
            return res, exact, unit, True
    return res, exact, 0.001, False


class _Model:
    """The CP-SAT model with times and demands rounded ``up`` (a restriction) or down (a relaxation).

    Values on the grid are exact in both. ``excess`` is how much the rounded
    times exceed the true ones in total (float noise of on-grid values), to
    be taken off a bound.
    """

    def __init__(self, w: Workload, rules: str, res: float, mem: float, up: bool) -> None:
        self.w, self.rules, self.res, self.up = w, rules, res, up
        m = self.m = cp_model.CpModel()
        ins = w.config.instances
        cap = [_units(i.memory_gb * MB, mem, not up) for i in ins]
        self.exclusive = [j for j in w.jobs if rules == "slurm" or j.isolated]
        excl_names = {j.name for j in self.exclusive}
        self.excess = 0.0

        def units(x: float) -> int:
            k = _units(x, res, up)
            self.excess += max(0.0, k * res - x)
            return k

        lengths = {j.name: units(j.length) for j in self.exclusive}
        dur = {(j.name, k): units(t.duration) for j in w.jobs if j.name not in excl_names
               for k, t in enumerate(j.tasks)}
        cpu = {(j.name, k): units(t.cpu) for j in w.jobs if j.name not in excl_names
               for k, t in enumerate(j.tasks)}
        horizon = sum(lengths.values()) + sum(dur.values()) + sum(cpu.values())
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
                demand = self.demand[key] = _units(t.memory_gb * MB, mem, up)
                lits = {}
                for i in ins:
                    if demand <= cap[i.index]:
                        b = m.new_bool_var(f"on[{j.name},{k},{i.index}]")
                        per_inst[i.index].append((m.new_optional_fixed_size_interval_var(s, d, b, f"t[{j.name},{k},{i.index}]"),
                                                  demand))
                        lits[i.index] = b
                m.add_exactly_one(lits.values())   # no literal: a rounded demand fits nowhere (infeasible)
                self.s[key], self.sb[key] = s, lits
                prev_end = s + d
            self.ends.append(prev_end)
        for i, items in zip(ins, per_inst):
            if items:
                m.add_cumulative([iv for iv, _ in items], [dm for _, dm in items], cap[i.index])
        # Redundant energy constraints (they only tighten the bound): for each
        # memory class c, the jobs and tasks that can only run on instances of
        # at least c share those instances' total memory.
        self.makespan = m.new_int_var(0, horizon, "makespan")
        m.add_max_equality(self.makespan, self.ends)
        for c in sorted(set(cap)):
            group = [i.index for i in ins if cap[i.index] >= c]
            ivs, dms, area = [], [], 0
            for j in self.exclusive:
                if all(cap[i] >= c for i in self.xb[j.name]):
                    ivs.append(m.new_fixed_size_interval_var(self.x[j.name], lengths[j.name], f"X[{j.name},{c}]"))
                    dms.append(min(cap[i] for i in self.xb[j.name]))
                    area += dms[-1] * lengths[j.name]
            for key, lits in self.sb.items():
                if lits and all(cap[i] >= c for i in lits):
                    ivs.append(m.new_fixed_size_interval_var(self.s[key], dur[key], f"S[{key},{c}]"))
                    dms.append(self.demand[key])
                    area += dms[-1] * dur[key]
            if ivs:
                capsum = sum(cap[i] for i in group)
                m.add_cumulative(ivs, dms, capsum)
                if capsum * horizon < 2**60:   # the same energy as a linear cut: all work ends by the makespan
                    m.add(capsum * self.makespan >= area)
        m.minimize(self.makespan)

    def hint(self, trace: Trace) -> None:
        """Suggest a trace (rounded to the grid) as a starting point."""
        values = []
        holds = {h.job: h for h in trace.holds}
        for name, x in self.x.items():
            if name in holds:
                values.append((x, min(x.proto.domain[-1], _units(holds[name].start, self.res, True))))
                values += [(b, i == holds[name].instance) for i, b in self.xb[name].items()]
        runs = {(t.job, t.index): t for t in trace.tasks}
        for key, s in self.s.items():
            if key in runs:
                values.append((s, min(s.proto.domain[-1], _units(runs[key].start, self.res, True))))
                values += [(b, i == runs[key].instance) for i, b in self.sb[key].items()]
        cpsat.set_hints(self.m, values)

    def trace(self, out: cpsat.CpsatRun) -> Trace:
        """The solution re-timed with the true float durations."""
        w, res = self.w, self.res
        jobs, tasks, holds = [], [], []
        for j in w.jobs:
            if j.name in self.x:
                x = out.value(self.x[j.name]) * res
                inst = next(i for i, b in self.xb[j.name].items() if out.boolean(b))
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
                    s = out.value(self.s[j.name, k]) * res
                    inst = next(i for i, b in self.sb[j.name, k].items() if out.boolean(b))
                    tasks.append(TaskRun(j.name, k, inst, s, s + t.duration))
                    first = s - t.cpu if first is None else first
                    end = s + t.duration
                start = max(0.0, first)
                jobs.append(JobRun(j.name, start, start, end))
        return Trace(f"opt-{self.rules}", tuple(jobs), tuple(sorted(tasks, key=lambda t: (t.start, t.instance))),
                     tuple(holds), None)


def _violations(w: Workload, trace: Trace, rules: str) -> list[str]:
    """The checker's findings plus the model's rules: every exclusive job holds one eligible instance."""
    errs = check(w, trace)
    holds: dict[str, list[Hold]] = {}
    for h in trace.holds:
        holds.setdefault(h.job, []).append(h)
    for j in w.jobs:
        if rules == "slurm" or j.isolated:
            hs = holds.get(j.name, [])
            ok = {i.index for i in eligible_instances(w, j)}
            if len(hs) != 1 or hs[0].instance not in ok:
                errs.append(f"job {j.name}: needs one hold on an instance of {sorted(ok)} under {rules} rules")
    return errs


def _resolution(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0 < value < math.inf):
        raise OptionError(f"must be a positive number of seconds or None, got {value!r}", field="resolution")
    return float(value)


def solve(problem: Workload, *, backend: str = "cpsat", time_limit: float | None = None, workers: int | None = None,
          rules: str = "case", resolution: float | None = None, hint: Trace | None = None, log: bool = False,
          **options: Any) -> Result:
    """Minimum makespan of ``problem`` under CASE's (or Slurm's) packing rules, or a proven bound.

    Parameters
    ----------
    problem
        A :class:`instances.case.Workload` (keep it small: tens of jobs).
    backend
        ``"cpsat"`` only.
    time_limit
        Seconds for the whole call (simulations, model building, solves).
    workers
        CP-SAT search workers (default :data:`milp.cpsat.DEFAULT_WORKERS`).
    rules
        ``"case"``: isolated jobs exclusive, other jobs' tasks packed by memory;
        ``"slurm"``: every job exclusive for its lifetime.
    resolution
        Seconds per integer time unit (default: chosen from the data, see :func:`grid`).
    hint
        A further feasible trace to start from besides the simulated ones.
    log
        Stream CP-SAT's log.

    Returns
    -------
    Result
        ``objective``: makespan (s) of the checked schedule (a
        :class:`instances.case.Trace`; the model's own schedules have
        ``workers=None``); ``lower_bound``: proven bound on the optimum.
        ``info`` holds the grid and the solver status names.

    Examples
    --------
    >>> from instances import case
    >>> w = case.generate("A", ratio="0:1", n=4, seed=1)
    >>> r = solve(w, time_limit=10, workers=1)
    >>> r.lower_bound <= r.objective
    True
    """
    opt.no_unknown(options, "milp.case.solve")
    backend = opt.choice(backend, BACKENDS, "backend")
    limit = opt.time_limit(time_limit)
    workers = opt.workers(workers)
    rules = opt.choice(rules, RULES, "rules")
    res_opt = _resolution(resolution)
    log = opt.flag(log, "log")
    if hint is not None and not isinstance(hint, Trace):
        raise OptionError(f"must be an instances.case.Trace or None, got {type(hint).__name__}", field="hint")
    if not isinstance(problem, Workload):
        raise TypeError(f"milp.case.solve expects an instances.case.Workload, got {type(problem).__name__}")
    deadline = Deadline(limit)
    t0 = time.perf_counter()
    w = problem
    if hint is not None:
        errs = _violations(w, hint, rules)
        if errs:
            raise OptionError(f"the trace is not feasible under {rules} rules: {errs[0]}", field="hint")

    starts = [simulate(w, "slurm")] + ([simulate(w, "case")] if rules == "case" else []) \
        + ([hint] if hint is not None else [])
    best = None
    for tr in starts:
        if not _violations(w, tr, rules) and (best is None or tr.makespan < best.makespan):
            best = tr
    lb = max(j.length for j in w.jobs)
    res, time_exact, mem, mem_exact = grid(w)
    if res_opt is not None:
        res = res_opt
        time_exact = all(_near(x / res) is not None for x in _times(w))
    exact = time_exact and mem_exact
    info: dict[str, Any] = {"rules": rules, "resolution": res, "memory_unit_mb": mem, "exact_grid": exact,
                            "start": None if best is None else best.policy}

    def done() -> Result:
        return Result.from_bounds(None if best is None else best.makespan, lb, schedule=best,
                                  runtime=time.perf_counter() - t0, backend=backend, info=info)

    if (best is not None and best.makespan - lb <= TOLERANCE * best.makespan) or deadline.expired():
        return done()
    model = _Model(w, rules, res, mem, up=True)
    if best is not None:
        model.hint(best)
    left = deadline.remaining()
    out = cpsat.run(model.m, time_limit=deadline if exact or left is None else left / 2, workers=workers, log=log)
    info["status"] = out.status
    if out.status == "INFEASIBLE" and exact:
        raise SolverError("CP-SAT found the exact CASE model infeasible, but running every job alone is feasible")
    if out.has_solution:
        if exact:
            lb = max(lb, out.bound * res - model.excess)
        trace = model.trace(out)
        errs = _violations(w, trace, rules)
        if errs:
            raise SolverError(f"milp.case produced an infeasible schedule: {errs[:3]}")
        if best is None or trace.makespan < best.makespan:
            best = trace
    if not exact and not deadline.expired():
        relaxed = _Model(w, rules, res, mem, up=False)
        if best is not None:
            relaxed.hint(best)
        out2 = cpsat.run(relaxed.m, time_limit=deadline, workers=workers, log=log)
        info["bound_status"] = out2.status
        if out2.has_solution:
            lb = max(lb, out2.bound * res - relaxed.excess)
    return done()
