"""Exact MIG scheduling: the entry behind ``milp.solve_optimal`` for MIG problems and workloads.

Two independent formulations of rules 1-6 of :mod:`instances.mig_check`
(FAR paper, Sec. 2.2):

* ``backend="cpsat"`` -- OR-Tools CP-SAT, :mod:`milp.mig_cpsat`
  (``docs/models/mig_cpsat.md``);
* ``backend="highs"`` or another Pyomo solver name -- the Pyomo MILP of
  :mod:`milp.mig_pyomo` (``docs/models/mig_pyomo.md``), solved by HiGHS.

Both accept a single batch (:class:`instances.mig.Problem`) or a multi-batch
workload (:class:`instances.mig.Workload`, no task before its batch's
release). :func:`solve` checks every option once, for both backends, and
keeps the exact-result contract of :mod:`milp.result`.

Examples
--------
>>> from instances import mig
>>> from milp import solve_optimal
>>> p = mig.generate(n=5, gpu="A30", seed=4)
>>> res = solve_optimal(p, backend="cpsat", reconfiguration=False, time_limit=20, hint=False)
>>> str(res.status), mig.check(p.without_reconfiguration(), res.schedule)
('OPTIMAL', [])
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Union

from heuristics.mig_plans import serial_on_root
from instances import mig
from instances import options as opt
from instances.errors import InstanceError, OptionError
from instances.mig_problem import Problem, Workload, check_scale
from instances.mig_retime import TimedPlan, plan_from_runs, plan_from_schedule, retime_order
from instances.mig_schedule import Schedule
from milp.mig_plans import checked
from milp.result import TOLERANCE, Result

__all__ = ["solve", "CPSAT_OPTIONS", "PYOMO_OPTIONS"]

#: Options only the CP-SAT backend takes (see :func:`milp.mig_cpsat.solve_cpsat`).
CPSAT_OPTIONS = ("resolution", "symmetry", "redundant", "dominance", "model", "relax", "relax_time",
                 "relax_share", "benders", "fix_assignment", "log", "seed")
#: Options only the Pyomo backends take (see :func:`milp.mig_pyomo.solve_pyomo`).
PYOMO_OPTIONS = ("relaxation", "relax_time", "relax_share", "log")

_FLAGS = ("symmetry", "redundant", "dominance", "relax", "benders", "fix_assignment", "log", "relaxation")


def _number(value: Any, name: str, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)) \
            or (positive and value <= 0) or value < 0:
        what = "a positive" if positive else "a non-negative"
        raise OptionError(f"must be {what} finite number, got {value!r}", field=name)
    return float(value)


def _backend_options(backend: str, options: dict[str, Any]) -> dict[str, Any]:
    known = CPSAT_OPTIONS if backend == "cpsat" else PYOMO_OPTIONS
    opt.no_unknown({k: v for k, v in options.items() if k not in known}, f"milp.mig.solve (backend {backend!r})")
    out = dict(options)
    for name, value in options.items():
        if name in _FLAGS:
            opt.flag(value, name)
        elif name == "resolution":
            if value is not None:
                out[name] = _number(value, name, positive=True)
        elif name == "relax_time":
            out[name] = opt.time_limit(value, name)
            if out[name] is None:
                raise OptionError("must be a positive number of seconds, got None", field=name)
        elif name == "relax_share":
            out[name] = _number(value, name, positive=True)
            if out[name] > 1:
                raise OptionError(f"must be a share of the time left in (0, 1], got {value!r}", field=name)
        elif name == "model":
            opt.choice(value, ("auto", "laminar", "intervals"), name)
        elif name == "seed":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise OptionError(f"must be an integer >= 0, got {value!r}", field=name)
    return out


def _start_plan(problem: Union[Problem, Workload], hint: Schedule) -> TimedPlan:
    """The hint re-timed: its own session and channel order, or, when those contradict each other (an
    infeasible hint, e.g. every task at time 0), its placements run in the order of its start times."""
    try:
        return plan_from_schedule(problem, hint)
    except ValueError:
        order = [(st.task, st.placement) for st in sorted(hint.tasks, key=lambda st: (st.start, st.task))]
        return plan_from_runs(problem, retime_order(problem, order).schedule.tasks)


def _check_hint(problem: Union[Problem, Workload], hint: Any) -> Schedule | None | bool:
    if hint is None or hint is False:
        return hint
    if not isinstance(hint, Schedule):
        raise OptionError(f"must be a mig.Schedule, None (FAR's schedule) or False (none), got "
                          f"{type(hint).__name__}", field="hint")
    if hint.gpu != problem.gpu.name:
        raise OptionError(f"the schedule is for GPU {hint.gpu!r}, the problem for {problem.gpu.name!r}",
                          field="hint")
    names = sorted(st.task for st in hint.tasks)
    if names != sorted(t.name for t in problem.tasks):
        raise OptionError("the schedule does not list every task of the problem exactly once", field="hint")
    for st in hint.tasks:
        p = st.placement
        if not problem.gpu.has_placement(p.size, p.start) or p.size not in problem.task(st.task).times:
            raise OptionError(f"task {st.task}: placement {p.name} is not usable", field="hint")
    return hint


def _default_hint(problem: Union[Problem, Workload]) -> tuple[Schedule | None, str]:
    """FAR's schedule (the paper's heuristic), or none if it fails."""
    from heuristics import far

    try:
        return far.schedule(problem), "far"
    except Exception as exc:  # a hint is optional: never let it break the exact solve
        return None, f"none (far failed: {type(exc).__name__}: {exc})"


@opt.typed
def solve(problem: Union[Problem, Workload], *, backend: str = "cpsat", reconfiguration: bool = True,
          time_limit: float | None = None, workers: int | None = None, hint: Schedule | None | bool = None,
          lower_bound: float | None = None, **options: Any) -> Result:
    """Solve a MIG batch or workload to optimality, or to the time limit.

    Parameters
    ----------
    problem
        A :class:`~instances.mig.Problem` or :class:`~instances.mig.Workload`.
        It carries whether reconfiguration applies: on a GPU with zero
        create/destroy times (``problem.without_reconfiguration()``) it does not.
    backend
        ``"cpsat"``, ``"highs"`` or another Pyomo solver name.
    reconfiguration
        ``False`` solves ``problem.without_reconfiguration()`` instead (a
        convenience applied here, once); the schedule then has no operations.
    time_limit
        Seconds for the whole call, the starting heuristic, model building
        and every solve included (``None``: no limit); only a backend's first
        import in a process is not counted. On time-out the status is
        FEASIBLE with the best schedule known.
    workers
        Solver threads (CP-SAT workers; HiGHS threads).
    hint
        A :class:`~instances.mig.Schedule` to start from (re-timed, so it need
        only name a placement for every task); ``None`` uses FAR's schedule,
        ``False`` none.
    lower_bound
        A bound on the optimum in seconds, valid for the problem solved.
    **options
        Backend options: CP-SAT ``resolution``, ``symmetry``, ``redundant``,
        ``dominance``, ``model``, ``relax``, ``relax_time``, ``relax_share``,
        ``benders``, ``fix_assignment``, ``log``, ``seed``; Pyomo ``relaxation``, ``relax_time``,
        ``relax_share``, ``log``.

    Returns
    -------
    Result
        ``objective`` = makespan in seconds of a checked schedule, a
        ``lower_bound`` valid for the float data; OPTIMAL only when they agree
        within :data:`milp.TOLERANCE`.

    Raises
    ------
    OptionError
        For a bad option value or an option the backend does not know.
    InstanceError
        For times so large that schedules would overflow (see
        :func:`instances.mig_problem.check_scale`).
    """
    seconds = opt.time_limit(time_limit)
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a MIG Problem or Workload, got {type(problem).__name__}", field="problem")
    if not isinstance(backend, str) or not backend:
        raise OptionError(f"must be a solver name such as 'cpsat' or 'highs', got {backend!r}", field="backend")
    workers = opt.workers(workers)
    opt.flag(reconfiguration, "reconfiguration")
    if lower_bound is not None:
        lower_bound = _number(lower_bound, "lower_bound", positive=False)
    options = _backend_options(backend, options)
    # a backend's first import (Pyomo takes about a second) is process set-up, not solving
    if backend == "cpsat":
        from milp.mig_cpsat import solve_cpsat as run
    else:
        from milp.mig_pyomo import check_solver, solve_pyomo as run

        check_solver(backend)
    from heuristics import far  # noqa: F401 - imported here for the same reason

    deadline = opt.Deadline(seconds)
    if not reconfiguration:
        problem = problem.without_reconfiguration()
    # the starting schedules (FAR's, or every task in turn) must not overflow to inf s either:
    # the same bound as the heuristics, a clear InstanceError instead of a failed check
    check_scale(problem)
    hint = _check_hint(problem, hint)
    one_release = len(set(problem.releases().values())) <= 1
    if options.get("model") == "laminar" and (problem.gpu.reconfigurable or not one_release):
        raise OptionError("the laminar model needs a problem without reconfiguration and one release time",
                          field="model")
    if options.get("fix_assignment") and hint is False:
        raise OptionError("fix_assignment needs a hint schedule (or None for FAR's)", field="fix_assignment")
    name = backend if backend not in ("highs", "appsi_highs") else "highs"
    info: dict[str, Any] = {"reconfiguration": problem.gpu.reconfigurable}
    if problem.n == 0:
        return Result.from_bounds(0.0, 0.0, schedule=Schedule(problem.gpu.name, []), runtime=deadline.elapsed(),
                                  backend=name, info=info)

    if hint is None:
        hint, info["hint"] = _default_hint(problem)
    elif hint is False:
        hint, info["hint"] = None, "none"
    else:
        info["hint"] = "given"
    if options.get("fix_assignment") and hint is None:
        raise OptionError(f"fix_assignment needs a hint schedule; {info['hint']}", field="fix_assignment")
    # the best schedule known before any model runs: the re-timed hint, else all tasks in turn on the whole GPU
    incumbent = checked(problem, _start_plan(problem, hint).schedule if hint is not None
                        else serial_on_root(problem).schedule, "the re-timed starting schedule")
    if hint is not None and hint.makespan < incumbent.makespan and not mig.check(problem, hint):
        incumbent = hint
    if hint is not None:
        info["hint_makespan"] = incumbent.makespan
    if lower_bound is not None and lower_bound > incumbent.makespan * (1 + TOLERANCE):
        raise OptionError(f"{lower_bound!r} exceeds the makespan {incumbent.makespan!r} of a feasible schedule",
                          field="lower_bound")
    if backend != "cpsat":
        options["solver"] = backend
    return run(problem, deadline=deadline, incumbent=incumbent, hint=hint, workers=workers,
               lower_bound=lower_bound or 0.0, info=info, **options)
