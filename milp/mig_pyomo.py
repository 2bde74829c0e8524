"""MILP model of MIG scheduling in Pyomo, solved by HiGHS (seed 000, Sec. 2.2; DESIGN.md rules 1-6).

:func:`solve_pyomo` minimises the makespan of a batch (or a multi-batch
workload with release times) of moldable tasks on a MIG GPU, with or without
reconfiguration costs. ``milp.mig.solve(..., backend="highs")`` calls it.

Model without reconfiguration (Sec. 2.2, constraints 1-2)
---------------------------------------------------------
* ``x[i,p]`` in {0,1}: task i runs on placement p (only sizes the task may
  use); ``sum_p x[i,p] = 1``; duration ``d_i = sum_p t_i(size p) x[i,p]``.
* ``s_i`` >= release of i, continuous (seconds; no integer scaling).
* ``y[i,j]`` in {0,1} for i < j: i before j. For every slice k, with
  ``z[i,k] = sum_{p occupies k} x[i,p]``:
  ``s_i + d_i <= s_j + M (1 - y) + M (2 - z[i,k] - z[j,k])`` and the mirror
  (two tasks sharing a slice never overlap; since occupancy is per slice, this
  is "running instances form part of a valid partition").
* ``C >= s_i + d_i``; minimise ``C``.

Model with reconfiguration (rules 1-6)
--------------------------------------
Sessions live in ``m = n`` slots numbered in create order; slot j picks at
most one placement (``v[j,p]``), tasks pick a slot (``a[i,j]``), and
``b[i,j,p]`` (continuous, = a[i,j] v[j,p] at integral points) links the two
to ``x[i,p] = sum_j b[i,j,p]``; x stays binary, which is redundant but lets
HiGHS branch on placements first (10-30x faster on n = 4). Times: create start ``c_j`` (duration
``TC_j = sum_p t_create(p) v[j,p]``), destroy start ``e_j`` with
``D_j = TD_j`` if destroyed (``del_j = 1``) else 0.

* creates are serialised in slot order: ``c_{j+1} >= c_j + TC_j`` (this also
  numbers the sessions, so identical slots are never permuted);
* tasks inside their session: ``s_i >= c_j + TC_j``, ``e_j >= s_i + d_i``
  when ``a[i,j] = 1``;
* intersecting sessions j < l (some slice k occupied by both) never overlap:
  ``c_l >= e_j + D_j`` and ``del_j >= 1`` (the earlier one is destroyed,
  and only then: rule 2's destroy is needed only before a later intersecting
  session);
* the channel (rule 4): a destroy j and a later create l are ordered by a
  binary ``beta[j,l]``, two destroys by ``gam[j,l]``; every other pair of
  operations is already ordered by the constraints above (creates by slot
  order, a create before its own destroy, an earlier create before any later
  session's destroy);
* empty slots come last and a used slot runs at least one task.

Tasks on different intersecting placements are also separated by the
first one's destroy and the second one's create: the disjunction of the
model without reconfiguration gets the gap ``t_destroy(p_i) + t_create(p_j)``,
cancelled by ``w[i,j,p] <= x[i,p], x[j,p]`` when both use the same placement;
and every task starts after its own create, ``s_i >= t_create(p_i)``.

The relaxation R and how a solve proceeds
-----------------------------------------
R is the model without reconfiguration plus the gaps above (no sessions, no
channel). It is a relaxation (every rule-1-6 schedule satisfies it), small,
and on generated instances usually exactly tight. With reconfiguration,
:func:`solve_pyomo` first solves R: its dual bound becomes a floor on ``C``,
its schedule (grouped into sessions, channel order improved by local search)
an incumbent. When the incumbent meets the floor, optimality is proven and
the session model is skipped; otherwise the session model runs with both.
Under a time limit R may use two thirds of it (R is what proves optimality on
most generated instances) and the session model the rest.

Soundness of the slot bound. Every session of a feasible schedule runs at
least one task (the checker rejects empty sessions), so a schedule has at
most n sessions, and numbering them by create start (creates are serialised,
so their starts are distinct or tied only at zero-length creates) maps it onto
slots 0..n-1 with empty slots last. The model thus contains every feasible
schedule; conversely each model solution is re-timed into a schedule the
checker accepts (below), so the optimum is exact.

Tightening
----------
* big-M values come from the data: the horizon H is the makespan of the best
  of several list schedules (and of the hint); every start, end and operation
  of an optimal schedule lies in [0, H], so ``M = H - lower bound of the
  other start`` is valid;
* per-slice load: the tasks (and, with reconfiguration, the creates) on one
  slice run one at a time, so their durations sum to at most ``C - r`` for
  the tasks released at or after r (the area bound, slice by slice);
* with reconfiguration: all operations fit on the channel before the last
  task, ``sum_j (TC_j + D_j) <= C - min task time``; every session fits,
  ``C >= c_j + TC_j + (its tasks' durations)``;
* symmetry of the GPU: for two sibling subtrees of the repartitioning tree
  that are mapped onto each other by a slice automorphism (A30: 2@0/2@2 and
  pairs of 1-slice leaves; A100/H100: 2@0/2@2, 1@0/1@1, 1@2/1@3, 1@4/1@5),
  the lowest-numbered task placed in either subtree is placed in the first:
  ``sum_{p in B} x[i,p] <= sum_{i' < i} sum_{p in A} x[i',p]``. Swapping the
  subtrees (outer pairs first) turns any schedule into one that satisfies all
  of these, so no optimum is lost.

The schedule read off a solution is re-timed with the true float durations
(:mod:`milp.mig_pyomo_plan`), which never lengthens it, and passed through
:func:`instances.mig.check` before it is returned. The lower bound is the
solver's proven dual bound (times are continuous, so no rounding slack is
needed; it is valid up to the solver's feasibility tolerances), capped at the
objective; OPTIMAL means HiGHS closed the gap to ``mip_rel_gap = 1e-6`` (in
the session model, or in R when R's bound meets a checked schedule).

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> res = solve_pyomo(p, reconfiguration=False)
>>> str(res.status), res.objective
('OPTIMAL', 2.5)
>>> res = solve_pyomo(p)  # create 2@0 and 2@2 one after the other (0.12 s each)
>>> str(res.status), round(res.objective, 2)
('OPTIMAL', 2.74)
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace
from typing import Any, Union

import pyomo.environ as pe

from bounds import mig as mig_bounds
from instances import mig
from instances.errors import OptionError
from instances.gpus import GPUSpec, Placement
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule
from instances.mig_schedule import ScheduledTask
from milp.mig_pyomo_plan import (Session, TimedPlan, best_plan, improve_channel, retime_order, retime_sessions,
                               sessionize)
from milp.highs import solve_highs
from milp.result import Result, Status

__all__ = ["solve_pyomo", "build_model", "subtree_symmetries", "canonical", "REL_GAP", "ABS_GAP"]

AnyProblem = Union[Problem, Workload]

#: Relative gap at which HiGHS stops and declares optimality.
REL_GAP = 1e-6
#: Absolute gap (seconds) at which HiGHS stops and declares optimality.
ABS_GAP = 1e-6


# ---------------------------------------------------------------------------
# GPU symmetry

def _subtree(gpu: GPUSpec, p: Placement) -> list[Placement]:
    out = [p]
    for c in gpu.children(p):
        out += _subtree(gpu, c)
    return out


def _match(gpu: GPUSpec, a: Placement, b: Placement) -> dict[Placement, Placement] | None:
    """A size-preserving map of subtree(a) onto subtree(b) that follows the tree, or None."""
    ca, cb = gpu.children(a), gpu.children(b)
    if a.size != b.size or len(a.slices) != len(b.slices) or len(ca) != len(cb):
        return None
    out = {a: b}
    for x, y in zip(ca, cb):
        sub = _match(gpu, x, y)
        if sub is None:
            return None
        out.update(sub)
    return out


def subtree_symmetries(gpu: GPUSpec) -> list[tuple[tuple[Placement, ...], tuple[Placement, ...]]]:
    """Pairs (A, B) of sibling subtrees that swapping maps onto each other, outer pairs first.

    A pair is kept only if exchanging A and B (placement by placement, the rest
    fixed) preserves sizes, occupied-slice counts and every intersection, so
    it maps schedules to schedules of equal makespan, with or without
    reconfiguration.

    Examples
    --------
    >>> from instances import gpus
    >>> [(a[0].name, b[0].name) for a, b in subtree_symmetries(gpus.get("A100"))]
    [('2@0', '2@2'), ('1@4', '1@5'), ('1@0', '1@1'), ('1@2', '1@3')]
    """
    pairs = []
    for parent in gpu.placements:  # BFS order: outer pairs first
        kids = gpu.children(parent)
        for x, y in zip(kids, kids[1:]):
            sigma = _match(gpu, x, y)
            if sigma is None:
                continue
            perm = {p: p for p in gpu.placements}
            perm.update(sigma)
            perm.update({v: k for k, v in sigma.items()})
            if all(p.intersects(q) == perm[p].intersects(perm[q]) for p in gpu.placements for q in gpu.placements):
                pairs.append((tuple(_subtree(gpu, x)), tuple(_subtree(gpu, y))))
    return pairs


# ---------------------------------------------------------------------------
# The model

def build_model(problem: AnyProblem, reconfiguration: bool, horizon: float, lower_bound: float = 0.0,
                sessions: bool = True) -> pe.ConcreteModel:
    """The Pyomo MILP (see the module docstring); ``horizon`` bounds every time.

    ``lower_bound`` (a proven bound on the optimum) bounds the makespan
    variable from below. With ``reconfiguration`` and ``sessions=False`` the
    model is the relaxation R: tasks after their own create and separated by
    destroy + create on intersecting placements, but no sessions and no
    channel.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(3, "A30", seed=0)
    >>> m = build_model(p, reconfiguration=True, horizon=1000.0)
    >>> len(m.J), len(m.I)
    (3, 3)
    """
    gpu = problem.gpu
    tasks = list(problem.tasks)
    n = len(tasks)
    rel = problem.releases()
    r = [rel[t.name] for t in tasks]
    H = float(horizon)
    sizes_used = {s for t in tasks for s in t.times}
    P = [p for p in gpu.placements if p.size in sizes_used]
    pidx = {p: k for k, p in enumerate(P)}
    Pi = [[pidx[p] for p in P if p.size in t.times] for t in tasks]
    dur = {(i, q): tasks[i].times[P[q].size] for i in range(n) for q in Pi[i]}
    slices = sorted({k for p in P for k in p.slices})
    covers = {k: [q for q, p in enumerate(P) if k in p.slices] for k in slices}
    tc = [gpu.create_time[p.size] for p in P]
    td = [gpu.destroy_time[p.size] for p in P]
    lb_s = [max(r[i], min(tc[q] for q in Pi[i]) if reconfiguration else 0.0) for i in range(n)]

    m = pe.ConcreteModel(name="mig_reconf" if reconfiguration else "mig")
    m.I = pe.RangeSet(0, n - 1)
    m.IP = pe.Set(dimen=2, initialize=[(i, q) for i in range(n) for q in Pi[i]])
    m.PAIRS = pe.Set(dimen=2, initialize=list(itertools.combinations(range(n), 2)))
    m.s = pe.Var(m.I, bounds=lambda _, i: (lb_s[i], H - min(dur[i, q] for q in Pi[i])))
    m.C = pe.Var(bounds=(min(float(lower_bound), H), H))
    m.y = pe.Var(m.PAIRS, within=pe.Binary)
    m.x = pe.Var(m.IP, within=pe.Binary)
    m.obj = pe.Objective(expr=m.C, sense=pe.minimize)

    def d(i):
        return sum(dur[i, q] * m.x[i, q] for q in Pi[i])

    def z(i, k):
        return sum(m.x[i, q] for q in covers[k] if (i, q) in dur)

    m.assign = pe.Constraint(m.I, rule=lambda _, i: sum(m.x[i, q] for q in Pi[i]) == 1)
    m.makespan = pe.Constraint(m.I, rule=lambda _, i: m.C >= m.s[i] + d(i))

    # tasks sharing a slice never overlap (Sec. 2.2 constraints 1-2). With
    # reconfiguration, two tasks on different intersecting placements run in
    # different, intersecting sessions, so the first one's destroy and the
    # second one's create lie between them: a gap of t_destroy(p_i) + t_create(p_j),
    # which w[i,j,p] (<= x[i,p], x[j,p]: both on p) cancels for tasks on one placement.
    gap = {(i, j): 0.0 for i, j in itertools.combinations(range(n), 2)}
    gap.update({(j, i): 0.0 for i, j in itertools.combinations(range(n), 2)})
    if reconfiguration:
        common = [(i, j, q) for i, j in itertools.combinations(range(n), 2) for q in Pi[i] if (j, q) in dur]
        m.W = pe.Set(dimen=3, initialize=common)
        m.w = pe.Var(m.W, bounds=(0.0, 1.0))
        m.w_i = pe.Constraint(m.W, rule=lambda _, i, j, q: m.w[i, j, q] <= m.x[i, q])
        m.w_j = pe.Constraint(m.W, rule=lambda _, i, j, q: m.w[i, j, q] <= m.x[j, q])
        m.own_create = pe.Constraint(m.I, rule=lambda _, i: m.s[i] >= sum(tc[q] * m.x[i, q] for q in Pi[i]))
        for i, j in itertools.combinations(range(n), 2):
            same = [(td[q] + tc[q]) * m.w[i, j, q] for q in Pi[i] if (j, q) in dur]
            for a, b in ((i, j), (j, i)):
                gap[a, b] = (sum(td[q] * m.x[a, q] for q in Pi[a]) + sum(tc[q] * m.x[b, q] for q in Pi[b])
                             - sum(same))
    if reconfiguration:
        _add_channel_cuts(m, n, P, Pi, dur, tc, H)
    m.disj = pe.ConstraintList()
    extra = (max(td) + max(tc)) if reconfiguration else 0.0
    for i, j in itertools.combinations(range(n), 2):
        Mij, Mji = H - lb_s[j] + extra, H - lb_s[i] + extra
        for k in slices:
            if not any((i, q) in dur for q in covers[k]) or not any((j, q) in dur for q in covers[k]):
                continue
            both = 2 - z(i, k) - z(j, k)
            m.disj.add(m.s[i] + d(i) + gap[i, j] <= m.s[j] + Mij * (1 - m.y[i, j]) + Mij * both)
            m.disj.add(m.s[j] + d(j) + gap[j, i] <= m.s[i] + Mji * m.y[i, j] + Mji * both)

    # per-slice load (area bound slice by slice), for every release threshold
    m.slice_load = pe.ConstraintList()
    for k in slices:
        for rr in sorted(set(r)):
            if reconfiguration and sessions and rr == 0:
                continue  # dominated by the slice load with creates (below)
            terms = [dur[i, q] * m.x[i, q] for i in range(n) if r[i] >= rr for q in covers[k] if (i, q) in dur]
            if terms:
                m.slice_load.add(sum(terms) <= m.C - rr)

    # GPU symmetry: the lowest task in A u B lies in A
    m.sym = pe.ConstraintList()
    for A, B in subtree_symmetries(gpu):
        A_ = [pidx[p] for p in A if p in pidx]
        B_ = [pidx[p] for p in B if p in pidx]
        for i in range(n):
            lhs = [m.x[i, q] for q in B_ if (i, q) in dur]
            rhs = [m.x[i2, q] for i2 in range(i) for q in A_ if (i2, q) in dur]
            if lhs:
                m.sym.add(sum(lhs) <= sum(rhs) if rhs else sum(lhs) == 0)

    if reconfiguration and sessions:
        _add_sessions(m, n, P, Pi, dur, covers, tc, td, r, H, slices)
    m._meta = dict(P=P, Pi=Pi, tasks=tasks, H=H, reconfiguration=reconfiguration and sessions, tc=tc, td=td)
    return m


def _add_channel_cuts(m, n, P, Pi, dur, tc, H) -> None:
    """Consequences of the serialised creates (rule 4) stated on tasks alone (valid in R).

    * every used placement has a session, so its create is on the channel before
      the last task starts: ``sum_p t_create(p) u_p <= C - min task time``;
    * two tasks in different sessions (different placements, or w = 0) had two
      creates before the later one starts; ``y[i,j]`` picks which one is later:
      ``s_j >= t_create(p_i) + t_create(p_j) - (same placement) t_create``.
    """
    m.U = pe.Var(range(len(P)), bounds=(0.0, 1.0))
    m.U_ge = pe.Constraint(m.IP, rule=lambda _, i, q: m.U[q] >= m.x[i, q])
    tmin = min(dur.values())
    m.create_load = pe.Constraint(expr=sum(tc[q] * m.U[q] for q in range(len(P))) <= m.C - tmin)
    m.two_creates = pe.ConstraintList()
    for i, j in itertools.combinations(range(n), 2):
        same = sum(tc[q] * m.w[i, j, q] for q in Pi[i] if (j, q) in dur)
        both = sum(tc[q] * m.x[i, q] for q in Pi[i]) + sum(tc[q] * m.x[j, q] for q in Pi[j]) - same
        m.two_creates.add(m.s[j] >= both - H * (1 - m.y[i, j]))
        m.two_creates.add(m.s[i] >= both - H * m.y[i, j])


def _add_sessions(m, n, P, Pi, dur, covers, tc, td, r, H, slices) -> None:
    """Session slots, their operations and the serialised channel (rules 1-4)."""
    J = list(range(n))
    nP = len(P)
    tdmax = max(td)
    m.J = pe.Set(initialize=J, ordered=True)
    m.Q = pe.Set(initialize=list(range(nP)), ordered=True)
    m.JJ = pe.Set(dimen=2, initialize=list(itertools.combinations(J, 2)))
    m.IJP = pe.Set(dimen=3, initialize=[(i, j, q) for i in range(n) for j in J for q in Pi[i]])
    m.v = pe.Var(m.J, m.Q, within=pe.Binary)
    m.a = pe.Var(m.I, m.J, within=pe.Binary)
    m.b = pe.Var(m.IJP, bounds=(0.0, 1.0))
    m.c = pe.Var(m.J, bounds=(0.0, H))
    m.e = pe.Var(m.J, bounds=(0.0, H))
    m.dl = pe.Var(m.J, within=pe.Binary)
    m.D = pe.Var(m.J, bounds=(0.0, tdmax))
    m.beta = pe.Var(m.JJ, within=pe.Binary)
    m.gam = pe.Var(m.JJ, within=pe.Binary)
    M = H + max(tdmax, max(tc))

    def used(j):
        return sum(m.v[j, q] for q in range(nP))

    def TC(j):
        return sum(tc[q] * m.v[j, q] for q in range(nP))

    def TD(j):
        return sum(td[q] * m.v[j, q] for q in range(nP))

    def zs(j, k):
        return sum(m.v[j, q] for q in covers[k])

    m.one_slot = pe.Constraint(m.I, rule=lambda _, i: sum(m.a[i, j] for j in J) == 1)
    m.link_b = pe.Constraint(m.I, m.J, rule=lambda _, i, j: sum(m.b[i, j, q] for q in Pi[i]) == m.a[i, j])
    m.b_le_v = pe.Constraint(m.IJP, rule=lambda _, i, j, q: m.b[i, j, q] <= m.v[j, q])
    m.link_x = pe.Constraint(m.IP, rule=lambda _, i, q: m.x[i, q] == sum(m.b[i, j, q] for j in J))
    m.one_placement = pe.Constraint(m.J, rule=lambda _, j: used(j) <= 1)
    m.used_first = pe.Constraint([j for j in J if j + 1 < n], rule=lambda _, j: used(j) >= used(j + 1))
    m.nonempty = pe.Constraint(m.J, rule=lambda _, j: sum(m.a[i, j] for i in range(n)) >= used(j))
    m.create_order = pe.Constraint([j for j in J if j + 1 < n], rule=lambda _, j: m.c[j + 1] >= m.c[j] + TC(j))

    def d_in(i, j):  # duration of task i if it runs in slot j (0 otherwise)
        return sum(dur[i, q] * m.b[i, j, q] for q in Pi[i])

    def d(i):
        return sum(dur[i, q] * m.x[i, q] for q in Pi[i])

    m.after_create = pe.Constraint(
        m.I, m.J, rule=lambda _, i, j: m.s[i] >= m.c[j] + TC(j) - (H - r[i]) * (1 - m.a[i, j]))
    m.before_destroy = pe.Constraint(
        m.I, m.J, rule=lambda _, i, j: m.e[j] >= m.s[i] + d(i) - H * (1 - m.a[i, j]))
    m.destroy_after_create = pe.Constraint(m.J, rule=lambda _, j: m.e[j] >= m.c[j] + TC(j))
    m.D_on = pe.Constraint(m.J, rule=lambda _, j: m.D[j] >= TD(j) - tdmax * (1 - m.dl[j]))
    m.D_off = pe.Constraint(m.J, rule=lambda _, j: m.D[j] <= tdmax * m.dl[j])
    m.dl_used = pe.Constraint(m.J, rule=lambda _, j: m.dl[j] <= used(j))

    # rule 3: intersecting sessions never overlap; the earlier-created one is destroyed first
    m.sess = pe.ConstraintList()
    for j, l in itertools.combinations(J, 2):
        for k in slices:
            both = zs(j, k) + zs(l, k)
            m.sess.add(m.c[l] >= m.e[j] + m.D[j] - M * (2 - both))
            m.sess.add(m.dl[j] >= both - 1)

    # rule 4: destroys against later creates and against each other
    m.chan = pe.ConstraintList()
    for j, l in itertools.combinations(J, 2):
        off_l = 1 - used(l)
        m.chan.add(m.beta[j, l] <= m.dl[j])
        m.chan.add(m.beta[j, l] <= used(l))
        m.chan.add(m.c[l] >= m.e[j] + m.D[j] - M * (1 - m.beta[j, l]) - M * off_l)
        m.chan.add(m.e[j] >= m.c[l] + TC(l) - M * m.beta[j, l] - M * (1 - m.dl[j]) - M * off_l)
        both_off = 2 - m.dl[j] - m.dl[l]
        m.chan.add(m.gam[j, l] <= m.dl[l])
        m.chan.add(m.e[l] >= m.e[j] + m.D[j] - M * (1 - m.gam[j, l]) - M * both_off)
        m.chan.add(m.e[j] >= m.e[l] + m.D[l] - M * m.gam[j, l] - M * both_off)

    # valid inequalities: slice load with creates, channel load, session load
    for k in slices:  # sessions on one slice are disjoint: their creates and tasks fit in [0, C]
        m.slice_load.add(sum(tc[q] * m.v[j, q] for j in J for q in covers[k])
                   + sum(dur[i, q] * m.x[i, q] for i in range(n) for q in covers[k] if (i, q) in dur) <= m.C)
    tmin = min(dur.values())
    m.channel_load = pe.Constraint(expr=sum(TC(j) + m.D[j] for j in J) <= m.C - tmin)
    m.session_load = pe.Constraint(
        m.J, rule=lambda _, j: m.C >= m.c[j] + TC(j) + sum(d_in(i, j) for i in range(n)))


# ---------------------------------------------------------------------------
# Warm start and solution reading

def canonical(problem: AnyProblem, plan: TimedPlan) -> TimedPlan:
    """The plan mapped by GPU automorphisms so that it meets the model's symmetry constraints.

    Times are unchanged: a swap of isomorphic sibling subtrees preserves
    sizes and intersections (:func:`subtree_symmetries`).
    """
    order = {t.name: i for i, t in enumerate(problem.tasks)}
    for A, B in subtree_symmetries(problem.gpu):
        on = [(order[st.task], st.placement) for st in plan.schedule.tasks if st.placement in A or st.placement in B]
        if not on or min(on, key=lambda x: x[0])[1] in A:
            continue
        perm = dict(zip(A, B))
        perm.update(zip(B, A))

        def mp(p: Placement) -> Placement:
            return perm.get(p, p)

        sched = plan.schedule
        new = Schedule(sched.gpu, [replace(st, placement=mp(st.placement)) for st in sched.tasks],
                       [replace(op, placement=mp(op.placement)) for op in sched.reconfigurations])
        plan = TimedPlan(new, [Session(mp(s.placement), s.tasks) for s in plan.sessions], list(plan.ops),
                         [(nm, mp(p)) for nm, p in plan.order])
    return plan


def _set_start(m: pe.ConcreteModel, plan: TimedPlan) -> None:
    """Load a plan's schedule as the MILP's initial values (a feasible incumbent)."""
    meta = m._meta
    tasks, P = meta["tasks"], meta["P"]
    pidx = {p.key(): q for q, p in enumerate(P)}
    name_idx = {t.name: i for i, t in enumerate(tasks)}
    run = {st.task: st for st in plan.schedule.tasks}
    for v in m.component_data_objects(pe.Var):
        v.set_value(0, skip_validation=True)
    for i, t in enumerate(tasks):
        st = run[t.name]
        m.s[i].set_value(st.start, skip_validation=True)
        m.x[i, pidx[st.placement.key()]].set_value(1, skip_validation=True)
    for i, j in m.PAIRS:
        m.y[i, j].set_value(1 if (run[tasks[i].name].start, i) < (run[tasks[j].name].start, j) else 0)
    m.C.set_value(plan.makespan, skip_validation=True)
    if hasattr(m, "w"):
        for i, j, q in m.W:
            m.w[i, j, q].set_value(1 if pe.value(m.x[i, q]) > 0.5 and pe.value(m.x[j, q]) > 0.5 else 0)
    if not meta["reconfiguration"]:
        return
    gpu_ops = {(op, j): start for op, j, start in plan.ops}
    sessions = plan.sessions
    last_c = 0.0
    for j in m.J:
        if j < len(sessions):
            sess = sessions[j]
            q = pidx[sess.placement.key()]
            m.v[j, q].set_value(1)
            c = gpu_ops[("create", j)]
            tcj = meta["tc"][q]
            m.c[j].set_value(c)
            last_c = c + tcj
            end = max([c + tcj] + [run[nm].end for nm in sess.tasks])
            if ("destroy", j) in gpu_ops:
                m.dl[j].set_value(1)
                m.e[j].set_value(gpu_ops[("destroy", j)])
                m.D[j].set_value(meta["td"][q])
            else:
                m.e[j].set_value(end)
            for nm in sess.tasks:
                i = name_idx[nm]
                m.a[i, j].set_value(1)
                m.b[i, j, q].set_value(1)
        else:
            m.c[j].set_value(last_c)
            m.e[j].set_value(last_c)
    for j, l in m.JJ:
        if l < len(sessions) and ("destroy", j) in gpu_ops:
            m.beta[j, l].set_value(1 if gpu_ops[("destroy", j)] < gpu_ops[("create", l)] else 0)
        if ("destroy", j) in gpu_ops and ("destroy", l) in gpu_ops:
            m.gam[j, l].set_value(1 if gpu_ops[("destroy", j)] < gpu_ops[("destroy", l)] else 0)


def _read_relaxed(m: pe.ConcreteModel, problem: AnyProblem) -> TimedPlan:
    """A schedule with reconfiguration from a solution of the relaxation R.

    R's own start times (which keep the destroy + create gaps) group the tasks
    into sessions and order the channel: each create as late as its first
    task allows, each destroy right after its last task; then local search.
    """
    meta = m._meta
    tasks, P = meta["tasks"], meta["P"]
    val = pe.value
    runs = []
    for i, t in enumerate(tasks):
        q = max(((val(m.x[i, q]), q) for q in meta["Pi"][i]))[1]
        start = val(m.s[i])
        runs.append(ScheduledTask(t.name, P[q], start, start + t.times[P[q].size]))
    sessions, first, last = sessionize(runs)
    gpu = problem.gpu
    c_at = [f - gpu.create_time[s.placement.size] / 2 for s, f in zip(sessions, first)]
    d_at = [e + gpu.destroy_time[s.placement.size] / 2 for s, e in zip(sessions, last)]
    try:
        plan = retime_sessions(problem, sessions, c_at, d_at)
    except ValueError:
        plan = retime_sessions(problem, sessions, first, last)
    return improve_channel(problem, plan)


def _read_plan(m: pe.ConcreteModel, problem: AnyProblem) -> TimedPlan:
    """Re-time the solution loaded in ``m`` into an exact schedule."""
    meta = m._meta
    tasks, P = meta["tasks"], meta["P"]
    n = len(tasks)
    val = pe.value
    if not meta["reconfiguration"]:
        choice = [max(((val(m.x[i, q]), q) for q in meta["Pi"][i]))[1] for i in range(n)]
        order = sorted(range(n), key=lambda i: (val(m.s[i]), i))
        return retime_order(problem, [(tasks[i].name, P[choice[i]]) for i in order])
    sessions, c_at, d_at = [], [], []
    slot_of = [max(((val(m.a[i, j]), j) for j in m.J))[1] for i in range(n)]
    for j in m.J:
        members = [i for i in range(n) if slot_of[i] == j]
        if not members:
            continue
        q = max(((val(m.v[j, q]), q) for q in m.Q))[1]
        members.sort(key=lambda i: (val(m.s[i]), i))
        sessions.append(Session(P[q], tuple(tasks[i].name for i in members)))
        c_at.append(val(m.c[j]) + meta["tc"][q] / 2)
        d_at.append(val(m.e[j]) + meta["td"][q] / 2)
    return retime_sessions(problem, sessions, c_at, d_at)


# ---------------------------------------------------------------------------
# Solvers

def _run_highs(m, time_limit, workers, warm):
    out = solve_highs(m, time_limit, workers, warmstart=warm, rel_gap=REL_GAP, abs_gap=ABS_GAP,
                      options={"random_seed": 0})
    return out.optimal, out.termination, out.has_solution, out.bound, out.objective, out.stats


def _run_pyomo(m, solver, time_limit, workers, warm):
    from pyomo.opt import TerminationCondition

    opt = pe.SolverFactory(solver)
    if opt is None or not opt.available(exception_flag=False):
        raise OptionError(f"solver {solver!r} is not available to Pyomo on this machine")
    kwargs: dict[str, Any] = {"load_solutions": False}
    if time_limit is not None:
        kwargs["timelimit"] = float(time_limit)
    if warm and getattr(opt, "warm_start_capable", lambda: False)():
        kwargs["warmstart"] = True
    if workers is not None:
        opt.options["threads"] = int(workers)
    res = opt.solve(m, **kwargs)
    tc = res.solver.termination_condition
    has_sol = len(res.solution) > 0
    if has_sol:
        m.solutions.load_from(res)
    bound = getattr(res.problem, "lower_bound", None)
    bound = None if bound is None or not math.isfinite(float(bound)) else float(bound)
    obj = pe.value(m.C) if has_sol else None
    return tc == TerminationCondition.optimal, str(tc), has_sol, bound, obj, {}


def solve_pyomo(problem_or_workload: AnyProblem, reconfiguration: bool = True, time_limit: float | None = None,
                solver: str = "highs", hint: Schedule | None = None, workers: int | None = None, *,
                relaxation: bool = True, lower_bound: float | None = None) -> Result:
    """Solve a MIG batch or workload to optimality (or to the time limit) with the Pyomo MILP.

    Parameters
    ----------
    problem_or_workload
        A :class:`instances.mig.Problem` or :class:`instances.mig.Workload`
        (no task starts before its batch's release).
    reconfiguration
        Model instance sessions and create/destroy operations (rules 1-6).
        ``False``: the semantics of ``problem.without_reconfiguration()`` (no
        operations; the schedule is checked with ``reconfiguration=False``).
        On a GPU whose create/destroy times are all zero the two coincide and
        the simpler model is used.
    time_limit
        Seconds for the solver (``None``: no limit).
    solver
        ``"highs"`` (HiGHS through highspy, Pyomo's appsi interface) or the
        name of another solver Pyomo can run (``"gurobi"``, ``"cbc"``, ...).
    hint
        A schedule (e.g. FAR's) whose decisions are re-timed and, if better than
        the built-in list schedules, used as the initial incumbent and horizon.
    workers
        Solver threads (HiGHS option ``threads``).
    relaxation
        With reconfiguration, first solve the relaxation R (tasks separated by
        destroy + create, no sessions, no channel) for a floor and an incumbent;
        when the incumbent meets the floor, the full model is skipped.
        ``False`` always solves the full session model (used by the tests).
    lower_bound
        A proven lower bound (seconds) on the optimum, used as a floor for the
        makespan; it must be valid for the chosen ``reconfiguration`` setting.

    Returns
    -------
    Result
        ``objective`` = makespan (s) of the returned schedule; ``lower_bound``
        = the solver's dual bound (capped at the objective); status OPTIMAL only
        when the solver proved it, FEASIBLE on a time limit. ``info`` holds the
        horizon, the MILP objective, the model size and solver statistics.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(4, "A30", seed=2)
    >>> res = solve_pyomo(p, reconfiguration=False, time_limit=30)
    >>> str(res.status), mig.check(p, res.schedule, reconfiguration=False)
    ('OPTIMAL', [])
    """
    t0 = time.perf_counter()
    problem = problem_or_workload
    if not isinstance(problem, (Problem, Workload)):
        raise TypeError(f"solve_pyomo expects a mig.Problem or mig.Workload, got {type(problem).__name__}")
    reconf = bool(reconfiguration) and problem.gpu.reconfigurable
    hints = [hint] if hint is not None else []
    deadline = None if time_limit is None else t0 + float(time_limit)
    info: dict[str, Any] = {"solver": solver, "reconfiguration": reconf}
    floor, proven_floor = 0.0, False
    if lower_bound is not None:
        floor = max(0.0, float(lower_bound))
    if reconf and relaxation:
        # The relaxation R (no sessions, no channel) is small and usually tight:
        # its dual bound is a valid floor and its schedule, sessionized, an incumbent.
        limit = None if deadline is None else max(0.01, 2 * (deadline - time.perf_counter()) / 3)
        r_proven, r_bound, r_plan, r_info = _solve_model(problem, True, False, limit, solver, hints, workers, 0.0)
        floor = max(floor, r_bound)
        proven_floor = r_proven
        hints.append(r_plan.schedule)
        info.update({f"relaxation_{k}": v for k, v in r_info.items()})
    plan = best_plan(problem, reconf, hints)
    floor = min(floor, plan.makespan)  # a floor above a feasible makespan is not a proof of anything
    if reconf and plan.makespan <= floor + max(ABS_GAP, REL_GAP * plan.makespan) and proven_floor:
        proven, bound, m_info = True, floor, {"termination": "closed by the relaxation's bound"}
    else:
        limit = None if deadline is None else max(0.01, deadline - time.perf_counter())
        proven, bound, solved, m_info = _solve_model(problem, reconf, True, limit, solver, hints, workers, floor)
        if solved.makespan <= plan.makespan:
            plan = solved
    info.update(m_info)
    violations = mig.check(problem, plan.schedule, reconfiguration=reconf)
    if violations:
        raise RuntimeError("the re-timed MILP schedule fails the checker: " + "; ".join(violations[:5]))
    objective = plan.makespan
    lower = min(max(mig_bounds.lower_bound(problem, reconfiguration=reconf), bound, floor), objective)
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    return Result(objective, lower, status, time.perf_counter() - t0, plan.schedule,
                  "highs" if solver in ("highs", "appsi_highs") else solver, info)


def _solve_model(problem: AnyProblem, reconfiguration: bool, sessions: bool, time_limit: float | None,
                 solver: str, hints: list[Schedule], workers: int | None,
                 floor: float) -> tuple[bool, float, TimedPlan, dict[str, Any]]:
    """Build, warm-start and solve one model; return (proven, dual bound, best plan, info).

    The plan is re-timed (with reconfiguration when the model has it or is the
    relaxation R) and is the better of the solver's solution and the start plan.
    """
    t0 = time.perf_counter()
    start_plan = best_plan(problem, reconfiguration, hints)
    horizon = start_plan.makespan * (1 + 1e-9) + 1e-9
    m = build_model(problem, reconfiguration, horizon, lower_bound=min(floor, start_plan.makespan),
                    sessions=sessions)
    _set_start(m, canonical(problem, start_plan))
    build_s = time.perf_counter() - t0
    limit = None if time_limit is None else max(0.01, time_limit - build_s)
    run = _run_highs if solver in ("highs", "appsi_highs") else _run_pyomo
    if run is _run_pyomo:
        proven, term, has_sol, bound, milp_obj, stats = _run_pyomo(m, solver, limit, workers, True)
    else:
        proven, term, has_sol, bound, milp_obj, stats = _run_highs(m, limit, workers, True)
    if "infeasible" in term.lower():
        raise RuntimeError(f"{solver} reports the MIG model infeasible although a schedule of makespan "
                           f"{start_plan.makespan:.6g} exists: a model bug")
    plan = start_plan
    if has_sol:
        solved = _read_relaxed(m, problem) if reconfiguration and not sessions else _read_plan(m, problem)
        if solved.makespan <= plan.makespan:
            plan = solved
    if proven and milp_obj is not None and sessions and plan.makespan > milp_obj + 1e-6 * max(1.0, milp_obj):
        raise RuntimeError(f"re-timing lengthened the optimal schedule ({milp_obj} -> {plan.makespan})")
    info = {"termination": term, "horizon": horizon, "heuristic_makespan": start_plan.makespan,
            "milp_objective": milp_obj, "dual_bound": bound, "variables": m.nvariables(),
            "constraints": m.nconstraints(), "build_seconds": build_s, "seconds": time.perf_counter() - t0,
            **stats}
    if bound is None:
        bound = floor
    return proven and has_sol, float(bound), plan, info
