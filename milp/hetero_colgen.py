"""Root of the column-generation exact method for heterogeneous GPUs: bound, restricted-master schedules.

The root node of a branch-and-price over the arc-time-indexed formulation
(Pessoa, Uchoa, Poggi de Aragão and Rodrigues, "Exact algorithm over an
arc-time-indexed formulation for parallel machine scheduling problems", 2010):

1. :func:`bounds.hetero_colgen.colgen_bound` from the incumbent (its LP
   bound, with reduced-cost fixing against the incumbent);
2. the *restricted master* as an integer program (HiGHS): its columns that are
   real GPU schedules (no task twice), each task exactly once, at most
   ``m_k`` columns per GPU class. Its optimum is a schedule; where it beats the
   incumbent, the column generation runs again from the better incumbent
   (tighter fixing), starting from the same columns; where it does not, a
   longer ILS walk (:func:`heuristics.hetero.ils`, another seed) is tried;

until the bound meets the incumbent (proven optimal), nothing improves, or
the budget ends. With ``tree=True`` the root stops after the first
converged column generation and its restricted master when the grid is
exact: :func:`milp.hetero_bnp.branch_and_price` continues from the
returned :class:`~bounds.hetero_colgen.ColgenBound` (its columns, prices
and grid), and its node roundings take the place of the ILS walks. Where
the tree does not apply, :func:`milp.hetero.solve` passes the bound and the
best schedule to CP-SAT for the rest of the time.

Examples
--------
>>> from instances import hetero
>>> from instances.options import Deadline
>>> from heuristics.hetero import greedy
>>> pb = hetero.generate(10, seed=3)
>>> sched, lb, info, last = root(pb, greedy(pb), Deadline(60))
>>> info["proved"], hetero.weighted_tardiness(pb, sched) - lb < 1e-6
(True, True)
"""

from __future__ import annotations

import time
from typing import Any

import highspy
import numpy as np

from bounds.hetero_colgen import ColgenBound, colgen_bound
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from instances import options as opt
from instances.options import Deadline, known_options

__all__ = ["restricted_master", "root", "applies"]

#: Share of the remaining budget one restricted-master integer program may use.
MIP_SHARE = 0.25
#: ILS walks tried when the restricted master finds nothing better, each with this share of the rest
#: (``ILS_SECONDS`` without a time limit).
ILS_TRIES = 2
ILS_SHARE = 0.25
ILS_SECONDS = 10.0
#: ... and at most this many kicks per task: a small problem's walk stops long before its share of the time
#: (a few tasks take tens of thousands of kicks a second; from about n = 20 on the share ends a walk first)
ILS_KICKS_PER_TASK = 5_000


@known_options
def applies(problem: HeteroProblem) -> bool:
    """Whether the column generation can bound ``problem`` (a grid of the data exists; always true for the
    generator's data): the exact method's default for several GPUs or arrival times."""
    from bounds.hetero_colgen import grid

    return problem.n > 0 and problem.eligible.any() and grid(problem, 1.0) is not None


@known_options
def restricted_master(problem: HeteroProblem, pool, time_limit: float | None) -> Schedule | None:
    """The best schedule made of the pool's columns (each task once, at most one column per GPU).

    ``pool`` as :attr:`bounds.hetero_colgen.ColgenBound.pool` gives it. The
    integer program picks columns by their model cost; the schedule returned
    is the semi-active one of the picked sequences on the user's data
    (checked), or ``None`` when no cover is found in time.
    """
    time_limit = opt.time_limit(time_limit)
    tasks = np.flatnonzero(problem.eligible.any(axis=1))
    row = {int(t): r for r, t in enumerate(tasks)}
    classes = sorted({gpus for gpus, _, _ in pool})
    crow = {gpus: len(tasks) + r for r, gpus in enumerate(classes)}
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(0.05, float(time_limit)))
    inf = highspy.kHighsInf
    nr = len(tasks) + len(classes)
    lo = np.concatenate([np.ones(len(tasks)), np.full(len(classes), -inf)])
    hi = np.concatenate([np.ones(len(tasks)), [float(len(gpus)) for gpus in classes]])
    h.addRows(nr, lo, hi, 0, np.zeros(nr, np.int32), np.zeros(0, np.int32), np.zeros(0))
    starts, idx, cost = [], [], []
    for gpus, seq, c in pool:
        starts.append(len(idx))
        idx.extend([row[i] for i in seq] + [crow[gpus]])
        cost.append(c)
    m = len(pool)
    h.addCols(m, np.asarray(cost, float), np.zeros(m), np.ones(m), len(idx), np.asarray(starts, np.int32),
              np.asarray(idx, np.int32), np.ones(len(idx)))
    h.changeColsIntegrality(m, np.arange(m, dtype=np.int32), np.full(m, highspy.HighsVarType.kInteger))
    h.run()
    if h.getInfo().primal_solution_status != 2:      # no feasible cover found
        return None
    x = np.asarray(h.getSolution().col_value)
    seqs: list[list[int]] = [[] for _ in problem.gpus]
    free = {gpus: list(gpus) for gpus in classes}
    for q in np.flatnonzero(x > 0.5):
        gpus, seq, _ = pool[q]
        seqs[free[gpus].pop()] = list(seq)
    sched = evaluate_sequences(problem, seqs)
    errs = check(problem, sched)
    if errs:
        raise RuntimeError(f"restricted master: schedule rejected by the checker: {errs[:3]}")
    return sched


@known_options
def root(problem: HeteroProblem, hint: Schedule, dl: Deadline, share: float = 1.0,
         log: bool = False, seed: int = 0, tree: bool = False
         ) -> tuple[Schedule, float, dict[str, Any], ColgenBound | None]:
    """Bound and improve ``hint`` at the root (see the module docstring) within ``share`` of ``dl``'s budget.

    Returns ``(best schedule, lower bound valid for the user's data, info, last column generation)``;
    ``info["proved"]``: the bound meets the schedule's cost. The schedule is
    ``hint`` where nothing better was found. ``tree``: stop early for a branch-and-price (module docstring).
    """
    seed = opt.seed(seed, allow_none=False)
    rem = dl.remaining()
    end = None if rem is None else dl.at - rem + share * rem
    best, best_obj = hint, weighted_tardiness(problem, hint)
    lb, pool, info, tries, last = 0.0, None, {"rounds": 0, "proved": False}, 0, None
    while True:
        left = None if end is None else end - time.perf_counter()
        if left is not None and left <= 0.05:
            break
        res = colgen_bound(problem, best, time_limit=left, pool=pool)
        if res is None:
            break
        last = res
        info["rounds"] += 1
        info.setdefault("first_bound", res.bound)
        info.update(res.info)
        lb = max(lb, res.bound)
        if log:
            print(f"colgen round {info['rounds']}: bound {res.bound:g}, incumbent {best_obj:g}, "
                  f"{res.info.get('passes')} passes")
        if res.proved or lb >= best_obj - 1e-9 * max(1.0, best_obj):
            info["proved"] = True
            break
        if not res.converged:
            break       # out of time before the LP converged: no restricted master helps much
        pool = res.pool
        left = None if end is None else end - time.perf_counter()
        sched = restricted_master(problem, pool, None if left is None else MIP_SHARE * left)
        if sched is None:
            break
        obj = weighted_tardiness(problem, sched)
        info["restricted_master"] = obj
        if obj < best_obj - 1e-9 * max(1.0, best_obj):
            best, best_obj = sched, obj
            if not (tree and res.grid.exact):
                continue
        if tree and res.grid.exact:
            break       # the branch-and-price goes on from these columns, with the better incumbent
        if tries >= ILS_TRIES:
            break
        # the columns hold no better schedule: a longer ILS walk from another seed, then bound again
        from heuristics.hetero import ils

        left = None if end is None else end - time.perf_counter()
        if left is not None and left <= 0:      # out of time (the ILS takes only a positive limit)
            break
        tries += 1
        sched = ils(problem, time_limit=ILS_SECONDS if left is None else ILS_SHARE * left,
                    max_iter=ILS_KICKS_PER_TASK * problem.n, seed=(seed + tries) % (opt.MAX_SEED + 1))
        obj = weighted_tardiness(problem, sched)
        info["ils"] = obj
        if obj < best_obj - 1e-9 * max(1.0, best_obj):
            best, best_obj = sched, obj
            continue
        break
    info["bound_value"] = lb
    info["bound"] = "column generation"
    return best, lb, info, last
