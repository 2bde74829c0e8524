"""Lower bounds for a node of g MIG GPUs (:class:`instances.mig_node.NodeProblem`).

The node's g GPUs have ``g * S`` slices together, and a task runs on one
instance of one GPU, so the single-GPU arguments of :mod:`bounds.mig` carry
over with ``g * S`` slices:

* :func:`area_bound` -- the FAR paper's baseline (Sec. 6.4) over the node:
  ``sum_i min_s s * t_i(s) / (g * S)``;
* :func:`lower_bound` -- the largest of that, the longest task at its best
  size (``max_i min_s (t_create(s) + t_i(s))`` with reconfiguration: every
  GPU starts empty, rule 1, so a task's instance is created first), and a
  *moldable area bound*: for a candidate makespan C every task must use a
  size s with ``t_create(s) + t_i(s) <= C`` and covers at least
  ``a_i(C) = min{s * t_i(s) : s allowed at C}`` slice-seconds after the first
  create ends (``t0``, the shortest create time), so C is feasible only if
  ``t0 + sum_i a_i(C) / (g * S) <= C``. The test is monotone in C; the
  smallest feasible C is found by scanning the breakpoints.

Reconfiguration is a property of the problem (its GPU's times): on
``problem.without_reconfiguration()`` every create term is zero.

Examples
--------
>>> from instances import mig_node
>>> from bounds import mig_node as node_bounds
>>> p = mig_node.generate(8, "A30", gpus=2, seed=3)
>>> node_bounds.area_bound(p) <= node_bounds.lower_bound(p)
True
"""

from __future__ import annotations

from instances.mig_node import NodeProblem
from instances.options import known_options

__all__ = ["area_bound", "lower_bound", "bound_report"]


@known_options
def area_bound(problem: NodeProblem) -> float:
    """``sum_i min_s s * t_i(s) / (g * S)``: the FAR paper's baseline (Sec. 6.4) over the g GPUs.

    Examples
    --------
    >>> from instances.mig_node import NodeProblem
    >>> from instances.mig import Task
    >>> area_bound(NodeProblem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})], gpus=2))  # min(4, 5, 6) / 8
    0.5
    """
    slices = problem.gpus * problem.gpu.num_slices
    return sum(min(t.work(s) for s in t.sizes) for t in problem.tasks) / slices


@known_options
def bound_report(problem: NodeProblem) -> dict[str, float]:
    """Every bound :func:`lower_bound` combines, by name: ``area``, ``longest``, ``moldable_area``, ``lower_bound``.

    Examples
    --------
    >>> from instances.mig_node import NodeProblem
    >>> from instances.mig import Task
    >>> p = NodeProblem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), Task("b", {1: 4.0, 2: 2.5, 4: 1.5})], gpus=2)
    >>> r = bound_report(p); r["longest"], r["lower_bound"]  # each on its own GPU: create 4@0, then 1.5 s
    (1.63, 1.63)
    """
    gpu = problem.gpu
    create = dict(gpu.create_time) if gpu.reconfigurable else {s: 0.0 for s in gpu.sizes}
    t0 = min(create.values()) if problem.n else 0.0
    options = [[(create[s] + t, s * t) for s, t in task.times.items()] for task in problem.tasks]
    longest = max((min(f for f, _ in opts) for opts in options), default=0.0)
    slices = problem.gpus * gpu.num_slices

    def load(c: float) -> float:
        total = 0.0
        for opts in options:
            total += min(a for f, a in opts if f <= c)
        return t0 + total / slices

    molded = 0.0
    points = sorted({f for opts in options for f, _ in opts if f >= longest})
    for k, c in enumerate(points):
        value = load(c)  # non-increasing in c, constant between breakpoints
        nxt = points[k + 1] if k + 1 < len(points) else float("inf")
        if max(c, value) < nxt:
            molded = max(c, value)
            break
    report = {"area": area_bound(problem), "longest": longest, "moldable_area": molded}
    report["lower_bound"] = max(report.values())
    return report


@known_options
def lower_bound(problem: NodeProblem) -> float:
    """A proven lower bound on the node's optimal makespan (see the module docstring).

    Examples
    --------
    >>> from instances.mig_node import NodeProblem
    >>> from instances.mig import Task
    >>> tasks = [Task(f"t{i}", {1: 4.0, 2: 2.0, 4: 1.0}) for i in range(8)]
    >>> lower_bound(NodeProblem("A30", tasks, gpus=2).without_reconfiguration())  # 8 tasks x 4 slice-s / 8
    4.0
    """
    return bound_report(problem)["lower_bound"]
