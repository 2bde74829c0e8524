"""MIG problem data: tasks, single batches and multi-batch workloads, JSON I/O.

FAR paper, Sec. 2.2: a batch of tasks T_1..T_n, each with an execution time
t_i(s) > 0 for every compute size s of the GPU. Times are non-increasing in s
(monotony point 1, Sec. 2.4); work s * t_i(s) may fall (super-linear speed-up
is allowed). A task may carry a memory requirement that rules out placements
with less memory; times for those sizes may then be omitted.

A multi-batch workload (Sec. 4) is a list of batches with release times; no
task of a batch may start before its batch is released.

Problem JSON::

    {"gpu": "A100", "release": 0.0,
     "tasks": [{"name": "t0", "times": {"1": 10.0, "2": 5.3, "3": 3.9, "4": 3.0, "7": 2.1}}]}

Workload JSON::

    {"gpu": "A100", "batches": [{"release": 0.0, "tasks": [...]}, {"release": 50.0, "tasks": [...]}]}

``gpu`` is a built-in name or an inline GPU spec (see :func:`instances.gpus.from_dict`).
"""

from __future__ import annotations

import json
import math
import numbers
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from instances import gpus
from instances.errors import GPUSpecError, InstanceError
from instances import files
from instances.gpus import GPUSpec
from instances.options import known_options, typed

__all__ = ["Task", "Problem", "Workload", "load", "save", "from_dict", "to_dict", "check_scale", "MAX_TOTAL_TIME",
           "TOLERANCE", "PRECISION_ROUNDINGS"]

#: The largest total of task work, releases and reconfiguration times that
#: :func:`check_scale` accepts: far enough below the largest float that no
#: sum of these times (nor ``size * time``) can overflow.
MAX_TOTAL_TIME = sys.float_info.max / 8
#: Relative tolerance of the checker (:func:`instances.mig_check.check`): a duration ``t`` is
#: met when the run lasts ``t`` within ``TOLERANCE * max(1, t)``.
TOLERANCE = 1e-6
#: Roundings at the horizon that :func:`check_scale` allows in a start + duration: the methods of
#: the toolkit compute an end as a start plus a time (one rounding), the checker subtracts them again
#: (one more); the rest is margin.
PRECISION_ROUNDINGS = 8


@dataclass(frozen=True)
class Task:
    """A moldable task: a name and its execution time (seconds) per compute size.

    Attributes
    ----------
    name
        Unique within its problem.
    times
        ``{size: seconds}``; read-only.
    memory_gb
        Optional memory requirement; placements with less memory are ruled out.
    """

    name: str
    times: Mapping[int, float]
    memory_gb: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "times", MappingProxyType({int(k): float(v) for k, v in self.times.items()}))

    def time(self, size: int) -> float:
        """Execution time on an instance of ``size`` slices."""
        try:
            return self.times[size]
        except KeyError:
            raise InstanceError(f"has no time for size {size} (allowed sizes: {sorted(self.times)})",
                                task=self.name, field=f"times.{size}") from None

    @property
    def sizes(self) -> tuple[int, ...]:
        """Sizes this task may run on (those with a time), increasing."""
        return tuple(sorted(self.times))

    def work(self, size: int) -> float:
        """Area s * t(s)."""
        return size * self.times[size]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "times": {str(s): t for s, t in sorted(self.times.items())}}
        if self.memory_gb is not None:
            d["memory_gb"] = self.memory_gb
        return d


def _validate_task(task: Task, gpu: GPUSpec, source: str | None) -> None:
    name = task.name
    if task.memory_gb is not None and not (task.memory_gb >= 0 and math.isfinite(task.memory_gb)):
        raise InstanceError(f"memory requirement {task.memory_gb!r} must be a finite number >= 0",
                            source=source, task=name, field="memory_gb")
    allowed = [s for s in gpu.sizes if task.memory_gb is None or gpu.memory_gb[s] >= task.memory_gb]
    if not allowed:
        raise InstanceError(f"needs {task.memory_gb} GB but the largest {gpu.name} instance has "
                            f"{max(gpu.memory_gb.values())} GB", source=source, task=name, field="memory_gb")
    for s in task.times:
        if s not in gpu.sizes:
            raise InstanceError(f"size {s} is not a compute size of {gpu.name} (sizes {list(gpu.sizes)})",
                                source=source, task=name, field=f"times.{s}")
        if s not in allowed:
            raise InstanceError(f"size {s} has {gpu.memory_gb[s]} GB, less than the task's "
                                f"{task.memory_gb} GB; omit it", source=source, task=name, field=f"times.{s}")
    for s in allowed:
        if s not in task.times:
            raise InstanceError(f"missing the time for size {s} ({gpu.name} sizes {list(allowed)} needed)",
                                source=source, task=name, field=f"times.{s}")
        t = task.times[s]
        if not (t > 0 and math.isfinite(t)):
            raise InstanceError(f"time {t!r} on size {s} must be a finite number > 0",
                                source=source, task=name, field=f"times.{s}")
    for a, b in zip(allowed, allowed[1:]):
        if task.times[b] > task.times[a]:
            raise InstanceError(f"time on size {b} ({task.times[b]}) exceeds the time on size {a} "
                                f"({task.times[a]}); times must be non-increasing in the size (Sec. 2.4)",
                                source=source, task=name, field=f"times.{b}")


def _validate_names(tasks: Iterable[Task], source: str | None) -> None:
    seen: set[str] = set()
    for t in tasks:
        if not isinstance(t.name, str) or not t.name:
            raise InstanceError("every task needs a non-empty string name", source=source, task=repr(t.name),
                                field="name")
        files.name(t.name, source=source, task=repr(t.name))
        if t.name in seen:
            raise InstanceError("task name used twice; names must be unique", source=source, task=t.name,
                                field="name")
        seen.add(t.name)


@dataclass(frozen=True)
class Problem:
    """A batch of moldable tasks on one MIG GPU.

    Attributes
    ----------
    gpu
        The GPU (a :class:`instances.gpus.GPUSpec`; a name is resolved).
    tasks
        The tasks, in input order (FIFO order for the baselines).
    release
        No task may start before this time (0 for a single batch).

    Examples
    --------
    >>> p = Problem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> p.gpu.name, p.n, p.task("a").time(2)
    ('A30', 1, 2.5)
    """

    gpu: GPUSpec
    tasks: tuple[Task, ...]
    release: float = 0.0
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __init__(self, gpu: GPUSpec | str, tasks: Sequence[Task], release: float = 0.0, *,
                 source: str | None = None) -> None:
        gpu = gpus.get(gpu)
        tasks = tuple(tasks)
        _validate_names(tasks, source)
        for t in tasks:
            _validate_task(t, gpu, source)
        release = files.real(release, lo=0.0, source=source, field="release")
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "release", float(release))
        object.__setattr__(self, "_index", MappingProxyType({t.name: i for i, t in enumerate(tasks)}))

    @property
    def n(self) -> int:
        return len(self.tasks)

    def task(self, name: str) -> Task:
        try:
            return self.tasks[self._index[name]]
        except KeyError:
            raise InstanceError("no such task in the problem", task=name, field="task") from None

    def has_task(self, name: str) -> bool:
        return name in self._index

    def releases(self) -> dict[str, float]:
        """Release time of every task (all equal to ``release`` for one batch)."""
        return {t.name: self.release for t in self.tasks}

    def without_reconfiguration(self) -> "Problem":
        """The same batch on a copy of the GPU whose create/destroy times are zero."""
        return Problem(self.gpu.without_reconfiguration(), self.tasks, self.release)

    def with_gpu(self, gpu: GPUSpec | str) -> "Problem":
        return Problem(gpus.get(gpu), self.tasks, self.release)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"gpu": _gpu_ref(self.gpu)}
        if self.release:
            d["release"] = self.release
        d["tasks"] = [t.to_dict() for t in self.tasks]
        return d


@dataclass(frozen=True)
class Workload:
    """A multi-batch workload (Sec. 4): batches on one GPU, each with its release time.

    Task names are unique across batches; releases are non-decreasing.

    Examples
    --------
    >>> b0 = Problem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> b1 = Problem("A30", [Task("b", {1: 3.0, 2: 2.0, 4: 1.0})], release=2.0)
    >>> Workload("A30", [b0, b1]).releases()
    {'a': 0.0, 'b': 2.0}
    """

    gpu: GPUSpec
    batches: tuple[Problem, ...]

    def __init__(self, gpu: GPUSpec | str, batches: Sequence[Problem], *, source: str | None = None) -> None:
        gpu = gpus.get(gpu)
        batches = tuple(b if b.gpu == gpu else Problem(gpu, b.tasks, b.release, source=source) for b in batches)
        if not batches:
            raise InstanceError("a workload needs at least one batch", source=source, field="batches")
        _validate_names([t for b in batches for t in b.tasks], source)
        for i, (a, b) in enumerate(zip(batches, batches[1:])):
            if b.release < a.release:
                raise InstanceError(f"release {b.release} is before the previous batch's {a.release}",
                                    source=source, field=f"batches[{i + 1}].release")
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "batches", batches)

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(t for b in self.batches for t in b.tasks)

    @property
    def n(self) -> int:
        return sum(b.n for b in self.batches)

    def task(self, name: str) -> Task:
        for b in self.batches:
            if b.has_task(name):
                return b.task(name)
        raise InstanceError("no such task in the workload", task=name, field="task")

    def releases(self) -> dict[str, float]:
        return {t.name: b.release for b in self.batches for t in b.tasks}

    def without_reconfiguration(self) -> "Workload":
        return Workload(self.gpu.without_reconfiguration(), self.batches)

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": _gpu_ref(self.gpu),
                "batches": [{"release": b.release, "tasks": [t.to_dict() for t in b.tasks]}
                            for b in self.batches]}


# ---------------------------------------------------------------------------
# JSON

def _gpu_ref(gpu: GPUSpec) -> str | dict[str, Any]:
    """A built-in GPU is written by name, anything else inline."""
    builtin = gpus.BUILTIN.get(gpu.name)
    return gpu.name if builtin is not None and builtin == gpu else gpu.to_dict()


def _read_gpu(raw: Any, source: str | None) -> GPUSpec:
    if isinstance(raw, str):
        try:
            return gpus.get(raw)
        except InstanceError as exc:
            raise exc.located(source) if source else exc
    if isinstance(raw, Mapping):
        try:
            return gpus.from_dict(raw, source=source)
        except GPUSpecError as exc:  # an inline spec: its fields live under "gpu"
            raise GPUSpecError(exc.reason, source=exc.source, task=exc.task,
                               field=f"gpu.{exc.field}" if exc.field and exc.field != "gpu" else "gpu") from None
    raise InstanceError(f"must be a GPU name or a GPU spec object, got {raw!r}", source=source, field="gpu")


def _read_size(key: Any, name: str, source: str | None) -> int:
    """A size key of ``times``: the canonical decimal text of a positive integer ("1", not "01" or " 1")."""
    if isinstance(key, str) and key.isascii() and key.isdigit() and str(int(key)) == key:
        return int(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    raise InstanceError(f"size {key!r} is not an integer written in plain digits (e.g. \"4\")", source=source,
                        task=name, field=f"times.{key}")


def _read_task(raw: Any, i: int, source: str | None, where: str = "tasks") -> Task:
    if not isinstance(raw, Mapping):
        raise InstanceError(f"each task must be an object with 'name' and 'times', got {raw!r}"[:200],
                            source=source, field=f"{where}[{i}]")
    name = files.name(raw.get("name"), source=source, task=f"#{i}", field="name")
    files.no_unknown_fields(raw, _TASK_FIELDS, source=source, task=name)
    times = raw.get("times")
    if not isinstance(times, Mapping) or not times:
        raise InstanceError("'times' must be an object mapping each size to seconds", source=source, task=name,
                            field="times")
    parsed: dict[int, float] = {}
    for k, v in times.items():
        s = _read_size(k, name, source)
        if s in parsed:
            raise InstanceError(f"size {s} is given twice", source=source, task=name, field=f"times.{k}")
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InstanceError(f"time {v!r} is not a number", source=source, task=name, field=f"times.{k}")
        parsed[s] = files.real(v, source=source, task=name, field=f"times.{k}")
    mem = raw.get("memory_gb")
    if mem is not None:
        mem = files.real(mem, lo=0.0, source=source, task=name, field="memory_gb")
    return Task(name, parsed, mem)


_TASK_FIELDS = ("name", "times", "memory_gb")
_PROBLEM_FIELDS = ("gpu", "release", "tasks")
_WORKLOAD_FIELDS = ("gpu", "batches")
_BATCH_FIELDS = ("release", "tasks")


def _read_release(raw: Any, source: str | None, where: str) -> float:
    return files.real(raw, lo=0.0, source=source, field=where)


def from_dict(data: Mapping[str, Any], *, source: str | None = None) -> Problem | Workload:
    """Build a :class:`Problem` (key ``tasks``) or :class:`Workload` (key ``batches``) from JSON data.

    Every field is read strictly: an unknown field, a size written "01", a
    time given as a string or a boolean raises :class:`InstanceError` naming
    the field.

    Examples
    --------
    >>> from_dict({"gpu": "A30", "tasks": [{"name": "a", "times": {"1": 4, "2": 2.5, "4": 1.5}}]}).n
    1
    >>> from_dict({"gpu": "A30", "relase": 5, "tasks": []})
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field relase: unknown field; expected one of gpu, release, tasks
    """
    if not isinstance(data, Mapping):
        raise InstanceError("the top level must be a JSON object", source=source)
    if "gpu" not in data:
        raise InstanceError("missing 'gpu'", source=source, field="gpu")
    if "batches" in data:
        files.no_unknown_fields(data, _WORKLOAD_FIELDS, source=source)
        gpu = _read_gpu(data["gpu"], source)
        raw_batches = data["batches"]
        if not isinstance(raw_batches, list):
            raise InstanceError("'batches' must be a list", source=source, field="batches")
        batches = []
        for bi, rb in enumerate(raw_batches):
            where = f"batches[{bi}]"
            if not isinstance(rb, Mapping) or not isinstance(rb.get("tasks"), list):
                raise InstanceError("each batch needs a 'tasks' list", source=source, field=where)
            files.no_unknown_fields(rb, _BATCH_FIELDS, source=source, where=where)
            release = _read_release(rb.get("release", 0.0), source, f"{where}.release")
            tasks = [_read_task(rt, i, source, f"{where}.tasks") for i, rt in enumerate(rb["tasks"])]
            batches.append(Problem(gpu, tasks, release, source=source))
        return Workload(gpu, batches, source=source)
    files.no_unknown_fields(data, _PROBLEM_FIELDS, source=source)
    gpu = _read_gpu(data["gpu"], source)
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list):
        raise InstanceError("missing 'tasks' list (or 'batches' for a multi-batch workload)", source=source,
                            field="tasks")
    tasks = [_read_task(rt, i, source) for i, rt in enumerate(raw_tasks)]
    release = _read_release(data.get("release", 0.0), source, "release")
    return Problem(gpu, tasks, release, source=source)


@typed
def to_dict(problem: Problem | Workload) -> dict[str, Any]:
    return problem.to_dict()


def load(path: str | Path) -> Problem | Workload:
    """Read a problem or workload JSON file; bad content raises :class:`InstanceError` naming the file.

    Examples
    --------
    >>> import tempfile, os
    >>> p = Problem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> path = os.path.join(tempfile.mkdtemp(), "p.json"); save(p, path)
    >>> load(path) == p
    True
    """
    return from_dict(files.read_json(path), source=str(path))


@typed
def save(problem: Problem | Workload, path: str | Path) -> None:
    """Write a problem or workload as JSON (floats written exactly, so load(save(p)) == p).

    A path that cannot be written raises :class:`~instances.errors.OutputError` naming it.
    """
    files.write_text(path, json.dumps(problem.to_dict(), indent=1) + "\n")


@known_options
def check_scale(problem: Problem | Workload) -> None:
    """Refuse times so large that a schedule's sums would overflow, or lose the task times, in floating point.

    The loader accepts any finite time (1e308 included). Every time a MIG
    method of the toolkit computes (a start, an end, ``s * t(s)``, a total
    work) is at most the *span*: the latest release, plus the sum over tasks
    of their largest work ``s * t(s)``, plus the longest create/destroy time
    once for each of ``2 * (n + batches * placements)`` operations (no method
    emits more). Two rules, each an :class:`~instances.errors.InstanceError`
    naming the field that makes the span large:

    * overflow: a span above :data:`MAX_TOTAL_TIME` (about 2.2e307 s) could
      reach infinity;
    * precision: near the span a double holds a time only to ``ulp(span)``
      seconds, so ``start + t`` can lose the task time ``t`` (a task released
      at 1e17 s "runs 0 s": ``1e17 + 4 == 1e17``). The checker accepts a
      duration within ``TOLERANCE * max(1, t)``; the span is refused when
      :data:`PRECISION_ROUNDINGS` (8) roundings at its magnitude,
      ``8 * ulp(span)``, exceed that for the shortest positive time (task
      or create/destroy), or the shortest time itself where it is below the
      tolerance (times under 1e-6 s). With times of 1 s or more this allows a span of
      about 5.6e8 s (17 years); a 100,000-task batch of the paper's
      ``WideTimes`` spans at most 7e7 s. Whole-number times with a span
      below ``2**53`` are exact and always kept. Shifting the releases
      towards 0 or changing the time unit mends a refused problem.

    The heuristics and the exact backends call it on every problem they take.

    Examples
    --------
    >>> check_scale(Problem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})]))
    >>> check_scale(Problem("A30", [Task("a", {1: 1e308, 2: 1e308, 4: 1e308})]))
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field times: task times too large: their sums reach inf s (at most 2.2e+307 s can be scheduled without overflow); express the times in larger units
    >>> check_scale(Problem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})], release=1e17))
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field release: times reach 1e+17 s, where a double holds a time only to 16 s: the shortest time, 0.1 s, would be lost in a start + duration (allowed: 8 roundings within the checker's tolerance 1e-06 * max(1, t)); shift the releases towards 0 or use other time units
    """
    gpu = problem.gpu
    batches = problem.batches if isinstance(problem, Workload) else (problem,)
    longest_op = max([*gpu.create_time.values(), *gpu.destroy_time.values(), 0.0])
    # plain float sums: an overflow gives inf here (never an exception) and fails the tests below
    release = max((b.release for b in batches), default=0.0)
    ops = 2 * (len(problem.tasks) + len(batches) * len(gpu.placements)) * longest_op
    work = 0.0
    for task in problem.tasks:
        work += max(s * t for s, t in task.times.items())
    total = release + ops + work
    if not total <= MAX_TOTAL_TIME:
        raise InstanceError(f"task times too large: their sums reach {total:.3g} s (at most {MAX_TOTAL_TIME:.2g} s "
                            f"can be scheduled without overflow); express the times in larger units",
                            field="times")
    positive = [t for task in problem.tasks for t in task.times.values()]
    positive += [t for t in (*gpu.create_time.values(), *gpu.destroy_time.values()) if t > 0]
    if not positive:
        return
    shortest = min(positive)
    if total <= 2**53 and all(float(t).is_integer() for t in (*positive, *(b.release for b in batches))):
        return  # whole numbers below 2**53: every sum of them is exact
    # below 1e-6 s the checker's tolerance exceeds the time itself: then the roundings must stay below the
    # shortest time, or creates and destroys that tiny times keep apart fall on the same instant
    if PRECISION_ROUNDINGS * math.ulp(total) > min(TOLERANCE * max(1.0, shortest), shortest):
        largest = max((release, "release"), (ops, "gpu.create_time"), (work, "times"))[1]
        raise InstanceError(f"times reach {total:.3g} s, where a double holds a time only to {math.ulp(total):.3g} s: "
                            f"the shortest time, {shortest:.3g} s, would be lost in a start + duration (allowed: "
                            f"{PRECISION_ROUNDINGS} roundings within the checker's tolerance "
                            f"{TOLERANCE:g} * max(1, t)); "
                            "shift the releases towards 0 or use other time units", field=largest)
