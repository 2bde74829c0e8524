"""Lower bounds for weighted tardiness on heterogeneous GPUs (the heterogeneous-GPU scheduling paper).

:func:`lower_bound` returns a number that no schedule of the problem can beat,
valid for the user's own data (any rounding the computation needs is done in
the direction that keeps it valid). Which relaxation it uses depends on the
problem:

* **One machine, common arrival** (the OR-Library case, 1||sum w_j T_j):
  the time-indexed Lagrangian relaxation on the compiled grid network of
  :mod:`bounds.hetero_dp` (Tanaka, Fujikuma & Araki 2009, Sec. 3-4;
  :func:`relax_grid`): a shortest path over time with
  2-cycle elimination and adjacent-pair dominance, multipliers by
  deflected subgradient steps from the schedule's complementary-slackness
  prices, and elimination of the nodes and arcs that no schedule better
  than the incumbent can use (the nodes that alone cost more already when
  the network is built). Processing times are put on an integer
  grid (:func:`single_machine`): exactly when the data allow it (the
  OR-Library data are integers; the generator's are multiples of 0.1),
  otherwise rounded down, with due dates rounded up and weights down, which
  only lowers every schedule's cost, so the bound stays valid.
* **Several GPUs and/or arrival times**: the LP relaxation of the
  arc-time-indexed formulation by column generation
  (:mod:`bounds.hetero_colgen`; Pessoa, Uchoa, Poggi de Aragão and
  Rodrigues 2010): one pseudo-schedule per GPU class priced by dynamic
  programming, the bound valid at any stop; where no grid fits the data,
  the per-GPU Lagrangian relaxation of :mod:`bounds.hetero_multi`.
* Otherwise (the grid would be too fine to be practical) the trivial bound 0.

Examples
--------
>>> from instances import hetero
>>> pb = hetero.orlib_wt40(1)
>>> lower_bound(pb, time_limit=20) <= hetero.orlib_wt40_optimum(1)
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from bounds.hetero_subgradient import Relaxation, initial_multipliers, optimize
from bounds.hetero_dp import Grid, Successive, words
from bounds.hetero_compact import METHODS, optimize_grid
from bounds.hetero_ti import INF, Expired, tardiness_costs
from instances.hetero import HeteroProblem, Schedule
from instances import options as opt
from instances.options import known_options

__all__ = ["power_of_ten", "SingleMachine", "single_machine", "LagrangianBound", "lagrangian", "lower_bound",
           "MAX_HORIZON", "MAX_GRID_BYTES", "grid_bytes", "relax_grid",
           "repair_path"]

#: Largest number of grid steps of a single-machine horizon (finer data are rounded).
MAX_HORIZON = 20_000
#: Largest memory of one single-machine network (:func:`grid_bytes`).
MAX_GRID_BYTES = 1 << 30


@known_options
def power_of_ten(values: np.ndarray, top: int = 6) -> int | None:
    """Smallest ``10^k`` (``k <= top``) that makes every value an integer (up to float noise).

    The exact scale of decimal data (the bounds' grid and the integer models' resolution).

    Examples
    --------
    >>> power_of_ten([1.5, 2.25]), power_of_ten([1 / 3])
    (100, None)
    """
    values = np.asarray(values, dtype=float)
    for k in range(top + 1):
        scaled = values * 10 ** k
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 10 ** k
    return None


@dataclass(frozen=True)
class SingleMachine:
    """A problem that is one machine with a common start, on an integer grid.

    Attributes
    ----------
    tasks
        Problem indices of the schedulable tasks; model job ``j`` is task ``tasks[j]``.
    gpu
        Index of the one GPU they all run on.
    p, w, d
        Integer processing times (``>= 1``), weights and due dates of the
        model, on a grid of ``time_unit`` user time units and ``weight_unit``
        user weight units, due dates measured from ``start``.
    start
        The common arrival time (the machine starts then).
    exact
        Whether the grid holds the user's data exactly; then every schedule's
        model cost is exactly its user cost divided by :attr:`cost_unit`.
        Otherwise model costs are never above the user costs (a relaxation).
    dropped, dropped_cost
        On an inexact grid, tasks too short for one grid step are left out of
        the model (the others only finish earlier without them) and priced at
        their cheapest possible cost, ``dropped_cost`` in user units in total.
    """

    tasks: np.ndarray
    gpu: int
    p: np.ndarray
    w: np.ndarray
    d: np.ndarray
    start: float
    time_unit: float
    weight_unit: float
    exact: bool
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dropped_cost: float = 0.0

    @property
    def n(self) -> int:
        return len(self.p)

    @property
    def horizon(self) -> int:
        return int(self.p.sum())

    @property
    def cost_unit(self) -> float:
        """User cost of one model cost unit."""
        return self.time_unit * self.weight_unit

    def costs(self) -> np.ndarray:
        return tardiness_costs(self.p, self.w, self.d)

    def model_cost(self, sequence: Sequence[int]) -> int:
        """Model cost of a sequence of model jobs."""
        seq = np.asarray(sequence, dtype=np.int64)
        C = np.cumsum(self.p[seq])
        return int(np.sum(self.w[seq] * np.maximum(0, C - self.d[seq])))

    def sequence_of(self, problem: HeteroProblem, schedule: Schedule) -> list[int]:
        """Model job sequence of a schedule of the problem (by start time)."""
        pos = {int(t): j for j, t in enumerate(self.tasks)}
        seq = schedule.sequences(problem)[self.gpu]
        return [pos[i] for i in seq if i in pos]


@known_options
def single_machine(problem: HeteroProblem, max_horizon: int = MAX_HORIZON) -> SingleMachine | None:
    """The integer single-machine form of ``problem``, or ``None`` when it is
    not one machine with a common arrival time (or has no schedulable task).

    The time grid is the coarsest power of ten that holds the run times and
    the due dates (relative to the start) exactly, if the horizon stays
    within ``max_horizon`` steps; otherwise the finest grid that does, with
    run times rounded down and due dates up. Weights likewise (exact
    decimals up to 10^-6, else rounded down to 10^-6).

    Examples
    --------
    >>> from instances import hetero
    >>> sm = single_machine(hetero.orlib_wt40(1))
    >>> sm.n, sm.horizon, sm.exact, sm.time_unit
    (40, 2065, True, 1.0)
    """
    ok = problem.eligible.any(axis=1)
    tasks = np.flatnonzero(ok)
    if len(tasks) == 0:
        return None
    usable = np.flatnonzero(problem.eligible[tasks].any(axis=0))
    if len(usable) != 1:
        return None
    g = int(usable[0])
    a = problem.arrival[tasks]
    if np.ptp(a) > 0:
        return None
    start = float(a[0])
    p = problem.p[tasks, g]
    d = problem.deadline[tasks] - start
    w = problem.weight[tasks]
    exact = True
    dropped = np.zeros(0, dtype=np.int64)
    dropped_cost = 0.0
    R = power_of_ten(np.concatenate([p, d]))
    if R is None or np.rint(p * R).sum() > max_horizon:
        exact = False
        R = max_horizon / p.sum()
        short = np.floor(p * R + 1e-9) < 1
        if short.all():
            return None
        if short.any():
            # each is at least as late as its own run time; the rest finish no later without them
            dropped = tasks[short]
            dropped_cost = float(np.sum(w[short] * np.maximum(0.0, p[short] - d[short])))
            tasks, p, d, w = tasks[~short], p[~short], d[~short], w[~short]
    if exact:
        P = np.rint(p * R).astype(np.int64)
        D = np.rint(d * R).astype(np.int64)
    else:
        P = np.floor(p * R + 1e-9).astype(np.int64)
        D = np.ceil(d * R - 1e-9).astype(np.int64)
    Rw = power_of_ten(w)
    if Rw is None:
        exact = False
        Rw = 10 ** 6
        W = np.floor(w * Rw + 1e-9).astype(np.int64)
    else:
        W = np.rint(w * Rw).astype(np.int64)
    if (W.astype(float) * (P.sum() + np.abs(D).max())).max(initial=0) > 2 ** 50 / max(1, len(P)):
        return None  # model costs would lose integrality in floating point
    return SingleMachine(tasks, g, P, W, D, start, 1.0 / R, 1.0 / Rw, exact, dropped, dropped_cost)


#: Passes without a better bound after which the grid's subgradient step halves.
GRID_PATIENCE = 12
#: Forward passes of the first stage (:class:`bounds.hetero_dp.Successive`) per job.
FIRST_STAGE_PASSES = 3


@known_options
def relax_grid(net: Grid, upper: float, sequence, *, deadline: float | None = None,
               max_iter: int = 300, expand: float = 1.0, improve=None, restarts: int = 0,
               slower: float = 1.0, min_scale: float = 1e-4, improve_every: int = 50,
               level_gap: float | None = None, method: str = "subgradient") -> Relaxation:
    """Multipliers of the grid's relaxation in two stages (Tanaka, Fujikuma & Araki 2009, Sec. 4).

    First the cheap relaxation without the adjacency and 2-cycle rules
    (:class:`~bounds.hetero_dp.Successive`, ``O(nT)`` a pass) from the
    schedule's prices, then the grid's own relaxation with elimination from
    its multipliers (or from the schedule's prices, if the grid's bound is
    higher there), both by :func:`~bounds.hetero_subgradient.optimize`
    towards ``upper`` (the cost of ``sequence``; ``expand``: the grid stage's
    step growth on a better bound, see :class:`~bounds.hetero_subgradient.StepScale`).
    The first stage's bound is valid too; it is returned only when it proves
    ``upper`` optimal. ``improve`` (a relaxed path to the cost of a schedule
    built from it, or ``None``) is tried on the first stage's path, and the
    grid stage calls it as :func:`~bounds.hetero_subgradient.optimize` says;
    ``restarts``, ``slower``, ``min_scale``, ``improve_every`` and
    ``level_gap`` are that stage's options of the same name. The grid
    stage's passes run over the live states only once the eliminations
    have reduced the grid (:class:`~bounds.hetero_compact.Compact`: the same
    passes, each over the live states and arcs only). ``method`` chooses
    the grid stage's search (:func:`~bounds.hetero_compact.optimize_grid`):
    with ``"bundle"`` the proximal bundle method of
    :mod:`bounds.hetero_bundle`, which has no step rule, so ``expand``,
    ``restarts``, ``slower``, ``min_scale`` and ``level_gap`` apply to the
    subgradient only.
    """
    opt.integer(max_iter, "max_iter", lo=0)
    method = opt.choice(method, METHODS, "method")
    first = optimize(Successive(net), upper, sequence, deadline=deadline,
                     max_iter=FIRST_STAGE_PASSES * net.n, eliminate_every=0)
    better = None if improve is None or first.proved else improve(first.path)
    upper = upper if better is None else better
    if first.proved or (deadline is not None and time.perf_counter() >= deadline):
        first.network = net   # its bound is valid too (a weaker relaxation of the same grid)
        return first
    # on instances with few late jobs the cheap relaxation's multipliers can be worse than the schedule's prices
    t0 = time.perf_counter()
    at_first = net.forward(first.mu).bound
    t_pass = time.perf_counter() - t0
    if deadline is not None and time.perf_counter() + 2 * t_pass >= deadline:
        first.network, first.bound = net, max(first.bound, min(at_first, upper) if net.capped else at_first)
        return first
    prices = initial_multipliers(net, sequence)
    start = first.mu if at_first >= net.forward(prices).bound else prices
    # the passes over the live states only, once the eliminations have reduced the grid (the same relaxation)
    steps = {} if method == "bundle" else dict(patience=GRID_PATIENCE, expand=expand, restarts=restarts,
                                                   slower=slower, min_scale=min_scale, level_gap=level_gap)
    return optimize_grid(net, upper, method=method, deadline=deadline, max_iter=max_iter, mu0=start,
                         improve=improve, improve_every=improve_every, **steps)


@known_options
def grid_bytes(sm: SingleMachine) -> int:
    """Memory of the network of ``sm`` (:class:`bounds.hetero_dp.Grid`): a bit set
    over the jobs per state, the costs and three label arrays of a pass.

    Examples
    --------
    >>> from instances import hetero
    >>> grid_bytes(single_machine(hetero.orlib_wt40(1))) // 2 ** 20
    3
    """
    states = (sm.horizon + 1) * sm.n
    return states * (8 * words(sm.n) + 8 + 24 + 1)


@known_options
def repair_path(sm: SingleMachine, path) -> list[int]:
    """A schedule from a relaxed path (``(job, end time)`` pairs): first
    occurrences in path order, the missing jobs by due date, then adjacent
    interchanges while they help.

    Examples
    --------
    >>> from instances import hetero
    >>> sm = single_machine(hetero.orlib_wt40(1))
    >>> sorted(repair_path(sm, [(3, 10), (3, 20), (1, 30)])) == list(range(40))
    True
    """
    seen: list[int] = []
    got = np.zeros(sm.n, dtype=bool)
    for j, _ in path:
        if not got[j]:
            got[j] = True
            seen.append(int(j))
    rest = sorted(np.flatnonzero(~got).tolist(), key=lambda j: (sm.d[j], j))
    return _adjacent_descent(sm, seen + rest)


def _adjacent_descent(sm: SingleMachine, seq: list[int]) -> list[int]:
    seq = list(seq)
    # plain ints: numpy scalars made each comparison several times slower (a descent took 4-14 ms at n = 50)
    p, w, d = sm.p.tolist(), sm.w.tolist(), sm.d.tolist()
    improved = True
    while improved:
        improved = False
        t = 0
        for i in range(len(seq) - 1):
            a, b = seq[i], seq[i + 1]
            ta, tb = t + p[a], t + p[a] + p[b]
            old = w[a] * max(0, ta - d[a]) + w[b] * max(0, tb - d[b])
            new = w[b] * max(0, t + p[b] - d[b]) + w[a] * max(0, tb - d[a])
            if new < old:
                seq[i], seq[i + 1] = b, a
                improved = True
            t += p[seq[i]]
    return seq


def _priority_sequences(sm: SingleMachine) -> list[list[int]]:
    n = sm.n
    p, w, d = sm.p.astype(float), sm.w.astype(float), sm.d.astype(float)
    orders = [list(np.lexsort((np.arange(n), d))), list(np.lexsort((np.arange(n), -(w / p))))]
    pbar = p.mean()
    for k in (0.5, 2.0):
        left, t, order = list(range(n)), 0.0, []
        while left:
            L = np.array(left)
            score = w[L] / p[L] * np.exp(-np.maximum(0.0, d[L] - p[L] - t) / (k * pbar))
            j = int(L[int(np.argmax(score))])
            order.append(j)
            left.remove(j)
            t += p[j]
        orders.append(order)
    return [_adjacent_descent(sm, [int(j) for j in o]) for o in orders]


@dataclass
class LagrangianBound:
    """What :func:`lagrangian` found.

    Attributes
    ----------
    bound
        Lower bound in the user's cost units (valid for the user's data).
    model_bound
        The same in model units (an integer: model costs are integers).
    upper, sequence
        Model cost and model job sequence of the best schedule known.
    proved
        ``bound`` equals the best known schedule's cost: it is optimal
        (only claimed when the grid is exact).
    relaxation
        The :class:`~bounds.hetero_subgradient.Relaxation` (network, multipliers).
    sm
        The :class:`SingleMachine` data.
    """

    bound: float
    model_bound: float
    upper: float
    sequence: list[int]
    proved: bool
    relaxation: Relaxation | None
    sm: SingleMachine
    info: dict[str, Any] = field(default_factory=dict)


@known_options
def lagrangian(problem: HeteroProblem, upper: Schedule | Sequence[int] | None = None, *,
               time_limit: float | None = None, max_iter: int = 300, sm: SingleMachine | None = None,
               deadline: float | None = None) -> LagrangianBound | None:
    """Time-indexed Lagrangian bound of a single-machine problem (``None`` if it is not one).

    Parameters
    ----------
    problem
        The problem (see :func:`single_machine` for when it applies).
    upper
        A good schedule (e.g. from :func:`heuristics.hetero.ils`), or a
        sequence of model jobs: its cost is the target of the multiplier
        steps and the threshold of the elimination. Without one, constructive
        rules and a Lagrangian heuristic supply it.
    time_limit, max_iter
        Budget of the multiplier optimisation (seconds, forward passes).
    deadline
        A ``time.perf_counter`` value to stop at (instead of ``time_limit``).
    """
    time_limit = opt.time_limit(time_limit)
    opt.integer(max_iter, "max_iter", lo=0)
    t0 = time.perf_counter()
    if deadline is None and time_limit is not None:
        deadline = t0 + time_limit
    sm = single_machine(problem) if sm is None else sm
    if sm is None:
        return None
    if upper is None:
        seqs = _priority_sequences(sm)
    elif isinstance(upper, Schedule):
        seqs = [sm.sequence_of(problem, upper)]
    else:
        seqs = [list(upper)]
    costs = [sm.model_cost(s) for s in seqs]
    k = int(np.argmin(costs))
    seq, ub = [int(j) for j in seqs[k]], float(costs[k])
    info: dict[str, Any] = {"grid": sm.time_unit, "weight_grid": sm.weight_unit, "exact_grid": sm.exact}
    if ub == 0:
        return LagrangianBound(sm.dropped_cost, 0.0, 0.0, seq, sm.exact, None, sm, info)
    size = grid_bytes(sm)
    if size > MAX_GRID_BYTES:
        info["skipped"] = f"network too large ({size / 2 ** 20:.0f} MiB)"
        return LagrangianBound(sm.dropped_cost, 0.0, ub, seq, False, None, sm, info)
    try:
        # model costs are integers: no schedule better than the incumbent uses a node dearer than ub - 1/2
        net = Grid(sm.p, sm.costs(), weights=sm.w, deadline=deadline, max_cost=ub - 0.5)
    except Expired:
        info["skipped"] = "time limit reached while building the network"
        return LagrangianBound(sm.dropped_cost, 0.0, ub, seq, False, None, sm, info)
    relax = relax_grid(net, ub, seq, deadline=deadline, max_iter=max_iter)
    if not relax.proved and upper is None:
        # the relaxed path often repairs into a better schedule than the rules gave
        s2 = repair_path(sm, relax.path)
        c2 = sm.model_cost(s2)
        if c2 < ub:
            seq, ub = s2, float(c2)
    # early multipliers can give a negative relaxation value; tardiness never is
    model_bound = max(0.0, min(float(math.ceil(relax.bound - 1e-6 * max(1.0, abs(relax.bound)))), ub))
    info.update(evaluations=relax.evaluations, nodes=net.N, arcs=net.arcs(),
                seconds=time.perf_counter() - t0)
    proved = sm.exact and model_bound >= ub
    return LagrangianBound(model_bound * sm.cost_unit + sm.dropped_cost, model_bound, ub, seq, proved,
                           relax, sm, info)


@known_options
def lower_bound(problem: HeteroProblem, upper: Schedule | None = None, *, time_limit: float | None = 10.0,
                max_iter: int = 300) -> float:
    """A lower bound on the total weighted tardiness of ``problem``, valid for its data.

    Parameters
    ----------
    problem
        Any :class:`~instances.hetero.HeteroProblem`.
    upper
        A good schedule of it (optional; makes the bound stronger and faster).
    time_limit, max_iter
        Budget of the multiplier optimisation (for several GPUs or
        arrivals: up to ``10 * max_iter`` column-generation passes).

    Examples
    --------
    >>> from instances import hetero
    >>> lower_bound(hetero.HeteroProblem((), (hetero.GPU("g", 1.0),)))
    0.0
    """
    time_limit = opt.time_limit(time_limit)
    opt.integer(max_iter, "max_iter", lo=0)
    if problem.n == 0 or not problem.eligible.any():
        return 0.0
    # the last pass is timed from the ones before it, and a forced exact pass or a set-up step can end some
    # milliseconds past the deadline (10-50 ms at n = 100 under the test suite's load): a reserve of a fifth of
    # a short limit (0.1 s from 0.5 s on) keeps the return within it
    deadline = None if time_limit is None else time.perf_counter() + time_limit - min(0.1, 0.2 * time_limit)
    res = lagrangian(problem, upper, max_iter=max_iter, deadline=deadline)
    if res is not None:
        return float(res.bound)
    from bounds.hetero_colgen import colgen_bound

    # the master LP needs many more passes than the subgradient (it starts degenerate)
    # a bound alone: the networks also fixed against the restricted master's value (a tentative upper bound)
    cg = colgen_bound(problem, upper, deadline=deadline, max_iter=10 * max_iter, tentative=True)
    if cg is not None:
        return float(cg.bound)
    from bounds.hetero_multi import multi_bound

    return float(multi_bound(problem, upper, deadline=deadline, max_iter=max_iter).bound)
