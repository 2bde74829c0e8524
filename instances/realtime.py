"""Contention-aware real-time GPU partitioning (partitioning paper: Zahaf et al.).

A GPU has ``M`` streaming multiprocessors (SMs). Periodic (sporadic) kernels,
the *tasks*, are allocated to *partitions*: disjoint sets of SMs. Every job of
a task runs on all SMs of its partition, so a partition of size ``m`` is a
uniprocessor whose task execution times depend on ``m`` and on *conflicts*.

Model (Sec. 3.3, 4.1, 4.2)
--------------------------
- Task ``tau_i = (T_i, D_i, type_i, C^c_i(m), C^n_i(m))`` with
  ``C^n_i(m) = a^n_i / m + b^n_i`` (no conflict) and ``C^c_i(m) = a^c_i / m + b^c_i``
  (conflict). Deadlines are constrained: ``0 < D_i <= T_i``.
- Conflict rule (Sec. 4.2): a task is *in conflict* when at least one other task
  of its type (``compute`` or ``memory``) shares its partition; it then runs
  ``C^c_i(|P|)``, otherwise ``C^n_i(|P|)``.
- The scheduling policy inside a partition is left open by the paper (Sec. 5.5).
  Here it is preemptive EDF on each partition. :func:`demand_test` is the exact
  processor-demand test for constrained deadlines (checked up to the
  hyperperiod, the ``theta(M N H)`` of Sec. 5), :func:`density_test` the cheap
  sufficient test ``sum C_i / D_i <= 1``.

Generator (Sec. 7.1): task types from ``prm``; utilisations by UUniFast-Discard;
periods drawn from :data:`PERIODS` (divisors of 4000 from 50 to 4000, so every
hyperperiod divides 4000) and raised while the base execution time is below
``min_exec``; ``D = 0.75 T``; ``a_i = u_i T_i``, ``b_i = 0.02 a_i`` (compute) or
``0.1 a_i`` (memory), ``C_i = k_i (a_i / |P| + b_i)`` with ``k = 1.2`` (compute)
or ``2.3`` (memory) under conflict and ``k = 1`` otherwise.

Examples
--------
>>> from instances import realtime as rt
>>> p = rt.generate(n=10, utilization=8.0, sms=68, seed=1)
>>> len(p.tasks), p.sms
(10, 68)
>>> sol = rt.Solution((rt.Partition(68, tuple(range(10))),))
>>> isinstance(rt.check(p, sol), list)
True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from instances.errors import OptionError
from instances import console, files, options
from instances.options import typed
from instances.realtime_edf import REL_TOL as _REL
from instances.realtime_edf import RealtimeError, demand_test, density_test, hyperperiod, simulate_edf

__all__ = [
    "COMPUTE", "MEMORY", "TYPES", "PERIODS", "B_FACTOR", "K_CONFLICT",
    "Task", "RealtimeProblem", "Partition", "Solution",
    "in_conflict", "wcets", "utilization", "demand_test", "density_test",
    "schedulable", "lemma1_unschedulable", "lemma2_min_size", "hyperperiod",
    "uunifast_discard", "generate", "simulate_edf", "check",
    "scheduled_utilization", "utilization_bounds", "efficiency",
    "load", "save", "from_dict",
]

COMPUTE = "compute"
MEMORY = "memory"
TYPES = (COMPUTE, MEMORY)

#: Sec. 7.1 period list. The paper only says "from 50 to 4000, chosen for
#: tractable hyperperiods"; the divisors of 4000 in that range make every
#: hyperperiod divide 4000.
PERIODS = (50, 80, 100, 125, 160, 200, 250, 400, 500, 800, 1000, 2000, 4000)
#: Sec. 7.1: b_i = B_FACTOR[type] * a_i (the part that does not profit from parallelism).
B_FACTOR = {COMPUTE: 0.02, MEMORY: 0.1}
#: Sec. 7.1: execution-time inflation k_i under conflict.
K_CONFLICT = {COMPUTE: 1.2, MEMORY: 2.3}


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Task:
    """A periodic GPU kernel (Sec. 4.2).

    Attributes
    ----------
    name
        Unique name.
    period, deadline
        ``T`` and constrained relative deadline ``D`` (``0 < D <= T``).
    kind
        ``"compute"`` or ``"memory"`` (the type ``M_i`` of Sec. 4.2).
    a_n, b_n
        ``C^n(m) = a_n / m + b_n``: execution time without conflict (Sec. 3.3).
    a_c, b_c
        ``C^c(m) = a_c / m + b_c``: execution time with conflict;
        ``a_c >= a_n`` and ``b_c >= b_n`` (interference never speeds a kernel up).

    Examples
    --------
    >>> t = Task("k", 100, 75, "memory", a_n=10, b_n=1, a_c=23, b_c=2.3)
    >>> t.wcet(2, conflict=False), t.wcet(2, conflict=True)
    (6.0, 13.8)
    """

    name: str
    period: float
    deadline: float
    kind: str
    a_n: float
    b_n: float
    a_c: float
    b_c: float

    def wcet(self, m: int, conflict: bool) -> float:
        """Execution time on a partition of ``m`` SMs (Sec. 4.2 case formula)."""
        if conflict:
            return self.a_c / m + self.b_c
        return self.a_n / m + self.b_n

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "period": self.period, "deadline": self.deadline,
                "type": self.kind, "a_n": self.a_n, "b_n": self.b_n,
                "a_c": self.a_c, "b_c": self.b_c}


#: Largest period, deadline or execution-time coefficient a task may have.
MAX_TIME = 1e12


def _validate_task(t: Task, source: str | None) -> None:
    def bad(msg: str, fld: str) -> RealtimeError:
        return RealtimeError(msg, source=source, task=t.name, field=fld)

    for fld in ("period", "deadline", "a_n", "b_n", "a_c", "b_c"):
        v = getattr(t, fld)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise bad(f"must be a finite number, got {v!r}", fld)
        if abs(v) > MAX_TIME:
            raise bad(f"must be at most {MAX_TIME:g} (the utilisation and demand sums overflow or lose the "
                      f"task's share beyond it; use other units), got {v!r}", fld)
    if t.period <= 0:
        raise bad("must be > 0", "period")
    if not 0 < t.deadline <= t.period:
        raise bad(f"must satisfy 0 < deadline <= period ({t.period}) (constrained deadlines)",
                  "deadline")
    if t.kind not in TYPES:
        raise bad(f"must be one of {TYPES}, got {t.kind!r}", "type")
    if t.a_n <= 0:
        raise bad("must be > 0", "a_n")
    if t.b_n < 0:
        raise bad("must be >= 0", "b_n")
    if t.a_c < t.a_n:
        raise bad("must be >= a_n (conflict never speeds a kernel up)", "a_c")
    if t.b_c < t.b_n:
        raise bad("must be >= b_n (conflict never speeds a kernel up)", "b_c")


@dataclass(frozen=True)
class RealtimeProblem:
    """A task set and a GPU of ``sms`` SMs (Sec. 4).

    Examples
    --------
    >>> t = Task("k", 100, 75, "compute", 10, 0.2, 12, 0.24)
    >>> RealtimeProblem((t,), sms=4).n
    1
    """

    tasks: tuple[Task, ...]
    sms: int = 68
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if isinstance(self.sms, bool) or not isinstance(self.sms, (int, np.integer)) or self.sms < 1:
            raise RealtimeError(f"must be a positive integer, got {self.sms!r}",
                                source=self.source, field="sms")
        object.__setattr__(self, "sms", int(self.sms))
        if not self.tasks:
            raise RealtimeError("a task set needs at least one task", source=self.source,
                                field="tasks")
        seen: set[str] = set()
        for t in self.tasks:
            if not isinstance(t, Task):
                raise RealtimeError(f"not a Task: {t!r}", source=self.source, field="tasks")
            if t.name in seen:
                raise RealtimeError("duplicate task name", source=self.source, task=t.name,
                                    field="name")
            seen.add(t.name)
            _validate_task(t, self.source)

    @property
    def n(self) -> int:
        return len(self.tasks)

    # Arrays used by the fast tests (heuristics call these thousands of times).
    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        ts = self.tasks
        return {
            "T": np.array([t.period for t in ts], float),
            "D": np.array([t.deadline for t in ts], float),
            "an": np.array([t.a_n for t in ts], float),
            "bn": np.array([t.b_n for t in ts], float),
            "ac": np.array([t.a_c for t in ts], float),
            "bc": np.array([t.b_c for t in ts], float),
            "mem": np.array([t.kind == MEMORY for t in ts], bool),
        }

    @cached_property
    def hyperperiod(self) -> float | None:
        """Hyperperiod of all periods (``None`` if not a tractable rational)."""
        return hyperperiod([t.period for t in self.tasks])

    def to_dict(self) -> dict[str, Any]:
        return {"sms": self.sms, "tasks": [t.to_dict() for t in self.tasks]}


@dataclass(frozen=True)
class Partition:
    """A partition of ``size`` SMs and the task indices allocated to it."""

    size: int
    tasks: tuple[int, ...]

    def to_dict(self, problem: RealtimeProblem | None = None) -> dict[str, Any]:
        names = [problem.tasks[i].name for i in self.tasks] if problem else list(self.tasks)
        return {"size": self.size, "tasks": names}


@dataclass(frozen=True)
class Solution:
    """A partitioning of the SMs and an allocation of tasks to partitions.

    Examples
    --------
    >>> Solution((Partition(3, (0, 1)), Partition(2, (2,)))).total_sms
    5
    """

    partitions: tuple[Partition, ...]

    @property
    def total_sms(self) -> int:
        return sum(p.size for p in self.partitions)

    def to_json(self, problem: RealtimeProblem | None = None) -> str:
        return json.dumps({"partitions": [p.to_dict(problem) for p in self.partitions],
                           "total_sms": self.total_sms})

    @classmethod
    def from_json(cls, text: str, problem: RealtimeProblem | None = None, *,
                  source: str | None = None) -> "Solution":
        """Read a solution written by :meth:`to_json`; tasks are names when ``problem`` is given,
        indices otherwise. A malformed solution raises :class:`RealtimeError`."""
        data = files.parse_json(text, source, RealtimeError)
        if not isinstance(data, dict) or not isinstance(data.get("partitions"), list):
            raise RealtimeError("expected an object with a 'partitions' list", source=source,
                                field="partitions")
        files.no_unknown_fields(data, ("partitions", "total_sms"), source=source, error=RealtimeError)
        index = {t.name: i for i, t in enumerate(problem.tasks)} if problem else None
        parts = []
        for k, p in enumerate(data["partitions"]):
            where = f"partitions.{k}"
            if not isinstance(p, dict) or not isinstance(p.get("tasks"), list) or "size" not in p:
                raise RealtimeError("each partition needs a 'size' and a 'tasks' list", source=source,
                                    field=where)
            files.no_unknown_fields(p, ("size", "tasks"), source=source, where=where, error=RealtimeError)
            ids = []
            for x in p["tasks"]:
                if index is None:
                    ids.append(files.integer(x, lo=0, source=source, field=f"{where}.tasks",
                                             error=RealtimeError))
                elif isinstance(x, str) and x in index:
                    ids.append(index[x])
                else:
                    raise RealtimeError(f"unknown task {x!r}", source=source, field=f"{where}.tasks")
            size = files.integer(p["size"], source=source, field=f"{where}.size", error=RealtimeError)
            parts.append(Partition(size, tuple(ids)))
        return cls(tuple(parts))


# --------------------------------------------------------------------------- execution times


def in_conflict(is_memory: np.ndarray) -> np.ndarray:
    """Conflict flags of the tasks of one partition (Sec. 4.2).

    A task is in conflict iff another task of its type shares the partition.

    Examples
    --------
    >>> in_conflict(np.array([True, False, False])).tolist()   # 1 memory, 2 compute
    [False, True, True]
    """
    n_mem = int(is_memory.sum())
    n_cmp = len(is_memory) - n_mem
    return np.where(is_memory, n_mem >= 2, n_cmp >= 2)


@typed
def wcets(problem: RealtimeProblem, tasks: Sequence[int], m: int) -> np.ndarray:
    """Execution times ``C_i(T(P), |P|)`` of ``tasks`` sharing a partition of ``m`` SMs.

    Examples
    --------
    >>> t = [Task(f"t{i}", 100, 75, k, 10, 1, 20, 2) for i, k in enumerate(["compute"] * 2)]
    >>> wcets(RealtimeProblem(tuple(t), 4), [0, 1], 2).tolist()   # both in conflict
    [12.0, 12.0]
    """
    a = problem.arrays
    idx = np.asarray(tasks, dtype=int)
    conf = in_conflict(a["mem"][idx])
    return np.where(conf, a["ac"][idx] / m + a["bc"][idx], a["an"][idx] / m + a["bn"][idx])


@typed
def utilization(problem: RealtimeProblem, tasks: Sequence[int], m: int = 1) -> float:
    """Conflict-aware utilisation ``sum_i C_i(T(P), m) / T_i`` of a would-be partition.

    With ``m = 1`` it is the SM-workload used by Lemma 1, the efficiency metric
    (Sec. 7.2) and the best-fit order of Definition 4.
    """
    idx = np.asarray(tasks, dtype=int)
    return float((wcets(problem, idx, m) / problem.arrays["T"][idx]).sum())


# --------------------------------------------------------------------------- schedulability

TESTS = ("demand", "density")


@typed
def schedulable(problem: RealtimeProblem, tasks: Sequence[int], m: int,
                test: str = "demand") -> bool:
    """Is ``tasks`` EDF-schedulable on one partition of ``m`` SMs?

    Parameters
    ----------
    test
        ``"demand"`` (exact, :func:`demand_test`) or ``"density"`` (sufficient).

    Examples
    --------
    >>> p = generate(n=4, utilization=2.0, sms=8, seed=0)
    >>> schedulable(p, [0, 1, 2, 3], 8, "density") <= schedulable(p, [0, 1, 2, 3], 8, "demand")
    True
    """
    idx = np.asarray(tasks, dtype=int)
    a = problem.arrays
    C = wcets(problem, idx, m)
    if test == "density":
        return density_test(C, a["D"][idx])
    if test == "demand":
        return demand_test(C, a["D"][idx], a["T"][idx], problem.hyperperiod)
    raise OptionError(f"unknown schedulability test {test!r}; use one of {TESTS}")


@typed
def lemma1_unschedulable(problem: RealtimeProblem) -> bool:
    """Lemma 1 (necessary test): the task set is NOT schedulable if ``sum C^n_i(1)/T_i > M``.

    It holds in this model because a job of ``tau_i`` on ``m`` SMs occupies
    ``m C_i(m) = a_i + b_i m >= C^n_i(1)`` SM-time units.

    Examples
    --------
    >>> lemma1_unschedulable(generate(n=10, utilization=5.0, sms=68, seed=0))
    False
    """
    a = problem.arrays
    return float(np.sum((a["an"] + a["bn"]) / a["T"])) > problem.sms * (1 + _REL)


@typed
def lemma2_min_size(problem: RealtimeProblem, i: int) -> int | None:
    """Lemma 2: the smallest ``m in 1..M`` with ``C^n_i(m) <= D_i`` (``None`` if none).

    A lone task is never in conflict, and on its own partition EDF meets its
    deadlines iff ``C <= D`` (constrained deadlines).

    Examples
    --------
    >>> t = Task("k", 100, 75, "compute", a_n=300, b_n=6, a_c=360, b_c=7.2)
    >>> lemma2_min_size(RealtimeProblem((t,), sms=68), 0)   # 300/m + 6 <= 75
    5
    """
    t = problem.tasks[i]
    slack = t.deadline * (1 + _REL) - t.b_n
    if slack <= 0:
        return None
    m = max(1, math.ceil(t.a_n / slack - 1e-9))
    while m > 1 and t.wcet(m - 1, False) <= t.deadline * (1 + _REL):
        m -= 1  # guard against rounding in the closed form
    while m <= problem.sms and t.wcet(m, False) > t.deadline * (1 + _REL):
        m += 1
    return m if m <= problem.sms else None


# --------------------------------------------------------------------------- generator


def uunifast_discard(n: int, total: float, caps: np.ndarray, rng: np.random.Generator,
                     max_tries: int = 1000) -> np.ndarray:
    """UUniFast-Discard (Emberson et al. 2010, ref. [5]): ``n`` utilisations summing to
    ``total``, uniformly distributed; vectors with ``u_i > caps[i]`` are discarded.

    Examples
    --------
    >>> u = uunifast_discard(5, 3.0, np.full(5, 1.0), np.random.default_rng(0))
    >>> round(float(u.sum()), 9), bool((u <= 1).all())
    (3.0, True)
    """
    for _ in range(max_tries):
        u = np.empty(n)
        s = total
        for i in range(n - 1):
            nxt = s * rng.random() ** (1.0 / (n - 1 - i))
            u[i] = s - nxt
            s = nxt
        u[n - 1] = s
        if np.all(u <= caps):
            return u
    raise RealtimeError(f"UUniFast-Discard found no task set with total utilisation {total} "
                        f"within the per-task caps after {max_tries} tries", field="utilization")


#: Most tasks of a generated set (``instances.console.MAX_TASKS``); its periods and execution times
#: stay within the loader's :data:`MAX_TIME`.
MAX_GENERATE_TASKS = console.MAX_TASKS


def generate(n: int, utilization: float, sms: int = 68, prm: float = 0.5, seed: int = 0,
             periods: Sequence[float] = PERIODS, deadline_factor: float = 0.75,
             min_exec: float = 1.0) -> RealtimeProblem:
    """Random task set of Sec. 7.1.

    1. Type: draw ``alpha ~ U(0,1)``; memory-intensive iff ``alpha <= prm``.
    2. Utilisations ``u_i`` by UUniFast-Discard with total ``utilization``; a
       vector is discarded when some task could not meet its deadline alone on
       the whole GPU (``u_i (1/M + b/a) > D/T``), the only per-task bound that
       makes sense when one task may use many SMs.
    3. Period: uniform from ``periods``; raised to the next period of the list
       while the base execution time ``a_i = u_i T_i`` is below ``min_exec``
       (our reading of "a reasonable execution time"; the ratio ``C/T`` does
       not depend on ``T`` in this model, so only the absolute size can be
       unreasonable), up to the largest period.
    4. ``D = deadline_factor * T``; ``a^n = a``, ``b^n = B_FACTOR a``,
       ``a^c = k a``, ``b^c = k b`` with ``k = K_CONFLICT[type]``.

    Examples
    --------
    >>> p = generate(n=50, utilization=40, sms=68, seed=3)
    >>> round(sum(t.a_n / t.period for t in p.tasks), 6)
    40.0
    >>> p == generate(n=50, utilization=40, sms=68, seed=3)
    True
    """
    n = options.integer(n, "n", lo=1, hi=MAX_GENERATE_TASKS)
    sms = options.integer(sms, "sms", lo=1, hi=MAX_SMS)
    utilization = options.number(utilization, "utilization", lo=0.0, hi=float(sms) * n, above=True)
    prm = options.number(prm, "prm", lo=0.0, hi=1.0)
    deadline_factor = options.number(deadline_factor, "deadline_factor", lo=0.0, hi=1.0, above=True)
    min_exec = options.number(min_exec, "min_exec", lo=0.0, hi=MAX_TIME, above=True)
    if isinstance(periods, (str, bytes)) or not isinstance(periods, Sequence) or not periods:
        raise OptionError(f"must be a non-empty list of periods, got {periods!r}", field="periods")
    periods = sorted(options.number(p, "periods", lo=0.0, hi=MAX_TIME, above=True) for p in periods)
    seed = options.seed(seed)
    rng = np.random.default_rng(seed)
    kinds = np.where(rng.random(n) <= prm, MEMORY, COMPUTE)
    beta = np.array([B_FACTOR[k] for k in kinds])
    caps = deadline_factor / (1.0 / sms + beta)
    if utilization > caps.sum():
        # UUniFast-Discard would discard every vector: refuse now rather than after its tries
        raise OptionError(f"{utilization:g} exceeds {caps.sum():.6g}, the most {n} tasks of these types can "
                          f"have on {sms} SMs (each at most D/T / (1/M + b/a)); UUniFast-Discard would discard every "
                          "draw", field="utilization")
    u = uunifast_discard(int(n), float(utilization), caps, rng)
    picks = rng.integers(0, len(periods), size=n)
    tasks = []
    for i in range(n):
        j = int(picks[i])
        while u[i] * periods[j] < min_exec and j + 1 < len(periods):
            j += 1
        T = periods[j]
        a = float(u[i] * T)
        b = float(B_FACTOR[kinds[i]] * a)
        k = K_CONFLICT[kinds[i]]
        tasks.append(Task(f"t{i}", T, deadline_factor * T, str(kinds[i]), a, b, k * a, k * b))
    return RealtimeProblem(tuple(tasks), sms=int(sms), source=f"generate(seed={seed})")


# --------------------------------------------------------------------------- checker


@typed
def check(problem: RealtimeProblem, solution: Solution, test: str = "edf") -> list[str]:
    """Independent feasibility check of a partitioning; ``[]`` means feasible.

    Checks that partition sizes are positive integers summing to at most
    ``M``, that every task is allocated exactly once, and that every partition
    is schedulable with conflict-aware execution times (Sec. 4.2):

    - ``test="edf"`` (default): EDF simulation of one hyperperiod
      (:func:`simulate_edf`), the ground truth for EDF and independent of
      :func:`demand_test`; falls back to the demand test when the hyperperiod
      is too long to simulate.
    - ``test="density"``: also require ``sum C_i / D_i <= 1`` per partition
      (what the exact models guarantee).

    Examples
    --------
    >>> p = generate(n=3, utilization=1.0, sms=8, seed=0)
    >>> check(p, Solution((Partition(9, (0, 1, 2)),)))
    ['partitions use 9 SMs > M = 8']
    """
    if test not in ("edf", "density"):
        raise OptionError(f"unknown check test {test!r}")
    problems: list[str] = []
    seen: dict[int, int] = {}
    for k, part in enumerate(solution.partitions):
        if not isinstance(part.size, (int, np.integer)) or part.size < 1:
            problems.append(f"partition {k}: size {part.size!r} is not a positive integer")
        if not part.tasks:
            problems.append(f"partition {k}: no task allocated")
        for i in part.tasks:
            if not 0 <= i < problem.n:
                problems.append(f"partition {k}: unknown task index {i}")
            elif i in seen:
                problems.append(f"task {problem.tasks[i].name}: allocated to partitions "
                                f"{seen[i]} and {k}")
            else:
                seen[i] = k
    for i, t in enumerate(problem.tasks):
        if i not in seen:
            problems.append(f"task {t.name}: not allocated")
    total = sum(int(p.size) for p in solution.partitions if isinstance(p.size, (int, np.integer)))
    if total > problem.sms:
        problems.append(f"partitions use {total} SMs > M = {problem.sms}")
    if problems:
        return problems
    for k, part in enumerate(solution.partitions):
        # Recompute conflicts from the types directly rather than via wcets().
        kinds = [problem.tasks[i].kind for i in part.tasks]
        C, D, T = [], [], []
        for i in part.tasks:
            t = problem.tasks[i]
            conflict = kinds.count(t.kind) >= 2
            C.append(t.wcet(part.size, conflict))
            D.append(t.deadline)
            T.append(t.period)
        if test == "density" and sum(c / d for c, d in zip(C, D)) > 1 + _REL:
            problems.append(f"partition {k}: density {sum(c / d for c, d in zip(C, D)):.6f} > 1")
            continue
        if sum(c / t for c, t in zip(C, T)) > 1 + _REL:
            problems.append(f"partition {k}: utilisation > 1")
            continue
        try:
            miss = simulate_edf(C, D, T)
        except RealtimeError:
            ok = demand_test(np.array(C), np.array(D), np.array(T))
            miss = None if ok else (-1, float("nan"))
        if miss is not None:
            i, r = miss
            name = problem.tasks[part.tasks[i]].name if i >= 0 else "?"
            problems.append(f"partition {k}: task {name} misses its deadline "
                            f"(job released at {r}) under EDF on {part.size} SMs")
    return problems


# --------------------------------------------------------------------------- metrics (Sec. 7.2)


@typed
def scheduled_utilization(problem: RealtimeProblem, solution: Solution) -> float:
    """Scheduled workload: ``sum_i C_i(T(P_i), 1) / T_i`` with each task's conflict status."""
    return sum(utilization(problem, p.tasks, 1) for p in solution.partitions)


@typed
def utilization_bounds(problem: RealtimeProblem) -> tuple[float, float]:
    """(best, worst) workload: every task without / with conflict (Fig. 6 bounds)."""
    a = problem.arrays
    return (float(np.sum((a["an"] + a["bn"]) / a["T"])),
            float(np.sum((a["ac"] + a["bc"]) / a["T"])))


@typed
def efficiency(problem: RealtimeProblem, solution: Solution) -> float:
    """Clustering efficiency (Fig. 6/8): ``(worst - W) / (worst - best)`` in ``[0, 1]``.

    1 when no task is in conflict, 0 when all are (as in 1G).
    """
    best, worst = utilization_bounds(problem)
    if worst - best <= 0:
        return 1.0
    return (worst - scheduled_utilization(problem, solution)) / (worst - best)


# --------------------------------------------------------------------------- I/O


#: Most SMs of a GPU read from a file (the H100 has 132). Heuristics and
#: exact models loop over partition sizes 1..M, so M bounds their work.
MAX_SMS = 1024

_TASK_FIELDS = ("name", "period", "deadline", "type", "a_n", "b_n", "a_c", "b_c")


def from_dict(data: Any, source: str | None = None) -> RealtimeProblem:
    """Build a problem from ``{"sms": M, "tasks": [{"name", "period", "deadline",
    "type", "a_n", "b_n", "a_c", "b_c"}]}``; ``deadline`` defaults to the period.

    Fields are read strictly (an unknown field, a number given as text, a
    name that is not a string are errors) and ``sms`` is at most
    :data:`MAX_SMS`.

    Examples
    --------
    >>> from_dict({"sms": 8, "tasks": [{"name": "k", "period": 10, "type": "compute", "a_n": 4}]}).n
    1
    >>> from_dict({"sms": 8, "tasks": [{"name": "k", "period": "10", "type": "compute", "a_n": 4}]})
    Traceback (most recent call last):
    ...
    instances.realtime_edf.RealtimeError: task k: field period: must be a number, got '10'
    """
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise RealtimeError("expected an object with a 'tasks' list", source=source,
                            field="tasks")
    files.no_unknown_fields(data, ("sms", "tasks"), source=source, error=RealtimeError)
    sms = files.integer(data.get("sms", 68), lo=1, hi=MAX_SMS, source=source, field="sms", error=RealtimeError)
    tasks = []
    for k, td in enumerate(data["tasks"]):
        if not isinstance(td, dict):
            raise RealtimeError("task entry must be an object", source=source,
                                field=f"tasks.{k}")
        name = files.name(td.get("name", f"t{k}"), source=source, task=f"#{k}", error=RealtimeError)
        files.no_unknown_fields(td, _TASK_FIELDS, source=source, task=name, error=RealtimeError)
        for fld in ("period", "type", "a_n"):
            if fld not in td:
                raise RealtimeError("missing", source=source, task=name, field=fld)

        def num(fld: str, default: Any = None) -> float:
            return files.real(td.get(fld, default), source=source, task=name, field=fld, error=RealtimeError)

        kind = files.text(td["type"], source=source, task=name, field="type", error=RealtimeError)
        period, a_n = num("period"), num("a_n")
        b_n = num("b_n", 0.0)
        tasks.append(Task(name, period, num("deadline", period), kind, a_n, b_n, num("a_c", a_n),
                          num("b_c", b_n)))
    return RealtimeProblem(tuple(tasks), sms=sms, source=source)


def load(path: str | Path) -> RealtimeProblem:
    """Read a problem JSON file (see :func:`from_dict`)."""
    return from_dict(files.read_json(path, RealtimeError), source=str(path))


@typed
def save(problem: RealtimeProblem, path: str | Path) -> None:
    """Write a problem JSON file."""
    Path(path).write_text(json.dumps(problem.to_dict(), indent=1))
