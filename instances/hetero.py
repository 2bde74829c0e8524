"""Weighted-tardiness scheduling on heterogeneous GPUs (the heterogeneous-GPU scheduling paper).

Problem data, validation, JSON load/save, a seeded generator, the OR-Library
weighted-tardiness reader, the schedule type, the independent checker and the
performance metrics of the heterogeneous-GPU scheduling paper.

Model (heterogeneous-GPU scheduling paper, Sec. I.B): task ``i`` has workload ``L_i``, memory demand
``m_i`` (GB), deadline ``d_i``, weight ``w_i`` and arrival ``a_i``; GPU ``j``
has speed ``v_j`` (workload per time unit) and memory ``M_j`` (GB). Task
``i`` runs on GPU ``j`` for ``p_ij = L_i / v_j`` time units, without
preemption, only if ``m_i <= M_j`` (eq. 3), never before ``a_i`` (eq. 5),
one task at a time per GPU (eq. 6). The objective is the total weighted
tardiness ``sum_i w_i max(0, c_i - d_i)`` (eq. 1).

A task whose memory demand exceeds every GPU's memory cannot be scheduled at
all (the MILP (1)-(6) would be infeasible). We keep such tasks in the problem,
list them in :attr:`HeteroProblem.unfit`, and every schedule must report them
in :attr:`Schedule.unscheduled`; the objective and metrics are over the
scheduled tasks.

Examples
--------
>>> problem = generate(n=6, gpus=("T4", "A100-80GB"), seed=0)
>>> problem.n, problem.m
(6, 2)
>>> wt = orlib_wt40(1)          # OR-Library wt40 instance 1, one GPU
>>> wt.n, wt.m, orlib_wt40_optimum(1)
(40, 1, 913)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from instances import files
from instances.errors import InstanceError

__all__ = [
    "Task", "GPU", "HeteroProblem", "Assignment", "Schedule", "Metrics",
    "GPU_MODELS", "generate", "load", "save", "from_dict",
    "orlib_wt40", "orlib_wt40_all", "orlib_wt40_optimum", "parse_orlib", "read_orlib",
    "read_orlib_values", "write_orlib", "generate_orlib", "generate_orlib_set", "ORLIB_TF", "ORLIB_RDD",
    "check", "metrics", "evaluate_sequences", "weighted_tardiness",
]

#: Absolute tolerance for time comparisons in the checker (time units).
TOL = 1e-6


# ---------------------------------------------------------------------------
# data types
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """One task of the heterogeneous-GPU scheduling paper Sec. I.B (workload, memory, deadline, weight, arrival)."""

    name: str
    workload: float
    memory: float = 0.0
    deadline: float = 0.0
    weight: float = 1.0
    arrival: float = 0.0


@dataclass(frozen=True)
class GPU:
    """One GPU of the cluster: speed ``v_j`` (workload per time unit) and memory ``M_j`` (GB)."""

    name: str
    speed: float
    memory: float = math.inf
    model: str = ""


def _check_number(value: Any, *, source, task, field, positive=False, nonneg=False,
                  allow_inf=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InstanceError(f"must be a number, got {value!r}", source=source, task=task, field=field)
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise InstanceError(f"must be finite, got {value!r}", source=source, task=task, field=field)
    if positive and not value > 0:
        raise InstanceError(f"must be > 0, got {value!r}", source=source, task=task, field=field)
    if nonneg and value < 0:
        raise InstanceError(f"must be >= 0, got {value!r}", source=source, task=task, field=field)
    return value


#: Largest completion time and weighted tardiness a problem may reach (far
#: below the float range, so sums, scalings and penalties stay finite).
MAX_TOTAL = 1e300


@dataclass(frozen=True)
class HeteroProblem:
    """A heterogeneous-GPU total-weighted-tardiness instance (heterogeneous-GPU scheduling paper, Sec. I).

    Parameters
    ----------
    tasks
        The tasks; names must be unique.
    gpus
        The GPUs; names must be unique, at least one.
    name
        A label (file name, OR-Library instance number, generator settings).
    source
        Where the data came from, used in error messages.

    Raises
    ------
    InstanceError
        On any invalid field (workload <= 0, negative memory, arrival or
        weight, deadline not finite, duplicate names, no GPU ...).

    Examples
    --------
    >>> pb = HeteroProblem(tasks=(Task("a", 4, 8, 5, 2, 0),), gpus=(GPU("g", 2.0, 16),))
    >>> float(pb.p[0, 0])
    2.0
    """

    tasks: tuple[Task, ...]
    gpus: tuple[GPU, ...]
    name: str = ""
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "gpus", tuple(self.gpus))
        src = self.source
        if not self.gpus:
            raise InstanceError("the cluster needs at least one GPU", source=src, field="gpus")
        seen = set()
        for g in self.gpus:
            if not isinstance(g, GPU):
                raise InstanceError(f"not a GPU: {g!r}", source=src, field="gpus")
            if g.name in seen:
                raise InstanceError(f"duplicate GPU name {g.name!r}", source=src, field="gpus")
            seen.add(g.name)
            _check_number(g.speed, source=src, task=None, field=f"gpus.{g.name}.speed", positive=True)
            _check_number(g.memory, source=src, task=None, field=f"gpus.{g.name}.memory",
                          nonneg=True, allow_inf=True)
        seen = set()
        for t in self.tasks:
            if not isinstance(t, Task):
                raise InstanceError(f"not a Task: {t!r}", source=src, field="tasks")
            if t.name in seen:
                raise InstanceError("duplicate task name", source=src, task=t.name, field="name")
            seen.add(t.name)
            _check_number(t.workload, source=src, task=t.name, field="workload", positive=True)
            _check_number(t.memory, source=src, task=t.name, field="memory", nonneg=True)
            _check_number(t.deadline, source=src, task=t.name, field="deadline")
            _check_number(t.weight, source=src, task=t.name, field="weight", nonneg=True)
            _check_number(t.arrival, source=src, task=t.name, field="arrival", nonneg=True)
        if self.tasks:
            # every completion time is at most the last arrival plus all processing on the slowest
            # GPU; a tardiness at most that minus the earliest deadline (when negative)
            slowest = min(g.speed for g in self.gpus)
            horizon = max(t.arrival for t in self.tasks) + sum(t.workload / slowest for t in self.tasks)
            late = horizon + max(0.0, -min(t.deadline for t in self.tasks))
            worst = sum(t.weight for t in self.tasks) * late
            if not (horizon <= MAX_TOTAL and worst <= MAX_TOTAL):
                raise InstanceError(f"numbers too large: completion times reach {horizon:.3g} and the weighted "
                                    f"tardiness {worst:.3g} (at most {MAX_TOTAL:.0e} each, so that every sum "
                                    "stays finite); express them in larger units", source=src, field="tasks")

    # -- derived arrays (numpy, index = position in tasks / gpus) ----------
    @property
    def n(self) -> int:
        return len(self.tasks)

    @property
    def m(self) -> int:
        return len(self.gpus)

    @cached_property
    def p(self) -> np.ndarray:
        """``p[i, j] = L_i / v_j`` (the heterogeneous-GPU scheduling paper, derived parameter)."""
        L = np.array([t.workload for t in self.tasks], dtype=float)
        v = np.array([g.speed for g in self.gpus], dtype=float)
        return L[:, None] / v[None, :]

    @cached_property
    def eligible(self) -> np.ndarray:
        """``eligible[i, j]``: task ``i`` fits GPU ``j``'s memory (eq. 3)."""
        mem = np.array([t.memory for t in self.tasks], dtype=float)
        cap = np.array([g.memory for g in self.gpus], dtype=float)
        return mem[:, None] <= cap[None, :]

    @cached_property
    def unfit(self) -> tuple[str, ...]:
        """Names of tasks that fit no GPU: they can never be scheduled."""
        return tuple(t.name for t, ok in zip(self.tasks, self.eligible.any(axis=1)) if not ok)

    @cached_property
    def arrival(self) -> np.ndarray:
        return np.array([t.arrival for t in self.tasks], dtype=float)

    @cached_property
    def deadline(self) -> np.ndarray:
        return np.array([t.deadline for t in self.tasks], dtype=float)

    @cached_property
    def weight(self) -> np.ndarray:
        return np.array([t.weight for t in self.tasks], dtype=float)

    @cached_property
    def index(self) -> dict[str, int]:
        """Task name -> position."""
        return {t.name: i for i, t in enumerate(self.tasks)}

    @cached_property
    def gpu_index(self) -> dict[str, int]:
        return {g.name: j for j, g in enumerate(self.gpus)}

    def to_dict(self) -> dict:
        def num(x):
            x = float(x)
            return int(x) if x.is_integer() else (None if math.isinf(x) else x)
        return {
            "name": self.name,
            "gpus": [{"name": g.name, "model": g.model, "speed": num(g.speed),
                      "memory": num(g.memory)} for g in self.gpus],
            "tasks": [{"name": t.name, "workload": num(t.workload), "memory": num(t.memory),
                       "deadline": num(t.deadline), "weight": num(t.weight),
                       "arrival": num(t.arrival)} for t in self.tasks],
        }


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------

_PROBLEM_FIELDS = ("name", "gpus", "tasks")
_GPU_FIELDS = ("name", "model", "speed", "memory")
_TASK_FIELDS = ("name", "workload", "memory", "deadline", "weight", "arrival")


def from_dict(data: Any, source: str | None = None) -> HeteroProblem:
    """Build a problem from its JSON form (see :func:`save`), validating every field.

    Fields are read strictly: an unknown field, a name that is not a string
    or a number given as text raises :class:`InstanceError` naming it. A GPU
    ``memory`` of ``null`` (or no ``memory``) means unlimited.

    Examples
    --------
    >>> from_dict({"gpus": [{"name": "g", "speed": 1}], "tasks": [{"name": "a", "workload": 3,
    ...            "deadline": 2}]}).p.tolist()
    [[3.0]]
    >>> from_dict({"gpus": [{"name": "g", "speed": "1"}], "tasks": []}, source="h.json")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: h.json: field gpus.g.speed: must be a number, got '1'
    """
    if not isinstance(data, dict):
        raise InstanceError("top level must be an object with 'gpus' and 'tasks'", source=source)
    files.no_unknown_fields(data, _PROBLEM_FIELDS, source=source)
    for key in ("gpus", "tasks"):
        if not isinstance(data.get(key), list):
            raise InstanceError(f"missing or not a list: {key!r}", source=source, field=key)
    gpus = []
    for k, g in enumerate(data["gpus"]):
        if not isinstance(g, dict):
            raise InstanceError("GPU entry must be an object", source=source, field=f"gpus[{k}]")
        name = files.name(g.get("name", f"g{k}"), source=source, field=f"gpus[{k}].name")
        files.no_unknown_fields(g, _GPU_FIELDS, source=source, where=f"gpus.{name}")
        if "speed" not in g:
            raise InstanceError("missing", source=source, field=f"gpus.{name}.speed")
        mem = g.get("memory", None)
        mem = math.inf if mem is None else files.real(mem, lo=0.0, source=source, field=f"gpus.{name}.memory")
        speed = files.real(g["speed"], positive=True, source=source, field=f"gpus.{name}.speed")
        model = files.text(g.get("model", ""), source=source, field=f"gpus.{name}.model")
        gpus.append(GPU(name, speed, mem, model))
    tasks = []
    for k, t in enumerate(data["tasks"]):
        if not isinstance(t, dict):
            raise InstanceError("task entry must be an object", source=source, field=f"tasks[{k}]")
        name = files.name(t.get("name", f"t{k}"), source=source, task=f"#{k}")
        files.no_unknown_fields(t, _TASK_FIELDS, source=source, task=name)
        vals = {}
        for key, default in (("workload", None), ("memory", 0.0), ("deadline", None),
                             ("weight", 1.0), ("arrival", 0.0)):
            if key not in t and default is None:
                raise InstanceError("missing", source=source, task=name, field=key)
            vals[key] = files.real(t.get(key, default), source=source, task=name, field=key)
        tasks.append(Task(name, **vals))
    label = files.text(data.get("name", ""), source=source, field="name")
    return HeteroProblem(tuple(tasks), tuple(gpus), name=label, source=source)


def load(path: str | Path) -> HeteroProblem:
    """Read a problem from a JSON file; bad content raises :class:`InstanceError` naming the file."""
    return from_dict(files.read_json(path), source=str(path))


def save(problem: HeteroProblem, path: str | Path) -> None:
    """Write ``problem`` as JSON (round-trips through :func:`load`)."""
    Path(path).write_text(json.dumps(problem.to_dict(), indent=1))


# ---------------------------------------------------------------------------
# generator
# ---------------------------------------------------------------------------

#: GPU models of the generator: (relative speed, memory GB). Speeds are rough
#: relative training throughputs (T4 = 1) from public benchmarks, rounded to
#: values whose reciprocals are short decimals (1, 2, 2.5, 5, 10), so that
#: ``p_ij = L_i / v_j`` with integer ``L_i`` is exact at resolution 0.1 and the
#: CP-SAT model needs no rounding.
GPU_MODELS: dict[str, tuple[float, float]] = {
    "T4": (1.0, 16.0),
    "L4": (2.0, 24.0),
    "V100": (2.5, 32.0),
    "A100-40GB": (5.0, 40.0),
    "A100-80GB": (5.0, 80.0),
    "H100": (10.0, 80.0),
}

#: Memory demands (GB) of the generator and their probabilities: most jobs are
#: small (inference, fine-tuning), a few need a large GPU.
MEMORY_LEVELS = (4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 40.0, 64.0, 80.0)
MEMORY_PROBS = (0.20, 0.20, 0.15, 0.15, 0.10, 0.08, 0.06, 0.04, 0.02)


def generate(n: int, gpus: Sequence[str] | int = ("T4", "V100", "A100-80GB"), *,
             tightness: float = 0.6, rdd: float = 0.6, load: float = 0.9,
             median_workload: float = 30.0, sigma: float = 0.8, seed: int = 0,
             unfit: int = 0) -> HeteroProblem:
    """Seeded random instance: a cluster of mixed GPU models and ``n`` tasks.

    Every draw uses ``numpy.random.default_rng(seed)`` in a fixed order, so a
    seed gives the same instance on any machine. Distributions:

    - cluster: ``gpus`` lists model names of :data:`GPU_MODELS`; an integer
      ``k`` draws ``k`` models uniformly from the table.
    - workload ``L_i`` (T4-seconds): lognormal with the given median and
      ``sigma``, rounded to an integer >= 1 (heavy-tailed job sizes).
    - memory ``m_i``: from :data:`MEMORY_LEVELS` with :data:`MEMORY_PROBS`,
      restricted to levels that fit the largest GPU (renormalised). ``unfit``
      extra tasks get twice the largest GPU memory (they fit nowhere).
    - arrivals: a Poisson process; inter-arrival times exponential with mean
      ``mean(L) / (load * sum_j v_j)`` (offered load ``load`` of the cluster),
      first arrival 0, rounded down to integers.
    - deadlines: the OR-Library scheme (Potts & Van Wassenhove) adapted to
      arrivals and a cluster: ``d_i = max(a_i + pmin_i, U[P(1-TF-RDD/2),
      P(1-TF+RDD/2)])`` rounded to an integer, where ``pmin_i`` is the
      fastest eligible run time (so no task is late by construction),
      ``P = sum_i L_i / (load sum_j v_j)`` the expected span of the arrivals
      (the fluid makespan stretched by the load), ``TF = tightness``
      (tardiness factor, higher = tighter) and ``RDD = rdd`` (relative range
      of due dates).
    - weights ``w_i``: integers uniform in [1, 10], as in the OR-Library.

    Examples
    --------
    >>> pb = generate(8, gpus=("T4", "H100"), seed=3)
    >>> pb == generate(8, gpus=("T4", "H100"), seed=3)
    True
    """
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise InstanceError(f"n must be an integer >= 0, got {n!r}", field="n")
    if not 0 <= tightness <= 1:
        raise InstanceError(f"must be in [0, 1], got {tightness!r}", field="tightness")
    if not 0 < rdd <= 1:
        raise InstanceError(f"must be in (0, 1], got {rdd!r}", field="rdd")
    if not load > 0:
        raise InstanceError(f"must be > 0, got {load!r}", field="load")
    rng = np.random.default_rng(seed)
    names = list(GPU_MODELS)
    if isinstance(gpus, (int, np.integer)):
        if gpus < 1:
            raise InstanceError(f"need at least one GPU, got {gpus!r}", field="gpus")
        models = [names[k] for k in rng.integers(0, len(names), size=int(gpus))]
    else:
        models = list(gpus)
        if not models:
            raise InstanceError("need at least one GPU", field="gpus")
        for mname in models:
            if mname not in GPU_MODELS:
                raise InstanceError(f"unknown GPU model {mname!r}; known: {', '.join(names)}",
                                    field="gpus")
    cluster = tuple(GPU(f"g{j}-{mname}", GPU_MODELS[mname][0], GPU_MODELS[mname][1], mname)
                    for j, mname in enumerate(models))
    speeds = np.array([g.speed for g in cluster])
    caps = np.array([g.memory for g in cluster])
    total = int(n) + int(unfit)
    L = np.maximum(1, np.rint(median_workload * np.exp(sigma * rng.standard_normal(total))))
    levels = np.array(MEMORY_LEVELS)
    probs = np.array(MEMORY_PROBS) * (levels <= caps.max())
    mem = rng.choice(levels, size=total, p=probs / probs.sum())
    mem[n:] = 2 * caps.max()
    gaps = rng.exponential(L.mean() / (load * speeds.sum()) if total else 1.0, size=total)
    if total:
        gaps[0] = 0.0
    arrival = np.floor(np.cumsum(gaps))
    P = L.sum() / (load * speeds.sum())
    u = rng.uniform(P * (1 - tightness - rdd / 2), P * (1 - tightness + rdd / 2), size=total)
    pmin = np.array([min((l / v for v, c in zip(speeds, caps) if mm <= c), default=l / speeds.max())
                     for l, mm in zip(L, mem)])
    deadline = np.ceil(np.maximum(arrival + pmin, np.rint(u)))
    weight = rng.integers(1, 11, size=total)
    tasks = tuple(Task(f"t{i}", float(L[i]), float(mem[i]), float(deadline[i]), float(weight[i]),
                       float(arrival[i])) for i in range(total))
    label = f"hetero-n{n}-{'+'.join(models)}-TF{tightness}-RDD{rdd}-load{load}-seed{seed}"
    return HeteroProblem(tasks, cluster, name=label)


# ---------------------------------------------------------------------------
# OR-Library weighted tardiness (single GPU, all arrivals 0, memory ignored)
# ---------------------------------------------------------------------------

_ORLIB_N = 40
_ORLIB_COUNT = 125
_WT40 = "instances/data/orlib-wt/wt40.txt"
_WTOPT40 = "instances/data/orlib-wt/wtopt40.txt"
_FIELDS = ("processing time", "weight", "due date")

#: Tardiness factors and relative ranges of due dates of the OR-Library sets,
#: in file order: the range is the outer loop, the factor the inner one, five
#: instances per pair (instances 1-5: TF 0.2, RDD 0.2; 6-10: TF 0.4, RDD 0.2; ...).
ORLIB_TF = (0.2, 0.4, 0.6, 0.8, 1.0)
ORLIB_RDD = (0.2, 0.4, 0.6, 0.8, 1.0)


def _orlib_text(name: str) -> tuple[str, str]:
    ref = resources.files("instances").joinpath("data", "orlib-wt", name)
    return ref.read_text(), f"instances/data/orlib-wt/{name}"


def _integers(text: str, source: str, what) -> np.ndarray:
    """All whitespace-separated tokens as integers; a bad token raises an
    :class:`InstanceError` located by ``what(position)`` (1-based token number)."""
    tokens = text.split()
    try:
        return np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    for pos, tok in enumerate(tokens):
        try:
            int(tok)
        except ValueError:
            raise InstanceError(f"{what(pos)}: not an integer: {tok!r}", source=source) from None
    raise InstanceError("integer out of range", source=source)  # pragma: no cover - 19-digit numbers


def parse_orlib(text: str, source: str = "<text>", n: int | None = None,
                count: int | None = None) -> list[HeteroProblem]:
    """Weighted-tardiness instances in the OR-Library format (see :func:`read_orlib`).

    Examples
    --------
    >>> [pb.name for pb in parse_orlib("3 1 2  5 4 9", source="two.txt", n=1)]
    ['two-1', 'two-2']
    >>> parse_orlib("3 1 2  5 x 9", source="bad.txt", n=1)
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: bad.txt: instance 2, weight of job 1 (number 5 in the file): not an integer: 'x'
    """
    for name, value in (("n", n), ("count", count)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                  or value < 1):
            raise InstanceError(f"must be an integer >= 1, got {value!r}", source=source, field=name)
    total = len(text.split())
    if n is None and count is None:
        if total == 0 or total % (3 * _ORLIB_COUNT):
            raise InstanceError(
                f"{total} numbers is not {_ORLIB_COUNT} instances of 3n numbers; pass n= (jobs per "
                "instance) or count= (instances) to read another layout", source=source)
        count = _ORLIB_COUNT
    if n is None:
        if total % (3 * count):
            raise InstanceError(f"{total} numbers cannot hold {count} instances of 3n numbers",
                                source=source)
        n = total // (3 * count)

    def where(pos: int) -> str:
        k, r = divmod(pos, 3 * n)
        f, j = divmod(r, n)
        return f"instance {k + 1}, {_FIELDS[f]} of job {j + 1} (number {pos + 1} in the file)"

    vals = _integers(text, source, where)
    if count is None:
        count = total // (3 * n)
    if total != 3 * n * count:
        raise InstanceError(f"{total} numbers do not split into {count if count else 'whole'} instances "
                            f"of 3 x {n} numbers (the last instance is cut short)", source=source)
    data = vals.reshape(count, 3, n)
    bad = np.argwhere(np.concatenate([data[:, :1] < 1, data[:, 1:] < 0], axis=1))
    if len(bad):
        k, f, j = (int(x) for x in bad[0])
        need = ">= 1" if f == 0 else ">= 0"
        raise InstanceError(f"{where(k * 3 * n + f * n + j)}: must be {need}, got {data[k, f, j]}",
                            source=source)
    label = Path(source).stem if source != "<text>" else "orlib"
    out = []
    for k in range(count):
        p, w, d = data[k]
        tasks = tuple(Task(f"j{i + 1}", float(p[i]), 0.0, float(d[i]), float(w[i]), 0.0) for i in range(n))
        out.append(HeteroProblem(tasks, (GPU("machine", 1.0, math.inf, "single"),),
                                 name=f"{label}-{k + 1}", source=source))
    return out


def read_orlib(path: str | Path, n: int | None = None, count: int | None = None) -> list[HeteroProblem]:
    """Read an OR-Library weighted-tardiness file (wt40, wt50, wt100, ... or your own).

    The format: for each instance, ``n`` processing times, ``n`` weights and
    ``n`` due dates, all integers separated by any whitespace. The number of
    jobs is inferred from the file's length: ``125`` instances of ``3n``
    numbers, as in every OR-Library set. Pass ``n`` (jobs per instance) or
    ``count`` (number of instances) for another layout. Each instance becomes
    a single-GPU problem (speed 1, all arrivals 0): the restriction of seed
    002 Sec. II.

    Raises
    ------
    InstanceError
        A missing file, a token that is not an integer, a negative value or a
        processing time below 1 (naming the file, instance, field, job and
        position), or a length that does not split into whole instances.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "wt2.txt")
    >>> _ = open(path, "w").write("1 2  3 4  5 6\\n" * 125)
    >>> pbs = read_orlib(path); len(pbs), pbs[0].n, pbs[0].tasks[1].deadline
    (125, 2, 6.0)
    """
    from instances.files import read_text

    return parse_orlib(read_text(path), str(path), n=n, count=count)


def read_orlib_values(path: str | Path, count: int | None = None) -> list[int]:
    """The known optimal (or best known) values of an OR-Library set, one per instance.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "opt.txt")
    >>> _ = open(path, "w").write("913\\n 1225 537")
    >>> read_orlib_values(path)
    [913, 1225, 537]
    """
    from instances.files import read_text

    text, src = read_text(path), str(path)
    vals = _integers(text, src, lambda pos: f"value {pos + 1}")
    if count is not None and len(vals) != count:
        raise InstanceError(f"expected {count} values, found {len(vals)}", source=src)
    return [int(v) for v in vals]


def write_orlib(problems: Sequence[HeteroProblem], path: str | Path) -> None:
    """Write single-GPU problems with integer data in the OR-Library format
    (20 numbers a line, right-aligned in 6 columns, as the OR-Library files).

    The GPU's speed must be 1 and every arrival 0 (the format has no place
    for them); every value must be an integer.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "wt5.txt")
    >>> pbs = generate_orlib_set(5, seed=1)
    >>> write_orlib(pbs, path)
    >>> [q.to_dict()["tasks"] for q in read_orlib(path)] == [q.to_dict()["tasks"] for q in pbs]
    True
    """
    numbers: list[int] = []
    for pb in problems:
        if pb.m != 1 or pb.gpus[0].speed != 1 or any(t.arrival for t in pb.tasks):
            raise InstanceError("the OR-Library format holds one machine of speed 1 and no arrivals",
                                source=str(path), field=pb.name)
        for field in ("workload", "weight", "deadline"):
            for t in pb.tasks:
                v = getattr(t, field)
                if not float(v).is_integer():
                    raise InstanceError(f"not an integer: {v!r}", source=str(path), task=t.name, field=field)
                numbers.append(int(v))
    lines = ["".join(f"{v:6d}" for v in numbers[i:i + 20]) for i in range(0, len(numbers), 20)]
    Path(path).write_text("\n".join(lines) + "\n")


def generate_orlib(n: int, *, tf: float, rdd: float, seed: int = 0, name: str | None = None) -> HeteroProblem:
    """One single-machine weighted-tardiness instance drawn by the OR-Library scheme.

    The scheme of the OR-Library sets (Potts & Van Wassenhove; Crauwels,
    Potts & Van Wassenhove 1998): processing times ``p_j ~ U{1..100}``,
    weights ``w_j ~ U{1..10}``, and with ``P = sum_j p_j`` due dates
    ``d_j ~ U{round(P(1 - TF - RDD/2)) .. round(P(1 - TF + RDD/2))}``, clipped
    at 0 as in the OR-Library files, where ``TF`` is the tardiness factor
    (higher: more jobs late) and ``RDD`` the relative range of due dates.
    Draws use ``numpy.random.default_rng(seed)`` in this order (p, w, d).

    Examples
    --------
    >>> pb = generate_orlib(50, tf=0.6, rdd=0.4, seed=7)
    >>> pb.n, pb.m, pb == generate_orlib(50, tf=0.6, rdd=0.4, seed=7)
    (50, 1, True)
    >>> all(1 <= t.workload <= 100 and 1 <= t.weight <= 10 and t.deadline >= 0 for t in pb.tasks)
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InstanceError(f"n must be an integer >= 0, got {n!r}", field="n")
    for label, value in (("tf", tf), ("rdd", rdd)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise InstanceError(f"must be a number in [0, 1], got {value!r}", field=label)
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 101, size=n)
    w = rng.integers(1, 11, size=n)
    P = int(p.sum())
    lo, hi = round(P * (1 - tf - rdd / 2)), round(P * (1 - tf + rdd / 2))
    d = np.maximum(0, rng.integers(lo, hi + 1, size=n))
    tasks = tuple(Task(f"j{i + 1}", float(p[i]), 0.0, float(d[i]), float(w[i]), 0.0) for i in range(n))
    return HeteroProblem(tasks, (GPU("machine", 1.0, math.inf, "single"),),
                         name=name or f"orlib-n{n}-TF{tf:g}-RDD{rdd:g}-seed{seed}")


def generate_orlib_set(n: int, seed: int = 0, per_pair: int = 5) -> list[HeteroProblem]:
    """A set laid out like the OR-Library files: for each RDD (outer) and TF
    (inner) of :data:`ORLIB_TF` x :data:`ORLIB_RDD`, ``per_pair`` instances
    (125 for the default 5). Instance ``k`` (0-based) uses the seed
    ``seed * 1_000_003 + k``, so a set and any instance of it are reproducible.

    Examples
    --------
    >>> pbs = generate_orlib_set(10, seed=3)
    >>> len(pbs), pbs[0].name, pbs[5].name
    (125, 'orlib-n10-s3-1', 'orlib-n10-s3-6')
    """
    out = []
    for rdd in ORLIB_RDD:
        for tf in ORLIB_TF:
            for _ in range(per_pair):
                k = len(out)
                out.append(generate_orlib(n, tf=tf, rdd=rdd, seed=seed * 1_000_003 + k,
                                          name=f"orlib-n{n}-s{seed}-{k + 1}"))
    return out


def orlib_wt40(k: int) -> HeteroProblem:
    """OR-Library wt40 instance ``k`` (1-based, 1..125) as a single-GPU problem.

    The file lists, per instance, 40 processing times, 40 weights, 40 due
    dates. The GPU has speed 1 and unlimited memory, tasks arrive at 0 and need
    no memory: exactly the single-GPU restriction of the heterogeneous-GPU scheduling paper, Sec. II (1||sum w_j T_j).

    Examples
    --------
    >>> pb = orlib_wt40(1)
    >>> pb.tasks[0].workload, pb.tasks[0].weight, pb.tasks[0].deadline
    (26.0, 1.0, 1588.0)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _ORLIB_COUNT:
        raise InstanceError(f"instance number must be in 1..{_ORLIB_COUNT}, got {k!r}", source=_WT40)
    return _wt40()[k - 1]


_WT40_CACHE: list[HeteroProblem] = []


def _wt40() -> list[HeteroProblem]:
    if not _WT40_CACHE:
        text, src = _orlib_text("wt40.txt")
        pbs = parse_orlib(text, src, n=_ORLIB_N, count=_ORLIB_COUNT)
        _WT40_CACHE.extend(HeteroProblem(pb.tasks, pb.gpus, name=f"wt40-{k + 1}", source=src)
                           for k, pb in enumerate(pbs))
    return _WT40_CACHE


def orlib_wt40_all() -> list[HeteroProblem]:
    """All 125 wt40 instances, in file order."""
    return list(_wt40())


def orlib_wt40_optimum(k: int | None = None):
    """Known optimum of wt40 instance ``k`` (1-based), or the list of all 125.

    Instance 19 is the one whose value is only the best known (see the
    shipped README.txt); the other 124 are proven optima.
    """
    text, src = _orlib_text("wtopt40.txt")
    vals = [int(v) for v in _integers(text, src, lambda pos: f"value {pos + 1}")]
    if len(vals) != _ORLIB_COUNT:
        raise InstanceError(f"expected {_ORLIB_COUNT} values, found {len(vals)}", source=src)
    if k is None:
        return vals
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _ORLIB_COUNT:
        raise InstanceError(f"instance number must be in 1..{_ORLIB_COUNT}, got {k!r}", source=src)
    return vals[k - 1]


# ---------------------------------------------------------------------------
# schedules
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Assignment:
    """Task ``task`` runs on GPU ``gpu`` from ``start`` to ``end``."""

    task: str
    gpu: str
    start: float
    end: float


@dataclass
class Schedule:
    """A schedule: one assignment per schedulable task, plus the tasks that fit no GPU.

    Examples
    --------
    >>> s = Schedule([Assignment("a", "g", 0.0, 2.0)], unscheduled=["b"])
    >>> Schedule.from_json(s.to_json()) == s
    True
    """

    assignments: list[Assignment]
    unscheduled: list[str] = field(default_factory=list)

    @property
    def makespan(self) -> float:
        """``C_max`` (eq. 11); 0 for an empty schedule."""
        return max((a.end for a in self.assignments), default=0.0)

    def sequences(self, problem: HeteroProblem) -> list[list[int]]:
        """Task indices per GPU in start order."""
        seqs: list[list[tuple[float, int]]] = [[] for _ in problem.gpus]
        for a in self.assignments:
            seqs[problem.gpu_index[a.gpu]].append((a.start, problem.index[a.task]))
        return [[i for _, i in sorted(s)] for s in seqs]

    def to_json(self) -> str:
        return json.dumps({
            "tasks": [{"task": a.task, "gpu": a.gpu, "start": a.start, "end": a.end}
                      for a in self.assignments],
            "unscheduled": list(self.unscheduled),
            "makespan": self.makespan,
        })

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> "Schedule":
        """Read a schedule written by :meth:`to_json`; a malformed one raises :class:`InstanceError`."""
        data = files.parse_json(text, source)
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
            raise InstanceError("a schedule must be an object with a 'tasks' list", source=source, field="tasks")
        files.no_unknown_fields(data, ("tasks", "unscheduled", "makespan"), source=source)
        assignments = []
        for k, e in enumerate(data["tasks"]):
            where = f"tasks[{k}]"
            if not isinstance(e, dict) or any(key not in e for key in ("task", "gpu", "start", "end")):
                raise InstanceError("each entry needs 'task', 'gpu', 'start' and 'end'", source=source, field=where)
            files.no_unknown_fields(e, ("task", "gpu", "start", "end"), source=source, where=where)
            name = files.name(e["task"], source=source, field=f"{where}.task")
            assignments.append(Assignment(name, files.name(e["gpu"], source=source, task=name, field="gpu"),
                                          files.real(e["start"], source=source, task=name, field="start"),
                                          files.real(e["end"], source=source, task=name, field="end")))
        unscheduled = data.get("unscheduled", [])
        if not isinstance(unscheduled, list):
            raise InstanceError("must be a list of task names", source=source, field="unscheduled")
        return cls(assignments, [files.name(t, source=source, field="unscheduled") for t in unscheduled])


def evaluate_sequences(problem: HeteroProblem, sequences: Sequence[Sequence[int]]) -> Schedule:
    """Semi-active schedule of per-GPU task sequences: each task starts at
    ``max(a_i, end of its predecessor)`` (eqs. 4-6). Tasks in ``problem.unfit``
    are reported as unscheduled.

    Examples
    --------
    >>> pb = orlib_wt40(1)
    >>> evaluate_sequences(pb, [list(range(40))]).makespan == sum(t.workload for t in pb.tasks)
    True
    """
    p, a = problem.p, problem.arrival
    out = []
    for j, seq in enumerate(sequences):
        t = 0.0
        gname = problem.gpus[j].name
        for i in seq:
            start = max(float(a[i]), t)
            t = start + float(p[i, j])
            out.append(Assignment(problem.tasks[i].name, gname, start, t))
    return Schedule(out, list(problem.unfit))


def weighted_tardiness(problem: HeteroProblem, schedule: Schedule) -> float:
    """Objective (1): ``sum_i w_i max(0, c_i - d_i)`` over the scheduled tasks."""
    total = 0.0
    for a in schedule.assignments:
        t = problem.tasks[problem.index[a.task]]
        total += t.weight * max(0.0, a.end - t.deadline)
    return total


def check(problem: HeteroProblem, schedule: Schedule, tol: float = TOL) -> list[str]:
    """Independent feasibility check; returns the violations ([] = feasible).

    Verifies: every task that fits some GPU is assigned exactly once to a
    known GPU (eq. 2) and tasks that fit none are listed as unscheduled;
    memory (eq. 3); duration ``end - start = L_i / v_j`` (eq. 4); arrival
    (eq. 5); no overlap on a GPU (eq. 6).

    Examples
    --------
    >>> pb = HeteroProblem((Task("a", 2, 0, 5), Task("b", 2, 0, 5)), (GPU("g", 1.0),))
    >>> check(pb, Schedule([Assignment("a", "g", 0, 2), Assignment("b", "g", 1, 3)]))
    ['GPU g: tasks a [0, 2] and b [1, 3] overlap']
    """
    errors: list[str] = []
    unfit = set(problem.unfit)
    seen: dict[str, int] = {}
    per_gpu: dict[str, list[Assignment]] = {g.name: [] for g in problem.gpus}
    for a in schedule.assignments:
        if a.task not in problem.index:
            errors.append(f"task {a.task}: not in the problem")
            continue
        seen[a.task] = seen.get(a.task, 0) + 1
        if a.gpu not in problem.gpu_index:
            errors.append(f"task {a.task}: unknown GPU {a.gpu}")
            continue
        i, j = problem.index[a.task], problem.gpu_index[a.gpu]
        task, gpu = problem.tasks[i], problem.gpus[j]
        if task.memory > gpu.memory:
            errors.append(f"task {a.task}: memory {task.memory:g} GB > GPU {a.gpu} memory {gpu.memory:g} GB")
        if not (math.isfinite(a.start) and math.isfinite(a.end)):
            errors.append(f"task {a.task}: non-finite start/end")
            continue
        if a.start < task.arrival - tol:
            errors.append(f"task {a.task}: starts at {a.start:g} before its arrival {task.arrival:g}")
        dur = task.workload / gpu.speed
        if abs((a.end - a.start) - dur) > tol * max(1.0, dur):
            errors.append(f"task {a.task}: runs {a.end - a.start:g} on GPU {a.gpu}, needs {dur:g}")
        per_gpu[a.gpu].append(a)
    for name, count in seen.items():
        if count > 1:
            errors.append(f"task {name}: assigned {count} times")
    for t in problem.tasks:
        if t.name in unfit:
            if t.name in seen:
                errors.append(f"task {t.name}: fits no GPU but is scheduled")
            if t.name not in schedule.unscheduled:
                errors.append(f"task {t.name}: fits no GPU and is not reported unscheduled")
        elif t.name not in seen:
            errors.append(f"task {t.name}: not scheduled")
    for name in schedule.unscheduled:
        if name not in unfit:
            errors.append(f"task {name}: reported unscheduled but fits a GPU")
    for gname, items in per_gpu.items():
        items.sort(key=lambda a: (a.start, a.end))
        for x, y in zip(items, items[1:]):
            if y.start < x.end - tol:
                errors.append(f"GPU {gname}: tasks {x.task} [{x.start:g}, {x.end:g}] and "
                              f"{y.task} [{y.start:g}, {y.end:g}] overlap")
    return errors


# ---------------------------------------------------------------------------
# metrics (heterogeneous-GPU scheduling paper, Sec. I.E)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Metrics:
    """The performance metrics of the heterogeneous-GPU scheduling paper Sec. I.E, over the scheduled tasks."""

    twt: float          #: total weighted tardiness, eq. (1)
    twct: float         #: total weighted completion (flow) time, eq. (7)
    act: float          #: average completion (flow) time, eq. (8)
    dmc: int            #: deadline miss count, eq. (9)
    dmr: float          #: deadline miss rate, eq. (10)
    makespan: float     #: C_max, eq. (11)
    utilisation: float  #: eta, eq. (12)
    unscheduled: int    #: tasks that fit no GPU (not in the sums above)


def metrics(problem: HeteroProblem, schedule: Schedule, tol: float = TOL) -> Metrics:
    """Metrics (1), (7)-(12) of a schedule.

    ``c_i - a_i`` is used in (7) and (8) exactly as written (flow time). In
    (12) the window starts at the earliest arrival of a scheduled task; a
    window of length 0 (no work) gives utilisation 0. A task is late when
    ``c_i > d_i + tol``.

    Examples
    --------
    >>> pb = HeteroProblem((Task("a", 2, 0, 1, 3, 0),), (GPU("g", 1.0), GPU("h", 2.0)))
    >>> metrics(pb, Schedule([Assignment("a", "g", 0, 2)]))
    Metrics(twt=3.0, twct=6.0, act=2.0, dmc=1, dmr=1.0, makespan=2.0, utilisation=0.5, unscheduled=0)
    """
    rows = [(problem.tasks[problem.index[a.task]], a) for a in schedule.assignments]
    n = len(rows)
    if n == 0:
        return Metrics(0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, len(schedule.unscheduled))
    twt = sum(t.weight * max(0.0, a.end - t.deadline) for t, a in rows)
    twct = sum(t.weight * (a.end - t.arrival) for t, a in rows)
    act = sum(a.end - t.arrival for t, a in rows) / n
    dmc = sum(1 for t, a in rows if a.end > t.deadline + tol)
    cmax = max(a.end for _, a in rows)
    window = cmax - min(t.arrival for t, _ in rows)
    busy = sum(a.end - a.start for _, a in rows)
    eta = busy / (problem.m * window) if window > 0 else 0.0
    return Metrics(float(twt), float(twct), float(act), dmc, dmc / n, float(cmax), float(eta),
                   len(schedule.unscheduled))
