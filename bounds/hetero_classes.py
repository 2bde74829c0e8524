"""The GPU classes of the heterogeneous column generation on their integer time grids.

The data side of :mod:`bounds.hetero_colgen` (Pessoa, Uchoa, Poggi de
Aragão and Rodrigues, "Exact algorithm over an arc-time-indexed formulation
for parallel machine scheduling problems", 2010, Sec. 2): the problem on one
integer grid per GPU (:func:`grid`), the classes of identical GPUs with the
completions their pricing network still allows (:class:`GpuClass`), the
coarse views of the heuristic pricing (:class:`Coarse`), and the columns that
start the master: the incumbent's GPU sequences and earliest-finish list
schedules, every one a real GPU sequence timed on the grid.

Validity for the user's data: each GPU's times go on an integer grid (the
coarsest divisor of 10^6 that holds its run times, arrivals and due dates
exactly, as the generator's are held), otherwise on one grid where run times
and arrivals are rounded down, due dates up; weights go on a grid of
``1/Rw`` rounded down. Every real schedule then maps to a path (start times
rounded down) that costs no more, so a model bound divided by ``R Rw`` is
valid. A schedule no worse than the incumbent (cost ``ub``) completes each
task ``i`` by ``d_i + ub / w_i``: later completions are left out of the
network (they cannot occur in an optimum).

Examples
--------
>>> from instances import hetero
>>> g = grid(hetero.generate(6, seed=1), ub=100.0)
>>> g.exact, (1 / g.Rj).tolist()
(True, [1.0, 0.2, 0.2])
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np

from bounds import hetero_ng
from bounds.hetero_pricing import column_arrays, columns, forward
from instances.hetero import HeteroProblem, Schedule
from instances.options import known_options

__all__ = ["Grid", "grid", "GpuClass", "Coarse", "class_columns", "class_column_arrays", "MAX_STEPS", "MAX_LABELS"]

#: Largest number of grid steps of a class's horizon.
MAX_STEPS = 20_000
#: Largest number of labels (grid steps x tasks) of a class: its arrays take about 56 bytes per label.
MAX_LABELS = 3_000_000
#: Heuristic pricing on coarse views of the classes whose horizon has at least ``COARSE_MIN_STEPS`` steps,
#: a median run time of about ``COARSE_RUN_STEPS`` coarse steps.
COARSE_MIN_STEPS = 1_000
COARSE_RUN_STEPS = 6
#: List schedules are built in chunks of this many (one compiled call each).
LIST_CHUNK = 25


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

    def allowed(self, ks: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """Per completion: whether ``ts[i]`` of local task ``ks[i]`` is within the horizon and still allowed."""
        ok = ts <= self.H
        ok[ok] = self.alive[ts[ok], ks[ok]]
        return ok

    def retime(self, ks) -> tuple[np.ndarray, float]:
        """The semi-active completions of a sequence of local tasks ``ks`` on this grid, and its cost."""
        ks = np.asarray(ks, np.int64)
        ts = np.empty(len(ks), np.int64)
        return ts, float(_retime(self.P, self.A, self.W, self.D, ks, ts))

    def retime_all(self, ks: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`retime` of sequences of ``lens`` tasks one after another in ``ks``: completions, costs."""
        ts, costs = np.empty(len(ks), np.int64), np.empty(len(lens))
        _retime_all(self.P, self.A, self.W, self.D, ks, lens, ts, costs)
        return ts, costs


class Coarse:
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


@known_options
def class_column_arrays(lab, c, limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`class_columns` as :func:`bounds.hetero_pricing.column_arrays` gives them: ``(tasks, completions,
    lengths, costs)``, the columns one after another."""
    if not isinstance(lab, hetero_ng.NgLabels):
        return column_arrays(lab, c.P, c.W, c.D, limit)
    cols = hetero_ng.columns(lab, c.P, c.W, c.D, np.zeros(len(c.P)), limit)
    pairs = np.array([kt for _, seq, _ in cols for kt in seq], np.int64).reshape(-1, 2)
    return (pairs[:, 0].copy(), pairs[:, 1].copy(), np.array([len(seq) for _, seq, _ in cols], np.int64),
            np.array([cost for _, _, cost in cols], float))


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


@numba.njit(cache=True)
def _retime_all(P, A, W, D, ks, lens, ts, costs):
    """:func:`_retime` of sequences of ``lens`` tasks one after another in ``ks``."""
    at = 0
    for q in range(len(lens)):
        costs[q] = _retime(P, A, W, D, ks[at:at + lens[q]], ts[at:at + lens[q]])
        at += lens[q]


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


def _neighbour_columns(classes: list[GpuClass], inc_cols: list, deadline: float | None = None):
    """Columns one move away from the incumbent's GPU sequences: each sequence without one of its tasks, and
    with one task of another GPU inserted where it would complete near its due date (the best of three
    positions).

    Only a richer start for the master LP (real sequences, timed on the grid): a good incumbent is a local
    optimum of such moves, and the LP's first vertices mix its sequences with their neighbours.
    """
    cols, seen = [], set()
    for c, seq, _ in inc_cols:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        ks = [k for k, _ in seq]
        done = np.array([t for _, t in seq], np.int64)
        cands = [(cand, *c.retime(cand)) for cand in (ks[:q] + ks[q + 1:] for q in range(len(ks))) if cand]
        mine = set(ks)
        for k in range(len(c.tasks)):
            if k in mine:
                continue
            q0 = int(np.searchsorted(done, c.D[k]))
            best = None
            for q in range(max(0, q0 - 1), min(len(ks), q0 + 1) + 1):
                cand = ks[:q] + [k] + ks[q:]
                ts, cost = c.retime(cand)
                if best is None or cost < best[2]:
                    best = (cand, ts, cost)
            cands.append(best)
        for cand, ts, cost in cands:
            key = (c.row, tuple(cand))
            if key not in seen:
                seen.add(key)
                cols.append((c, list(zip(cand, ts.tolist())), cost))
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

