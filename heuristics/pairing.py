"""Co-scheduling with Edmonds' matching (seed 003, Algorithm 1) and its baselines.

Pipeline (Sec. 4.2-4.3, Algorithm 1):

1. :func:`search` -- exhaustive hardware-configuration search: for every pair
   the best co-run configuration (``GetOptimalCoRunHWConfig``, lines 6) and
   for every job the best solo caps (``GetOptimalSoloRunHWConfig``, line 7),
   vectorised over all pairs and configurations with numpy.
2. :meth:`Costs.weights` -- the edge weights of lines 8-11:
   ``min(CoRunTime, SoloRunTime)``.
3. :func:`edmonds` -- the minimum-weight perfect matching of line 17 (networkx),
   with an explicit dummy vertex when ``W`` is odd: the job matched to it runs
   alone.
4. :func:`algorithm1` -- lines 17-31: the pairs whose solo runs are better
   are split into two solo runs.

Baselines of Sec. 5.2: :func:`time_sharing` with naive (even) caps or with
each job's optimal caps. For ``C = 3`` (no polynomial algorithm known, Sec.
3.2): :func:`triple_costs`, :func:`greedy` (largest saving first) and
:func:`local_search`, which starts from the ``C = 2`` matching and
re-partitions two or three sets at a time.

Examples
--------
>>> from instances import pairing
>>> from heuristics import pairing as hp
>>> problem = pairing.PairingProblem(pairing.job_mix(1))
>>> plan = hp.algorithm1(problem)
>>> pairing.check(problem, plan)
[]
>>> plan.total_time < hp.time_sharing(problem, caps="naive").total_time
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import networkx as nx
import numpy as np

from instances.errors import OptionError
from instances.pairing import (Config, InstanceError, JobSet, PairingProblem, Plan,
                               WeightedQueue)

__all__ = ["Costs", "search", "plain_search", "edmonds", "algorithm1", "time_sharing",
           "triple_costs", "greedy", "local_search", "plan_from_sets", "RESOLUTION"]

# Matching weights are integers of this many seconds (networkx is exact on
# integers); a plan's total can differ from the float optimum by at most
# W * RESOLUTION / 2.
RESOLUTION = 1e-6


@dataclass
class Costs:
    """Set times and their best configurations for one problem.

    Attributes
    ----------
    solo
        ``SoloRunAppTime_j(P_total)`` (best caps), shape (W,).
    solo_config
        The best solo configuration of each job.
    corun
        ``CoRunTime`` of the best configuration of every pair, (W, W), ``inf``
        on the diagonal.
    corun_k
        Index into ``pair_configs`` of that configuration, listed with the
        lower-index job first; -1 on the diagonal.
    pair_configs
        The co-run configurations searched.
    triple, triple_config
        For ``C = 3``: sorted index triple -> best co-run time / configuration
        (listed in the triple's order).
    """

    names: tuple[str, ...]
    solo: np.ndarray
    solo_config: list
    corun: np.ndarray
    corun_k: np.ndarray
    pair_configs: tuple
    triple: dict | None = None
    triple_config: dict | None = None
    concurrency: int = 2

    @property
    def W(self) -> int:
        return len(self.solo)

    def weights(self) -> np.ndarray:
        """Edge weights of Algorithm 1, lines 8-11: ``min(CoRunTime, SoloRunTime)``."""
        w = np.minimum(self.corun, self.solo[:, None] + self.solo[None, :])
        np.fill_diagonal(w, np.inf)
        return w

    def pair_config(self, i: int, j: int) -> Config | None:
        """Best co-run configuration of ``{i, j}`` listed as (i, j)."""
        k = int(self.corun_k[i, j])
        if k < 0:
            return None
        cfg = self.pair_configs[k]
        return cfg if i < j else cfg.permuted((1, 0))

    def set_time(self, members: Sequence[int]) -> float:
        s = tuple(sorted(members))
        if len(s) == 1:
            return float(self.solo[s[0]])
        if len(s) == 2:
            return float(self.corun[s])
        if len(s) == 3 and self.triple is not None:
            return float(self.triple.get(s, math.inf))
        return math.inf

    def to_queue(self) -> WeightedQueue:
        """The same set times as a :class:`WeightedQueue` (configurations dropped)."""
        return WeightedQueue(self.solo, self.corun, self.triple, self.concurrency, self.names)


def _costs_of_queue(q: WeightedQueue) -> Costs:
    W = q.W
    k = np.full((W, W), -1, dtype=np.int64)
    return Costs(tuple(q.names), q.solo.copy(), [None] * W, q.pair.copy(), k, (),
                 dict(q.triple) if q.triple is not None else None, None, q.concurrency)


def costs_of(problem: PairingProblem | WeightedQueue, triples: bool | None = None) -> Costs:
    """:func:`search` for a problem, or the given times of a :class:`WeightedQueue`."""
    if isinstance(problem, WeightedQueue):
        return _costs_of_queue(problem)
    c = search(problem)
    if triples if triples is not None else problem.concurrency >= 3:
        c.triple, c.triple_config = triple_costs(problem)
        c.concurrency = 3
    return c


def search(problem: PairingProblem) -> Costs:
    """Exhaustive configuration search for every pair and every solo run (Sec. 4.2).

    All ``W (W - 1) / 2`` pairs and all co-run configurations are evaluated in
    one call of the model's vectorised ``set_slowdowns``; ``CoRunTime`` is the
    max over the two jobs (Sec. 4.1.1) and the best configuration the argmin
    (first in ``space.corun_configs(2)`` order on ties, like a plain loop).

    Examples
    --------
    >>> from instances import pairing
    >>> c = search(pairing.PairingProblem(pairing.job_mix(1)))
    >>> c.corun.shape, bool(np.all(c.solo > 0))
    ((4, 4), True)
    """
    jobs, space, model = problem.jobs, problem.space, problem.model
    W = len(jobs)
    t = np.array([j.solo_time for j in jobs], float)
    solo_cfgs = space.solo_configs()
    solo_t = model.set_slowdowns(jobs, np.arange(W)[:, None], solo_cfgs)[:, 0, :] * t[:, None]
    solo_k = np.argmin(solo_t, axis=1)
    solo = solo_t[np.arange(W), solo_k]
    corun = np.full((W, W), np.inf)
    corun_k = np.full((W, W), -1, dtype=np.int64)
    pair_cfgs = space.corun_configs(2) if problem.concurrency >= 2 else ()
    if W >= 2 and pair_cfgs:
        i, j = np.triu_indices(W, 1)
        sets = np.stack([i, j], axis=1)
        for lo in range(0, len(sets), 20000):   # bounded memory for large W
            part = sets[lo:lo + 20000]
            S = model.set_slowdowns(jobs, part, pair_cfgs)            # (m, 2, K)
            times = (S * t[part][:, :, None]).max(axis=1)              # (m, K)
            k = np.argmin(times, axis=1)
            best = times[np.arange(len(part)), k]
            a, b = part[:, 0], part[:, 1]
            corun[a, b] = corun[b, a] = best
            corun_k[a, b] = corun_k[b, a] = k
    _check_finite(problem, solo, corun)
    return Costs(tuple(j.name for j in jobs), solo, [solo_cfgs[k] for k in solo_k], corun,
                 corun_k, pair_cfgs, concurrency=min(problem.concurrency, 2))


def _check_finite(problem, solo, corun):
    bad = np.flatnonzero(~np.isfinite(solo) | (solo <= 0))
    if len(bad):
        raise InstanceError("the slowdown model gave a non-finite or non-positive solo time",
                            task=problem.jobs[bad[0]].name, field="slowdown")
    off = ~np.eye(len(solo), dtype=bool)
    if np.any(np.isnan(corun[off])) or np.any(corun[off] <= 0):
        a, b = np.argwhere(off & (np.isnan(corun) | (corun <= 0)))[0]
        raise InstanceError(f"the slowdown model gave an invalid co-run time beside "
                            f"{problem.jobs[b].name}", task=problem.jobs[a].name,
                            field="slowdown")


def plain_search(problem: PairingProblem) -> Costs:
    """Reference for :func:`search`: plain Python loops over the scalar interface.

    Slow; for tests on small windows.
    """
    jobs, space = problem.jobs, problem.space
    W = len(jobs)
    solo, solo_cfg = np.empty(W), []
    for a, job in enumerate(jobs):
        best = None
        for cfg in space.solo_configs():
            tt = problem.slowdown(job, (), cfg) * job.solo_time
            if best is None or tt < best[0]:
                best = (tt, cfg)
        solo[a] = best[0]
        solo_cfg.append(best[1])
    pair_cfgs = space.corun_configs(2)
    corun = np.full((W, W), np.inf)
    corun_k = np.full((W, W), -1, dtype=np.int64)
    for a in range(W):
        for b in range(a + 1, W):
            best = None
            for k, cfg in enumerate(pair_cfgs):
                ta = problem.slowdown(jobs[a], (jobs[b],), cfg) * jobs[a].solo_time
                tb = problem.slowdown(jobs[b], (jobs[a],), cfg.permuted((1, 0))) * jobs[b].solo_time
                tt = max(ta, tb)
                if best is None or tt < best[0]:
                    best = (tt, k)
            corun[a, b] = corun[b, a] = best[0]
            corun_k[a, b] = corun_k[b, a] = best[1]
    return Costs(tuple(j.name for j in jobs), solo, solo_cfg, corun, corun_k, pair_cfgs)


def triple_costs(problem: PairingProblem, chunk: int = 256):
    """Best co-run time and configuration of every triple (C = 3 extension).

    Uses the space's triple splits (our extension of Table 4). Returns two
    dicts keyed by sorted index triples. Cost grows as ``W^3``; meant for the
    small windows the exact C = 3 models handle.
    """
    jobs, model = problem.jobs, problem.model
    cfgs = problem.space.corun_configs(3)
    t = np.array([j.solo_time for j in jobs], float)
    trip = np.array(list(itertools.combinations(range(len(jobs)), 3)), dtype=np.int64)
    times, configs = {}, {}
    for lo in range(0, len(trip), chunk):
        part = trip[lo:lo + chunk]
        S = model.set_slowdowns(jobs, part, cfgs)
        tt = (S * t[part][:, :, None]).max(axis=1)
        k = np.argmin(tt, axis=1)
        for row, kk, val in zip(part, k, tt[np.arange(len(part)), k]):
            key = tuple(int(x) for x in row)
            times[key] = float(val)
            configs[key] = cfgs[kk]
    return times, configs


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


def _ints(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, float)
    return np.rint(np.where(np.isfinite(x), x, 0.0) / RESOLUTION).astype(np.int64)


def edmonds(weights: np.ndarray, solo: np.ndarray, method: str = "pruned") -> list[tuple[int, ...]]:
    """Minimum-weight perfect matching of Algorithm 1, line 17 (Edmonds via networkx).

    Parameters
    ----------
    weights
        Symmetric (W, W) edge weights ``min(CoRunTime, SoloRunTime)``.
    solo
        ``SoloRunAppTime(P_total)`` per job: the weight of the edge to the
        dummy vertex added when ``W`` is odd (that job then runs alone).
    method
        ``"perfect"``: ``networkx.min_weight_matching`` on the complete graph
        (+ dummy), literally line 17. ``"pruned"`` (default, same optimum,
        much faster for large W): the LP relaxation with blossom cuts (HiGHS)
        gives duals; an edge whose reduced cost exceeds the gap between a
        matching and the LP bound is in no better matching, so networkx runs
        on the remaining edges only (see :func:`_pruned`, :func:`_lp_bound`).

    Returns
    -------
    list of tuple
        Pairs ``(i, j)`` and singletons ``(i,)``: with ``"perfect"`` exactly
        one singleton when W is odd; with ``"pruned"`` also the jobs whose
        every pairing saves nothing (Algorithm 1 would split those pairs).

    Examples
    --------
    >>> w = np.array([[np.inf, 3, 9, 9], [3, np.inf, 9, 9], [9, 9, np.inf, 4], [9, 9, 4, np.inf]])
    >>> sorted(edmonds(w, np.full(4, 5.0), method="perfect"))
    [(0, 1), (2, 3)]
    """
    W = len(solo)
    if W == 1:
        return [(0,)]
    if method == "perfect":
        return _perfect(weights, solo)
    if method == "pruned":
        return _pruned(weights, solo)
    raise OptionError(f"unknown method {method!r}; use 'perfect' or 'pruned'")


def _perfect(weights, solo):
    W = len(solo)
    wi, si = _ints(weights), _ints(solo)
    G = nx.Graph()
    G.add_weighted_edges_from((a, b, int(wi[a, b])) for a in range(W) for b in range(a + 1, W))
    if W % 2:
        G.add_weighted_edges_from((a, W, int(si[a])) for a in range(W))
    M = nx.min_weight_matching(G)
    out = []
    for a, b in M:
        a, b = min(a, b), max(a, b)
        out.append((a,) if b == W else (a, b))
    return out


def _max_matching(sav_int: np.ndarray, edges: np.ndarray) -> list[tuple[int, int]]:
    """Max-weight matching (networkx Edmonds) on the listed edges with positive saving.

    A matching splits over connected components, so each component is solved
    on its own (Edmonds is cubic in the vertices of the graph it is given).
    """
    G = nx.Graph()
    G.add_weighted_edges_from((int(a), int(b), int(sav_int[a, b])) for a, b in edges
                              if sav_int[a, b] > 0)
    out = []
    for comp in nx.connected_components(G):
        H = G.subgraph(comp)
        if H.number_of_edges() == 1:
            (a, b), = H.edges()
            out.append((min(a, b), max(a, b)))
            continue
        out.extend((min(a, b), max(a, b)) for a, b in nx.max_weight_matching(H))
    return out


def _pruned(weights, solo):
    """Exact matching on a reduced edge set (same optimum as :func:`_perfect`).

    Running every job alone costs ``sum(solo)``; pairing ``{i, j}`` saves
    ``s_ij = solo_i + solo_j - w_ij >= 0``. A min-weight perfect matching
    (with the dummy vertex for odd W) is therefore a max-weight matching on
    the savings, unmatched jobs running alone. :func:`_lp_bound` solves the
    LP relaxation with odd-set (blossom) cuts and returns a bound ``LB`` and
    reduced costs ``rc`` such that every plan that uses edge ``e`` costs at
    least ``LB + rc_e``. So an edge with ``rc_e > UB - LB`` (UB = the cost of
    any plan) is in no better plan. networkx's Edmonds runs first on the
    tight edges (for UB), then on every edge within the gap, which is exact.
    """
    W = len(solo)
    sol = np.asarray(solo, float)
    w = np.where(np.isfinite(weights), weights, sol[:, None] + sol[None, :])
    si = _ints(sol)
    sav_int = np.maximum(si[:, None] + si[None, :] - _ints(w), 0)
    np.fill_diagonal(sav_int, 0)
    iu, ju = np.triu_indices(W, 1)
    keep = sav_int[iu, ju] > 0
    iu, ju = iu[keep], ju[keep]
    if len(iu) == 0:
        return [(a,) for a in range(W)]
    lb, rc = _lp_bound(w[iu, ju], iu, ju, sol)
    tight = rc <= 2 * W * RESOLUTION
    M = _max_matching(sav_int, np.stack([iu[tight], ju[tight]], 1))
    ub = float(sol.sum() - sum(sav_int[a, b] for a, b in M) * RESOLUTION)
    slack = ub - lb + W * RESOLUTION   # integer rounding of the weights
    cand = rc <= slack
    if np.any(cand & ~tight):
        M = _max_matching(sav_int, np.stack([iu[cand], ju[cand]], 1))
    matched = {v for e in M for v in e}
    return M + [(a,) for a in range(W) if a not in matched]


def _components(n, a, b):
    """Connected components (union-find) of the graph with edges ``a[k]-b[k]``."""
    parent = list(range(n))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v in zip(a.tolist(), b.tolist()):
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
    roots = [find(v) for v in range(n)]
    uniq = {r: k for k, r in enumerate(dict.fromkeys(roots))}
    return len(uniq), np.array([uniq[r] for r in roots])


def _lp_bound(w_e, iu, ju, solo, rounds=30, per_vertex=8):
    """Bound and reduced costs from the matching LP with blossom cuts (HiGHS).

    LP: ``min sum_e w_e x_e + sum_i solo_i z_i`` with ``sum_{e ni i} x_e + z_i
    = 1`` and, for odd vertex sets ``S`` found violated (odd components of
    the fractional edges), ``x(E(S)) <= (|S| - 1) / 2``. Solved by column
    generation: it starts from each job's ``per_vertex`` best-saving edges and
    adds edges of negative reduced cost until none is left. For any duals
    ``y`` and ``pi <= 0`` every plan costs ``sum y + sum pi_S (|S|-1)/2 + sum of
    the reduced costs of its sets``, which gives a bound valid whatever the
    solver's accuracy (negative reduced costs are charged to the bound).
    """
    import highspy  # local import: only the pruned matcher needs it

    W, E = len(solo), len(w_e)
    sav = solo[iu] + solo[ju] - w_e
    # Initial columns: every job's best-saving edges.
    order = np.argsort(-sav, kind="stable")
    count = np.zeros(W, dtype=np.int64)
    active = np.zeros(E, dtype=bool)
    for e in order.tolist():
        a, b = iu[e], ju[e]
        if count[a] < per_vertex or count[b] < per_vertex:
            active[e] = True
            count[a] += 1
            count[b] += 1
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    # Rows 0..W-1: jobs. Columns 0..W-1: z_i (solo runs), then the active edges.
    h.addRows(W, np.ones(W), np.ones(W), 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
              np.zeros(0))
    h.addCols(W, solo.astype(float), np.zeros(W), np.full(W, inf), W,
              np.arange(W, dtype=np.int32), np.arange(W, dtype=np.int32), np.ones(W))
    col_edge: list[int] = []
    cuts: list[np.ndarray] = []   # edge masks (over all E edges) of the odd sets
    rhs: list[float] = []

    def add_edges(edges):
        edges = np.asarray(edges, dtype=np.int64)
        if len(edges) == 0:
            return
        starts, index = [], []
        for e in edges.tolist():
            starts.append(len(index))
            index.extend((int(iu[e]), int(ju[e])))
            index.extend(W + c for c, m in enumerate(cuts) if m[e])
        h.addCols(len(edges), w_e[edges].astype(float), np.zeros(len(edges)),
                  np.full(len(edges), inf), len(index), np.array(starts, np.int32),
                  np.array(index, np.int32), np.ones(len(index)))
        col_edge.extend(edges.tolist())

    add_edges(np.flatnonzero(active))
    y = np.zeros(W)
    pi = np.zeros(0)
    for _ in range(10 * rounds):
        h.run()
        sol = h.getSolution()
        dual = np.asarray(sol.row_dual, float)
        y, pi = dual[:W], np.minimum(dual[W:], 0.0)
        rc = w_e - y[iu] - y[ju]
        for mask, p in zip(cuts, pi):
            rc[mask] -= p
        price = np.flatnonzero(~active & (rc < -1e-9))
        if len(price):   # pricing: add the most negative columns first
            price = price[np.argsort(rc[price])[: max(2 * W, 100)]]
            active[price] = True
            add_edges(price)
            continue
        if len(cuts) >= rounds:
            break
        x = np.zeros(E)
        x[col_edge] = np.asarray(sol.col_value, float)[W:]
        frac = (x > 1e-6) & (x < 1 - 1e-6)
        if not frac.any():
            break
        ncomp, label = _components(W, iu[frac], ju[frac])
        added = False
        for c in range(ncomp):
            members = label == c
            size = int(members.sum())
            if size < 3 or size % 2 == 0:
                continue
            inside = members[iu] & members[ju]
            if x[inside].sum() > (size - 1) / 2 + 1e-6:
                cols = np.flatnonzero(inside[col_edge]) + W
                h.addRow(-inf, (size - 1) / 2, len(cols), cols.astype(np.int32),
                         np.ones(len(cols)))
                cuts.append(inside)
                rhs.append((size - 1) / 2)
                added = True
        if not added:
            break
    # The last solve may predate the last cut: such cuts get pi = 0 (still valid).
    pi = np.concatenate([pi, np.zeros(len(cuts) - len(pi))])[: len(cuts)]
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(pi))):
        y, pi = np.zeros(W), np.zeros(len(cuts))
    rc = w_e - y[iu] - y[ju]
    for mask, p in zip(cuts, pi):
        rc[mask] -= p
    rc_z = solo - y
    lb = float(y.sum() + np.dot(pi, rhs) + np.minimum(rc, 0).sum() + np.minimum(rc_z, 0).sum())
    return lb, rc


# ---------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------


def plan_from_sets(costs: Costs, sets: Sequence[Sequence[int]], policy: str = "",
                   split: bool = True) -> Plan:
    """Turn index sets into a :class:`Plan` with configurations and times.

    ``split=True`` applies Algorithm 1, lines 19-31: a co-run set slower than
    its jobs' solo runs becomes solo runs.
    """
    out = []
    for s in sets:
        s = tuple(sorted(int(x) for x in s))
        co = costs.set_time(s)
        alone = float(sum(costs.solo[x] for x in s))
        if len(s) == 1 or (split and co > alone):
            out.extend(JobSet((costs.names[x],), costs.solo_config[x], float(costs.solo[x]))
                       for x in s)
            continue
        cfg = costs.pair_config(*s) if len(s) == 2 else (
            costs.triple_config.get(s) if costs.triple_config else None)
        out.append(JobSet(tuple(costs.names[x] for x in s), cfg, co))
    return Plan(out, policy=policy)


def algorithm1(problem: PairingProblem | WeightedQueue, method: str = "pruned",
               costs: Costs | None = None) -> Plan:
    """Algorithm 1 (C = 2): search, weights, Edmonds, split of pairs that do not pay.

    Examples
    --------
    >>> from instances import pairing
    >>> q = pairing.WeightedQueue.random(7, seed=3)
    >>> plan = algorithm1(q)
    >>> sorted(len(s.jobs) for s in plan.sets)[-1] <= 2, pairing.check(q, plan)
    (True, [])
    """
    costs = costs if costs is not None else costs_of(problem, triples=False)
    sets = edmonds(costs.weights(), costs.solo, method=method)
    plan = plan_from_sets(costs, sets, policy="co-scheduling (Algorithm 1)")
    plan.info["costs"] = costs
    return plan


def time_sharing(problem: PairingProblem, caps: str = "optimal",
                 costs: Costs | None = None) -> Plan:
    """Baselines of Sec. 5.2: every job alone, one after another.

    ``caps="naive"``: the budget split evenly between CPU and GPU
    (``ConfigSpace.naive_caps``); ``caps="optimal"``: each job's best caps.

    Examples
    --------
    >>> from instances import pairing
    >>> p = pairing.PairingProblem(pairing.job_mix(2))
    >>> time_sharing(p, "optimal").total_time <= time_sharing(p, "naive").total_time
    True
    """
    if caps == "optimal":
        costs = costs if costs is not None else search(problem)
        return Plan([JobSet((n,), c, float(t)) for n, c, t in
                     zip(costs.names, costs.solo_config, costs.solo)],
                    policy="time sharing + optimal caps")
    if caps == "naive":
        pc, pg = problem.space.naive_caps()
        cfg = Config((problem.space.solo_cores,), (problem.space.solo_gpcs,), pc, pg)
        S = problem.model.set_slowdowns(problem.jobs, np.arange(problem.W)[:, None], [cfg])
        return Plan([JobSet((j.name,), cfg, float(S[a, 0, 0] * j.solo_time))
                     for a, j in enumerate(problem.jobs)], policy="time sharing + naive caps")
    raise OptionError(f"unknown caps policy {caps!r}; use 'naive' or 'optimal'")


# ---------------------------------------------------------------------------
# C = 3
# ---------------------------------------------------------------------------


def _partitions(items):
    """All partitions of ``items`` into blocks of at most 3."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for k in range(0, min(2, len(rest)) + 1):
        for comb in itertools.combinations(rest, k):
            remaining = [x for x in rest if x not in comb]
            for p in _partitions(remaining):
                yield [(first, *comb)] + p


def greedy(problem: PairingProblem | WeightedQueue, costs: Costs | None = None) -> Plan:
    """Greedy heuristic for C = 3: repeatedly take the set that saves the most.

    Among all pairs and triples of unassigned jobs, pick the one with the
    largest saving ``sum of its solo times - its co-run time``; stop when no
    set saves anything, the rest run alone. ``O(W^4)``; for small windows.

    Examples
    --------
    >>> from instances import pairing
    >>> q = pairing.WeightedQueue.random(6, seed=1, concurrency=3)
    >>> pairing.check(q, greedy(q))
    []
    """
    costs = costs if costs is not None else costs_of(problem, triples=True)
    if costs.triple is None:
        raise InstanceError("the greedy heuristic for C = 3 needs triple times", field="triple")
    W = costs.W
    candidates = [(float(costs.solo[i] + costs.solo[j] - costs.corun[i, j]), (i, j))
                  for i in range(W) for j in range(i + 1, W)]
    candidates += [(float(sum(costs.solo[list(t)]) - c), t) for t, c in costs.triple.items()]
    candidates = sorted((c for c in candidates if c[0] > 0), key=lambda c: -c[0])
    free = set(range(W))
    sets = []
    for _, s in candidates:   # best saving first; a set is taken if its jobs are free
        if free.issuperset(s):
            sets.append(s)
            free.difference_update(s)
    sets += [(i,) for i in sorted(free)]
    plan = plan_from_sets(costs, sets, policy="C=3 greedy by saving")
    plan.info["costs"] = costs
    return plan


def local_search(problem: PairingProblem | WeightedQueue, costs: Costs | None = None,
                 start: Plan | None = None, span: int = 3, max_rounds: int = 1000) -> Plan:
    """Heuristic for C = 3: from the C = 2 matching, re-partition a few sets at a time.

    Each round takes every group of 2..``span`` current sets with at most 6
    jobs in all, finds the best partition of their union into sets of at most
    3 jobs by enumeration, and applies the best improvement, until none is
    left (``span=3`` costs ``O(#sets^3)`` per round). Starts from
    :func:`algorithm1`'s plan, so it is never worse than the C = 2 optimum.

    Examples
    --------
    >>> from instances import pairing
    >>> q = pairing.WeightedQueue.random(7, seed=3, concurrency=3)
    >>> local_search(q).total_time <= algorithm1(q).total_time
    True
    """
    costs = costs if costs is not None else costs_of(problem, triples=True)
    if costs.triple is None:
        raise InstanceError("local search for C = 3 needs triple times", field="triple")
    index = {n: i for i, n in enumerate(costs.names)}
    start = start if start is not None else algorithm1(problem, costs=costs)
    sets = [tuple(index[n] for n in s.jobs) for s in start.sets]

    def cost(block):
        return costs.set_time(block) if len(block) > 1 else float(costs.solo[block[0]])

    for _ in range(max_rounds):
        best = (0.0, None)
        for group in itertools.chain(*(itertools.combinations(range(len(sets)), r)
                                       for r in range(2, span + 1))):
            union = [x for g in group for x in sets[g]]
            if len(union) > 6:
                continue
            now = sum(cost(sets[g]) for g in group)
            for part in _partitions(union):
                c = sum(cost(blk) for blk in part)
                if c < now - 1e-9 and now - c > best[0]:
                    best = (now - c, (group, part))
        if best[1] is None:
            break
        group, part = best[1]
        sets = [s for k, s in enumerate(sets) if k not in group] + [tuple(p) for p in part]
    plan = plan_from_sets(costs, sets, policy="C=3 local search from Edmonds")
    plan.info["costs"] = costs
    return plan
