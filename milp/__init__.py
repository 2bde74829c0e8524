"""Exact models (OR-Tools CP-SAT and Pyomo + HiGHS) for every problem family.

Use :func:`solve_optimal`; it dispatches on the problem's family: a problem
object defined in ``instances/<family>.py`` is solved by ``milp/<family>.py``,
whose ``solve(problem, backend=..., **options)`` returns a :class:`Result`.

Examples
--------
>>> from instances import mig
>>> from milp import solve_optimal
>>> problem = mig.generate(n=6, gpu="A30", seed=1)
>>> res = solve_optimal(problem, backend="cpsat", time_limit=30)
>>> res.status, res.objective >= res.lower_bound  # doctest: +SKIP
(<Status.OPTIMAL: 'OPTIMAL'>, True)
"""

from __future__ import annotations

import importlib
from typing import Any

from milp.result import Result, Status

__all__ = ["solve_optimal", "Result", "Status"]

BACKENDS = ("cpsat", "highs")


def family_of(problem: Any) -> str:
    """Name of the problem family (``mig``, ``hetero``, ...) from the problem's defining module."""
    module = type(problem).__module__
    package, _, name = module.rpartition(".")
    # a family may split its definitions over instances/<family>_*.py (mig_problem.py, ...)
    family = name.split("_", 1)[0]
    if package != "instances" or not family:
        raise TypeError(
            f"solve_optimal: {type(problem).__name__} is not a problem type from instances/ "
            f"(module {module!r})"
        )
    return family


def solve_optimal(problem: Any, backend: str = "cpsat", **options: Any) -> Result:
    """Solve ``problem`` exactly (or to the time limit) with the chosen backend.

    Parameters
    ----------
    problem
        A problem object from one of the ``instances`` modules (MIG problem or
        multi-batch workload, heterogeneous weighted tardiness, pairing, ...).
    backend
        ``"cpsat"`` (OR-Tools CP-SAT) or ``"highs"`` (Pyomo model solved by
        HiGHS); families may accept other Pyomo solver names.
    **options
        Passed to the family's solver, e.g. ``time_limit`` (seconds),
        ``workers``, ``hint``, ``reconfiguration`` (MIG).

    Returns
    -------
    Result
        Same shape for every family. Status OPTIMAL only when proven; the
        schedule (if any) has passed the family's independent checker.
    """
    family = family_of(problem)
    try:
        module = importlib.import_module(f"milp.{family}")
    except ModuleNotFoundError as exc:
        if exc.name == f"milp.{family}":
            raise NotImplementedError(f"no exact model for problem family {family!r}") from None
        raise
    return module.solve(problem, backend=backend, **options)
