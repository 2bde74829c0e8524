"""CP-SAT backend of the exact MIG model (FAR paper, Sec. 2.2; rules 1-6 of :mod:`instances.mig_check`).

Call it through :func:`milp.mig.solve` (``backend="cpsat"``), which checks the
options, applies ``reconfiguration=False`` as ``problem.without_reconfiguration()``
and hands over a :class:`~instances.options.Deadline` and a checked incumbent.

Three models share one builder: the *laminar assignment model* (no
reconfiguration, one release time: the makespan of an assignment is its
largest slice load), the *interval model* (no reconfiguration, release
times) and the *session model* (with reconfiguration: ordered session slots
per placement, create/destroy operations on one serialised channel), which
starts from the bound of an assignment relaxation. Symmetric subtrees of
the GPU, dominated placements and a slot bound reduce the search.

Times are integers: durations are rounded *down* to units of ``1 / R``
seconds (at least one unit each), so the rounded model is a relaxation whose
bound, less the rounding excess, is valid for the user's data; the resolution
``R`` is chosen from the data so that a rounded optimum is also an optimum of
the float problem within :data:`milp.TOLERANCE`, and finer re-solves close
what rounding leaves open. Every solution is re-timed with the float
durations (:mod:`instances.mig_retime`) and checked before it is returned.

The formulations and the proofs (slot bound, symmetry, dominance, scaling
and the validity of the bound) are in ``docs/models/mig_cpsat.md``.

Examples
--------
>>> from instances import mig
>>> from milp import mig as milp_mig
>>> p = mig.generate(n=5, gpu="A30", seed=2)
>>> res = milp_mig.solve(p, backend="cpsat", reconfiguration=False, time_limit=20, hint=False)
>>> str(res.status), res.gap <= 1e-6
('OPTIMAL', True)
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Union

from ortools.sat.python import cp_model

from bounds import mig as mig_bounds
from instances import mig
from instances.errors import SolverError
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances.mig_retime import Session, TimedPlan, canonical, retime_order, retime_sessions
from instances.options import Deadline, known_options
from milp import cpsat
from milp.mig_plans import checked, improve_assignment, tree_plans, tree_schedule
from milp.result import TOLERANCE, Result

__all__ = ["solve_cpsat", "Scale", "choose_resolution", "session_slots", "tree_schedule", "tree_plans", "improve_assignment", "relaxation_bound", "MAX_UNITS"]

ProblemLike = Union[Problem, Workload]

#: Largest model time (units) a resolution may produce, so that every linear
#: row (at most a few dozen terms per task) stays far inside 64-bit integers.
MAX_UNITS = 2 ** 40


def _is_power_of_two(x: float) -> bool:
    m, _ = math.frexp(x)
    return m == 0.5


@dataclass(frozen=True)
class Scale:
    """Integer time units of the model: ``R`` units per second, durations rounded down.

    ``units(x)`` is ``floor(x * R)`` (exact when R is a power of two, the
    automatic choice; otherwise taken a hair lower so float error never
    rounds up). Durations use at least one unit: ``dur(x) = max(1, units(x))``.
    ``excess`` bounds how much those one-unit floors add along any chain of a
    schedule; the bound of the model, less it, is valid for the float data
    (``docs/models/mig_cpsat.md``).

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 0.5, 2: 0.25, 4: 0.125})]).without_reconfiguration()
    >>> s = Scale.of(p, 4.0); s.dur(0.125), s.dur(0.5), s.excess
    (1, 2, 0.5)
    """

    R: float
    excess: float = 0.0
    exact: bool = field(default=True, compare=False)

    @classmethod
    def of(cls, problem: ProblemLike, R: float) -> "Scale":
        R = float(R)
        exact = _is_power_of_two(R)
        gpu = problem.gpu
        # each task's worst one-unit floor is on its fastest (shortest) size
        excess = sum(max(0.0, 1.0 - R * min(t.times.values())) for t in problem.tasks)
        if gpu.reconfigurable:
            # at most n sessions, each with a create and a destroy, on any chain
            per_session = max(max(0.0, 1.0 - R * gpu.create_time[s]) + max(0.0, 1.0 - R * gpu.destroy_time[s])
                              for s in gpu.sizes)
            excess += problem.n * per_session
        return cls(R, excess, exact)

    def units(self, seconds: float) -> int:
        if self.exact:
            return max(0, math.floor(seconds * self.R))
        return max(0, math.floor(seconds * self.R * (1.0 - 2.0 ** -40)))

    def dur(self, seconds: float) -> int:
        return max(1, self.units(seconds))

    def bound(self, model_bound: float) -> float:
        """A bound in seconds, valid for the float data, from a bound of the rounded model."""
        return max(0.0, (float(model_bound) - self.excess) / self.R)


def _chain(problem: ProblemLike) -> int:
    """Activities on a longest chain of a schedule: tasks, their operations and one release."""
    n = problem.n
    return (3 * n + 1) if problem.gpu.reconfigurable else (n + 1)


@known_options
def choose_resolution(problem: ProblemLike, lower_bound: float, horizon: float) -> float:
    """Units per second, a power of two, from the data.

    Rounding costs at most one unit per activity on a chain on the primal side
    and the one-unit floors at most as much on the bound side, so with
    ``R >= (L + E) / (TOLERANCE * lower_bound)`` (L activities on a chain, E <= L
    their excess) a rounded optimum is within the tolerance on the float data.
    ``R`` is capped so the horizon stays below :data:`MAX_UNITS`.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(n=12, gpu="A100", seed=0)
    >>> R = choose_resolution(p, 100.0, 150.0); R == 2 ** 20, R * 150.0 < MAX_UNITS
    (True, True)
    """
    chain = _chain(problem)
    need = 2 * chain / (0.9 * TOLERANCE * max(lower_bound, 1e-300))
    cap = MAX_UNITS / max(horizon, 1e-300)
    return 2.0 ** min(math.ceil(math.log2(need)), math.floor(math.log2(cap)))


@known_options
def session_slots(problem: ProblemLike, placement: Placement, upper_bound: float | None = None,
                  scale: Scale | None = None) -> int:
    """The exact session-slot bound K_p of the session model.

    A session runs at least one task, so p has at most as many sessions as
    tasks may use its size; for a single batch the root needs one session.
    With ``upper_bound`` (seconds; model units when a ``scale`` is given) also:
    m sessions of p need m creates, m - 1 destroys and at least m tasks on
    p's slices one after another, so m is at most the largest count whose
    shortest tasks and operations fit below the bound.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task(f"t{i}", {1: d, 2: d, 4: d}) for i, d in enumerate([2.0, 3.0, 4.0])])
    >>> leaf = p.gpu.placement(1, 0)
    >>> session_slots(p, leaf), session_slots(p, leaf, upper_bound=5.5), session_slots(p, p.gpu.root)
    (3, 2, 1)
    """
    gpu = problem.gpu

    def d(x: float) -> float:
        return x if scale is None else scale.dur(x)

    durations = sorted(d(t.times[placement.size]) for t in problem.tasks if placement.size in t.times)
    n_p = len(durations)
    # merging root sessions shifts phases earlier, only safe when no task waits for a release
    if placement == gpu.root and all(r == 0 for r in problem.releases().values()):
        return min(1, n_p)
    if upper_bound is None:
        return n_p
    tc, td = d(gpu.create_time[placement.size]), d(gpu.destroy_time[placement.size])
    m, total = 0, 0.0
    for dur in durations:
        total += dur + tc + (td if m else 0)
        if total > upper_bound:
            break
        m += 1
    return max(m, 1) if n_p else 0


# ---------------------------------------------------------------------------
# The model

@dataclass
class _Model:
    model: cp_model.CpModel
    makespan: Any
    start: dict
    x: dict  # (i, placement key) -> BoolVar
    slots: dict  # placement key -> list of slot dicts
    horizon: int


def _allowed(problem: ProblemLike, dominance: bool) -> list[list[Placement]]:
    """Placements each task may use; without reconfiguration the fastest of equal occupancy."""
    out = []
    for t in problem.tasks:
        ps = [p for p in problem.gpu.placements if p.size in t.times]
        if not problem.gpu.reconfigurable and dominance:
            best: dict[frozenset, Placement] = {}
            for p in ps:
                q = best.get(p.slices)
                if q is None or (t.times[p.size], -p.size) < (t.times[q.size], -q.size):
                    best[p.slices] = p
            ps = [p for p in ps if best[p.slices] == p]
        out.append(ps)
    return out


def _symmetry(m: cp_model.CpModel, problem: ProblemLike, x: dict) -> None:
    """The lowest-indexed task placed in a symmetric pair of subtrees lies in the left one."""
    n = problem.n
    for left, right in problem.gpu.symmetric_subtrees():
        lk = [q.key() for q in left]
        for i in range(n):
            for kb in (q.key() for q in right):
                if (i, kb) in x:
                    earlier = [x[j, ka] for j in range(i) for ka in lk if (j, ka) in x]
                    m.add_bool_or([x[i, kb].negated(), *earlier])


def _build(problem: ProblemLike, scale: Scale, lb: int, horizon: int, *, laminar: bool, symmetry: bool,
           redundant: bool, dominance: bool, relaxation: bool = False, converge: bool = False) -> _Model:
    """The laminar, interval or session model in units of ``scale``.

    ``relaxation``: the laminar assignment relaxation of the session model
    (used only for its bound); ``converge`` adds its convergence rows
    (:func:`_convergence_cuts`).
    """
    gpu = problem.gpu
    tasks = problem.tasks
    n = len(tasks)
    rel = problem.releases()
    reconf = gpu.reconfigurable
    m = cp_model.CpModel()
    S = gpu.num_slices
    tc = {s: scale.dur(gpu.create_time[s]) for s in gpu.sizes} if reconf else {}
    td = {s: scale.dur(gpu.destroy_time[s]) for s in gpu.sizes} if reconf else {}
    allowed = _allowed(problem, dominance and not relaxation)
    horizon = max(horizon, lb)
    makespan = m.new_int_var(lb, horizon, "makespan")
    start: dict = {}
    x: dict = {}
    dur: dict = {}

    if laminar or relaxation:
        r0 = max((scale.units(r) for r in rel.values()), default=0)
        load: dict[int, list] = defaultdict(list)
        for i, t in enumerate(tasks):
            lits = []
            for p in allowed[i]:
                d = scale.dur(t.times[p.size])
                lit = m.new_bool_var(f"x{i}_{p.name}")
                x[i, p.key()], dur[i, p.key()] = lit, d
                for k in p.slices:
                    load[k].append(d * lit)
                lits.append(lit)
            m.add_exactly_one(lits)
        if relaxation:
            # each used placement has a session; sessions on a slice are
            # disjoint and all but one destroyed; creates are serialised and
            # the last one is followed by a task
            used = {}
            for p in gpu.placements:
                lits = [x[i, p.key()] for i in range(n) if (i, p.key()) in x]
                if lits:
                    used[p.key()] = m.new_bool_var(f"used{p.name}")
                    for lit in lits:
                        m.add_implication(lit, used[p.key()])
                    # no empty sessions: one would give its slices an early first create for free
                    m.add_bool_or(lits).only_enforce_if(used[p.key()])
            # the GPU starts empty and creates run one at a time: all of slice
            # k's sessions lie after the create of its first session, at a_k
            create = {}
            again_of, end_of = {}, {}
            # fin[q]: q's final session is the final one on every slice of q and never destroyed; only
            # such a session's destroy may be left out of a slice's load (any other session is
            # destroyed before the next one on one of its slices, and its destroy holds all its slices)
            fin = {key: m.new_bool_var(f"fin{key}") for key in used} if converge else {}
            for key, u in used.items():
                c = m.new_int_var(0, horizon, f"c{key}")
                create[key] = (c, m.new_optional_fixed_size_interval_var(c, tc[key[0]], u, f"create{key}"))
            m.add_no_overlap([iv for _, iv in create.values()])
            for k in range(S):
                over = [gpu.placement(*key) for key in used if k in gpu.placement(*key).slices]
                load[k] += [(tc[q.size] + td[q.size]) * used[q.key()] for q in over]
                if over:
                    # the last session on slice k is the only one that may stay undestroyed
                    last = [m.new_bool_var(f"last{k}_{q.name}") for q in over]
                    for q, f in zip(over, last) if converge else ():
                        m.add_implication(fin[q.key()], f)
                    # without the convergence rows the destroy left out is chosen per slice (weaker,
                    # but CP-SAT proves it sooner); with them only a session final on all its slices
                    stays = [fin[q.key()] for q in over] if converge else last
                    m.add_at_most_one(last)
                    for q, f in zip(over, last):
                        m.add_implication(f, used[q.key()])
                    for q in over:  # a slice no used placement covers has no sessions
                        m.add_bool_or(last).only_enforce_if(used[q.key()])
                    load[k] += [-td[q.size] * f for q, f in zip(over, stays)]
                    first = [m.new_bool_var(f"first{k}_{q.name}") for q in over]
                    # first and last on the slice with another used placement between: a second session
                    for q, f, lst in zip(over, first, last):
                        again = m.new_bool_var(f"again{k}_{q.name}")
                        again_of[k, q.key()] = again
                        for r in over:
                            if r != q:
                                m.add_bool_or([f.Not(), lst.Not(), used[r.key()].Not(), again])
                        load[k].append((tc[q.size] + td[q.size]) * again)
                r0k = r0
                m.add(r0k + sum(load[k]) <= makespan)
                if over:
                    a = m.new_int_var(0, horizon, f"a{k}")
                    m.add_at_most_one(first)
                    for q, f in zip(over, first):
                        c = create[q.key()][0]
                        m.add_implication(f, used[q.key()])
                        m.add(a == c).only_enforce_if(f)
                        m.add(a <= c).only_enforce_if(used[q.key()])
                        m.add_bool_or(first).only_enforce_if(used[q.key()])
                    end_of[k] = a + r0k + sum(load[k])
                    m.add(end_of[k] <= makespan)
            if converge:
                _convergence_cuts(m, gpu, used, fin, again_of, end_of, td, makespan)
            shortest = min(scale.dur(min(t.times.values())) for t in tasks)
            m.add(sum(tc[key[0]] * u for key, u in used.items()) + shortest <= makespan)
        else:
            for k, terms in load.items():
                m.add(r0 + sum(terms) <= makespan)
        if symmetry:
            _symmetry(m, problem, x)
        m.minimize(makespan)
        return _Model(m, makespan, start, x, {}, horizon)

    task_iv: dict[tuple[int, int], list] = defaultdict(list)
    slice_iv: dict[int, list] = defaultdict(list)
    cum_iv, cum_dem = [], []
    for i, t in enumerate(tasks):
        start[i] = m.new_int_var(scale.units(rel[t.name]), horizon, f"s{i}")
        lits = []
        for p in allowed[i]:
            d = scale.dur(t.times[p.size])
            lit = m.new_bool_var(f"x{i}_{p.name}")
            iv = m.new_optional_fixed_size_interval_var(start[i], d, lit, f"iv{i}_{p.name}")
            x[i, p.key()], dur[i, p.key()] = lit, d
            m.add(start[i] + d <= makespan).only_enforce_if(lit)
            task_iv[p.key()].append(iv)
            if not reconf or redundant:
                for k in p.slices:
                    slice_iv[k].append(iv)
            cum_iv.append(iv)
            cum_dem.append(len(p.slices))
            lits.append(lit)
        m.add_exactly_one(lits)
        m.add(makespan >= start[i] + min(dur[i, p.key()] for p in allowed[i]))
    for ivs in slice_iv.values():
        m.add_no_overlap(ivs)
    if redundant:
        m.add_cumulative(cum_iv, cum_dem, S)
        # per node of the tree: the tasks inside its slices Q fit in |Q| * makespan
        for q in {p.slices for p in gpu.placements}:
            terms = []
            for (i, key), lit in x.items():
                width = len(gpu.placement(*key).slices & q)
                if width:
                    terms.append(width * dur[i, key] * lit)
            if terms:
                m.add(sum(terms) <= len(q) * makespan)
    if symmetry:
        _symmetry(m, problem, x)

    slots: dict[tuple[int, int], list] = {}
    if reconf:
        _add_sessions(m, problem, scale, x, dur, task_iv, makespan, horizon, tc, td, redundant, slots)
    m.minimize(makespan)
    return _Model(m, makespan, start, x, slots, horizon)


def _convergence_cuts(m: cp_model.CpModel, gpu, used: dict, fin: dict, again_of: dict, end_of: dict,
                      td: dict, makespan) -> None:
    """Rows of the assignment relaxation for a placement whose final session outlasts its slices.

    When placement q is the last placement on every one of its slices
    (``fin``), its final session starts only after the session before it on
    each of its slices k (``prev[k]``, a placement covering k, or q itself for
    an earlier session of q) is destroyed. Two such destroys on slices k, k'
    whose preceding placements differ are different operations, and the
    channel runs them one after the other; the one that goes second delays
    q's create by its own length beyond the other slice's load. So the
    makespan is at least ``min(end_k + t_destroy(prev[k']), end_k' +
    t_destroy(prev[k]))``, where ``end_k`` is slice k's row of the relaxation
    (first create plus load). The relaxation without these rows lets a root
    session run last after children ending together on both halves of the GPU,
    which the channel cannot serve.
    """
    placements = [gpu.placement(*key) for key in used]
    for q in placements:
        if len(q.slices) < 2:
            continue
        key = q.key()
        prev, has = {}, {}
        for k in q.slices:
            others = [r for r in placements if r != q and k in r.slices]
            lits = {r.key(): m.new_bool_var(f"prev{q.name}_{k}_{r.name}") for r in others + [q]}
            m.add_at_most_one(lits.values())
            for rk, lit in lits.items():
                m.add_implication(lit, used[rk])
                m.add_implication(lit, fin[key])
            # q before itself: q has a second session on k
            m.add_implication(lits[key], again_of[k, key])
            for r in others:
                m.add_bool_or(list(lits.values())).only_enforce_if([fin[key], used[r.key()]])
            has[k] = m.new_bool_var(f"hasprev{q.name}_{k}")
            m.add(sum(lits.values()) == has[k])
            prev[k] = lits
        for k, k2 in itertools.combinations(sorted(q.slices), 2):
            # the same placement before q on both slices: one destroy may free both
            shared = [r for r in prev[k] if r in prev[k2]]
            same = []
            for r in shared:
                lit = m.new_bool_var(f"same{q.name}_{k}_{k2}_{r}")
                m.add_bool_or([lit, prev[k][r].Not(), prev[k2][r].Not()])
                m.add_implication(lit, prev[k][r])
                m.add_implication(lit, prev[k2][r])
                same.append(lit)
            t1 = sum(td[r[0]] * lit for r, lit in prev[k].items())
            t2 = sum(td[r[0]] * lit for r, lit in prev[k2].items())
            order = m.new_bool_var(f"order{q.name}_{k}_{k2}")
            when = [fin[key], has[k], has[k2]] + [lit.Not() for lit in same]
            m.add(makespan >= end_of[k] + t2).only_enforce_if(when + [order])
            m.add(makespan >= end_of[k2] + t1).only_enforce_if(when + [order.Not()])


def _add_sessions(m, problem, scale, x, dur, task_iv, makespan, horizon, tc, td, redundant, slots) -> None:
    """Session slots per placement, their operations on one channel, and the LP cuts (rules 1-4)."""
    gpu = problem.gpu
    n = problem.n
    S = gpu.num_slices
    ops, occ_by_slice, occ_all, occ_dem = [], defaultdict(list), [], []
    for p in gpu.placements:
        on_p = [x[i, p.key()] for i in range(n) if (i, p.key()) in x]
        K = min(session_slots(problem, p, horizon, scale), len(on_p))
        if K == 0:
            continue
        c_t, d_t = tc[p.size], td[p.size]
        plist = []
        for k in range(K):
            b = m.new_bool_var(f"b{p.name}_{k}")
            e = m.new_bool_var(f"e{p.name}_{k}")
            m.add_implication(e, b)
            c = m.new_int_var(0, horizon, f"c{p.name}_{k}")
            d = m.new_int_var(0, horizon, f"d{p.name}_{k}")
            u = m.new_int_var(0, horizon, f"u{p.name}_{k}")  # window start
            v = m.new_int_var(0, horizon, f"v{p.name}_{k}")  # window end (= destroy start)
            oe = m.new_int_var(0, horizon, f"oe{p.name}_{k}")  # occupancy end
            m.add(u == c + c_t).only_enforce_if(b)
            m.add(u == horizon).only_enforce_if(b.negated())
            m.add(c == 0).only_enforce_if(b.negated())
            m.add(v == d).only_enforce_if(e)
            m.add(v == horizon).only_enforce_if(e.negated())
            m.add(d == 0).only_enforce_if(e.negated())
            m.add(d >= u).only_enforce_if(e)
            # a destroy ending after the makespan precedes no session: drop it
            m.add(d + d_t <= makespan).only_enforce_if(e)
            m.add(oe == d + d_t).only_enforce_if(e)
            m.add(oe == horizon).only_enforce_if(e.negated())
            ops.append(m.new_optional_fixed_size_interval_var(c, c_t, b, f"create{p.name}_{k}"))
            ops.append(m.new_optional_fixed_size_interval_var(d, d_t, e, f"destroy{p.name}_{k}"))
            occ = m.new_optional_interval_var(c, m.new_int_var(0, horizon, ""), oe, b, f"occ{p.name}_{k}")
            for s in p.slices:
                occ_by_slice[s].append(occ)
            occ_all.append(occ)
            occ_dem.append(len(p.slices))
            plist.append({"b": b, "e": e, "c": c, "d": d, "u": u, "v": v})
        for k in range(1, K):
            prev, cur = plist[k - 1], plist[k]
            m.add_implication(cur["b"], prev["e"])  # a later session needs the earlier one destroyed
            m.add(cur["c"] >= prev["d"] + d_t).only_enforce_if(cur["b"])
        m.add(sum(s["b"] for s in plist) <= sum(on_p))
        for lit in on_p:  # a task on p needs a session of p (LP link)
            m.add_implication(lit, plist[0]["b"])
        # tasks on p avoid the gaps between p's windows
        gaps = []
        prev_end = 0
        for k, s in enumerate(plist):
            gaps.append(m.new_interval_var(prev_end, m.new_int_var(0, horizon, ""), s["u"], f"gap{p.name}_{k}"))
            prev_end = s["v"]
        gaps.append(m.new_interval_var(prev_end, m.new_int_var(0, horizon, ""), horizon, f"gap{p.name}_end"))
        m.add_no_overlap(task_iv[p.key()] + gaps)
        slots[p.key()] = plist
    for ivs in occ_by_slice.values():
        m.add_no_overlap(ivs)
    m.add_no_overlap(ops)
    if redundant:
        # LP cuts: sessions on one slice are disjoint and lie in [0, makespan]
        # with their operations and tasks; at most one is never destroyed; all
        # operations share one channel
        session_terms: dict[int, list] = defaultdict(list)
        alive: dict[int, list] = defaultdict(list)
        channel = []
        for key, plist in slots.items():
            p = gpu.placement(*key)
            for sl in plist:
                for k in p.slices:
                    session_terms[k] += [tc[p.size] * sl["b"], td[p.size] * sl["e"]]
                    alive[k] += [sl["b"], -sl["e"]]
                channel += [tc[p.size] * sl["b"], td[p.size] * sl["e"]]
        for k in range(S):
            load = [dur[i, key] * lit for (i, key), lit in x.items() if k in gpu.placement(*key).slices]
            m.add(sum(session_terms[k]) + sum(load) <= makespan)
            m.add(sum(alive[k]) <= 1)
        m.add(sum(channel) <= makespan)
        m.add_cumulative(occ_all, occ_dem, S)
    for (i, key), lit in x.items():  # placements without a slot cannot host tasks
        if key not in slots:
            m.add(lit == 0)


def _hints(built: _Model, problem: ProblemLike, hint: mig.Schedule, scale: Scale) -> list[tuple[Any, int]]:
    """(variable, value) pairs describing ``hint`` in the model."""
    out: list[tuple[Any, int]] = []
    index = {t.name: i for i, t in enumerate(problem.tasks)}
    for st in hint.tasks:
        i = index.get(st.task)
        if i is None:
            continue
        key = st.placement.key()
        out += [(lit, int(k2 == key)) for (j, k2), lit in built.x.items() if j == i]
        if i in built.start:
            out.append((built.start[i], min(scale.units(st.start), built.horizon)))
    if not built.slots:
        return out
    by_p: dict[tuple[int, int], list] = defaultdict(list)
    for op in hint.reconfigurations:
        by_p[op.placement.key()].append(op)
    for key, plist in built.slots.items():
        ops = sorted(by_p.get(key, []), key=lambda o: (o.start, o.op != "destroy"))
        sessions, cur = [], None
        for op in ops:
            if op.op == "create":
                cur = [op, None]
                sessions.append(cur)
            elif cur is not None and cur[1] is None:
                cur[1] = op
        for k, slot in enumerate(plist):
            if k < len(sessions):
                cr, de = sessions[k]
                out += [(slot["b"], 1), (slot["c"], min(scale.units(cr.start), built.horizon)),
                        (slot["e"], int(de is not None))]
                if de is not None:
                    out.append((slot["d"], min(scale.units(de.start), built.horizon)))
            else:
                out += [(slot["b"], 0), (slot["e"], 0)]
    return out


def _extract(built: _Model, run: cpsat.CpsatRun, problem: ProblemLike) -> TimedPlan | mig.Schedule:
    """The incumbent, re-timed with the float durations."""
    gpu = problem.gpu
    chosen = {(i, key) for (i, key), lit in built.x.items() if run.boolean(lit)}
    if not built.start:  # laminar model: the assignment implies the schedule
        return tree_schedule(problem, {problem.tasks[i].name: gpu.placement(*key) for i, key in chosen})
    runs = sorted((run.value(built.start[i]), i, key) for i, key in chosen)
    if not built.slots:
        return retime_order(problem, [(problem.tasks[i].name, gpu.placement(*key)) for _, i, key in runs])
    sessions, c_at, d_at = [], [], []
    for key, plist in built.slots.items():
        for slot in plist:
            if not run.boolean(slot["b"]):
                continue
            u, v = run.value(slot["u"]), run.value(slot["v"])
            members = [problem.tasks[i].name for s, i, k2 in runs if k2 == key and u <= s < v]
            if not members:
                continue  # an empty session only costs time: drop it
            sessions.append(Session(gpu.placement(*key), tuple(members)))
            c_at.append(run.value(slot["c"]))
            d_at.append(run.value(slot["d"]) if run.boolean(slot["e"]) else math.inf)
    try:
        return retime_sessions(problem, sessions, c_at, d_at)
    except ValueError as exc:
        raise SolverError(f"CP-SAT's session plan cannot be re-timed (a model bug): {exc}") from None


def _checked(problem: ProblemLike, plan: TimedPlan | mig.Schedule) -> mig.Schedule:
    return checked(problem, plan.schedule if isinstance(plan, TimedPlan) else plan, "the CP-SAT schedule")


@dataclass
class _MasterRun:
    """One solve of the assignment relaxation: its proven bound (model units), status and best assignment."""

    units: int
    status: str
    assignment: dict[str, Placement] | None = None
    literals: dict = field(default_factory=dict)  # task name -> its x literal in that assignment
    objective: int | None = None
    stats: dict = field(default_factory=dict)  # the solve's wall time


#: Full-search subsolvers of the assignment relaxation, in the order workers get them. Its incumbent
#: matters little (the tree plans and Benders subproblems give the schedules), its bound everything:
#: lb_tree_search (a best-first search on the objective's lower bound) raises the bound, no_lp (pure
#: clause learning) closes it. CP-SAT's default for 2 workers is default_lp alone beside LNS workers.
MASTER_SUBSOLVERS = ("lb_tree_search", "no_lp", "max_lp", "default_lp", "quick_restart", "quick_restart_no_lp",
                     "pseudo_costs", "reduced_costs", "core")


def master_parameters(workers: int | None) -> dict[str, Any]:
    """CP-SAT parameters of the relaxation (Benders master) solves: every worker on a full search.

    With ``w >= 2`` workers the first ``w`` of :data:`MASTER_SUBSOLVERS` run
    as full-problem subsolvers (CP-SAT's default keeps one worker for LNS);
    the worker count the caller gave is kept. A100 n = 20
    MixedScaling/WideTimes, p_sup 0.5, 2 workers, 60 s, fresh seeds 2300-2302:
    default bounds 125.29 / 103.27 / 136.98, none proven; with max_lp and
    no_lp 125.60 / 104.36 (proven in 7.9 s) / 137.32. Fresh seeds
    3300-3303, 40 s: max_lp and no_lp 147.68 / 116.67 (proven in 20.3 s) /
    123.23 / 142.04; lb_tree_search and no_lp 147.81 / 116.67 (13.4 s) /
    123.30 / 142.41 (max_lp beside lb_tree_search, objective_lb_search
    beside no_lp: in between, seed 3301 unproven).

    Examples
    --------
    >>> master_parameters(2)["subsolvers"]
    ['lb_tree_search', 'no_lp']
    >>> master_parameters(1)
    {}
    """
    w = int(workers or cpsat.DEFAULT_WORKERS)
    if w < 2 or w > len(MASTER_SUBSOLVERS):
        return {}  # one worker has no choice; many get CP-SAT's own portfolio
    names = list(MASTER_SUBSOLVERS[:w])
    return {"num_full_subsolvers": len(names), "subsolvers": names}


#: Share of the relaxation's budget spent by the full-search workers before CP-SAT's defaults take
#: over (:func:`_relaxation_bound`).
PROOF_SHARE = 5 / 8


def _solve_master(built: _Model, problem: ProblemLike, lb_units: int, limit: float, workers, seed,
                  proof: bool = True) -> _MasterRun:
    """Solve the assignment relaxation (with any Benders cuts added so far) for at most ``limit`` s.

    ``proof``: every worker on a full search (:func:`master_parameters`);
    otherwise CP-SAT's defaults, whose LNS workers find better assignments.
    """
    # no hint: the incumbent's assignment as hint gave worse tree plans (n = 20 and 35, 4 of 4
    # instances); max_lp alone in place of default_lp moved the 60 s gaps little; two full searches
    # side by side, a bound-raising one beside no_lp (master_parameters), prove masters sooner
    run = cpsat.run(built.model, time_limit=Deadline(limit), workers=workers, seed=seed,
                    parameters=master_parameters(workers) if proof else None)
    bound = run.bound
    units = lb_units if bound is None else max(lb_units, int(math.floor(bound + 1e-9)))
    if run.status == "INFEASIBLE":
        # every assignment's (cut) value exceeds the horizon: the horizon itself is a bound
        return _MasterRun(max(lb_units, built.horizon + 1), run.status)
    out = _MasterRun(units, run.status, objective=run.objective)
    out.stats = {k: v for k, v in run.stats.items() if k == "wall_time"}
    if run.has_solution:
        gpu = problem.gpu
        chosen = [(i, key, lit) for (i, key), lit in built.x.items() if run.boolean(lit)]
        out.assignment = {problem.tasks[i].name: gpu.placement(*key) for i, key, _ in chosen}
        out.literals = {problem.tasks[i].name: lit for i, _, lit in chosen}
    return out


def _relaxation_bound(problem, scale, lb_units, horizon, deadline, relax_time, workers, seed, symmetry,
                      info, share: float = 1 / 3, converge: bool = False) -> tuple[_Model, _MasterRun]:
    """Build and solve the assignment relaxation; return the model (the Benders master) and its run."""
    built = _build(problem, scale, lb_units, horizon, laminar=False, symmetry=symmetry, redundant=True,
                   dominance=False, relaxation=True, converge=converge)
    remaining = deadline.remaining()
    limit = relax_time if remaining is None else min(relax_time, remaining * share)
    # masters that are proven at all are proven early by the full-search workers; when the first
    # part of the budget ends without a proof, the rest goes to CP-SAT's defaults, whose LNS finds
    # the better assignments (and hence schedules) on such large instances
    started = deadline.elapsed()
    run = _solve_master(built, problem, lb_units, limit * PROOF_SHARE, workers, seed)
    info["relaxation"] = {"status": run.status, "bound": scale.bound(run.units), **run.stats}
    rest = limit - (deadline.elapsed() - started)
    if run.status in ("OPTIMAL", "INFEASIBLE") or not math.isfinite(limit) or rest <= 0:
        return built, run
    built.model.add(built.makespan >= run.units)  # proven for this model: a valid row
    wide = _solve_master(built, problem, run.units, rest, workers, seed, proof=False)
    best = wide if wide.assignment is not None and (run.objective is None or wide.objective <= run.objective) \
        else run
    status = wide.status if wide.status in ("OPTIMAL", "INFEASIBLE") else best.status
    out = _MasterRun(max(run.units, wide.units), status, best.assignment, best.literals, best.objective,
                     {"wall_time": run.stats.get("wall_time", 0.0) + wide.stats.get("wall_time", 0.0)})
    info["relaxation"] = {"status": out.status, "bound": scale.bound(out.units),
                          "proof_phase_bound": scale.bound(run.units), **out.stats}
    return built, out


def _phases(split: bool, deadline: Deadline, workers) -> list[tuple[float, dict[str, Any] | None]]:
    """The solves of one model: (share of the time left, CP-SAT parameters) each.

    With ``split`` (the laminar assignment model, a time limit, two or more
    workers) first :data:`PROOF_SHARE` of the time with every worker on a full
    search (:func:`master_parameters`), then CP-SAT's defaults, whose LNS
    workers find the better assignments, for the rest: the split the
    assignment relaxation uses. A100 n = 20 MixedScaling/WideTimes p_sup 0.5
    without reconfiguration, 60 s: the full-search workers alone proved
    tuning seeds 4500-4503 in 3.0 / 6.5 / 22.4 / 55.2 s against 12.3 / 19.5
    / 47.9 / >60 s with the defaults.
    """
    proof = master_parameters(workers)
    if not split or not proof or deadline.remaining() is None:
        return [(1.0, None)]
    return [(PROOF_SHARE, proof), (1.0, None)]


def _deletion_filter(problem: Problem, assignment: dict[str, Placement], target: float, deadline: Deadline,
                     workers, seed) -> set[str]:
    """Tasks whose placements in ``assignment`` alone force a makespan of at least ``target``.

    The deletion filter of Benders cut strengthening (Hooker, "Planning and
    scheduling by logic-based Benders decomposition", Operations Research 55,
    2007): a task is dropped from the cut when the session model of the
    remaining tasks, with their placements fixed, still proves ``target``.
    Valid because removing tasks from a schedule leaves a schedule of the
    rest that is no longer (empty sessions are deleted), so every assignment
    that places the kept tasks as ``assignment`` does has makespan >= ``target``.
    Tasks on the least loaded slices are tried first; at most a quarter of
    the time left is spent.
    """
    gpu = problem.gpu
    load = defaultdict(float)
    for t in problem.tasks:
        for k in assignment[t.name].slices:
            load[k] += t.times[assignment[t.name].size]
    order = sorted(problem.tasks, key=lambda t: (max(load[k] for k in assignment[t.name].slices), t.name))
    kept = {t.name for t in problem.tasks}
    remaining = deadline.remaining()
    budget = Deadline(None if remaining is None else remaining / 4)
    for t in order:
        if budget.expired():
            break
        rest = [u for u in problem.tasks if u.name in kept and u.name != t.name]
        if not rest:
            break
        sub = Problem(gpu, rest)
        mine = {u.name: assignment[u.name] for u in rest}
        # pure orders only: with the mixed ones the filter took 5.8 s instead of 0.9 s on a
        # `benchmarks.compare --n 12` instance (index 2), and that command's mean time to proof
        # rose from 0.6-1.1 s to 1.4-1.8 s
        tree = _checked(sub, tree_plans(sub, mine, budget, mixed=False))
        if tree.makespan < target * (1 - TOLERANCE):
            continue  # the rest already has a shorter schedule
        res = solve_cpsat(sub, deadline=Deadline(budget.remaining()), incumbent=tree, hint=tree, workers=workers,
                          relax=False, fix_assignment=True, seed=seed)
        if res.lower_bound >= target:
            kept.discard(t.name)
    return kept


def _benders(problem: ProblemLike, master: _Model, run: _MasterRun, scale: Scale, lb: float,
             best: mig.Schedule, deadline: Deadline, workers, seed, info: dict) -> tuple[float, mig.Schedule]:
    """Close the gap left by the assignment relaxation by logic-based Benders decomposition.

    Hooker & Ottosson, "Logic-based Benders decomposition", Math. Programming
    96 (2003), with the relaxation as master (which task on which placement)
    and the session model with that assignment fixed as subproblem (its exact
    optimum: sessions, operations, channel). While the master is proven
    optimal with assignment A whose best schedule is longer than the master's
    value, the cut "assignment A => makespan >= the subproblem's bound"
    is added and the master solved again. Every schedule with assignment A is
    at least that long, so the master stays a relaxation of the MIG problem
    and its bound stays valid; when the master proves a value that a
    subproblem schedule reaches, that schedule is optimal (``docs/models/mig_cpsat.md``,
    "Benders loop"). Returns the new bound (seconds) and the best schedule.
    """
    steps = info.setdefault("benders", [])
    # per assignment met before: the subproblem's bound and best schedule, to resume from
    seen: dict[frozenset, tuple[float, mig.Schedule]] = {}
    while run.status == "OPTIMAL" and run.assignment is not None and not deadline.expired():
        if best.makespan - lb <= TOLERANCE * best.makespan:
            break
        key = frozenset((nm, p.key()) for nm, p in run.assignment.items())
        if key in seen:
            floor, tree = seen[key]
        else:
            floor, tree = lb, _checked(problem, tree_plans(problem, run.assignment, deadline))
        remaining = deadline.remaining()
        # a first subproblem gets a short budget: most prove in seconds, and one that does not may
        # still cut the master with its bound; an assignment the master returns again (its cut was
        # too weak) resumes from its bound and schedule with half the time left
        if remaining is None:
            share = None
        elif key in seen:
            share = remaining / 2
        else:
            share = min(remaining / 2, max(3.0, remaining / 8))
        t0 = deadline.elapsed()
        fixed = solve_cpsat(problem, deadline=Deadline(share), incumbent=tree, hint=tree, workers=workers,
                            lower_bound=max(lb, floor), relax=False, fix_assignment=True, seed=seed)
        t1 = deadline.elapsed()
        seen[key] = (fixed.lower_bound, fixed.schedule)
        if fixed.schedule.makespan < best.makespan:
            best = fixed.schedule
        cut = scale.units(fixed.lower_bound)
        steps.append({"master": run.status, "master_bound": scale.bound(run.units), "fixed": str(fixed.status),
                      "fixed_objective": fixed.objective, "fixed_bound": fixed.lower_bound,
                      "fixed_time": round(t1 - t0, 3)})
        if run.objective is None or cut <= run.objective or best.makespan - lb <= TOLERANCE * best.makespan:
            break  # a cut that would not move the master (an unproven subproblem) ends the loop
        kept = _deletion_filter(problem, run.assignment, fixed.lower_bound, deadline, workers, seed)
        steps[-1].update(cut_tasks=len(kept), filter_time=round(deadline.elapsed() - t1, 3))
        master.model.add(master.makespan >= cut).only_enforce_if([run.literals[nm] for nm in sorted(kept)])
        cpsat.set_hints(master.model, [(lit, 1) for lit in run.literals.values()])
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            break
        run = _solve_master(master, problem, scale.units(lb), math.inf if remaining is None else remaining,
                            workers, seed)
        lb = max(lb, min(best.makespan, scale.bound(run.units)))
        steps[-1].update(next_master=run.status, master_time=run.stats.get("wall_time"))
    return lb, best


@known_options
def relaxation_bound(problem: Problem, time_limit: float = 10.0, workers: int | None = None,
                     seed: int = 0, converge: bool = False) -> float:
    """The assignment relaxation's proven lower bound (seconds), valid for the float data.

    The relaxation of the session model that :func:`solve_cpsat` solves first
    (``docs/models/mig_cpsat.md``, "Assignment relaxation"): slice loads of
    the tasks plus the create and destroy of every used placement covering
    the slice (a session that stays to the end needs no destroy), all after
    the first create on the slice, with the creates one at a time on the
    channel. Single batch with reconfiguration, all releases 0; at least
    :func:`bounds.mig.lower_bound`.

    ``converge=True`` adds the convergence rows (a session that stays to the
    end waits for the destroys before it, one at a time): the relaxation the
    HiGHS backend solves. Stronger, but CP-SAT proves it more slowly, so
    :func:`solve_cpsat` leaves them out and closes such gaps with its Benders
    loop (A100 n = 16, six fresh seeds: with the rows two of six left
    1.8 % open after 60 s, without them all six proven).

    Examples
    --------
    >>> from instances import mig
    >>> from bounds import mig as mig_bounds
    >>> p = mig.generate(n=6, gpu="A100", seed=1)
    >>> relaxation_bound(p, time_limit=10) >= mig_bounds.lower_bound(p)
    True
    """
    if not problem.gpu.reconfigurable or any(r != 0 for r in problem.releases().values()) or not problem.n:
        raise ValueError("the assignment relaxation is for one batch with reconfiguration and no release times")
    from milp.mig_plans import best_plan

    deadline = Deadline(time_limit)
    lb = mig_bounds.lower_bound(problem)
    upper = best_plan(problem, deadline=deadline).makespan
    R = choose_resolution(problem, lb, upper)
    scale = Scale.of(problem, R)
    horizon = math.floor(upper * R + scale.excess) + 1
    _, run = _relaxation_bound(problem, scale, scale.units(lb), horizon, deadline, math.inf, workers, seed,
                               True, {}, share=1.0, converge=converge)
    return max(lb, scale.bound(run.units))


@known_options
def solve_cpsat(problem: ProblemLike, *, deadline: Deadline, incumbent: mig.Schedule, hint: mig.Schedule | None,
                workers: int | None = None, lower_bound: float = 0.0, info: dict[str, Any] | None = None,
                resolution: float | None = None, symmetry: bool = True, redundant: bool = True,
                dominance: bool = True, model: str = "auto", relax: bool = True, relax_time: float = 40.0,
                relax_share: float = 2 / 3, benders: bool = True,
                fix_assignment: bool = False, log: bool = False, seed: int = 0) -> Result:
    """Solve a non-empty MIG problem or workload with CP-SAT (called by :func:`milp.mig.solve`).

    Parameters
    ----------
    problem
        The problem; it carries whether reconfiguration applies.
    deadline
        The whole call's budget (model building, relaxation and re-solves).
    incumbent
        A checked schedule (the re-timed hint, or the serial one): returned
        when the search finds nothing better.
    hint
        The schedule to hint to CP-SAT, or ``None``.
    lower_bound
        A bound valid for the float data (seconds).
    resolution
        Units per second of the first solve (``None``: chosen from the data,
        see :func:`choose_resolution`).
    symmetry, redundant, dominance
        Symmetry breaking, redundant constraints and cuts, dominated
        placements (switch off for experiments; results stay exact).
    model
        ``"auto"``, ``"laminar"`` or ``"intervals"``.
    relax, relax_time, relax_share
        With reconfiguration, first solve the assignment relaxation for at
        most ``relax_time`` s and ``relax_share`` of the time left, for its
        bound and its assignment.
    benders
        When the relaxation is proven but no schedule meets its bound, close
        the gap by logic-based Benders cuts (:func:`_benders`) before the
        session model.
    fix_assignment
        Fix every task to its placement in ``hint``.
    log, seed
        CP-SAT's search log and random seed.
    """
    info = info if info is not None else {}
    gpu = problem.gpu
    reconf = gpu.reconfigurable
    one_release = len(set(problem.releases().values())) <= 1
    laminar = not reconf and one_release and model in ("auto", "laminar")
    info["model"] = "laminar" if laminar else ("sessions" if reconf else "intervals")
    best = incumbent
    lb = max(mig_bounds.lower_bound(problem), lower_bound)
    info["bounds_lower_bound"] = lb
    if resolution is None:
        R = choose_resolution(problem, lb, best.makespan)
        info["resolution_source"] = "data"
    else:
        R = float(resolution)
        info["resolution_source"] = "given"
    use_relaxation = reconf and relax and all(r == 0 for r in problem.releases().values())
    runs_info = []
    while True:
        scale = Scale.of(problem, R)
        horizon = math.floor(best.makespan * R + scale.excess) + 1
        lb_units = scale.units(lb)
        if use_relaxation and not deadline.expired():
            use_relaxation = False  # its bound (in seconds) carries over to finer re-solves
            own = {st.task: st.placement for st in (hint if fix_assignment else best).tasks}
            if not fix_assignment:
                own = improve_assignment(problem, own, deadline)
            master, master_run = _relaxation_bound(problem, scale, lb_units, horizon, deadline, relax_time,
                                                   workers, seed, symmetry, info, share=relax_share)
            lb_units, assignment = master_run.units, master_run.assignment
            lb = max(lb, scale.bound(lb_units))
            # the relaxation's assignment and the incumbent's, improved by local search and
            # sequenced along the tree: often meets the relaxation's bound
            # with fix_assignment only the given assignment may be used (the relaxation's bound stays valid)
            starts = [own] if assignment is None or fix_assignment else \
                [assignment, improve_assignment(problem, assignment, deadline), own]
            for a in starts:
                tree = _checked(problem, tree_plans(problem, a, deadline))
                info["relaxation"].setdefault("tree_makespans", []).append(tree.makespan)
                if tree.makespan < best.makespan:
                    best = tree
                    horizon = math.floor(best.makespan * R + scale.excess) + 1
            if benders and not fix_assignment:
                lb, best = _benders(problem, master, master_run, scale, lb, best, deadline, workers, seed, info)
                lb_units = max(lb_units, scale.units(lb))
                horizon = math.floor(best.makespan * R + scale.excess) + 1
            if best.makespan - lb <= TOLERANCE * best.makespan:
                info["skipped_session_model"] = True
                break
        built = _build(problem, scale, lb_units, horizon, laminar=laminar, symmetry=symmetry and not fix_assignment,
                       redundant=redundant, dominance=dominance and not fix_assignment)
        if fix_assignment:
            placed = {st.task: st.placement.key() for st in hint.tasks}
            for (i, key), lit in built.x.items():
                built.model.add(lit == int(placed[problem.tasks[i].name] == key))
            info["fixed_assignment"] = True
        here: list[cpsat.CpsatRun] = []
        for share, parameters in _phases(laminar and not fix_assignment, deadline, workers):
            if here:
                if here[-1].status == "OPTIMAL" or deadline.expired():
                    break
                if here[-1].bound is not None:  # proven for this model: a valid row
                    built.model.add(built.makespan >= math.floor(here[-1].bound + 1e-9))
            if hint is not None:
                # the best schedule so far (at first the re-timed hint), in the symmetry-broken form
                shown = best if fix_assignment or not symmetry else canonical(problem, best)
                cpsat.set_hints(built.model, _hints(built, problem, shown, scale))
            limit = deadline if share == 1.0 else Deadline(deadline.remaining() * share)
            run = cpsat.run(built.model, time_limit=limit, workers=workers, seed=seed, log=log,
                            parameters=parameters)
            if run.status == "INFEASIBLE":
                raise SolverError("CP-SAT reports the MIG model infeasible although a schedule fits its horizon "
                                  "(a model bug)")
            bound = run.bound
            if bound is not None:  # milp.cpsat.run reports finite bounds only
                lb = max(lb, scale.bound(bound))
            if run.has_solution:
                schedule = _checked(problem, _extract(built, run, problem))
                if schedule.makespan < best.makespan:
                    best = schedule
            here.append(run)
            runs_info.append({"resolution": R, "status": run.status, "excess_units": scale.excess,
                              "model_objective": run.objective, "model_bound": bound, **run.stats})
        proven = any(r.status == "OPTIMAL" for r in here)
        gap = (best.makespan - lb) / best.makespan if best.makespan > 0 else 0.0
        finer = min(R * 2.0 ** math.ceil(math.log2(max(2.0, 2 * gap / TOLERANCE))),
                    2.0 ** math.floor(math.log2(MAX_UNITS / best.makespan)))
        # a rounded optimum whose true gap exceeds the tolerance: re-solve finer while time is left
        if proven and gap > TOLERANCE and finer > R and not deadline.expired():
            R = finer
            continue
        break
    info.update(resolution=R, runs=runs_info,
                model_objective=runs_info[-1]["model_objective"] if runs_info else None)
    return Result.from_bounds(best.makespan, lb, schedule=best, runtime=deadline.elapsed(), backend="cpsat",
                              info=info)
