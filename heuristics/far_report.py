"""FAR's results for one batch: the plan and its repartitioning-tree report.

Part of FAR's chain of modules (listed in :mod:`heuristics.far`), after
``far_phase2``: :func:`heuristics.far_batch.plan` returns a :class:`FarPlan`,
whose ``tree`` (:class:`RepartitionTree` of :class:`TreeNode`) prints as
Algorithm 1's output tree (FAR paper, Figure 4, with the tasks each instance
runs).

Examples
--------
>>> from instances import mig
>>> from heuristics import far
>>> p = far.plan(mig.generate(n=4, gpu="A30", seed=0))
>>> isinstance(p, FarPlan), str(p).splitlines()[0]
(True, 'Repartitioning tree (A30):')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from instances.gpus import Placement
from instances.mig_problem import Problem
from instances.mig_schedule import Schedule

__all__ = ["FarPlan", "RepartitionTree", "TreeNode"]


@dataclass
class TreeNode:
    """One instance of the repartitioning tree with the tasks it runs.

    Attributes
    ----------
    placement
        The MIG instance (``size@start``).
    tasks
        ``(name, start, end)`` in execution order.
    create, destroy
        Start of its create / destroy operation (``None`` when there is none).
    depth
        Depth in the tree (root 0).
    """

    placement: Placement
    tasks: list[tuple[str, float, float]]
    create: float | None
    destroy: float | None
    depth: int

    @property
    def end(self) -> float:
        return self.tasks[-1][2] if self.tasks else 0.0


@dataclass
class RepartitionTree:
    """Algorithm 1's output tree (Figure 4 with tasks), printable as a report."""

    gpu: str
    nodes: list[TreeNode]
    makespan: float

    def lines(self) -> list[str]:
        out = [f"Repartitioning tree ({self.gpu}):"]
        for nd in self.nodes:
            pad = "--" * nd.depth
            names = ", ".join(t[0] for t in nd.tasks)
            ends = ", ".join(f"{t[2]:.4g}" for t in nd.tasks)
            extra = ""
            if nd.create is not None:
                extra += f", created={nd.create:.4g}"
            if nd.destroy is not None:
                extra += f", destroyed={nd.destroy:.4g}"
            out.append(f"{pad}Node({nd.placement.name}, slices={sorted(nd.placement.slices)}, "
                       f"tasks=[{names}], ends=[{ends}]{extra})")
        out.append(f"Tree makespan: {self.makespan:.6g}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass
class FarPlan:
    """A FAR result for one batch.

    Attributes
    ----------
    schedule
        The final schedule (checked feasible in the tests).
    tree
        The repartitioning tree with its tasks (``print(plan.tree)``).
    allocation
        ``{task name: size}`` of the winning allocation.
    phase2_makespan
        Makespan after phase 2 (before refinement).
    makespan
        Final makespan (after refinement when enabled).
    stats
        ``allocations`` (family members visited: the scan stops once
        ``W / slices`` reaches the best makespan), ``allocations_tried`` (phase-2 runs),
        ``allocations_pruned`` (skipped by the lower bound), ``allocation_index``
        (winner's index in the family), ``moves``, ``swaps``, ``iterations``,
        ``p_ref`` (Sec. 6.6: ``(phase2 / refined - 1) * 100``), ``seconds``.
    node_tasks
        Task names per node of the repartitioning tree, in the node numbering
        of :class:`heuristics.far_tree.Tree` (a starting point for other
        heuristics built on :mod:`heuristics.far_tree`).
    """

    problem: Problem
    schedule: Schedule
    tree: RepartitionTree
    allocation: dict[str, int]
    phase2_makespan: float
    makespan: float
    stats: dict[str, Any] = field(default_factory=dict)
    node_tasks: list[list[str]] = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        return str(self.tree)

