"""Exact MIG scheduling (seed 000): the dispatcher behind ``milp.solve_optimal``.

Two independent formulations of DESIGN.md's rules 1-6 (Sec. 2.2 of the seed):

* ``backend="cpsat"`` -- OR-Tools CP-SAT, :mod:`milp.mig_cpsat`;
* ``backend="highs"`` or any other Pyomo solver name -- the Pyomo MILP of
  :mod:`milp.mig_pyomo` (``solve_pyomo``), solved by HiGHS by default.

Both accept a single batch (:class:`instances.mig.Problem`) or a multi-batch
workload (:class:`instances.mig.Workload`, no task before its batch's
release: the offline optimum the competitive-ratio check compares against).

Examples
--------
>>> from instances import mig
>>> from milp import solve_optimal
>>> p = mig.generate(n=5, gpu="A30", seed=4)
>>> res = solve_optimal(p, backend="cpsat", reconfiguration=False, time_limit=20, hint=False)
>>> str(res.status), mig.check(p.without_reconfiguration(), res.schedule, reconfiguration=False)
('OPTIMAL', [])
"""

from __future__ import annotations

from typing import Any, Union

from instances.errors import InstanceError
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule
from milp.result import Result

__all__ = ["solve"]


def solve(problem: Union[Problem, Workload], backend: str = "cpsat", reconfiguration: bool = True,
          time_limit: float | None = None, workers: int | None = None, hint: Schedule | None | bool = None,
          lower_bound: float | None = None, **options: Any) -> Result:
    """Solve a MIG batch or workload to optimality (or to the time limit).

    Parameters
    ----------
    problem
        A :class:`~instances.mig.Problem` or :class:`~instances.mig.Workload`.
    backend
        ``"cpsat"``, ``"highs"`` or another Pyomo solver name.
    reconfiguration
        ``True``: sessions with create/destroy operations (rules 1-6).
        ``False``: ``problem.without_reconfiguration()`` semantics; the
        schedule has no operations and is checked with ``reconfiguration=False``.
    time_limit
        Seconds (``None``: no limit). On time-out the status is FEASIBLE (or
        UNKNOWN without a schedule) with the proven bound.
    workers
        Solver threads (CP-SAT workers; HiGHS threads).
    hint
        A :class:`~instances.mig.Schedule` (e.g. FAR's) as hint / incumbent.
        For CP-SAT, ``None`` uses FAR when :mod:`heuristics.far` exists and
        ``False`` uses none.
    lower_bound
        A proven lower bound in seconds to pass to the model (CP-SAT).
    **options
        Backend-specific options (CP-SAT: ``resolution``, ``symmetry``,
        ``redundant``, ``model``, ``log``).

    Returns
    -------
    Result
        ``objective`` = makespan in seconds, a valid ``lower_bound``, status,
        runtime, a checked schedule, the backend name and solver ``info``.
    """
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a MIG Problem or Workload, got {type(problem).__name__}", field="problem")
    if not isinstance(backend, str) or not backend:
        raise InstanceError(f"backend must be a solver name, got {backend!r}", field="backend")
    if backend == "cpsat":
        from milp.mig_cpsat import solve_cpsat

        return solve_cpsat(problem, reconfiguration=reconfiguration, time_limit=time_limit, workers=workers,
                           hint=hint, lower_bound=lower_bound, **options)
    from milp.mig_pyomo import solve_pyomo

    if hint is False:
        hint = None
    return solve_pyomo(problem, reconfiguration=reconfiguration, time_limit=time_limit, solver=backend,
                       hint=hint, workers=workers, lower_bound=lower_bound, **options)
