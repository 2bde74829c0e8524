"""The result type shared by every exact model of the toolkit."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Status(str, enum.Enum):
    """Outcome of an exact solve.

    OPTIMAL is reported only when the solver proved it. FEASIBLE means a
    schedule was found but the gap is open (usually the time limit was hit).
    """

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:  # print as the bare name
        return self.value


@dataclass
class Result:
    """What :func:`milp.solve_optimal` returns, for every problem family.

    Attributes
    ----------
    objective
        Objective value of the best solution found (``None`` if none).
    lower_bound
        A proven lower bound on the optimum (for minimisation), valid in the
        problem's own units after any integer scaling.
    status
        :class:`Status`.
    runtime
        Wall-clock seconds spent in the solve.
    schedule
        The best solution in the family's own solution type, already checked by
        the family's independent checker (``None`` if none was found).
    backend
        ``"cpsat"``, ``"highs"`` or the name of another Pyomo solver.
    info
        Backend-specific extras (e.g. scaling resolution, solver statistics).
    """

    objective: float | None
    lower_bound: float | None
    status: Status
    runtime: float
    schedule: Any = None
    backend: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(objective - lower_bound) / objective`` (0 when proven optimal)."""
        if self.objective is None or self.lower_bound is None:
            return None
        if self.objective == 0:
            return 0.0 if self.lower_bound >= 0 else None
        return max(0.0, (self.objective - self.lower_bound) / abs(self.objective))

    @property
    def proven(self) -> bool:
        return self.status is Status.OPTIMAL
