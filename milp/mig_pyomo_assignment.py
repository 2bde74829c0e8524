"""The assignment relaxation of the MIG model with reconfiguration, as a Pyomo MILP.

The same relaxation as the CP-SAT backend's (``docs/models/mig_cpsat.md``,
"Assignment relaxation"), written independently as a mixed-integer linear
program so that the HiGHS backend gets the bound without CP-SAT. Binaries
``x[i,q]`` place task i on placement q, ``u[q]`` marks a used placement. For
every slice k, with the used placements covering k:

* ``load_k`` = the times of the tasks on them + one create and one destroy
  of each, less the destroy of the placement marked ``last[k,q]`` (the
  slice's final session may stay); with the convergence rows, less only
  that of a placement marked ``fin[q]``: its final session is the last one
  on every slice of q and stays (every other session is destroyed before
  the next one on one of its slices is created, and its destroy holds all
  its slices);
* ``c_q + load_k <= C`` for the placement marked ``first[k,q]``: the GPU
  starts empty, so every session on k lies after the first create on k;
* the creates ``[c_q, c_q + t_create(q))`` of the used placements never
  overlap (rule 4: one channel), ordered by a binary per pair;
* a placement that is both first and last on slice k while another used
  placement covers k has a second session there (the other one lies
  between): ``again[k,q] >= first[k,q] + last[k,q] + u[r] - 2`` adds one
  more create and destroy of it to ``load_k``;
* the creates fit before the last task ends: ``sum_q t_create(q) u[q] +
  (shortest task) <= C``;
* convergence rows: a placement q marked ``fin`` is created only after the
  session before it on each of its slices (``prev[q,k,r]``) is destroyed;
  on two slices k, k' of q that do not share that placement the two
  destroys are different operations of the one channel, so one of them
  waits for the other: ``C >= end_k + t_destroy(prev on k')`` or the same
  with k and k' exchanged, where ``end_k`` is the first create on k plus
  ``load_k``. Without them the relaxation may run a parent session last
  after children that end together on its slices, which the channel cannot
  serve.

Every schedule satisfies it (count only the first session of each used
placement; more sessions add load), so its proven bound is valid for the
session model. Symmetric subtrees of the GPU are broken as in the full model
(:func:`add_symmetry`). Single batch, all releases 0.

Examples
--------
>>> from instances import mig
>>> from milp.highs import solve_highs
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> m = build_assignment_model(p, horizon=10.0)
>>> out = solve_highs(m)
>>> out.optimal, round(out.objective, 2)  # 2.74 is the optimum: the relaxation is tight here
(True, 2.74)
"""

from __future__ import annotations

import itertools
from typing import Sequence

import pyomo.environ as pe

from instances.gpus import GPUSpec, Placement
from instances.mig_problem import Problem
from instances.mig_retime import canonical
from instances.mig_schedule import Schedule, ScheduledTask
from instances.options import known_options

__all__ = ["build_assignment_model", "set_assignment", "read_assignment", "add_symmetry"]


@known_options
def add_symmetry(m: pe.ConcreteModel, gpu: GPUSpec, P: Sequence[Placement], Pi: Sequence[Sequence[int]]) -> None:
    """Symmetric subtrees of the GPU: the lowest-indexed task placed in a pair lies in the left one.

    ``m.x[i, q]`` places task i on ``P[q]``; ``Pi[i]`` lists the placements
    task i may use. Valid for every model whose cost is unchanged when the two
    subtrees are exchanged (both Pyomo models).
    """
    pidx = {p: k for k, p in enumerate(P)}
    allowed = [set(qs) for qs in Pi]
    m.sym = pe.ConstraintList()
    for A, B in gpu.symmetric_subtrees():
        A_ = [pidx[p] for p in A if p in pidx]
        B_ = [pidx[p] for p in B if p in pidx]
        for i in range(len(Pi)):
            lhs = [m.x[i, q] for q in B_ if q in allowed[i]]
            rhs = [m.x[i2, q] for i2 in range(i) for q in A_ if q in allowed[i2]]
            if lhs:
                m.sym.add(sum(lhs) <= sum(rhs) if rhs else sum(lhs) == 0)


@known_options
def build_assignment_model(problem: Problem, horizon: float, lower_bound: float = 0.0,
                           channel: bool = True, second_sessions: bool = True,
                           converge: bool = True) -> pe.ConcreteModel:
    """The assignment relaxation (module docstring) in the problem's own time units.

    ``horizon`` bounds the makespan (the makespan of a known schedule);
    ``lower_bound`` bounds it from below. ``channel=False`` leaves out the
    create channel and the first-create rows: a weaker relaxation that HiGHS
    solves much faster. ``second_sessions=False`` leaves out the
    second-session rows (``again``; for comparison only: the relaxation is
    then weaker and may stop below the optimum). ``converge=False`` leaves
    out the convergence rows (module docstring) and lets the destroy left out
    be chosen per slice: weaker, but HiGHS proves it sooner, so the backend
    solves it first and adds the rows only when it is proven and still below
    every schedule.
    """
    gpu = problem.gpu
    if not gpu.reconfigurable or any(r != 0 for r in problem.releases().values()) or not problem.n:
        raise ValueError("the assignment relaxation is for one batch with reconfiguration and no release times")
    tasks = list(problem.tasks)
    n = len(tasks)
    H = float(horizon)
    sizes_used = {s for t in tasks for s in t.times}
    P = [p for p in gpu.placements if p.size in sizes_used]
    Pi = [[q for q, p in enumerate(P) if p.size in t.times] for t in tasks]
    dur = {(i, q): tasks[i].times[P[q].size] for i in range(n) for q in Pi[i]}
    tc = [gpu.create_time[p.size] for p in P]
    td = [gpu.destroy_time[p.size] for p in P]
    over = {k: [q for q, p in enumerate(P) if k in p.slices] for k in range(gpu.num_slices)}
    over = {k: qs for k, qs in over.items() if qs}

    m = pe.ConcreteModel(name="mig_assignment_relaxation")
    m.IP = pe.Set(dimen=2, initialize=sorted(dur))
    m.Q = pe.RangeSet(0, len(P) - 1)
    m.KQ = pe.Set(dimen=2, initialize=[(k, q) for k, qs in over.items() for q in qs])
    m.x = pe.Var(m.IP, within=pe.Binary)
    m.u = pe.Var(m.Q, within=pe.Binary)
    m.last = pe.Var(m.KQ, within=pe.Binary)
    # fin[q]: q's final session is the final one on all its slices and is never destroyed
    m.fin = pe.Var(m.Q, within=pe.Binary)
    m.first = pe.Var(m.KQ, within=pe.Binary)
    # Left-justifying the creates on the channel keeps every row satisfied (they only ask creates to come
    # early), so some optimum of the relaxation has every create start before the other creates' total
    # time: that total, not the horizon, is the big-M of the create rows (a much tighter LP).
    T = float(sum(tc))
    m.c = pe.Var(m.Q, bounds=lambda _, q: (0.0, T - tc[q]))
    m.C = pe.Var(bounds=(min(float(lower_bound), H), H))
    m.obj = pe.Objective(expr=m.C, sense=pe.minimize)

    m.assign = pe.Constraint(range(n), rule=lambda _, i: sum(m.x[i, q] for q in Pi[i]) == 1)
    m.used = pe.Constraint(m.IP, rule=lambda _, i, q: m.x[i, q] <= m.u[q])
    m.used_only = pe.Constraint(m.Q, rule=lambda _, q: m.u[q] <= sum(m.x[i, q] for i in range(n) if (i, q) in dur))
    # again[k, q]: placement q has a second session on slice k (it is first and last there, another used
    # placement lies between)
    m.again = pe.Var(m.KQ, bounds=(0.0, 1.0 if second_sessions else 0.0))
    m.marks = pe.ConstraintList()
    m.slice_load = pe.ConstraintList()
    m.a = pe.Var(list(over), bounds=(0.0, T))  # the first create on the slice
    ends = {}
    for k, qs in over.items():
        for mark in (m.last, m.first) if channel or second_sessions else (m.last,):
            m.marks.add(sum(mark[k, q] for q in qs) <= 1)
            for q in qs:
                m.marks.add(mark[k, q] <= m.u[q])
                if mark is m.last and converge:
                    m.marks.add(m.fin[q] <= m.last[k, q])
                m.marks.add(sum(mark[k, q2] for q2 in qs) >= m.u[q])  # one mark once the slice has a session
        for q, r in itertools.permutations(qs, 2) if second_sessions else ():
            m.marks.add(m.again[k, q] >= m.first[k, q] + m.last[k, q] + m.u[r] - 2)
        load = (sum(dur[i, q] * m.x[i, q] for q in qs for i in range(n) if (i, q) in dur)
                + sum((tc[q] + td[q]) * (m.u[q] + m.again[k, q]) - td[q] * (m.fin[q] if converge else m.last[k, q])
                      for q in qs))
        m.slice_load.add(load <= m.C)
        for q in qs if channel else ():
            m.slice_load.add(m.c[q] + load <= m.C + T * (1 - m.first[k, q]))
            if converge:  # a_k, the first create on k, is needed by the convergence rows only
                m.slice_load.add(m.a[k] >= m.c[q] - T * (1 - m.first[k, q]))
        ends[k] = (m.a[k] if channel else 0.0) + load
    # rule 4: the creates of used placements one at a time
    m.PAIRS = pe.Set(dimen=2, initialize=list(itertools.combinations(range(len(P)), 2)) if channel else [])
    m.o = pe.Var(m.PAIRS, within=pe.Binary)
    m.channel = pe.ConstraintList()
    for q, r in m.PAIRS:
        off = T * (2 - m.u[q] - m.u[r])
        m.channel.add(m.c[q] + tc[q] <= m.c[r] + T * (1 - m.o[q, r]) + off)
        m.channel.add(m.c[r] + tc[r] <= m.c[q] + T * m.o[q, r] + off)
    if converge:
        _convergence_rows(m, P, over, ends, td, H + T + max(td))
    shortest = min(min(t.times.values()) for t in tasks)
    m.creates = pe.Constraint(expr=sum(tc[q] * m.u[q] for q in m.Q) + shortest <= m.C)
    add_symmetry(m, gpu, P, Pi)
    m._meta = dict(problem=problem, gpu=gpu.name, P=P, tasks=tasks, dur=dur, tc=tc, td=td, over=over, shortest=shortest,
                   converge=converge)
    return m


def _convergence_rows(m: pe.ConcreteModel, P: Sequence[Placement], over: dict, ends: dict, td: Sequence[float],
                      M: float) -> None:
    """The convergence rows (module docstring): placement q final on all its slices waits for two destroys.

    ``prev[q, k, r]``: r's session is the one before q's final session on
    slice k (r = q: an earlier session of q, which then has a second session
    on k); ``same[q, k, k', r]``: r on both slices (one destroy frees both).
    Otherwise the two destroys run one after the other on the channel
    (``order`` picks which goes second) and delay q's create:
    ``C >= end_k + t_destroy(prev[k'])`` or ``C >= end_k' + t_destroy(prev[k])``.
    """
    index = [(q, k, r) for q, p in enumerate(P) if len(p.slices) > 1 for k in sorted(p.slices)
             for r in over[k]]
    m.prev = pe.Var(index, within=pe.Binary)
    m.converge = pe.ConstraintList()
    pairs = []
    for q, p in enumerate(P):
        if len(p.slices) < 2:
            continue
        for k in sorted(p.slices):
            lits = [m.prev[q, k, r] for r in over[k]]
            m.converge.add(sum(lits) <= m.fin[q])
            for r in over[k]:
                m.converge.add(m.prev[q, k, r] <= m.u[r])
                if r != q:  # q last on k after another used placement: something precedes q's final session
                    m.converge.add(sum(lits) >= m.fin[q] + m.u[r] - 1)
            if m.again[k, q].ub > 0:  # else the relaxation has no second sessions: leave it weaker
                m.converge.add(m.prev[q, k, q] <= m.again[k, q])
        pairs += [(q, k, k2) for k, k2 in itertools.combinations(sorted(p.slices), 2)]
    m.order = pe.Var(pairs, within=pe.Binary)
    shared = [(q, k, k2, r) for q, k, k2 in pairs for r in over[k] if r in over[k2]]
    m.same = pe.Var(shared, bounds=(0.0, 1.0))
    for q, k, k2, r in shared:
        m.converge.add(m.same[q, k, k2, r] >= m.prev[q, k, r] + m.prev[q, k2, r] - 1)
        m.converge.add(m.same[q, k, k2, r] <= m.prev[q, k, r])
        m.converge.add(m.same[q, k, k2, r] <= m.prev[q, k2, r])
    for q, k, k2 in pairs:
        has_k = sum(m.prev[q, k, r] for r in over[k])
        has_k2 = sum(m.prev[q, k2, r] for r in over[k2])
        off = M * (3 - m.fin[q] - has_k - has_k2 + sum(m.same[q, k, k2, r] for r in over[k] if r in over[k2]))
        t_k = sum(td[r] * m.prev[q, k, r] for r in over[k])
        t_k2 = sum(td[r] * m.prev[q, k2, r] for r in over[k2])
        m.converge.add(m.C >= ends[k] + t_k2 - off - M * (1 - m.order[q, k, k2]))
        m.converge.add(m.C >= ends[k2] + t_k - off - M * m.order[q, k, k2])


@known_options
def set_assignment(m: pe.ConcreteModel, assignment: dict[str, Placement]) -> bool:
    """Load a solution of the relaxation with this assignment as the model's starting values.

    The assignment is first mapped by the GPU's symmetries onto the form the
    model keeps. The creates run back to back, placements covering the most
    loaded slices first; on every slice the placement with the longest
    destroy is the last one (among those other than the first one, when
    there are others). Returns ``False`` (and loads nothing) when the
    solution's makespan exceeds the model's horizon.
    """
    meta = m._meta
    P, tasks, dur, tc, td, over = meta["P"], meta["tasks"], meta["dur"], meta["tc"], meta["td"], meta["over"]
    pidx = {p.key(): q for q, p in enumerate(P)}
    # the model breaks the GPU's symmetries: map the assignment onto the form it keeps
    placed = Schedule(meta["gpu"], [ScheduledTask(t.name, assignment[t.name], 0.0, t.times[assignment[t.name].size])
                                   for t in tasks])
    assignment = {st.task: st.placement for st in canonical(meta["problem"], placed).tasks}
    on = {i: pidx[assignment[t.name].key()] for i, t in enumerate(tasks)}
    used = sorted(set(on.values()))
    work = {q: sum(dur[i, q] for i, r in on.items() if r == q) for q in used}
    mine = {k: [q for q in qs if q in work] for k, qs in over.items()}
    mine = {k: qs for k, qs in mine.items() if qs}       # the slices with a session
    full = {k: sum(work[q] + tc[q] + td[q] for q in qs) for k, qs in mine.items()}
    # the creates' order: placements covering the most loaded slices first (longest destroy left standing)
    heaviest = {q: max(full[k] - max(td[r] for r in qs) for k, qs in mine.items() if k in P[q].slices)
                for q in used}
    order = sorted(used, key=lambda q: (-heaviest[q], q))
    c, clock = {}, 0.0
    for q in order:
        c[q], clock = clock, clock + tc[q]
    first = {k: min(qs, key=lambda q: c[q]) for k, qs in mine.items()}
    # the session left standing on a slice: the longest destroy, but not the first one's when there are others
    last = {k: max([q for q in qs if q != first[k]] or qs, key=lambda r: (td[r], -r)) for k, qs in mine.items()}
    if meta["converge"]:
        # a standing session saves its destroy only where no convergence row can bind: one slice, or
        # nothing else used on its slices (then no session precedes it)
        fin = {q for q in used if all(last[k] == q for k in P[q].slices)
               and (len(P[q].slices) == 1 or all(qs == [q] for k, qs in mine.items() if k in P[q].slices))}
    else:  # the destroy left out is the last session's on every slice
        fin = set(used)
    load = {k: full[k] - (td[last[k]] if last[k] in fin else 0.0) for k in mine}
    makespan = max([load[k] + c[first[k]] for k in load] + [clock + meta["shortest"]])
    if makespan > m.C.ub:
        return False
    for (i, q) in m.IP:
        m.x[i, q].set_value(int(on[i] == q))
    for q in m.Q:
        m.u[q].set_value(int(q in work))
        m.c[q].set_value(c.get(q, 0.0))
    for (k, q) in m.KQ:
        m.last[k, q].set_value(int(k in last and last[k] == q))
        m.first[k, q].set_value(int(k in first and first[k] == q))
        m.again[k, q].set_value(0)
    for q in m.Q:
        m.fin[q].set_value(int(q in fin))
    for k in m.a:
        m.a[k].set_value(c[first[k]] if k in first else 0.0)
    for v in (getattr(m, name) for name in ("prev", "order", "same") if hasattr(m, name)):
        for idx in v:
            v[idx].set_value(0)
    for (q, r) in m.PAIRS:
        m.o[q, r].set_value(int(c.get(q, 0.0) <= c.get(r, 0.0)))
    m.C.set_value(max(makespan, m.C.lb))
    return True


@known_options
def read_assignment(m: pe.ConcreteModel) -> dict[str, Placement]:
    """The assignment of the model's loaded solution (task name -> placement)."""
    P, tasks = m._meta["P"], m._meta["tasks"]
    out = {}
    for (i, q) in m.IP:
        if pe.value(m.x[i, q]) > 0.5:
            out[tasks[i].name] = P[q]
    return out
