"""The repartitioning tree as FAR uses it, and the exact timing of task lists on it.

The lowest module of FAR's chain (listed in :mod:`heuristics.far`), and the
public way for any MIG heuristic to build and time schedules on the
repartitioning tree (FAR paper, Sec. 3.2, Figure 4) without FAR's private
names.

Public API
----------
:class:`Tree`
    ``Tree(gpu)``: the tree of one GPU as flat lists. Nodes are numbered in
    the breadth-first order of ``gpu.placements`` (node 0 is the whole GPU);
    ``tree.placements[v]``, ``tree.size[v]``, ``tree.children[v]``,
    ``tree.parent[v]``, ``tree.slices[v]``, ``tree.tc[v]`` / ``tree.td[v]``
    (create / destroy time), ``tree.same_size[s]``, ``tree.leaves``,
    ``tree.descendants[v]``, ``tree.depth[v]`` and ``tree.node(placement)``.
*node task lists*
    A schedule on the tree is given by ``node_tasks``: for every node, the
    indices of the tasks it runs, in order; ``durations[j]`` is task ``j``'s
    time at the size of its node.
:func:`replay`
    Times fixed node task lists exactly as Algorithm 1 (Sec. 3.2) would: a
    min-heap of nodes by end time, an instance created before its first task
    and destroyed once its subtree needs the slices, every create/destroy
    serialised; ``origin`` is when the empty GPU becomes available (a
    release). Returns a :class:`Timing` (starts, ends, create and destroy
    times, makespan). Re-timing after moving tasks between nodes is one call
    (Algorithm 2, line 26).
:func:`to_schedule`
    The :class:`~instances.mig_schedule.Schedule` of node task lists (tasks
    and create/destroy operations); it passes :func:`instances.mig.check`.
:func:`std_heap_push`, :func:`std_heap_pop`
    A min-heap of ``(key, item)`` pairs that orders equal keys exactly as
    libstdc++'s ``std::priority_queue`` does (``replay(..., ties="reference")``).

A new heuristic (say a local search over allocations) keeps ``node_tasks``
and ``durations`` as its state, changes them, and calls :func:`replay` to
judge a change and :func:`to_schedule` for the result; ``far.plan`` and
``far.schedule_allocation`` give starting points (``FarPlan.node_tasks`` holds
task names per node in this numbering).

Examples
--------
Two tasks on the two halves of an A30, then a third on the first half:

>>> from instances import mig
>>> problem = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.0}),
...                               mig.Task("b", {1: 3.0, 2: 1.5, 4: 1.0}),
...                               mig.Task("c", {1: 2.0, 2: 1.0, 4: 0.5})])
>>> tree = Tree(problem.gpu)
>>> left, right = tree.node(problem.gpu.placement(2, 0)), tree.node(problem.gpu.placement(2, 2))
>>> node_tasks = [[] for _ in range(tree.n)]
>>> node_tasks[left], node_tasks[right] = [0, 2], [1]
>>> durations = [t.time(2) for t in problem.tasks]
>>> timing = replay(tree, node_tasks, durations)
>>> timing.makespan   # create 2@0 (0.12 s), a, c; 2@2 is created after 2@0
3.12
>>> schedule = to_schedule(tree, node_tasks, durations, [t.name for t in problem.tasks])
>>> mig.check(problem, schedule), schedule.makespan
([], 3.12)

Moving ``c`` to the other half and re-timing:

>>> node_tasks[left], node_tasks[right] = [0], [1, 2]
>>> replay(tree, node_tasks, durations).makespan
2.74
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

from instances.errors import InstanceError, OptionError
from instances.gpus import GPUSpec, Placement
# the overflow guard lives with the problem's validation; still importable from here
from instances.mig_problem import MAX_TOTAL_TIME, check_scale  # noqa: F401
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.options import known_options

__all__ = ["Tree", "Timing", "replay", "to_schedule", "TIES", "std_heap_push", "std_heap_pop"]

#: Tie rules for nodes whose end times are equal in Algorithm 1's min-heap:
#: ``"ours"`` pops the node that comes first in the tree's breadth-first order;
#: ``"reference"`` pops them in the order the FAR authors' C++ implementation
#: does (a ``std::priority_queue`` of libstdc++, see :func:`std_heap_pop`).
TIES = ("ours", "reference")


class Tree:
    """The repartitioning tree of one GPU (FAR paper, Figure 4) as index lists, for hot loops.

    Parameters
    ----------
    gpu
        The GPU; node ``v`` is ``gpu.placements[v]`` (breadth-first order, root 0).

    Examples
    --------
    >>> from instances import gpus
    >>> t = Tree(gpus.get("A30"))
    >>> t.n, t.size, t.children[0], t.leaves
    (7, [4, 2, 2, 1, 1, 1, 1], [1, 2], [3, 4, 5, 6])
    >>> t.slices[2], t.parent[5], t.depth[5], t.same_size[2]
    ([2, 3], 2, 2, [1, 2])
    """

    def __init__(self, gpu: GPUSpec) -> None:
        self.gpu = gpu
        self.placements: list[Placement] = list(gpu.placements)
        index = {p.key(): i for i, p in enumerate(self.placements)}
        self._index = index
        self.n = len(self.placements)
        self.size = [p.size for p in self.placements]
        self.children = [[index[c.key()] for c in gpu.children(p)] for p in self.placements]
        self.parent = [-1] * self.n
        for v, kids in enumerate(self.children):
            for c in kids:
                self.parent[c] = v
        self.depth = [0] * self.n
        for v in range(1, self.n):  # BFS order: a parent comes before its children
            self.depth[v] = self.depth[self.parent[v]] + 1
        self.tc = [float(gpu.create_time[s]) for s in self.size]
        self.td = [float(gpu.destroy_time[s]) for s in self.size]
        self.slices = [sorted(p.slices) for p in self.placements]
        self.num_slices = gpu.num_slices
        self.same_size = {s: [v for v in range(self.n) if self.size[v] == s] for s in gpu.sizes}
        self.leaves = [v for v in range(self.n) if not self.children[v]]
        desc: list[list[int]] = [[] for _ in range(self.n)]
        for v in reversed(range(self.n)):  # BFS order reversed: children before parents
            for c in self.children[v]:
                desc[v] += [c] + desc[c]
        self.descendants = desc

    def node(self, placement: Placement | tuple[int, int]) -> int:
        """The node index of a placement (or of its ``(size, start)`` key)."""
        key = placement.key() if isinstance(placement, Placement) else tuple(placement)
        try:
            return self._index[key]
        except KeyError:
            raise InstanceError(f"{key[0]}@{key[1]} is not a placement of {self.gpu.name}",
                                field="placement") from None


@dataclass
class Timing:
    """Exact times of fixed node task lists (see :func:`replay`).

    Attributes
    ----------
    start, end
        Per task index.
    create
        Per node: start of its create operation (``None``: never created).
    destroy
        Per node: start of its destroy operation when a descendant runs tasks
        afterwards (``None`` otherwise: the instance simply lives on).
    node_end
        Per node: end of its last task (0 if it runs none).
    makespan
        Last task end.
    """

    start: list[float]
    end: list[float]
    create: list[float | None]
    destroy: list[float | None]
    node_end: list[float]
    makespan: float


@known_options
def replay(tree: Tree, node_tasks: Sequence[Sequence[int]], durations: Sequence[float],
           origin: float = 0.0, ties: str = "ours") -> Timing:
    """Algorithm 1 (FAR paper, Sec. 3.2) with every node's task list fixed.

    Parameters
    ----------
    tree
        The GPU's tree.
    node_tasks
        Per node (``tree.n`` lists), the task indices it runs in order. Each
        task appears once; its node's size must be one the task allows.
    durations
        Per task index, its time at the size of its node.
    origin
        When the (empty) GPU becomes available: a batch's release.
    ties
        Which of two nodes with equal end times is popped first (:data:`TIES`):
        ``"ours"`` (breadth-first order) or ``"reference"`` (the FAR authors'
        ``std::priority_queue``). Phase 2 lists replayed with the rule that
        built them get phase 2's times.

    Returns
    -------
    Timing
        Replaying the lists FAR's phase 2 produced gives exactly phase 2's
        times; after tasks moved (refinement, a local search) it recomputes
        every start, create and destroy (Algorithm 2, line 26). A destroy
        that Algorithm 1 counts (it serialises the reconfiguration clock) but
        no descendant needs is not reported: the instance lives on.

    Examples
    --------
    >>> from instances import gpus
    >>> t = Tree(gpus.get("A30").without_reconfiguration())
    >>> lists = [[] for _ in range(t.n)]
    >>> lists[0] = [1]; lists[3] = [0]       # task 1 on the whole GPU, then task 0 on 1@0
    >>> tm = replay(t, lists, [2.0, 1.5])
    >>> tm.start, tm.end, tm.makespan
    ([1.5, 0.0], [3.5, 1.5], 3.5)
    """
    children = tree.children
    tc = tree.tc
    td = tree.td
    n_tasks = sum(len(lst) for lst in node_tasks)
    start = [0.0] * len(durations)
    endt = [0.0] * len(durations)
    create: list[float | None] = [None] * tree.n
    destroy: list[float | None] = [None] * tree.n
    node_end = [0.0] * tree.n
    ptr = [0] * tree.n
    heap = [(origin, 0)]
    reconfig_end = origin
    remaining = n_tasks
    makespan = 0.0
    has_desc_tasks = [any(node_tasks[d] for d in tree.descendants[v]) for v in range(tree.n)]
    if ties == "ours":
        pop, push = heapq.heappop, heapq.heappush
    elif ties == "reference":
        pop, push = std_heap_pop, std_heap_push
    else:
        raise OptionError(f"field ties: must be one of {', '.join(map(repr, TIES))}; got {ties!r}")
    while heap:
        end, v = pop(heap)
        lst = node_tasks[v]
        p = ptr[v]
        if p < len(lst):
            if p == 0:
                if end > reconfig_end:
                    reconfig_end = end
                create[v] = reconfig_end
                reconfig_end += tc[v]
                end = reconfig_end
            j = lst[p]
            ptr[v] = p + 1
            start[j] = end
            end = end + durations[j]
            endt[j] = end
            node_end[v] = end
            if end > makespan:
                makespan = end
            remaining -= 1
            push(heap, (end, v))
        elif remaining:
            if lst:
                if end > reconfig_end:
                    reconfig_end = end
                if has_desc_tasks[v]:
                    destroy[v] = reconfig_end
                reconfig_end += td[v]
            for c in children[v]:
                push(heap, (end, c))
    return Timing(start, endt, create, destroy, node_end, makespan)


# libstdc++'s std::priority_queue (push_heap / pop_heap of <bits/stl_heap.h>) with the
# comparison "a.end > b.end": a binary max-heap under that comparison, i.e. a min-heap
# of end times in which equal keys are never swapped while sifting up, and the hole
# left at the root by a pop sinks to a leaf (preferring the right child unless the left
# one is strictly smaller) before the last element is sifted up into it.

@known_options
def std_heap_push(heap: list, item: tuple) -> None:
    """``std::priority_queue::push`` on a list of ``(key, ...)`` tuples compared by ``key`` only.

    Examples
    --------
    Equal keys: libstdc++ pops them neither first-in-first-out nor by the second
    element.

    >>> h = []
    >>> for v in range(5):
    ...     std_heap_push(h, (0.0, v))
    >>> [std_heap_pop(h)[1] for _ in range(5)]
    [0, 2, 4, 1, 3]
    """
    heap.append(item)
    _sift_up(heap, len(heap) - 1, item)


def _sift_up(heap: list, hole: int, item: tuple) -> None:
    """libstdc++'s ``__push_heap``: move ``item`` up from ``hole`` past parents with strictly larger keys."""
    key = item[0]
    while hole > 0:
        parent = (hole - 1) // 2
        if not heap[parent][0] > key:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = item


@known_options
def std_heap_pop(heap: list) -> tuple:
    """``top()`` then ``pop()`` of ``std::priority_queue`` (see :func:`std_heap_push`)."""
    top = heap[0]
    last = heap.pop()
    length = len(heap)
    if length == 0:
        return top
    # __adjust_heap(first, 0, length, last): sink the hole to a leaf ...
    hole = 0
    child = 0
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if heap[child][0] > heap[child - 1][0]:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    # ... then __push_heap the former last element up from there
    _sift_up(heap, hole, last)
    return top


@known_options
def to_schedule(tree: Tree, node_tasks: Sequence[Sequence[int]], durations: Sequence[float],
                names: Sequence[str], timing: Timing | None = None, origin: float = 0.0) -> Schedule:
    """The schedule of fixed node task lists: tasks, and creates/destroys when the GPU reconfigures.

    Parameters
    ----------
    tree, node_tasks, durations
        As for :func:`replay`.
    names
        Per task index, the task's name.
    timing
        ``replay(tree, node_tasks, durations, origin)`` if already computed.
    origin
        As for :func:`replay`.

    Returns
    -------
    Schedule
        Tasks by start time, operations by start time; no operations on a GPU
        whose create/destroy times are all zero.
    """
    tm = replay(tree, node_tasks, durations, origin) if timing is None else timing
    pl = tree.placements
    tasks = []
    ops = []
    reconf = tree.gpu.reconfigurable
    for v in range(tree.n):
        for j in node_tasks[v]:
            tasks.append(ScheduledTask(names[j], pl[v], tm.start[j], tm.end[j]))
        if reconf and tm.create[v] is not None:
            ops.append(Reconfiguration("create", pl[v], tm.create[v], tm.create[v] + tree.tc[v]))
        if reconf and tm.destroy[v] is not None:
            ops.append(Reconfiguration("destroy", pl[v], tm.destroy[v], tm.destroy[v] + tree.td[v]))
    ops.sort(key=lambda o: o.start)
    tasks.sort(key=lambda t: (t.start, t.placement.start))
    return Schedule(tree.gpu, tasks, ops, tm.makespan)
