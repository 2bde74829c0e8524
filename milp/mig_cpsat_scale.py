"""Integer time units of the CP-SAT MIG models: the scale and its resolution.

Part of the CP-SAT backend (:mod:`milp.mig_cpsat`). Times are integers:
durations are rounded *down* to units of ``1 / R`` seconds (at least one unit
each), so the rounded model is a relaxation whose bound, less the rounding
excess, is valid for the user's data (:class:`Scale`); the resolution ``R``
is chosen from the data so that a rounded optimum is also an optimum of the
float problem within :data:`milp.TOLERANCE` (:func:`choose_resolution`).
The proofs are in ``docs/models/mig_cpsat.md`` ("Integer time: scaling and why
the bound stays valid").

Examples
--------
>>> from instances import mig
>>> p = mig.generate(n=12, gpu="A100", seed=0)
>>> s = Scale.of(p, choose_resolution(p, 100.0, 150.0))
>>> s.bound(s.units(100.0)) <= 100.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from instances.mig_problem import Problem, Workload
from instances.options import known_options
from milp.result import TOLERANCE

__all__ = ["Scale", "choose_resolution", "MAX_UNITS"]

ProblemLike = Union[Problem, Workload]

#: Largest model time (units) a resolution may produce, so that every linear
#: row (at most a few dozen terms per task) stays far inside 64-bit integers.
MAX_UNITS = 2 ** 40


def _is_power_of_two(x: float) -> bool:
    m, _ = math.frexp(x)
    return m == 0.5


@dataclass(frozen=True)
class Scale:
    """Integer time units of the model: ``R`` units per second, durations rounded down.

    ``units(x)`` is ``floor(x * R)`` (exact when R is a power of two, the
    automatic choice; otherwise taken a hair lower so float error never
    rounds up). Durations use at least one unit: ``dur(x) = max(1, units(x))``.
    ``excess`` bounds how much those one-unit floors add along any chain of a
    schedule; the bound of the model, less it, is valid for the float data
    (``docs/models/mig_cpsat.md``).

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 0.5, 2: 0.25, 4: 0.125})]).without_reconfiguration()
    >>> s = Scale.of(p, 4.0); s.dur(0.125), s.dur(0.5), s.excess
    (1, 2, 0.5)
    """

    R: float
    excess: float = 0.0
    exact: bool = field(default=True, compare=False)

    @classmethod
    def of(cls, problem: ProblemLike, R: float) -> "Scale":
        R = float(R)
        exact = _is_power_of_two(R)
        gpu = problem.gpu
        # each task's worst one-unit floor is on its fastest (shortest) size
        excess = sum(max(0.0, 1.0 - R * min(t.times.values())) for t in problem.tasks)
        if gpu.reconfigurable:
            # at most n sessions, each with a create and a destroy, on any chain
            per_session = max(max(0.0, 1.0 - R * gpu.create_time[s]) + max(0.0, 1.0 - R * gpu.destroy_time[s])
                              for s in gpu.sizes)
            excess += problem.n * per_session
        return cls(R, excess, exact)

    def units(self, seconds: float) -> int:
        if self.exact:
            return max(0, math.floor(seconds * self.R))
        return max(0, math.floor(seconds * self.R * (1.0 - 2.0 ** -40)))

    def dur(self, seconds: float) -> int:
        return max(1, self.units(seconds))

    def bound(self, model_bound: float) -> float:
        """A bound in seconds, valid for the float data, from a bound of the rounded model."""
        return max(0.0, (float(model_bound) - self.excess) / self.R)


def _chain(problem: ProblemLike) -> int:
    """Activities on a longest chain of a schedule: tasks, their operations and one release."""
    n = problem.n
    return (3 * n + 1) if problem.gpu.reconfigurable else (n + 1)


@known_options
def choose_resolution(problem: ProblemLike, lower_bound: float, horizon: float) -> float:
    """Units per second, a power of two, from the data.

    Rounding costs at most one unit per activity on a chain on the primal side
    and the one-unit floors at most as much on the bound side, so with
    ``R >= (L + E) / (TOLERANCE * lower_bound)`` (L activities on a chain, E <= L
    their excess) a rounded optimum is within the tolerance on the float data.
    ``R`` is capped so the horizon stays below :data:`MAX_UNITS`.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(n=12, gpu="A100", seed=0)
    >>> R = choose_resolution(p, 100.0, 150.0); R == 2 ** 20, R * 150.0 < MAX_UNITS
    (True, True)
    """
    chain = _chain(problem)
    need = 2 * chain / (0.9 * TOLERANCE * max(lower_bound, 1e-300))
    cap = MAX_UNITS / max(horizon, 1e-300)
    return 2.0 ** min(math.ceil(math.log2(need)), math.floor(math.log2(cap)))

