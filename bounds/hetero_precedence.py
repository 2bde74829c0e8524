"""Precedence pairs of one machine from the interchange of two jobs with nondecreasing costs.

A pair ``i`` before ``j`` holds when, in any schedule with ``j`` first, moving
``i`` to ``j``'s place and ``j`` to ``i``'s place costs no more. With
``p_i <= p_j`` the jobs between them do not move later, ``i`` completes no
later, and ``j`` completes where ``i`` did, so the interchange changes the
cost by at most ``g(C_i) - g(C_j)`` with ``g = f_i - f_j``: it costs no more
when ``g`` is nondecreasing over the times where the two can complete, from
``e_j`` (the earliest completion of ``j`` after its known predecessors) to
``A_i`` (the latest completion of ``i`` before its known successors). This is
the interchange rule of Rinnooy Kan, Lageweg & Lenstra ("Minimizing total
costs in one-machine scheduling", Operations Research 23, 1975), which
extends Emmons' rules for tardiness (Operations Research 17, 1969).

For weighted tardiness ``f_j(t) = w_j max(0, t - d_j)``, ``g`` is piecewise
linear and falls only where ``j`` is late and ``i`` on time (``d_j < t <=
d_i``, slope ``-w_j``) or where both are late and ``w_i < w_j``. So besides
the pairs of :func:`bounds.hetero_dp.tardiness_precedences` (``w_i >= w_j``,
``d_i <= max(d_j, e_j)``), this rule keeps ``i`` before ``j`` when ``j`` is on
time wherever it could take ``i``'s place (``A_i <= d_j``), and in the
other cases where ``[e_j, A_i]`` misses both falling stretches; on instances
with few late jobs the known successors soon bring ``A_i`` below the due
dates, and each pair found narrows the windows for the next.

The rule holds for the schedule that comes first in the tie-break ``rank``
among the optimal ones (``i`` must come first in ``rank``: the interchange
then puts a job of lower rank at the earlier position), the same schedule
the grid's adjacency and three-job rules and the on-time tail keep; the
pairs found so far define ``e_j`` and ``A_i`` for the next sweep.
"""

from __future__ import annotations

import numpy as np

from bounds.hetero_dp import _closure, _job_arrays, _tail_pairs
from instances.options import known_options

__all__ = ["interchange_precedences"]


@known_options
def interchange_precedences(p, w, d, rank) -> np.ndarray:
    """Pairs ``i`` before ``j`` that the first optimal schedule in ``rank``
    order keeps, for weighted tardiness ``sum w_j max(0, C_j - d_j)``, as a
    transitively closed boolean matrix (module docstring).

    ``prec[i, j]`` when ``p_i <= p_j``, ``rank_i < rank_j`` and ``w_i
    max(0, t - d_i) - w_j max(0, t - d_j)`` is nondecreasing for ``t`` in
    ``[e_j, A_i]``, or when the on-time tail's pairs give it
    (:func:`bounds.hetero_dp.on_time_tail`, only where ``rank`` puts the tail
    last); repeated until no pair is added. A superset of
    :func:`bounds.hetero_dp.tardiness_precedences`.

    Parameters
    ----------
    p, w, d
        Integer processing times, weights ``>= 0`` and due dates (``inf``
        for none).
    rank
        Tie-break order (:func:`bounds.hetero_dp.tail_rank`).

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` booleans, ``[i, j]`` for ``i`` before ``j``.

    Examples
    --------
    >>> # job 1 is on time wherever it can take job 0's place (latest end 3 <= d_1), though w_0 < w_1
    >>> interchange_precedences([1, 2], [1, 5], [0, 3], [0, 1]).tolist()
    [[False, True], [False, False]]
    """
    p, w, d, rank = _job_arrays(p, w, d, rank)
    total = int(p.sum())
    base = (p[:, None] <= p[None, :]) & (rank[:, None] < rank[None, :])
    tail = _tail_pairs(p, w, d, rank)
    di, dj, wi, wj = d[:, None], d[None, :], w[:, None], w[None, :]
    pairs = np.zeros_like(base)
    while True:
        lo = (p + pairs.T.astype(np.int64) @ p)[None, :].astype(float)     # e_j
        hi = (total - pairs.astype(np.int64) @ p)[:, None].astype(float)   # A_i
        # g falls where j is late and i on time, (d_j, d_i], with slope -w_j ...
        late_j_only = (wj > 0) & (np.maximum(lo, dj) < np.minimum(hi, di))
        # ... and where both are late, with slope w_i - w_j
        both_late = (wi < wj) & (np.maximum(np.maximum(lo, di), dj) < hi)
        new = _closure(tail | (base & ~late_j_only & ~both_late))
        if (new == pairs).all():
            return pairs
        pairs = new
