"""EDF on one partition of the real-time partitioning family: the tests every method and the checker share.

A partition of ``m`` SMs is a uniprocessor (partitioning paper: Zahaf et al.,
Sec. 3.3); inside it the toolkit schedules by preemptive EDF (the paper leaves
the policy open, Sec. 5.5). This module holds the numeric side of that: the
hyperperiod of rational periods, the sufficient density test, the exact
processor-demand test for constrained deadlines and a simulation of EDF over
one hyperperiod (the checker's test, independent of the demand formula).
Everything works on arrays of execution times ``C``, deadlines ``D`` and
periods ``T``; :mod:`instances.realtime` re-exports it.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from instances.errors import InstanceError

__all__ = ["REL_TOL", "RealtimeError", "hyperperiod", "density_test", "demand_test", "simulate_edf"]

#: Relative tolerance of every "<=" between float times.
REL_TOL = 1e-9
_REL = REL_TOL


class RealtimeError(InstanceError):
    """Invalid real-time partitioning data."""


def hyperperiod(periods: Iterable[float], max_value: float = 1e9) -> float | None:
    """Least common multiple of rational periods, or ``None`` above ``max_value``.

    Examples
    --------
    >>> hyperperiod([50, 80, 125])
    2000.0
    >>> hyperperiod([2.5, 4])
    20.0
    """
    # lcm of reduced fractions p_i/q_i is lcm(p_i) / gcd(q_i)
    num, den = 1, 0
    for p in periods:
        f = Fraction(p).limit_denominator(10**6)
        if f <= 0 or abs(float(f) - p) > 1e-12 * max(1.0, abs(p)):
            return None
        num = math.lcm(num, f.numerator)
        den = math.gcd(den, f.denominator)
        if num / den > max_value * 10**6:
            return None
    value = num / den
    return None if value > max_value else float(value)


def density_test(C: np.ndarray, D: np.ndarray) -> bool:
    """Sufficient EDF test for constrained deadlines: ``sum C_i / D_i <= 1``.

    Examples
    --------
    >>> density_test(np.array([1.0, 2.0]), np.array([4.0, 4.0]))
    True
    """
    return float(np.sum(C / D)) <= 1.0 + _REL


def demand_test(C: np.ndarray, D: np.ndarray, T: np.ndarray,
                hyperperiod_hint: float | None = None) -> bool:
    """Exact uniprocessor EDF test for constrained deadlines (processor demand).

    Schedulable iff ``U <= 1`` and ``dbf(t) = sum_i max(0, floor((t - D_i)/T_i) + 1) C_i <= t``
    at every absolute deadline ``t <= L``, with ``L = min(H + max D, L_a)``,
    ``L_a = max(max D, sum (T_i - D_i) U_i / (1 - U))`` (Baruah et al.; ``H`` the
    hyperperiod, which gives the ``theta(M N H)`` of Sec. 5). The density test
    is tried first because it is sufficient; the verdict is the exact one.

    Parameters
    ----------
    C, D, T
        Execution times, deadlines and periods of the tasks of one partition.
    hyperperiod_hint
        A common multiple of the periods (e.g. the whole task set's
        hyperperiod); computed when omitted.

    Examples
    --------
    >>> demand_test(np.array([2.0, 2.0]), np.array([3.0, 4.0]), np.array([4.0, 8.0]))
    True
    >>> demand_test(np.array([2.0, 3.0]), np.array([3.0, 4.0]), np.array([4.0, 8.0]))
    False
    """
    C = np.asarray(C, float)
    D = np.asarray(D, float)
    T = np.asarray(T, float)
    if np.any(C > D * (1 + _REL)):
        return False
    U = float(np.sum(C / T))
    if U > 1.0 + _REL:
        return False
    if float(np.sum(C / D)) <= 1.0 + _REL:
        return True
    L = math.inf
    if U < 1.0 - 1e-12:
        L = max(float(D.max()), float(np.sum((T - D) * C / T)) / (1.0 - U))
    H = hyperperiod_hint if hyperperiod_hint is not None else hyperperiod(T.tolist())
    if H is not None:
        L = min(L, H + float(D.max()))
    if not math.isfinite(L):
        raise RealtimeError("demand test: utilisation is 1 and the hyperperiod is intractable",
                            field="period")
    if float(np.sum(L / T)) > 5e6:
        raise RealtimeError("demand test: more than 5e6 deadlines to check (utilisation too "
                            "close to 1 with an intractable hyperperiod)", field="period")
    # relative slack only: an absolute one (1e-9) outweighs every time in small units (1e-300 s
    # periods made the deadline grid astronomically long and the test lenient)
    points = np.unique(np.concatenate([np.arange(d, L * (1 + _REL), t) for d, t in zip(D, T)]))
    jobs = np.floor((points[None, :] - D[:, None]) / T[:, None] + 1e-12) + 1.0
    dbf = C @ np.maximum(jobs, 0.0)
    return bool(np.all(dbf <= points * (1 + _REL)))


def simulate_edf(C: Sequence[float], D: Sequence[float], T: Sequence[float],
                 max_jobs: int = 2_000_000) -> tuple[int, float] | None:
    """Simulate preemptive EDF of the synchronous periodic arrival sequence.

    For constrained deadlines the synchronous sequence is the worst case and
    one hyperperiod suffices (every job released before ``H`` has its deadline
    by ``H``), so this is an exact test independent of the demand formula.

    Returns
    -------
    None if every job meets its deadline, else ``(task index, release)`` of
    the first job found late. Raises ``RealtimeError`` when the hyperperiod
    holds more than ``max_jobs`` jobs.

    Examples
    --------
    >>> simulate_edf([2, 2], [3, 4], [4, 8]) is None
    True
    >>> simulate_edf([2, 3], [3, 4], [4, 8])
    (1, 0.0)
    """
    C = [float(c) for c in C]
    D = [float(d) for d in D]
    T = [float(t) for t in T]
    H = hyperperiod(T)
    if H is None or sum(H / t for t in T) > max_jobs:
        raise RealtimeError("EDF simulation: hyperperiod too large", field="period")
    eps = _REL * H + 1e-9
    releases = [(0.0, i) for i in range(len(C))]  # (next release time, task)
    heapq.heapify(releases)
    ready: list[tuple[float, int, float, list[float]]] = []  # (abs deadline, task, release, [remaining])
    now = 0.0
    while releases or ready:
        while releases and releases[0][0] <= now + 1e-12:
            r, i = heapq.heappop(releases)
            heapq.heappush(ready, (r + D[i], i, r, [C[i]]))
            if r + T[i] < H - 1e-9:
                heapq.heappush(releases, (r + T[i], i))
        if not ready:
            now = releases[0][0]
            continue
        dl, i, r, rem = ready[0]
        horizon = releases[0][0] if releases else math.inf
        if now + rem[0] <= horizon + 1e-12:
            now += rem[0]
            heapq.heappop(ready)
            if now > dl + eps:
                return (i, r)
        else:
            rem[0] -= horizon - now
            now = horizon
    return None
