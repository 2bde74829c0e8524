"""The CP-SAT models of the MIG problem (FAR paper, Sec. 2.2; rules 1-6 of :mod:`instances.mig_check`).

Part of the CP-SAT backend (:mod:`milp.mig_cpsat`). :func:`build` makes one
of three models, in the integer units of a
:class:`~milp.mig_cpsat_scale.Scale`:

* the *laminar assignment model* (no reconfiguration, one release time): the
  makespan of an assignment is its largest slice load;
* the *interval model* (no reconfiguration, release times): a start and a
  placement per task, no overlap per slice;
* the *session model* (with reconfiguration): the interval model with
  ordered session slots per placement (:func:`session_slots`) and their
  create/destroy operations on one serialised channel;

and, with ``relaxation=True``, the laminar *assignment relaxation* of the
session model that :mod:`milp.mig_cpsat_relax` solves for its bound.
Symmetric subtrees of the GPU, dominated placements and the slot bound reduce
the search. :func:`hints` describes a schedule in a model's variables and
:func:`extract` reads a solution back as a plan re-timed with the float
durations. The formulations and the proofs are in ``docs/models/mig_cpsat.md``.

Examples
--------
>>> from instances import mig
>>> from milp import cpsat
>>> from milp.mig_cpsat_scale import Scale
>>> p = mig.generate(n=4, gpu="A30", seed=0).without_reconfiguration()
>>> scale = Scale.of(p, 64.0)
>>> built = build(p, scale, 0, 10 ** 5, laminar=True, symmetry=True, redundant=True, dominance=True)
>>> run = cpsat.run(built.model, time_limit=10)
>>> schedule = checked_plan(p, extract(built, run, p))
>>> run.status, schedule.makespan >= scale.bound(run.objective)
('OPTIMAL', True)
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Union

from ortools.sat.python import cp_model

from heuristics.mig_plans import tree_schedule
from instances import mig
from instances.errors import SolverError
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances.mig_retime import Session, TimedPlan, retime_order, retime_sessions
from instances.options import Deadline, known_options
from milp import cpsat
from milp.mig_cpsat_scale import Scale
from milp.mig_plans import checked

__all__ = ["Model", "OutOfTime", "build", "session_slots", "hints", "extract", "checked_plan"]

ProblemLike = Union[Problem, Workload]


@dataclass
class Model:
    """A built CP-SAT model and the variables the backend reads back.

    ``start`` (per task index; empty for the laminar models), ``x`` (task
    index, placement key) -> placement literal, ``slots`` (placement key ->
    its session slots, each a dict of the slot's variables; empty without
    reconfiguration) and the ``horizon`` (units).
    """

    model: cp_model.CpModel
    makespan: Any
    start: dict
    x: dict  # (i, placement key) -> BoolVar
    slots: dict  # placement key -> list of slot dicts
    horizon: int

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

class OutOfTime(Exception):
    """The deadline passed while a model was being built (the caller keeps what it has)."""


def _on_time(deadline: Deadline | None) -> None:
    if deadline is not None and deadline.expired():
        raise OutOfTime


def _symmetry(m: cp_model.CpModel, problem: ProblemLike, x: dict, deadline: Deadline | None = None) -> None:
    """The lowest-indexed task placed in a symmetric pair of subtrees lies in the left one."""
    n = problem.n
    for left, right in problem.gpu.symmetric_subtrees():
        lk = [q.key() for q in left]
        for i in range(n):
            if i % 64 == 0:  # its rows grow as n^2: building them takes seconds at n = 1000
                _on_time(deadline)
            for kb in (q.key() for q in right):
                if (i, kb) in x:
                    earlier = [x[j, ka] for j in range(i) for ka in lk if (j, ka) in x]
                    m.add_bool_or([x[i, kb].negated(), *earlier])

@known_options
def build(problem: ProblemLike, scale: Scale, lb: int, horizon: int, *, laminar: bool, symmetry: bool,
          redundant: bool, dominance: bool, relaxation: bool = False, converge: bool = False,
          deadline: Deadline | None = None) -> Model:
    """The laminar, interval or session model in units of ``scale``, minimising the makespan.

    Parameters
    ----------
    problem
        The problem; it carries whether reconfiguration applies.
    scale, lb, horizon
        The time units, and the makespan's lower bound and horizon in them.
    laminar
        Without reconfiguration and with one release time: the laminar
        assignment model (the makespan of an assignment is its largest slice
        load); otherwise the interval model, with session slots when the GPU
        reconfigures.
    symmetry, redundant, dominance
        Symmetry breaking, redundant constraints and cuts, dominated
        placements.
    relaxation
        The laminar assignment relaxation of the session model instead (used
        only for its bound, :mod:`milp.mig_cpsat_relax`); ``converge`` adds
        its convergence rows (:func:`_convergence_cuts`).
    deadline
        Raise :class:`OutOfTime` when it passes during the build (the session
        model takes seconds to build at large n); ``None``: no limit.

    Examples
    --------
    >>> from instances import mig
    >>> from milp.mig_cpsat_scale import Scale
    >>> p = mig.generate(n=4, gpu="A30", seed=0)
    >>> built = build(p, Scale.of(p, 16.0), 0, 10 ** 4, laminar=False, symmetry=True, redundant=True,
    ...               dominance=True)
    >>> len(built.slots) > 0, len(built.start)
    (True, 4)
    """
    m = cp_model.CpModel()
    gpu = problem.gpu
    reconf = gpu.reconfigurable
    tc = {s: scale.dur(gpu.create_time[s]) for s in gpu.sizes} if reconf else {}
    td = {s: scale.dur(gpu.destroy_time[s]) for s in gpu.sizes} if reconf else {}
    allowed = _allowed(problem, dominance and not relaxation)
    horizon = max(horizon, lb)
    makespan = m.new_int_var(lb, horizon, "makespan")
    if laminar or relaxation:
        x, load, r0 = _assignment(m, problem, scale, allowed)
        if relaxation:
            _relaxation_rows(m, problem, scale, x, load, r0, tc, td, makespan, horizon, converge)
        else:
            for terms in load.values():
                m.add(r0 + sum(terms) <= makespan)
        if symmetry:
            _symmetry(m, problem, x)
        m.minimize(makespan)
        return Model(m, makespan, {}, x, {}, horizon)
    start, x, dur, task_iv = _intervals(m, problem, scale, allowed, makespan, horizon, redundant)
    _on_time(deadline)
    if symmetry:
        _symmetry(m, problem, x, deadline)
    slots: dict[tuple[int, int], list] = {}
    if reconf:
        _add_sessions(m, problem, scale, x, dur, task_iv, makespan, horizon, tc, td, redundant, slots)
        _on_time(deadline)
    m.minimize(makespan)
    return Model(m, makespan, start, x, slots, horizon)


def _assignment(m: cp_model.CpModel, problem: ProblemLike, scale: Scale,
                allowed: list[list[Placement]]) -> tuple[dict, dict[int, list], int]:
    """One placement per task (``x``), the load terms of every slice and the latest release (units)."""
    r0 = max((scale.units(r) for r in problem.releases().values()), default=0)
    x: dict = {}
    load: dict[int, list] = defaultdict(list)
    for i, t in enumerate(problem.tasks):
        lits = []
        for p in allowed[i]:
            d = scale.dur(t.times[p.size])
            lit = m.new_bool_var(f"x{i}_{p.name}")
            x[i, p.key()] = lit
            for k in p.slices:
                load[k].append(d * lit)
            lits.append(lit)
        m.add_exactly_one(lits)
    return x, load, r0


def _relaxation_rows(m: cp_model.CpModel, problem: ProblemLike, scale: Scale, x: dict, load: dict[int, list],
                     r0: int, tc: dict, td: dict, makespan: Any, horizon: int, converge: bool) -> None:
    """The session rows of the assignment relaxation (``docs/models/mig_cpsat.md``, "Assignment relaxation").

    Each used placement has a session; sessions on a slice are disjoint and
    all but one destroyed; creates are serialised and the last one is
    followed by a task. The GPU starts empty and creates run one at a time,
    so all of slice k's sessions lie after the create of its first session.
    """
    gpu = problem.gpu
    used = _used(m, gpu, x, problem.n)
    create = {}
    again_of: dict = {}
    end_of: dict = {}
    # fin[q]: q's final session is the final one on every slice of q and never destroyed; only
    # such a session's destroy may be left out of a slice's load (any other session is
    # destroyed before the next one on one of its slices, and its destroy holds all its slices)
    fin = {key: m.new_bool_var(f"fin{key}") for key in used} if converge else {}
    for key, u in used.items():
        c = m.new_int_var(0, horizon, f"c{key}")
        create[key] = (c, m.new_optional_fixed_size_interval_var(c, tc[key[0]], u, f"create{key}"))
    m.add_no_overlap([iv for _, iv in create.values()])
    for k in range(gpu.num_slices):
        over = [gpu.placement(*key) for key in used if k in gpu.placement(*key).slices]
        load[k] += [(tc[q.size] + td[q.size]) * used[q.key()] for q in over]
        if over:
            first = _slice_sessions(m, k, over, used, fin, load[k], tc, td, again_of, converge)
        m.add(r0 + sum(load[k]) <= makespan)
        if over:
            a = _first_create(m, k, over, first, used, create, horizon)
            end_of[k] = a + r0 + sum(load[k])
            m.add(end_of[k] <= makespan)
    if converge:
        _convergence_cuts(m, gpu, used, fin, again_of, end_of, td, makespan)
    shortest = min(scale.dur(min(t.times.values())) for t in problem.tasks)
    m.add(sum(tc[key[0]] * u for key, u in used.items()) + shortest <= makespan)


def _used(m: cp_model.CpModel, gpu: Any, x: dict, n: int) -> dict:
    """``used[key]``: placement ``key`` runs a task (no empty sessions)."""
    used = {}
    for p in gpu.placements:
        lits = [x[i, p.key()] for i in range(n) if (i, p.key()) in x]
        if lits:
            used[p.key()] = m.new_bool_var(f"used{p.name}")
            for lit in lits:
                m.add_implication(lit, used[p.key()])
            # no empty sessions: one would give its slices an early first create for free
            m.add_bool_or(lits).only_enforce_if(used[p.key()])
    return used


def _slice_sessions(m: cp_model.CpModel, k: int, over: list[Placement], used: dict, fin: dict, load_k: list,
                    tc: dict, td: dict, again_of: dict, converge: bool) -> list:
    """Slice ``k``'s last session (left undestroyed) and second sessions; returns its first-session literals.

    Adds to ``load_k`` the destroy saved by the last session and the create
    and destroy of a placement's second session on the slice (first and last
    on it with another used placement between).
    """
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
    load_k += [-td[q.size] * f for q, f in zip(over, stays)]
    first = [m.new_bool_var(f"first{k}_{q.name}") for q in over]
    # first and last on the slice with another used placement between: a second session
    for q, f, lst in zip(over, first, last):
        again = m.new_bool_var(f"again{k}_{q.name}")
        again_of[k, q.key()] = again
        for r in over:
            if r != q:
                m.add_bool_or([f.Not(), lst.Not(), used[r.key()].Not(), again])
        load_k.append((tc[q.size] + td[q.size]) * again)
    return first


def _first_create(m: cp_model.CpModel, k: int, over: list[Placement], first: list, used: dict, create: dict,
                  horizon: int) -> Any:
    """``a_k``: the start of the create of slice ``k``'s first session (the earliest of its used placements)."""
    a = m.new_int_var(0, horizon, f"a{k}")
    m.add_at_most_one(first)
    for q, f in zip(over, first):
        c = create[q.key()][0]
        m.add_implication(f, used[q.key()])
        m.add(a == c).only_enforce_if(f)
        m.add(a <= c).only_enforce_if(used[q.key()])
        m.add_bool_or(first).only_enforce_if(used[q.key()])
    return a


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

def _intervals(m: cp_model.CpModel, problem: ProblemLike, scale: Scale, allowed: list[list[Placement]],
               makespan: Any, horizon: int, redundant: bool) -> tuple[dict, dict, dict, dict[tuple[int, int], list]]:
    """Task starts, placements and optional intervals; tasks on a slice do not overlap.

    Returns ``start``, ``x``, the durations ``dur`` (units) and the task
    intervals of every placement. Without reconfiguration (or with the
    redundant constraints) the tasks' intervals on each slice do not overlap;
    with ``redundant`` also the slice count as a cumulative and, per node of
    the tree, the tasks inside its slices ``Q`` fit in ``|Q| * makespan``.
    """
    gpu = problem.gpu
    rel = problem.releases()
    start: dict = {}
    x: dict = {}
    dur: dict = {}
    task_iv: dict[tuple[int, int], list] = defaultdict(list)
    slice_iv: dict[int, list] = defaultdict(list)
    cum_iv, cum_dem = [], []
    for i, t in enumerate(problem.tasks):
        start[i] = m.new_int_var(scale.units(rel[t.name]), horizon, f"s{i}")
        lits = []
        for p in allowed[i]:
            d = scale.dur(t.times[p.size])
            lit = m.new_bool_var(f"x{i}_{p.name}")
            iv = m.new_optional_fixed_size_interval_var(start[i], d, lit, f"iv{i}_{p.name}")
            x[i, p.key()], dur[i, p.key()] = lit, d
            m.add(start[i] + d <= makespan).only_enforce_if(lit)
            task_iv[p.key()].append(iv)
            if not gpu.reconfigurable or redundant:
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
        m.add_cumulative(cum_iv, cum_dem, gpu.num_slices)
        # per node of the tree: the tasks inside its slices Q fit in |Q| * makespan
        for q in {p.slices for p in gpu.placements}:
            terms = []
            for (i, key), lit in x.items():
                width = len(gpu.placement(*key).slices & q)
                if width:
                    terms.append(width * dur[i, key] * lit)
            if terms:
                m.add(sum(terms) <= len(q) * makespan)
    return start, x, dur, task_iv


def _add_sessions(m: cp_model.CpModel, problem: ProblemLike, scale: Scale, x: dict, dur: dict,
                  task_iv: dict[tuple[int, int], list], makespan: Any, horizon: int, tc: dict, td: dict,
                  redundant: bool, slots: dict) -> None:
    """Session slots per placement, their operations on one channel, and the LP cuts (rules 1-4)."""
    gpu = problem.gpu
    n = problem.n
    ops, occ_by_slice, occ_all, occ_dem = [], defaultdict(list), [], []
    for p in gpu.placements:
        on_p = [x[i, p.key()] for i in range(n) if (i, p.key()) in x]
        K = min(session_slots(problem, p, horizon, scale), len(on_p))
        if K == 0:
            continue
        plist = []
        for k in range(K):
            slot, create, destroy, occ = _slot(m, p, k, tc[p.size], td[p.size], makespan, horizon)
            ops += [create, destroy]
            for s in p.slices:
                occ_by_slice[s].append(occ)
            occ_all.append(occ)
            occ_dem.append(len(p.slices))
            plist.append(slot)
        _windows(m, p, plist, on_p, td[p.size], task_iv[p.key()], horizon)
        slots[p.key()] = plist
    for ivs in occ_by_slice.values():
        m.add_no_overlap(ivs)
    m.add_no_overlap(ops)
    if redundant:
        _session_cuts(m, gpu, slots, x, dur, tc, td, makespan)
        m.add_cumulative(occ_all, occ_dem, gpu.num_slices)
    for (i, key), lit in x.items():  # placements without a slot cannot host tasks
        if key not in slots:
            m.add(lit == 0)


def _slot(m: cp_model.CpModel, p: Placement, k: int, c_t: int, d_t: int, makespan: Any,
          horizon: int) -> tuple[dict, Any, Any, Any]:
    """Session slot ``k`` of ``p``: its variables, create and destroy intervals and its occupancy interval.

    ``b``/``e``: the session is created / destroyed; ``c``/``d``: when;
    ``[u, v)``: the window its tasks run in; the occupancy holds p's slices
    from the create to the end of the destroy.
    """
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
    create = m.new_optional_fixed_size_interval_var(c, c_t, b, f"create{p.name}_{k}")
    destroy = m.new_optional_fixed_size_interval_var(d, d_t, e, f"destroy{p.name}_{k}")
    occ = m.new_optional_interval_var(c, m.new_int_var(0, horizon, ""), oe, b, f"occ{p.name}_{k}")
    return {"b": b, "e": e, "c": c, "d": d, "u": u, "v": v}, create, destroy, occ


def _windows(m: cp_model.CpModel, p: Placement, plist: list[dict], on_p: list, d_t: int, task_iv: list,
             horizon: int) -> None:
    """p's sessions one after another, a session for its tasks, and its tasks inside the windows."""
    for k in range(1, len(plist)):
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
    m.add_no_overlap(task_iv + gaps)


def _session_cuts(m: cp_model.CpModel, gpu: Any, slots: dict, x: dict, dur: dict, tc: dict, td: dict,
                  makespan: Any) -> None:
    """LP cuts: sessions on one slice are disjoint and lie in [0, makespan] with their operations and
    tasks; at most one is never destroyed; all operations share one channel."""
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
    for k in range(gpu.num_slices):
        load = [dur[i, key] * lit for (i, key), lit in x.items() if k in gpu.placement(*key).slices]
        m.add(sum(session_terms[k]) + sum(load) <= makespan)
        m.add(sum(alive[k]) <= 1)
    m.add(sum(channel) <= makespan)


@known_options
def hints(built: Model, problem: ProblemLike, hint: mig.Schedule, scale: Scale) -> list[tuple[Any, int]]:
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

@known_options
def extract(built: Model, run: cpsat.CpsatRun, problem: ProblemLike) -> TimedPlan | mig.Schedule:
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

@known_options
def checked_plan(problem: ProblemLike, plan: TimedPlan | mig.Schedule) -> mig.Schedule:
    """The schedule of ``plan`` (a :class:`~instances.mig_retime.TimedPlan` or a schedule), checked."""
    return checked(problem, plan.schedule if isinstance(plan, TimedPlan) else plan, "the CP-SAT schedule")
