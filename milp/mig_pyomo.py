"""Pyomo MILP backend of the exact MIG model, solved by HiGHS (FAR paper, Sec. 2.2; checker rules 1-6).

Call it through :func:`milp.mig.solve` (``backend="highs"`` or another Pyomo
solver name), which checks the options, applies ``reconfiguration=False`` as
``problem.without_reconfiguration()`` and hands over a
:class:`~instances.options.Deadline` and a checked incumbent.

Without reconfiguration the model has placement binaries, continuous starts
and per-slice big-M disjunctions; with it, create-ordered session slots and
a serialised channel of create/destroy operations. With reconfiguration
relaxations are solved first: for a single batch the assignment relaxation
(:mod:`milp.mig_pyomo_assignment`), whose assignments sequenced along the
placement tree are incumbents, then the session-free relaxation R; their
bounds are floors for the full model and often prove the optimum on their own.

The model runs on a copy of the problem whose times are divided by a power
of two (so that the makespan is a few hundred units and HiGHS's absolute
tolerances are negligible); every solution is re-timed with the user's float
durations (:mod:`instances.mig_retime`) and checked before it is returned.
The whole call, model building and HiGHS's model translation included, stays
within the deadline: a model that cannot be built or translated in time is
skipped and the best schedule known is returned as FEASIBLE.

The formulation, its soundness (slot bound, symmetry, relaxation R) and the
scaling are in ``docs/models/mig_pyomo.md``.

Examples
--------
>>> from instances import mig
>>> from milp import mig as milp_mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> res = milp_mig.solve(p, backend="highs", reconfiguration=False)
>>> str(res.status), res.objective
('OPTIMAL', 2.5)
>>> res = milp_mig.solve(p, backend="highs")  # create 2@0 and 2@2 one after the other (0.12 s each)
>>> str(res.status), round(res.objective, 2)
('OPTIMAL', 2.74)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Union

import pyomo.environ as pe

from bounds import mig as mig_bounds
from heuristics.mig_plans import best_plan, improve_assignment, improve_channel, tree_plans
from instances.errors import OptionError, SolverError
from instances.mig_problem import Problem, Task, Workload
from instances.mig_retime import Session, TimedPlan, canonical, retime_order, retime_sessions, sessionize
from instances.mig_schedule import Schedule, ScheduledTask
from instances import options as opt
from instances.options import Deadline, known_options
from milp.highs import solve_highs
from milp.mig_plans import checked
from milp.mig_pyomo_assignment import add_symmetry, build_assignment_model, read_assignment, set_assignment
from milp.result import Result

__all__ = ["solve_pyomo", "build_model", "check_solver", "time_unit", "scaled", "REL_GAP", "ABS_GAP"]

AnyProblem = Union[Problem, Workload]

#: Relative gap at which HiGHS stops (a tenth of the contract's tolerance, so
#: that re-timing and HiGHS's own tolerances leave the result within it).
REL_GAP = 1e-7
#: Absolute gap (model units: the makespan is a few hundred) at which HiGHS stops.
ABS_GAP = 1e-9

#: HiGHS's translation of a Pyomo model takes up to this many times as long as building it
#: (docs/models/mig_pyomo.md, "Time limit"): a solve is skipped when the time left cannot cover it.
_TRANSLATE_PER_BUILD = 3.0


class _OutOfTime(Exception):
    """The deadline expired while a model was being built."""


# ---------------------------------------------------------------------------
# The model

@known_options
def build_model(problem: AnyProblem, horizon: float, lower_bound: float = 0.0, sessions: bool = True,
                deadline: Deadline | None = None) -> pe.ConcreteModel:
    """The Pyomo MILP (``docs/models/mig_pyomo.md``) in the problem's own time units.

    ``horizon`` bounds every time; ``lower_bound`` (a proven bound on the
    optimum) bounds the makespan variable from below. Reconfiguration is
    modelled when the GPU has create/destroy times; then ``sessions=False``
    gives the relaxation R: tasks after their own create and separated by
    destroy + create on intersecting placements, but no sessions and no
    channel. Building stops with ``_OutOfTime`` once ``deadline`` expires.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(3, "A30", seed=0)
    >>> m = build_model(p, horizon=1000.0)
    >>> len(m.J), len(m.I)
    (3, 3)
    """
    def tick() -> None:
        if deadline is not None and deadline.expired():
            raise _OutOfTime

    reconfiguration = problem.gpu.reconfigurable
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
        tick()
        _add_channel_cuts(m, n, P, Pi, dur, tc, H, tick)
    tick()
    m.disj = pe.ConstraintList()
    extra = (max(td) + max(tc)) if reconfiguration else 0.0
    for i, j in itertools.combinations(range(n), 2):
        tick()
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
    tick()
    add_symmetry(m, gpu, P, Pi)

    if reconfiguration and sessions:
        tick()
        _add_sessions(m, n, P, Pi, dur, covers, tc, td, r, H, slices, tick)
    tick()
    m._meta = dict(P=P, Pi=Pi, tasks=tasks, H=H, reconfiguration=reconfiguration and sessions, tc=tc, td=td)
    return m


def _add_channel_cuts(m, n, P, Pi, dur, tc, H, tick) -> None:
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
        tick()
        same = sum(tc[q] * m.w[i, j, q] for q in Pi[i] if (j, q) in dur)
        both = sum(tc[q] * m.x[i, q] for q in Pi[i]) + sum(tc[q] * m.x[j, q] for q in Pi[j]) - same
        m.two_creates.add(m.s[j] >= both - H * (1 - m.y[i, j]))
        m.two_creates.add(m.s[i] >= both - H * m.y[i, j])


def _add_sessions(m, n, P, Pi, dur, covers, tc, td, r, H, slices, tick) -> None:
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
    tick()
    m.sess = pe.ConstraintList()
    for j, l in itertools.combinations(J, 2):
        tick()
        for k in slices:
            both = zs(j, k) + zs(l, k)
            m.sess.add(m.c[l] >= m.e[j] + m.D[j] - M * (2 - both))
            m.sess.add(m.dl[j] >= both - 1)

    # rule 4: destroys against later creates and against each other
    m.chan = pe.ConstraintList()
    for j, l in itertools.combinations(J, 2):
        tick()
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


def _read_relaxed(m: pe.ConcreteModel, problem: AnyProblem, deadline: Deadline | None = None) -> TimedPlan:
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
    return improve_channel(problem, plan, deadline=deadline)


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
# Scaling

@known_options
def time_unit(makespan: float) -> float:
    """Seconds per model unit: the power of two that puts ``makespan`` near 256 units.

    Dividing by a power of two is exact in floating point, so the scaled
    problem has exactly the user's times in other units.

    Examples
    --------
    >>> time_unit(100.0), time_unit(2e-6)
    (0.5, 7.450580596923828e-09)
    """
    return 2.0 ** round(math.log2(makespan / 256.0)) if makespan > 0 else 1.0


@known_options
def scaled(problem: AnyProblem, unit: float) -> AnyProblem:
    """The problem with every time (tasks, create/destroy, releases) divided by ``unit``.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> q = scaled(p, 0.5); q.tasks[0].times[4], q.gpu.create_time[4]
    (3.0, 0.26)
    """
    gpu = problem.gpu
    g = replace(gpu, create_time=MappingProxyType({s: t / unit for s, t in gpu.create_time.items()}),
                destroy_time=MappingProxyType({s: t / unit for s, t in gpu.destroy_time.items()}))

    def batch(b: Problem) -> Problem:
        return Problem(g, [Task(t.name, {s: x / unit for s, x in t.times.items()}, t.memory_gb) for t in b.tasks],
                       b.release / unit)

    if isinstance(problem, Workload):
        return Workload(g, [batch(b) for b in problem.batches])
    return batch(problem)


def _scale_schedule(schedule: Schedule, factor: float) -> Schedule:
    return Schedule(schedule.gpu, [replace(t, start=t.start * factor, end=t.end * factor) for t in schedule.tasks],
                    [replace(o, start=o.start * factor, end=o.end * factor) for o in schedule.reconfigurations])


def _unscaled(problem: AnyProblem, plan: TimedPlan) -> Schedule:
    """The scaled plan's decisions re-timed with the user's float durations."""
    if not problem.gpu.reconfigurable:
        return retime_order(problem, plan.order).schedule
    create_at = [math.inf] * len(plan.sessions)
    destroy_at = [math.inf] * len(plan.sessions)
    for op, j, at in plan.ops:
        (create_at if op == "create" else destroy_at)[j] = at
    return retime_sessions(problem, plan.sessions, create_at, destroy_at).schedule


# ---------------------------------------------------------------------------
# Solvers

@known_options
def check_solver(solver: str) -> None:
    """Raise :class:`OptionError` unless Pyomo can run ``solver`` (HiGHS is checked when it runs)."""
    if solver in ("highs", "appsi_highs"):
        import pyomo.contrib.appsi.solvers.highs  # noqa: F401 - load it before any deadline starts

        return
    if solver == "pyomo":
        # Pyomo's generic ASL plugin takes its own command-line tool for a solver and crashes running it
        raise OptionError("'pyomo' is the modelling layer, not a solver: use 'highs' (or 'cpsat')", field="backend")
    factory = pe.SolverFactory(solver)
    if factory is None or not factory.available(exception_flag=False):
        raise OptionError(f"solver {solver!r} is not available to Pyomo on this machine (use 'cpsat' or 'highs')",
                          field="backend")


def _run_highs(m, deadline, workers, warm, log):
    out = solve_highs(m, deadline, workers, warmstart=warm, rel_gap=REL_GAP, abs_gap=ABS_GAP, log=log,
                      options={"random_seed": 0})
    return out.optimal, out.termination, out.has_solution, out.bound, out.objective, out.stats


def _run(m, solver, deadline, workers, warm, log):
    """Solve ``m`` with ``solver`` (HiGHS through appsi, any other through Pyomo's factory):
    (proven, termination, has solution, dual bound, objective, statistics)."""
    if solver in ("highs", "appsi_highs"):
        return _run_highs(m, deadline, workers, warm, log)
    return _run_pyomo(m, solver, deadline, workers, warm, log)


def _run_pyomo(m, solver, deadline, workers, warm, log=False):
    from pyomo.opt import TerminationCondition

    check_solver(solver)
    opt = pe.SolverFactory(solver)
    kwargs: dict[str, Any] = {"load_solutions": False, "tee": bool(log)}
    remaining = deadline.remaining() if isinstance(deadline, Deadline) else deadline
    if remaining is not None:
        if remaining <= 0:
            return False, "skipped: time limit spent before the solve", False, None, None, {}
        kwargs["timelimit"] = float(remaining)
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


def _solve_model(problem: AnyProblem, sessions: bool, deadline: Deadline, solver: str, start_plan: TimedPlan,
                 workers: int | None, floor: float, log: bool) -> tuple[float, TimedPlan, dict[str, Any]]:
    """Build, warm-start and solve one model within ``deadline``; return (bound, best plan, info).

    The plan is the better of the solver's re-timed solution and ``start_plan``
    (in the scaled problem's units); the bound is ``floor`` when the solver
    proves nothing more. A model that cannot be built and translated in time is
    skipped.
    """
    horizon = start_plan.makespan * (1 + 1e-9) + 1e-9
    info: dict[str, Any] = {"horizon": horizon, "heuristic_makespan": start_plan.makespan}
    t0 = deadline.elapsed()
    try:
        m = build_model(problem, horizon, lower_bound=min(floor, start_plan.makespan), sessions=sessions,
                        deadline=deadline)
    except _OutOfTime:
        info["termination"] = "skipped: the time limit expired while building the model"
        return floor, start_plan, info
    build_s = deadline.elapsed() - t0
    info.update(variables=m.nvariables(), constraints=m.nconstraints(), build_seconds=build_s)
    remaining = deadline.remaining()
    if remaining is not None and remaining < _TRANSLATE_PER_BUILD * build_s:
        info["termination"] = "skipped: too little time left to hand the model to the solver"
        return floor, start_plan, info
    _set_start(m, canonical(problem, start_plan))
    proven, term, has_sol, bound, milp_obj, stats = _run(m, solver, deadline, workers, True, log)
    if "infeasible" in term.lower():
        raise SolverError(f"{solver} reports the MIG model infeasible although a schedule of makespan "
                          f"{start_plan.makespan:.6g} exists: a model bug")
    plan = start_plan
    if has_sol:
        reconf_relaxation = problem.gpu.reconfigurable and not sessions
        try:
            solved = _read_relaxed(m, problem, deadline) if reconf_relaxation else _read_plan(m, problem)
        except ValueError as exc:  # tolerances of the solution contradict the plan: keep the start plan
            solved, info["read_error"] = plan, str(exc)
        if solved.makespan <= plan.makespan:
            plan = solved
    if proven and milp_obj is not None and sessions and plan.makespan > milp_obj + 1e-6 * max(1.0, milp_obj):
        raise SolverError(f"re-timing lengthened the optimal schedule ({milp_obj} -> {plan.makespan})")
    info.update(termination=term, milp_objective=milp_obj, dual_bound=bound, seconds=deadline.elapsed() - t0,
                **stats)
    return max(floor, bound) if bound is not None else floor, plan, info


def _assignment_relaxation(problem: Problem, sp: Problem, unit: float, best: Schedule, floor: float,
                           deadline: Deadline, solver: str, workers: int | None, relax_time: float,
                           relax_share: float, log: bool, info: dict[str, Any]) -> tuple[float, Schedule]:
    """Solve the assignment relaxation of ``sp`` (``problem`` scaled by ``unit``); return its bound (in ``sp``'s
    units, ``floor`` when it proves nothing more) and the best of ``best`` and the session schedules built
    along the placement tree from the relaxation's assignments and from ``best``'s, each improved by local
    search (as the CP-SAT backend does, ``docs/models/mig_cpsat.md``).

    The relaxation is solved in up to three stages, each only while the gap
    is open: without the create channel first (HiGHS proves it faster and its
    bound often closes the gap already), then with it, then,
    when that stage is proven, with the convergence rows as well; each starts
    from the bound and assignment of the one before.
    """
    out: dict[str, Any] = {}
    info["assignment_relaxation"] = out

    def sequenced(assignment: dict) -> Schedule:
        tree = checked(problem, tree_plans(problem, assignment, deadline), "a tree plan")
        out.setdefault("tree_makespans", []).append(tree.makespan)
        return tree

    own = improve_assignment(problem, {st.task: st.placement for st in best.tasks}, deadline)
    best = min(best, sequenced(own), key=lambda s: s.makespan)
    start = own
    # first without the create channel (fast, often enough), then with it for what is left open, then,
    # when that is proven and still below every schedule, with the convergence rows as well (they close
    # such gaps but slow HiGHS down where they are not needed)
    proven = False
    for channel, converge in ((False, False), (True, False), (True, True)):
        if converge and not proven:
            break
        horizon = best.makespan / unit * (1 + 1e-9) + 1e-9
        if best.makespan / unit - floor <= REL_GAP * best.makespan / unit or deadline.expired():
            break
        remaining = deadline.remaining()
        limit = relax_time if remaining is None else min(relax_time, remaining * relax_share)
        t0 = deadline.elapsed()
        m = build_assignment_model(sp, horizon, lower_bound=min(floor, horizon), channel=channel, converge=converge)
        warm = set_assignment(m, start)
        remaining = deadline.remaining()
        if remaining is not None and remaining < _TRANSLATE_PER_BUILD * (deadline.elapsed() - t0):
            break  # too little time left to hand the model to HiGHS
        sub = Deadline(limit if remaining is None else min(limit, remaining))
        proven, term, has_sol, bound, _, stats = _run(m, solver, sub, workers, warm, log)
        out["with_convergence_rows" if converge else "with_channel" if channel else "without_channel"] = dict(
            termination=term, proven=proven, bound=None if bound is None else bound * unit, **stats)
        if bound is not None:
            floor = max(floor, bound)
        if has_sol:
            start = read_assignment(m)
            for a in (start, improve_assignment(problem, start, deadline)):
                best = min(best, sequenced(a), key=lambda s: s.makespan)
    return floor, best


@known_options
def solve_pyomo(problem: AnyProblem, *, deadline: Deadline, incumbent: Schedule, hint: Schedule | None,
                workers: int | None = None, lower_bound: float = 0.0, info: dict[str, Any] | None = None,
                solver: str = "highs", relaxation: bool = True, relax_time: float = 1e9,
                relax_share: float = 0.85, log: bool = False) -> Result:
    """Solve a non-empty MIG problem or workload with the Pyomo MILP (called by :func:`milp.mig.solve`).

    Parameters
    ----------
    problem
        The problem; it carries whether reconfiguration applies.
    deadline
        The whole call's budget (plans, model building, translation, solves).
    incumbent
        A checked schedule (the re-timed hint, or the serial one).
    hint
        The user's or FAR's schedule (already part of ``incumbent``), or ``None``.
    lower_bound
        A bound valid for the float data (seconds).
    solver
        ``"highs"`` (HiGHS through highspy and Pyomo's appsi interface) or
        another Pyomo solver name.
    relaxation
        With reconfiguration, first solve the assignment relaxation
        (:mod:`milp.mig_pyomo_assignment`; single batch only) and then the
        relaxation R (tasks separated by destroy + create, no sessions, no
        channel) for floors and incumbents. ``False`` always solves the full
        session model.
    relax_time, relax_share
        The assignment relaxation gets at most ``relax_time`` seconds and
        ``relax_share`` of the time left. Most of it by default: when HiGHS
        cannot close the relaxation, R and the session model rarely close the
        gap with the rest (``docs/models/mig_pyomo.md``, "Design decisions").
    log
        Stream the solver's log.
    """
    workers = opt.workers(workers)
    info = info if info is not None else {}
    info["solver"] = solver
    reconf = problem.gpu.reconfigurable
    unit = time_unit(incumbent.makespan)
    sp = scaled(problem, unit)
    info["time_unit"] = unit
    best = incumbent
    lb = max(mig_bounds.lower_bound(problem), lower_bound)
    if reconf and relaxation and all(r == 0 for r in problem.releases().values()) and not deadline.expired():
        a_bound, best = _assignment_relaxation(problem, sp, unit, best, lb / unit, deadline, solver, workers,
                                               relax_time, relax_share, log, info)
        lb = max(lb, a_bound * unit)
    hints = [_scale_schedule(best, 1.0 / unit)]
    floor = lb / unit
    plan = best_plan(sp, hints, deadline)
    if plan.makespan - floor <= REL_GAP * plan.makespan:
        relaxation = False  # closed by the assignment relaxation: nothing left to prove
    if reconf and relaxation and not deadline.expired():
        # R is small and usually tight: its bound is a floor, its schedule (in sessions) an incumbent
        remaining = deadline.remaining()
        sub = deadline if remaining is None else Deadline(2 * remaining / 3)
        r_bound, r_plan, r_info = _solve_model(sp, False, sub, solver, plan, workers, floor, log)
        floor = max(floor, r_bound)
        if r_plan.makespan < plan.makespan:
            plan = r_plan
        info.update({f"relaxation_{k}": v for k, v in r_info.items()})
    floor = min(floor, plan.makespan)
    if plan.makespan - floor <= REL_GAP * plan.makespan:
        info["termination"] = "closed by the bound before the full model"
    elif not deadline.expired():
        bound, plan, m_info = _solve_model(sp, True, deadline, solver, plan, workers, floor, log)
        floor = max(floor, bound)
        info.update(m_info)
    else:
        info["termination"] = "skipped: time limit spent before the full model"
    schedule = checked(problem, _unscaled(problem, plan), "the re-timed MILP schedule")
    if schedule.makespan < best.makespan:
        best = schedule
    lb = max(lb, floor * unit)
    return Result.from_bounds(best.makespan, lb, schedule=best, runtime=deadline.elapsed(),
                              backend="highs" if solver in ("highs", "appsi_highs") else solver, info=info)
