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

Heuristic pricing: a class with a long horizon is also priced on a coarse
view (steps of several grid steps, data rounded to the nearest step), whose
cheapest paths are re-timed on the class's own grid and join the master when
they price out at the LP's duals; the exact pricing (and so ``L``, the bound
and the convergence test) runs when the views find nothing, and at least
every :data:`FINE_EVERY` passes. The master keeps at most
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

Validity for the user's data: each GPU's times go on an integer grid (the
coarsest divisor of 10^6 that holds its run times, arrivals and due dates
exactly, as the generator's are held), otherwise on one grid where run times
and arrivals are rounded down, due dates up; weights go on a grid of
``1/Rw`` rounded down. Every real schedule then
maps to a path (start times rounded down) that costs no more, so the model
bound divided by ``R Rw`` is valid. A schedule no worse than the incumbent
(cost ``ub``) completes each task ``i`` by ``d_i + ub / w_i``: later
completions are left out of the network (they cannot occur in an optimum).

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

import math
import time
from dataclasses import dataclass, field
from typing import Any

import highspy
import numba
import numpy as np

from bounds import hetero_ng
from bounds.hetero_pricing import backward, columns, forward
from bounds.highs_lp import run_lp, silent_highs
from instances import options as opt
from instances.hetero import HeteroProblem, Schedule
from instances.options import known_options

__all__ = ["ColgenBound", "colgen_bound", "Grid", "grid", "GpuClass", "MAX_STEPS", "class_columns"]

#: Largest number of grid steps of a class's horizon.
MAX_STEPS = 20_000
#: Largest number of labels (grid steps x tasks) of a class: its arrays take about 56 bytes per label.
MAX_LABELS = 3_000_000
#: Columns added per class and pass (the cheapest ending with each task).
COLUMNS_PER_CLASS = 12
#: Random list schedules whose GPU sequences start the master LP.
START_SCHEDULES = 200
LIST_CHUNK = 25
DEBUG = False
#: Weight of the best prices so far in the smoothed prices (Wentges).
SMOOTHING = 0.5
#: Heuristic pricing on coarse views of the classes whose horizon has at least ``COARSE_MIN_STEPS`` steps,
#: a median run time of about ``COARSE_RUN_STEPS`` coarse steps; the exact pricing runs when it finds
#: nothing, and at least every ``FINE_EVERY`` passes.
COARSE_MIN_STEPS = 1_000
COARSE_RUN_STEPS = 6
FINE_EVERY = 8
#: Guessed seconds per (completion time, task) pair of a class's first pricing pass (later passes are timed).
PASS_SECONDS = 3e-7
#: Simplex strategy of the master (HiGHS: 4, primal; columns are added to a primal feasible basis).
SIMPLEX = 4
#: Whether the exact pricing turns to ng-routes once the LP converges on repeating pseudo-schedules.
NG = True
#: Guessed slowdown of a first ng pricing pass against a plain one.
NG_SLOWER = 10
#: Columns kept in the master LP: past this many, the half with the largest reduced costs is removed.
MAX_COLUMNS = 1_500


@dataclass(frozen=True)
class Grid:
    """The problem on integer grids, one per GPU (see the module docstring).

    ``tasks``: problem indices of the schedulable tasks (model task ``i`` is
    ``tasks[i]``). GPU ``j`` has its own grid of ``1/Rj[j]`` time units (a
    T4 with integer data needs no finer grid than 1, an A100 running the same
    tasks 5 times faster needs 1/5): ``P[i, j]``, ``A[i, j]``, ``D[i, j]`` are
    run times, arrivals and due dates on it, ``Lst[i, j]`` the latest
    completion of interest. ``W`` are the weights on a grid of ``1/Rw``;
    costs on GPU ``j`` are counted in units of ``1/(R Rw)`` (``R`` a common
    multiple of the ``Rj``), so ``Wj[i, j] = W[i] R / Rj[j]``. ``exact``: the
    grids hold the data exactly (model cost = user cost x ``R Rw``).
    """

    tasks: np.ndarray
    P: np.ndarray
    A: np.ndarray
    D: np.ndarray
    Lst: np.ndarray
    W: np.ndarray
    Wj: np.ndarray
    eligible: np.ndarray
    Rj: np.ndarray
    R: float
    Rw: float
    exact: bool

    @property
    def scale(self) -> float:
        return self.R * self.Rw

    def cost(self, i: int, j: int, end: float) -> float:
        """Model cost of task ``i`` completing at ``end`` (user time) on GPU ``j`` (completion rounded down)."""
        C = int(math.floor(end * self.Rj[j] + 1e-9))
        return float(self.Wj[i, j] * max(0, C - self.D[i, j]))


def _power_of_ten(values: np.ndarray, top: int = 6) -> int | None:
    for k in range(top + 1):
        scaled = values * 10 ** k
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 10 ** k
    return None


#: Candidate exact grid scales: the divisors of 10^6 (every decimal grid's), coarsest first.
_SCALES = sorted(2 ** i * 5 ** k for i in range(7) for k in range(7))


def _exact_scale(values: np.ndarray, limit: float) -> int | None:
    """Smallest divisor ``R`` of 10^6 that makes every value an integer, if ``R <= limit``."""
    for R in _SCALES:
        if R > limit:
            return None
        scaled = values * R
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return R
    return None


@known_options
def grid(problem: HeteroProblem, ub: float, max_steps: int = MAX_STEPS) -> Grid | None:
    """The grids of the problem's schedulable tasks, or ``None`` when some run time would round to 0 steps.

    ``ub``: the cost of a known schedule (user units), which caps the completions. The horizon is also
    capped so that a class's labels stay within :data:`MAX_LABELS` (a coarser, rounded grid beyond).
    """
    tasks = np.flatnonzero(problem.eligible.any(axis=1))
    max_steps = max(1, min(max_steps, MAX_LABELS // (len(tasks) + 1)))
    p, a = problem.p[tasks], problem.arrival[tasks]
    d, w, elig = problem.deadline[tasks], problem.weight[tasks], problem.eligible[tasks]
    m = problem.m
    # the latest completion of a semi-active schedule on each GPU, and the incumbent's cap
    last = np.array([a[elig[:, j]].max() + p[elig[:, j], j].sum() if elig[:, j].any() else 0.0 for j in range(m)])
    with np.errstate(divide="ignore"):
        cap = np.where(w > 0, d + ub / np.where(w > 0, w, 1.0), np.inf)
    lst = np.minimum(cap[:, None], last[None, :])               # user time, per task and GPU
    horizon = np.array([lst[elig[:, j], j].max() if elig[:, j].any() else 1.0 for j in range(m)])
    Rj = [_exact_scale(np.concatenate([p[elig[:, j], j], a[elig[:, j]], d[elig[:, j]]]),
                       max_steps / max(horizon[j], 1e-300)) for j in range(m)]
    exact = all(r is not None for r in Rj)
    if exact:
        R = float(np.lcm.reduce(np.array(Rj, dtype=np.int64)))
        Rj = np.array(Rj, dtype=float)
    else:
        R = max_steps / max(float(horizon.max()), 1e-300)
        Rj = np.full(m, R)
    Rw = _power_of_ten(w)
    exact = exact and Rw is not None
    Rw = 10 ** 6 if Rw is None else Rw
    P = np.floor(p * Rj + 1e-9).astype(np.int64)
    if (P[elig] < 1).any():
        return None
    A = np.floor(a[:, None] * Rj + 1e-9).astype(np.int64)
    D = np.ceil(d[:, None] * Rj - 1e-9).astype(np.int64)
    Lst = np.floor(lst * Rj + 1e-6).astype(np.int64)
    W = np.floor(w * Rw + 1e-9)
    return Grid(tasks, P, A, D, Lst, W, W[:, None] * (R / Rj)[None, :], elig, Rj, float(R), float(Rw), bool(exact))


@dataclass
class ColgenBound:
    """Outcome of :func:`colgen_bound`.

    ``bound`` (user units) is valid for the user's data whatever the budget;
    ``upper`` is the incumbent's cost; ``proved``: the bound meets it on an
    exact grid; ``converged``: the LP was solved (``lp`` its value, user
    units); ``prices`` the task prices of the best bound (problem order of
    ``grid.tasks``); ``pool`` the columns that are real GPU sequences
    ``(gpus, problem tasks in order, model cost)``, including those the
    master dropped; ``info["trace"]``: ``(seconds, exact passes, bound)``
    at each better bound.
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


class GpuClass:
    """One GPU class: its GPUs, tasks, grid data and the completions still allowed (``alive``)."""

    def __init__(self, g: Grid, gpus: list[int], row: int):
        j = gpus[0]
        self.gpus, self.m, self.row = gpus, len(gpus), row
        self.tasks = np.flatnonzero(g.eligible[:, j])         # model task indices
        self.local = np.full(len(g.tasks), -1, np.int64)      # model task -> local index
        self.local[self.tasks] = np.arange(len(self.tasks))
        self.P, self.A, self.D = g.P[self.tasks, j], g.A[self.tasks, j], g.D[self.tasks, j]
        self.W, Lst = g.Wj[self.tasks, j], g.Lst[self.tasks, j]
        H = int(max(1, Lst.max()))
        t = np.arange(H + 1)[:, None]
        self.alive = (t >= (self.A + self.P)[None, :]) & (t <= Lst[None, :])
        self.H = H
        self.work: dict = {}        # the pricing's label arrays, reused between passes
        self.N: np.ndarray | None = None    # ng neighbourhoods of the exact pricing (None: 2-cycles only)

    def forward(self, alive: np.ndarray, pi: np.ndarray):
        """Labels of this class's exact pricing at task prices ``pi`` (local order) over ``alive``: ng-routes
        where :attr:`N` is set (:mod:`bounds.hetero_ng`), pseudo-schedules without 2-cycles otherwise."""
        if self.N is None or (self.N[:, 1:] < 0).all():      # no neighbour: the 2-cycle pricing is the same
            return forward(self.P, self.A, alive, self.W, self.D, pi, self.work)
        return hetero_ng.forward(self.P, self.A, alive, self.W, self.D, pi, self.N, self.work)

    def coarse_factor(self) -> int:
        """Grid steps per step of the heuristic pricing's coarse view (1: none)."""
        if self.H < COARSE_MIN_STEPS:
            return 1
        return max(1, int(np.median(self.P)) // COARSE_RUN_STEPS)

    def allows(self, seq) -> bool:
        """Whether every completion of ``[(local task, completion), ...]`` is still allowed."""
        return all(t <= self.H and self.alive[t, k] for k, t in seq)

    def retime(self, ks) -> tuple[list[tuple[int, int]], float]:
        """The semi-active timing of a sequence of local tasks on this grid, and its cost."""
        ks = np.asarray(ks, np.int64)
        ts = np.empty(len(ks), np.int64)
        cost = _retime(self.P, self.A, self.W, self.D, ks, ts)
        return list(zip(ks.tolist(), ts.tolist())), float(cost)


class _Coarse:
    """A class's network on steps of ``k`` of its grid steps, run times, arrivals and due dates rounded to
    the nearest step: a cheaper pricing whose paths, re-timed on the class's grid, are only candidate
    columns (heuristic pricing; the bound always comes from the class's own network)."""

    def __init__(self, c: GpuClass, k: int):
        self.cls, self.k = c, k
        self.P = np.maximum(1, np.rint(c.P / k)).astype(np.int64)
        self.A = np.rint(c.A / k).astype(np.int64)
        self.D = np.rint(c.D / k).astype(np.int64)
        self.W = c.W * k
        self.work: dict = {}
        self.update()

    def update(self) -> None:
        """A coarse step is allowed where one of its class's completions is."""
        c, k = self.cls, self.k
        rows = c.H // k + 1
        pad = np.zeros((rows * k, c.alive.shape[1]), bool)
        pad[:c.H + 1] = c.alive[:c.H + 1]
        self.alive = np.ascontiguousarray(pad.reshape(rows, k, -1).any(axis=1))


@known_options
def class_columns(lab, c, pi: np.ndarray, limit: int) -> list[tuple[float, list, float]]:
    """:func:`bounds.hetero_pricing.columns` of labels ``lab`` of ``c`` (a class or a coarse view; ng labels
    traced by :func:`bounds.hetero_ng.columns`), ``pi`` in ``c``'s local order."""
    fn = hetero_ng.columns if isinstance(lab, hetero_ng.NgLabels) else columns
    return fn(lab, c.P, c.W, c.D, pi, limit)


def _incumbent_columns(problem: HeteroProblem, g: Grid, upper: Schedule, classes: list[GpuClass]):
    """One column per GPU of the incumbent ``(class, [(local task, completion)], cost)``, and its model cost."""
    pos = {int(t): i for i, t in enumerate(g.tasks)}
    cls_of = {j: c for c in classes for j in c.gpus}
    per_gpu: dict[int, list] = {}
    for x in upper.assignments:
        i, j = pos[problem.index[x.task]], problem.gpu_index[x.gpu]
        per_gpu.setdefault(j, []).append((i, int(math.floor(x.end * g.Rj[j] + 1e-9)), g.cost(i, j, x.end)))
    cols = []
    for j, xs in per_gpu.items():
        c = cls_of[j]
        local = {int(i): k for k, i in enumerate(c.tasks)}
        cols.append((c, [(local[i], t) for i, t, _ in sorted(xs, key=lambda x: x[1])], float(sum(x[2] for x in xs))))
    return cols, float(sum(cost for _, _, cost in cols))


def _user_cost(problem: HeteroProblem, schedule: Schedule) -> float:
    idx = problem.index
    return float(sum(problem.weight[idx[x.task]] * max(0.0, x.end - problem.deadline[idx[x.task]])
                     for x in schedule.assignments))


class _Master:
    """The restricted master LP in HiGHS (rows: tasks, then classes); the first columns (the incumbent's)
    are never dropped, so it stays feasible."""

    def __init__(self, n: int, classes: list[GpuClass]):
        self.n, self.K = n, len(classes)
        h = silent_highs()
        h.setOptionValue("presolve", "off")     # re-solved from the last basis after each added batch
        h.setOptionValue("simplex_strategy", SIMPLEX)
        inf = highspy.kHighsInf
        lo = np.concatenate([np.ones(n), np.full(self.K, -inf)])
        hi = np.concatenate([np.ones(n), [float(c.m) for c in classes]])
        h.addRows(n + self.K, lo, hi, 0, np.zeros(n + self.K, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h = h
        self.cols: list[tuple[GpuClass, np.ndarray, np.ndarray]] = []   # class, local tasks, completions
        self.keep = 0
        self.cost: list[float] = []
        self.archive: list = []     # removed columns that are real GPU schedules (for the pool)
        self.failures: list[str] = []   # HiGHS statuses of LPs that failed twice

    def add(self, cols: list[tuple[GpuClass, list[tuple[int, int]], float]]) -> None:
        """Add columns ``(class, [(local task, completion), ...], cost)``."""
        starts, idx, vals, costs = [], [], [], []
        for c, seq, cost in cols:
            ks = np.array([k for k, _ in seq], dtype=np.int64)
            self.cols.append((c, ks, np.array([t for _, t in seq], dtype=np.int64)))
            starts.append(len(idx))
            u, k = np.unique(c.tasks[ks], return_counts=True)
            idx.extend(u.tolist() + [self.n + c.row])
            vals.extend(k.astype(float).tolist() + [1.0])
            costs.append(cost)
        self.cost.extend(costs)
        m = len(cols)
        self.h.addCols(m, np.asarray(costs, float), np.zeros(m), np.full(m, highspy.kHighsInf), len(idx),
                       np.asarray(starts, np.int32), np.asarray(idx, np.int32), np.asarray(vals, float))

    def drop_dead(self) -> int:
        """Remove the columns through a completion that fixing removed; how many."""
        dead = [q for q, (c, ks, ts) in enumerate(self.cols[self.keep:], self.keep)
                if len(ks) and ((ts > c.H).any() or not c.alive[np.minimum(ts, c.H), ks].all())]
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


@numba.njit(cache=True)
def _eft_lists(orders, A, P, W, D, elig, Rj, gpu_of, end, cost):
    """Earliest-finish list schedules of each order (rows of ``orders``): task ``i`` of schedule ``s`` runs
    on GPU ``gpu_of[s, i]`` and completes at step ``end[s, i]`` of its grid; ``cost[s, j]``: GPU ``j``'s cost."""
    S, n = orders.shape
    m = P.shape[1]
    avail = np.zeros(m, np.int64)
    for s in range(S):
        avail[:] = 0
        for q in range(n):
            i = orders[s, q]
            best, bj = np.inf, -1
            for j in range(m):
                if elig[i, j]:
                    fin = (max(avail[j], A[i, j]) + P[i, j]) / Rj[j]
                    if fin < best:
                        best, bj = fin, j
            avail[bj] = max(avail[bj], A[i, bj]) + P[i, bj]
            gpu_of[s, i] = bj
            end[s, i] = avail[bj]
            if avail[bj] > D[i, bj]:
                cost[s, bj] += W[i, bj] * (avail[bj] - D[i, bj])


@numba.njit(cache=True)
def _retime(P, A, W, D, ks, ts):
    """Semi-active completions ``ts`` of local tasks ``ks`` on a class's grid; their cost."""
    t, cost = 0, 0.0
    for q in range(len(ks)):
        k = ks[q]
        t = max(t, A[k]) + P[k]
        ts[q] = t
        if t > D[k]:
            cost += W[k] * (t - D[k])
    return cost


def _list_columns(problem: HeteroProblem, g: Grid, classes: list[GpuClass], count: int,
                  deadline: float | None = None, seed: int = 0):
    """Columns of up to ``count`` earliest-finish list schedules of randomly perturbed due-date orders
    (fewer when ``deadline`` comes first).

    Only a richer start for the master LP (every column is a GPU's real sequence, timed on the grid):
    from the incumbent's columns alone the LP stays degenerate for many passes.
    """
    rng = np.random.default_rng(seed)
    cls_of = {j: c for c in classes for j in c.gpus}
    gpus = np.array(sorted(cls_of))
    d = problem.deadline[g.tasks]
    spread = float(np.mean([problem.p[g.tasks, j].mean() for j in gpus]))
    seen, cols = set(), []
    for lo in range(0, count, LIST_CHUNK):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        k = min(LIST_CHUNK, count - lo)
        noise = rng.normal(0.0, 1.0, (k, len(d))) * (spread * rng.uniform(0.5, 4.0, k))[:, None]
        orders = np.argsort(d[None, :] + noise, axis=1)
        gpu_of, end = np.empty((k, len(d)), np.int64), np.empty((k, len(d)), np.int64)
        cost = np.zeros((k, len(gpus)))
        _eft_lists(orders, g.A[:, gpus], g.P[:, gpus], g.Wj[:, gpus], g.D[:, gpus], g.eligible[:, gpus],
                   g.Rj[gpus], gpu_of, end, cost)
        for s in range(k):
            order = orders[s]
            placed = gpu_of[s, order]
            for q, j in enumerate(gpus):
                c = cls_of[int(j)]
                mine = order[placed == q]
                seq = c.local[mine]
                key = (c.row, seq.tobytes())
                if len(seq) and key not in seen:
                    seen.add(key)
                    cols.append((c, list(zip(seq.tolist(), end[s, mine].tolist())), float(cost[s, q])))
    return cols


def _eft(problem: HeteroProblem) -> Schedule:
    from instances.hetero import evaluate_sequences

    p, a, elig = problem.p, problem.arrival, problem.eligible
    avail = np.zeros(problem.m)
    seqs: list[list[int]] = [[] for _ in range(problem.m)]
    for i in np.lexsort((problem.arrival, problem.deadline)):
        if elig[i].any():
            fin = np.where(elig[i], np.maximum(avail, a[i]) + p[i], np.inf)
            gj = int(np.argmin(fin))
            avail[gj] = fin[gj]
            seqs[gj].append(int(i))
    return evaluate_sequences(problem, seqs)


@known_options
def colgen_bound(problem: HeteroProblem, upper: Schedule | None = None, *, time_limit: float | None = 10.0,
                 deadline: float | None = None, max_steps: int = MAX_STEPS, max_iter: int = 10_000,
                 per_class: int = COLUMNS_PER_CLASS, smoothing: float = SMOOTHING,
                 pool: list | None = None, coarse: bool = True, ng: bool | None = None) -> ColgenBound | None:
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
        deadline; pricing passes).
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
    return _run(problem, g, upper, ub_user, deadline, max_iter, per_class, smoothing, list(pool or []),
                coarse, t0, ng)


def _run(problem: HeteroProblem, g: Grid, upper: Schedule, ub_user: float, deadline: float | None,
         max_iter: int, per_class: int, smoothing: float, pool: list, coarse: bool, t0: float,
         ng: bool = False) -> ColgenBound:
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
    master = _Master(n, classes)
    master.add(inc_cols)
    master.keep = len(inc_cols)
    # the start columns get a fifth of the time left
    master.add(_list_columns(problem, g, classes, START_SCHEDULES,
                             None if deadline is None else t0 + 0.2 * (deadline - t0)))
    if pool:
        by_gpus = {tuple(c.gpus): c for c in classes}
        # problem task -> the class's local index
        local = {id(c): {int(g.tasks[i]): k for k, i in enumerate(c.tasks)} for c in classes}
        start, seen = [], set()
        for gpus, seq, _ in pool:
            c = by_gpus.get(tuple(gpus))
            if c is not None and (c.row, tuple(seq)) not in seen and all(int(i) in local[id(c)] for i in seq):
                seen.add((c.row, tuple(seq)))
                start.append((c, *c.retime([local[id(c)][int(i)] for i in seq])))
        master.add(start)

    def price(pi: np.ndarray):
        """``L(pi)`` and the classes' labels (``-inf``: out of time)."""
        total, labs = float(pi.sum()), []
        for c in classes:
            # a pass that would end past the deadline is not started (horizons only shrink: the last
            # pass's time bounds the next one's)
            t1 = time.perf_counter()
            guess = PASS_SECONDS * c.alive.size * (1 if c.N is None else NG_SLOWER)
            if deadline is not None and t1 + c.work.get("seconds", guess) >= deadline:
                return -math.inf, labs
            lab = c.forward(c.alive, pi[c.tasks])
            c.work["seconds"] = time.perf_counter() - t1
            total += c.m * lab.value
            labs.append(lab)
        return total, labs

    def fix(pi: np.ndarray, L: float, labs) -> int:
        """Reduced-cost fixing: remove the completions no schedule of cost <= theta uses; how many."""
        removed = 0
        for c, lab in zip(classes, labs):
            pis = pi[c.tasks]
            through = lab.df1[:, :len(c.tasks)] + backward(c.P, c.A, c.alive, c.W, c.D, pis)
            # the other GPUs take at least their cheapest pseudo-schedules
            dead = c.alive & (L - lab.value + through > theta + 1e-6 * max(1.0, abs(theta)))
            removed += int(dead.sum())
            c.alive &= ~dead
            while c.H > 1 and not c.alive[c.H].any():
                c.H -= 1
            c.alive = np.ascontiguousarray(c.alive[:c.H + 1])
        return removed

    def pass_columns(cs, pi, pi_lp, sigma):
        """Columns of the labels of ``cs`` (classes or coarse views) at ``pi`` that price out at the LP's
        duals (a view's re-timed on its class's grid), and the subgradient of ``L`` at ``pi``."""
        new, grad = [], np.ones(n)
        for c, lab in cs:
            view = isinstance(c, _Coarse)
            cc = c.cls if view else c
            for q, (val, seq, cost) in enumerate(class_columns(lab, c, pi[cc.tasks], per_class)):
                tasks = cc.tasks[[k for k, _ in seq]]
                if q == 0:
                    np.subtract.at(grad, tasks, cc.m)    # L's subgradient at pi
                if view:
                    seq, cost = cc.retime([k for k, _ in seq])
                    counts[0] += 1
                    if not cc.allows(seq) or (cc.N is not None and not hetero_ng.feasible(cc.N, seq_tasks(seq))):
                        continue
                # keep what prices out at the LP's own duals
                if cost - float(pi_lp[tasks].sum()) - sigma[cc.row] < -1e-6 * max(1.0, abs(cost)):
                    new.append((cc, seq, cost))
                    counts[1] += view
        return new, grad

    counts = [0, 0]     # coarse-view paths re-timed, and kept

    def seq_tasks(seq):
        return [k for k, _ in seq]

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

    # at zero prices no pseudo-schedule costs less than nothing: L(0) = 0 is the best point known at the start
    # (the incumbent's complementary-slackness prices let every GPU repeat its dearest tasks, L far below 0)
    best, center = 0.0, np.zeros(n)
    alpha = smoothing
    lp, converged, passes, mispriced, fixed, dropped = None, False, 0, 0, 0, 0
    last_fix, trace, since_fine, heuristic = None, [], 0, 0
    # the heuristic passes price the short classes exactly, the long ones on coarse views
    views = [_Coarse(c, k) if (k := c.coarse_factor()) > 1 else c for c in classes] if coarse else []
    if not any(isinstance(v, _Coarse) for v in views):
        views = []
    step = 0.0      # the last pass's time outside the exact pricing (whose passes are timed apart)
    while passes < max_iter and best < target - 1e-6 * max(1.0, abs(target)):
        t1 = time.perf_counter()
        if deadline is not None and t1 + step >= deadline:
            break
        lp, pi_lp, sigma = master.solve(deadline)
        if lp is None:
            break
        pi_price = alpha * center + (1 - alpha) * pi_lp
        new = []
        if views and since_fine < FINE_EVERY:
            since_fine += 1
            heuristic += 1
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
                if total > best:
                    best, center = total, pi_price.copy()
                    trace.append((round(time.perf_counter() - t0, 2), passes, best / g.scale))
                # fix again whenever L closed another 5 % of the gap to the incumbent (a negative L fixes too)
                if total > -math.inf and (last_fix is None or total - last_fix > 0.05 * (theta - last_fix)) and (
                        deadline is None
                        or time.perf_counter() + 2 * sum(c.work["seconds"] for c in classes) < deadline):
                    last_fix = total
                    fixed += fix(pi_price, total, labs)
                    dropped += master.drop_dead()
                    for v in views:
                        if isinstance(v, _Coarse):
                            v.update()
                    if DEBUG:
                        print(f"fix {time.perf_counter() - t0:.2f}s L={total:.0f}: {fixed} removed, "
                              f"horizons {[c.H for c in classes]}")
                if new or alpha == 0 or total == -math.inf:
                    break
                mispriced += 1
                alpha = 0.0         # the smoothed prices priced out nothing: try the LP's own
                pi_price = pi_lp
            if not new and ng and total > -math.inf and time.perf_counter() < (deadline or math.inf) and grow():
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
    model = max(0.0, float(math.ceil(best - 1e-6 * max(1.0, abs(best))))) if best > -math.inf else 0.0
    model = min(model, ub if g.exact else theta)
    proved = g.exact and model >= ub
    real = [(tuple(c.gpus), tuple(g.tasks[c.tasks[ks]].tolist()), float(cost))
            for (c, ks, _), cost in zip(master.cols, master.cost) if 0 < len(ks) == len(set(ks.tolist()))]
    real += [(tuple(c.gpus), tuple(g.tasks[c.tasks[ks]].tolist()), float(cost))
             for c, ks, _, cost in master.archive if len(ks)]
    return ColgenBound(model / g.scale, ub_user, proved=proved, converged=converged,
                       lp=None if not converged or lp is None else lp / g.scale, prices=center, grid=g, pool=real,
                       info={"passes": passes, "columns": len(master.cols), "classes": len(classes),
                             "lp_failures": master.failures,
                             "grid": (1.0 / g.Rj).tolist(), "exact_grid": g.exact, "mispriced": mispriced,
                             "fixed": fixed, "dropped_columns": dropped, "model_upper": ub,
                             "horizons": [c.H for c in classes], "trace": trace, "heuristic_passes": heuristic,
                             "view_paths": counts[0], "view_columns": counts[1], "ng_growth": growth[0],
                             "ng": {tuple(c.gpus): c.N.copy() for c in classes if c.N is not None},
                             "seconds": time.perf_counter() - t0})
