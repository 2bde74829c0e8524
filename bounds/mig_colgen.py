"""A column-generation lower bound for MIG scheduling with reconfiguration (block patterns).

The problem is the FAR paper's (Sec. 2.2; rules 1-6 of
:mod:`instances.mig_check`). The bound is the linear relaxation of a
Dantzig-Wolfe decomposition of the GPU into *blocks* of slices, in the
spirit of Gilmore and Gomory's cutting-stock columns ("A linear programming
approach to the cutting-stock problem", Operations Research 9, 1961): for a
trial makespan ``T`` a column is a whole pattern of one block. By default the
blocks are the slices of the root's children (A100: slices 0-3 and 4-6);
``blocks="slices"`` makes every slice a block.

Block patterns
    The placements occupying slice ``k`` form a chain of the repartitioning
    tree (laminar family, Fig. 4). A pattern of block ``B`` is a set of
    (task, placement) pairs over the placements occupying a slice of ``B``,
    each task at most once, such that every slice ``k`` of ``B`` has *load*
    at most ``T``: the times of its tasks on placements occupying ``k``,
    plus one create and one destroy per such placement used, less the
    largest of those destroys. In every schedule of makespan ``T`` the
    sessions covering ``k`` never overlap, each but the last on ``k`` is
    destroyed before the next one is created, and every task ends by ``T``;
    so their creates, tasks and destroys (the last one's destroy excepted)
    fit in ``[0, T]``: the tasks a schedule puts on ``B``'s placements form a
    pattern (a placement with several sessions only adds load).

Master (``T`` fixed)
    ``lam[B, P] >= 0`` per block and pattern, and ``x[i, p] >= 0`` for each
    placement ``p`` *spanning* several blocks (an ancestor of them, e.g. the
    whole GPU)::

        sum_{B, P holding (i, p), p inside B} lam[B, P] + sum_{p spanning} x[i, p] = 1   every task
        sum_P lam[B, P] = 1                                                             every block
        x[i, p] = sum_{P of B holding (i, p)} lam[B, P]                 every spanning p, B it covers

    Every schedule of makespan at most ``T`` gives an integer solution, so if
    this LP is infeasible then ``OPT > T``. Feasibility is decided on the
    phase-one LP (each task may stay uncovered at cost 1).

Certificate of infeasibility (why a stopped run stays valid)
    For any multipliers ``alpha[i]`` of the task rows and ``beta[B, i, p]``
    of the linking rows, Lagrangian duality of the phase-one LP gives::

        phase-one optimum >= sum_i min(1, alpha[i], min_{p spanning} sum_B beta[B, i, p])
                             - sum_B max_P profit_B(P)

    with ``profit_B(P) = sum alpha[i]`` over its pairs inside ``B`` plus
    ``sum beta[B, i, p]`` over its spanning pairs, the maximum over every
    pattern of ``B``. The pricing returns an upper bound on that maximum
    (below), so the right side is a valid lower bound whichever multipliers
    are used (the master's duals, or those smoothed towards an earlier
    point); when it is positive, ``T`` is proven infeasible. Only such proofs
    raise the bound; a search stopped early (time limit) proves nothing about
    the ``T`` it was testing.

Pricing (:mod:`bounds.mig_colgen_pricing`)
    One-slice blocks: an exact dynamic program (a multiple-choice knapsack
    whose capacity depends on the placements used). Larger blocks: CP-SAT on
    the block's pattern model with times rounded down and profits rounded up
    (a relaxation, so its proven bound bounds the true maximum), HiGHS on
    the float model when CP-SAT proves nothing quickly. Only pairs with a
    positive profit can raise the maximum.

Search on ``T``
    The LP's feasibility is monotone in ``T``. Between ``lower`` (a valid
    bound) and ``upper`` (a schedule's makespan; without one the search
    gallops upwards from ``lower`` first), it bisects; the bound is the
    largest ``T`` proven infeasible (at least ``lower``).

``docs/models/mig_colgen.md`` has the measured gaps and the design decisions.

Examples
--------
>>> from instances import mig
>>> p = mig.generate(n=6, gpu="A100", seed=1)
>>> rep = colgen_bound(p, lower=1.0, time_limit=20)
>>> rep.bound >= 1.0 and rep.columns > 0
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from instances.errors import InstanceError, OptionError
from instances.gpus import GPUSpec
from instances.mig_problem import Problem, Workload
from instances.options import Deadline, known_options
from instances import options as opt
from bounds.mig_colgen_pricing import BlockPricer, price_slice

__all__ = ["ColgenReport", "colgen_bound", "UNITS", "MAX_CHAIN"]

ProblemLike = Union[Problem, Workload]

#: Target number of time units in the makespan: pattern loads are rounded down to units of
#: ``1 / R`` seconds with R the power of two nearest ``UNITS / lower``.
UNITS = 2 ** 32
#: Longest chain of placements over one slice the pricing handles (its states are 2**chain).
MAX_CHAIN = 8
#: A phase-one certificate must exceed this (tasks count 1 each) to prove a makespan infeasible.
CERTIFICATE_MARGIN = 1e-6
#: Weight of the best certificate's multipliers in the smoothed duals the pricing sees.
SMOOTHING = 0.5
#: First relative step above ``lower`` of the search without an upper bound (doubled while infeasible).
GALLOP = 0.01


@dataclass
class ColgenReport:
    """The column-generation bound and how it was found.

    Attributes
    ----------
    bound
        Proven lower bound on the optimal makespan (seconds), at least ``lower``.
    lower
        The bound the search started from.
    infeasible
        Largest makespan proven infeasible for the master LP (``None``: none).
    feasible
        Smallest makespan at which the restricted master was feasible (the LP bound is below it;
        ``None``: none met).
    converged
        The search ended with ``feasible - infeasible`` within the tolerance.
    columns, pricing_calls, lp_solves, fallbacks
        Patterns generated, pricing problems solved, master LPs solved, and pricing problems
        CP-SAT did not prove within its short limit (then solved by HiGHS).
    lp_failures
        Master LPs HiGHS returned no optimum for, even from scratch; the first one stops the
        search (as its time limit would).
    seconds
        Wall seconds: ``total``, ``lp`` (master solves), ``pricing``.
    steps
        One ``(T, verdict, rounds)`` per makespan tested; verdict ``infeasible``,
        ``feasible`` or ``stopped``.
    """

    bound: float
    lower: float
    infeasible: float | None = None
    feasible: float | None = None
    converged: bool = False
    columns: int = 0
    pricing_calls: int = 0
    lp_solves: int = 0
    fallbacks: int = 0
    lp_failures: int = 0
    seconds: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)


def _power_of_two(x: float) -> float:
    return 2.0 ** round(math.log2(x))


def _blocks(gpu: GPUSpec, how: str) -> list[list[int]]:
    """The slices split into blocks: one per slice, those of each two-slice placement (and the rest
    alone), or those of each child of the root."""
    slices = sorted({k for p in gpu.placements for k in p.slices})
    if how == "slices":
        return [[k] for k in slices]
    if how == "pairs":
        out = [sorted(p.slices) for p in gpu.placements if len(p.slices) == 2]
    else:
        out = [sorted(c.slices) for c in gpu.children(gpu.root)]
    covered = {k for b in out for k in b}
    return out + [[k] for k in slices if k not in covered]


class _Data:
    """Blocks, the chains of placements over each slice, every (task, placement) pair and its time."""

    def __init__(self, problem: Problem, R: float, blocks: str) -> None:
        gpu: GPUSpec = problem.gpu
        self.R = R
        self.n = problem.n
        self.places = list(gpu.placements)
        self.slices = sorted({k for p in self.places for k in p.slices})
        self.chain: dict[int, list[int]] = {}
        for k in self.slices:
            ids = sorted((j for j, p in enumerate(self.places) if k in p.slices),
                         key=lambda j: -len(self.places[j].slices))
            for a, b in zip(ids, ids[1:]):
                if not self.places[b].slices <= self.places[a].slices:
                    raise InstanceError(f"placements {self.places[a].name} and {self.places[b].name} overlap "
                                        "without nesting; the slice patterns need a laminar GPU", field="gpu")
            if len(ids) > MAX_CHAIN:
                raise OptionError(f"slice {k} lies in {len(ids)} placements; the pricing handles at most "
                                  f"{MAX_CHAIN}", field="gpu")
            self.chain[k] = ids
        self.blocks = _blocks(gpu, blocks)
        # a placement inside one block is covered by that block's patterns alone; one spanning
        # several blocks (an ancestor of them) has its own x column, linked to each block's patterns
        self.within: dict[int, int] = {}
        for j, p in enumerate(self.places):
            for b, slices in enumerate(self.blocks):
                if p.slices <= set(slices):
                    self.within[j] = b
        self.overlap = {j: [b for b, slices in enumerate(self.blocks) if p.slices & set(slices)]
                        for j, p in enumerate(self.places)}
        # symmetric sibling subtrees lying inside one block (where a task earns alike on every placement)
        index = {p.key(): j for j, p in enumerate(self.places)}
        self.symmetric: dict[int, list[tuple[list[int], list[int]]]] = {}
        for a, b in gpu.symmetric_subtrees():
            ja, jb = [index[p.key()] for p in a], [index[p.key()] for p in b]
            homes = {self.within.get(j) for j in ja + jb}
            if len(homes) == 1 and None not in homes:
                self.symmetric.setdefault(homes.pop(), []).append((ja, jb))
        self.time: dict[tuple[int, int], float] = {}
        for i, task in enumerate(problem.tasks):
            for j, p in enumerate(self.places):
                if p.size in task.times:
                    self.time[i, j] = task.times[p.size]
        self.units = {key: math.floor(t * R) for key, t in self.time.items()}
        self.create = {j: gpu.create_time[p.size] for j, p in enumerate(self.places)}
        self.destroy = {j: gpu.destroy_time[p.size] for j, p in enumerate(self.places)}
        # per slice: overhead units of each set of used chain placements (bit b = chain[k][b])
        self.overhead: dict[int, list[int]] = {}
        for k, ids in self.chain.items():
            L = len(ids)
            ov = [0] * (1 << L)
            for m in range(1, 1 << L):
                used = [ids[b] for b in range(L) if m >> b & 1]
                keep = max(used, key=lambda j: self.destroy[j])  # the last session, not destroyed
                # a sum of floors is at most the floor of the sum: the rounding never adds load
                ov[m] = sum(math.floor(self.create[j] * R) for j in used) + \
                    sum(math.floor(self.destroy[j] * R) for j in used if j != keep)
            self.overhead[k] = ov


class _Master:
    """The phase-one restricted master LP on HiGHS (rows fixed, pattern columns added)."""

    def __init__(self, data: _Data) -> None:
        import highspy  # here, not at the top: importing bounds.mig stays light

        from bounds.highs_lp import run_lp, silent_highs

        self.data = data
        self.inf = highspy.kHighsInf
        self.optimal = highspy.HighsModelStatus.kOptimal
        self.run_lp = run_lp
        h = silent_highs()
        self.h = h
        inf = highspy.kHighsInf
        n = data.n
        self.conv = {b: n + b for b in range(len(data.blocks))}
        self.link: dict[tuple[int, int, int], int] = {}
        rows = n + len(data.blocks)
        for (i, j) in data.time:
            if j not in data.within:
                for b in data.overlap[j]:
                    self.link[b, i, j] = rows
                    rows += 1
        h.addRows(rows, np.zeros(rows), np.zeros(rows), 0, np.array([], dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([], dtype=np.float64))
        lo = np.zeros(rows)
        lo[:n + len(data.blocks)] = 1.0
        h.changeRowsBounds(rows, np.arange(rows, dtype=np.int32), lo, lo.copy())
        for i in range(n):  # the phase-one slack of task i
            h.addCol(1.0, 0.0, inf, 1, np.array([i], dtype=np.int32), np.array([1.0]))
        for (i, j) in data.time:
            if j not in data.within:
                idx = [i] + [self.link[b, i, j] for b in data.overlap[j]]
                h.addCol(0.0, 0.0, inf, len(idx), np.array(idx, dtype=np.int32), np.ones(len(idx)))
        self.columns: list[tuple[int, float, tuple]] = []  # (block, load in seconds, pattern)
        self.seen: set[tuple[int, tuple]] = set()
        self.first = h.getNumCol()
        for b in range(len(data.blocks)):
            self.add(b, 0.0, ())

    def add(self, b: int, load: float, pattern: tuple) -> bool:
        if (b, pattern) in self.seen:
            return False
        self.seen.add((b, pattern))
        idx, val = [self.conv[b]], [1.0]
        for i, j in pattern:
            if j in self.data.within:
                idx.append(i)
                val.append(1.0)
            else:
                idx.append(self.link[b, i, j])
                val.append(-1.0)
        self.h.addCol(0.0, 0.0, self.inf, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        self.columns.append((b, load, pattern))
        return True

    def limit(self, T: float) -> None:
        """Allow only the patterns whose load fits in ``T``."""
        inf = self.inf
        ups = np.array([inf if load <= T else 0.0 for _, load, _ in self.columns])
        cols = np.arange(self.first, self.first + len(self.columns), dtype=np.int32)
        self.h.changeColsBounds(len(cols), cols, np.zeros(len(cols)), ups)

    def solve(self) -> tuple[float, list[float], dict, list[float]] | None:
        """Phase-one value, the cover duals, the linking multipliers ``-dual`` and the block duals.

        ``None`` when HiGHS returns no optimum (twice, :func:`bounds.highs_lp.run_lp`).
        """
        if self.run_lp(self.h) != self.optimal:
            return None
        dual = self.h.getSolution().row_dual
        value = self.h.getInfo().objective_function_value
        n = self.data.n
        return (value, list(dual[:n]), {key: -dual[r] for key, r in self.link.items()},
                [dual[r] for r in self.conv.values()])


def _profits(data: _Data, b: int, alpha: list[float], beta: dict) -> dict[tuple[int, int], float]:
    """What each (task, placement) pair earns in a pattern of block ``b``."""
    out = {}
    places = {j for k in data.blocks[b] for j in data.chain[k]}
    for (i, j) in data.time:
        if j in places:
            out[i, j] = alpha[i] if j in data.within else beta[b, i, j]
    return out


def _certificate(data: _Data, alpha: list[float], beta: dict, maxima: list[float]) -> float:
    """The Lagrangian lower bound on the phase-one optimum (module docstring).

    ``maxima`` are upper bounds on the blocks' best profits under ``alpha``; lowering a task's
    ``alpha`` to what the slack and the x columns allow lowers no block's maximum.
    """
    best = [min(1.0, a) for a in alpha]
    for (i, j) in data.time:
        if j not in data.within:
            best[i] = min(best[i], sum(beta[b, i, j] for b in data.overlap[j]))
    return sum(best) - sum(maxima)


class _Pricing:
    """Each block's pricing: the dynamic program for one slice, the MILP for more."""

    def __init__(self, data: _Data) -> None:
        self.data = data
        self.mip = {b: BlockPricer(slices, data.chain, data.time, data.create, data.destroy,
                                   symmetric=data.symmetric.get(b, []))
                    for b, slices in enumerate(data.blocks) if len(slices) > 1}

    def price(self, b: int, profit: dict, T: float, deadline: Deadline, exact: bool = True) -> tuple[float, list]:
        data = self.data
        if b in self.mip:
            return self.mip[b].price(profit, T, deadline.remaining(), exact=exact)
        k = data.blocks[b][0]
        found = price_slice(data.n, data.chain[k], data.units, data.overhead[k], profit, math.floor(T * data.R))
        return (found[0][0] if found else 0.0), [(v, p, load / data.R) for v, p, load in found]


def _mix(theta: float, center: tuple, alpha: list[float], beta: dict) -> tuple[list[float], dict]:
    ac, bc = center
    return ([theta * x + (1 - theta) * y for x, y in zip(ac, alpha)],
            {key: theta * bc[key] + (1 - theta) * v for key, v in beta.items()})


def _test(master: _Master, pricing: _Pricing, data: _Data, T: float, deadline: Deadline, rep: ColgenReport,
          clock: dict) -> str:
    """Column generation at makespan ``T``: ``infeasible`` (proven), ``feasible`` or ``stopped``.

    Pricing runs at the master's duals smoothed towards the multipliers of the best certificate so
    far (Wentges' smoothing, "Weighted Dantzig-Wolfe decomposition for linear mixed-integer
    programming", ITOR 4, 1997): any multipliers give a valid certificate, so the smoothed ones
    may prove infeasibility themselves; a smoothed round that finds no column prices again at the
    master's own duals.
    """
    master.limit(T)
    rounds = 0
    center, best = None, -math.inf
    while True:
        rounds += 1
        t0 = time.perf_counter()
        solved = master.solve()
        clock["lp"] += time.perf_counter() - t0
        rep.lp_solves += 1
        if solved is None:
            # no LP value, so no verdict: the search stops as at its deadline, with what it proved
            rep.lp_failures += 1
            rep.steps.append((T, "stopped", rounds))
            return "stopped"
        value, alpha, beta, conv = solved
        if value <= 1e-9:
            rep.steps.append((T, "feasible", rounds))
            return "feasible"
        t0 = time.perf_counter()
        added = 0
        # quick passes (short CP-SAT runs: columns, and bounds that are valid if loose) first; the
        # exact pass only when they find no column
        passes = [(SMOOTHING, False), (0.0, False)] if center is not None else [(0.0, False)]
        if pricing.mip:
            passes.append((0.0, True))
        for theta, exact in passes:
            if deadline.expired():
                clock["pricing"] += time.perf_counter() - t0
                rep.steps.append((T, "stopped", rounds))
                return "stopped"
            a_s, b_s = _mix(theta, center, alpha, beta) if theta else (alpha, beta)
            maxima = []
            for b in range(len(data.blocks)):
                bound, found = pricing.price(b, _profits(data, b, a_s, b_s), T, deadline, exact)
                rep.pricing_calls += 1
                maxima.append(bound)
                if found:
                    real = _profits(data, b, alpha, beta)
                    # a pattern joins the master when its reduced cost at the master's duals is negative
                    for _, pattern, load in found:
                        if sum(real[key] for key in pattern) > -conv[b] + 1e-9 and master.add(b, load, pattern):
                            added += 1
            cert = _certificate(data, a_s, b_s, maxima)
            if cert > best:
                center, best = (a_s, b_s), cert
            if cert > CERTIFICATE_MARGIN:
                clock["pricing"] += time.perf_counter() - t0
                rep.steps.append((T, "infeasible", rounds))
                return "infeasible"
            if added:
                break
        clock["pricing"] += time.perf_counter() - t0
        if not added and deadline.expired():
            rep.steps.append((T, "stopped", rounds))
            return "stopped"
        if not added:
            # converged without a proof: the phase-one value is (numerically) zero
            rep.steps.append((T, "feasible", rounds))
            return "feasible"
        master.limit(T)


@known_options
def colgen_bound(problem: ProblemLike, time_limit: float | None = 60.0, lower: float | None = None,
                 upper: float | None = None, tolerance: float = 1e-4, blocks: str = "halves") -> ColgenReport:
    """The column-generation bound (module docstring), searched over the makespan.

    Parameters
    ----------
    problem
        A batch or a workload; release times are dropped (every schedule with them is one
        without, so the bound stays valid).
    time_limit
        Seconds for the whole search (``None``: until converged). Only makespans proven
        infeasible before it raise the bound.
    lower
        A valid lower bound to start from (default: the longest shortest task time).
    upper
        Optional makespan of a known schedule: the search never tests above it.
    tolerance
        Relative width of the final bracket ``[infeasible, feasible]``.
    blocks
        ``"halves"``: one block per child of the root placement (A100: slices 0-3 and 4-6);
        ``"pairs"``: one per two-slice placement (A100: 0-1, 2-3, 4-5), the other slices alone;
        both priced by CP-SAT (HiGHS as fallback). ``"slices"``: one block per slice, priced by
        a dynamic program.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}),
    ...                         mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> rep = colgen_bound(p, lower=1.0)
    >>> 2.5 < rep.bound <= 2.74  # two 2@ sessions side by side after their creates
    True
    """
    deadline = Deadline(opt.time_limit(time_limit))
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance < 1:
        raise OptionError(f"must be a number in (0, 1), got {tolerance!r}", field="tolerance")
    opt.choice(blocks, ("halves", "pairs", "slices"), "blocks")
    start = time.perf_counter()
    batch = Problem(problem.gpu, problem.tasks)
    if lower is None:
        lower = max((min(t.times.values()) for t in batch.tasks), default=0.0)
    lower = float(lower)
    rep = ColgenReport(bound=lower, lower=lower)
    if batch.n == 0 or lower <= 0:
        return rep
    clock = {"lp": 0.0, "pricing": 0.0}
    data = _Data(batch, _power_of_two(UNITS / lower), blocks)
    master = _Master(data)
    pricing = _Pricing(data)
    lo, hi = lower, upper
    step = GALLOP
    T = lower * (1 + step) if upper is None else (lower + upper) / 2
    while not deadline.expired():
        if hi is not None and (hi - lo) <= tolerance * hi:
            rep.converged = True
            break
        verdict = _test(master, pricing, data, T, deadline, rep, clock)
        if verdict == "stopped":
            break
        if verdict == "infeasible":
            lo = max(lo, T)
            rep.infeasible = T
            if hi is None:
                step *= 2
                T = lower * (1 + step)
            else:
                T = (lo + hi) / 2
        else:
            hi = T if hi is None else min(hi, T)
            rep.feasible = hi
            T = (lo + hi) / 2
    rep.bound = max(lower, rep.infeasible or lower)
    rep.columns = len(master.columns) - len(data.blocks)
    rep.fallbacks = sum(p.fallbacks for p in pricing.mip.values())
    rep.seconds = {"total": time.perf_counter() - start, **clock}
    return rep
