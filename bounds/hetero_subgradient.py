"""Subgradient optimisation of the multipliers of the time-indexed Lagrangian relaxation.

The relaxation is the shortest path in :class:`bounds.hetero_ti.Network`
with arc costs ``cost[t, j] - mu_j``; ``L(mu) = (shortest path) + sum_j
mu_j`` bounds every schedule (Abdul-Razaq & Potts 1988; Tanaka, Fujikuma &
Araki 2009, Sec. 3-4). :func:`optimize` searches ``mu`` by deflected
subgradient steps (Camerini, Fratta & Maffioli 1975) towards a known
schedule's cost and eliminates what no cheaper schedule can use.

Examples
--------
>>> from bounds.hetero_ti import tardiness_costs
>>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
>>> optimize(Network(p, tardiness_costs(p, w, d)), 12.0, [0, 2, 1]).proved
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from bounds.hetero_ti import INF, Network
from instances import options as opt
from instances.options import known_options

__all__ = ["Relaxation", "StepScale", "TargetLevel", "optimize", "initial_multipliers", "deflected",
           "below_next_integer", "start_multipliers", "timed_pass", "improved_upper", "timed_elimination", "search_result"]

#: Relative tolerance of :func:`below_next_integer` for the rounding errors of float path values (at most 1/2).
INTEGRAL_TOL = 1e-6


@known_options
def below_next_integer(upper: float) -> float:
    """The threshold under which every schedule cheaper than ``upper`` stays, when costs are integers.

    With integer costs a schedule cheaper than ``upper`` (an integer)
    costs at most ``upper - 1``, so a path (or label) whose value exceeds
    ``upper - 1`` plus a tolerance for the rounding errors of float sums
    (``INTEGRAL_TOL`` of ``upper``, at most 1/2) belongs to no such
    schedule; equally a bound above it proves ``upper`` optimal, as its
    ceiling, less that tolerance, is ``upper``. Every threshold of the
    successive sublimation (Tanaka, Fujikuma & Araki 2009, Sec. 4: the
    eliminations and the stop at the incumbent) is taken there: half a unit
    lower than ``upper - 1/2``, so the search stops and the eliminations
    remove up to half a unit sooner.

    Examples
    --------
    >>> below_next_integer(100.0)
    99.0001
    >>> below_next_integer(1e7)
    9999999.5
    """
    return float(upper) - 1.0 + min(0.5, INTEGRAL_TOL * max(1.0, abs(float(upper))))


@dataclass
class Relaxation:
    """Outcome of :func:`optimize` (all values in the network's cost units).

    ``bound`` is valid for every schedule: the largest ``L(mu)`` seen, capped
    at ``upper`` once the network was reduced (see the module docstring).
    ``proved`` means ``bound >= upper``: the schedule of cost ``upper`` is
    optimal. ``mu`` are the multipliers of the best bound, ``path`` its
    relaxed path, ``evaluations`` the forward passes made.
    """

    network: Network
    mu: np.ndarray
    bound: float
    upper: float
    proved: bool
    path: list
    evaluations: int
    trace: list


@known_options
def initial_multipliers(net: Network, sequence, alpha: float = 1.0) -> np.ndarray:
    """Multipliers that price each job as in a good schedule: its cost there
    plus ``alpha`` times the delay its processing time causes to the late jobs
    after it (the marginal cost of time at its position).

    With ``alpha = 1`` these are the complementary-slackness prices of the
    time-indexed LP at the schedule (job price = own cost + time consumed
    times the price of time, the weight of the late jobs still to finish),
    which is why they start the subgradient close to the optimum.

    Examples
    --------
    >>> from bounds.hetero_ti import tardiness_costs
    >>> p, w, d = np.array([3, 2]), np.array([1, 2]), np.array([3, 2])
    >>> initial_multipliers(Network(p, tardiness_costs(p, w, d)), [0, 1]).tolist()
    [6.0, 6.0]
    """
    seq = np.asarray(sequence, dtype=np.int64)
    comp = np.cumsum(net.p[seq])
    c = net.cost[comp, seq]
    # slope w_j of a late job: a forward difference, backward at the horizon (nothing ends after T)
    t2 = np.where(comp < net.T, comp + 1, comp - 1)
    with np.errstate(invalid="ignore"):
        slope = (net.cost[t2, seq] - c) / (t2 - comp)
    late = np.where((c > 0) & np.isfinite(slope), slope, 0.0)
    after = np.cumsum(late[::-1])[::-1] - late
    mu = np.zeros(net.jobs)
    mu[seq] = c + alpha * net.p[seq] * after
    return mu


@known_options
def start_multipliers(net: Network, sequence=None, mu0: np.ndarray | None = None) -> np.ndarray:
    """A multiplier search's start: ``mu0`` (copied), else the prices of ``sequence``
    (:func:`initial_multipliers`), else zero."""
    if mu0 is not None:
        return np.asarray(mu0, dtype=float).copy()
    if sequence is not None:
        return initial_multipliers(net, sequence)
    return np.zeros(net.jobs)


@known_options
def timed_pass(net: Network, mu: np.ndarray):
    """One forward pass at ``mu``: the pass, its relaxed path (empty when no path is left) and its seconds."""
    now = time.perf_counter()
    fw = net.forward(mu)
    path = net.path(fw) if math.isfinite(fw.value) else []
    return fw, path, time.perf_counter() - now


@known_options
def improved_upper(improve, path, evals: int, improve_every: int, upper: float, integral: bool):
    """The incumbent and elimination threshold after a multiplier search's ``evals``-th pass: ``improve``
    (the relaxed path to the cost of a schedule, or None) is called after ``improve_every / 5`` and
    ``improve_every / 2`` passes, then every ``improve_every``; a cheaper schedule lowers ``upper``."""
    if improve is not None and path and (evals % improve_every == 0 or evals in (improve_every // 5,
                                                                               improve_every // 2)):
        better = improve(path)
        if better is not None and better < upper:
            upper = float(better)
    return upper, (below_next_integer(upper) if integral else upper)


@known_options
def timed_elimination(net: Network, mu: np.ndarray, theta: float, fw, deadline: float | None, t_pass: float,
                      t_elim: float) -> tuple[int, float]:
    """An elimination at ``mu`` (``net.eliminate``) if it fits before ``deadline``: the states removed (0
    when it was not started) and the seconds of the last elimination made."""
    now = time.perf_counter()
    # an elimination costs a backward pass and a re-layout: the first one (on the whole
    # network) about eight forward passes, later ones as long as the last one took
    if deadline is not None and now + (t_elim if t_elim else 8 * t_pass) >= deadline:
        return 0, t_elim
    removed = net.eliminate(mu, theta, fw=fw)
    return int(removed), time.perf_counter() - now


@known_options
def search_result(net: Network, best: float, best_mu, best_path, upper: float, theta: float, reduced: bool,
                  evals: int, trace) -> Relaxation:
    """A multiplier search's :class:`Relaxation`: on a network reduced by eliminations (or built capped) the
    best value is a bound only up to ``upper``; above ``theta`` it proves ``upper`` (integer costs,
    :func:`below_next_integer`)."""
    bound = best if not reduced else min(best, upper)
    if best > theta:
        bound = upper
    return Relaxation(net, best_mu, bound, upper, bound >= upper, best_path, evals, trace)


@known_options
def deflected(g: np.ndarray, d_prev: np.ndarray | None, deflection: float = 1.0) -> np.ndarray:
    """The modified subgradient direction of Camerini, Fratta & Maffioli (1975).

    ``d = g + beta d_prev`` with ``beta = deflection * max(0, -g.d_prev / |d_prev|^2)``:
    the part of ``g`` that undoes the previous step is removed; when that
    leaves (almost) nothing, ``g`` itself (``g`` opposite to ``d_prev``).

    Examples
    --------
    >>> deflected(np.array([1.0, -1.0]), np.array([-1.0, 0.0])).tolist()
    [0.0, -1.0]
    >>> deflected(np.array([1.0, 0.0]), None).tolist()
    [1.0, 0.0]
    """
    if not deflection or d_prev is None:
        return g
    gd = float(g @ d_prev)
    if gd >= 0:
        return g
    d = g - deflection * gd / float(d_prev @ d_prev) * d_prev
    return g if float(d @ d) < 1e-9 * float(g @ g) else d


class StepScale:
    """The best bound of a multiplier search and its step scale, halved after ``patience`` passes without a better one.

    The step rules of :func:`optimize` (this one and :class:`TargetLevel`)
    share one interface: ``record`` notes a pass's bound, ``collapsed`` says
    when the step has vanished, ``restart`` takes the full step again and
    ``gain`` is the numerator of the next Polyak step.

    Examples
    --------
    >>> r = StepScale(1.5, patience=2)
    >>> [r.record(L) for L in (1.0, 2.0, 2.0, 1.5)], r.best, r.scale
    ([True, True, False, False], 2.0, 0.75)
    >>> r.gain(1.0, 3.0)
    1.5
    """

    @known_options
    def __init__(self, step: float, patience: int, expand: float = 1.0) -> None:
        self.best = -INF
        self.scale = float(step)
        self.step = float(step)
        self.patience = patience
        self.expand = float(expand)
        self.stall = 0

    def record(self, L: float, upper: float | None = None) -> bool:
        """Note the bound ``L`` of one pass (``upper`` is not used); True when
        it is a new best (the scale then grows by ``expand``, at most back to
        ``step``)."""
        if L > self.best + 1e-9 * max(1.0, abs(L)):
            if self.best > -INF:
                self.scale = min(self.step, self.scale * self.expand)
            self.best, self.stall = L, 0
            return True
        self.stall += 1
        if self.stall >= self.patience:
            self.scale *= 0.5
            self.stall = 0
        return False

    def collapsed(self, upper: float, min_scale: float) -> bool:
        """Whether the step scale has fallen below ``min_scale``."""
        return self.scale < min_scale

    def restart(self, upper: float) -> None:
        """The full step again."""
        self.scale, self.stall = self.step, 0

    def gain(self, L: float, upper: float) -> float:
        """``scale (upper - L)``: the step towards the incumbent ``upper``."""
        return self.scale * (upper - L)


class TargetLevel:
    """A target level that moves with the best bound: the variable target value rule.

    Polyak steps aim at ``level = min(upper, best + delta)`` rather than at
    the incumbent ``upper`` with a shrinking scale (the level methods of
    Brännlund 1995 and Goffin & Kiwiel 1999, "Convergence of a simple
    subgradient level method", Math. Programming 85). ``delta`` starts at
    ``upper - L`` of the first pass (a step towards the incumbent); once the
    bound has risen by ``reach`` times ``delta`` since the level was set, the
    level is reached and ``delta`` grows by ``grow`` (the target was below
    the dual optimum); after ``patience`` passes without that, it shrinks by
    ``shrink`` (the target was above it). Each change sets a new level from
    the best bound. A step of :func:`optimize` is then ``step (level - L) /
    |d|^2``: a pass far below the best bound gets a long step back, one near
    it a step of about ``delta``.

    Examples
    --------
    >>> r = TargetLevel(patience=2)
    >>> [r.record(L, 10.0) for L in (0.0, 6.0, 6.0, 5.0)], r.best, r.delta
    ([True, True, False, False], 6.0, 2.0)
    >>> r.level(10.0), r.gain(5.0, 10.0)
    (8.0, 3.0)
    """

    @known_options
    def __init__(self, patience: int, grow: float = 1.5, shrink: float = 0.5, reach: float = 0.5,
                 step: float = 1.0) -> None:
        self.best = -INF
        self.patience = patience
        self.step = float(step)
        self.grow, self.shrink, self.reach = float(grow), float(shrink), float(reach)
        self.delta = None
        self.base = -INF
        self.stall = 0

    def level(self, upper: float) -> float:
        """The target of the next step (never above the incumbent ``upper``)."""
        return upper if self.delta is None else min(upper, self.best + self.delta)

    def restart(self, upper: float) -> None:
        """Aim at the incumbent again."""
        self.delta, self.base, self.stall = max(upper - self.best, 0.0), self.best, 0

    def collapsed(self, upper: float, min_scale: float) -> bool:
        """Whether ``delta`` has fallen below ``min_scale`` times the gap left (at least 1)."""
        return self.delta < min_scale * max(1.0, upper - self.best)

    def gain(self, L: float, upper: float) -> float:
        """``step (level - L)``: the step towards the level."""
        return self.step * (self.level(upper) - L)

    def record(self, L: float, upper: float) -> bool:
        """Note the bound ``L`` of one pass towards the incumbent ``upper``;
        True when it is a new best."""
        better = L > self.best + 1e-9 * max(1.0, abs(L))
        if better:
            self.best = L
        if self.delta is None:
            self.delta, self.base = max(upper - L, 0.0), L
            return better
        if self.best >= self.base + self.reach * self.delta:
            self.delta = min(self.delta * self.grow, max(upper - self.best, 0.0))
            self.base, self.stall = self.best, 0
        else:
            self.stall += 1
            if self.stall >= self.patience:
                self.delta *= self.shrink
                self.base, self.stall = self.best, 0
        return better


@known_options
def optimize(net: Network, upper: float, sequence=None, *, deadline=None, max_iter: int = 400,
             step: float = 1.5, patience: int = 6, eliminate_every: int = 8, integral: bool = True,
             mu0: np.ndarray | None = None, deflection: float = 1.0, expand: float = 1.0,
             restarts: int = 0, slower: float = 1.0, min_scale: float = 1e-4, improve=None,
             improve_every: int = 50, level: bool = False, level_gap: float | None = None) -> Relaxation:
    """Subgradient optimisation of the multipliers, with elimination.

    Polyak steps towards ``upper`` (the cost of a known schedule, e.g.
    ``sequence``): ``mu += step (upper - L) / |d|^2 d`` along a deflected
    direction ``d = g + beta d_prev`` (the modified gradient of Camerini
    et al., with the projection coefficient ``deflection = 1``), where ``g_j = 1 - (occurrences of j on the relaxed path)`` and
    ``beta = deflection * max(0, -g.d_prev / |d_prev|^2)`` removes the part of
    ``g`` that undoes the previous step (the zig-zag of the plain method);
    ``step`` halves after ``patience`` passes without a better bound. Every
    ``eliminate_every`` passes with progress, arcs whose cheapest path
    exceeds :func:`below_next_integer` of ``upper`` (``integral``: every
    schedule's cost is an integer) or ``upper`` are removed, which shrinks the later passes. The
    step grows by ``expand`` on each better bound (at most back to ``step``);
    when it vanishes, up to ``restarts`` times the search starts again from
    the best multipliers with the full step, as long as the last start
    raised the bound, and with ``patience`` times ``slower`` (the step counts
    as vanished below ``min_scale``): a step that
    halves quickly is what proves most instances in few passes, but on
    others it stalls far below the dual optimum, where a step that decays
    more slowly still climbs. Stops when the bound reaches ``upper``, after
    ``max_iter`` passes, when the step vanishes, or before ``deadline`` (a ``time.perf_counter`` value):
    a pass or an elimination is not started when the last one of its kind
    would not fit, so the deadline is kept rather than overrun by one pass.
    With ``level`` the steps aim at a level that moves with the best bound
    (:class:`TargetLevel`) from the start. With ``level_gap`` each restart
    chooses: while the gap left, ``upper - best``, is at least ``level_gap``
    times the incumbent, it aims at such a level (with the restarts'
    patience), otherwise it takes the halving rule's full step towards
    ``upper``. The quick halving proves most instances in few passes; where
    it stalls far below the incumbent, the level keeps climbing (a level
    below the dual optimum is reached and grows, one above it shrinks, and a
    pass far below the best bound gets a long step back), and where the gap
    is narrow, steps aimed at the incumbent itself are what closes it.
    ``improve``, a callable, gets the relaxed path after ``improve_every / 5``
    and ``improve_every / 2`` passes, then every ``improve_every``, and
    returns the cost of a better schedule made from it, or None: ``upper``
    then drops to that cost (what was eliminated for the old value
    is not needed for the new one), so later steps aim lower and later
    eliminations remove more.

    Examples
    --------
    >>> from bounds.hetero_ti import tardiness_costs
    >>> p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
    >>> r = optimize(Network(p, tardiness_costs(p, w, d)), 12.0, [0, 2, 1])
    >>> r.bound, r.proved
    (12.0, True)
    """
    opt.integer(max_iter, "max_iter", lo=0)
    theta = below_next_integer(upper) if integral else upper
    mu = start_multipliers(net, sequence, mu0)
    best_mu, best_path = mu.copy(), []
    reduced = net.capped   # built without the nodes dearer than a schedule: capped like an elimination
    since = 0
    trace = []
    evals = 0
    level = opt.flag(level, "level")
    if level_gap is not None:
        level_gap = opt.number(level_gap, "level_gap", lo=0.0)
    rule = TargetLevel(patience, step=step) if level else StepScale(step, patience, expand)
    d_prev = None
    restart_best = -INF
    t_pass = t_elim = 0.0
    while evals < max_iter:
        if deadline is not None and evals > 0 and time.perf_counter() + t_pass >= deadline:
            break
        fw, path, t_pass = timed_pass(net, mu)
        evals += 1
        L = fw.bound
        if not math.isfinite(L):            # no path left: every schedule costs more than theta
            rule.best, best_mu, best_path = INF, mu.copy(), []
            break
        if rule.record(L, upper):
            best_mu, best_path = mu.copy(), path
            since += 1
        trace.append(rule.best)
        upper, theta = improved_upper(improve, path, evals, improve_every, upper, integral)
        if rule.best > theta:
            break
        if rule.collapsed(upper, min_scale):
            # the step collapsed; from the best multipliers with a full step again while that still pays
            if restarts <= 0 or rule.best <= restart_best + 1e-6 * max(1.0, abs(rule.best)):
                break
            restarts -= 1
            restart_best = rule.best
            if level_gap is not None:
                # a wide gap: a level that moves with the bound climbs on; a narrow one: steps towards the incumbent
                wide = upper - rule.best >= level_gap * max(1.0, abs(upper))
                if wide != isinstance(rule, TargetLevel):
                    best, kept = rule.best, rule.patience
                    rule = TargetLevel(kept, step=step) if wide else StepScale(step, kept, expand)
                    rule.best = best
            rule.restart(upper)
            d_prev = None
            rule.patience = max(1, int(round(rule.patience * slower)))
            mu = best_mu.copy()
            continue
        if eliminate_every and (evals == 1 or since >= eliminate_every):
            since = 0
            removed, t_elim = timed_elimination(net, mu, theta, fw, deadline, t_pass, t_elim)
            if removed:
                reduced = True
                continue  # re-evaluate the same multipliers on the smaller network
        g = 1.0 - net.counts(path)
        if not g.any():   # the relaxed path is a schedule: its cost L is optimal
            break
        dvec = d_prev = deflected(g, d_prev, deflection)
        mu = mu + rule.gain(L, upper) / float(dvec @ dvec) * dvec
    return search_result(net, rule.best, best_mu, best_path, upper, theta, reduced, evals, trace)
