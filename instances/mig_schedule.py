"""Schedules of MIG problems: task placements and times, reconfiguration operations, JSON.

The schedule JSON is the toolkit's interchange format (DESIGN.md)::

    {"gpu": "A100",
     "tasks": [{"task": "t0", "placement": {"size": 3, "start": 4}, "start": 0.2, "end": 10.5}],
     "reconfigurations": [{"op": "create", "placement": {"size": 3, "start": 4},
                           "start": 0.0, "end": 0.2}],
     "makespan": 10.5}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from instances import gpus
from instances.errors import InstanceError
from instances.files import parse_json, read_text
from instances.gpus import GPUSpec, Placement

__all__ = ["ScheduledTask", "Reconfiguration", "Schedule"]


@dataclass(frozen=True)
class ScheduledTask:
    """One task run: ``task`` on ``placement`` from ``start`` to ``end`` (seconds)."""

    task: str
    placement: Placement
    start: float
    end: float

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "placement": self.placement.to_dict(), "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Reconfiguration:
    """A create or destroy operation of an instance at ``placement``."""

    op: str  # "create" | "destroy"
    placement: Placement
    start: float
    end: float

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "placement": self.placement.to_dict(), "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Schedule:
    """A complete schedule of one problem (or multi-batch workload).

    Attributes
    ----------
    gpu
        Name of the GPU the schedule is for.
    tasks
        One :class:`ScheduledTask` per task.
    reconfigurations
        Create / destroy operations, in any order (empty when reconfiguration
        is not modelled).
    makespan
        Last task end. Computed when not given; a value read from a file is
        kept as written so the checker can verify it.

    Examples
    --------
    >>> from instances import gpus
    >>> a30 = gpus.get("A30")
    >>> s = Schedule("A30", [ScheduledTask("a", a30.placement(4, 0), 0.13, 1.63)],
    ...              [Reconfiguration("create", a30.placement(4, 0), 0.0, 0.13)])
    >>> s.makespan
    1.63
    >>> Schedule.from_json(s.to_json()) == s
    True
    """

    gpu: str
    tasks: tuple[ScheduledTask, ...]
    reconfigurations: tuple[Reconfiguration, ...] = ()
    makespan: float = field(default=None)  # type: ignore[assignment]

    def __init__(self, gpu: str | GPUSpec, tasks: Iterable[ScheduledTask],
                 reconfigurations: Iterable[Reconfiguration] = (), makespan: float | None = None) -> None:
        tasks = tuple(tasks)
        object.__setattr__(self, "gpu", gpu.name if isinstance(gpu, GPUSpec) else str(gpu))
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "reconfigurations", tuple(reconfigurations))
        if makespan is None:
            makespan = max((t.end for t in tasks), default=0.0)
        object.__setattr__(self, "makespan", float(makespan))

    def by_task(self) -> dict[str, ScheduledTask]:
        return {t.task: t for t in self.tasks}

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "tasks": [t.to_dict() for t in self.tasks],
            "reconfigurations": [r.to_dict() for r in self.reconfigurations],
            "makespan": self.makespan,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=1) + "\n")

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any], gpu: GPUSpec | None = None, *,
                  source: str | None = None) -> "Schedule":
        """Read a schedule from a JSON string or an already parsed dict.

        ``gpu`` resolves placements; by default the GPU named in the data.
        """
        if isinstance(data, str):
            data = parse_json(data, source)
        if not isinstance(data, Mapping):
            raise InstanceError("a schedule must be a JSON object", source=source)
        gpu_name = data.get("gpu")
        if gpu is None:
            if not isinstance(gpu_name, str):
                raise InstanceError("missing 'gpu' name", source=source, field="gpu")
            gpu = gpus.get(gpu_name)

        def placement(raw: Any, where: str, task: str | None) -> Placement:
            try:
                return gpu.placement(int(raw["size"]), int(raw["start"]))
            except (KeyError, TypeError, ValueError):
                raise InstanceError("placement must be {'size': int, 'start': int}", source=source, task=task,
                                    field=where) from None
            except InstanceError as exc:
                raise InstanceError(exc.reason, source=source, task=task, field=where) from None

        def number(raw: Mapping[str, Any], key: str, where: str, task: str | None) -> float:
            v = raw.get(key)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InstanceError(f"{key} {v!r} is not a number", source=source, task=task,
                                    field=f"{where}.{key}")
            return float(v)

        tasks = []
        for i, rt in enumerate(data.get("tasks", [])):
            where = f"tasks[{i}]"
            if not isinstance(rt, Mapping) or not isinstance(rt.get("task"), str):
                raise InstanceError("each entry needs a 'task' name", source=source, field=where)
            name = rt["task"]
            tasks.append(ScheduledTask(name, placement(rt.get("placement"), f"{where}.placement", name),
                                       number(rt, "start", where, name), number(rt, "end", where, name)))
        recs = []
        for i, rr in enumerate(data.get("reconfigurations", [])):
            where = f"reconfigurations[{i}]"
            if not isinstance(rr, Mapping) or rr.get("op") not in ("create", "destroy"):
                raise InstanceError("op must be 'create' or 'destroy'", source=source, field=f"{where}.op")
            recs.append(Reconfiguration(rr["op"], placement(rr.get("placement"), f"{where}.placement", None),
                                        number(rr, "start", where, None), number(rr, "end", where, None)))
        ms = data.get("makespan")
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float))):
            raise InstanceError(f"{ms!r} is not a number", source=source, field="makespan")
        return cls(gpu_name if isinstance(gpu_name, str) else gpu.name, tasks, recs, ms)

    @classmethod
    def load(cls, path: str | Path, gpu: GPUSpec | None = None) -> "Schedule":
        return cls.from_json(read_text(path), gpu, source=str(path))
