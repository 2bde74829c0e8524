"""Exact models (OR-Tools CP-SAT and Pyomo + HiGHS) for every problem family.

Use :func:`solve_optimal`: it looks the problem's type up in :data:`FAMILIES`
and calls that family's ``milp.<family>.solve(problem, backend=..., **options)``,
which returns a :class:`Result` under the contract of :mod:`milp.result`.

Examples
--------
>>> from instances import mig
>>> from milp import solve_optimal
>>> problem = mig.generate(n=6, gpu="A30", seed=1)
>>> res = solve_optimal(problem, backend="cpsat", time_limit=30)
>>> str(res.status), res.objective >= res.lower_bound
('OPTIMAL', True)
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from instances import options as opt
from instances.errors import OptionError
from milp.result import TOLERANCE, Result, Status

__all__ = ["solve_optimal", "family_of", "register", "FAMILIES", "Result", "Status", "TOLERANCE"]

#: The built-in families: name -> (instances module, problem class names, milp module with ``solve``).
#: Modules are imported on first use, so ``import milp`` stays light.
FAMILIES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "mig": ("instances.mig", ("Problem", "Workload"), "milp.mig"),
    "hetero": ("instances.hetero", ("HeteroProblem",), "milp.hetero"),
    "pairing": ("instances.pairing", ("PairingProblem", "WeightedQueue"), "milp.pairing"),
    "realtime": ("instances.realtime", ("RealtimeProblem",), "milp.realtime"),
    "case": ("instances.case", ("Workload",), "milp.case"),
    "mig_node": ("instances.mig_node", ("NodeProblem",), "milp.mig_node"),
}

_registered: dict[type, tuple[str, Callable[..., Result]]] = {}


@opt.known_options
def register(problem_type: type, family: str, solve: Callable[..., Result]) -> None:
    """Make :func:`solve_optimal` solve ``problem_type`` with ``solve`` (for a family of your own).

    ``solve(problem, backend=..., time_limit=..., workers=..., **options)``
    must return a :class:`Result` built with :meth:`Result.from_bounds`.
    """
    _registered[problem_type] = (family, solve)


def _lookup(problem: Any) -> tuple[str, Callable[..., Result]]:
    for cls in type(problem).__mro__:
        if cls in _registered:
            return _registered[cls]
    for family, (inst_module, classes, milp_module) in FAMILIES.items():
        module = importlib.import_module(inst_module)
        if isinstance(problem, tuple(getattr(module, c) for c in classes)):
            solve = importlib.import_module(milp_module).solve
            for c in classes:
                _registered.setdefault(getattr(module, c), (family, solve))
            return family, solve
    raise opt.ArgumentTypeError(f"solve_optimal: problem got {type(problem).__name__}, which is not a problem type "
                                f"of a known family ({', '.join(FAMILIES)}); see milp.register")


@opt.known_options
def family_of(problem: Any) -> str:
    """Name of the problem's family (``"mig"``, ``"hetero"``, ...).

    Examples
    --------
    >>> from instances import hetero
    >>> family_of(hetero.generate(3, seed=0))
    'hetero'
    """
    return _lookup(problem)[0]


def solve_optimal(problem: Any, *, backend: str | None = None, **options: Any) -> Result:
    """Solve ``problem`` exactly, or to the time limit, with the chosen backend.

    Parameters
    ----------
    problem
        A problem object of one of the families in :data:`FAMILIES` (MIG
        problem or multi-batch workload, heterogeneous weighted tardiness,
        pairing, real-time partitioning, CASE, a node of g MIG GPUs) or of a
        registered family.
    backend
        ``"cpsat"`` (OR-Tools CP-SAT) or ``"highs"`` (Pyomo model solved by
        HiGHS); a family may offer more (see its ``milp.<family>.solve``).
        ``None`` (the default) uses the family's own default, its strongest
        method (``"cpsat"`` for most families; ``"auto"`` for hetero).
    **options
        Passed to the family's solver. Every family takes ``time_limit``
        (seconds, ``None`` for none; model building counts, the one-time
        import of the solver library by the first solve of a process does
        not: about 0.5 s for OR-Tools, 1-2 s for Pyomo, nor hetero's one-time
        load of its compiled kernels) and ``workers``;
        MIG also ``reconfiguration``, ``hint`` and ``lower_bound``. Bad values
        raise :class:`~instances.errors.OptionError`.

    Returns
    -------
    Result
        The same shape for every family: OPTIMAL only when the objective on
        the user's data is within :data:`TOLERANCE` of a valid bound; on a
        time limit, FEASIBLE with the best checked solution known and its
        bound (see :mod:`milp.result`).
    """
    if backend is not None and (not isinstance(backend, str) or not backend):
        raise OptionError(f"must be a solver name such as 'cpsat' or 'highs', got {backend!r}",
                              field="backend")
    opt.time_limit(options.get("time_limit"))
    opt.workers(options.get("workers"))
    _, solve = _lookup(problem)
    if backend is not None:
        options["backend"] = backend
    return solve(problem, **options)
