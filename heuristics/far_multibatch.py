"""FAR for several batches: online concatenation with overlap (FAR paper, Sec. 4).

Part of FAR's chain of modules (listed in :mod:`heuristics.far`), after
``far_batch``; :func:`heuristics.far.plan` calls :func:`plan_workload` for a :class:`~instances.mig.Workload`.

Each batch is planned by FAR (phases 1-3) when it is released, as if it had
the GPU to itself; its plan is then appended to what is already scheduled.
A batch plan is a list of *sessions* (an instance of the repartitioning tree
and its tasks in order). Appending times them one by one with the
reconfiguration rules :func:`instances.mig.check` enforces, starting from the
GPU state the previous batches left behind:

* an instance of the previous batch that is still alive on the same placement
  is **reused** (no destroy, no create: "eliminating [reconfigurations] when the
  last instance of B_{k-1} coincides with the first instance of B_k");
* otherwise every live instance sharing a slice is destroyed after its last
  task, then the new instance is created; operations run one at a time
  (:class:`instances.mig_channel.OpChannel`: the first free gap at or after
  the earliest time);
* no task or operation of a batch starts before the batch's release.

Methods (Sec. 4.1-4.3):

``"trivial"``
    A batch starts after the last task of the previous one (Sec. 4.1).
``"reversed"``
    Every other batch (odd index) is reversed in time: sessions in the order
    of their mirrored start (decreasing end in FAR's plan), tasks within a
    session shortest first, so small instances meet small instances across the
    boundary (Sec. 4.2). Each session is then started as early as the rules
    allow; this is at least as early as the rigid "slice by slice" shift of
    the paper, which it generalises (our reading: the rigid mirrored block
    cannot be kept verbatim with reconfiguration, since a mirrored create is a
    destroy of different duration).
``"move_swap"`` (default)
    ``"reversed"``, then moves/swaps of the new batch's critical tasks (those of
    its instances on a slice reaching the combined makespan) to another
    instance of the same size, used by the batch or not, as in Algorithm 2:
    the alternative is judged by the end of its slices, which includes the idle
    time the previous batch left there, so that idle time is what the margin
    ``omega - end(I^a)`` measures (Sec. 4.3). A move/swap is kept only if the
    exact re-timing improves the makespan.

Examples
--------
>>> from instances import mig
>>> w = mig.generate_workload([6, 6], [0.0, 30.0], gpu="A100", seed=1)
>>> r = plan_workload(w)
>>> mig.check(w, r.schedule), r.stats["method"]
([], 'move_swap')
"""

from __future__ import annotations

import bisect
import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

from heuristics import far_batch
from heuristics.far_batch import FarPlan
from heuristics.far_refine import pick_move, pick_swap
from heuristics.far_tree import Tree
from instances import options
from instances.errors import InstanceError, OptionError
from instances.mig_channel import OpChannel
from instances.mig_problem import Problem, Workload, check_scale
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask

__all__ = ["MultiBatchPlan", "plan_workload", "compare_concatenations", "check_concatenation", "CONCATENATIONS"]

#: The concatenation methods of Sec. 4 (the ``method`` option of :func:`plan_workload`).
CONCATENATIONS = ("trivial", "reversed", "move_swap")


@dataclass
class _Session:
    node: int
    tasks: list[tuple[float, str]]  # (duration, name) in execution order


class _State:
    """What the GPU looks like after the batches scheduled so far."""

    def __init__(self, num_slices: int) -> None:
        self.live: dict[int, float] = {}          # node -> its last task's end
        self.slice_free = [0.0] * num_slices      # end of the last destroy freeing each slice
        self.channel = OpChannel()                # the create/destroy operations booked so far
        self.last_end = 0.0                       # last task end so far
        self.slice_busy = [0.0] * num_slices      # last task end on each slice

    def copy(self) -> "_State":
        c = _State(0)
        c.live = dict(self.live)
        c.slice_free = list(self.slice_free)
        c.channel = self.channel.copy()
        c.last_end = self.last_end
        c.slice_busy = list(self.slice_busy)
        return c


@dataclass
class _Timed:
    state: _State
    tasks: list[ScheduledTask]
    ops: list[Reconfiguration]
    session_end: list[float]
    end: float


def _time_batch(tree: Tree, state: _State, sessions: Sequence[_Session], earliest: float,
                reconf: bool) -> _Timed:
    st = state.copy()
    # operations that end before the release can no longer matter
    st.channel.forget_until(earliest)
    pl = tree.placements
    tasks: list[ScheduledTask] = []
    ops: list[Reconfiguration] = []
    ends = []
    batch_end = earliest
    for sess in sessions:
        v = sess.node
        if v in st.live:
            t = max(st.live[v], earliest)
        else:
            ready = max(earliest, max(st.slice_free[s] for s in tree.slices[v]))
            for u in sorted(st.live):
                if pl[u].intersects(pl[v]):
                    if reconf:
                        d = st.channel.place(max(st.live[u], earliest), tree.td[u])
                        ops.append(Reconfiguration("destroy", pl[u], d, d + tree.td[u]))
                        free = d + tree.td[u]
                    else:
                        free = max(st.live[u], earliest)
                    for s in tree.slices[u]:
                        st.slice_free[s] = max(st.slice_free[s], free)
                    ready = max(ready, free)
                    del st.live[u]
            if reconf:
                c = st.channel.place(ready, tree.tc[v])
                ops.append(Reconfiguration("create", pl[v], c, c + tree.tc[v]))
                t = c + tree.tc[v]
            else:
                t = ready
        for dur, name in sess.tasks:
            tasks.append(ScheduledTask(name, pl[v], t, t + dur))
            t += dur
        st.live[v] = t
        for s in tree.slices[v]:
            if t > st.slice_busy[s]:
                st.slice_busy[s] = t
        ends.append(t)
        batch_end = max(batch_end, t)
    st.last_end = max(st.last_end, batch_end)
    return _Timed(st, tasks, ops, ends, batch_end)


def _sessions(far_plan: FarPlan, tree: Tree, reverse: bool) -> list[_Session]:
    """The plan's non-empty tree nodes as sessions, in FAR's order or mirrored."""
    rows = []
    for v, nd in enumerate(_nodes_bfs(far_plan, tree)):
        if nd.tasks:
            rows.append((v, nd))
    if reverse:
        rows.sort(key=lambda r: (-r[1].end, r[0]))
        return [_Session(v, [(e - s, name) for name, s, e in reversed(nd.tasks)]) for v, nd in rows]
    rows.sort(key=lambda r: (r[1].create if r[1].create is not None else r[1].tasks[0][1], r[0]))
    return [_Session(v, [(e - s, name) for name, s, e in nd.tasks]) for v, nd in rows]


def _nodes_bfs(far_plan: FarPlan, tree: Tree) -> list[Any]:
    by_key = {nd.placement.key(): nd for nd in far_plan.tree.nodes}
    return [by_key.get(p.key()) or _EmptyNode() for p in tree.placements]


class _EmptyNode:
    tasks: list = []
    create = None
    end = 0.0


def _improve(tree: Tree, state: _State, sessions: list[_Session], earliest: float, reconf: bool,
             reverse: bool, max_ops: int) -> tuple[list[_Session], _Timed, int, int]:
    """Sec. 4.3: moves/swaps of the new batch's critical tasks, each kept only if it helps.

    Critical sessions are the new batch's instances on a slice that reaches the
    combined makespan ``omega`` (latest first). For each, the other instances of
    the same size (used by the batch or not: an unused one becomes a new session
    at the front or the back of the batch's order) are tried by increasing end
    of their slices, which includes the idle time the previous batch left there;
    with ``m = omega - end(I^a)`` the move and then the swap candidate of
    Algorithm 2 are timed exactly, and the first that lowers the makespan is kept.
    """
    timed = _time_batch(tree, state, sessions, earliest, reconf)
    moves = swaps = 0
    for _ in range(max_ops):
        omega = timed.end
        tol = 1e-9 * max(1.0, omega)
        busy = timed.state.slice_busy
        hot = {s for s, e in enumerate(busy) if e >= omega - tol}
        critical = sorted((i for i, s in enumerate(sessions) if hot.intersection(tree.slices[s.node])),
                          key=lambda i: (-timed.session_end[i], sessions[i].node))
        improved = False
        for i in critical:
            node = sessions[i].node
            by_node = {s.node: a for a, s in enumerate(sessions)}
            alt_nodes = [v for v in tree.same_size[tree.size[node]] if v != node]
            alt_end = {v: max(busy[s] for s in tree.slices[v]) for v in alt_nodes}
            for v in sorted(alt_nodes, key=lambda x: (alt_end[x], x)):
                margin = omega - alt_end[v]
                if margin <= tol:
                    break
                keys_i = sorted((-d, k) for k, (d, _) in enumerate(sessions[i].tasks))
                a = by_node.get(v)
                keys_a = [] if a is None else sorted((-d, k) for k, (d, _) in enumerate(sessions[a].tasks))
                candidates = []
                c = pick_move(keys_i, margin)
                if c is not None:
                    candidates.append(("move", keys_i[c][1], None))
                pair = pick_swap(keys_i, keys_a, margin) if keys_a else None
                if pair is not None:
                    candidates.append(("swap", keys_i[pair[0]][1], keys_a[pair[1]][1]))
                for kind, ki, ka in candidates:
                    for front in ((False,) if a is not None else (True, False)):
                        trial = [_Session(s.node, list(s.tasks)) for s in sessions]
                        if a is None:
                            target = _Session(v, [])
                            trial.insert(0 if front else len(trial), target)
                            src_s = trial[i + 1] if front else trial[i]
                        else:
                            target, src_s = trial[a], trial[i]
                        item_i = src_s.tasks.pop(ki)
                        if kind == "swap":
                            _insert(src_s.tasks, target.tasks.pop(ka), reverse)
                        _insert(target.tasks, item_i, reverse)
                        trial = [s for s in trial if s.tasks]
                        new = _time_batch(tree, state, trial, earliest, reconf)
                        if new.end < omega - tol:
                            sessions, timed = trial, new
                            moves += kind == "move"
                            swaps += kind == "swap"
                            improved = True
                            break
                    if improved:
                        break
                if improved:
                    break
            if improved:
                break
        if not improved:
            break
    return sessions, timed, moves, swaps


def _insert(tasks: list[tuple[float, str]], item: tuple[float, str], ascending: bool) -> None:
    """Ordered insertion: LPT (decreasing) in a normal batch, increasing in a reversed one."""
    if ascending:
        bisect.insort(tasks, item)
    else:
        keys = [-d for d, _ in tasks]
        tasks.insert(bisect.bisect_right(keys, -item[0]), item)


@dataclass
class MultiBatchPlan:
    """A multi-batch FAR result.

    Attributes
    ----------
    schedule
        The combined schedule (checked against the :class:`Workload`).
    batches
        The per-batch :class:`heuristics.far_batch.FarPlan` (each planned from time 0).
    makespan
        Last task end of the combined schedule.
    stats
        ``method``, ``moves``, ``swaps`` (Sec. 4.3 operations kept, total),
        ``moves_per_batch``, ``swaps_per_batch``, ``batch_ends``, ``reused``
        (instances carried across a batch boundary).
    """

    workload: Workload
    schedule: Schedule
    batches: list[FarPlan]
    makespan: float
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def tree(self) -> str:
        return "\n".join(f"Batch {b} (release {w.release:g}):\n{p.tree}"
                         for b, (w, p) in enumerate(zip(self.workload.batches, self.batches)))


@options.known_options
def check_concatenation(method: Any = "move_swap", max_ops: Any = 1000) -> None:
    """Raise :class:`~instances.errors.OptionError` for a bad concatenation method or ``max_ops``.

    Examples
    --------
    >>> check_concatenation("sideways")
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: field method: must be one of 'trivial', 'reversed', 'move_swap'; got 'sideways'
    """
    options.choice(method, CONCATENATIONS, "method")
    if isinstance(max_ops, bool) or not isinstance(max_ops, numbers.Integral) or max_ops < 0:
        raise OptionError(f"max_ops must be an integer >= 0, got {max_ops!r}")


@options.typed
def plan_workload(workload: Workload, method: str = "move_swap", refine: bool = True, *, max_ops: int = 1000,
                  plans: Sequence[FarPlan] | None = None, prune: bool = True, max_iterations: int = 100,
                  min_improvement: float = 0.0, ties: str = "ours", **unknown: Any) -> MultiBatchPlan:
    """Schedule a multi-batch workload online (Sec. 4).

    Parameters
    ----------
    workload
        Batches with release times.
    method
        ``"trivial"``, ``"reversed"`` or ``"move_swap"`` (see the module docstring).
    refine
        FAR phase 3 for every batch.
    max_ops
        Cap on move/swap rounds per batch boundary.
    plans
        Already computed FAR plans of the batches (to compare methods cheaply).
    prune, max_iterations, min_improvement, ties
        Passed to :func:`heuristics.far_batch.plan` for each batch.

    Raises
    ------
    InstanceError
        When ``workload`` is not a workload or its times are too large to sum;
        :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    >>> from instances import mig
    >>> w = mig.generate_workload([5, 5, 5], [0.0, 10.0, 20.0], gpu="A30", seed=4)
    >>> r = plan_workload(w, "trivial")
    >>> mig.check(w, r.schedule), r.makespan >= max(b.release for b in w.batches)
    ([], True)
    """
    options.no_unknown(unknown, "far_multibatch.plan_workload")
    if not isinstance(workload, Workload):
        raise InstanceError(f"expected a mig.Workload, got {type(workload).__name__}", field="workload")
    check_concatenation(method, max_ops)
    far_batch.check_options(refine, prune, max_iterations, min_improvement)
    options.choice(ties, far_batch.TIE_RULES, "ties")
    check_scale(workload)
    gpu = workload.gpu
    tree = Tree(gpu)
    reconf = gpu.reconfigurable
    if plans is None:
        plans = [far_batch.plan(b.with_gpu(gpu) if b.release == 0 else _at_zero(b), refine=refine, prune=prune,
                                max_iterations=max_iterations, min_improvement=min_improvement, ties=ties)
                 for b in workload.batches]
    state = _State(gpu.num_slices)
    all_tasks: list[ScheduledTask] = []
    all_ops: list[Reconfiguration] = []
    moves_pb, swaps_pb, ends, reused = [], [], [], 0
    for b, (batch, fp) in enumerate(zip(workload.batches, plans)):
        reverse = method != "trivial" and b % 2 == 1
        sessions = _sessions(fp, tree, reverse)
        earliest = batch.release
        if method == "trivial":
            earliest = max(earliest, state.last_end)
        reused += sum(1 for s in sessions if s.node in state.live)
        if method == "move_swap" and b > 0:
            sessions, timed, mv, sw = _improve(tree, state, sessions, earliest, reconf, reverse, max_ops)
        else:
            timed, mv, sw = _time_batch(tree, state, sessions, earliest, reconf), 0, 0
        moves_pb.append(mv)
        swaps_pb.append(sw)
        ends.append(timed.end)
        all_tasks += timed.tasks
        all_ops += timed.ops
        state = timed.state
    all_ops.sort(key=lambda o: o.start)
    sched = Schedule(gpu, all_tasks, all_ops)
    stats = {"method": method, "moves": sum(moves_pb), "swaps": sum(swaps_pb), "moves_per_batch": moves_pb,
             "swaps_per_batch": swaps_pb, "batch_ends": ends, "reused": reused}
    return MultiBatchPlan(workload, sched, list(plans), sched.makespan, stats)


def _at_zero(batch: Problem) -> Problem:
    return Problem(batch.gpu, batch.tasks, 0.0)


@options.typed
def compare_concatenations(workload: Workload, refine: bool = True, *, prune: bool = True,
                           max_iterations: int = 100, min_improvement: float = 0.0,
                           **unknown: Any) -> dict[str, Any]:
    """Makespans of the three methods on the same FAR batch plans, with Sec. 6.7.1's percentages.

    ``p_rev = (trivial / reversed - 1) * 100`` and
    ``p_move_swap = (trivial / move_swap - 1) * 100`` (Table 7); ``moves`` and
    ``swaps`` of the move/swap method (Table 8). The options are those of
    :func:`plan_workload`.

    Examples
    --------
    >>> from instances import mig
    >>> w = mig.generate_workload([8, 8], [0.0, 0.0], gpu="A100", seed=5)
    >>> r = compare_concatenations(w)
    >>> r["move_swap"] <= r["reversed"]
    True
    """
    options.no_unknown(unknown, "far_multibatch.compare_concatenations")
    if not isinstance(workload, Workload):
        raise InstanceError(f"expected a mig.Workload, got {type(workload).__name__}", field="workload")
    far_batch.check_options(refine, prune, max_iterations, min_improvement)
    check_scale(workload)
    plans = [far_batch.plan(_at_zero(b), refine=refine, prune=prune, max_iterations=max_iterations,
                            min_improvement=min_improvement) for b in workload.batches]
    out: dict[str, Any] = {}
    for m in CONCATENATIONS:
        res = plan_workload(workload, m, refine, plans=plans)
        out[m] = res.makespan
        if m == "move_swap":
            out["moves"], out["swaps"] = res.stats["moves"], res.stats["swaps"]
    out["p_rev"] = (out["trivial"] / out["reversed"] - 1.0) * 100.0
    out["p_move_swap"] = (out["trivial"] / out["move_swap"] - 1.0) * 100.0
    return out
