"""Branch-and-price for weighted tardiness on heterogeneous GPUs (arc-time-indexed formulation).

The tree on top of the column-generation root of :mod:`milp.hetero_colgen`
(Pessoa, Uchoa, Poggi de Aragão and Rodrigues, "Exact algorithm over an
arc-time-indexed formulation for parallel machine scheduling problems", 2010,
Sec. 4: branching on the master's variables through the pricing network).
Every node is the master LP of :mod:`bounds.hetero_colgen` restricted by its
branching decisions, solved by column generation with the pricing of
:mod:`bounds.hetero_pricing` (ng-routes of :mod:`bounds.hetero_ng` on the
classes where the root grew ng neighbourhoods; every schedule is one, so
the children's bounds stay valid):

* a decision removes completions ``(t, task)`` from the pricing networks
  (the classes' ``alive`` masks): "task ``i`` runs on class ``k``" removes
  its completions on the other classes, "not on ``k``" those on ``k``,
  "``C_i <= t``" and "``C_i > t``" those after / up to ``t``. Each child's
  pseudo-schedules are those of its parent that keep the decision, and
  every schedule of the parent satisfies one child's decision, so the
  children's bounds together bound the parent's schedules;
* the node bound is the best Lagrangian value ``L(pi)`` over its pricing
  passes (as at the root, valid at every pass, never the unconverged LP),
  and at least the parent's; a node is closed once it reaches the
  incumbent less one cost unit (costs are integers on an exact grid);
* columns live in one master LP for the whole tree: a node bounds the
  columns its decisions or its reduced-cost fixing exclude to 0, and
  one artificial column per task (cost far above any schedule) keeps
  every node's master feasible; past :data:`MAX_COLUMNS` a node deletes
  the half of largest reduced cost (they come back if they price out);
* branching, on the LP solution ``lambda`` at convergence: candidates are
  the tasks whose class assignment ``x_ik = sum lambda`` is fractional
  (the heaviest, most fractional ones) and the tasks whose completion
  differs between columns (split at the lambda-weighted mean completion);
  each candidate's children are probed by one pricing pass at the node's
  best prices (a valid Lagrangian bound of the child, where the child
  starts) and by the master LP over the child's columns without pricing
  (an estimate from above of the child's LP: strong branching on the
  restricted master); the candidate whose two estimated gains over the
  node's LP have the largest product wins (the product rule). Best bound
  first, deeper nodes first among equal bounds;
* schedules: each node's LP is rounded (every task on its class of largest
  ``x_ik``, in the order of its mean completion) and improved by a short
  local search (:func:`heuristics.hetero.ils` from that start), the root's
  last LP (:attr:`~bounds.hetero_colgen.ColgenBound.support`) before the
  first node; a better schedule tightens the pruning of every open node.

Only exact grids are branched (the generator's data always are): there a
completion window in user time is a window of grid steps.

Examples
--------
>>> from instances import hetero
>>> from instances.options import Deadline
>>> from heuristics.hetero import fifo
>>> from bounds.hetero_colgen import colgen_bound
>>> pb = hetero.generate(12, seed=5)
>>> root = colgen_bound(pb, fifo(pb), time_limit=30)
>>> sched, lb, info = branch_and_price(pb, fifo(pb), root, Deadline(60))
>>> info["proved"], abs(hetero.weighted_tardiness(pb, sched) - lb) < 1e-6
(True, True)
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from bounds.hetero_colgen import ColgenBound, GpuClass, Grid, class_columns
from bounds.highs_lp import run_lp, silent_highs
from bounds.hetero_pricing import backward
from instances import options as opt
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from instances.options import Deadline, known_options

__all__ = ["branch_and_price", "applies"]

#: Columns added per class and pricing pass.
PER_CLASS = 12
#: Starting weight of the best prices in the smoothed prices (Wentges), as at the root.
SMOOTHING = 0.5
#: Seconds of local search from each node's rounded LP solution.
ROUNDING_SECONDS = 0.15
#: Share of the remaining budget for the local search from the root's LP when the root did not converge
#: (its first node is then unlikely to converge either, and no other rounding would run).
ROOT_WALK_SHARE = 0.2
#: Pool columns beyond which a node starts by deleting the half of least use to it (reduced cost).
MAX_COLUMNS = 4000
#: Branching candidates of each kind probed at a node.
PROBES = 4
#: Whether a candidate's children are also valued by the master LP restricted to their columns (no pricing).
LP_PROBE = True
#: Tolerance on LP values (model cost units are integers).
EPS = 1e-6


@known_options
def applies(root: ColgenBound | None) -> bool:
    """Whether the tree can continue from ``root``: its grid exists and holds the data exactly."""
    return root is not None and root.grid is not None and root.grid.exact


class _Class(GpuClass):
    """A GPU class of the root (:class:`bounds.hetero_colgen.GpuClass`), with the user time of each grid step
    and completions as arrays."""

    def __init__(self, g: Grid, gpus: list[int], row: int):
        super().__init__(g, gpus, row)
        self.time = np.arange(self.H + 1) / g.Rj[gpus[0]]     # user time of each grid step (exact grid)


@dataclass(order=True)
class _Node:
    """An open node: its bound (model units), then deeper first, then creation order."""

    bound: float
    neg_depth: int
    serial: int
    allowed: np.ndarray = field(compare=False)     # (tasks, classes): the task may run on the class
    lo: np.ndarray = field(compare=False)          # the task completes after lo (user time)
    hi: np.ndarray = field(compare=False)          # ... and by hi
    prices: np.ndarray = field(compare=False)
    kind: str = field(compare=False, default="root")   # the decision that made it


class _Master:
    """The master LP of the whole tree: artificial columns ``0..n-1``, then the pool's columns."""

    def __init__(self, n: int, classes: list[_Class], big: float):
        self.n, self.classes = n, classes
        h = silent_highs()
        h.setOptionValue("presolve", "off")      # every run but the first starts from the last basis
        inf = highspy.kHighsInf
        K = len(classes)
        lo = np.concatenate([np.ones(n), np.full(K, -inf)])
        hi = np.concatenate([np.ones(n), [float(c.m) for c in classes]])
        h.addRows(n + K, lo, hi, 0, np.zeros(n + K, np.int32), np.zeros(0, np.int32), np.zeros(0))
        h.addCols(n, np.full(n, big), np.zeros(n), np.full(n, inf), n, np.arange(n, dtype=np.int32),
                  np.arange(n, dtype=np.int32), np.ones(n))
        self.h = h
        self.cls: list[int] = []                 # class row of each pool column
        self.ks: list[np.ndarray] = []           # local tasks
        self.ts: list[np.ndarray] = []           # grid completions
        self.cost: list[float] = []
        self.keys: set = set()
        self._flat = tuple(np.zeros(0, np.int64) for _ in range(4))
        self._pending = 0
        self.upper = np.zeros(0)                 # current column upper bounds (pool columns)
        self.failures: list[str] = []            # HiGHS statuses of master LPs that failed twice

    def add(self, cols: list[tuple[int, np.ndarray, np.ndarray, float]]) -> int:
        """Add columns ``(class row, local tasks, completions, cost)`` not yet in the pool; how many."""
        starts, idx, vals, costs = [], [], [], []
        for r, ks, ts, cost in cols:
            key = (r, tuple(ks.tolist()), tuple(ts.tolist()))
            if key in self.keys:
                continue
            self.keys.add(key)
            c = self.classes[r]
            self.cls.append(r)
            self.ks.append(ks)
            self.ts.append(ts)
            self.cost.append(cost)
            starts.append(len(idx))
            u, k = np.unique(c.tasks[ks], return_counts=True)
            idx.extend(u.tolist() + [self.n + r])
            vals.extend(k.astype(float).tolist() + [1.0])
            costs.append(cost)
        m = len(costs)
        if m:
            self.h.addCols(m, np.asarray(costs, float), np.zeros(m), np.full(m, highspy.kHighsInf), len(idx),
                           np.asarray(starts, np.int32), np.asarray(idx, np.int32), np.asarray(vals, float))
            self.upper = np.concatenate([self.upper, np.full(m, np.inf)])
            self._pending += m
        return m

    def _entries(self):
        """Every (column, class, local task, completion) of the pool as flat arrays (the new ones appended)."""
        if self._pending:
            first = len(self.ks) - self._pending
            new = self.ks[first:]
            lens = np.array([len(k) for k in new], np.int64)
            chunk = (np.repeat(np.arange(first, len(self.ks)), lens),
                     np.repeat(np.asarray(self.cls[first:], np.int64), lens),
                     np.concatenate(new), np.concatenate(self.ts[first:]))
            self._flat = tuple(np.concatenate([a, b]) for a, b in zip(self._flat, chunk))
            self._pending = 0
        return self._flat

    def restrict(self, alive: list[np.ndarray]) -> None:
        """Bound to 0 exactly the pool columns through a completion ``alive`` excludes."""
        col, cls, ks, ts = self._entries()
        ok = np.ones(len(col), bool)
        for c, al in zip(self.classes, alive):
            sel = cls == c.row
            t = ts[sel]
            inside = t < al.shape[0]
            good = np.zeros(len(t), bool)
            good[inside] = al[t[inside], ks[sel][inside]]
            ok[sel] = good
        bad = np.bincount(col[~ok], minlength=len(self.ks)) > 0
        upper = np.where(bad, 0.0, np.inf)
        changed = np.flatnonzero(upper != self.upper)
        if len(changed):
            self.h.changeColsBounds(len(changed), (changed + self.n).astype(np.int32), np.zeros(len(changed)),
                                    np.where(upper[changed] > 0, highspy.kHighsInf, 0.0))
            self.upper = upper

    def clean(self, pi: np.ndarray, keep: int) -> int:
        """Delete all but the ``keep`` pool columns of least reduced cost at ``pi`` (columns bounded to 0
        first); a deleted column that prices out again is added again. How many were deleted."""
        excess = len(self.ks) - keep
        if excess <= 0:
            return 0
        col, cls, ks, _ = self._entries()
        tasks = np.concatenate([self.classes[r].tasks for r in range(len(self.classes))])
        offset = np.cumsum([0] + [len(c.tasks) for c in self.classes])[:-1]
        paid = np.bincount(col, weights=pi[tasks[offset[cls] + ks]], minlength=len(self.ks))
        rc = np.asarray(self.cost) - paid
        rc[self.upper == 0] = np.inf
        drop = np.sort(np.argsort(rc, kind="stable")[len(rc) - excess:])
        self.h.deleteCols(len(drop), (drop + self.n).astype(np.int32))
        gone = np.zeros(len(self.ks), bool)
        gone[drop] = True
        for q in drop:
            self.keys.discard((self.cls[q], tuple(self.ks[q].tolist()), tuple(self.ts[q].tolist())))
        kept = np.flatnonzero(~gone)
        self.cls = [self.cls[q] for q in kept]
        self.ks = [self.ks[q] for q in kept]
        self.ts = [self.ts[q] for q in kept]
        self.cost = [self.cost[q] for q in kept]
        self.upper = self.upper[kept]
        self._flat = tuple(np.zeros(0, np.int64) for _ in range(4))
        self._pending = len(self.ks)
        return len(drop)

    def solve(self, dl: Deadline) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
        """The LP's value, task and class duals and solution; ``None`` when ``dl`` ends first or HiGHS fails."""
        rem = dl.remaining()
        if rem is not None:
            # HiGHS compares its time limit with the run time of every run of this model together
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(0.01, rem))
        status = run_lp(self.h)
        if status == highspy.HighsModelStatus.kTimeLimit:
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            # the tree stops as at its deadline: every bound it holds is a Lagrangian value, valid without
            # this LP, and the caller keeps its best schedule
            self.failures.append(str(status))
            return None
        sol = self.h.getSolution()
        dual = np.asarray(sol.row_dual, dtype=float)
        x = np.asarray(sol.col_value, dtype=float)
        return float(self.h.getInfo().objective_function_value), dual[:self.n], dual[self.n:], x


class _Tree:
    """State of one branch-and-price run (see the module docstring)."""

    def __init__(self, problem: HeteroProblem, g: Grid, incumbent: Schedule, seed: int, log: bool):
        self.problem, self.g, self.log, self.seed = problem, g, log, seed
        self.n = len(g.tasks)
        groups: dict[tuple, list[int]] = {}
        for j, gpu in enumerate(problem.gpus):
            if g.eligible[:, j].any():
                groups.setdefault((gpu.speed, gpu.memory), []).append(j)
        self.classes = [_Class(g, gpus, r) for r, gpus in enumerate(groups.values())]
        self.best, self.best_obj = incumbent, weighted_tardiness(problem, incumbent)
        self.ub = self._model_cost(self.best_obj)
        big = 10.0 * max(self.ub, 1.0) + 1e6
        self.master = _Master(self.n, self.classes, big)
        self.nodes = 0
        self.roundings = 0
        self.deleted = 0

    def _model_cost(self, user: float) -> float:
        return float(round(user * self.g.scale))

    # -- columns -------------------------------------------------------------------------------------------------
    def add_schedule(self, schedule: Schedule) -> None:
        """The GPU sequences of a schedule as columns."""
        pos = {int(t): i for i, t in enumerate(self.g.tasks)}
        cls_of = {j: c for c in self.classes for j in c.gpus}
        cols = []
        for j, seq in enumerate(schedule.sequences(self.problem)):
            if seq and j in cls_of:
                c = cls_of[j]
                ks = np.array([c.local[pos[int(i)]] for i in seq], np.int64)
                ts, cost = c.retime(ks)
                cols.append((c.row, ks, ts, cost))
        self.master.add(cols)

    def add_pool(self, pool) -> None:
        """Columns ``(gpus, problem tasks, cost)`` as :attr:`ColgenBound.pool` gives them (re-timed)."""
        by_gpus = {tuple(c.gpus): c for c in self.classes}
        pos = {int(t): i for i, t in enumerate(self.g.tasks)}
        cols = []
        for gpus, seq, _ in pool:
            c = by_gpus.get(tuple(gpus))
            if c is None or any(int(i) not in pos or c.local[pos[int(i)]] < 0 for i in seq):
                continue
            ks = np.array([c.local[pos[int(i)]] for i in seq], np.int64)
            ts, cost = c.retime(ks)
            cols.append((c.row, ks, ts, cost))
        self.master.add(cols)

    # -- one node --------------------------------------------------------------------------------------------------
    def node_alive(self, node: _Node) -> list[np.ndarray]:
        out = []
        for c in self.classes:
            t = c.time[:, None]
            lo, hi = node.lo[c.tasks][None, :], node.hi[c.tasks][None, :]
            al = c.alive & node.allowed[c.tasks, c.row][None, :] & (t > lo + 1e-9) & (t <= hi + 1e-9)
            out.append(self._shrink(al))
        return out

    @staticmethod
    def _shrink(al: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(al.any(axis=1))
        H = max(1, int(rows[-1]) if len(rows) else 1)
        return np.ascontiguousarray(al[:H + 1])

    def price(self, pi: np.ndarray, alive: list[np.ndarray]):
        total, labs = float(pi.sum()), []
        for c, al in zip(self.classes, alive):
            lab = c.forward(al, pi[c.tasks])
            total += c.m * lab.value
            labs.append(lab)
        return total, labs

    def fix(self, pi: np.ndarray, L: float, labs, alive: list[np.ndarray]) -> int:
        """Reduced-cost fixing inside the node (as at the root, against the incumbent less one unit)."""
        theta = self.ub - 1
        removed = 0
        for q, (c, lab) in enumerate(zip(self.classes, labs)):
            al = alive[q]
            through = lab.df1[:al.shape[0], :len(c.tasks)] + backward(c.P, c.A, al, c.W, c.D, pi[c.tasks])
            dead = al & (L - lab.value + through > theta + EPS * max(1.0, abs(theta)))
            removed += int(dead.sum())
            alive[q] = self._shrink(al & ~dead)
        return removed

    def process(self, node: _Node, dl: Deadline):
        """Column generation at ``node``: ``(state, bound, prices, x, alive)``, state ``"closed"`` (bound reaches
        the incumbent), ``"time"`` or ``"converged"`` (``x`` the LP solution and ``alive`` the node's pricing
        networks after its fixing then)."""
        alive = self.node_alive(node)
        for i in range(self.n):       # a task with no completion left on any class: no schedule here
            if not any(c.local[i] >= 0 and al[:, c.local[i]].any() for c, al in zip(self.classes, alive)):
                return "closed", math.inf, node.prices, None, None
        self.master.restrict(alive)
        if len(self.master.ks) > MAX_COLUMNS:
            self.deleted += self.master.clean(node.prices, MAX_COLUMNS // 2)
        center, best, alpha = node.prices.copy(), -math.inf, SMOOTHING
        last_fix = None
        while True:
            if dl.expired():
                return "time", max(node.bound, best), center, None, None
            out = self.master.solve(dl)
            if out is None:
                return "time", max(node.bound, best), center, None, None
            lp, pi_lp, sigma, x = out
            pi = alpha * center + (1 - alpha) * pi_lp
            refixed = False
            while True:
                total, labs = self.price(pi, alive)
                if dl.expired():
                    # a pass cut short is still a valid Lagrangian value, but not worth more work here
                    return "time", max(node.bound, best, total), center, None, None
                new, grad = [], np.ones(self.n)
                for c, lab, al in zip(self.classes, labs, alive):
                    for q, (_, seq, cost) in enumerate(class_columns(lab, c, pi[c.tasks], PER_CLASS)):
                        ks = np.array([k for k, _ in seq], np.int64)
                        tasks = c.tasks[ks]
                        if q == 0:
                            np.subtract.at(grad, tasks, c.m)
                        if cost - float(pi_lp[tasks].sum()) - sigma[c.row] < -EPS * max(1.0, abs(cost)):
                            new.append((c.row, ks, np.array([t for _, t in seq], np.int64), cost))
                if total > best:
                    best, center = total, pi.copy()
                    if best > self.ub - 1 + EPS:
                        return "closed", max(node.bound, best), center, None, None
                    if last_fix is None or best - last_fix > 0.05 * (self.ub - 1 - last_fix):
                        last_fix = best
                        if self.fix(pi, total, labs, alive):
                            self.master.restrict(alive)
                            refixed = True
                if new or alpha == 0:
                    break
                alpha, pi = 0.0, pi_lp
            if float(grad @ (pi_lp - center)) > 0:
                alpha = max(0.0, alpha - 0.1)
            else:
                alpha = min(0.99, alpha + 0.1 * (1 - alpha))
            if not new and not refixed:
                return "converged", max(node.bound, best), center, x, alive
            self.master.add(new)

    # -- branching and rounding --------------------------------------------------------------------------------------
    def _support(self, x: np.ndarray):
        """Per pool column in the LP's support: (lambda, class, model tasks, user completions)."""
        lam = x[self.n:]
        out = []
        for q in np.flatnonzero(lam > EPS):
            c = self.classes[self.master.cls[q]]
            ks = self.master.ks[q]
            out.append((float(lam[q]), c, c.tasks[ks], c.time[np.minimum(self.master.ts[q], len(c.time) - 1)]))
        return out

    def _candidates(self, supp) -> list[tuple[str, int, float]]:
        """Branching candidates ``(kind, task, class or time)``: the :data:`PROBES` fractional assignments of
        largest ``weight x fractionality``, the :data:`PROBES` tasks whose completions differ most between
        the LP's columns (weight x mean deviation), split at the last completion up to their mean."""
        K, w = len(self.classes), self.g.W
        share = np.zeros((self.n, K))
        for lam, c, tasks, _ in supp:
            np.add.at(share[:, c.row], tasks, lam)
        top = share.max(axis=1)
        frac = np.minimum(top, 1 - top)
        out = [("assignment", int(i), float(np.argmax(share[i])))
               for i in np.argsort(-(frac * w), kind="stable")[:PROBES] if frac[i] > EPS]
        timed = []
        for i in range(self.n):
            vals = np.concatenate([times[tasks == i] for _, _, tasks, times in supp])
            lams = np.concatenate([np.full(int((tasks == i).sum()), lam) for lam, _, tasks, _ in supp])
            if len(vals) < 2 or vals.max() - vals.min() <= 1e-9:
                continue
            mean = float(lams @ vals / lams.sum())
            distinct = np.unique(vals)
            timed.append((float(w[i] * (lams @ np.abs(vals - mean)) / lams.sum()), i,
                          float(distinct[distinct <= mean + 1e-9].max())))
        timed.sort(reverse=True)
        return out + [("time", i, t) for _, i, t in timed[:PROBES]]

    def _child_alive(self, alive: list[np.ndarray], kind: str, i: int, arg: float, side: int):
        """``alive`` under one more decision (side 0: on class / by time ``arg``; 1: not on it / after it),
        and the rows of the classes it changes."""
        out, changed = list(alive), []
        for r, c in enumerate(self.classes):
            k = c.local[i]
            if k < 0:
                continue
            if kind == "assignment":
                if (r == int(arg)) == (side == 0):
                    continue
                keep = np.zeros(alive[r].shape[0], bool)
            else:
                t = c.time[:alive[r].shape[0]]
                keep = t <= arg + 1e-9 if side == 0 else t > arg + 1e-9
            if (alive[r][:, k] & ~keep).any():
                al = alive[r].copy()
                al[:, k] &= keep
                out[r] = al
                changed.append(r)
        return out, changed

    def branch(self, node: _Node, x: np.ndarray, bound: float, prices: np.ndarray, alive: list[np.ndarray],
               serial: int, dl: Deadline):
        """The children of ``node`` (``None`` when the LP solution is integral).

        Each candidate's two children are probed by one pricing pass at the node's best prices (a valid
        Lagrangian bound of the child) and, with :data:`LP_PROBE`, by the master LP over the child's columns
        (an estimate); the candidate of largest product of estimated gains wins (without: whose weaker
        child's bound is strongest), and the children start from their probed bounds (a child already at
        the incumbent is left out). The master's column bounds are the node's again afterwards.
        """
        cands = self._candidates(self._support(x))
        if not cands:
            return None
        values = [lab.value for lab in self.price(prices, alive)[1]]
        base = float(prices.sum())
        best = None
        lp0 = float(self.master.h.getInfo().objective_function_value)    # the node's converged LP
        for kind, i, arg in cands:
            if best is not None and dl.expired():
                break
            Ls, est = [], []
            for side in (0, 1):
                al, changed = self._child_alive(alive, kind, i, arg, side)
                v = list(values)
                for r in changed:
                    c = self.classes[r]
                    if not al[r].any():
                        v[r] = 0.0
                    else:
                        v[r] = c.forward(self._shrink(al[r]), prices[c.tasks]).value
                Ls.append(base + sum(c.m * vr for c, vr in zip(self.classes, v)))
                if LP_PROBE:
                    self.master.restrict(al)
                    out = self.master.solve(dl)
                    est.append(max(Ls[-1], out[0] if out is not None else -math.inf))
            if LP_PROBE and len(est) == 2:
                key = (max(est[0] - lp0, EPS) * max(est[1] - lp0, EPS), min(Ls))
            else:
                key = (min(Ls), max(Ls))
            if best is None or key > best[0]:
                best = (key, kind, i, arg, Ls)
        if LP_PROBE:
            self.master.restrict(alive)
        _, kind, i, arg, Ls = best
        kids = []
        for side in (0, 1):
            allowed, lo, hi = node.allowed, node.lo, node.hi
            if kind == "assignment":
                allowed = allowed.copy()
                if side == 0:
                    allowed[i] = False
                allowed[i, int(arg)] = side == 0
            elif side == 0:
                hi = hi.copy()
                hi[i] = min(hi[i], arg)
            else:
                lo = lo.copy()
                lo[i] = max(lo[i], arg)
            kids.append(_Node(bound=max(bound, Ls[side]), neg_depth=node.neg_depth - 1, serial=serial + side,
                              allowed=allowed, lo=lo, hi=hi, prices=prices, kind=kind))
        return kids

    def round(self, x: np.ndarray, dl: Deadline) -> None:
        """Schedule from the LP solution ``x`` of the tree's master (:meth:`round_support`)."""
        self.round_support(self._support(x), dl)

    def round_root(self, root: ColgenBound, dl: Deadline) -> None:
        """:meth:`round_support` from the root's last master LP (:attr:`ColgenBound.support`)."""
        by_gpus = {tuple(c.gpus): c for c in self.classes}
        pos = {int(t): i for i, t in enumerate(self.g.tasks)}
        supp = []
        for gpus, tasks, times, lam in root.support:
            c = by_gpus.get(tuple(gpus))
            if c is not None and all(int(i) in pos for i in tasks):
                supp.append((lam, c, np.array([pos[int(i)] for i in tasks], np.int64), np.asarray(times, float)))
        if supp:
            rem = dl.remaining()
            walk = ROUNDING_SECONDS if root.converged or rem is None else max(ROUNDING_SECONDS, ROOT_WALK_SHARE * rem)
            self.round_support(supp, dl, walk)

    def round_support(self, supp, dl: Deadline, seconds: float = ROUNDING_SECONDS) -> None:
        """Schedule from an LP solution (``(lambda, class, model tasks, user completions)`` per column): each
        task on its class of largest share, in the order of its mean completion (earliest finish among the
        class's GPUs), then a local search of ``seconds`` from it."""
        from heuristics.hetero import ils

        K = len(self.classes)
        share, when = np.zeros((self.n, K)), np.zeros(self.n)
        for lam, c, tasks, times in supp:
            np.add.at(share[:, c.row], tasks, lam)
            np.add.at(when, tasks, lam * times)
        tot = share.sum(axis=1)
        when = when / np.where(tot > 0, tot, 1.0)
        on = share.argmax(axis=1)
        p = self.problem.p
        seqs: list[list[int]] = [[] for _ in self.problem.gpus]
        for c in self.classes:
            free = {j: 0.0 for j in c.gpus}
            mine = [i for i in np.argsort(when, kind="stable") if on[i] == c.row and tot[i] > 0]
            for i in mine:
                ip = int(self.g.tasks[i])
                j = min(c.gpus, key=lambda jj: max(free[jj], self.problem.arrival[ip]) + p[ip, jj])
                free[j] = max(free[j], self.problem.arrival[ip]) + p[ip, j]
                seqs[j].append(ip)
        placed = {i for s in seqs for i in s}
        if len(placed) != self.n:
            return
        start = evaluate_sequences(self.problem, seqs)
        if check(self.problem, start):
            return
        rem = dl.remaining()
        budget = seconds if rem is None else min(seconds, 0.5 * rem)
        if budget <= 0:     # out of time (the ILS takes only a positive limit)
            return
        self.roundings += 1
        sched = ils(self.problem, time_limit=budget, start=start,
                    seed=(self.seed + self.roundings) % (opt.MAX_SEED + 1))
        self.offer(sched)

    def offer(self, sched: Schedule) -> bool:
        obj = weighted_tardiness(self.problem, sched)
        if obj < self.best_obj - 1e-9 * max(1.0, self.best_obj) and not check(self.problem, sched):
            self.best, self.best_obj = sched, obj
            self.ub = min(self.ub, self._model_cost(obj))
            self.add_schedule(sched)
            return True
        return False


@known_options
def branch_and_price(problem: HeteroProblem, incumbent: Schedule, root: ColgenBound, dl: Deadline,
                     log: bool = False, seed: int = 0, max_nodes: int | None = None
                     ) -> tuple[Schedule, float, dict[str, Any]]:
    """Branch-and-price from a column-generation root (see the module docstring) until ``dl`` ends.

    Parameters
    ----------
    incumbent
        The best known schedule (checked).
    root
        :func:`bounds.hetero_colgen.colgen_bound`'s outcome on ``problem``
        (its exact grid, columns, prices and bound are reused); see
        :func:`applies`.
    max_nodes
        Stop after processing this many nodes (the bound is then the least
        open node's).

    Returns
    -------
    (schedule, bound, info)
        The best schedule found (``incumbent`` or better, checked), a lower
        bound valid for the user's data (the least open node's, at least the
        root's) and ``info`` (``proved``: no open node is left; ``nodes``).
    """
    seed = opt.seed(seed, allow_none=False)
    if max_nodes is not None:
        opt.integer(max_nodes, "max_nodes", lo=0)
    if not applies(root):
        raise ValueError("branch_and_price needs a root on an exact grid")
    g = root.grid
    tree = _Tree(problem, g, incumbent, seed, log)
    for c in tree.classes:      # the root's ng neighbourhoods, if it grew any (same local task order)
        c.N = root.info.get("ng", {}).get(tuple(c.gpus))
    tree.add_schedule(incumbent)
    tree.add_pool(root.pool)
    root_bound = math.ceil(root.bound * g.scale - EPS)
    n, K = tree.n, len(tree.classes)
    first = _Node(bound=float(root_bound), neg_depth=0, serial=0, allowed=np.ones((n, K), bool),
                  lo=np.full(n, -math.inf), hi=np.full(n, math.inf),
                  prices=np.asarray(root.prices, float) if root.prices is not None else np.zeros(n))
    heap, serial = [first], 1
    info: dict[str, Any] = {"nodes": 0, "max_depth": 0}
    # the root's LP rounded first: where the first node's column generation outlasts the budget (n = 100),
    # it is the only rounding
    tree.round_root(root, dl)
    t0 = time.perf_counter()
    stuck: list[float] = []       # integral LPs that are no schedule (several GPUs in a class): kept open
    while heap and (max_nodes is None or tree.nodes < max_nodes):
        node = heapq.heappop(heap)
        if node.bound > tree.ub - 1 + EPS:
            continue
        state, bound, prices, x, alive = tree.process(node, dl)
        tree.nodes += 1
        info["max_depth"] = max(info["max_depth"], -node.neg_depth)
        if state == "time":
            node.bound = bound
            heapq.heappush(heap, node)
            break
        if state == "closed" or bound > tree.ub - 1 + EPS:
            continue
        tree.round(x, dl)
        if bound > tree.ub - 1 + EPS:
            continue
        kids = tree.branch(node, x, bound, prices, alive, serial, dl)
        kind = "integral" if kids is None else kids[0].kind
        if log:
            print(f"node {tree.nodes} (depth {-node.neg_depth}): bound {bound / g.scale:g}, incumbent "
                  f"{tree.best_obj:g}, open {len(heap)}, columns {len(tree.master.ks)}, {kind} branch, "
                  f"{time.perf_counter() - t0:.1f}s")
        info[kind] = info.get(kind, 0) + 1
        if kids is None:
            # integral LP: with one GPU per class its columns are a schedule that the rounding has offered
            if bound <= tree.ub - 1 + EPS:
                stuck.append(bound)
            continue
        serial += 2
        for kid in kids:
            if kid.bound <= tree.ub - 1 + EPS:
                heapq.heappush(heap, kid)
        if dl.expired():
            break
    open_bounds = [b for b in [nd.bound for nd in heap] + stuck if b <= tree.ub - 1 + EPS]
    proved = not open_bounds
    model_lb = float(tree.ub) if proved else max(float(root_bound), min(open_bounds))
    lb = min(tree.best_obj, max(root.bound, model_lb / g.scale))
    info.update(nodes=tree.nodes, proved=proved, open=len(open_bounds), columns=len(tree.master.ks),
                roundings=tree.roundings, deleted_columns=tree.deleted, seconds=time.perf_counter() - t0,
                lp_failures=tree.master.failures)
    return tree.best, lb, info
