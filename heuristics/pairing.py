"""Co-scheduling with Edmonds' matching (co-scheduling paper, Algorithm 1) and its baselines.

Pipeline (co-scheduling paper, Sec. 4.2-4.3, Algorithm 1):

1. :func:`instances.pairing.search` -- exhaustive hardware-configuration
   search (lines 6-7), the family's cost model :class:`instances.pairing.Costs`.
2. :func:`edge_weights` -- the edge weights of lines 8-11:
   ``min(CoRunTime, SoloRunTime)``.
3. :func:`edmonds` -- the minimum-weight perfect matching of line 17 (networkx),
   with an explicit dummy vertex when ``W`` is odd: the job matched to it runs
   alone.
4. :func:`algorithm1` -- lines 17-31: the pairs whose solo runs are better
   are split into two solo runs.

Baselines of Sec. 5.2: :func:`time_sharing` with naive (even) caps or with
each job's optimal caps. For ``C = 3`` (no polynomial algorithm known, Sec.
3.2): :func:`greedy` (largest saving first) and :func:`local_search`, which
starts from the ``C = 2`` matching and re-partitions two or three sets at a
time. :data:`METHODS` names them all.

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
from typing import Callable

import networkx as nx
import numpy as np

from instances.errors import OptionError
from instances.pairing import (Config, Costs, InstanceError, JobSet, PairingProblem, Plan,
                               WeightedQueue, costs_of, search, triple_costs)
from instances.options import known_options

__all__ = ["METHODS", "edmonds", "edge_weights", "algorithm1", "time_sharing", "greedy",
           "local_search", "Costs", "costs_of", "search", "triple_costs"]

# Costs, costs_of, search and triple_costs are the family's cost
# model (instances.pairing); they are re-exported here because callers of
# Algorithm 1 have always found them beside it.


@known_options
def edge_weights(costs: Costs) -> np.ndarray:
    """Edge weights of Algorithm 1, lines 8-11: ``min(CoRunTime, SoloRunTime)``.

    Examples
    --------
    >>> c = costs_of(WeightedQueue(np.array([2.0, 3.0]), np.array([[np.inf, 6.0], [6.0, np.inf]])))
    >>> float(edge_weights(c)[0, 1])
    5.0
    """
    w = np.minimum(costs.corun, costs.solo[:, None] + costs.solo[None, :])
    np.fill_diagonal(w, np.inf)
    return w


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


def _resolution(solo: np.ndarray) -> float:
    """Seconds per integer unit of the matching weights, chosen from the data.

    networkx's matching is exact on integers. A power of two with
    ``sum(solo) / resolution < 2**52`` keeps every weight and every matching's
    saving inside int64 and rounds each weight by at most 2e-16 of the total
    solo time, whether the times are microseconds or days.
    """
    total = float(np.sum(solo))
    return 2.0 ** (math.frexp(total)[1] - 52)


def _ints(x: np.ndarray, resolution: float) -> np.ndarray:
    x = np.asarray(x, float)
    return np.rint(np.where(np.isfinite(x), x, 0.0) / resolution).astype(np.int64)


@known_options
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
    res = _resolution(solo)
    wi, si = _ints(weights, res), _ints(solo, res)
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
    res = _resolution(sol)
    si = _ints(sol, res)
    sav_int = np.maximum(si[:, None] + si[None, :] - _ints(w, res), 0)
    np.fill_diagonal(sav_int, 0)
    iu, ju = np.triu_indices(W, 1)
    keep = sav_int[iu, ju] > 0
    iu, ju = iu[keep], ju[keep]
    if len(iu) == 0:
        return [(a,) for a in range(W)]
    lb, rc = _lp_bound(w[iu, ju], iu, ju, sol)
    tight = rc <= 2 * W * res
    M = _max_matching(sav_int, np.stack([iu[tight], ju[tight]], 1))
    ub = float(sol.sum() - sum(int(sav_int[a, b]) for a, b in M) * res)
    # integer rounding of the weights, and float round-off in the LP bound
    slack = ub - lb + W * res + 1e-9 * float(sol.sum())
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

    from bounds.highs_lp import run_lp, silent_highs

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
    h = silent_highs()
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
        if run_lp(h) != highspy.HighsModelStatus.kOptimal:
            break  # the last duals (or zeros) still give a valid bound
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


@known_options
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
    sets = edmonds(edge_weights(costs), costs.solo, method=method)
    plan = costs.plan(sets, policy="co-scheduling (Algorithm 1)")
    plan.info["costs"] = costs
    return plan


@known_options
def time_sharing(problem: PairingProblem | WeightedQueue, caps: str = "optimal",
                 costs: Costs | None = None) -> Plan:
    """Baselines of Sec. 5.2: every job alone, one after another.

    ``caps="naive"``: the budget split evenly between CPU and GPU
    (``ConfigSpace.naive_caps``; a :class:`PairingProblem` only);
    ``caps="optimal"``: each job's best caps (a queue's solo times).

    Examples
    --------
    >>> from instances import pairing
    >>> p = pairing.PairingProblem(pairing.job_mix(2))
    >>> time_sharing(p, "optimal").total_time <= time_sharing(p, "naive").total_time
    True
    """
    if caps == "optimal":
        costs = costs if costs is not None else costs_of(problem, triples=False)
        return Plan([JobSet((n,), c, float(t)) for n, c, t in
                     zip(costs.names, costs.solo_config, costs.solo)],
                    policy="time sharing + optimal caps")
    if caps == "naive":
        if not isinstance(problem, PairingProblem):
            raise InstanceError("naive caps need a PairingProblem (a WeightedQueue has no power caps)",
                                field="caps")
        pc, pg = problem.space.naive_caps()
        cfg = Config((problem.space.solo_cores,), (problem.space.solo_gpcs,), pc, pg)
        S = problem.model.set_slowdowns(problem.jobs, np.arange(problem.W)[:, None], [cfg])
        return Plan([JobSet((j.name,), cfg, float(S[a, 0, 0] * j.solo_time))
                     for a, j in enumerate(problem.jobs)], policy="time sharing + naive caps")
    raise OptionError(f"unknown caps policy {caps!r}; use 'naive' or 'optimal'")


# ---------------------------------------------------------------------------
# C = 3 (also run for C <= 2, where they use sets of at most C jobs)
# ---------------------------------------------------------------------------


def _partitions(items, size: int):
    """All partitions of ``items`` into blocks of at most ``size``."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for k in range(0, min(size - 1, len(rest)) + 1):
        for comb in itertools.combinations(rest, k):
            remaining = [x for x in rest if x not in comb]
            for p in _partitions(remaining, size):
                yield [(first, *comb)] + p


def _costs_for(problem: PairingProblem | WeightedQueue, costs: Costs | None, what: str) -> Costs:
    C = problem.concurrency
    costs = costs if costs is not None else costs_of(problem, triples=C >= 3)
    if C >= 3 and costs.triple is None:
        raise InstanceError(f"{what} for C = 3 needs triple times", field="triple")
    return costs


@known_options
def greedy(problem: PairingProblem | WeightedQueue, costs: Costs | None = None) -> Plan:
    """Greedy heuristic for C = 3: repeatedly take the set that saves the most.

    Among all allowed sets (pairs, and triples when ``problem.concurrency``
    is 3) of unassigned jobs, pick the one with the largest saving ``sum of
    its solo times - its co-run time``; stop when no set saves anything, the
    rest run alone. ``O(W^4)`` for C = 3; for small windows.

    Examples
    --------
    >>> from instances import pairing
    >>> q = pairing.WeightedQueue.random(6, seed=1, concurrency=3)
    >>> pairing.check(q, greedy(q))
    []
    """
    costs = _costs_for(problem, costs, "the greedy heuristic")
    C, W = problem.concurrency, costs.W
    candidates = []
    if C >= 2:
        candidates += [(float(costs.solo[i] + costs.solo[j] - costs.corun[i, j]), (i, j))
                       for i in range(W) for j in range(i + 1, W)]
    if C >= 3:
        candidates += [(float(sum(costs.solo[list(t)]) - c), t) for t, c in costs.triple.items()]
    candidates = sorted((c for c in candidates if c[0] > 0), key=lambda c: -c[0])
    free = set(range(W))
    sets = []
    for _, s in candidates:   # best saving first; a set is taken if its jobs are free
        if free.issuperset(s):
            sets.append(s)
            free.difference_update(s)
    sets += [(i,) for i in sorted(free)]
    plan = costs.plan(sets, policy=f"C={C} greedy by saving")
    plan.info["costs"] = costs
    return plan


@known_options
def local_search(problem: PairingProblem | WeightedQueue, costs: Costs | None = None,
                 start: Plan | None = None, span: int = 3, max_rounds: int = 1000) -> Plan:
    """Heuristic for C = 3: from the C = 2 matching, re-partition a few sets at a time.

    Each round takes every group of 2..``span`` current sets with at most 6
    jobs in all, finds the best partition of their union into sets of at most
    ``problem.concurrency`` jobs by enumeration, and applies the best
    improvement, until none is left (``span=3`` costs ``O(#sets^3)`` per
    round). Starts from :func:`algorithm1`'s plan, so it is never worse than
    the C = 2 optimum.

    Examples
    --------
    >>> from instances import pairing
    >>> q = pairing.WeightedQueue.random(7, seed=3, concurrency=3)
    >>> local_search(q).total_time <= algorithm1(q).total_time
    True
    """
    costs = _costs_for(problem, costs, "local search")
    C = problem.concurrency
    index = {n: i for i, n in enumerate(costs.names)}
    if start is None:
        start = algorithm1(problem, costs=costs) if C >= 2 else time_sharing(problem, costs=costs)
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
            for part in _partitions(union, C):
                c = sum(cost(blk) for blk in part)
                if c < now - 1e-9 * now and now - c > best[0]:
                    best = (now - c, (group, part))
        if best[1] is None:
            break
        group, part = best[1]
        sets = [s for k, s in enumerate(sets) if k not in group] + [tuple(p) for p in part]
    plan = costs.plan(sets, policy=f"C={C} local search from Edmonds")
    plan.info["costs"] = costs
    return plan


#: Display name -> heuristic ``method(problem) -> Plan``: the baselines of the
#: co-scheduling paper (Sec. 5.2), its Algorithm 1, and our C = 3 heuristics.
METHODS: dict[str, Callable[[PairingProblem | WeightedQueue], Plan]] = {
    "ts-naive": lambda problem: time_sharing(problem, "naive"),
    "ts-opt": lambda problem: time_sharing(problem, "optimal"),
    "algorithm1": algorithm1,
    "greedy": greedy,
    "local-search": local_search,
}
