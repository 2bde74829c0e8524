"""The GPU's create/destroy channel: reconfiguration operations run one at a time.

A MIG GPU creates or destroys one instance at a time (reconfiguration rule 4:
operations are serialised). Methods that build schedules book every operation
on one :class:`OpChannel`: an operation that may start at ``earliest`` goes
into the first gap of the channel at or after ``earliest`` that fits its
duration (not only after the last booked operation, so an early operation is
never held up by one booked for later).

Intervals are half-open, ``[start, end)``: an operation may start exactly
when another ends. A zero-length operation is booked too (a point that no
later operation may straddle), and never sits strictly inside another one.

This is shared mechanics for the methods (FAR's multi-batch concatenation, the
MISO-opt and FixPart baselines); the independent checker
:mod:`instances.mig_check` does not use it.

Examples
--------
>>> ch = OpChannel()
>>> ch.place(0.0, 0.25), ch.place(0.0, 0.25)  # the second waits for the first
(0.0, 0.25)
>>> ch.place(5.0, 1.0), ch.place(1.0, 2.0)    # a gap before a later operation is used
(5.0, 1.0)
>>> ch.place(0.5, 2.5)                        # [3.0, 5.5) would overlap [5.0, 6.0)
6.0
>>> ch.intervals
((0.0, 0.25), (0.25, 0.5), (1.0, 3.0), (5.0, 6.0), (6.0, 8.5))
"""

from __future__ import annotations

import bisect
from typing import Iterable

__all__ = ["OpChannel"]


class OpChannel:
    """Busy intervals of the one create/destroy engine, sorted by start.

    Parameters
    ----------
    intervals
        Already booked ``(start, end)`` intervals; they must not overlap.

    Examples
    --------
    >>> ch = OpChannel([(1.0, 2.0)])
    >>> ch.first_fit(0.5, 0.5), ch.first_fit(0.5, 0.6)
    (0.5, 2.0)
    """

    __slots__ = ("_busy",)

    def __init__(self, intervals: Iterable[tuple[float, float]] = ()) -> None:
        self._busy: list[tuple[float, float]] = sorted((float(s), float(e)) for s, e in intervals)

    @property
    def intervals(self) -> tuple[tuple[float, float], ...]:
        """The booked ``(start, end)`` intervals, by start."""
        return tuple(self._busy)

    def __len__(self) -> int:
        return len(self._busy)

    def __repr__(self) -> str:
        return f"OpChannel({self._busy!r})"

    def copy(self) -> "OpChannel":
        """An independent copy (to time a trial and throw it away)."""
        c = OpChannel()
        c._busy = list(self._busy)
        return c

    def first_fit(self, earliest: float, duration: float) -> float:
        """Start of the first gap at or after ``earliest`` that fits ``duration`` (nothing is booked).

        The earliest ``t >= earliest`` such that no booked ``[s, e)`` has
        ``s < t + duration`` and ``e > t`` (for ``duration == 0``: no booked
        interval strictly contains ``t``).
        """
        busy = self._busy
        t = earliest
        # booked intervals never overlap, so their ends are sorted like their starts:
        # skip every interval that ends at or before t
        i = bisect.bisect_right(busy, t, key=_end)
        for i in range(i, len(busy)):
            s, e = busy[i]
            if e <= t:
                continue  # a zero-length interval at t
            if s >= t + duration:
                break
            t = e
        return t

    def book(self, start: float, duration: float) -> float:
        """Book ``[start, start + duration)`` (the caller chose a free start) and return its end."""
        end = start + duration
        bisect.insort(self._busy, (start, end))
        return end

    def place(self, earliest: float, duration: float) -> float:
        """:meth:`first_fit` then :meth:`book`: the operation's start."""
        start = self.first_fit(earliest, duration)
        self.book(start, duration)
        return start

    def forget_until(self, time: float) -> None:
        """Drop the intervals that end at or before ``time``.

        Only safe when no operation will again be placed before ``time``
        (for instance the release of the next batch); it keeps the channel short.
        """
        self._busy = [b for b in self._busy if b[1] > time]


def _end(interval: tuple[float, float]) -> float:
    return interval[1]
