"""Plans of a MIG problem from list scheduling and from a fixed assignment, with their local searches.

Heuristic schedules that the exact backends of :mod:`milp.mig` start from
(horizon, first incumbent, warm starts), usable on their own:

* :func:`greedy_order` -- append-only list schedules (LPT, largest work, FIFO);
  :func:`serial_on_root` -- every task on the whole GPU, one after another;
  :func:`best_plan` -- the shortest of these (and of re-timed hints), its
  operation order improved by :func:`improve_channel`;
* for a fixed assignment of tasks to placements: :func:`tree_schedule` (its
  optimum without reconfiguration) and :func:`tree_plans` (session schedules
  built along the placement tree); :func:`improve_assignment` moves and swaps
  tasks to lower the assignment's relaxed makespan first.

Each plan is re-timed by the shared routine of :mod:`instances.mig_retime`
into an exact schedule that passes :func:`instances.mig.check`; whether
reconfiguration applies is read from the problem (a GPU with zero
create/destroy times has none).

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> best_plan(p.without_reconfiguration()).makespan
2.5
>>> round(best_plan(p).makespan, 2)
2.74
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from collections import defaultdict
from typing import Sequence, Union

from instances import mig
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances.options import Deadline, known_options
from instances.mig_retime import (Session, TimedPlan, plan_from_runs, plan_from_schedule, retime_order,
                                  retime_sessions)
from instances.mig_schedule import Schedule, ScheduledTask

__all__ = ["greedy_order", "serial_on_root", "improve_channel", "best_plan", "tree_schedule", "improve_assignment",
           "tree_plans", "MAX_ORIENTED_BITS"]

AnyProblem = Union[Problem, Workload]
ProblemLike = AnyProblem


@known_options
def greedy_order(problem: AnyProblem, key: str = "lpt", cap: int | None = None) -> TimedPlan:
    """Append-only list schedule: tasks in ``key`` order, each on the placement where it ends first.

    ``key`` is ``"lpt"`` (longest time on the whole GPU first), ``"work"``
    (largest minimum area first) or ``"fifo"`` (input order); ``cap`` limits
    the sizes to those <= cap (a task whose sizes are all larger keeps its
    smallest). With reconfiguration every create time is charged to the task
    that needs it and the result is re-timed as sessions.
    """
    gpu = problem.gpu
    reconfiguration = gpu.reconfigurable
    releases = problem.releases()
    tasks = list(problem.tasks)
    if key == "lpt":
        tasks = sorted(tasks, key=lambda t: (releases[t.name], -t.times[max(t.sizes)]))
    elif key == "work":
        tasks = sorted(tasks, key=lambda t: (releases[t.name], -min(t.work(s) for s in t.sizes)))
    elif key != "fifo":
        raise ValueError(f"unknown greedy key {key!r}")
    free: dict[int, float] = {}
    last_on: dict[int, tuple[int, int] | None] = {}
    runs = []
    for t in tasks:
        best = None
        limit = max(cap if cap is not None else max(t.sizes), min(t.sizes))
        for p in gpu.placements:
            if p.size not in t.times or p.size > limit:
                continue
            start = max([releases[t.name]] + [free.get(k, 0.0) for k in p.slices])
            if reconfiguration and any(last_on.get(k) != p.key() for k in p.slices):
                start += gpu.create_time[p.size] + max(gpu.destroy_time.values())
            end = start + t.times[p.size]
            cand = (end, len(p.slices) * t.times[p.size], p.size, p.start)
            if best is None or cand < best[0]:
                best = (cand, p, start, end)
        _, p, start, end = best
        for k in p.slices:
            free[k] = end
            last_on[k] = p.key()
        runs.append(ScheduledTask(t.name, p, start, end))
    return plan_from_runs(problem, runs)


@known_options
def serial_on_root(problem: AnyProblem) -> TimedPlan:
    """Every task on the whole GPU, one after another in release order (a valid horizon)."""
    root = problem.gpu.root
    releases = problem.releases()
    names = sorted((t.name for t in problem.tasks), key=lambda n: releases[n])
    if not problem.gpu.reconfigurable:
        return retime_order(problem, [(n, root) for n in names])
    return retime_sessions(problem, [Session(root, tuple(names))], [0.0], [0.0])


@known_options
def improve_channel(problem: AnyProblem, plan: TimedPlan, passes: int = 4,
                    deadline: Deadline | None = None) -> TimedPlan:
    """Hill-climb on the channel order: swap adjacent operations while the makespan drops.

    Sessions and task orders stay; swapping two creates renumbers the
    sessions (and so which of two intersecting sessions comes first), and
    orders that contradict the plan are skipped. Stops early when
    ``deadline`` expires.
    """
    if not plan.sessions:
        return plan
    m = len(plan.sessions)
    needed = {j for op, j, _ in plan.ops if op == "destroy"}
    chan = [(op, j) for op, j, _ in plan.ops]
    # sessions not destroyed keep a slot at the end: a swap may make their destroy needed
    chan += [("destroy", j) for j in range(m) if j not in needed]
    best = plan
    for _ in range(passes):
        improved = False
        for k in range(len(chan) - 1):
            if deadline is not None and deadline.expired():
                return best
            cand = chan[:k] + [chan[k + 1], chan[k]] + chan[k + 2:]
            pos = {o: i for i, o in enumerate(cand)}
            try:
                trial = retime_sessions(problem, plan.sessions, [pos[("create", j)] for j in range(m)],
                                        [pos[("destroy", j)] for j in range(m)])
            except ValueError:
                continue
            if trial.makespan < best.makespan * (1 - 1e-12):
                best, chan, improved = trial, cand, True
        if not improved:
            break
    return best


@known_options
def best_plan(problem: AnyProblem, hints: Sequence[Schedule] = (), deadline: Deadline | None = None) -> TimedPlan:
    """The shortest of the greedy plans, the serial plan and the re-timed hints.

    Its makespan is a valid upper bound on the optimum (the MILP's horizon).
    The channel local search stops early when ``deadline`` expires.
    """
    reconfiguration = problem.gpu.reconfigurable
    caps = problem.gpu.sizes
    plans = [greedy_order(problem, key, cap) for key in ("lpt", "work", "fifo") for cap in caps]
    plans.append(serial_on_root(problem))
    if reconfiguration:
        # the same list schedules as if reconfiguration were free, then sessionized
        free = problem.without_reconfiguration()
        plans += [plan_from_runs(problem, greedy_order(free, key, cap).schedule.tasks)
                  for key in ("lpt", "work") for cap in caps]
    plans += [plan_from_schedule(problem, h) for h in hints]
    best = min(plans, key=lambda pl: pl.makespan)
    if reconfiguration:
        best = min((improve_channel(problem, pl, deadline=deadline)
                    for pl in sorted(plans, key=lambda pl: pl.makespan)[:3]),
                   key=lambda pl: pl.makespan)
    return best


@known_options
def tree_schedule(problem: ProblemLike, assignment: dict[str, Placement]) -> mig.Schedule:
    """Optimal schedule of a fixed assignment without reconfiguration, one release time.

    Each node of the placement tree runs its tasks back to back as soon as all
    its ancestors' tasks are done; the makespan is the largest slice load, a
    lower bound for every schedule of the assignment.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> g = p.gpu
    >>> tree_schedule(p.without_reconfiguration(), {"a": g.placement(2, 0), "b": g.placement(2, 2)}).makespan
    2.5
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


@known_options
def improve_assignment(problem: Problem, assignment: dict[str, Placement],
                       deadline: Deadline | None = None, max_passes: int = 20) -> dict[str, Placement]:
    """Local search on an assignment: move one task or swap two while the relaxed makespan drops.

    The relaxed makespan of an assignment is its largest slice load counting
    the tasks and the create and destroy of every used placement over the
    slice, less the largest such destroy (the assignment relaxation's rows
    without the channel); ties are broken by the sum of squared slice loads,
    which spreads work off the critical slices. First improvement, until no
    move or swap helps, after ``max_passes`` passes or when ``deadline`` expires. A heuristic: the schedule built
    from the result is checked like any other.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task(f"t{i}", {1: 4.0, 2: 2.5, 4: 1.5}) for i in range(4)])
    >>> leaf = p.gpu.placement(1, 0)
    >>> better = improve_assignment(p, {t.name: leaf for t in p.tasks})
    >>> len({q.key() for q in better.values()}) > 1
    True
    """
    gpu = problem.gpu
    names = [t.name for t in problem.tasks]
    times = {t.name: t.times for t in problem.tasks}
    places = list(gpu.placements)
    pidx = {q.key(): j for j, q in enumerate(places)}
    over = [[j for j, q in enumerate(places) if k in q.slices] for k in range(gpu.num_slices)]
    ops = [gpu.create_time[q.size] + gpu.destroy_time[q.size] for q in places]
    tdj = [gpu.destroy_time[q.size] for q in places]
    allowed = {nm: [j for j, q in enumerate(places) if q.size in times[nm]] for nm in names}
    cur = {nm: pidx[assignment[nm].key()] for nm in names}
    cnt = [0] * len(places)
    load = [0.0] * len(places)
    for nm, j in cur.items():
        cnt[j] += 1
        load[j] += times[nm][places[j].size]

    def score():
        worst, sq = 0.0, 0.0
        for js in over:
            used = [j for j in js if cnt[j]]
            value = sum(load[j] + ops[j] for j in used) - max((tdj[j] for j in used), default=0.0)
            worst = max(worst, value)
            sq += value * value
        return worst, sq

    def move(nm, j):
        old = cur[nm]
        cnt[old] -= 1
        load[old] -= times[nm][places[old].size]
        cnt[j] += 1
        load[j] += times[nm][places[j].size]
        cur[nm] = j

    best = score()
    improved, passes = True, 0
    while improved and passes < max_passes:
        improved, passes = False, passes + 1
        for a, nm in enumerate(names):
            if deadline is not None and deadline.expired():
                break
            for j in allowed[nm]:
                old = cur[nm]
                if j == old:
                    continue
                move(nm, j)
                sc = score()
                if sc < best:
                    best, improved = sc, True
                    old = j
                else:
                    move(nm, old)
            for other in names[a + 1:]:
                i, j = cur[nm], cur[other]
                if i == j or i not in allowed[other] or j not in allowed[nm]:
                    continue
                move(nm, j)
                move(other, i)
                sc = score()
                if sc < best:
                    best, improved = sc, True
                else:
                    move(other, j)
                    move(nm, i)
    return {nm: places[j] for nm, j in cur.items()}


@known_options
def tree_plans(problem: ProblemLike, assignment: dict[str, Placement],
               deadline: Deadline | None = None, keep: int = 1, mixed: bool = True) -> mig.Schedule:
    """The best session schedule of a fixed assignment built along the placement tree.

    One session per used placement. Every node of the tree with used
    placements below it runs its own session either before its subtrees
    (top-down, ancestors first as :func:`tree_schedule`) or after them
    (bottom-up, so the widest session is the one never destroyed), chosen
    node by node: all combinations are re-timed with the operations on the
    channel (up to ``2 ** MAX_ORIENTED_BITS`` of them, nodes nearest the root
    first; deeper nodes follow their parent beyond that). The two pure
    orders, and the ``keep`` shortest mixed ones that are already shorter
    than both, have their channel order improved by swapping neighbours
    (:func:`improve_channel`); ``mixed=False`` builds the two pure orders
    only. Mixing pays where one subtree ends with a wide session and another
    with narrow ones (the 4-slice session of an A100 last on its half, its
    sibling half top-down). Single batch, one release.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> g = p.gpu
    >>> s = tree_plans(p, {"a": g.placement(2, 0), "b": g.placement(2, 2)})
    >>> mig.check(p, s), round(s.makespan, 2)
    ([], 2.74)
    """
    gpu = problem.gpu
    on: dict[tuple[int, int], list[str]] = defaultdict(list)
    for t in problem.tasks:
        on[assignment[t.name].key()].append(t.name)
    # exact sums: a parent's end and its child's start must tie exactly (ties put destroys first)
    work = {key: sum((Fraction(problem.task(nm).times[key[0]]) for nm in names), Fraction(0))
            for key, names in on.items()}
    length: dict[tuple[int, int], Fraction] = {}

    def measure(p: Placement) -> Fraction:
        below = max((measure(c) for c in gpu.children(p)), default=Fraction(0))
        length[p.key()] = work.get(p.key(), Fraction(0)) + below
        return length[p.key()]

    measure(gpu.root)
    # nodes whose orientation can matter: used placements in two or more places of their subtree
    choices = [p for p in gpu.subtree(gpu.root) if gpu.children(p) and
               sum(1 for q in gpu.subtree(p) if q.key() in work) >= 2]
    # nearest the root first; the root alone gives the two pure orders (every node follows it)
    choices = sorted(choices, key=lambda p: len(gpu.ancestors(p)))[:MAX_ORIENTED_BITS if mixed else 1]
    sessions = [Session(gpu.placement(*key), tuple(names)) for key, names in on.items()]
    index = {key: j for j, key in enumerate(on)}
    pure, mixes = [], []
    for bits in itertools.product((False, True), repeat=len(choices)):
        up = dict(zip((p.key() for p in choices), bits))
        begin, end = [Fraction(0)] * len(sessions), [Fraction(0)] * len(sessions)

        def place(p: Placement, t0: Fraction, inherited: bool) -> None:
            key = p.key()
            bottom_up = up.get(key, inherited)
            own = work.get(key, Fraction(0))
            kids = [c for c in gpu.children(p) if length[c.key()] > 0]
            span = max((length[c.key()] for c in kids), default=Fraction(0))
            first = t0 + span if bottom_up else t0
            if key in index:
                begin[index[key]], end[index[key]] = first, first + own
            for c in kids:
                place(c, t0 + span - length[c.key()] if bottom_up else t0 + own, bottom_up)

        place(gpu.root, Fraction(0), False)
        try:
            plan = retime_sessions(problem, sessions, [float(b) for b in begin], [float(e) for e in end])
        except ValueError:
            continue  # the exact nominal times keep ties, so this is only a safeguard
        (pure if len(set(bits)) <= 1 else mixes).append(plan)
    # the pure orders are always improved; a mixed one only when it already beats them before the
    # channel hill climb (the climb costs as much as all the re-timings together)
    par = min(pl.makespan for pl in pure)
    shortest = sorted((pl for pl in mixes if pl.makespan < par), key=lambda pl: pl.makespan)[:keep]
    plans = [improve_channel(problem, pl, passes=8, deadline=deadline) for pl in pure + shortest]
    return min(plans, key=lambda pl: pl.makespan).schedule


#: At most ``2 ** MAX_ORIENTED_BITS`` orientations are re-timed by :func:`tree_plans`.
MAX_ORIENTED_BITS = 4

