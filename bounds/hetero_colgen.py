"""Column-generation lower bound for weighted tardiness on heterogeneous GPUs with arrivals.

The LP relaxation of the arc-time-indexed formulation of Pessoa, Uchoa,
Poggi de Aragão and Rodrigues ("Exact algorithm over an arc-time-indexed
formulation for parallel machine scheduling problems", 2010, Sec. 2-3), in
its Dantzig-Wolfe form: a column is a *pseudo-schedule* of one GPU class (a
path of :mod:`bounds.hetero_pricing`: tasks start no earlier than their
arrival, eq. 5, only on GPUs they fit, eq. 3, with the class's run times
``p_ij = L_i / v_j``, no task twice in a row nor in a 2-cycle), and the master
LP (HiGHS) is

    min sum_c cost_c lambda_c
    s.t. sum_c a_ic lambda_c = 1      for every task i          (duals pi_i)
         sum_{c of class k} lambda_c <= m_k  for every class k  (duals sigma_k <= 0)

with GPUs of the same speed and memory aggregated into one class of ``m_k``
GPUs. Pricing finds, per class, the pseudo-schedule of least
``cost - sum pi``. The bound reported never relies on the LP having
converged: for any prices ``pi`` the Lagrangian value

    L(pi) = sum_i pi_i + sum_k m_k min(0, min_c (cost_c - sum_{i in c} pi_i))

bounds the optimum (relax "each task once": each GPU then picks its own
cheapest pseudo-schedule, and the GPU sequences of some optimal schedule are
pseudo-schedules), so the best ``L`` over the passes is returned (Farley's
bound: the LP value plus the classes' least reduced costs); at convergence
it equals the LP value. Prices are smoothed towards the best ``L`` found
(Wentges' stabilisation, with the automatic weight of Pessoa, Sadykov,
Uchoa and Vanderbeck 2018), falling back to the LP's own duals when the
smoothed point prices out no column. The first such point is ``pi = 0``
(``L(0) = 0``: no pseudo-schedule costs less than nothing).

Degeneracy (the bound alone, ``cover``): the first masters sit at the
incumbent's vertex, where every task row is tight, and their value can stay
at the incumbent's cost for many passes while columns enter. The task rows
are then covering rows (``sum_c a_ic lambda_c >= 1``, a relaxation: every
schedule covers each task; duals ``pi_i >= 0``) and start at ``1 - eps_i``
(``eps_i = eps u_i``, ``u_i`` drawn from ``U(0, 1)`` once, ``eps`` starting
at :data:`PERTURB`: a perturbation of the right-hand side), closer to ``1``
each time ``L`` comes within ``eps`` of the perturbed LP's value or the
perturbed LP converges: a lift halves ``eps``, down to
:data:`PERTURB_FLOOR`, and the next one puts the rows back at 1. Lifted
earlier, or at once, the master fell back to the incumbent's vertex for many
passes (the perturbed master's columns cover every task fully only together
with the incumbent's, within the classes' GPU counts); half lifted, it mixes
them in part. The master also starts with the incumbent's sequences one move
away (a task out, or a task of another GPU in). Only ``L`` (valid at any
prices) gives the bound; the restricted master's value feeds the convergence
test only when unperturbed, and the tentative fixing divided by ``1 - eps``
while perturbed (any tentative value is valid).

Heuristic pricing: a class with a long horizon is also priced on a coarse
view (steps of several grid steps, data rounded to the nearest step), whose
cheapest paths are re-timed on the class's own grid and join the master when
they price out at the LP's duals; the exact pricing (and so ``L``, the bound
and the convergence test) runs when the views find nothing, at least every
:data:`FINE_EVERY` passes (:data:`FINE_EVERY_ALONE` for the bound alone),
and in place of a heuristic pass after which no exact one would fit before
the deadline (the bound then comes from the last LP's prices;
``info["final_exact"]`` counts these). The master keeps at most
:data:`MAX_COLUMNS` columns (those with the largest reduced costs go).

Elementarity: once the LP converges on pseudo-schedules that repeat a task,
the exact pricing of every class turns to ng-routes (:mod:`bounds.hetero_ng`;
Baldacci, Mingozzi and Roberti 2011) whose neighbourhoods grow by the LP's
cycles (each repeated task joins the neighbourhoods of the tasks between
its two occurrences, the dynamic ng-routes of Roberti and Mingozzi 2014),
the columns the larger memories forbid leave the master, and the column
generation goes on until the LP's support repeats nothing or no
neighbourhood can grow. Every real schedule is an ng-route, so ``L`` stays
a valid bound; the heuristic views' columns enter only if they are
ng-routes. The neighbourhoods are returned in ``info["ng"]``.

Reduced-cost fixing: a completion ``(t, k)`` whose cheapest pseudo-schedule
(forward label plus a backward bound of the rest), with every other GPU at
its term of ``L``, costs more than ``theta`` is removed; every schedule of
cost ``<= theta`` survives, so the bound stays valid for them. ``theta`` is
the incumbent's cost less one cost unit on an exact grid (a bound above it
proves the incumbent optimal), the incumbent's user cost otherwise.

Tentative fixing: while the incumbent is poor, fixing against it removes
little. The restricted master's value ``z`` bounds the LP from above, and
fixing may use any ``theta``: the network then keeps every schedule of cost
``<= theta``, so ``min(L, theta)`` is a valid bound (below ``theta`` the
optimum is ``>= L``, and above it it is ``> theta``; the tentative upper
bound of Tanaka, Fujikuma and Araki's successive sublimation). ``theta``
follows the smallest ``z`` seen; at convergence ``L >= z >= LP`` or the
bound is ``theta >= LP``, never below the plain LP bound. When ``L`` passes
``theta`` the networks are restored and fixed against the incumbent again
(the ng phase can then lift the bound further).

The grids, the classes and the start columns are :mod:`bounds.hetero_classes`:
every real schedule maps to a path of the grids that costs no more, so the
model bound divided by the grids' cost unit is valid for the user's data.

Examples
--------
>>> from instances import hetero
>>> from milp import solve_optimal
>>> pb = hetero.generate(7, seed=4)
>>> res = colgen_bound(pb, time_limit=20)
>>> res.bound <= solve_optimal(pb, backend="cpsat", time_limit=20).objective + 1e-9
True
"""

from __future__ import annotations

import collections
import math
import sys
import time

from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from bounds import hetero_ng
from bounds.hetero_classes import (MAX_STEPS, Coarse, GpuClass, Grid, _eft, _incumbent_columns, _list_columns,
                                   _neighbour_columns, _user_cost, class_column_arrays, class_columns,
                                   grid)
from bounds.hetero_pricing import _fix_completions, backward, forward
from bounds.highs_lp import run_lp, silent_highs
from instances import options as opt
from instances.hetero import HeteroProblem, Schedule
from instances.options import known_options

__all__ = ["ColgenBound", "colgen_bound", "Grid", "grid", "GpuClass", "MAX_STEPS", "class_columns"]

#: Columns added per class and pass (the cheapest ending with each task).
COLUMNS_PER_CLASS = 12
#: Random list schedules whose GPU sequences start the master LP.
START_SCHEDULES = 200
#: Whether the bound alone's master also starts with the incumbent's sequences one move away (a task out, or
#: one in).
NEIGHBOURS = True
DEBUG = False
#: Weight of the best prices so far in the smoothed prices (Wentges).
SMOOTHING = 0.5
#: The exact pricing runs when the coarse views find nothing, and at least every ``FINE_EVERY`` passes
#: (``FINE_EVERY_ALONE`` for the bound alone, ``cover``: its ``L`` is the bound, so it gains from more
#: exact passes while the LP is far from converged).
FINE_EVERY = 8
FINE_EVERY_ALONE = 4
#: Guessed seconds per (completion time, task) pair of a class's first pricing pass (later passes are timed).
PASS_SECONDS = 3e-7
#: Simplex strategy of the master (HiGHS: 4, primal; columns are added to a primal feasible basis).
SIMPLEX = 4
#: Whether the exact pricing turns to ng-routes once the LP converges on repeating pseudo-schedules.
NG = True
#: Guessed slowdown of a first ng pricing pass against a plain one.
NG_SLOWER = 10
#: Whether reduced-cost fixing uses the restricted master's value as a tentative upper bound by default.
TENTATIVE = False
#: After the bound reaches a tentative value, the next one is this much higher (relative), at most
#: ``MAX_RESTORES`` times before the incumbent's.
RAISE = 0.02
MAX_RESTORES = 3
#: Whether an exact pass replaces the heuristic one where the next would leave no time for an exact pass.
FINAL_EXACT = True
#: Columns kept in the master LP: past this many, the half with the largest reduced costs is removed.
MAX_COLUMNS = 1_500
#: A network's table of admitted pairs (``bounds.hetero_pricing.admit_table``) is built only where this many
#: of its last pass's time remain before the deadline (the build takes two to three passes' time)
ADMIT_PASSES = 5
#: The task rows start at ``1 - U(0, PERTURB)`` (a perturbation of the right-hand side against the degenerate
#: first masters; halved when ``L`` comes within it of the perturbed LP's value or that LP converges).
#: A small one keeps the tentative value ``z / (1 - eps)`` the networks are fixed against meanwhile close to the
#: LP's value (a fraction of about ``eps / 2`` above it) and leaves few lifts before the rows are back at 1.
PERTURB = 0.02
#: Each lift halves the perturbation, down to this much; the next lift removes it.
PERTURB_FLOOR = 0.01
#: Seconds a process's first compiled call may take (numba loads its implementations then, once per process:
#: about 0.25 s on a quiet machine, 0.6 s under load); with less time left a cold process starts no pass.
COLD_START = 0.6


@dataclass
class ColgenBound:
    """Outcome of :func:`colgen_bound`.

    ``bound`` (user units) is valid for the user's data whatever the budget;
    ``upper`` is the incumbent's cost; ``proved``: the bound meets it on an
    exact grid; ``converged``: the LP was solved (``lp`` its value, user
    units); ``prices`` the task prices of the best bound (problem order of
    ``grid.tasks``); ``pool`` the columns that are real GPU sequences
    ``(gpus, problem tasks in order, model cost)``, including those the
    master dropped; ``support`` the last master LP's solution,
    ``(gpus, problem tasks in order, user completion times, lambda)`` per
    column of positive ``lambda`` (pseudo-schedules included: a start for
    rounding heuristics); ``info["trace"]``: ``(seconds, exact passes,
    bound)`` at each better bound.
    """

    bound: float
    upper: float
    proved: bool = False
    converged: bool = False
    lp: float | None = None
    prices: np.ndarray | None = None
    grid: Grid | None = None
    pool: list[tuple[tuple[int, ...], tuple[int, ...], float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    support: list[tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...], float]] = field(default_factory=list)


class _Master:
    """The restricted master LP in HiGHS (rows: tasks, then classes); the first columns (the incumbent's)
    are never dropped, so it stays feasible."""

    def __init__(self, n: int, classes: list[GpuClass], cover: bool = False):
        self.n, self.K, self.cover, self.classes = n, len(classes), cover, classes
        h = silent_highs()
        h.setOptionValue("presolve", "off")     # re-solved from the last basis after each added batch
        h.setOptionValue("simplex_strategy", SIMPLEX)
        inf = highspy.kHighsInf
        lo = np.concatenate([np.ones(n), np.full(self.K, -inf)])
        hi = np.concatenate([np.full(n, inf) if cover else np.ones(n), [float(c.m) for c in classes]])
        h.addRows(n + self.K, lo, hi, 0, np.zeros(n + self.K, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h = h
        self.cols: list[tuple[GpuClass, np.ndarray, np.ndarray]] = []   # class, local tasks, completions
        self.keep = 0
        self.cost: list[float] = []
        self.archive: list = []     # removed columns that are real GPU schedules (for the pool)
        self.failures: list[str] = []   # HiGHS statuses of LPs that failed twice
        self.perturbed = False
        self.eps = 0.0
        self.shape = np.zeros(n)

    def perturb(self, eps: float, seed: int = 0) -> None:
        """Lower the task rows to ``1 - U(0, eps)`` (the incumbent's vertex is no longer degenerate)."""
        if eps > 0:
            self.shape = np.random.default_rng(seed).uniform(0.0, 1.0, self.n)
            self._rows(eps)

    def _rows(self, eps: float) -> None:
        hi = np.full(self.n, highspy.kHighsInf) if self.cover else np.ones(self.n)
        self.h.changeRowsBounds(self.n, np.arange(self.n, dtype=np.int32), 1.0 - eps * self.shape, hi)
        self.eps, self.perturbed = eps, eps > 0

    def unperturb(self, floor: float = 0.0) -> None:
        """Task rows closer to ``>= 1``: the perturbation halved, or lifted once it would fall below
        ``floor``."""
        if self.perturbed:
            self._rows(self.eps / 2 if self.eps / 2 >= floor > 0 else 0.0)

    def add(self, cols: list[tuple[GpuClass, list[tuple[int, int]], float]]) -> None:
        """Add columns ``(class, seq, cost)``, ``seq`` a list ``[(local task, completion), ...]`` or a pair of
        arrays ``(local tasks, completions)``."""
        m = len(cols)
        if not m:
            return
        # one sort for the whole batch: key (column, row), row a task (counted: a pseudo-schedule may repeat
        # it) or the column's class row
        stride = self.n + self.K
        keys, costs = [], []
        for q, (c, seq, cost) in enumerate(cols):
            if isinstance(seq, tuple):
                ks, ts = np.array(seq[0], np.int64), np.array(seq[1], np.int64)
            else:
                ks = np.array([k for k, _ in seq], dtype=np.int64)
                ts = np.array([t for _, t in seq], dtype=np.int64)
            self.cols.append((c, ks, ts))
            keys.append(q * stride + c.tasks[ks])
            keys.append(np.array([q * stride + self.n + c.row], np.int64))
            costs.append(cost)
        self.cost.extend(costs)
        key, count = np.unique(np.concatenate(keys), return_counts=True)
        starts = np.searchsorted(key, np.arange(m, dtype=np.int64) * stride)
        self.h.addCols(m, np.asarray(costs, float), np.zeros(m), np.full(m, highspy.kHighsInf), len(key),
                       starts.astype(np.int32), (key % stride).astype(np.int32), count.astype(float))

    def drop_dead(self) -> int:
        """Remove the columns through a completion that fixing removed; how many."""
        # all columns' completions in one array: no Python loop per column (a master holds up to 1,500)
        cols = self.cols[self.keep:]
        if not cols:
            return 0
        lens = np.array([len(x[1]) for x in cols], np.int64)
        ks = np.concatenate([x[1] for x in cols])
        ts = np.concatenate([x[2] for x in cols])
        row = np.repeat(np.array([x[0].row for x in cols], np.int64), lens)
        bad = np.zeros(len(ks), bool)
        for c in self.classes:
            sel = np.flatnonzero(row == c.row)
            bad[sel] = ~c.allowed(ks[sel], ts[sel])
        # a column is dead where any of its completions is (an empty column never)
        ends = np.cumsum(lens)
        seen = np.concatenate([[0], np.cumsum(bad)])
        dead = (np.flatnonzero(seen[ends] > seen[ends - lens]) + self.keep).tolist()
        self._delete(dead)
        return len(dead)

    def clean(self, limit: int) -> int:
        """Past ``limit`` columns, remove the half with the largest reduced costs at the last solution
        (never a basic one nor the incumbent's); how many."""
        if len(self.cols) - self.keep <= limit:
            return 0
        rc = np.asarray(self.h.getSolution().col_dual, dtype=float)[self.keep:]
        order = np.argsort(-rc, kind="stable")
        out = order[rc[order] > 1e-9][:len(rc) - limit // 2] + self.keep
        self._delete(out.tolist())
        return len(out)

    def _delete(self, qs: list[int]) -> None:
        if not qs:
            return
        self.h.deleteCols(len(qs), np.asarray(sorted(qs), np.int32))
        gone = set(qs)
        for q in qs:
            c, ks, ts = self.cols[q]
            if len(set(ks.tolist())) == len(ks):
                self.archive.append((c, ks, ts, self.cost[q]))
        self.cols = [x for q, x in enumerate(self.cols) if q not in gone]
        self.cost = [x for q, x in enumerate(self.cost) if q not in gone]

    def solve(self, deadline: float | None = None) -> tuple[float | None, np.ndarray, np.ndarray]:
        """The LP's value and duals (``None``, ...: out of time, or HiGHS failed twice)."""
        if deadline is not None:
            # HiGHS's time limit counts from the model's creation
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(1e-3, deadline - time.perf_counter()))
        status = run_lp(self.h)
        if status == highspy.HighsModelStatus.kTimeLimit:
            return None, np.zeros(0), np.zeros(0)
        if status != highspy.HighsModelStatus.kOptimal:
            # the search stops as at its deadline: its bound is the best Lagrangian value, valid without the LP
            self.failures.append(str(status))
            return None, np.zeros(0), np.zeros(0)
        dual = np.asarray(self.h.getSolution().row_dual, dtype=float)
        return float(self.h.getInfo().objective_function_value), dual[:self.n], dual[self.n:]



@known_options
def colgen_bound(problem: HeteroProblem, upper: Schedule | None = None, *, time_limit: float | None = 10.0,
                 deadline: float | None = None, max_steps: int = MAX_STEPS, max_iter: int = 10_000,
                 per_class: int = COLUMNS_PER_CLASS, smoothing: float = SMOOTHING,
                 pool: list | None = None, coarse: bool = True, ng: bool | None = None,
                 tentative: bool | None = None, cover: bool | None = None) -> ColgenBound | None:
    """Column-generation bound of the heterogeneous problem (see the module docstring).

    Parameters
    ----------
    problem
        Any problem (one GPU or several, with or without arrivals).
    upper
        A good schedule (e.g. the ILS's): its cost caps the completions, its
        GPUs' sequences are the first columns. Without one, an EFT list
        schedule in due-date order is used.
    time_limit, deadline, max_iter
        Budget (seconds from now, or an absolute ``time.perf_counter()``
        deadline; pricing passes). A process's first compiled call loads
        numba's implementations and cannot be cut short: a process that has
        made none starts no pass with less than :data:`COLD_START` seconds
        left (the bound is then 0, ``info["cold_start"]``).
    max_steps
        Largest grid horizon per class.
    per_class, smoothing
        Columns added per class and pass; starting weight of the best prices
        in the smoothed prices (0: plain column generation).
    pool
        Columns to start the master with, as :attr:`ColgenBound.pool` gives
        them (problem task indices; re-timed here, their costs recomputed).
    coarse
        Heuristic pricing on coarse views of the long classes (module
        docstring); ``False``: every pass prices exactly.
    ng
        Once the LP converges on pseudo-schedules that repeat a task, price
        ng-routes (:mod:`bounds.hetero_ng`) whose neighbourhoods grow by the
        LP's cycles (module docstring); ``False``: 2-cycle elimination only;
        ``None``: :data:`NG`.
    tentative
        Fix the networks against the restricted master's value while it is
        below the incumbent's cost (module docstring); ``None``:
        :data:`TENTATIVE` (off: the exact method's root and tree keep the
        networks of the incumbent; :func:`bounds.hetero.lower_bound` turns
        it on).
    cover
        Covering task rows (``>= 1``), their right-hand sides perturbed
        while the master sits at the incumbent's vertex (module docstring);
        ``False``: ``= 1`` (``support`` then covers every task once, as the
        exact method's tree rounds it); ``None``: as ``tentative`` (the
        bound alone).

    Returns
    -------
    ColgenBound or None
        ``None`` when the data do not fit a grid of ``max_steps`` steps
        (a run time would round to 0).
    """
    time_limit = opt.time_limit(time_limit)
    opt.integer(max_iter, "max_iter", lo=0)
    opt.integer(max_steps, "max_steps", lo=1, hi=10 ** 7)
    opt.integer(per_class, "per_class", lo=1)
    opt.number(smoothing, "smoothing", lo=0.0, hi=0.99)
    coarse = opt.flag(coarse, "coarse")
    ng = NG if ng is None else opt.flag(ng, "ng")
    tentative = TENTATIVE if tentative is None else opt.flag(tentative, "tentative")
    cover = tentative if cover is None else opt.flag(cover, "cover")
    t0 = time.perf_counter()
    if deadline is None and time_limit is not None:
        deadline = t0 + time_limit
    if problem.n == 0 or not problem.eligible.any():
        return ColgenBound(0.0, 0.0, proved=True, converged=True, lp=0.0, info={"empty": True})
    if upper is None:
        upper = _eft(problem)
    ub_user = _user_cost(problem, upper)
    if ub_user <= 0:
        return ColgenBound(0.0, 0.0, proved=True, info={"zero": True})
    g = grid(problem, ub_user, max_steps)
    if g is None:
        return None
    if deadline is not None and _cold() and deadline - time.perf_counter() < COLD_START:
        # the first compiled call cannot be cut short: it would end past the deadline
        return ColgenBound(0.0, ub_user, grid=g, info={"cold_start": True, "passes": 0})
    return _run(problem, g, upper, ub_user, deadline, max_iter, per_class, smoothing, list(pool or []),
                coarse, t0, ng, tentative, cover)


def _cold() -> bool:
    """Whether this process has yet to make its first compiled call (numba imports its implementation modules,
    ``numba.np.arraymath`` among them, at the first call of any compiled function)."""
    return "numba.np.arraymath" not in sys.modules


def _run(problem: HeteroProblem, g: Grid, upper: Schedule, ub_user: float, deadline: float | None,
         max_iter: int, per_class: int, smoothing: float, pool: list, coarse: bool, t0: float,
         ng: bool = False, tentative: bool = False, cover: bool = False) -> ColgenBound:
    """The column generation on the grids ``g``, from the incumbent and ``pool``'s columns."""
    n = len(g.tasks)
    groups: dict[tuple, list[int]] = {}
    for j, gpu in enumerate(problem.gpus):
        if g.eligible[:, j].any():
            groups.setdefault((gpu.speed, gpu.memory), []).append(j)
    classes = [GpuClass(g, gpus, r) for r, gpus in enumerate(groups.values())]
    inc_cols, ub = _incumbent_columns(problem, g, upper, classes)
    target = math.ceil(ub - 1e-6 * max(1.0, ub))   # model costs are integers: a bound above ub - 1 proves ub
    # fixing keeps every schedule of model cost <= theta: on an exact grid those better than the incumbent,
    # otherwise every schedule no worse than it in user units (its grid image costs no more)
    theta = ub - 1 if g.exact else math.floor(ub_user * g.scale * (1 + 1e-12))
    master = _Master(n, classes, cover)
    master.add(inc_cols)
    master.keep = len(inc_cols)
    if cover:
        master.perturb(PERTURB)
    # the start columns get a fifth of the time left
    master.add(_list_columns(problem, g, classes, START_SCHEDULES,
                             None if deadline is None else t0 + 0.2 * (deadline - t0)))
    if NEIGHBOURS and cover:
        master.add(_neighbour_columns(classes, inc_cols, None if deadline is None else t0 + 0.2 * (deadline - t0)))
    if pool:
        by_gpus = {tuple(c.gpus): c for c in classes}
        # problem task -> the class's local index
        local = {id(c): {int(g.tasks[i]): k for k, i in enumerate(c.tasks)} for c in classes}
        start, seen = [], set()
        for gpus, seq, _ in pool:
            c = by_gpus.get(tuple(gpus))
            if c is not None and (c.row, tuple(seq)) not in seen and all(int(i) in local[id(c)] for i in seq):
                seen.add((c.row, tuple(seq)))
                ks = [local[id(c)][int(i)] for i in seq]
                ts, cost = c.retime(ks)
                start.append((c, list(zip(ks, ts.tolist())), cost))
        master.add(start)

    def price(pi: np.ndarray, plain: bool = False):
        """``L(pi)`` and the classes' labels (``-inf``: out of time); ``plain``: 2-cycle pricing even where
        ng neighbourhoods are set (a weaker relaxation, a valid ``L`` too)."""
        total, labs = float(pi.sum()), []
        for c in classes:
            # a pass that would end past the deadline is not started (horizons only shrink, but where the
            # networks are restored: the last pass's time, scaled there, bounds the next one's)
            t1 = time.perf_counter()
            guess = PASS_SECONDS * c.alive.size * (1 if c.N is None or plain else NG_SLOWER)
            if deadline is not None and t1 + c.work.get("seconds", guess) >= deadline:
                return -math.inf, labs
            # the pricing's table of admitted pairs (built once, in a few passes' time) only where it fits
            c.work["admit_build"] = deadline is None or t1 + ADMIT_PASSES * c.work.get("seconds", guess) < deadline
            c.work["admit_seconds"] = 0.0
            if plain:
                lab = forward(c.P, c.A, c.alive, c.W, c.D, pi[c.tasks], c.work)
            else:
                lab = c.forward(c.alive, pi[c.tasks])
                c.work["seconds"] = time.perf_counter() - t1 - c.work["admit_seconds"]
            total += c.m * lab.value
            labs.append(lab)
        return total, labs

    def fix(pi: np.ndarray, L: float, labs, theta: float) -> int:
        """Reduced-cost fixing: remove the completions no schedule of cost <= theta uses; how many."""
        removed = 0
        for c, lab in zip(classes, labs):
            b = backward(c.P, c.A, c.alive, c.W, c.D, pi[c.tasks])
            # the other GPUs take at least their cheapest pseudo-schedules; a task alone costs at most theta
            with np.errstate(divide="ignore", invalid="ignore"):
                last = np.where(c.W > 0, c.D + np.floor(theta / c.W + 1e-9), np.inf)
            out, top = _fix_completions(c.alive, lab.df1, b, L - lab.value, theta + 1e-6 * max(1.0, abs(theta)),
                                       last)
            removed += out
            c.H = max(1, min(c.H, top))
            c.alive = np.ascontiguousarray(c.alive[:c.H + 1])
        return removed

    def pass_columns(cs, pi, pi_lp, sigma):
        """Columns of the labels of ``cs`` (classes or coarse views) at ``pi`` that price out at the LP's
        duals (a view's re-timed on its class's grid), and the subgradient of ``L`` at ``pi``."""
        new, grad = [], np.ones(n)
        for c, lab in cs:
            view = isinstance(c, Coarse)
            cc = c.cls if view else c
            ks, ts, lens, costs = class_column_arrays(lab, c, per_class)
            if not len(lens):
                continue
            starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
            tasks = cc.tasks[ks]
            np.subtract.at(grad, tasks[:lens[0]], cc.m)    # L's subgradient at pi: the cheapest column
            if view:
                ts, costs = cc.retime_all(ks, lens)
                counts[0] += len(lens)
            # keep what prices out at the LP's own duals (a view's path only through allowed completions)
            keep = costs - np.add.reduceat(pi_lp[tasks], starts) - sigma[cc.row] < -1e-6 * np.maximum(1.0, abs(costs))
            if view:
                keep &= np.logical_and.reduceat(cc.allowed(ks, ts), starts)
            for q in np.flatnonzero(keep).tolist():
                seq = (ks[starts[q]:starts[q] + lens[q]], ts[starts[q]:starts[q] + lens[q]])
                if view and cc.N is not None and not hetero_ng.feasible(cc.N, seq[0].tolist()):
                    continue
                counts[1] += view
                new.append((cc, seq, float(costs[q])))
        return new, grad

    counts = [0, 0]     # coarse-view paths re-timed, and kept

    def grow() -> bool:
        """Dynamic ng-routes: the cycles of the LP's columns join the neighbourhoods, the columns they cut off
        leave the master; whether any neighbourhood grew."""
        x = np.asarray(master.h.getSolution().col_value, dtype=float)
        if not any(v > 1e-9 and len(set(ks.tolist())) < len(ks) for (_, ks, _), v in zip(master.cols, x)):
            return False
        for c in classes:
            if c.N is None:
                c.N = hetero_ng.neighbourhoods(c.D, 1)
                c.work["seconds"] = c.work.get("seconds", 0.0) * NG_SLOWER   # the next pass's guess
        added = 0
        for (c, ks, _), v in zip(master.cols, x):
            if v > 1e-9 and len(set(ks.tolist())) < len(ks):
                added += hetero_ng.grow(c.N, ks.tolist())
        if added:
            growth[0] += added
            master._delete([q for q, (c, ks, _) in enumerate(master.cols[master.keep:], master.keep)
                            if not hetero_ng.feasible(c.N, ks.tolist())])
        return added > 0

    growth = [0]
    alive0 = [(c.alive.copy(), c.H) for c in classes]

    def cap(theta: float) -> float:
        """The bound that ``L > theta`` gives where every schedule of cost ``<= theta`` kept its completions."""
        return float(math.floor(theta) + 1) if g.exact else theta

    # at zero prices no pseudo-schedule costs less than nothing: L(0) = 0 is the best point known at the start
    # (the incumbent's complementary-slackness prices let every GPU repeat its dearest tasks, L far below 0)
    best, center = 0.0, np.zeros(n)
    # bound: the best valid value, min(L, cap(theta_net)), theta_net the cost up to which the network keeps
    # every schedule; a tentative theta_net below the incumbent is the restricted master's value (module doc)
    bound, theta_net, goal, restores = 0.0, theta, theta, 0
    alpha = smoothing
    lp, converged, passes, mispriced, fixed, dropped = None, False, 0, 0, 0, 0
    last_fix, trace, since_fine, heuristic, forced = None, [], 0, 0, 0
    # the heuristic passes price the short classes exactly, the long ones on coarse views
    views = [Coarse(c, k) if (k := c.coarse_factor()) > 1 else c for c in classes] if coarse else []
    if not any(isinstance(v, Coarse) for v in views):
        views = []
    last_solution = (np.zeros(0), [])      # the last master LP's lambda and its columns
    fine_every = FINE_EVERY_ALONE if cover else FINE_EVERY
    step = 0.0      # the last pass's time outside the exact pricing (whose passes are timed apart)
    recent = collections.deque(maxlen=8)
    while passes < max_iter and bound < target - 1e-6 * max(1.0, abs(target)):
        t1 = time.perf_counter()
        if deadline is not None and t1 + step >= deadline:
            break
        lp, pi_lp, sigma = master.solve(deadline)
        if lp is None:
            break
        last_solution = (np.asarray(master.h.getSolution().col_value, dtype=float), list(master.cols))
        if tentative:
            # any tentative value keeps min(L, theta) valid; the perturbed LP's, scaled to rows of 1 at least
            # (of the lowest right-hand side 1 - eps), lets fixing start while the master is perturbed
            goal = min(goal, lp / (1 - master.eps) if master.perturbed else lp)
        pi_price = alpha * center + (1 - alpha) * pi_lp
        new = []
        # L comes from exact passes only: near the deadline one is due now when another heuristic pass would
        # leave no time for it (the LP has moved since the last one)
        # (predicted from the slowest of the last few passes and twice the exact pass's last time: on a busy
        # machine one pass can take twice the one before, and a miss leaves the heuristic pass last)
        last_call = deadline is not None and FINAL_EXACT and t1 + 2 * max(recent, default=step) + 2 * sum(
            c.work.get("seconds", PASS_SECONDS * c.alive.size) for c in classes) >= deadline
        forced += bool(views) and since_fine < fine_every and last_call
        if views and since_fine < fine_every and not last_call:
            since_fine += 1
            heuristic += 1
            for v in views:
                v.work["admit_build"] = deadline is None or t1 + ADMIT_PASSES * step < deadline
            labs = [(v, forward(v.P, v.A, v.alive, v.W, v.D, pi_price[getattr(v, "cls", v).tasks], v.work))
                    for v in views]
            new, grad = pass_columns(labs, pi_price, pi_lp, sigma)
        step = time.perf_counter() - t1
        if not new:
            since_fine = 0
            while True:
                passes += 1
                total, labs = price(pi_price)
                new, grad = pass_columns(list(zip(classes, labs)), pi_price, pi_lp, sigma)
                if DEBUG:
                    print(f"exact {passes} {time.perf_counter() - t0:.2f}s heur={heuristic} z={lp:.0f} L={total:.0f} "
                          f"alpha={alpha:.2f} theta={theta_net:.0f} new={len(new)}")
                if total > best:
                    best, center = total, pi_price.copy()
                if new and master.perturbed and total >= (1 - master.eps) * lp:
                    # L within the perturbation of the perturbed LP: the rows closer to 1 (the next solve)
                    master.unperturb(PERTURB_FLOOR)
                if min(total, cap(theta_net)) > bound:
                    bound = min(total, cap(theta_net))
                    trace.append((round(time.perf_counter() - t0, 2), passes, bound / g.scale))
                restored = total > -math.inf and theta_net < theta and (
                    total >= theta_net - 1e-4 * max(1.0, abs(theta_net)))
                if restored:
                    # no schedule of cost <= theta_net (up to the pricing's tolerance at convergence): the bound
                    # is min(L, cap(theta_net)); the whole network again, fixed against a higher tentative
                    # value at the best prices (plain labels: valid for ng-routes too), at last the incumbent's
                    restores += 1
                    tentative = False
                    goal = theta if restores >= MAX_RESTORES else min(
                        theta, theta_net + RAISE * max(1.0, abs(theta_net)))
                    for c, (a0, h0) in zip(classes, alive0):
                        # the next passes are longer again: their time guessed from the last one, by size
                        c.work["seconds"] = c.work.get("seconds", 0.0) * a0.size / max(1, c.alive.size)
                        c.alive, c.H = a0.copy(), h0
                    at, at_labs = price(center, plain=True)
                    theta_net, last_fix = goal, None
                    if at > -math.inf:
                        last_fix = at
                        fixed += fix(center, at, at_labs, theta_net)
                    dropped += master.drop_dead()
                    for v in views:
                        if isinstance(v, Coarse):
                            v.update()
                # fix again whenever L closed another 5 % of the gap to theta or theta came down by as much
                elif total > -math.inf and (last_fix is None or total - last_fix > 0.05 * (goal - last_fix)
                                            or theta_net - goal > 0.05 * (theta_net - last_fix)) and (
                        deadline is None
                        or time.perf_counter() + 2 * sum(c.work["seconds"] for c in classes) < deadline):
                    last_fix, theta_net = total, goal
                    fixed += fix(pi_price, total, labs, theta_net)
                    dropped += master.drop_dead()
                    for v in views:
                        if isinstance(v, Coarse):
                            v.update()
                    if DEBUG:
                        print(f"fix {time.perf_counter() - t0:.2f}s L={total:.0f}: {fixed} removed, "
                              f"horizons {[c.H for c in classes]}")
                if new or alpha == 0 or total == -math.inf or restored:
                    break
                mispriced += 1
                alpha = 0.0         # the smoothed prices priced out nothing: try the LP's own
                pi_price = pi_lp
            if not new and restored:
                continue
            if not new and ng and total > -math.inf and time.perf_counter() < (deadline or math.inf) and grow():
                continue
            if not new and master.perturbed:
                master.unperturb(PERTURB_FLOOR)
                continue
            if not new:
                converged = total > -math.inf
                break
        if smoothing > 0:
            # automatic smoothing (Pessoa, Sadykov, Uchoa and Vanderbeck 2018): the LP's prices lie uphill
            # of the smoothed ones (subgradient) -> trust them more, else less
            if float(grad @ (pi_lp - center)) > 0:
                alpha = max(0.0, alpha - 0.1)
            else:
                alpha = min(0.99, alpha + 0.1 * (1 - alpha))
        t2 = time.perf_counter()
        master.add(new)
        master.clean(MAX_COLUMNS)
        step += time.perf_counter() - t2
        recent.append(step)
    model = max(0.0, float(math.ceil(bound - 1e-6 * max(1.0, abs(bound)))))
    model = min(model, ub if g.exact else theta)
    proved = g.exact and model >= ub
    real = [(tuple(c.gpus), tuple(g.tasks[c.tasks[ks]].tolist()), float(cost))
            for (c, ks, _), cost in zip(master.cols, master.cost) if 0 < len(ks) == len(set(ks.tolist()))]
    real += [(tuple(c.gpus), tuple(g.tasks[c.tasks[ks]].tolist()), float(cost))
             for c, ks, _, cost in master.archive if len(ks)]
    support = []
    lam, cols = last_solution
    for q in np.flatnonzero(lam > 1e-9):
        c, ks, ts = cols[q]
        if len(ks):
            support.append((tuple(c.gpus), tuple(g.tasks[c.tasks[ks]].tolist()),
                            tuple((ts / g.Rj[c.gpus[0]]).tolist()), float(lam[q])))
    return ColgenBound(model / g.scale, ub_user, proved=proved, converged=converged, support=support,
                       lp=None if not converged or lp is None else lp / g.scale, prices=center, grid=g, pool=real,
                       info={"passes": passes, "columns": len(master.cols), "classes": len(classes),
                             "lp_failures": master.failures,
                             "grid": (1.0 / g.Rj).tolist(), "exact_grid": g.exact, "mispriced": mispriced,
                             "fixed": fixed, "dropped_columns": dropped, "model_upper": ub,
                             "horizons": [c.H for c in classes], "trace": trace, "heuristic_passes": heuristic,
                             "final_exact": forced,
                             "view_paths": counts[0], "view_columns": counts[1], "ng_growth": growth[0],
                             "theta": theta_net / g.scale, "restores": restores,
                             "ng": {tuple(c.gpus): c.N.copy() for c in classes if c.N is not None},
                             "seconds": time.perf_counter() - t0})

