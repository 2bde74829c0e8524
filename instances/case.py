"""CASE on MIG: isolated and non-isolated jobs on fixed MIG partitions (CASE paper).

Implements the problem data of Porter, Chen and Pande, *Compiler-Assisted
Scheduling for Multi-Instance GPUs* (GPGPU'22):

* **Nodes** with a fixed MIG partition (Sec. 3, Table 1): configurations
  A, B, C are 1, 2 and 4 A30s, each split into 4 x 1g.6gb; D is one A100
  split into 2 x 2g.10gb + 3 x 1g.5gb. Slice memory and valid placements
  come from :mod:`instances.gpus`.
* **Jobs** are sequences of *GPU tasks* (Sec. 2.1: a kernel launch and the
  operations its parameters touch), each with global memory, resident warps
  and a standalone duration, preceded by a host (CPU) phase. A job either
  demands isolation (it gets a whole instance to itself, Algorithm 1) or
  not (its tasks may be packed into any instance with free memory,
  Algorithm 2).
* A **slowdown model** for tasks sharing an instance (:class:`Slowdown`;
  the paper only measures 2.2 % mean and < 10 %, Table 2).
* A seeded **workload generator** (:func:`generate`) with the ratios
  1:0 ... 0:1 and the memory footprint ranges of Sec. 3.
* The **trace** type (:class:`Trace`) that simulators and exact models
  return, the independent checker :func:`check` and :func:`metrics`.

Examples
--------
>>> from instances import case
>>> w = case.generate("A", ratio="1:1", n=8, seed=0)
>>> len(w.jobs), sum(j.isolated for j in w.jobs), len(w.config.instances)
(8, 4, 4)
>>> [i.profile for i in case.config("D").instances]
['2g.10gb', '2g.10gb', '1g.5gb', '1g.5gb', '1g.5gb']
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from instances import files, gpus
from instances.errors import InstanceError

__all__ = [
    "Instance", "Config", "Task", "Job", "Slowdown", "Workload", "TaskRun", "Hold", "JobRun", "Trace",
    "CaseError", "config", "custom_config", "CONFIGS", "RATIOS", "BATCH_SIZE", "generate", "check",
    "metrics", "memory_profile", "eligible_instances", "WARPS_PER_SLICE", "MAX_WARPS",
    "load", "save", "from_dict", "load_trace",
]

# A30 and A100 have 14 SMs per MIG compute slice (56 = 4 x 14, 98 of 108 usable
# = 7 x 14) and 64 resident warps per SM (compute capability 8.0).
WARPS_PER_SLICE = 14 * 64

EPS = 1e-6


class CaseError(InstanceError):
    """Invalid CASE problem data (a job, task, configuration or trace field)."""


# ---------------------------------------------------------------------------
# Hardware

@dataclass(frozen=True)
class Instance:
    """One MIG instance of a node, fixed for the whole batch.

    Attributes
    ----------
    index
        Position in the node's instance list (the order Algorithms 1-2 scan).
    gpu
        Index of the physical GPU in the node.
    model
        GPU model name ("A30", "A100").
    size
        Compute slices.
    memory_gb
        Memory of the instance (A30 1g: 6 GB, A100 1g: 5 GB, 2g: 10 GB).
    warp_capacity
        Resident warps the instance can hold (``size * WARPS_PER_SLICE``);
        used by the slowdown model only.
    """

    index: int
    gpu: int
    model: str
    size: int
    start: int
    memory_gb: float
    warp_capacity: int

    @property
    def profile(self) -> str:
        """NVIDIA profile name, e.g. ``1g.6gb``."""
        return f"{self.size}g.{self.memory_gb:g}gb"

    @property
    def name(self) -> str:
        return f"gpu{self.gpu}:{self.size}@{self.start}"


@dataclass(frozen=True)
class Config:
    """A node with fixed MIG instances (one row of Table 1).

    ``workers_case`` follows Sec. 3.1: 4 CASE workers per 1g instance and 8
    per 2g instance; Slurm gets one worker per instance.
    """

    name: str
    instances: tuple[Instance, ...]
    batch_size: int = 32

    @property
    def total_memory_gb(self) -> float:
        return float(sum(i.memory_gb for i in self.instances))

    @property
    def workers_slurm(self) -> int:
        return len(self.instances)

    @property
    def workers_case(self) -> int:
        return sum(4 * i.size for i in self.instances)

    @property
    def memory_classes(self) -> tuple[float, ...]:
        """Distinct instance memory sizes, increasing."""
        return tuple(sorted({i.memory_gb for i in self.instances}))

    def describe(self) -> str:
        counts: dict[str, int] = {}
        for i in self.instances:
            counts[i.profile] = counts.get(i.profile, 0) + 1
        gpus_used = sorted({(i.gpu, i.model) for i in self.instances})
        models = {m for _, m in gpus_used}
        return f"{len(gpus_used)}x{'/'.join(sorted(models))}: " + " + ".join(f"{n} x {p}" for p, n in counts.items())


def custom_config(model: str, layouts: Sequence[Sequence[tuple[int, int]]], *, name: str = "custom",
                  batch_size: int = 32) -> Config:
    """A node of identical GPU models, each with its own fixed instances.

    Parameters
    ----------
    model
        GPU model known to :func:`instances.gpus.get`.
    layouts
        One list of ``(size, start)`` placements per GPU; they must be
        pairwise slice-disjoint (part of a valid MIG partition).

    Examples
    --------
    >>> c = custom_config("A30", [[(1, 0), (1, 1)]], name="two")
    >>> [i.profile for i in c.instances], c.workers_case
    (['1g.6gb', '1g.6gb'], 8)
    """
    spec = gpus.get(model)
    out: list[Instance] = []
    for g, layout in enumerate(layouts):
        pls = [spec.placement(s, b) for s, b in layout]
        if not spec.is_valid_partition(pls):
            raise CaseError(f"placements {[p.name for p in pls]} share a slice", source=name,
                            field=f"layouts[{g}]")
        for p in pls:
            out.append(Instance(len(out), g, spec.name, p.size, p.start, float(spec.memory_gb[p.size]),
                                p.size * WARPS_PER_SLICE))
    if not out:
        raise CaseError("a node needs at least one instance", source=name, field="layouts")
    return Config(name, tuple(out), batch_size)


_A30_FULL = [(1, 0), (1, 1), (1, 2), (1, 3)]
CONFIGS: dict[str, Config] = {
    "A": custom_config("A30", [_A30_FULL], name="A", batch_size=32),
    "B": custom_config("A30", [_A30_FULL] * 2, name="B", batch_size=64),
    "C": custom_config("A30", [_A30_FULL] * 4, name="C", batch_size=128),
    "D": custom_config("A100", [[(2, 0), (2, 2), (1, 4), (1, 5), (1, 6)]], name="D", batch_size=32),
}
"""Table 1. Batch sizes 32, 64, 128, 32."""

BATCH_SIZE = {k: c.batch_size for k, c in CONFIGS.items()}


def config(name: str | Config) -> Config:
    """The configuration ``"A"``..``"D"`` of Table 1 (a :class:`Config` passes through)."""
    if isinstance(name, Config):
        return name
    try:
        return CONFIGS[str(name).upper()]
    except KeyError:
        raise CaseError(f"unknown configuration {name!r}; known: {', '.join(CONFIGS)}", field="config") from None


# ---------------------------------------------------------------------------
# Jobs

@dataclass(frozen=True)
class Task:
    """A GPU task (Sec. 2.1): what a probe announces to the workload manager.

    Attributes
    ----------
    memory_gb
        Global memory it holds from its start to its end.
    warps
        Resident warps it launches (Algorithm 2's ``InUseWarps``).
    duration
        Seconds it runs alone on an instance.
    cpu
        Host seconds of its job before the task's probe fires (after the
        previous task ended, or after the job was launched).
    """

    memory_gb: float
    warps: int
    duration: float
    cpu: float = 0.0


@dataclass(frozen=True)
class Job:
    """A batch job: a sequence of GPU tasks, isolated or not.

    ``footprint_gb`` is the peak memory the user declares (what Slurm and
    Algorithm 1, line 11, see); it defaults to the largest task's memory.
    """

    name: str
    tasks: tuple[Task, ...]
    isolated: bool
    footprint_gb: float = 0.0
    kind: str = ""

    def __post_init__(self) -> None:
        if not self.footprint_gb:
            object.__setattr__(self, "footprint_gb", max((t.memory_gb for t in self.tasks), default=0.0))

    @property
    def length(self) -> float:
        """Lifetime when run alone: host phases plus standalone task durations."""
        return float(sum(t.cpu + t.duration for t in self.tasks))


@dataclass(frozen=True)
class Slowdown:
    """Slowdown of a task that shares an instance with other tasks.

    The paper reports measured kernel slowdowns under CASE's packing (Table 2:
    -1.7 % .. 7.5 %, mean 2.2 %, all under 10 %) but no model. We use a
    warp-contention model: while task *i* runs on instance *G* next to other
    tasks, it progresses at rate ``1 / (1 + s_i)`` with

        s_i = min(cap, beta * (sum of the other tasks' warps on G) / warp_capacity(G)).

    A task alone (always the case under Slurm and for isolated jobs) runs at
    full speed. ``beta = 0.035`` is calibrated so that the densest A30
    workloads (1:4 and 0:1 on A, B, C, seeds 0-2) give a mean slowdown of
    2.2 %, the paper's figure (``python -m benchmarks.case`` reports it);
    ``cap`` is the paper's 10 % ceiling. ``Slowdown(0, 0)`` turns it off.
    """

    beta: float = 0.035
    cap: float = 0.10

    def factor(self, own_warps: int, total_warps: int, capacity: int) -> float:
        """Time stretch ``1 + s_i`` of a task given the instance's warps in use (its own included)."""
        if self.beta <= 0 or capacity <= 0:
            return 1.0
        return 1.0 + min(self.cap, self.beta * max(0, total_warps - own_warps) / capacity)


@dataclass(frozen=True)
class Workload:
    """A batch of jobs for one node: the problem both policies and the exact model solve.

    Attributes
    ----------
    config
        The node.
    jobs
        In submission order (the order of both queues).
    slowdown
        Sharing model (:class:`Slowdown`).
    match
        How exclusive jobs (isolated jobs, and every job under Slurm) pick an
        instance. ``"class"`` (default) reads Algorithm 1, line 11,
        ``J.footprint == G.TotalMem``, as Slurm's typed GRES request: the job
        may only use instances of the smallest memory class that holds its
        footprint. ``"fit"``: any instance with enough memory.
    """

    config: Config
    jobs: tuple[Job, ...]
    slowdown: Slowdown = field(default_factory=Slowdown)
    match: str = "class"
    name: str = ""

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def n(self) -> int:
        return len(self.jobs)

    def job(self, name: str) -> Job:
        for j in self.jobs:
            if j.name == name:
                return j
        raise CaseError("no such job", task=name, field="job")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; read back with :meth:`from_dict`."""
        return {
            "config": {"name": self.config.name, "batch_size": self.config.batch_size,
                       "model": self.config.instances[0].model,
                       "layouts": _layouts(self.config)},
            "slowdown": {"beta": self.slowdown.beta, "cap": self.slowdown.cap},
            "match": self.match, "name": self.name,
            "jobs": [{"name": j.name, "isolated": j.isolated, "footprint_gb": j.footprint_gb, "kind": j.kind,
                      "tasks": [{"memory_gb": t.memory_gb, "warps": t.warps, "duration": t.duration, "cpu": t.cpu}
                                for t in j.tasks]} for j in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> "Workload":
        """Read the form written by :meth:`to_dict`, strictly.

        An unknown field, ``"isolated": "false"``, ``"warps": 1.7``,
        ``"duration": "5"`` or a missing field raises :class:`CaseError`
        naming the file, job and field.

        Examples
        --------
        >>> w = generate("A", ratio="1:1", n=4, seed=0)
        >>> Workload.from_dict(w.to_dict()) == w
        True
        >>> d = w.to_dict(); d["jobs"][0]["isolated"] = "false"
        >>> Workload.from_dict(d, source="w.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        instances.case.CaseError: w.json: task ...: field isolated: 'false' is not true or false
        """
        try:
            return _read_workload(cls, data, source)
        except InstanceError as exc:
            if source and not exc.source:
                raise type(exc)(exc.reason, source=source, task=exc.task, field=exc.field) from None
            raise

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def _layouts(cfg: Config) -> list[list[list[int]]]:
    out: dict[int, list[list[int]]] = {}
    for i in cfg.instances:
        out.setdefault(i.gpu, []).append([i.size, i.start])
    return [out[g] for g in sorted(out)]


#: Most resident warps of one task (the largest MIG instance holds 7 x 896 =
#: 6,272); the bound keeps warp sums exact in any integer type.
MAX_WARPS = 10**9

_WORKLOAD_FIELDS = ("config", "slowdown", "match", "name", "jobs")
_CONFIG_FIELDS = ("name", "batch_size", "model", "layouts")
_JOB_FIELDS = ("name", "isolated", "footprint_gb", "kind", "tasks")
_TASK_FIELDS = ("memory_gb", "warps", "duration", "cpu")


def _mapping(raw: Any, what: str, source: str | None, task: str | None = None) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise CaseError(f"must be an object, got {raw!r}"[:200], source=source, task=task, field=what)
    return raw


def _list(raw: Any, what: str, source: str | None, task: str | None = None) -> list:
    if not isinstance(raw, list):
        raise CaseError(f"must be a list, got {raw!r}"[:200], source=source, task=task, field=what)
    return raw


def _need(raw: Mapping[str, Any], key: str, where: str, source: str | None, task: str | None = None) -> Any:
    if key not in raw:
        raise CaseError("missing", source=source, task=task, field=f"{where}{key}")
    return raw[key]


def _read_workload(cls: type, data: Any, source: str | None) -> "Workload":
    kw = dict(source=source, error=CaseError)
    data = _mapping(data, "workload", source)
    files.no_unknown_fields(data, _WORKLOAD_FIELDS, **kw)
    c = _mapping(_need(data, "config", "", source), "config", source)
    files.no_unknown_fields(c, _CONFIG_FIELDS, where="config", **kw)
    model = files.text(_need(c, "model", "config.", source), empty=False, field="config.model", **kw)
    layouts = []
    for g, lay in enumerate(_list(_need(c, "layouts", "config.", source), "config.layouts", source)):
        where = f"config.layouts[{g}]"
        pairs = []
        for k, pair in enumerate(_list(lay, where, source)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise CaseError(f"a placement is [size, start], got {pair!r}"[:200], source=source,
                                field=f"{where}[{k}]")
            pairs.append(tuple(files.integer(x, field=f"{where}[{k}]", **kw) for x in pair))
        layouts.append(pairs)
    cfg_name = files.text(c.get("name", "custom"), empty=False, field="config.name", **kw)
    batch = files.integer(c.get("batch_size", 32), lo=1, field="config.batch_size", **kw)
    try:
        cfg = custom_config(model, layouts, name=cfg_name, batch_size=batch)
    except InstanceError as exc:  # named after the configuration; name the file and the field instead
        fld = ("config.model" if exc.field == "gpu" else
               f"config.{exc.field}" if (exc.field or "").startswith("layouts") else "config.layouts")
        raise CaseError(f"{exc.reason} (configuration {cfg_name!r})", source=source, field=fld) from None
    sd = _mapping(data.get("slowdown", {}), "slowdown", source)
    files.no_unknown_fields(sd, ("beta", "cap"), where="slowdown", **kw)
    slowdown = Slowdown(files.real(sd.get("beta", 0.035), lo=0.0, field="slowdown.beta", **kw),
                        files.real(sd.get("cap", 0.10), lo=0.0, field="slowdown.cap", **kw))
    jobs = []
    for i, j in enumerate(_list(_need(data, "jobs", "", source), "jobs", source)):
        j = _mapping(j, f"jobs[{i}]", source)
        name = files.name(_need(j, "name", f"jobs[{i}].", source), task=f"#{i}", **kw)
        files.no_unknown_fields(j, _JOB_FIELDS, task=name, **kw)
        tasks = []
        for k, t in enumerate(_list(_need(j, "tasks", "", source, name), "tasks", source, name)):
            where = f"tasks[{k}]"
            t = _mapping(t, where, source, name)
            files.no_unknown_fields(t, _TASK_FIELDS, task=name, where=where, **kw)
            tasks.append(Task(
                files.real(_need(t, "memory_gb", f"{where}.", source, name), positive=True, task=name,
                           field=f"{where}.memory_gb", **kw),
                files.integer(_need(t, "warps", f"{where}.", source, name), lo=1, hi=MAX_WARPS, task=name,
                              field=f"{where}.warps", **kw),
                files.real(_need(t, "duration", f"{where}.", source, name), positive=True, task=name,
                           field=f"{where}.duration", **kw),
                files.real(t.get("cpu", 0.0), lo=0.0, task=name, field=f"{where}.cpu", **kw)))
        jobs.append(Job(name, tuple(tasks),
                        files.boolean(_need(j, "isolated", "", source, name), task=name, field="isolated", **kw),
                        files.real(j.get("footprint_gb", 0.0), lo=0.0, task=name, field="footprint_gb", **kw),
                        files.text(j.get("kind", ""), task=name, field="kind", **kw)))
    return cls(cfg, tuple(jobs), slowdown, files.text(data.get("match", "class"), field="match", **kw),
               files.text(data.get("name", ""), field="name", **kw))


def from_dict(data: Mapping[str, Any], *, source: str | None = None) -> "Workload":
    """:meth:`Workload.from_dict`: a workload from its JSON form."""
    return Workload.from_dict(data, source=source)


def load(path: str | Path) -> "Workload":
    """Read a workload JSON file (the form of :meth:`Workload.to_dict`).

    A bad file raises :class:`CaseError` naming the file, job and field.

    Examples
    --------
    >>> import os, tempfile
    >>> w = generate("D", ratio="1:1", n=6, seed=2)
    >>> path = os.path.join(tempfile.mkdtemp(), "w.json"); save(w, path)
    >>> load(path) == w
    True
    """
    return Workload.from_dict(files.read_json(path, CaseError), source=str(path))


def save(workload: "Workload", path: str | Path) -> None:
    """Write a workload as JSON (read back by :func:`load`); an unwritable path raises
    :class:`~instances.errors.OutputError`."""
    files.write_text(path, json.dumps(workload.to_dict(), indent=1) + "\n")


def eligible_instances(workload: Workload, job: Job) -> tuple[Instance, ...]:
    """Instances an exclusive job (isolated, or any job under Slurm) may hold.

    Examples
    --------
    >>> w = generate("D", ratio="1:0", n=4, seed=3)
    >>> all(len(eligible_instances(w, j)) in (2, 3) for j in w.jobs)
    True
    """
    ins = workload.config.instances
    fits = [i for i in ins if i.memory_gb >= job.footprint_gb - EPS]
    if workload.match == "fit" or not fits:
        return tuple(fits)
    cls = min(i.memory_gb for i in fits)
    return tuple(i for i in fits if i.memory_gb == cls)


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(float(value))


#: Largest sum of the jobs' standalone lengths (seconds) a workload may have:
#: far below the float range, so every time a method computes (sums of
#: slowed-down durations) stays finite.
MAX_TOTAL_TIME = 1e300


def _validate(w: Workload) -> None:
    if w.match not in ("class", "fit"):
        raise CaseError(f"must be 'class' or 'fit', got {w.match!r}", field="match")
    if not (_real(w.slowdown.beta) and _real(w.slowdown.cap) and w.slowdown.beta >= 0 and 0 <= w.slowdown.cap < 1):
        raise CaseError("beta must be a finite number >= 0 and 0 <= cap < 1", field="slowdown")
    if not w.jobs:
        raise CaseError("a workload needs at least one job", field="jobs")
    seen: set[str] = set()
    biggest = max(i.memory_gb for i in w.config.instances)
    for j in w.jobs:
        files.name(j.name, task=repr(j.name), error=CaseError)
        if j.name in seen:
            raise CaseError("job name used twice", task=j.name, field="name")
        seen.add(j.name)
        if not isinstance(j.isolated, bool):
            raise CaseError(f"{j.isolated!r} is not True or False", task=j.name, field="isolated")
        if not j.tasks:
            raise CaseError("a job needs at least one GPU task", task=j.name, field="tasks")
        for k, t in enumerate(j.tasks):
            for fld, val in (("memory_gb", t.memory_gb), ("duration", t.duration), ("warps", t.warps),
                             ("cpu", t.cpu)):
                ok = (isinstance(val, (int, np.integer)) and not isinstance(val, bool) and 1 <= val <= MAX_WARPS
                      if fld == "warps" else _real(val) and (val >= 0 if fld == "cpu" else val > 0))
                if not ok:
                    raise CaseError(f"{val!r} is out of range", task=j.name, field=f"tasks[{k}].{fld}")
            if t.memory_gb > biggest + EPS:
                raise CaseError(f"{t.memory_gb} GB exceeds the largest instance ({biggest} GB)", task=j.name,
                                field=f"tasks[{k}].memory_gb")
        if not _real(j.footprint_gb) or j.footprint_gb < max(t.memory_gb for t in j.tasks) - EPS:
            raise CaseError("declared footprint is below the job's largest task", task=j.name,
                            field="footprint_gb")
        if not eligible_instances(w, j):
            raise CaseError(f"footprint {j.footprint_gb} GB fits no instance", task=j.name, field="footprint_gb")
    total = sum(j.length for j in w.jobs)  # a plain float sum: inf on overflow, caught below
    if not total <= MAX_TOTAL_TIME:
        raise CaseError(f"job lengths too large: they add up to {total:.3g} s (at most {MAX_TOTAL_TIME:.0e} s, so "
                        "that slowed-down times and their sums stay finite); express the times in larger units",
                        field="tasks")


# ---------------------------------------------------------------------------
# Generator (Sec. 3.1-3.3)

RATIOS = ("1:0", "4:1", "2:1", "1:1", "1:2", "1:4", "0:1")
"""Isolated : non-isolated ratios of Sec. 3.1."""

ISOLATED_POOL = ("gan", "cnn", "rnn", "resnet")
ISOLATED_POOL_A100 = ("gan", "cnn", "rnn", "resnet152-fruits360", "vgg16-voc")
NONISOLATED_POOL = ("backprop", "bfs", "sradv1", "sradv2", "dwt2d", "needle", "lavaMD")

# Runtimes are not given in the paper; these ranges are our assumptions and
# are documented in generate(). Times are rounded to 0.1 s and memory to 1 MB
# so the exact model's integer scaling is exact.
_ISO_TASKS = (2, 5)          # training epochs
_ISO_EPOCH_S = (15.0, 40.0)
_ISO_CPU_S = (0.5, 2.0)      # evaluation / checkpoint between epochs
_NON_TASKS = (1, 4)          # GPU tasks per Rodinia run
_NON_TASK_S = (5.0, 30.0)
_NON_CPU_S = (1.0, 10.0)     # input parsing, host-side compute between kernels
_LARGE_TIME_FACTOR = 2.5     # A100: jobs over 5 GB run markedly longer (Sec. 3.3)


def _parse_ratio(ratio: str | tuple[int, int]) -> tuple[int, int]:
    try:
        a, b = (ratio.split(":") if isinstance(ratio, str) else ratio)
        a, b = int(a), int(b)
    except (ValueError, TypeError):
        raise CaseError(f"ratio {ratio!r} must look like '2:1'", field="ratio") from None
    if a < 0 or b < 0 or a + b == 0:
        raise CaseError(f"ratio {ratio!r} needs non-negative parts, not both 0", field="ratio")
    return a, b


def generate(config_name: str | Config = "A", ratio: str | tuple[int, int] = "1:1", n: int | None = None, *,
             small: bool = False, seed: int = 0, slowdown: Slowdown | None = None,
             match: str = "class") -> Workload:
    """A random batch following Sec. 3.1-3.3 of the CASE paper.

    Parameters
    ----------
    config_name
        ``"A"``, ``"B"``, ``"C"`` (A30 nodes) or ``"D"`` (A100), or a Config.
    ratio
        Isolated : non-isolated, e.g. ``"2:1"``: the batch has
        ``round(n * 2/3)`` isolated jobs; the order of the batch is shuffled.
    n
        Batch size; default Table 1's (32, 64, 128, 32).
    small
        A30 only: non-isolated footprints 0.3-6 GB (Figure 2) instead of
        1-6 GB (Figure 1).
    seed
        Seed of ``numpy.random.default_rng``.

    Notes
    -----
    Memory follows the paper: on A30 nodes isolated jobs (gan, cnn, rnn,
    resnet) have ~2 GB footprints (we draw 1.5-2.5 GB), non-isolated Rodinia
    jobs 1-6 GB (or 0.3-6 GB). On the A100, 2/5 of isolated jobs and 7/15 of
    non-isolated jobs have 5-10 GB footprints, the rest 1-5 GB, and the large
    jobs run 2.5x longer (the paper says "significantly longer"). Within a
    non-isolated job, one task uses the full footprint and the others
    25-100 % of it, which is what makes Slurm's peak-memory reservation
    wasteful. Runtimes are our assumptions (the paper gives none):
    isolated jobs 2-5 epochs of 15-40 s with 0.5-2 s host phases; non-
    isolated jobs 1-4 tasks of 5-30 s with 1-10 s host phases. Warps per
    task: 1/8 to 1 of a 1g instance's resident warps. All times are rounded
    to 0.1 s and memory to 1 MB.

    Examples
    --------
    >>> w = generate("C", ratio="2:1", seed=1)
    >>> w.n, sum(j.isolated for j in w.jobs)
    (128, 85)
    >>> generate("C", ratio="2:1", seed=1) == w
    True
    """
    cfg = config(config_name)
    a, b = _parse_ratio(ratio)
    n = cfg.batch_size if n is None else int(n)
    if n < 1:
        raise CaseError(f"batch size must be >= 1, got {n}", field="n")
    rng = np.random.default_rng(seed)
    n_iso = int(round(n * a / (a + b)))
    flags = np.array([True] * n_iso + [False] * (n - n_iso))
    rng.shuffle(flags)
    a100 = any(i.model == "A100" for i in cfg.instances)
    big = max(i.memory_gb for i in cfg.instances)
    small_cls = min(i.memory_gb for i in cfg.instances)
    jobs = []
    for k, iso in enumerate(flags):
        large = False
        if iso:
            if a100:
                large = rng.random() < 2 / 5
                kind = str(rng.choice(ISOLATED_POOL_A100[3:] if large else ISOLATED_POOL_A100[:3]))
                foot = rng.uniform(small_cls, big) if large else rng.uniform(1.0, small_cls)
            else:
                kind = str(rng.choice(ISOLATED_POOL))
                foot = rng.uniform(1.5, 2.5)
        else:
            kind = str(rng.choice(NONISOLATED_POOL))
            if a100:
                large = rng.random() < 7 / 15
                foot = rng.uniform(small_cls, big) if large else rng.uniform(1.0, small_cls)
            else:
                foot = rng.uniform(0.3 if small else 1.0, big)
        foot = round(float(foot), 3)
        scale = _LARGE_TIME_FACTOR if large else 1.0
        if iso:
            m = int(rng.integers(_ISO_TASKS[0], _ISO_TASKS[1] + 1))
            mems = [foot] * m
            durs = rng.uniform(*_ISO_EPOCH_S, size=m) * scale
            cpus = np.concatenate([[0.0], rng.uniform(*_ISO_CPU_S, size=m - 1)])
        else:
            m = int(rng.integers(_NON_TASKS[0], _NON_TASKS[1] + 1))
            peak = int(rng.integers(m))
            mems = [foot if i == peak else round(foot * float(rng.uniform(0.25, 1.0)), 3) for i in range(m)]
            durs = rng.uniform(*_NON_TASK_S, size=m) * scale
            cpus = rng.uniform(*_NON_CPU_S, size=m)
        warps = rng.integers(WARPS_PER_SLICE // 8, WARPS_PER_SLICE + 1, size=m)
        tasks = tuple(Task(max(0.001, float(mm)), int(w), max(0.1, round(float(d), 1)), round(float(c), 1))
                      for mm, w, d, c in zip(mems, warps, durs, cpus))
        jobs.append(Job(f"j{k:03d}-{kind}", tasks, bool(iso), foot, kind))
    return Workload(cfg, tuple(jobs), slowdown or Slowdown(), match,
                    name=f"{cfg.name}-{a}:{b}{'-small' if small else ''}-n{n}-s{seed}")


# ---------------------------------------------------------------------------
# Traces (what a policy or an exact model produces)

@dataclass(frozen=True)
class TaskRun:
    """Task ``index`` of ``job`` ran on instance ``instance`` from ``start`` to ``end``."""

    job: str
    index: int
    instance: int
    start: float
    end: float


@dataclass(frozen=True)
class Hold:
    """Exclusive use of an instance by one job (isolated jobs; every job under Slurm)."""

    job: str
    instance: int
    start: float
    end: float


@dataclass(frozen=True)
class JobRun:
    """A job's life: ``launch`` (got a worker), ``start`` (began running), ``end``."""

    job: str
    launch: float
    start: float
    end: float


@dataclass(frozen=True)
class Trace:
    """The full record of one batch run.

    ``workers`` is the worker limit the run obeyed (``None``: not limited,
    e.g. an exact model's schedule, which relaxes it). The JSON form
    (:meth:`to_json`, read back by :meth:`from_json` and :func:`load_trace`)
    is :meth:`to_dict`'s.

    Examples
    --------
    >>> t = Trace("hand", (JobRun("a", 0.0, 0.0, 5.5),), (TaskRun("a", 0, 1, 0.5, 5.5),))
    >>> t.makespan
    5.5
    >>> Trace.from_json(t.to_json()) == t
    True
    """

    policy: str
    jobs: tuple[JobRun, ...]
    tasks: tuple[TaskRun, ...]
    holds: tuple[Hold, ...] = ()
    workers: int | None = None

    @property
    def makespan(self) -> float:
        return max((j.end for j in self.jobs), default=0.0)

    def job(self, name: str) -> JobRun:
        for j in self.jobs:
            if j.job == name:
                return j
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: times as floats, indices as ints (numpy scalars converted).

        ``makespan`` is derived from the jobs; it is written for readers of
        the file, and :meth:`from_json` checks that it agrees.
        """
        return {"policy": self.policy, "workers": None if self.workers is None else int(self.workers),
                "makespan": float(self.makespan),
                "jobs": [{"job": j.job, "launch": float(j.launch), "start": float(j.start), "end": float(j.end)}
                         for j in self.jobs],
                "tasks": [{"job": t.job, "index": int(t.index), "instance": int(t.instance),
                           "start": float(t.start), "end": float(t.end)} for t in self.tasks],
                "holds": [{"job": h.job, "instance": int(h.instance), "start": float(h.start),
                           "end": float(h.end)} for h in self.holds]}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (floats by ``repr``, so they read back exactly)."""
        return json.dumps(self.to_dict(), allow_nan=False)

    def save(self, path: str | Path) -> None:
        """Write the trace as JSON (read back by :func:`load_trace`); an unwritable path raises
        :class:`~instances.errors.OutputError`."""
        files.write_text(path, json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n")

    @classmethod
    def from_json(cls, text: str, *, source: str | None = None) -> "Trace":
        """Read a trace written by :meth:`to_json`, strictly.

        An unknown field, an instance of ``1.5`` or ``true``, a time given as
        text, ``NaN`` or ``1e400``, a key written twice, a ``makespan`` that
        is not the last job end: each raises :class:`CaseError` naming
        ``source``, the job and the field, in one line. Whether the trace is
        feasible is :func:`check`'s business, not the reader's.

        Examples
        --------
        >>> Trace.from_json('{"policy": "p", "jobs": [{"job": "a", "launch": 0, "start": 0, "end": NaN}], '
        ...                 '"tasks": []}', source="t.json")
        Traceback (most recent call last):
        ...
        instances.case.CaseError: t.json: task a: field jobs[0].end: must be a finite number, got nan
        """
        return _read_trace(cls, files.parse_json(text, source, CaseError), source)


_TRACE_ITEMS = {"jobs": (JobRun, ("job", "launch", "start", "end")),
                "tasks": (TaskRun, ("job", "index", "instance", "start", "end")),
                "holds": (Hold, ("job", "instance", "start", "end"))}


def _read_trace(cls: type, data: Any, source: str | None) -> Trace:
    kw = dict(source=source, error=CaseError)
    data = _mapping(data, "trace", source)
    files.no_unknown_fields(data, ("policy", "workers", "makespan", "jobs", "tasks", "holds"), **kw)
    policy = files.text(_need(data, "policy", "", source), field="policy", **kw)
    workers = data.get("workers")
    if workers is not None:
        workers = files.integer(workers, lo=1, field="workers", **kw)
    items: dict[str, tuple] = {}
    for key, (kind, fields) in _TRACE_ITEMS.items():
        out = []
        for i, raw in enumerate(_list(_need(data, key, "", source) if key != "holds" else data.get(key, []),
                                      key, source)):
            where = f"{key}[{i}]"
            raw = _mapping(raw, where, source)
            name = files.name(_need(raw, "job", f"{where}.", source), field=f"{where}.job", **kw)
            files.no_unknown_fields(raw, fields, task=name, where=where, **kw)
            values = [name]
            for f in fields[1:]:
                v = _need(raw, f, f"{where}.", source, name)
                values.append(files.integer(v, lo=0, task=name, field=f"{where}.{f}", **kw)
                              if f in ("index", "instance") else
                              files.real(v, task=name, field=f"{where}.{f}", **kw))
            out.append(kind(*values))
        items[key] = tuple(out)
    trace = cls(policy, items["jobs"], items["tasks"], items["holds"], workers)
    if data.get("makespan") is not None:
        written = files.real(data["makespan"], field="makespan", **kw)
        if written != trace.makespan:
            raise CaseError(f"{written!r} is not the last job end, {trace.makespan!r}", source=source,
                            field="makespan")
    return trace


def load_trace(path: str | Path) -> Trace:
    """Read a trace JSON file (the form of :meth:`Trace.to_dict`), strictly (see :meth:`Trace.from_json`).

    Examples
    --------
    >>> import os, tempfile
    >>> w = Workload(custom_config("A30", [[(1, 0)]]), (Job("a", (Task(4, 10, 5.0, 0.5),), False),))
    >>> t = Trace("hand", (JobRun("a", 0.0, 0.0, 5.5),), (TaskRun("a", 0, 0, 0.5, 5.5),))
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json"); t.save(path)
    >>> load_trace(path) == t, check(w, load_trace(path))
    (True, [])
    """
    return Trace.from_json(files.read_text(path, CaseError), source=str(path))


def check(workload: Workload, trace: Trace, *, tol: float = 1e-6) -> list[str]:
    """Independent feasibility check of a trace; ``[]`` means feasible.

    Verifies, from the data alone: every task of every job runs exactly once,
    in order, after its host phase; it lasts at least its standalone duration
    and at most ``1 + slowdown.cap`` times it; no instance's memory is ever
    exceeded (Algorithm 2's guarantee); every isolated job holds one instance
    and no other job's task or hold overlaps that hold (Algorithm 1's
    guarantee); holds on an instance never overlap; an exclusive job's tasks
    lie inside its hold; and the number of live jobs never exceeds
    ``trace.workers``.

    Examples
    --------
    >>> from instances.case import *
    >>> cfg = custom_config("A30", [[(1, 0)]])
    >>> w = Workload(cfg, (Job("a", (Task(4, 10, 5.0),), False), Job("b", (Task(3, 10, 5.0),), False)))
    >>> t = Trace("hand", (JobRun("a", 0, 0, 5), JobRun("b", 0, 0, 5)),
    ...           (TaskRun("a", 0, 0, 0, 5), TaskRun("b", 0, 0, 0, 5)))
    >>> check(w, t)
    ['instance 0 (1g.6gb): 7 GB in use at t=0 > 6 GB']
    """
    out: list[str] = []
    ins = workload.config.instances
    cap = workload.slowdown.cap
    jobs = {j.name: j for j in workload.jobs}
    runs = {}
    for jr in trace.jobs:
        if jr.job not in jobs:
            out.append(f"trace has unknown job {jr.job!r}")
        elif jr.job in runs:
            out.append(f"job {jr.job}: listed twice")
        else:
            runs[jr.job] = jr
    for name in jobs:
        if name not in runs:
            out.append(f"job {name}: missing from the trace")
    by_job: dict[str, dict[int, TaskRun]] = {n: {} for n in jobs}
    for tr in trace.tasks:
        if tr.job not in jobs:
            out.append(f"task of unknown job {tr.job!r}")
            continue
        if not (0 <= tr.instance < len(ins)):
            out.append(f"job {tr.job} task {tr.index}: no instance {tr.instance}")
            continue
        if tr.index in by_job[tr.job]:
            out.append(f"job {tr.job} task {tr.index}: runs twice")
        by_job[tr.job][tr.index] = tr
    for name, job in jobs.items():
        got = by_job[name]
        if sorted(got) != list(range(len(job.tasks))):
            out.append(f"job {name}: tasks {sorted(got)} ran, expected 0..{len(job.tasks) - 1}")
            continue
        jr = runs.get(name)
        prev_end = jr.start if jr else 0.0
        if jr and not (0 <= jr.launch + tol and jr.launch <= jr.start + tol):
            out.append(f"job {name}: launch {jr.launch} must be in [0, start {jr.start}]")
        for k, t in enumerate(job.tasks):
            tr = got[k]
            if tr.start < prev_end + t.cpu - tol:
                out.append(f"job {name} task {k}: starts at {tr.start:g} before its host phase ends "
                           f"({prev_end + t.cpu:g})")
            d = tr.end - tr.start
            if d < t.duration - tol or d > t.duration * (1 + cap) + tol:
                out.append(f"job {name} task {k}: lasts {d:g}, must be in [{t.duration:g}, "
                           f"{t.duration * (1 + cap):g}]")
            if t.memory_gb > ins[tr.instance].memory_gb + tol:
                out.append(f"job {name} task {k}: {t.memory_gb} GB does not fit instance {tr.instance}")
            prev_end = tr.end
        if jr and jr.end < prev_end - tol:
            out.append(f"job {name}: ends at {jr.end:g} before its last task ({prev_end:g})")
    # memory: sweep each instance, releases before acquisitions at equal times
    for i in ins:
        ev = []
        for tr in trace.tasks:
            if tr.instance == i.index and tr.job in jobs and tr.index < len(jobs[tr.job].tasks):
                m = jobs[tr.job].tasks[tr.index].memory_gb
                ev.append((tr.start, 1, m))
                ev.append((tr.end - tol, 0, -m))
        used = 0.0
        for time, _, dm in sorted(ev):
            used += dm
            if used > i.memory_gb + tol:
                out.append(f"instance {i.index} ({i.profile}): {used:g} GB in use at t={time:g} > {i.memory_gb:g} GB")
                break
    # exclusivity
    holds_of: dict[str, list[Hold]] = {}
    for h in trace.holds:
        holds_of.setdefault(h.job, []).append(h)
        if not (0 <= h.instance < len(ins)):
            out.append(f"hold of {h.job}: no instance {h.instance}")
    for name, job in jobs.items():
        hs = holds_of.get(name, [])
        if job.isolated and len(hs) != 1:
            out.append(f"job {name}: isolated but has {len(hs)} instance holds")
        for h in hs:
            for tr in by_job[name].values():
                if tr.instance != h.instance or tr.start < h.start - tol or tr.end > h.end + tol:
                    out.append(f"job {name} task {tr.index}: outside its hold of instance {h.instance}")
            if job.isolated and ins[h.instance].memory_gb < job.footprint_gb - tol:
                out.append(f"job {name}: footprint {job.footprint_gb} GB exceeds its instance {h.instance}")
    for h in trace.holds:
        for tr in trace.tasks:
            if tr.job != h.job and tr.instance == h.instance and tr.start < h.end - tol and tr.end > h.start + tol:
                kind = "isolated job" if h.job in jobs and jobs[h.job].isolated else "exclusive job"
                out.append(f"{kind} {h.job} shares instance {h.instance} with job {tr.job} task {tr.index} "
                           f"at t={max(h.start, tr.start):g}")
    hs_sorted = sorted(trace.holds, key=lambda h: (h.instance, h.start))
    for h1, h2 in zip(hs_sorted, hs_sorted[1:]):
        if h1.instance == h2.instance and h2.start < h1.end - tol:
            out.append(f"holds of {h1.job} and {h2.job} overlap on instance {h1.instance}")
    if trace.workers is not None:
        ev = sorted([(r.launch, 1) for r in trace.jobs] + [(r.end - tol, -1) for r in trace.jobs])
        live = 0
        for time, d in ev:
            live += d
            if live > trace.workers:
                out.append(f"{live} jobs live at t={time:g} > {trace.workers} workers")
                break
    return out


def memory_profile(workload: Workload, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Memory in use over time, as a step function.

    Returns ``(times, fraction)``: from ``times[k]`` to ``times[k+1]`` the
    running tasks hold ``fraction[k]`` of the node's instance memory (the
    quantity of Figure 4). Isolated jobs count their tasks' memory, not the
    whole instance.
    """
    jobs = {j.name: j for j in workload.jobs}
    delta: dict[float, float] = {}
    for tr in trace.tasks:
        m = jobs[tr.job].tasks[tr.index].memory_gb
        delta[tr.start] = delta.get(tr.start, 0.0) + m
        delta[tr.end] = delta.get(tr.end, 0.0) - m
    times = np.array(sorted(delta) or [0.0])
    used = np.cumsum([delta.get(t, 0.0) for t in times])
    return times, np.clip(used, 0.0, None) / workload.config.total_memory_gb


def metrics(workload: Workload, trace: Trace) -> dict[str, float]:
    """Throughput, turnaround, memory utilisation and slowdown of one run.

    * ``makespan``: last job end (the whole batch is submitted at t = 0).
    * ``throughput``: jobs per hour, ``n / makespan``.
    * ``turnaround``: mean job end (submission at 0).
    * ``mem_util``: time-averaged fraction of instance memory held by running
      tasks over ``[0, makespan]``.
    * ``slowdown``: mean over the tasks of non-isolated jobs of
      ``(end - start) / duration - 1`` (the quantity of Table 2).

    Examples
    --------
    >>> w = generate("A", "1:1", n=4, seed=0)
    >>> from instances.case import Trace
    >>> m = metrics(w, Trace("empty", (), ()))
    >>> m["makespan"]
    0.0
    """
    ms = trace.makespan
    jobs = {j.name: j for j in workload.jobs}
    times, frac = memory_profile(workload, trace)
    if ms > 0 and len(times) > 1:
        widths = np.diff(np.clip(times, 0, ms))
        util = float(np.sum(widths * frac[:-1]) / ms)
    else:
        util = 0.0
    sd = [(tr.end - tr.start) / jobs[tr.job].tasks[tr.index].duration - 1 for tr in trace.tasks
          if not jobs[tr.job].isolated]
    return {
        "makespan": ms,
        "throughput": 3600.0 * len(trace.jobs) / ms if ms > 0 else 0.0,
        "turnaround": float(np.mean([r.end for r in trace.jobs])) if trace.jobs else 0.0,
        "mem_util": util,
        "slowdown": float(np.mean(sd)) if sd else 0.0,
    }

