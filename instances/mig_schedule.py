"""Schedules of MIG problems: task placements and times, reconfiguration operations, JSON.

The schedule JSON is the toolkit's interchange format::

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
from instances import files
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
        """Write the schedule JSON; an unwritable path raises :class:`~instances.errors.OutputError`."""
        files.write_text(path, self.to_json(indent=1) + "\n")

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any], gpu: GPUSpec | None = None, *,
                  source: str | None = None) -> "Schedule":
        """Read a schedule from a JSON string or an already parsed dict.

        ``gpu`` resolves placements; by default the GPU named in the data.
        Every field is read strictly (an unknown field, a placement size of
        ``4.7`` or ``true``, a time given as text) and a fault raises
        :class:`~instances.errors.InstanceError` naming the entry and field.

        Examples
        --------
        >>> Schedule.from_json('{"gpu": "A30", "tasks": 5}', source="s.json")
        Traceback (most recent call last):
        ...
        instances.errors.InstanceError: s.json: field tasks: must be a list, got 5
        """
        if isinstance(data, str):
            data = parse_json(data, source)
        if not isinstance(data, Mapping):
            raise InstanceError("a schedule must be a JSON object", source=source)
        files.no_unknown_fields(data, ("gpu", "tasks", "reconfigurations", "makespan"), source=source)
        gpu_name = data.get("gpu")
        if gpu_name is not None:
            files.text(gpu_name, empty=False, source=source, field="gpu")
        if gpu is None:
            if gpu_name is None:
                raise InstanceError("missing 'gpu' name", source=source, field="gpu")
            try:
                gpu = gpus.get(gpu_name)
            except InstanceError as exc:
                raise exc.located(source) if source else exc

        def entries(key: str) -> list:
            raw = data.get(key, [])
            if not isinstance(raw, list):
                raise InstanceError(f"must be a list, got {raw!r}"[:200], source=source, field=key)
            return raw

        def placement(raw: Any, where: str, task: str | None) -> Placement:
            if not isinstance(raw, Mapping):
                raise InstanceError(f"placement must be {{'size': int, 'start': int}}, got {raw!r}"[:200],
                                    source=source, task=task, field=where)
            files.no_unknown_fields(raw, ("size", "start"), source=source, task=task, where=where)
            if "size" not in raw or "start" not in raw:
                raise InstanceError("placement must be {'size': int, 'start': int}", source=source, task=task,
                                    field=where)
            size = files.integer(raw["size"], source=source, task=task, field=f"{where}.size")
            start = files.integer(raw["start"], source=source, task=task, field=f"{where}.start")
            try:
                return gpu.placement(size, start)
            except InstanceError as exc:
                raise InstanceError(exc.reason, source=source, task=task, field=where) from None

        def number(raw: Mapping[str, Any], key: str, where: str, task: str | None) -> float:
            if key not in raw:
                raise InstanceError(f"missing '{key}'", source=source, task=task, field=f"{where}.{key}")
            return files.real(raw[key], source=source, task=task, field=f"{where}.{key}")

        tasks = []
        for i, rt in enumerate(entries("tasks")):
            where = f"tasks[{i}]"
            if not isinstance(rt, Mapping) or "task" not in rt:
                raise InstanceError("each entry needs a 'task' name", source=source, field=where)
            name = files.name(rt["task"], source=source, field=f"{where}.task")
            files.no_unknown_fields(rt, ("task", "placement", "start", "end"), source=source, task=name,
                                    where=where)
            tasks.append(ScheduledTask(name, placement(rt.get("placement"), f"{where}.placement", name),
                                       number(rt, "start", where, name), number(rt, "end", where, name)))
        recs = []
        for i, rr in enumerate(entries("reconfigurations")):
            where = f"reconfigurations[{i}]"
            if not isinstance(rr, Mapping) or rr.get("op") not in ("create", "destroy"):
                raise InstanceError("op must be 'create' or 'destroy'", source=source, field=f"{where}.op")
            files.no_unknown_fields(rr, ("op", "placement", "start", "end"), source=source, where=where)
            recs.append(Reconfiguration(rr["op"], placement(rr.get("placement"), f"{where}.placement", None),
                                        number(rr, "start", where, None), number(rr, "end", where, None)))
        ms = data.get("makespan")
        if ms is not None:
            ms = files.real(ms, source=source, field="makespan")
        return cls(gpu_name if gpu_name is not None else gpu.name, tasks, recs, ms)

    @classmethod
    def load(cls, path: str | Path, gpu: GPUSpec | None = None) -> "Schedule":
        """Read a schedule JSON file (see :meth:`from_json`)."""
        return cls.from_json(read_text(path), gpu, source=str(path))
