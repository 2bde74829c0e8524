"""Exact scheduling of a node of g MIG GPUs: the entry behind ``milp.solve_optimal`` for node problems.

Three methods (``docs/models/mig_node.md``), all under the exact-result
contract of :mod:`milp.result`:

* ``method="laminar"`` -- for a node without reconfiguration (zero
  create/destroy times): the placements' occupied slices form the
  repartitioning tree, so for fixed task placements running every tree node's
  tasks after its ancestors' gives the largest slice load as makespan, and
  ``OPT = min over (GPU, placement) assignments of the largest slice load of
  any GPU``; a CP-SAT assignment model without time variables
  (:func:`milp.mig_node_cpsat.solve_laminar`);
* ``method="intervals"`` -- the same problem as one CP-SAT model with an
  optional interval per task, GPU and placement
  (:func:`milp.mig_node_cpsat.solve_intervals`), a second formulation to
  check the first;
* ``method="decompose"`` -- with or without reconfiguration. Each GPU has its
  own create/destroy channel (:mod:`instances.mig_node`), so once the tasks
  are split between the GPUs the GPUs are independent single-GPU problems, and
  ``OPT = min over splits of max_k OPT_1(tasks of GPU k)``. A depth-first
  branch and bound enumerates the splits up to a relabelling of the identical
  GPUs, prunes a partial split when a GPU's tasks alone have a single-GPU
  lower bound (:func:`bounds.mig.lower_bound`) at the best makespan found,
  and solves the GPUs of a complete split exactly with the single-GPU model
  (``milp.solve_optimal``, CP-SAT), each distinct task set once. A task set's
  optimum never falls when a task joins it (drop the task, and its session
  if it ran alone), which is what makes the pruning valid. With
  reconfiguration it first solves the node without it (``laminar``, a quarter
  of the time): that optimum plus the shortest create time bounds the
  optimum, and its split is solved first.

``method="auto"`` (default) takes ``laminar`` without reconfiguration and
``decompose`` with it.

Examples
--------
>>> from instances import mig_node
>>> from milp import solve_optimal
>>> p = mig_node.generate(5, "A30", gpus=2, seed=1)
>>> res = solve_optimal(p, time_limit=60)
>>> str(res.status), mig_node.check(p, res.schedule)
('OPTIMAL', [])
"""

from __future__ import annotations

import math
from typing import Any

from bounds import mig as mig_bounds
from bounds import mig_node as node_bounds
from instances import options as opt
from instances.errors import InstanceError, OptionError, SolverError
from instances.mig_node import NodeProblem, NodeSchedule, check
from instances.mig_problem import Problem, check_scale
from instances.mig_retime import plan_from_runs, plan_from_schedule
from instances.mig_schedule import Schedule, ScheduledTask
from milp.result import TOLERANCE, Result

__all__ = ["solve", "EXACT_METHODS"]

#: Values of the ``method`` option.
EXACT_METHODS = ("auto", "laminar", "intervals", "decompose")

#: A single-GPU solve needs at least this many seconds of the budget to be started.
_MIN_SOLVE = 0.05

#: Share of the time left that the decomposition gives its relaxation without reconfiguration.
_RELAX_SHARE = 0.25


def _retime(problem: NodeProblem, schedule: NodeSchedule) -> NodeSchedule:
    """The schedule's decisions (GPU, placement, orders) re-timed GPU by GPU on the problem's durations."""
    parts = []
    for k in range(problem.gpus):
        part = schedule.part(k)
        sub = problem.subproblem(st.task for st in part.tasks)
        try:
            parts.append(plan_from_schedule(sub, part).schedule)
        except ValueError:  # an infeasible hint's orders contradict each other: its start order instead
            parts.append(plan_from_runs(sub, part.tasks).schedule)
    return NodeSchedule.from_parts(problem.gpu, parts)


def _check_hint(problem: NodeProblem, hint: Any) -> NodeSchedule | None | bool:
    if hint is None or hint is False:
        return hint
    if not isinstance(hint, NodeSchedule):
        raise OptionError(f"must be a mig_node.NodeSchedule, None (FAR's schedule) or False (none), got "
                          f"{type(hint).__name__}", field="hint")
    if hint.gpu != problem.gpu.name or hint.gpus != problem.gpus:
        raise OptionError(f"the schedule is for {hint.gpus} x {hint.gpu}, the problem for "
                          f"{problem.gpus} x {problem.gpu.name}", field="hint")
    if sorted(st.task for _, st in hint.tasks) != sorted(t.name for t in problem.tasks):
        raise OptionError("the schedule does not list every task of the problem exactly once", field="hint")
    for k, st in hint.tasks:
        p = st.placement
        if not 0 <= k < problem.gpus or not problem.gpu.has_placement(p.size, p.start) \
                or p.size not in problem.task(st.task).times:
            raise OptionError(f"task {st.task}: GPU {k} placement {p.name} is not usable", field="hint")
    return hint


def _serial(problem: NodeProblem) -> NodeSchedule:
    """Every task in turn on GPU 0's whole GPU: a schedule when no hint is known."""
    root = problem.gpu.root
    runs = [ScheduledTask(t.name, root, float(i), float(i) + 0.5) for i, t in enumerate(problem.tasks)]
    part = plan_from_runs(problem.subproblem(t.name for t in problem.tasks), runs).schedule
    return NodeSchedule.from_parts(problem.gpu, [part] + [Schedule(problem.gpu, [])] * (problem.gpus - 1))


def _incumbent(problem: NodeProblem, hint: Any, info: dict[str, Any]) -> NodeSchedule:
    if hint is None:
        from heuristics import far_node

        try:
            hint, info["hint"] = far_node.schedule(problem), "far"
        except Exception as exc:  # a hint is optional: never let it break the exact solve
            hint, info["hint"] = None, f"none (far_node failed: {type(exc).__name__}: {exc})"
    elif hint is False:
        hint, info["hint"] = None, "none"
    else:
        info["hint"] = "given"
    best = _serial(problem)
    if hint is not None:
        for cand in (_retime(problem, hint), hint):
            if cand.makespan < best.makespan and not check(problem, cand):
                best = cand
    violations = check(problem, best)
    if violations:
        raise SolverError(f"the starting schedule is infeasible: {violations[0]}")
    info["hint_makespan"] = best.makespan
    return best


# ---------------------------------------------------------------------------
# decomposition: splits of the tasks between the GPUs, each GPU solved exactly

class _Split:
    """Depth-first branch and bound over the splits of the tasks between the identical GPUs."""

    def __init__(self, problem: NodeProblem, deadline: opt.Deadline, incumbent: NodeSchedule,
                 workers: int | None) -> None:
        self.problem = problem
        self.deadline = deadline
        self.workers = workers
        self.best = incumbent
        # big tasks first: they decide the splits, and the bounds bite early
        self.order = sorted(range(problem.n), key=lambda i: (-min(problem.tasks[i].times.values()), i))
        self.lb: dict[frozenset[int], float] = {}
        self.exact: dict[frozenset[int], Result] = {}
        self.closed = math.inf  # the smallest lower bound of a closed part of the search
        self.complete = True
        self.leaves = 0

    def _sub(self, block: frozenset[int]) -> Problem:
        return self.problem.subproblem(self.problem.tasks[i].name for i in block)

    def bound(self, block: frozenset[int]) -> float:
        if block not in self.lb:
            self.lb[block] = mig_bounds.lower_bound(self._sub(block)) if block else 0.0
        return self.lb[block]

    def threshold(self) -> float:
        return self.best.makespan * (1 - TOLERANCE / 4)

    def close(self, value: float) -> None:
        self.closed = min(self.closed, value)

    def solve_block(self, block: frozenset[int]) -> Result | None:
        if block in self.exact:
            return self.exact[block]
        left = self.deadline.remaining()
        if left is not None and left < _MIN_SOLVE:
            return None
        from milp import solve_optimal

        res = solve_optimal(self._sub(block), backend="cpsat", time_limit=left, workers=self.workers)
        if res.schedule is None:
            return None
        self.exact[block] = res
        return res

    def leaf(self, blocks: list[frozenset[int]]) -> None:
        self.leaves += 1
        lbs = [self.bound(b) for b in blocks]
        results: list[Result | None] = [None] * len(blocks)
        for b in sorted(range(len(blocks)), key=lambda b: -lbs[b]):
            res = self.solve_block(blocks[b])
            if res is None:
                self.complete = False
                self.close(max(lbs))
                return
            results[b] = res
            lbs[b] = max(lbs[b], res.lower_bound)
            if lbs[b] >= self.threshold():
                self.close(max(lbs))
                return
        self.close(max(lbs))
        if not all(r is not None and r.proven for r in results):
            self.complete = False
        value = max(r.objective for r in results if r is not None)
        if value < self.best.makespan:
            parts = [r.schedule for r in results if r is not None] + \
                [Schedule(self.problem.gpu, [])] * (self.problem.gpus - len(blocks))
            cand = NodeSchedule.from_parts(self.problem.gpu, parts)
            violations = check(self.problem, cand)
            if violations:
                raise SolverError(f"decomposition: a combined schedule is infeasible: {violations[0]}")
            self.best = cand

    def search(self, pos: int, blocks: list[frozenset[int]]) -> None:
        lb = max((self.bound(b) for b in blocks), default=0.0)
        if lb >= self.threshold():
            self.close(lb)
            return
        if self.deadline.expired():
            self.complete = False
            self.close(lb)
            return
        if pos == len(self.order):
            self.leaf(blocks)
            return
        i = self.order[pos]
        # an existing GPU, or the first unused one (GPUs are identical: one labelling per split)
        options = [(self.bound(b | {i}), b_index) for b_index, b in enumerate(blocks)]
        if len(blocks) < self.problem.gpus:
            options.append((self.bound(frozenset({i})), len(blocks)))
        for _, b_index in sorted(options):
            if b_index == len(blocks):
                self.search(pos + 1, blocks + [frozenset({i})])
            else:
                self.search(pos + 1, blocks[:b_index] + [blocks[b_index] | {i}] + blocks[b_index + 1:])


def _relaxation(problem: NodeProblem, deadline: opt.Deadline, incumbent: NodeSchedule, workers: int | None,
                info: dict[str, Any]) -> tuple[float, list[frozenset[int]] | None]:
    """The node without reconfiguration, solved by the slice-load model for a share of the time.

    Returns a bound on the optimum *with* reconfiguration and the relaxation's
    split of the tasks. Every GPU starts empty, so no task starts before the
    shortest create time t_c; moving a schedule with reconfiguration earlier by
    t_c and dropping its operations gives one without, hence
    ``OPT >= OPT_without + t_c``.
    """
    from milp.mig_node_cpsat import solve_laminar

    relaxed = problem.without_reconfiguration()
    left = deadline.remaining()
    share = opt.Deadline(None if left is None else _RELAX_SHARE * left)
    start = NodeSchedule(incumbent.gpu, incumbent.gpus, incumbent.tasks)  # the same runs without operations
    res = solve_laminar(relaxed, deadline=share, incumbent=start, workers=workers)
    info["relaxation"] = {"status": str(res.status), "objective": res.objective, "bound": res.lower_bound,
                          "seconds": share.elapsed()}
    index = {t.name: i for i, t in enumerate(problem.tasks)}
    split = [frozenset(index[st.task] for st in res.schedule.part(k).tasks) for k in range(problem.gpus)]
    return res.lower_bound + min(problem.gpu.create_time.values()), [b for b in split if b]


def _decompose(problem: NodeProblem, deadline: opt.Deadline, incumbent: NodeSchedule, workers: int | None,
               info: dict[str, Any]) -> Result:
    split = _Split(problem, deadline, incumbent, workers)
    relaxed_bound = 0.0
    if problem.gpu.reconfigurable:
        relaxed_bound, first = _relaxation(problem, deadline, incumbent, workers, info)
        if split.best.makespan > relaxed_bound * (1 + TOLERANCE):
            split.leaf(first)  # the relaxation's split is often the optimum's: a good incumbent early
            split.closed = math.inf  # that leaf is solved again below; only the search's bounds count
    searched = split.best.makespan > relaxed_bound * (1 + TOLERANCE)
    if searched:
        split.search(0, [])
    info.update(method="decompose", splits_solved=split.leaves, task_sets_solved=len(split.exact),
                complete=split.complete)
    # every split is either solved (its bound is max_k of its GPUs' bounds) or pruned by a partial
    # split's bound, and a task set's optimum only grows with the set: the smallest is a bound on OPT
    bound = max(node_bounds.lower_bound(problem), relaxed_bound,
                min(split.closed, split.best.makespan) if searched else 0.0)
    return Result.from_bounds(split.best.makespan, bound, schedule=split.best, runtime=deadline.elapsed(),
                              backend="cpsat", info=info)


# ---------------------------------------------------------------------------
# entry

@opt.typed
def solve(problem: NodeProblem, *, backend: str = "cpsat", reconfiguration: bool = True,
          time_limit: float | None = None, workers: int | None = None, hint: NodeSchedule | None | bool = None,
          method: str = "auto", log: bool = False, seed: int = 0, **unknown: Any) -> Result:
    """Solve a node of g MIG GPUs to optimality, or to the time limit.

    Parameters
    ----------
    problem
        A :class:`~instances.mig_node.NodeProblem`.
    backend
        ``"cpsat"`` (the only one).
    reconfiguration
        ``False`` solves ``problem.without_reconfiguration()`` instead.
    time_limit
        Seconds for the whole call, the starting heuristic and every solve
        included (``None``: no limit). On time-out: FEASIBLE with the best
        schedule known and a valid bound.
    workers
        CP-SAT workers.
    hint
        A :class:`~instances.mig_node.NodeSchedule` to start from (re-timed),
        ``None`` for FAR's node schedule, ``False`` for none.
    method
        ``"auto"``, ``"laminar"`` or ``"intervals"`` (both without reconfiguration only), ``"decompose"``.
    log, seed
        CP-SAT's search log and seed (methods ``laminar`` and ``intervals``).

    Returns
    -------
    Result
        ``objective`` = the makespan of a schedule that passes
        :func:`instances.mig_node.check`; ``lower_bound`` valid for the float
        data; OPTIMAL only when they agree within :data:`milp.TOLERANCE`.
    """
    seconds = opt.time_limit(time_limit)
    deadline = opt.Deadline(seconds)
    opt.no_unknown(unknown, "milp.mig_node.solve")
    if not isinstance(problem, NodeProblem):
        raise InstanceError(f"expected a mig_node.NodeProblem, got {type(problem).__name__}", field="problem")
    opt.choice(backend, ("cpsat",), "backend")
    workers = opt.workers(workers)
    opt.flag(reconfiguration, "reconfiguration")
    opt.choice(method, EXACT_METHODS, "method")
    opt.flag(log, "log")
    seed = opt.seed(seed, allow_none=False)
    if not reconfiguration:
        problem = problem.without_reconfiguration()
    check_scale(problem.batch)
    hint = _check_hint(problem, hint)
    if method == "auto":
        method = "decompose" if problem.gpu.reconfigurable else "laminar"
    if method in ("laminar", "intervals") and problem.gpu.reconfigurable:
        raise OptionError(f"the {method} model needs a node without reconfiguration (zero create/destroy "
                          "times); use method 'decompose'", field="method")
    info: dict[str, Any] = {"reconfiguration": problem.gpu.reconfigurable, "gpus": problem.gpus}
    if problem.n == 0:
        return Result.from_bounds(0.0, 0.0, schedule=NodeSchedule(problem.gpu, problem.gpus, []),
                                  runtime=deadline.elapsed(), backend="cpsat", info=info)
    incumbent = _incumbent(problem, hint, info)
    if method != "decompose":
        from milp.mig_node_cpsat import solve_intervals, solve_laminar

        model = solve_laminar if method == "laminar" else solve_intervals
        return model(problem, deadline=deadline, incumbent=incumbent, workers=workers, log=log, seed=seed,
                     info=info)
    return _decompose(problem, deadline, incumbent, workers, info)
