"""The check every schedule of the exact MIG backends passes.

The backends (:mod:`milp.mig_cpsat`, :mod:`milp.mig_pyomo`) take their
horizon, first incumbent and warm starts from the heuristic plans of
:mod:`heuristics.mig_plans` (re-exported here for earlier users); every
schedule they build or re-time goes through :func:`checked`.

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> checked(p, best_plan(p).schedule, "the best plan").makespan > 0
True
"""

from __future__ import annotations

from typing import Union

from heuristics.mig_plans import (best_plan, greedy_order, improve_assignment, improve_channel,  # noqa: F401
                                  serial_on_root, tree_plans, tree_schedule)
from instances import mig
from instances.errors import SolverError
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule
from instances.options import known_options

__all__ = ["checked"]

AnyProblem = Union[Problem, Workload]


@known_options
def checked(problem: AnyProblem, schedule: Schedule, what: str) -> Schedule:
    """``schedule`` if :func:`instances.mig.check` accepts it; otherwise a
    :class:`~instances.errors.SolverError` naming ``what`` (a bug of ours: every
    schedule a backend builds or re-times must pass the independent checker).

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})]).without_reconfiguration()
    >>> checked(p, mig.Schedule("A30", []), "the empty schedule")
    Traceback (most recent call last):
    ...
    instances.errors.SolverError: the empty schedule fails the checker: rule 5 (task set): task a is not scheduled
    """
    violations = mig.check(problem, schedule)
    if violations:
        raise SolverError(f"{what} fails the checker: " + "; ".join(violations[:5]))
    return schedule
