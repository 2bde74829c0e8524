"""The problem of the CASE family: jobs of GPU tasks, the sharing slowdown, the workload and its JSON form.

Jobs are sequences of *GPU tasks* (CASE paper, Sec. 2.1: a kernel launch and
the operations its parameters touch), each with global memory, resident
warps and a standalone duration, preceded by a host (CPU) phase. A job
either demands isolation (a whole instance, Algorithm 1) or not (its tasks
may be packed into any instance with free memory, Algorithm 2).
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from instances import files
from instances.case_hardware import EPS, CaseError, Config, Instance, custom_config
from instances.errors import InstanceError
from instances.options import typed


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
    full speed. ``beta = 0.035`` makes the densest A30 workloads show the
    paper's mean slowdown of 2.2 % (``python -m benchmarks.case`` reports
    it); ``cap`` is the paper's 10 % ceiling. ``Slowdown(0, 0)`` turns it off.
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
        >>> from instances.case import generate
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


def as_mapping(raw: Any, what: str, source: str | None, task: str | None = None) -> Mapping[str, Any]:
    """``raw`` if it is a JSON object, else a :class:`CaseError` naming the field ``what``."""
    if not isinstance(raw, Mapping):
        raise CaseError(f"must be an object, got {raw!r}"[:200], source=source, task=task, field=what)
    return raw


def as_list(raw: Any, what: str, source: str | None, task: str | None = None) -> list:
    """``raw`` if it is a JSON list, else a :class:`CaseError` naming the field ``what``."""
    if not isinstance(raw, list):
        raise CaseError(f"must be a list, got {raw!r}"[:200], source=source, task=task, field=what)
    return raw


def required(raw: Mapping[str, Any], key: str, where: str, source: str | None, task: str | None = None) -> Any:
    """``raw[key]``, or a :class:`CaseError` naming the missing field ``where + key``."""
    if key not in raw:
        raise CaseError("missing", source=source, task=task, field=f"{where}{key}")
    return raw[key]


def _read_workload(cls: type, data: Any, source: str | None) -> "Workload":
    kw = dict(source=source, error=CaseError)
    data = as_mapping(data, "workload", source)
    files.no_unknown_fields(data, _WORKLOAD_FIELDS, **kw)
    c = as_mapping(required(data, "config", "", source), "config", source)
    files.no_unknown_fields(c, _CONFIG_FIELDS, where="config", **kw)
    model = files.text(required(c, "model", "config.", source), empty=False, field="config.model", **kw)
    layouts = []
    for g, lay in enumerate(as_list(required(c, "layouts", "config.", source), "config.layouts", source)):
        where = f"config.layouts[{g}]"
        pairs = []
        for k, pair in enumerate(as_list(lay, where, source)):
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
    sd = as_mapping(data.get("slowdown", {}), "slowdown", source)
    files.no_unknown_fields(sd, ("beta", "cap"), where="slowdown", **kw)
    slowdown = Slowdown(files.real(sd.get("beta", 0.035), lo=0.0, field="slowdown.beta", **kw),
                        files.real(sd.get("cap", 0.10), lo=0.0, field="slowdown.cap", **kw))
    jobs = []
    for i, j in enumerate(as_list(required(data, "jobs", "", source), "jobs", source)):
        j = as_mapping(j, f"jobs[{i}]", source)
        name = files.name(required(j, "name", f"jobs[{i}].", source), task=f"#{i}", **kw)
        files.no_unknown_fields(j, _JOB_FIELDS, task=name, **kw)
        tasks = []
        for k, t in enumerate(as_list(required(j, "tasks", "", source, name), "tasks", source, name)):
            where = f"tasks[{k}]"
            t = as_mapping(t, where, source, name)
            files.no_unknown_fields(t, _TASK_FIELDS, task=name, where=where, **kw)
            tasks.append(Task(
                files.real(required(t, "memory_gb", f"{where}.", source, name), positive=True, task=name,
                           field=f"{where}.memory_gb", **kw),
                files.integer(required(t, "warps", f"{where}.", source, name), lo=1, hi=MAX_WARPS, task=name,
                              field=f"{where}.warps", **kw),
                files.real(required(t, "duration", f"{where}.", source, name), positive=True, task=name,
                           field=f"{where}.duration", **kw),
                files.real(t.get("cpu", 0.0), lo=0.0, task=name, field=f"{where}.cpu", **kw)))
        jobs.append(Job(name, tuple(tasks),
                        files.boolean(required(j, "isolated", "", source, name), task=name, field="isolated", **kw),
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
    >>> from instances.case import generate
    >>> w = generate("D", ratio="1:1", n=6, seed=2)
    >>> path = os.path.join(tempfile.mkdtemp(), "w.json"); save(w, path)
    >>> load(path) == w
    True
    """
    return Workload.from_dict(files.read_json(path, CaseError), source=str(path))


@typed
def save(workload: "Workload", path: str | Path) -> None:
    """Write a workload as JSON (read back by :func:`load`); an unwritable path raises
    :class:`~instances.errors.OutputError`."""
    files.write_text(path, json.dumps(workload.to_dict(), indent=1) + "\n")


@typed
def eligible_instances(workload: Workload, job: Job) -> tuple[Instance, ...]:
    """Instances an exclusive job (isolated, or any job under Slurm) may hold.

    Examples
    --------
    >>> from instances.case import generate
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
#: Roundings at the horizon a start + duration may take before the checker's absolute tolerance
#: (``EPS``) would see them: workloads whose times a double holds less precisely are refused.
PRECISION_ROUNDINGS = 8


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
    # precision: every time of a trace is at most the slowed-down serial length; near it a double holds a
    # time only to ulp(horizon), and the checker compares durations within an absolute EPS
    horizon = total * (1 + w.slowdown.cap)
    if PRECISION_ROUNDINGS * float(np.spacing(horizon)) > EPS:
        raise CaseError(f"job lengths add up to {total:.3g} s, where a double holds a time only to "
                        f"{float(np.spacing(horizon)):.3g} s, coarser than the checker's tolerance {EPS:g} s "
                        f"({PRECISION_ROUNDINGS} roundings allowed; at most about "
                        f"{EPS / PRECISION_ROUNDINGS * 2**52:.2g} s); express the times in larger units", field="tasks")
