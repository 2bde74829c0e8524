"""Pricing of the MIG column-generation bound: the best pattern of one block of slices.

Part of :mod:`bounds.mig_colgen` (the formulation and why the bound is valid
are in its docstring and ``docs/models/mig_colgen.md``). A *block* is a set
of slices (one slice, or the slices of a subtree of the placement tree); a
pattern of the block is a set of (task, placement) pairs over the placements
that occupy a slice of the block, each task at most once, whose every slice
``k`` of the block has *load* at most ``T``: the times of its tasks on
placements occupying ``k``, plus one create and one destroy per used such
placement, less one destroy (the last session on ``k`` may stay).

Pricing maximises the pattern's profit ``sum profit[i, p]``. What the
certificate of infeasibility needs is an *upper bound* on that maximum over
every true pattern; the best pattern found becomes a column.

* One-slice blocks: :func:`price_slice`, an exact dynamic program over the
  tasks whose states are (used placements, load in units, value), only the
  non-dominated ones kept. Loads are rounded down to units (a relaxation:
  every true pattern stays a pattern), so its maximum bounds the true one.
* Larger blocks: :class:`BlockPricer`, a small CP-SAT model (times rounded
  down to units, profits rounded up: a relaxation, so its proven bound is an
  upper bound), and when CP-SAT does not prove it within a short limit, the
  same model as a MILP on HiGHS (float data; its dual bound).

Examples
--------
>>> from bounds.mig_colgen_pricing import _pareto
>>> _pareto([(3, 1.0, None), (1, 2.0, None), (2, 1.5, None)])
[(1, 2.0, None)]
"""

from __future__ import annotations

import math

import numpy as np

from instances.options import known_options

__all__ = ["price_slice", "BlockPricer", "CPSAT_LIMIT"]

#: Seconds CP-SAT gets on a block's pricing before the HiGHS MILP takes over.
CPSAT_LIMIT = 2.0
#: Seconds of CP-SAT in a quick pricing pass (columns wanted; its bound stays valid).
QUICK_LIMIT = 0.3
#: Time units in the makespan of the CP-SAT pricing (times rounded down to them).
CPSAT_UNITS = 2 ** 24
#: Largest total of the CP-SAT pricing's integer profits.
CPSAT_PROFIT = 2 ** 40


def _pareto(states: list) -> list:
    """The states no other dominates (lighter and at least as valuable), by increasing load."""
    states.sort(key=lambda s: (s[0], -s[1]))
    out, top = [], -math.inf
    for s in states:
        if s[1] > top:
            out.append(s)
            top = s[1]
    return out


@known_options
def price_slice(n: int, chain: list[int], units: dict[tuple[int, int], int], overhead: list[int],
                profit: dict[tuple[int, int], float], cap: int) -> list[tuple[float, tuple, int]]:
    """Max of ``sum profit[i, p]`` over the (rounded) patterns of one slice with load <= ``cap`` units.

    ``chain``: the placements occupying the slice (bit b of a used set is ``chain[b]``);
    ``units[i, p]``: task times rounded down; ``overhead[m]``: the rounded creates and destroys
    of used set ``m``. Returns, best first, the best pattern of every used set with a positive
    value: (value, sorted (task, placement) pairs, load in units). The first value is the
    maximum (0, the empty pattern, when the list is empty).

    Examples
    --------
    >>> units = {(0, 5): 10, (1, 5): 10, (0, 9): 4}
    >>> price_slice(2, [5, 9], units, [0, 1, 1, 2], {(0, 5): 1.0, (1, 5): 1.0, (0, 9): 0.9}, 16)[0]
    (1.9, ((0, 9), (1, 5)), 16)
    """
    states: dict[int, list] = {0: [(0, 0.0, None)]}  # used set -> [(task load, value, back-pointer)]
    for i in range(n):
        opts = []
        for b, j in enumerate(chain):
            v = profit.get((i, j), 0.0)
            w = units.get((i, j))
            # a pair of value <= 0 never raises the maximum: it only adds load
            if w is not None and v > 0.0 and w + overhead[1 << b] <= cap:
                opts.append((1 << b, w, j, v))
        if not opts:
            continue
        cand = {m: list(lst) for m, lst in states.items()}
        for bit, wt, j, v in opts:
            for m, lst in states.items():
                m2 = m | bit
                lim = cap - overhead[m2] - wt  # overheads only grow with the used set
                if lim < 0:
                    continue
                tgt = cand.setdefault(m2, [])
                for w, val, node in lst:
                    if w > lim:
                        break
                    tgt.append((w + wt, val + v, ((i, j), node)))
        states = {m: _pareto(lst) for m, lst in cand.items()}
    out = []
    for m, lst in states.items():
        if m and lst and lst[-1][1] > 0.0:
            w, val, node = lst[-1]
            pattern = []
            while node is not None:
                pattern.append(node[0])
                node = node[1]
            out.append((val, tuple(sorted(pattern)), w + overhead[m]))
    out.sort(key=lambda o: -o[0])
    return out


def _recorder(cp_model, x: dict):
    """A CP-SAT callback that records the pattern of every solution it meets."""

    class Solutions(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.patterns: list[tuple] = []

        def on_solution_callback(self) -> None:
            self.patterns.append(tuple(sorted(key for key, var in x.items() if self.boolean_value(var))))

    return Solutions()


class BlockPricer:
    """The pricing MILP of a block of several slices, built once and re-solved per call.

    Variables: ``x[i, p]`` (task i on placement p), ``u[p]`` (p used) and ``z[k, p]`` (p's
    session is the last on slice k, its destroy not counted). Rows: each task at most once,
    ``x <= u``, ``z <= u``, one ``z`` per slice, and per slice k of the block::

        sum_{p occupies k} (sum_i t_i(p) x[i, p] + (create_p + destroy_p) u[p]
                            - destroy_p z[k, p])  <=  T
    """

    @known_options
    def __init__(self, block: list[int], chains: dict[int, list[int]], pairs: dict[tuple[int, int], float],
                 create: dict[int, float], destroy: dict[int, float],
                 symmetric: list[tuple[list[int], list[int]]] = ()) -> None:
        self.symmetric = list(symmetric)
        places = sorted({j for k in block for j in chains[k]})
        self.pairs = sorted((i, j) for (i, j) in pairs if j in places)
        self.block = block
        self.chains = chains
        self.time = {key: pairs[key] for key in self.pairs}
        self.create, self.destroy = create, destroy
        col = 0
        self.x = {}
        for key in self.pairs:
            self.x[key] = col
            col += 1
        self.u = {j: col + a for a, j in enumerate(places)}
        col += len(places)
        self.z = {}
        for k in block:
            for j in chains[k]:
                self.z[k, j] = col
                col += 1
        ncol = col
        rows: list[tuple[list[int], list[float], float, float]] = []
        tasks = sorted({i for i, _ in self.pairs})
        for i in tasks:
            idx = [self.x[key] for key in self.pairs if key[0] == i]
            rows.append((idx, [1.0] * len(idx), -math.inf, 1.0))
        for (i, j), c in self.x.items():
            rows.append(([c, self.u[j]], [1.0, -1.0], -math.inf, 0.0))
        for (k, j), c in self.z.items():
            rows.append(([c, self.u[j]], [1.0, -1.0], -math.inf, 0.0))
        for k in block:
            idx = [self.z[k, j] for j in chains[k]]
            rows.append((idx, [1.0] * len(idx), -math.inf, 1.0))
        import highspy  # here, not at the top: importing bounds.mig stays light

        from bounds.highs_lp import silent_highs

        self.highspy = highspy
        self.capacity_rows = []
        for k in block:
            idx, val = [], []
            for j in chains[k]:
                for key in self.pairs:
                    if key[1] == j:
                        idx.append(self.x[key])
                        val.append(self.time[key])
                idx += [self.u[j], self.z[k, j]]
                val += [create[j] + destroy[j], -destroy[j]]
            self.capacity_rows.append(len(rows))
            rows.append((idx, val, -math.inf, math.inf))
        h = silent_highs()
        h.setOptionValue("mip_rel_gap", 1e-7)
        h.setOptionValue("mip_abs_gap", 1e-9)
        inf = highspy.kHighsInf
        h.addCols(ncol, np.zeros(ncol), np.zeros(ncol), np.ones(ncol), 0, np.array([], dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([], dtype=np.float64))
        h.changeColsIntegrality(ncol, np.arange(ncol, dtype=np.int32),
                                np.array([highspy.HighsVarType.kInteger] * ncol))
        starts, index, value = [], [], []
        for idx, val, _, _ in rows:
            starts.append(len(index))
            index += idx
            value += val
        lo = np.array([-inf if r[2] == -math.inf else r[2] for r in rows])
        up = np.array([inf if r[3] == math.inf else r[3] for r in rows])
        h.addRows(len(rows), lo, up, len(index), np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32),
                  np.array(value, dtype=np.float64))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.ncol = ncol
        self.fallbacks = 0  # calls CP-SAT did not prove within CPSAT_LIMIT

    def load(self, pattern: tuple) -> float:
        """The largest slice load of a pattern of this block (seconds)."""
        worst = 0.0
        for k in self.block:
            used = {j for (_, j) in pattern if j in self.chains[k]}
            if not used:
                continue
            total = sum(self.time[key] for key in pattern if key[1] in used)
            total += sum(self.create[j] + self.destroy[j] for j in used) - max(self.destroy[j] for j in used)
            worst = max(worst, total)
        return worst

    def price(self, profit: dict[tuple[int, int], float], T: float, time_limit: float | None,
              gap: float = 1e-7, exact: bool = True) -> tuple[float, list[tuple[float, tuple, float]]]:
        """(an upper bound on the best profit, the patterns found as ``[(value, pattern, load)]``).

        CP-SAT first (:meth:`price_cpsat`); HiGHS (:meth:`price_highs`) when CP-SAT proves
        nothing within :data:`CPSAT_LIMIT` seconds. ``exact=False``: CP-SAT for at most
        :data:`QUICK_LIMIT` seconds, whatever it proves (its bound is still an upper bound).
        """
        limit = CPSAT_LIMIT if time_limit is None else min(CPSAT_LIMIT, time_limit)
        if not exact:
            limit = min(limit, QUICK_LIMIT)
        bound, found, proven = self.price_cpsat(profit, T, limit)
        if proven or not exact or (time_limit is not None and time_limit <= limit):
            return bound, found
        self.fallbacks += 1
        high, more = self.price_highs(profit, T, None if time_limit is None else time_limit - limit, gap)
        return min(bound, high), (more or found)

    def price_cpsat(self, profit: dict[tuple[int, int], float], T: float,
                    time_limit: float) -> tuple[float, list[tuple[float, tuple, float]], bool]:
        """The pricing on CP-SAT in integers: (upper bound, patterns found, proven optimal)."""
        from ortools.sat.python import cp_model

        keys = [key for key in self.pairs if profit.get(key, 0.0) > 0.0]
        if not keys:
            return 0.0, [], True
        top = max(profit[key] for key in keys)
        # units and profits as powers of two: exact products, floors and ceilings
        R = 2.0 ** math.floor(math.log2(CPSAT_UNITS / T))
        S = 2.0 ** math.floor(math.log2(CPSAT_PROFIT / (top * len(keys))))
        m = cp_model.CpModel()
        x = {key: m.new_bool_var("") for key in keys}
        places = sorted({j for _, j in keys})
        u = {j: m.new_bool_var("") for j in places}
        for (i, j), var in x.items():
            m.add_implication(var, u[j])
        by_task: dict[int, list] = {}
        for (i, _), var in x.items():
            by_task.setdefault(i, []).append(var)
        for vs in by_task.values():
            if len(vs) > 1:
                m.add_at_most_one(vs)
        cap = math.floor(T * R)
        for k in self.block:
            mine = [j for j in self.chains[k] if j in u]
            if not mine:
                continue
            z = {j: m.new_bool_var("") for j in mine}
            for j in mine:
                m.add_implication(z[j], u[j])
            m.add_at_most_one(z.values())
            # rounding every time down only enlarges the set of patterns: the bound stays an upper bound
            terms = [math.floor(self.time[i, j] * R) * var for (i, j), var in x.items() if j in z]
            terms += [(math.floor(self.create[j] * R) + math.floor(self.destroy[j] * R)) * u[j]
                      - math.ceil(self.destroy[j] * R) * z[j] for j in mine]
            m.add(sum(terms) <= cap)
        # symmetric sibling subtrees inside the block (profits alike: a task earns the same on each
        # placement inside the block): swapping them maps patterns onto patterns of the same profit,
        # outer pairs first, so the subtree listed first may carry at least the other's task load
        for a, b in self.symmetric:
            def side(places):
                return sum(math.floor(self.time[key] * R) * var for key, var in x.items() if key[1] in places)
            if any(key[1] in a or key[1] in b for key in x):
                m.add(side(set(a)) >= side(set(b)))
        m.maximize(sum(math.ceil(profit[key] * S) * var for key, var in x.items()))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_time_in_seconds = max(0.01, time_limit)
        seen = _recorder(cp_model, x)
        status = solver.solve(m, seen)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return math.inf, [], False
        bound = solver.best_objective_bound / S
        # every improving solution met on the way is a column too (several per call, fewer rounds)
        found = []
        for pattern in dict.fromkeys(seen.patterns):
            value = sum(profit[key] for key in pattern)
            if pattern and value > 0:
                found.append((value, pattern, self.load(pattern)))
        found.sort(key=lambda f: -f[0])
        top = found[0][0] if found else 0.0
        return max(bound, top), found, status == cp_model.OPTIMAL

    def price_highs(self, profit: dict[tuple[int, int], float], T: float, time_limit: float | None,
                    gap: float = 1e-7) -> tuple[float, list[tuple[float, tuple, float]]]:
        """The pricing MILP on HiGHS (float data): (its dual bound, the pattern found)."""
        h = self.h
        h.setOptionValue("mip_rel_gap", gap)
        cost = np.zeros(self.ncol)
        upper = np.ones(self.ncol)
        for key, c in self.x.items():
            v = profit.get(key, 0.0)
            cost[c] = v
            if v <= 0.0:
                upper[c] = 0.0  # never raises the maximum, only adds load
        h.changeColsCost(self.ncol, np.arange(self.ncol, dtype=np.int32), cost)
        h.changeColsBounds(self.ncol, np.arange(self.ncol, dtype=np.int32), np.zeros(self.ncol), upper)
        rows = np.array(self.capacity_rows, dtype=np.int32)
        h.changeRowsBounds(len(rows), rows, np.full(len(rows), -self.highspy.kHighsInf), np.full(len(rows), T))
        h.setOptionValue("time_limit", 1e6 if time_limit is None else max(0.01, time_limit))
        if h.run() == self.highspy.HighsStatus.kError:
            # a refused or failed run reads back a dual bound of 0, which would "prove" too much
            return math.inf, []
        info = h.getInfo()
        bound = info.mip_dual_bound
        if not math.isfinite(bound):
            return math.inf, []
        sol = h.getSolution().col_value
        pattern = tuple(sorted(key for key, c in self.x.items() if sol[c] > 0.5))
        value = sum(profit.get(key, 0.0) for key in pattern)
        bound = max(bound, value)
        found = [(value, pattern, self.load(pattern))] if pattern and value > 0 else []
        return bound, found
