"""CP-SAT model of the MIG scheduling problem (seed 000, Sec. 2.2; DESIGN.md rules 1-6).

Three models share one builder:

**Laminar assignment model** (default without reconfiguration and with one
release time for all tasks). The placements' occupied slices form a laminar
family (the repartitioning tree of Fig. 4). For a fixed assignment of tasks to
placements, the best schedule runs every node's tasks back to back as soon as
all its ancestors' tasks are done (:func:`_tree_schedule`); its makespan is
the largest *slice load* (sum of the times of the tasks whose placement
occupies the slice), which is also a lower bound for every schedule of that
assignment, since the tasks covering one slice pairwise conflict. So
OPT = min over assignments of the largest slice load: a pure assignment model
(booleans x[i, p], one linear row per slice), no time variables at all.

**Interval model** (without reconfiguration, with release times, or forced
by ``model="intervals"``): every task i has one start variable and
one optional fixed-size interval per placement p it may use (presence x[i,p],
exactly one per task). Tasks whose placements share an occupied slice never
overlap: one NoOverlap per slice (the slices' constraints are exactly the
maximal cliques of the laminar placement tree). Redundant: a cumulative over
all tasks with demand |occ(p)| and capacity #slices.

**Session model** (with reconfiguration): on top of the task intervals, every placement p has
K_p ordered *session slots* k. A present slot is a create operation
[c, c + t_create), a usable window [c + t_create, v) and, if destroyed, a
destroy operation [v, v + t_destroy); it occupies occ(p) from c to the
destroy's end, or to the horizon when never destroyed (rule 2). Then

* occupancy intervals of slots whose placements share a slice never overlap
  (rule 3: one NoOverlap per slice);
* all create and destroy intervals lie on one NoOverlap channel (rule 4);
* each task on p lies inside a window of p: per placement, one NoOverlap over
  the tasks on p and the *gaps* between p's windows ([0, first window start),
  [end of window k, start of window k+1), ..., [end of last window, horizon)),
  so no task-to-session assignment variables are needed; the same NoOverlap
  runs the tasks of a session one after another and puts the destroy after the
  last one.

Before the session model, an *assignment relaxation* (the laminar model plus,
per slice, one create and one destroy for every used placement covering it
but one destroy fewer, and all creates serialised before the last task) is
solved for at most ``relax_time`` seconds; its proven bound becomes the
session model's initial lower bound (usually within a few ms of the optimum).
Linear cuts give the session model's LP the same reasoning: per slice, the
sessions with their operations and tasks fit in [0, makespan] and at most one
of them is never destroyed; all operations fit on the channel.

Slot bound (exact, not a heuristic): a session runs at least one task (an
empty one can be deleted, which only frees the channel and its slices), so p
has at most as many sessions as tasks may use its size: K_p = n_p, and the
model also states sum_k present[p, k] <= #tasks on p. For a single batch the
root (whole-GPU) placement needs only one session: the root's sessions cut the
schedule into phases that start and end with an empty GPU; merging all root
sessions into one, placed first (or last, when the schedule ends with a root
session, which then needs no destroy), removes a create and a destroy per
extra session, and the phases, shifted as blocks, keep their internal timing
(safe when every release time is 0). Otherwise all root slots are kept.

With a feasible hint (FAR's schedule by default) of makespan M, every
solution worth finding has rounded makespan at most U = ceil(M * resolution)
+ slack (the hint rounded up along its chains), so the horizon shrinks to U
and K_p to the largest m whose m shortest tasks on p plus m creates and m - 1
destroys fit below U (e.g. 3-4 instead of 12 slots for the 1-slice
placements of an n = 12 A100 batch).

Sound reductions, both valid for every duration vector (so also after rounding):

* **dominance** (no reconfiguration only): among placements with the same
  occupied slices a task keeps the fastest one (A100: 4@0 dominates 3@0, which
  occupies slices 0-3 but computes on three); conflicts depend only on
  occupancy, so swapping is always feasible;
* **symmetry**: sibling placements with isomorphic subtrees in the
  repartitioning tree (A100: 2@0/2@2 under 3@0, 1@0/1@1, 1@2/1@3, 1@4/1@5)
  can be exchanged together with their subtrees; we require the
  lowest-indexed task in the left subtree to precede that of the right one.
  Canonicalising top-down (parents' swaps first, children's swaps do not change
  a subtree's task set) reaches a schedule meeting every such constraint.

Integer scaling: times are rounded *up* to multiples of ``1 / resolution``
seconds (default 1 ms). The solution is re-timed with the true float
durations by a left shift that keeps every order (per slice, per channel,
session containment), so each start only moves earlier and the schedule stays
feasible; it is then checked by :func:`instances.mig.check`. The optimum of the
rounded model exceeds ``resolution * OPT`` by at most one unit per activity on
a chain (n tasks, at most 2n operations, one rounded release), so the reported
lower bound is ``(model bound - (3n + 1)) / resolution`` with reconfiguration
and ``(model bound - (n + 1)) / resolution`` without, never below the bounds of
:mod:`bounds.mig`. Status OPTIMAL means the rounded model was proven optimal;
the objective is then within that slack of the true optimum and the
``lower_bound`` says exactly how far.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Union

from ortools.sat.python import cp_model

from bounds import mig as mig_bounds
from instances import mig
from instances.errors import InstanceError
from instances.gpus import GPUSpec, Placement
from instances.mig_problem import Problem, Workload
from milp.result import Result, Status

__all__ = ["solve_cpsat", "RESOLUTION", "symmetric_siblings", "session_slots"]

#: Model time units per second: durations are rounded up to 1 ms.
RESOLUTION = 1000

ProblemLike = Union[Problem, Workload]


def _up(seconds: float, resolution: int) -> int:
    # the tiny offset keeps 0.11 * 1000 = 110.00000000000001 at 110
    return max(0, math.ceil(seconds * resolution - 1e-7))


def symmetric_siblings(gpu: GPUSpec) -> list[tuple[Placement, Placement]]:
    """Pairs (left, right) of sibling placements whose subtrees are isomorphic.

    Examples
    --------
    >>> from instances import gpus
    >>> [(a.name, b.name) for a, b in symmetric_siblings(gpus.get("A100"))]
    [('2@0', '2@2'), ('1@4', '1@5'), ('1@0', '1@1'), ('1@2', '1@3')]
    """
    sig: dict[tuple[int, int], Any] = {}

    def signature(p: Placement) -> Any:
        if p.key() not in sig:
            sig[p.key()] = (p.size, len(p.slices), tuple(sorted(signature(c) for c in gpu.children(p))))
        return sig[p.key()]

    pairs = []
    for p in gpu.placements:
        kids = gpu.children(p)
        for a, b in zip(kids, kids[1:]):
            if signature(a) == signature(b):
                pairs.append((a, b))
    return pairs


def _subtree(gpu: GPUSpec, p: Placement) -> list[Placement]:
    out = [p]
    for c in gpu.children(p):
        out.extend(_subtree(gpu, c))
    return out


def session_slots(problem: ProblemLike, placement: Placement, ub_scaled: int | None = None,
                  resolution: int = RESOLUTION) -> int:
    """The exact session-slot bound K_p of the reconfiguration model (module docstring).

    With ``ub_scaled`` (an upper bound on the rounded optimum, in model units)
    also: m sessions of p need m creates, m - 1 destroys and at least m tasks
    on p's slices one after another, so m is at most the largest count whose
    shortest tasks and operations fit below the bound.
    """
    gpu = problem.gpu
    durations = sorted(_up(t.times[placement.size], resolution) for t in problem.tasks
                       if placement.size in t.times)
    n_p = len(durations)
    # the phase argument shifts phases earlier, which is only safe when no
    # task waits for a release
    no_release = all(r == 0 for r in problem.releases().values())
    if placement == gpu.root and no_release:
        return min(1, n_p)
    if ub_scaled is None:
        return n_p
    tc = _up(gpu.create_time[placement.size], resolution)
    td = _up(gpu.destroy_time[placement.size], resolution)
    m, total = 0, 0
    for d in durations:
        total += d + tc + (td if m else 0)
        if total > ub_scaled:
            break
        m += 1
    return max(m, 1) if n_p else 0


def key_slices(gpu: GPUSpec, key: tuple[int, int]) -> frozenset:
    return gpu.placement(*key).slices


def _symmetry(m: cp_model.CpModel, gpu: GPUSpec, x: dict, n: int) -> None:
    """The lowest task index in a left sibling subtree precedes the right one's (module docstring)."""
    for a, b in symmetric_siblings(gpu):
        left = [q.key() for q in _subtree(gpu, a)]
        right = [q.key() for q in _subtree(gpu, b)]
        for i in range(n):
            for kb in right:
                if (i, kb) not in x:
                    continue
                earlier = [x[j, ka] for j in range(i) for ka in left if (j, ka) in x]
                m.AddBoolOr([x[i, kb].Not(), *earlier])


def _tree_schedule(problem: ProblemLike, assignment: dict[str, Placement]) -> mig.Schedule:
    """Optimal schedule of a fixed assignment without reconfiguration or release times.

    The placements form a laminar tree (Fig. 4), so: run each node's tasks one
    after another as soon as all its ancestors' tasks are done. Every node's
    tasks conflict with all its ancestors' and descendants' tasks, so on any
    slice k the tasks covering k run back to back along the root-to-leaf path
    and the makespan is the largest slice load, a lower bound for every
    schedule of the assignment. Hence min makespan = min over assignments of
    the largest slice load (the *laminar* model).
    """
    gpu = problem.gpu
    r0 = max(problem.releases().values(), default=0.0)
    on: dict[tuple[int, int], list] = defaultdict(list)
    for t in problem.tasks:
        on[assignment[t.name].key()].append(t)
    load = {key: sum(t.times[key[0]] for t in ts) for key, ts in on.items()}
    out = []
    for p in gpu.placements:
        clock = r0 + sum(load.get(a.key(), 0.0) for a in gpu.ancestors(p))
        for t in on.get(p.key(), []):
            out.append(mig.ScheduledTask(t.name, p, clock, clock + t.times[p.size]))
            clock += t.times[p.size]
    return mig.Schedule(gpu.name, sorted(out, key=lambda st: (st.start, st.task)))


@dataclass
class _Model:
    model: cp_model.CpModel
    makespan: Any
    start: dict
    x: dict  # (i, placement key) -> BoolVar
    slots: dict  # placement key -> list of slot dicts
    dur: dict  # (i, key) -> scaled duration
    horizon: int


def _build(problem: ProblemLike, reconf: bool, R: int, symmetry: bool, lb_scaled: int,
           ub_scaled: int | None, redundant: bool = True, laminar: bool = False, dominance: bool = True) -> _Model:
    gpu = problem.gpu
    tasks = problem.tasks
    rel = problem.releases()
    m = cp_model.CpModel()
    S = gpu.num_slices
    tc = {s: _up(gpu.create_time[s], R) for s in gpu.sizes}
    td = {s: _up(gpu.destroy_time[s], R) for s in gpu.sizes}

    # allowed placements per task (with the no-reconfiguration dominance)
    allowed: list[list[Placement]] = []
    for t in tasks:
        ps = [p for p in gpu.placements if p.size in t.times]
        if not reconf and dominance:
            best: dict[frozenset, Placement] = {}
            for p in ps:
                q = best.get(p.slices)
                if q is None or (t.times[p.size], -p.size) < (t.times[q.size], -q.size):
                    best[p.slices] = p
            ps = [p for p in ps if best[p.slices] == p]
        allowed.append(ps)

    # horizon: every task alone on its fastest placement, one after another
    horizon = max((_up(r, R) for r in rel.values()), default=0)
    for t in tasks:
        s = max(t.sizes)
        horizon += _up(t.times[s], R) + (tc[s] + td[s] if reconf else 0)
    if ub_scaled is not None:
        horizon = min(horizon, ub_scaled)
    horizon = max(horizon, lb_scaled)

    makespan = m.NewIntVar(lb_scaled, horizon, "makespan")
    start, x, dur = {}, {}, {}
    if laminar:
        # Without reconfiguration and release times the schedule is implied by
        # the assignment: the optimal makespan of a fixed assignment on a
        # laminar placement tree is the largest slice load (see _tree_schedule).
        r0 = max((_up(r, R) for r in rel.values()), default=0)
        load: dict[int, list] = defaultdict(list)
        for i, t in enumerate(tasks):
            lits = []
            for p in allowed[i]:
                d = _up(t.times[p.size], R)
                lit = m.NewBoolVar(f"x{i}_{p.name}")
                x[i, p.key()], dur[i, p.key()] = lit, d
                for k in p.slices:
                    load[k].append(d * lit)
                lits.append(lit)
            m.AddExactlyOne(lits)
        if reconf:
            # relaxation of the session model (used only for its bound): each
            # used placement has a session, sessions on a slice are disjoint
            # and all but one destroyed, creates are serialised and the last
            # one is followed by a task
            used = {}
            for p in gpu.placements:
                lits = [x[i, p.key()] for i in range(len(tasks)) if (i, p.key()) in x]
                if lits:
                    used[p.key()] = m.NewBoolVar(f"used{p.name}")
                    for lit in lits:
                        m.AddImplication(lit, used[p.key()])
            for k in range(S):
                over = [gpu.placement(*key) for key in used if k in key_slices(gpu, key)]
                ops = [(tc[q.size] + td[q.size]) * used[q.key()] for q in over]
                load[k] += ops
                r0k = r0 - max(td[q.size] for q in over) if over else r0
                m.Add(r0k + sum(load[k]) <= makespan)
            shortest = min(_up(min(t.times.values()), R) for t in tasks)
            m.Add(sum(tc[key[0]] * u for key, u in used.items()) + shortest <= makespan)
        else:
            for k, terms in load.items():
                m.Add(r0 + sum(terms) <= makespan)
        _symmetry(m, gpu, x, len(tasks)) if symmetry else None
        m.Minimize(makespan)
        return _Model(m, makespan, start, x, {}, dur, horizon)
    task_iv: dict[tuple[int, int], list] = defaultdict(list)  # placement key -> intervals
    slice_iv: dict[int, list] = defaultdict(list)
    cum_iv, cum_dem = [], []
    for i, t in enumerate(tasks):
        r = _up(rel[t.name], R)
        start[i] = m.NewIntVar(r, horizon, f"s{i}")
        lits = []
        for p in allowed[i]:
            d = _up(t.times[p.size], R)
            lit = m.NewBoolVar(f"x{i}_{p.name}")
            iv = m.NewOptionalFixedSizeIntervalVar(start[i], d, lit, f"iv{i}_{p.name}")
            x[i, p.key()], dur[i, p.key()] = lit, d
            m.Add(start[i] + d <= makespan).OnlyEnforceIf(lit)
            task_iv[p.key()].append(iv)
            if not reconf or redundant:
                for k in p.slices:
                    slice_iv[k].append(iv)
            cum_iv.append(iv)
            cum_dem.append(len(p.slices))
            lits.append(lit)
        m.AddExactlyOne(lits)
        # a task ends after its start plus its shortest allowed time
        m.Add(makespan >= start[i] + min(dur[i, p.key()] for p in allowed[i]))
    for k, ivs in slice_iv.items():
        m.AddNoOverlap(ivs)
    if redundant:
        m.AddCumulative(cum_iv, cum_dem, S)
        # area cuts per node of the tree: the tasks inside the node's slices Q
        # (and those covering all of Q) fit in |Q| * makespan; these linear
        # rows give the LP relaxation the per-subtree area reasoning
        for q in {p.slices for p in gpu.placements}:
            terms = []
            for (i, key), lit in x.items():
                p = gpu.placement(*key)
                width = len(p.slices & q)
                if width:
                    terms.append(width * dur[i, key] * lit)
            if terms:
                m.Add(sum(terms) <= len(q) * makespan)

    if symmetry:
        _symmetry(m, gpu, x, len(tasks))

    slots: dict[tuple[int, int], list] = {}
    if reconf:
        ops, occ_by_slice, occ_all, occ_dem = [], defaultdict(list), [], []
        for p in gpu.placements:
            on_p = [x[i, p.key()] for i in range(len(tasks)) if (i, p.key()) in x]
            K = min(session_slots(problem, p, ub_scaled, R), len(on_p))
            if K == 0:
                continue
            c_t, d_t = tc[p.size], td[p.size]
            plist = []
            for k in range(K):
                b = m.NewBoolVar(f"b{p.name}_{k}")
                e = m.NewBoolVar(f"e{p.name}_{k}")
                m.AddImplication(e, b)
                c = m.NewIntVar(0, horizon, f"c{p.name}_{k}")
                d = m.NewIntVar(0, horizon, f"d{p.name}_{k}")
                u = m.NewIntVar(0, horizon, f"u{p.name}_{k}")  # window start
                v = m.NewIntVar(0, horizon, f"v{p.name}_{k}")  # window end (= destroy start)
                oe = m.NewIntVar(0, horizon, f"oe{p.name}_{k}")  # occupancy end
                m.Add(u == c + c_t).OnlyEnforceIf(b)
                m.Add(u == horizon).OnlyEnforceIf(b.Not())
                m.Add(c == 0).OnlyEnforceIf(b.Not())
                m.Add(v == d).OnlyEnforceIf(e)
                m.Add(v == horizon).OnlyEnforceIf(e.Not())
                m.Add(d == 0).OnlyEnforceIf(e.Not())
                m.Add(d >= u).OnlyEnforceIf(e)
                # a destroy ending after the makespan precedes no session: drop it (WLOG)
                m.Add(d + d_t <= makespan).OnlyEnforceIf(e)
                m.Add(oe == d + d_t).OnlyEnforceIf(e)
                m.Add(oe == horizon).OnlyEnforceIf(e.Not())
                ops.append(m.NewOptionalFixedSizeIntervalVar(c, c_t, b, f"create{p.name}_{k}"))
                ops.append(m.NewOptionalFixedSizeIntervalVar(d, d_t, e, f"destroy{p.name}_{k}"))
                occ = m.NewOptionalIntervalVar(c, m.NewIntVar(0, horizon, ""), oe, b, f"occ{p.name}_{k}")
                for s in p.slices:
                    occ_by_slice[s].append(occ)
                occ_all.append(occ)
                occ_dem.append(len(p.slices))
                plist.append({"b": b, "e": e, "c": c, "d": d, "u": u, "v": v})
            for k in range(1, K):
                prev, cur = plist[k - 1], plist[k]
                m.AddImplication(cur["b"], prev["e"])  # a later session needs the earlier one destroyed
                m.Add(cur["c"] >= prev["d"] + d_t).OnlyEnforceIf(cur["b"])
            m.Add(sum(s["b"] for s in plist) <= sum(on_p))
            for lit in on_p:  # a task on p needs a session of p (LP link)
                m.AddImplication(lit, plist[0]["b"])
            # gaps between windows: tasks on p must avoid them
            gaps = []
            prev_end = 0
            for k, s in enumerate(plist):
                gaps.append(m.NewIntervalVar(prev_end, m.NewIntVar(0, horizon, ""), s["u"], f"gap{p.name}_{k}"))
                prev_end = s["v"]
            gaps.append(m.NewIntervalVar(prev_end, m.NewIntVar(0, horizon, ""), horizon, f"gap{p.name}_end"))
            m.AddNoOverlap(task_iv[p.key()] + gaps)
            slots[p.key()] = plist
        for s, ivs in occ_by_slice.items():
            m.AddNoOverlap(ivs)
        m.AddNoOverlap(ops)
        if redundant:
            # linear cuts for the LP: sessions on one slice are disjoint and lie
            # in [0, makespan] with their operations and tasks; at most one of
            # them is never destroyed; all operations share one channel
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
                m.Add(sum(session_terms[k]) + sum(load) <= makespan)
                m.Add(sum(alive[k]) <= 1)
            m.Add(sum(channel) <= makespan)
        if redundant:
            m.AddCumulative(occ_all, occ_dem, S)
        # placements without any slot cannot host tasks
        for (i, key), lit in x.items():
            if key not in slots:
                m.Add(lit == 0)

    m.Minimize(makespan)
    return _Model(m, makespan, start, x, slots, dur, horizon)


def _add_hint(built: _Model, problem: ProblemLike, hint: mig.Schedule, R: int, reconf: bool) -> None:
    m = built.model
    index = {t.name: i for i, t in enumerate(problem.tasks)}
    for st in hint.tasks:
        i = index.get(st.task)
        if i is None:
            continue
        key = st.placement.key()
        for (j, k2), lit in built.x.items():
            if j == i:
                m.AddHint(lit, k2 == key)
        if i in built.start:
            m.AddHint(built.start[i], min(_up(st.start, R), built.horizon))
    if not reconf:
        return
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
                m.AddHint(slot["b"], True)
                m.AddHint(slot["c"], min(_up(cr.start, R), built.horizon))
                m.AddHint(slot["e"], de is not None)
                if de is not None:
                    m.AddHint(slot["d"], min(_up(de.start, R), built.horizon))
            else:
                m.AddHint(slot["b"], False)
                m.AddHint(slot["e"], False)


def _retime(problem: ProblemLike, runs: list, sessions: list, reconf: bool) -> mig.Schedule:
    """Left-shift with the true durations, keeping every order of the rounded solution.

    ``runs``: (task name, placement, scaled start, scaled end, session id or None);
    ``sessions``: (placement, scaled create start, scaled destroy start or None).
    """
    gpu = problem.gpu
    rel = problem.releases()
    times = {t.name: t.times for t in problem.tasks}
    # activities: ("t", idx) tasks, ("c", sid) creates, ("d", sid) destroys
    acts: dict[tuple[str, int], tuple[int, int]] = {}
    dur: dict[tuple[str, int], float] = {}
    preds: dict[tuple[str, int], list] = defaultdict(list)
    for idx, (name, p, s, e, sid) in enumerate(runs):
        acts["t", idx] = (s, e)
        dur["t", idx] = times[name][p.size]
    for sid, (p, c, d, c_end, d_end) in enumerate(sessions):
        acts["c", sid] = (c, c_end)
        dur["c", sid] = gpu.create_time[p.size]
        if d is not None:
            acts["d", sid] = (d, d_end)
            dur["d", sid] = gpu.destroy_time[p.size]
    # tasks sharing a slice keep their order
    for k in range(gpu.num_slices):
        on = sorted((acts["t", i], i) for i, r in enumerate(runs) if k in r[1].slices)
        for (_, a), (_, b) in zip(on, on[1:]):
            preds["t", b].append(("t", a))
    if reconf:
        chan = sorted((v, a) for a, v in acts.items() if a[0] in "cd")
        for (_, a), (_, b) in zip(chan, chan[1:]):
            preds[b].append(a)
        for idx, r in enumerate(runs):
            sid = r[4]
            preds["t", idx].append(("c", sid))
            if ("d", sid) in acts:
                preds["d", sid].append(("t", idx))
        for k in range(gpu.num_slices):
            on = sorted((sessions[sid][1], sid) for sid in range(len(sessions)) if k in sessions[sid][0].slices)
            for (_, a), (_, b) in zip(on, on[1:]):
                preds["c", b].append(("d", a))
    new_start: dict = {}
    for a in sorted(acts, key=lambda a: (acts[a], a[0] != "d", a[0] != "c")):
        lo = rel[runs[a[1]][0]] if a[0] == "t" else 0.0
        for q in preds[a]:
            lo = max(lo, new_start[q] + dur[q])
        new_start[a] = lo
    tasks = [mig.ScheduledTask(name, p, new_start["t", i], new_start["t", i] + dur["t", i])
             for i, (name, p, *_rest) in enumerate(runs)]
    ops = []
    for sid, (p, *_rest) in enumerate(sessions):
        ops.append(mig.Reconfiguration("create", p, new_start["c", sid], new_start["c", sid] + dur["c", sid]))
        if ("d", sid) in acts:
            ops.append(mig.Reconfiguration("destroy", p, new_start["d", sid], new_start["d", sid] + dur["d", sid]))
    ops.sort(key=lambda o: o.start)
    return mig.Schedule(gpu.name, sorted(tasks, key=lambda t: (t.start, t.task)), ops if reconf else ())


def _extract(built: _Model, solver: cp_model.CpSolver, problem: ProblemLike, reconf: bool, R: int) -> mig.Schedule:
    gpu = problem.gpu
    if not built.start:  # laminar model: the assignment implies the schedule
        chosen = {problem.tasks[i].name: gpu.placement(*key) for (i, key), lit in built.x.items()
                  if solver.BooleanValue(lit)}
        return _tree_schedule(problem, chosen)
    runs = []
    for (i, key), lit in built.x.items():
        if solver.BooleanValue(lit):
            s = solver.Value(built.start[i])
            runs.append([problem.tasks[i].name, gpu.placement(*key), s, s + built.dur[i, key], None])
    sessions = []
    if reconf:
        for key, plist in built.slots.items():
            p = gpu.placement(*key)
            for slot in plist:
                if not solver.BooleanValue(slot["b"]):
                    continue
                u, v = solver.Value(slot["u"]), solver.Value(slot["v"])
                members = [r for r in runs if r[1].key() == key and u <= r[2] and r[3] <= v]
                if not members:
                    continue  # an empty session only costs time: drop it
                c = solver.Value(slot["c"])
                destroyed = solver.BooleanValue(slot["e"])
                d = solver.Value(slot["d"]) if destroyed else None
                sid = len(sessions)
                for r in members:
                    r[4] = sid
                sessions.append((p, c, d, u, None if d is None else d + _up(gpu.destroy_time[p.size], R)))
    return _retime(problem, [tuple(r) for r in runs], sessions, reconf)


def _default_hint(problem: ProblemLike) -> tuple[mig.Schedule | None, str]:
    """FAR's schedule when heuristics.far exists (imported lazily), else none."""
    try:
        from heuristics import far  # noqa: PLC0415 - optional, may land later
    except ImportError:
        return None, "none (heuristics.far not available)"
    try:
        return far.schedule(problem), "far"
    except Exception as exc:  # a hint is optional: never let it break the exact solve
        return None, f"none (far failed: {type(exc).__name__}: {exc})"


def solve_cpsat(problem: ProblemLike, reconfiguration: bool = True, time_limit: float | None = None,
                workers: int | None = None, hint: mig.Schedule | None | bool = None,
                lower_bound: float | None = None, *, resolution: int = RESOLUTION, symmetry: bool = True,
                redundant: bool = True, model: str = "auto", relax: bool = True, relax_time: float = 20.0,
                fix_assignment: bool = False, dominance: bool = True, log: bool = False) -> Result:
    """Solve a MIG problem or multi-batch workload exactly with CP-SAT.

    Parameters
    ----------
    problem
        :class:`instances.mig.Problem` or :class:`instances.mig.Workload`
        (no task starts before its batch's release).
    reconfiguration
        Model instance sessions and create/destroy operations (rules 1-6).
        ``False`` (or a GPU with zero reconfiguration times) solves the
        problem without them: slice-sharing tasks never overlap.
    time_limit
        Seconds; ``None`` for no limit.
    workers
        CP-SAT search workers (default 2).
    hint
        A :class:`instances.mig.Schedule` used as a solution hint. ``None``:
        FAR's schedule if :mod:`heuristics.far` is available; ``False``: none.
    lower_bound
        A proven lower bound (seconds) to add to the model.
    resolution
        Model time units per second (durations rounded up; module docstring).
    symmetry, redundant, dominance
        Switch the symmetry breaking, the redundant constraints and cuts, or
        the dominance of placements off (for experiments; results stay exact
        either way).
    model
        ``"auto"``: the laminar assignment model when there is neither
        reconfiguration nor a release time difference, else the interval
        model; ``"intervals"`` forces the interval model (the naive-style
        baseline of the benchmark), ``"laminar"`` insists on the former.
    relax, relax_time
        With reconfiguration, first solve the assignment relaxation (per-slice
        loads plus one create and destroy per used placement, serialised
        creates) for at most ``relax_time`` s and start from its bound.
    fix_assignment
        Fix every task to its placement in ``hint`` (the model then proves the
        best schedule of that assignment; used to show FAR's schedules are
        feasible for the exact model). Switches the symmetry and dominance
        reductions off, since they may exclude the given placements.

    Returns
    -------
    Result
        ``objective`` = makespan (seconds) of the returned, re-timed and
        checked schedule; ``lower_bound`` valid for the true float problem.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(n=5, gpu="A30", seed=2)
    >>> res = solve_cpsat(p, reconfiguration=False, time_limit=20, hint=False)
    >>> str(res.status), res.lower_bound <= res.objective
    ('OPTIMAL', True)
    """
    t_begin = time.perf_counter()
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a MIG Problem or Workload, got {type(problem).__name__}", field="problem")
    if not isinstance(resolution, int) or resolution < 1:
        raise InstanceError(f"resolution must be a positive integer, got {resolution!r}", field="resolution")
    gpu = problem.gpu
    reconf = bool(reconfiguration) and gpu.reconfigurable
    target = problem if reconf else problem.without_reconfiguration()
    R = resolution
    n = problem.n
    slack = (3 * n + 1) if reconf else (n + 1)
    bound_lb = mig_bounds.lower_bound(target, reconfiguration=reconf)
    lb_true = max(bound_lb, lower_bound or 0.0)
    lb_scaled = max(0, math.floor(lb_true * R * (1 - 1e-12)))
    info: dict[str, Any] = {"resolution": resolution, "reconfiguration": reconf, "bounds_lower_bound": bound_lb}
    if n == 0:
        return Result(0.0, 0.0, Status.OPTIMAL, time.perf_counter() - t_begin, mig.Schedule(gpu.name, []),
                      "cpsat", info)

    if model not in ("auto", "laminar", "intervals"):
        raise InstanceError(f"model must be 'auto', 'laminar' or 'intervals', got {model!r}", field="model")
    laminar = (not reconf and len(set(target.releases().values())) <= 1
               and (model == "auto" or model == "laminar"))
    if model == "laminar" and not laminar:
        raise InstanceError("the laminar model needs reconfiguration=False and one release time", field="model")
    info["model"] = "laminar" if laminar else ("sessions" if reconf else "intervals")
    if reconf and relax and len(set(target.releases().values())) <= 1 and max(target.releases().values()) == 0:
        # a fast assignment relaxation lifts the session model's starting bound
        rb = _build(target, True, R, symmetry, lb_scaled, None, redundant, laminar=True)
        rs = cp_model.CpSolver()
        rs.parameters.num_workers = int(workers) if workers else 2
        rs.parameters.max_time_in_seconds = relax_time if time_limit is None else min(relax_time, time_limit / 3)
        rstatus = rs.Solve(rb.model)
        if rstatus in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            lb_scaled = max(lb_scaled, int(rs.BestObjectiveBound()))
        info["relaxation"] = {"status": rs.StatusName(rstatus), "bound": rs.BestObjectiveBound() / R,
                              "wall_time": rs.WallTime()}
    if fix_assignment:  # the reductions pick canonical placements, which a fixed assignment may not use
        symmetry = False
    if hint is None:
        hint, info["hint"] = _default_hint(target)
    elif hint is False:
        hint, info["hint"] = None, "none"
    else:
        info["hint"] = "given"
    ub_scaled = None
    if hint is not None and not mig.check(target, hint, reconfiguration=reconf):
        # a feasible hint, rounded up activity by activity along its chains,
        # is a solution of the rounded model: an upper bound for its optimum
        ub_scaled = math.ceil(hint.makespan * R) + slack
        info["hint_makespan"] = hint.makespan
    built = _build(target, reconf, R, symmetry, lb_scaled, ub_scaled, redundant, laminar,
                   dominance=dominance and not fix_assignment)
    if hint is not None:
        _add_hint(built, target, hint, R, reconf)
    if fix_assignment:
        if hint is None:
            raise InstanceError("fix_assignment needs a hint schedule", field="hint")
        placed = {st.task: st.placement.key() for st in hint.tasks}
        for (i, key), lit in built.x.items():
            if target.tasks[i].name in placed:
                built.model.Add(lit == int(placed[target.tasks[i].name] == key))
        info["fixed_assignment"] = True

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers) if workers else 2
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.1, float(time_limit) - (time.perf_counter() - t_begin))
    solver.parameters.log_search_progress = bool(log)
    status = solver.Solve(built.model)
    runtime = time.perf_counter() - t_begin
    info.update(model_objective=None, model_bound=solver.BestObjectiveBound(), wall_time=solver.WallTime(),
                branches=solver.NumBranches(), conflicts=solver.NumConflicts(), solver_status=solver.StatusName(status))

    if status == cp_model.INFEASIBLE:
        # cannot happen for a valid problem (a serial schedule always fits the horizon)
        return Result(None, None, Status.INFEASIBLE, runtime, None, "cpsat", info)
    model_lb = solver.BestObjectiveBound() if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else lb_scaled
    lb = max(lb_true, (model_lb - slack) / R)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Result(None, lb_true, Status.UNKNOWN, runtime, None, "cpsat", info)
    info["model_objective"] = solver.ObjectiveValue()
    schedule = _extract(built, solver, target, reconf, R)
    violations = mig.check(target, schedule, reconfiguration=reconf)
    if violations:
        raise RuntimeError("CP-SAT schedule failed the checker (a model bug): " + "; ".join(violations[:5]))
    objective = schedule.makespan
    lb = min(lb, objective)
    st = Status.OPTIMAL if status == cp_model.OPTIMAL else Status.FEASIBLE
    return Result(objective, lb, st, time.perf_counter() - t_begin, schedule, "cpsat", info)
