"""MIG search: simulated annealing over task placements, started from FAR.

FAR (FAR paper, Sec. 3) fixes one allocation from a family of candidates,
list-schedules it on the repartitioning tree (Algorithm 1) and refines it by
moves and swaps between instances of the same size (Algorithm 2). This method
searches FAR's schedule space without those restrictions. A state is the node
of the repartitioning tree that every task runs on (its size and placement at
once; the tasks of a node run back to back in one instance session) and an
order:

* *downward*, Algorithm 1's (Sec. 3.2): a node starts when its parent's tasks
  are done; timed as :func:`heuristics.far_tree.replay` times it, and built
  with :func:`heuristics.far_tree.to_schedule`;
* *mirrored*: a node starts once every descendant running tasks has ended and
  been destroyed (small instances first, merged into larger ones later, which
  FAR cannot express); built by re-timing its sessions with the shared
  routine :func:`instances.mig_retime.retime_sessions`. Only on a GPU with
  reconfiguration: without it the downward order is optimal for every
  placement of the tasks (the slice-load argument of the exact model).

Creates and destroys are serialised on one channel in both. Within a node the
order of the tasks changes nothing, so it is not searched, and a state is
timed from its node loads alone (:class:`_Loads`, checked against ``replay``
by the tests), at a cost that does not grow with the number of tasks.

Neighbourhood: move one task to another node (any size it allows), swap the
nodes of two tasks, or switch the order. Simulated annealing accepts a worse
score with probability ``exp(-delta / T)``; the score is the makespan plus a
small multiple of the sum of the nodes' end times, so that among states of
one makespan those that free the GPU earlier elsewhere are preferred (the
makespan alone is flat over most moves). The temperature falls geometrically
from a share of FAR's makespan; a run restarts from its best state when a
stretch of its budget brings no improvement, and several independent runs
from FAR share the budget (one run's result varies much with its random
choices; the best of several much less). How the parameters were chosen is in
``docs/models/mig_search.md``.

Budget and determinism: the search stops after ``evaluations`` steps (a
proposed change, timed unless it changes nothing) or when ``time_limit``
seconds of wall time have passed, whichever comes first. Up to the step
budget everything depends only on the problem and ``seed``: the same call
gives the same schedule unless the wall limit stopped it
(``plan(...).stats["stopped"]`` says which). The default budget is
:data:`DEFAULT_EVALUATIONS` steps; :data:`heuristics.mig.METHODS` lists the
method with no wall limit, so that its row is deterministic on a
loaded machine too.

The result is never worse than FAR: FAR's schedule is returned unless the
schedule built from the best state is strictly shorter. A
:class:`~instances.mig.Workload` (several batches with releases) gets FAR's
concatenated schedule unchanged.

Examples
--------
>>> from instances import mig
>>> from heuristics import far, mig_search
>>> problem = mig.generate(12, "A100", seed=3)
>>> s = mig_search.schedule(problem, time_limit=5.0)
>>> mig.check(problem, s), s.makespan <= far.schedule(problem).makespan
([], True)
>>> s == mig_search.schedule(problem, time_limit=5.0)   # same seed, same schedule
True
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field
from typing import Any, Union

from heuristics import far
from heuristics.far_tree import Tree, to_schedule
from instances import options as opt
from instances.errors import InstanceError
from instances.mig_problem import Problem, Workload, check_scale
from instances.mig_retime import Session, retime_sessions
from instances.mig_schedule import Schedule

__all__ = ["plan", "schedule", "SearchPlan", "DEFAULT_EVALUATIONS"]

#: Search steps by default.
DEFAULT_EVALUATIONS = 20_000

# temperatures as shares of FAR's makespan, and the stretch without improvement (share of the
# budget) after which the search restarts from its best state (docs/models/mig_search.md)
_T_START, _T_END, _STALL = 0.03, 0.002, 0.125
#: Share of steps that try the mirrored order.
_FLIP = 0.05
#: Independent runs from FAR sharing the budget.
_RUNS = 4
#: Weight of the nodes' mean end time in the search's score.
_SPREAD = 0.05


@dataclass
class SearchPlan:
    """What :func:`plan` found.

    Attributes
    ----------
    schedule
        The schedule returned (FAR's when the search found nothing shorter).
    makespan, far_makespan
        Its makespan and FAR's.
    node_tasks
        Task names per tree node (node ``v`` is ``problem.gpu.placements[v]``);
        empty for a workload.
    stats
        ``evaluations`` (replays), ``improvements``, ``restarts``, ``stopped``
        (``"budget"``, ``"time"`` or ``"trivial"``) and ``seconds``.
    """

    schedule: Schedule
    makespan: float
    far_makespan: float
    node_tasks: list[list[str]] = field(default_factory=list, repr=False)
    stats: dict[str, Any] = field(default_factory=dict)


def _check(time_limit: Any, seed: Any, evaluations: Any, unknown: dict[str, Any],
           where: str) -> tuple[float | None, int, int]:
    opt.no_unknown(unknown, where)
    limit = opt.time_limit(time_limit)
    seed = opt.seed(seed, allow_none=False)
    evaluations = opt.integer(evaluations, "evaluations", lo=0)
    return limit, seed, evaluations


@opt.typed
def plan(problem: Union[Problem, Workload], time_limit: float | None = 1.0, seed: int = 0, *,
         evaluations: int = DEFAULT_EVALUATIONS, **unknown: Any) -> SearchPlan:
    """Search from FAR's schedule for a shorter one on the repartitioning tree.

    Parameters
    ----------
    problem
        A :class:`~instances.mig.Problem` (a :class:`~instances.mig.Workload`
        gets FAR's schedule).
    time_limit
        Wall seconds for the whole call, FAR included (``None``: no limit).
    seed
        Seed of the search's random choices.
    evaluations
        Budget of search steps (see the module docstring); 0 returns FAR.

    Returns
    -------
    SearchPlan

    Raises
    ------
    InstanceError
        When ``problem`` is not a MIG problem or its times are too large to sum;
        :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    >>> from instances import mig
    >>> p = plan(mig.generate(10, "A30", seed=1), time_limit=5.0)
    >>> p.makespan <= p.far_makespan, p.stats["stopped"]
    (True, 'budget')
    >>> plan(mig.generate(3, "A30", seed=1), tim_limit=1)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: mig_search.plan: unknown option 'tim_limit'
    """
    limit, seed, budget = _check(time_limit, seed, evaluations, unknown, "mig_search.plan")
    deadline = opt.Deadline(limit)
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a MIG Problem or Workload, got {type(problem).__name__}", field="problem")
    check_scale(problem)
    base = far.plan(problem)
    stats: dict[str, Any] = {"evaluations": 0, "improvements": 0, "restarts": 0, "stopped": "trivial"}
    if isinstance(problem, Workload) or len(problem.tasks) < 2 or budget == 0:
        stats["seconds"] = deadline.elapsed()
        return SearchPlan(base.schedule, base.makespan, base.makespan,
                          [] if isinstance(problem, Workload) else [list(x) for x in base.node_tasks], stats)
    tree = Tree(problem.gpu)
    names = [t.name for t in problem.tasks]
    index = {name: j for j, name in enumerate(names)}
    node_of = [0] * len(names)
    for v, lst in enumerate(base.node_tasks):
        for name in lst:
            node_of[index[name]] = v
    # independent runs from FAR, each with its share of the budget: one run's outcome varies a lot
    # with its random choices, the best of several much less
    best_nodes, up, best_ms = node_of, False, math.inf
    for r in range(_RUNS):
        share = budget // _RUNS + (1 if r < budget % _RUNS else 0)
        found = _anneal(problem, tree, node_of, deadline, seed * _RUNS + r, share, stats)
        if found[2] < best_ms:
            best_nodes, up, best_ms = found
        if stats["stopped"] == "time":
            break
    stats["mirrored"] = up
    if best_ms < base.makespan:
        lists, durations = _lists(problem, tree, best_nodes)
        if up:
            # the mirrored order is not Algorithm 1's: its sessions are re-timed by the shared routine
            load = [sum(durations[j] for j in lst) for lst in lists]
            sessions, create_at, destroy_at = _Loads(tree, problem.release).sessions_up(tree, lists, load, names)
            sched = retime_sessions(problem, sessions, create_at, destroy_at).schedule
        else:
            sched = to_schedule(tree, lists, durations, names, origin=problem.release)
        if sched.makespan < base.makespan:
            stats["seconds"] = deadline.elapsed()
            return SearchPlan(sched, sched.makespan, base.makespan, [[names[j] for j in lst] for lst in lists],
                              stats)
    stats["seconds"] = deadline.elapsed()
    return SearchPlan(base.schedule, base.makespan, base.makespan, [list(x) for x in base.node_tasks], stats)


@opt.typed
def schedule(problem: Union[Problem, Workload], time_limit: float | None = 1.0, seed: int = 0,
             **options: Any) -> Schedule:
    """The schedule of :func:`plan` (feasible for :func:`instances.mig.check`, never longer than FAR's).

    Examples
    --------
    >>> from instances import mig
    >>> problem = mig.generate(8, "A100", "GoodScaling", seed=2)
    >>> mig.check(problem, schedule(problem, time_limit=5.0))
    []
    """
    opt.no_unknown({k: v for k, v in options.items() if k != "evaluations"}, "mig_search.schedule")
    return plan(problem, time_limit, seed, **options).schedule


def _lists(problem: Problem, tree: Tree, node_of: list[int]) -> tuple[list[list[int]], list[float]]:
    lists: list[list[int]] = [[] for _ in range(tree.n)]
    for j, v in enumerate(node_of):
        lists[v].append(j)
    durations = [problem.tasks[j].times[tree.size[v]] for j, v in enumerate(node_of)]
    return lists, durations


class _Loads:
    """:func:`heuristics.far_tree.replay`'s makespan from node loads alone, for the search's inner loop.

    Within one node the tasks run back to back and nothing else happens on
    the node between its create and the end of its last task, so Algorithm
    1's makespan depends only on every node's total time (its *load*) and on
    which nodes run tasks: one heap event where a node starts (create, when
    it runs tasks) and one where it ends (destroy, when a descendant runs
    tasks afterwards). ``tests/heuristics/test_mig_search.py`` checks it
    against ``replay``.
    """

    def __init__(self, tree: Tree, origin: float, spread: float = 0.0) -> None:
        self.children = tree.children
        self.tc, self.td = tree.tc, tree.td
        self.descendants = tree.descendants
        self.n = tree.n
        self.parent = tree.parent
        self.origin = origin
        # the score adds ``spread`` times the sum of the nodes' end times: among states of one makespan it
        # prefers those whose other nodes end early, which guides the search across plateaus
        self.spread = spread
        self.last = 0.0  # the makespan of the last call

    def makespan(self, load: list[float], count: list[int]) -> float:
        children, tc, td, desc = self.children, self.tc, self.td, self.descendants
        origin = self.origin
        reconfig_end = origin
        remaining = sum(count)
        makespan = origin if remaining else 0.0
        heap = [(origin, 0, 0)]  # (time, node, 0: start / 1: end of its tasks)
        pop, push = heapq.heappop, heapq.heappush
        total = 0.0
        while heap and remaining:
            t, v, phase = pop(heap)
            if phase == 0 and count[v]:
                if t > reconfig_end:
                    reconfig_end = t
                reconfig_end += tc[v]
                end = reconfig_end + load[v]
                total += end
                if end > makespan:
                    makespan = end
                push(heap, (end, v, 1))
                continue
            if phase == 1:
                remaining -= count[v]
                if not remaining:
                    break
                if t > reconfig_end:
                    reconfig_end = t
                reconfig_end += td[v]
            for c in children[v]:
                push(heap, (t, c, 0))
        self.last = makespan
        return makespan + self.spread * total

    def makespan_up(self, load: list[float], count: list[int]) -> float:
        """The mirrored order: a node starts once every descendant running tasks has ended and been destroyed."""
        tc, td, parent = self.tc, self.td, self.parent
        n = self.n
        origin = self.origin
        above = [-1] * n  # nearest ancestor running tasks
        pending = [0] * n
        heap = []
        for v in range(n):  # breadth-first order: a parent's ``above`` is known before its children's
            if v:
                p = parent[v]
                above[v] = p if count[p] else above[p]
        for v in range(n):
            if count[v] and above[v] >= 0:
                pending[above[v]] += 1
        for v in range(n):
            if count[v] and not pending[v]:
                heap.append((origin, v, 0))
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        reconfig_end = origin
        makespan = origin if heap else 0.0
        total = 0.0
        while heap:
            t, v, phase = pop(heap)
            if phase == 0:
                if t > reconfig_end:
                    reconfig_end = t
                reconfig_end += tc[v]
                end = reconfig_end + load[v]
                total += end
                if end > makespan:
                    makespan = end
                push(heap, (end, v, 1))
            elif above[v] >= 0:
                if t > reconfig_end:
                    reconfig_end = t
                reconfig_end += td[v]
                u = above[v]
                pending[u] -= 1
                if not pending[u]:
                    push(heap, (reconfig_end, u, 0))
        self.last = makespan
        return makespan + self.spread * total

    def sessions_up(self, tree: Tree, lists: list[list[int]], load: list[float], names: list[str]
                    ) -> tuple[list[Session], list[float], list[float]]:
        """The sessions of the mirrored order and the nominal times of their operations (for re-timing)."""
        count = [len(lst) for lst in lists]
        n, tc, td, parent = self.n, self.tc, self.td, self.parent
        above = [-1] * n
        pending = [0] * n
        for v in range(1, n):
            p = parent[v]
            above[v] = p if count[p] else above[p]
        for v in range(n):
            if count[v] and above[v] >= 0:
                pending[above[v]] += 1
        heap = [(self.origin, v, 0) for v in range(n) if count[v] and not pending[v]]
        heapq.heapify(heap)
        reconfig_end = self.origin
        create: dict[int, float] = {}
        destroy: dict[int, float] = {}
        while heap:
            t, v, phase = heapq.heappop(heap)
            if phase == 0:
                create[v] = max(t, reconfig_end)
                reconfig_end = create[v] + tc[v]
                heapq.heappush(heap, (reconfig_end + load[v], v, 1))
            elif above[v] >= 0:
                destroy[v] = max(t, reconfig_end)
                reconfig_end = destroy[v] + td[v]
                u = above[v]
                pending[u] -= 1
                if not pending[u]:
                    heapq.heappush(heap, (reconfig_end, u, 0))
        used = sorted(create, key=lambda v: create[v])
        sessions = [Session(tree.placements[v], tuple(names[j] for j in lists[v])) for v in used]
        return sessions, [create[v] for v in used], [destroy.get(v, math.inf) for v in used]


def _anneal(problem: Problem, tree: Tree, start: list[int], deadline: opt.Deadline, seed: int, evaluations: int,
            stats: dict[str, Any]) -> tuple[list[int], bool, float]:
    n = len(start)
    flip = _FLIP if tree.gpu.reconfigurable else 0.0  # without reconfiguration the mirror never helps
    evaluator = _Loads(tree, problem.release, _SPREAD / n)
    allowed = [[v for v in range(tree.n) if tree.size[v] in t.times] for t in problem.tasks]
    times = [[t.times.get(tree.size[v], 0.0) for v in range(tree.n)] for t in problem.tasks]

    def state(nodes: list[int]) -> tuple[list[float], list[int]]:
        load, count = [0.0] * tree.n, [0] * tree.n
        for j, v in enumerate(nodes):
            load[v] += times[j][v]
            count[v] += 1
        return load, count

    node_of = list(start)
    load, count = state(node_of)
    up = best_up = False
    timings = (evaluator.makespan, evaluator.makespan_up)
    timing = timings[up]
    current = timing(load, count)
    current_ms = best = evaluator.last
    best_score = current
    best_nodes = list(node_of)
    rng = random.Random(seed)
    t_start, t_end = _T_START * best, _T_END * best
    since_best = 0
    stall = max(200, int(evaluations * _STALL))
    for it in range(evaluations):
        if it % 64 == 0 and deadline.expired():
            stats["stopped"] = "time"
            break
        temp = t_start * (t_end / t_start) ** (it / evaluations)
        i = rng.randrange(n)
        a = node_of[i]
        r = rng.random()
        if r < flip:  # the mirrored order (small instances first) or back
            ms = timings[not up](load, count)
            if ms <= current or rng.random() < math.exp((current - ms) / temp):
                current, current_ms, up = ms, evaluator.last, not up
                timing = timings[up]
        elif r < 0.5:  # move task i to another node it may use
            choices = allowed[i]
            b = choices[rng.randrange(len(choices))]
            if b == a:
                continue
            ti_a, ti_b = times[i][a], times[i][b]
            load[a] -= ti_a
            load[b] += ti_b
            count[a] -= 1
            count[b] += 1
            ms = timing(load, count)
            if ms <= current or rng.random() < math.exp((current - ms) / temp):
                current, current_ms = ms, evaluator.last
                node_of[i] = b
            else:
                load[a] += ti_a
                load[b] -= ti_b
                count[a] += 1
                count[b] -= 1
        else:  # swap the nodes of tasks i and k
            k = rng.randrange(n)
            b = node_of[k]
            if a == b or tree.size[b] not in problem.tasks[i].times or tree.size[a] not in problem.tasks[k].times:
                continue
            delta_a = times[k][a] - times[i][a]
            delta_b = times[i][b] - times[k][b]
            load[a] += delta_a
            load[b] += delta_b
            ms = timing(load, count)
            if ms <= current or rng.random() < math.exp((current - ms) / temp):
                current, current_ms = ms, evaluator.last
                node_of[i], node_of[k] = b, a
            else:
                load[a] -= delta_a
                load[b] -= delta_b
        stats["evaluations"] += 1
        if current_ms < best or (current_ms == best and current < best_score):
            best, best_score, best_nodes, best_up, since_best = current_ms, current, list(node_of), up, 0
            stats["improvements"] += 1
        else:
            since_best += 1
            if since_best >= stall:  # restart from the best state
                node_of, up = list(best_nodes), best_up
                timing = timings[up]
                load, count = state(node_of)
                current, current_ms, since_best = best_score, best, 0
                stats["restarts"] += 1
    else:
        stats["stopped"] = "budget"
    return best_nodes, best_up, best
