"""Proximal bundle method for the multipliers of the time-indexed Lagrangian relaxation.

The function maximised is the one of :mod:`bounds.hetero_subgradient`:
``L(mu) = (shortest path under the arc costs cost[t, j] - mu_j) + sum_j mu_j``,
concave and piecewise linear, each forward pass giving its value and a
supergradient ``g = 1 - (occurrences of each job on the relaxed path)``.
Where the deflected subgradient method keeps only the last direction, a
bundle method keeps the cuts ``L(mu) <= L_i + g_i (mu - mu_i)`` of many
passes and steps to the maximiser of their minimum (the cutting-plane model)
less a proximal term around a stability centre, which moves only when the
pass there confirms enough of the increase the model predicts (a serious
step; otherwise the new cut enriches the model: a null step). See Kiwiel,
"Proximity control in bundle methods for convex nondifferentiable
minimization" (Math. Programming 46, 1990), and Frangioni, "Generalized
bundle methods" (SIAM J. Optim. 13, 2002); Lemaréchal, Nemirovskii &
Nesterov, "New variants of bundle methods" (Math. Programming 69, 1995) for
the level variant that this module does not use.

The master problem is solved in its dual form: a convex QP over the simplex
of the bundle's cuts (at most ``bundle_size`` of them; when it is full, the
cuts the last master did not use go, or all of them, replaced by their
aggregate), by a warm-started active-set method, with HiGHS's QP solver
behind it (HiGHS alone spends most of each solve building the model,
enough to lose on CPU time the passes the bundle saves). At n = 150-200
the model's memory is what the subgradient method lacks: it makes fewer passes to the same bound, and a bundle of a
few hundred cuts costs well under a pass to solve.

Examples
--------
>>> from bounds.hetero_ti import Network, tardiness_costs
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> optimize(Network(p, tardiness_costs(p, w, d)), 12.0, [0, 2, 1]).proved
True
"""

from __future__ import annotations

import functools
import math
import time

import highspy
import numpy as np
from numba import njit

from bounds.highs_lp import silent_highs
from bounds.hetero_subgradient import (Relaxation, below_next_integer, improved_upper, search_result,
                                       start_multipliers, timed_elimination, timed_pass)
from bounds.hetero_ti import INF
from instances import options as opt
from instances.options import known_options

__all__ = ["optimize", "dual_master"]

#: Share of the predicted increase that a trial pass must reach for the centre to move there (a serious step).
SERIOUS = 0.1
#: Bounds on the change of the proximal parameter ``t`` in one step (Kiwiel 1990's safeguards).
T_CHANGE = 10.0
#: Growth of ``t`` after a serious step that reached at most half the predicted increase (one that reached more
#: follows Kiwiel's interpolation): the passes are cheap and the model near the centre is often too pessimistic.
GROW = 1.5
#: Consecutive null steps (each below the centre's value) before ``t`` shrinks: a few bad trial points are the
#: price of long steps, and an early shrink leaves the search creeping for hundreds of passes.
SHRINK_AFTER = 10
#: Seconds HiGHS's QP solver may spend on one master, the active set's fallback (it can cycle on a singular
#: Hessian; a master it leaves unsolved takes one supergradient step).
HIGHS_SECONDS = 1.0


@njit(cache=True)
def _solve(K, r):
    """``K x = r`` by Gaussian elimination with partial pivoting (``K`` and ``r`` overwritten).

    Written out because numba compiles ``np.linalg.solve`` only with SciPy's LAPACK, which is not a
    dependency; the systems are the active set's, a few hundred unknowns at most."""
    m = r.shape[0]
    for c in range(m):
        p = c
        for i in range(c + 1, m):
            if abs(K[i, c]) > abs(K[p, c]):
                p = i
        if p != c:
            for v in range(m):
                K[c, v], K[p, v] = K[p, v], K[c, v]
            r[c], r[p] = r[p], r[c]
        piv = K[c, c]
        if piv == 0.0:
            piv = 1e-300
        for i in range(c + 1, m):
            f = K[i, c] / piv
            if f != 0.0:
                for v in range(c, m):
                    K[i, v] -= f * K[c, v]
                r[i] -= f * r[c]
    x = np.zeros(m)
    for c in range(m - 1, -1, -1):
        acc = r[c]
        for v in range(c + 1, m):
            acc -= K[c, v] * x[v]
        piv = K[c, c] if K[c, c] != 0.0 else 1e-300
        x[c] = acc / piv
    return x


@njit(cache=True)
def _active_set(Q, e, a, tol, max_steps):
    """Primal active-set method for ``min a.Q a / 2 + e.a`` over the unit simplex, from the feasible ``a``
    (overwritten with the solution); returns False when ``max_steps`` did not reach optimality.

    The free set holds the positive weights; each step solves the equality-constrained problem on it
    (``Q_FF x + e_F = lam``, ``sum x = 1``) and either moves there, when it stays non-negative, then frees
    the weight of most negative reduced gradient, or stops at the first weight to reach zero and fixes
    it (Nocedal & Wright, "Numerical Optimization", Sec. 16.5). A tiny ridge keeps the systems
    solvable when cuts repeat."""
    k = e.shape[0]
    free = a > 0.0
    ridge = 1e-12 * max(1.0, np.max(np.abs(np.diag(Q))))
    for _ in range(max_steps):
        idx = np.flatnonzero(free)
        m = idx.shape[0]
        K = np.zeros((m + 1, m + 1))
        r = np.zeros(m + 1)
        for u in range(m):
            for v in range(m):
                K[u, v] = Q[idx[u], idx[v]]
            K[u, u] += ridge
            K[u, m] = -1.0
            K[m, u] = 1.0
            r[u] = -e[idx[u]]
        r[m] = 1.0
        sol = _solve(K, r)
        x = sol[:m]
        if np.all(x >= 0.0):
            for u in range(m):
                a[idx[u]] = x[u]
            grad = e.copy()
            for i in range(k):
                for u in range(m):
                    grad[i] += Q[i, idx[u]] * a[idx[u]]
            lam = sol[m]
            j = -1
            worst = -tol
            for i in range(k):
                if not free[i] and grad[i] - lam < worst:
                    worst = grad[i] - lam
                    j = i
            if j < 0:
                return True
            free[j] = True
            continue
        step = 1.0
        block = -1
        for u in range(m):
            if x[u] < 0.0:
                s = a[idx[u]] / (a[idx[u]] - x[u])
                if s < step:
                    step = s
                    block = idx[u]
        for u in range(m):
            a[idx[u]] += step * (x[u] - a[idx[u]])
        for u in range(m):
            if a[idx[u]] <= 0.0 or idx[u] == block:
                a[idx[u]] = 0.0
                free[idx[u]] = False
    return False


@known_options
def dual_master(G: np.ndarray, e: np.ndarray, t: float, start: np.ndarray | None = None,
                gram: np.ndarray | None = None) -> np.ndarray:
    """The weights of the cuts at the maximiser of the proximal master problem.

    For cuts ``L(c + s) <= L(c) + e_i + g_i s`` (``e_i >= 0`` the cut's
    linearisation error at the centre ``c``, ``g_i`` the rows of ``G``), the
    primal master ``max_s min_i (e_i + g_i s) - |s|^2 / (2 t)`` has the dual
    ``min_a a.e + (t / 2) |G^T a|^2`` over the unit simplex, a convex QP
    (Kiwiel 1990; Frangioni 2002, Sec. 2); the step is then ``s = t G^T a``
    and the increase the model predicts ``a.e + t |G^T a|^2``. Solved by a
    primal active-set method from ``start`` (the last master's weights: one
    cut more, a new centre or ``t`` change the problem little), a fraction
    of a millisecond for a hundred cuts; should it not finish, by HiGHS's QP
    solver, and should that return no optimum, all the weight goes on the
    cut of smallest error (a step along one supergradient). ``gram``, if
    given, is ``G G^T``.

    Examples
    --------
    >>> dual_master(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.zeros(2), 1.0).round(6).tolist()
    [0.5, 0.5]
    >>> dual_master(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.0, 5.0]), 1.0).round(6).tolist()
    [1.0, 0.0]
    """
    k = len(e)
    if k == 1:
        return np.ones(1)
    e = np.ascontiguousarray(e, dtype=float)
    Q = float(t) * (G @ G.T if gram is None else gram)
    a = np.zeros(k)
    if start is not None and len(start) == k and start.sum() > 0:
        a[:] = np.clip(start, 0.0, None) / np.clip(start, 0.0, None).sum()
    else:
        a[int(np.argmin(e))] = 1.0
    if _active_set(Q, e, a, 1e-9 * max(1.0, float(np.abs(e).max()), float(np.abs(Q).max())), 20 * k + 50):
        return a
    return _highs_master(Q, e)


def _highs_master(Q: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The master's dual by HiGHS's QP solver (see :func:`dual_master`)."""
    k = len(e)
    rows, cols = _tril(k)
    h = silent_highs()
    # HiGHS's QP solver can cycle on a singular Hessian (repeated cuts): bounded, it falls back below
    h.setOptionValue("time_limit", HIGHS_SECONDS)
    h.setOptionValue("qp_iteration_limit", 100 * k + 1_000)
    h.passModel(k, 1, k, len(rows), int(highspy.MatrixFormat.kColwise), int(highspy.HessianFormat.kTriangular),
                int(highspy.ObjSense.kMinimize), 0.0, np.asarray(e, dtype=float), np.zeros(k), np.ones(k),
                np.ones(1), np.ones(1), np.arange(k + 1, dtype=np.int32), np.zeros(k, dtype=np.int32), np.ones(k),
                _tril_start(k), rows.astype(np.int32), np.ascontiguousarray(Q[rows, cols]),
                np.zeros(k, dtype=np.int32))
    h.run()
    a = np.asarray(h.getSolution().col_value, dtype=float)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal or len(a) != k or not np.isfinite(a).all():
        a = np.zeros(k)
        a[int(np.argmin(e))] = 1.0
        return a
    a = np.clip(a, 0.0, None)
    return a / a.sum()


@functools.cache
def _tril(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of a k x k lower triangle, column by column (HiGHS's triangular Hessian)."""
    cols, rows = np.triu_indices(k)
    return rows, cols


@functools.cache
def _tril_start(k: int) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(np.arange(k, 0, -1)))).astype(np.int32)


class _Bundle:
    """Cuts ``L(mu) <= a_i + g_i mu`` (``a_i = L_i - g_i mu_i``), newest last, with the weights ``w`` the
    last master gave them (zero for the cuts added since)."""

    def __init__(self, n: int, size: int) -> None:
        self.size = size
        self.G = np.empty((0, n))
        self.a = np.empty(0)
        self.w = np.empty(0)
        self.GG = np.empty((0, 0))   # G G^T, kept up to date: the master's Hessian without a product per pass

    def add(self, g: np.ndarray, L: float, mu: np.ndarray) -> None:
        self.compress()
        row = self.G @ g
        k = len(self.a)
        GG = np.empty((k + 1, k + 1))
        GG[:k, :k], GG[k, :k], GG[:k, k], GG[k, k] = self.GG, row, row, float(g @ g)
        self.GG = GG
        self.G = np.vstack((self.G, g))
        self.a = np.append(self.a, L - float(g @ mu))
        self.w = np.append(self.w, 0.0)

    def errors(self, c: np.ndarray, Lc: float) -> np.ndarray:
        return self.a + self.G @ c - Lc

    def keep(self, which: np.ndarray) -> None:
        self.G, self.a, self.w = self.G[which], self.a[which], self.w[which]
        self.GG = self.GG[np.ix_(which, which)]

    def compress(self) -> None:
        """Make room for one more cut: drop the cuts the last master left unused, oldest first, and, if
        that is not enough, every cut, replaced by the aggregate of the last master (a valid cut: a
        convex combination of cuts), so that the master's solution stays reachable (Kiwiel 1990)."""
        if len(self.a) < self.size:
            return
        used = self.w > 1e-9
        if used.sum() < self.size:
            drop = np.flatnonzero(~used)[:len(self.a) - self.size + 1]
            which = np.ones(len(self.a), dtype=bool)
            which[drop] = False
            self.keep(which)
            return
        w = self.w / self.w.sum()
        self.G, self.a, self.w = (w @ self.G)[None, :], np.array([float(w @ self.a)]), np.ones(1)
        self.GG = self.G @ self.G.T


@known_options
def optimize(net, upper: float, sequence=None, *, deadline=None, max_iter: int = 400, eliminate_every: int = 8,
             integral: bool = True, mu0: np.ndarray | None = None, improve=None, improve_every: int = 50,
             bundle_size: int = 200, t0: float | None = None, keep_after_elimination: bool = True,
             tol: float = 1e-7) -> Relaxation:
    """Proximal bundle search of the multipliers, with elimination; the contract of
    :func:`bounds.hetero_subgradient.optimize`.

    Each pass is made at ``c + t G^T a`` (:func:`dual_master`: the
    maximiser of the cutting-plane model less ``|mu - c|^2 / (2 t)``); the
    centre ``c`` moves there when the pass reaches ``SERIOUS`` of the
    increase the model predicted. The proximal parameter ``t`` starts at
    ``t0`` or, without it, at the Polyak step towards ``upper`` of the first
    pass, ``(upper - L) / |g|^2``, and follows Kiwiel's (1990) interpolation
    ``t / (2 (1 - rho))`` (``rho`` the share of the predicted increase
    reached) after a serious step that reached more than half of it, and
    grows by ``GROW`` after any other serious step; it shrinks by the same
    interpolation only from the ``SHRINK_AFTER``-th null step in a row on,
    at each whose pass fell below the centre's value; by at most
    ``T_CHANGE`` each time. (A shrink at the first bad trial point, as
    Kiwiel's safeguards allow, leaves the search creeping: the first trial
    points, Polyak steps from a start far below the optimum, fall below
    it.) A master whose predicted increase is below
    ``tol`` times the bound is solved again with ``t`` ten times larger (at
    most three times); the search stops when that still predicts nothing
    (the centre is optimal to that precision), when the bound exceeds
    :func:`below_next_integer` of ``upper`` (``integral``) or ``upper``,
    after ``max_iter`` passes, or
    before ``deadline`` (a ``time.perf_counter`` value; a pass or an
    elimination is not started when the last one of its kind would not fit).

    Eliminations are made at the centre, after the first pass and every
    ``eliminate_every`` serious steps, as the subgradient method makes them
    after its better bounds: arcs whose cheapest path exceeds the threshold
    go, and the centre is evaluated again on the smaller network (where
    ``L`` only rises, so the bound is ``min(best, upper)`` as in the
    subgradient method). The cuts of paths that went may then lie below
    ``L``: with ``keep_after_elimination`` the bundle keeps the cuts that
    still lie above the centre's new value (a cut below it is certainly
    wrong), otherwise it starts again from the centre's cut. ``improve`` and
    ``improve_every`` are as in :func:`bounds.hetero_subgradient.optimize`
    (called with the relaxed path of the passes it names); a better schedule
    lowers ``upper`` and the threshold. ``sequence`` or ``mu0`` give the
    start as there; ``bundle_size`` caps the cuts kept.

    Examples
    --------
    >>> from bounds.hetero_ti import Network, tardiness_costs
    >>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
    >>> r = optimize(Network(p, tardiness_costs(p, w, d)), 13.0, [0, 2, 1], eliminate_every=0)
    >>> r.bound, r.proved
    (12.0, False)
    """
    opt.integer(max_iter, "max_iter", lo=0)
    opt.integer(bundle_size, "bundle_size", lo=2)
    tol = opt.number(tol, "tol", lo=0.0)
    if t0 is not None:
        t0 = opt.number(t0, "t0", lo=0.0, above=True)
    keep_after_elimination = opt.flag(keep_after_elimination, "keep_after_elimination")
    n = net.jobs
    theta = below_next_integer(upper) if integral else upper
    mu = start_multipliers(net, sequence, mu0)
    reduced = net.capped
    best, best_mu, best_path = -INF, mu.copy(), []
    trace: list[float] = []
    evals = serious = 0
    t_pass = t_elim = 0.0
    run_null = 0
    bundle = _Bundle(n, bundle_size)
    c = Lc = fw_c = None
    t = None if t0 is None else float(t0)
    predicted = 0.0
    at_centre = True   # the next pass evaluates the centre itself (the start, or after an elimination)
    while evals < max_iter:
        if deadline is not None and evals > 0 and time.perf_counter() + t_pass >= deadline:
            break
        fw, path, t_pass = timed_pass(net, mu)
        evals += 1
        L = fw.bound
        if not math.isfinite(L):            # no path left: every schedule costs more than theta
            best, best_mu, best_path = INF, mu.copy(), []
            break
        if L > best + 1e-9 * max(1.0, abs(L)):
            best, best_mu, best_path = L, mu.copy(), path
        trace.append(best)
        upper, theta = improved_upper(improve, path, evals, improve_every, upper, integral)
        if best > theta:
            break
        g = 1.0 - net.counts(path)
        if not g.any():   # the relaxed path is a schedule: its cost L is optimal
            break
        if t is None:
            t = max(upper - L, 1.0) / float(g @ g)
        if at_centre:
            at_centre, is_serious = False, c is None   # after an elimination the centre stays where it was
            if c is not None and keep_after_elimination:
                bundle.keep(bundle.errors(mu, L) >= -1e-9 * max(1.0, abs(L)))
            elif c is not None:
                bundle = _Bundle(n, bundle_size)
            c, Lc, fw_c = mu, L, fw
            bundle.add(g, L, mu)
        else:
            rho = (L - Lc) / predicted
            is_serious = rho >= SERIOUS
            if is_serious:
                run_null = 0
                if rho > 0.5:
                    t = min(T_CHANGE * t, t / (2.0 * (1.0 - min(rho, 0.95))))
                else:
                    t *= GROW
                c, Lc, fw_c = mu, L, fw
            else:
                run_null += 1
                if rho < 0.0 and run_null >= SHRINK_AFTER:
                    t = max(t / T_CHANGE, t / (2.0 * (1.0 - rho)))
            bundle.add(g, L, mu)
        if is_serious:
            serious += 1
            if eliminate_every and (serious == 1 or serious % eliminate_every == 0):
                removed, t_elim = timed_elimination(net, c, theta, fw_c, deadline, t_pass, t_elim)
                if removed:
                    reduced = True
                    mu, at_centre = c, True
                    continue   # the centre again, on the smaller network
        e = np.clip(bundle.errors(c, Lc), 0.0, None)
        for _ in range(4):
            alpha = bundle.w = dual_master(bundle.G, e, t, bundle.w, gram=bundle.GG)
            s = alpha @ bundle.G
            predicted = float(alpha @ e) + t * float(s @ s)
            if predicted > tol * max(1.0, abs(Lc)) or float(s @ s) <= 1e-12:
                break
            t *= T_CHANGE   # a short step that predicts nothing: the model is flat near the centre, look further
        if predicted <= tol * max(1.0, abs(Lc)):
            break
        mu = c + t * s
    return search_result(net, best, best_mu, best_path, upper, theta, reduced, evals, trace)
