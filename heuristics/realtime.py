"""Partition-and-allocate heuristics for real-time GPU kernels (real-time partitioning paper, Sec. 5).

Algorithm 1 starts from one partition per task, sized by Lemma 2
(:func:`init_partitions`), and greedily merges pairs of partitions
(:func:`merge`, Algorithm 2 with the binary search suggested in Sec. 5.2)
until the total size ``Pi`` fits in ``M`` SMs (Lemma 3) or no pair can be
merged. Pairs are chosen by :func:`select_partitions` (Algorithm 3) under

- ``"sms"``: Definition 3 (``>>``): the eligible partner whose merge is the
  *smallest* (fewest SMs); every candidate merge is computed;
- ``"bf"``: Definition 4 (``>``, best fit): the eligible partner whose union
  generates the smallest conflict-aware workload ``sum C_i(T, 1) / T_i``,
  computed without merging;

with (``exhaustive=True``, ACT) or without (INA) the preliminary exhaustive
forbidden-pair list (Sec. 5.3). The baseline ``1G`` puts every task in one
partition of ``M`` SMs.

Schedulability test: every heuristic takes ``test=`` ``"demand"`` (default;
exact EDF processor-demand test per partition) or ``"density"`` (sufficient
test, the one the exact models of ``milp.realtime`` use).

Choices where the paper is silent (documented in the code):

- ``par_list`` order and ``choose_from``: decreasing conflict-aware workload
  ``sum C_i(T(P), 1)/T_i`` (Sec. 5: "decreasing/increasing utilization order").
- Forbidden list: ACT entries are *task* pairs and exclude every partition
  pair that would put them together (Sec. 5.4: "excluding those where at least
  one task is implied in a forbidden merge"); entries added when a merge fails
  are the exact pair of task sets, so INA can still merge the same tasks later
  inside larger partitions (Sec. 7.2 discussion of ACT vs INA).
- Ties: the earlier partition in ``par_list`` wins.

Examples
--------
>>> from instances import realtime as rt
>>> from heuristics import realtime as h
>>> p = rt.generate(n=20, utilization=10, sms=68, seed=0)
>>> res = h.run(p, "SMS_INA")
>>> res.success, rt.check(p, res.solution)
(True, [])
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from instances import realtime as rt
from instances.errors import OptionError
from instances.options import known_options

__all__ = [
    "HeuristicResult", "Allocator", "init_partitions", "merge", "select_partitions",
    "partition_and_allocate", "one_gpu", "one_gpu_fluid", "METHODS", "run", "MAX_TASKS",
]

#: Most tasks Algorithm 1 takes. Its work grows faster than n^2: ACT's forbidden
#: list merges every pair of tasks (Sec. 5.3), SMS computes the merge with every
#: eligible partner at each of up to n steps (Definition 3), and every partition
#: carries an n-bit task mask. A set of 1,000 tasks takes minutes and over a GB;
#: the baseline 1G (:func:`one_gpu`) takes any size.
MAX_TASKS = 1_000


@dataclass(frozen=True)
class Part:
    """A partition under construction: task set, size, bitmask of the tasks and the
    per-type sums that give its utilisation and density at any size in O(1)."""

    tasks: frozenset[int]
    size: int
    mask: int = 0
    agg: tuple = ()
    gen: int = 0   # creation stamp: when it entered par_list


# Per-type sums kept in Part.agg: (count, a^n/T, b^n/T, a^c/T, b^c/T, a^n/D, b^n/D, a^c/D, b^c/D)
_REJECT = 1e-6   # margins that keep the O(1) shortcuts strictly inside the exact tests' verdicts


def _rates(agg: tuple, offset: int) -> tuple[float, float]:
    """(A, B) with ``sum C_i / X_i = A/m + B`` (X = T for offset 1, D for offset 5)."""
    A = B = 0.0
    for part in agg:
        if part[0] >= 2:          # two or more tasks of this type: all in conflict
            A += part[offset + 2]
            B += part[offset + 3]
        elif part[0] == 1:
            A += part[offset]
            B += part[offset + 1]
    return A, B


def _min_m(A: float, B: float, limit: float) -> float:
    """Smallest integer m >= 1 with A/m + B <= limit (inf if none)."""
    if B >= limit:
        return float("inf")
    return max(1, math.ceil(A / (limit - B) - 1e-12))


@dataclass
class HeuristicResult:
    """Outcome of a heuristic.

    Attributes
    ----------
    success
        True when the final partitions fit in ``M`` SMs (Lemma 3).
    solution
        The final partitioning (its total may exceed ``M`` when ``success`` is
        False; ``None`` when Lemma 1 or Lemma 2 rejected the task set).
    reason
        Why it failed (``"lemma1"``, ``"lemma2"``, ``"no merge"``, ``"1G"``) or ``""``.
    runtime
        Wall-clock seconds.
    stats
        Counters: schedulability tests, merges tried / failed.
    """

    success: bool
    solution: rt.Solution | None
    reason: str = ""
    runtime: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def total_sms(self) -> int | None:
        return None if self.solution is None else self.solution.total_sms


class Allocator:
    """State of Algorithm 1 on one problem: test cache, merge cache, forbidden lists.

    Parameters
    ----------
    problem
        The task set.
    relation
        ``"sms"`` (Definition 3, ``>>``) or ``"bf"`` (Definition 4, ``>``).
    exhaustive
        Fill the forbidden list with every non-mergeable task pair first (ACT).
    test
        ``"demand"`` or ``"density"`` (see module docstring).
    """

    @known_options
    def __init__(self, problem: rt.RealtimeProblem, relation: str = "sms",
                 exhaustive: bool = False, test: str = "demand") -> None:
        if relation not in ("sms", "bf"):
            raise OptionError(f"unknown order relation {relation!r}; use 'sms' or 'bf'")
        if test not in rt.TESTS:
            raise OptionError(f"unknown schedulability test {test!r}; use one of {rt.TESTS}")
        self.problem = problem
        self.relation = relation
        self.exhaustive = exhaustive
        self.test = test
        self._merges: dict[frozenset, Part | None] = {}
        self.forbidden_tasks = [0] * problem.n   # bitmask of forbidden partners per task (ACT)
        # exact failed pairs of task sets, as adjacency: task set -> partner task sets
        self._failed: dict[frozenset, set[frozenset]] = {}
        # Partitions found to have no eligible partner, with the stamp of the newest partition
        # then in par_list: forbidden lists only grow, so only newer partitions can revive them.
        self._dead: dict[frozenset, int] = {}
        self._gen = 0
        self.stats = {"tests": 0, "merges": 0, "failed_merges": 0}
        a = problem.arrays
        self._task_agg = []
        for i in range(problem.n):
            T, D = a["T"][i], a["D"][i]
            row = (1.0, a["an"][i] / T, a["bn"][i] / T, a["ac"][i] / T, a["bc"][i] / T,
                   a["an"][i] / D, a["bn"][i] / D, a["ac"][i] / D, a["bc"][i] / D)
            zero = (0.0,) * 9
            self._task_agg.append((zero, row) if a["mem"][i] else (row, zero))

    def part(self, tasks: frozenset[int], size: int, agg: tuple | None = None) -> Part:
        """A :class:`Part` with its mask and per-type sums."""
        if agg is None:
            agg = ((0.0,) * 9, (0.0,) * 9)
            for i in tasks:
                agg = self._add(agg, self._task_agg[i])
        mask = 0
        for i in tasks:
            mask |= 1 << i
        self._gen += 1
        return Part(tasks, size, mask, agg, self._gen)

    def stamp(self, part: Part) -> Part:
        """The same partition with a fresh creation stamp (it enters par_list now)."""
        self._gen += 1
        return dataclasses.replace(part, gen=self._gen)

    @staticmethod
    def _add(x: tuple, y: tuple) -> tuple:
        return (tuple(u + v for u, v in zip(x[0], y[0])), tuple(u + v for u, v in zip(x[1], y[1])))

    # -- building blocks ---------------------------------------------------------------

    @property
    def forbidden_merges(self) -> set[frozenset]:
        """Failed merges recorded by Algorithm 1 (line 14), as pairs of task sets."""
        return {frozenset((a, b)) for a, bs in self._failed.items() for b in bs}

    def forbid(self, p1: Part, p2: Part) -> None:
        """add_to_forbidden_moves(P1, P2) of Algorithm 1."""
        self._failed.setdefault(p1.tasks, set()).add(p2.tasks)
        self._failed.setdefault(p2.tasks, set()).add(p1.tasks)

    def schedulable(self, tasks: frozenset[int], m: int) -> bool:
        self.stats["tests"] += 1
        return rt.schedulable(self.problem, sorted(tasks), m, self.test)

    def workload(self, agg: tuple) -> float:
        """Conflict-aware workload ``sum C_i(T, 1)/T_i`` (Definition 4's U, our reading)."""
        A, B = _rates(agg, 1)
        return A + B

    def init_partitions(self) -> list[Part] | None:
        """One partition per task, of the Lemma-2 size (Sec. 5.1); ``None`` if a task
        cannot meet its deadline even on all ``M`` SMs."""
        parts = []
        for i in range(self.problem.n):
            m = rt.lemma2_min_size(self.problem, i)
            if m is None:
                return None
            parts.append(self.part(frozenset([i]), m))
        return parts

    def merge(self, p1: Part, p2: Part) -> Part | None:
        """Algorithm 2 with binary search: the smallest ``m`` in
        ``[max(|P1|,|P2|), |P1|+|P2|-1]`` (and ``<= M``) on which the union is
        schedulable, or ``None`` (Definition 2: a valid merge saves at least one SM).

        Schedulability is monotone in ``m`` (``C(m)`` decreases, conflicts do not
        depend on ``m``), so testing the top of the range first and then
        bisecting finds the same ``m`` as the paper's linear scan.
        """
        key = frozenset((p1.tasks, p2.tasks))
        if key in self._merges:
            return self._merges[key]
        self.stats["merges"] += 1
        tasks = p1.tasks | p2.tasks
        agg = self._add(p1.agg, p2.agg)
        # O(1) shortcuts from the per-type sums: below m_u the utilisation exceeds 1
        # (both tests reject), from m_d on the density is below 1 (both tests accept).
        m_u = _min_m(*_rates(agg, 1), 1.0 + _REJECT)
        m_d = _min_m(*_rates(agg, 5), 1.0 - _REJECT)
        lo = max(p1.size, p2.size, m_u)
        hi = min(p1.size + p2.size - 1, self.problem.sms)
        result = None
        if lo <= hi and (m_d <= hi or self.schedulable(tasks, hi)):
            hi = min(hi, m_d)
            while lo < hi:
                mid = (lo + hi) // 2
                if self.schedulable(tasks, mid):
                    hi = mid
                else:
                    lo = mid + 1
            result = self.part(tasks, int(hi), agg)
        else:
            self.stats["failed_merges"] += 1
        self._merges[key] = result
        return result

    def fill_forbidden_list(self, parts: list[Part]) -> None:
        """ACT (Sec. 5.3): every pair of single-task partitions that cannot merge."""
        for a in range(len(parts)):
            for b in range(a + 1, len(parts)):
                if self.merge(parts[a], parts[b]) is None:
                    (i,), (j,) = parts[a].tasks, parts[b].tasks
                    self.forbidden_tasks[i] |= 1 << j
                    self.forbidden_tasks[j] |= 1 << i

    def select_partitions(self, par_list: list[Part]) -> tuple[Part, list[Part]] | None:
        """Algorithm 3: the first partition (in ``par_list`` order) that has eligible
        partners, and those partners sorted by the order relation; ``None`` if none."""
        empty: set[frozenset] = set()
        newest = max((q.gen for q in par_list), default=0)
        for p in par_list:
            since = self._dead.get(p.tasks, -1)
            if since >= newest:
                continue
            bad = 0
            for i in p.tasks:
                bad |= self.forbidden_tasks[i]
            failed = self._failed.get(p.tasks, empty)
            elig = [q for q in par_list
                    if q.gen > since and q is not p and not (bad & q.mask)
                    and q.tasks not in failed]
            if elig:
                return p, self.sort(p, elig)
            self._dead[p.tasks] = newest
        return None

    def sort(self, p: Part, elig: list[Part]) -> list[Part]:
        if self.relation == "bf":
            # Definition 4: smaller generated workload first; no merge needed.
            return sorted(elig, key=lambda q: self.workload(self._add(p.agg, q.agg)))
        # Definition 3: smaller merged partition first; impossible merges last.
        def key(q: Part) -> float:
            r = self.merge(p, q)
            return float("inf") if r is None else r.size
        return sorted(elig, key=key)

    # -- Algorithm 1 ---------------------------------------------------------------------

    def run(self, target: int | None = None) -> HeuristicResult:
        """Algorithm 1. Merging stops once ``Pi <= target`` (default ``M``, the paper's
        exit on success); ``target=0`` keeps merging while any merge is valid, which
        is what the comparison with the exact minimum uses."""
        t0 = time.perf_counter()
        problem = self.problem
        if problem.n > MAX_TASKS:
            raise OptionError(f"Algorithm 1 takes at most {MAX_TASKS:,} tasks (its work grows faster than n^2), "
                              f"got {problem.n:,}; the baseline 1G takes any size", field="problem")
        target = problem.sms if target is None else target
        if rt.lemma1_unschedulable(problem):
            return HeuristicResult(False, None, "lemma1", time.perf_counter() - t0, self.stats)
        parts = self.init_partitions()
        if parts is None:
            return HeuristicResult(False, None, "lemma2", time.perf_counter() - t0, self.stats)
        if self.exhaustive:
            self.fill_forbidden_list(parts)
        order = lambda q: -self.workload(q.agg)  # noqa: E731  decreasing utilisation
        parts.sort(key=order)
        total = sum(p.size for p in parts)
        while total > target:
            sel = self.select_partitions(parts)
            if sel is None:
                break
            p1, elig = sel
            for p2 in elig:
                p3 = self.merge(p1, p2)
                if p3 is None:
                    self.forbid(p1, p2)
                    continue
                parts = [q for q in parts if q is not p1 and q is not p2] + [self.stamp(p3)]
                parts.sort(key=order)
                total += p3.size - p1.size - p2.size
                break
        solution = rt.Solution(tuple(rt.Partition(p.size, tuple(sorted(p.tasks))) for p in parts))
        ok = total <= problem.sms
        return HeuristicResult(ok, solution, "" if ok else "no merge",
                               time.perf_counter() - t0, dict(self.stats))


@known_options
def init_partitions(problem: rt.RealtimeProblem) -> list[rt.Partition] | None:
    """Sec. 5.1: one Lemma-2-sized partition per task (``None`` if a task cannot fit).

    Examples
    --------
    >>> from instances import realtime as rt
    >>> t = rt.Task("k", 100, 75, "compute", 300, 6, 360, 7.2)
    >>> init_partitions(rt.RealtimeProblem((t,), 68))
    [Partition(size=5, tasks=(0,))]
    """
    out = []
    for i in range(problem.n):  # no Allocator: its n-bit task masks would make this quadratic
        m = rt.lemma2_min_size(problem, i)
        if m is None:
            return None
        out.append(rt.Partition(m, (i,)))
    return out


@known_options
def merge(problem: rt.RealtimeProblem, p1: rt.Partition, p2: rt.Partition,
          test: str = "demand") -> rt.Partition | None:
    """Algorithm 2 (binary search) on two partitions; ``None`` if no valid merge.

    Examples
    --------
    >>> from instances import realtime as rt
    >>> ts = (rt.Task("c", 100, 75, "compute", 60, 1.2, 72, 1.44),
    ...       rt.Task("m", 100, 75, "memory", 60, 6, 138, 13.8))
    >>> p = rt.RealtimeProblem(ts, 68)
    >>> merge(p, rt.Partition(1, (0,)), rt.Partition(1, (1,)))   # 61.2 + 66 > 75 on 1 SM
    >>> merge(p, rt.Partition(2, (0,)), rt.Partition(2, (1,)))   # 31.2 + 36 <= 75 on 2 SMs
    Partition(size=2, tasks=(0, 1))
    """
    al = Allocator(problem, test=test)
    r = al.merge(al.part(frozenset(p1.tasks), p1.size), al.part(frozenset(p2.tasks), p2.size))
    return None if r is None else rt.Partition(r.size, tuple(sorted(r.tasks)))


@known_options
def select_partitions(problem: rt.RealtimeProblem, par_list: list[rt.Partition],
                      relation: str = "sms", test: str = "demand"
                      ) -> tuple[rt.Partition, list[rt.Partition]] | None:
    """Algorithm 3 with an empty forbidden list (see :class:`Allocator` for the stateful one)."""
    al = Allocator(problem, relation=relation, test=test)
    sel = al.select_partitions([al.part(frozenset(p.tasks), p.size) for p in par_list])
    if sel is None:
        return None
    conv = lambda q: rt.Partition(q.size, tuple(sorted(q.tasks)))  # noqa: E731
    return conv(sel[0]), [conv(q) for q in sel[1]]


@known_options
def partition_and_allocate(problem: rt.RealtimeProblem, relation: str = "sms",
                           exhaustive: bool = False, test: str = "demand",
                           target: int | None = None) -> HeuristicResult:
    """Algorithm 1 (see :class:`Allocator`).

    Examples
    --------
    >>> from instances import realtime as rt
    >>> p = rt.generate(n=10, utilization=6, sms=68, seed=2)
    >>> partition_and_allocate(p, "bf", exhaustive=True).success
    True
    """
    return Allocator(problem, relation, exhaustive, test).run(target)


@known_options
def one_gpu(problem: rt.RealtimeProblem, test: str = "demand") -> HeuristicResult:
    """Baseline 1G: the whole GPU is one partition of ``M`` SMs holding every task.

    Examples
    --------
    >>> from instances import realtime as rt
    >>> one_gpu(rt.generate(n=10, utilization=2, sms=68, seed=0)).success
    True
    """
    t0 = time.perf_counter()
    tasks = list(range(problem.n))
    ok = rt.schedulable(problem, tasks, problem.sms, test)
    sol = rt.Solution((rt.Partition(problem.sms, tuple(tasks)),))
    return HeuristicResult(ok, sol, "" if ok else "1G", time.perf_counter() - t0, {"tests": 1})


@known_options
def one_gpu_fluid(problem: rt.RealtimeProblem) -> bool:
    """The utilisation bound ``sum C_i(T, 1)/T_i <= M`` with every conflict counted.

    Not a schedulability guarantee in the model above (a job on ``M`` SMs takes
    ``a/M + b``, not ``a/M``); it treats the GPU as ``M`` fluid processors. The
    paper's 1G curve (falls from total utilisation ~35 on 68 SMs) matches this
    bound, not EDF on one 68-SM partition, so the benchmark reports both.

    Examples
    --------
    >>> from instances import realtime as rt
    >>> one_gpu_fluid(rt.generate(n=50, utilization=30, sms=68, seed=0))
    True
    """
    return rt.utilization(problem, range(problem.n), 1) <= problem.sms


_ALGORITHMS: dict[str, Callable[..., HeuristicResult]] = {
    "1G": lambda p, test="demand", target=None: one_gpu(p, test),
    "SMS_ACT": lambda p, test="demand", target=None: partition_and_allocate(p, "sms", True, test, target),
    "SMS_INA": lambda p, test="demand", target=None: partition_and_allocate(p, "sms", False, test, target),
    "BF_ACT": lambda p, test="demand", target=None: partition_and_allocate(p, "bf", True, test, target),
    "BF_INA": lambda p, test="demand", target=None: partition_and_allocate(p, "bf", False, test, target),
}


@known_options
def run(problem: rt.RealtimeProblem, name: str, test: str = "demand",
        target: int | None = None) -> HeuristicResult:
    """Run a heuristic by its name in the paper's figures (the keys of :data:`METHODS`),
    with its statistics and the reason of a failure.

    Examples
    --------
    >>> from instances import realtime as rt
    >>> run(rt.generate(n=10, utilization=6, seed=1), "BF_INA").success
    True
    """
    try:
        fn = _ALGORITHMS[name]
    except KeyError:
        raise OptionError(f"unknown heuristic {name!r}; use one of {list(_ALGORITHMS)}") from None
    return fn(problem, test=test, target=target)


def _method(name: str) -> Callable[..., rt.Solution | None]:
    def method(problem: rt.RealtimeProblem, test: str = "demand", target: int | None = None) -> rt.Solution | None:
        res = run(problem, name, test, target)
        return res.solution if res.success else None

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The {name} heuristic's partitioning, or ``None`` when it fits no partitioning in ``M`` SMs."
    return method


#: Display name (the paper's figures) -> ``method(problem, test="demand", target=None)``
#: returning a partitioning that passes :func:`instances.realtime.check`, or ``None``
#: when the heuristic fits none in ``M`` SMs (an outcome the paper counts, not an error).
#: :func:`run` gives the same heuristics with statistics.
METHODS: dict[str, Callable[..., rt.Solution | None]] = {name: _method(name) for name in _ALGORITHMS}
