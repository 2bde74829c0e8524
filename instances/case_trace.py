"""Traces of the CASE family: what a policy or an exact model produces, and their strict JSON form."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instances import files
from instances.case_hardware import CaseError
from instances.case_problem import as_list, as_mapping, required


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
        """The run of job ``name`` (the first listed); ``KeyError`` if none."""
        return self._job_runs[name]

    @functools.cached_property
    def _job_runs(self) -> dict[str, JobRun]:  # built once: a lookup per job stays linear in all
        return {j.job: j for j in reversed(self.jobs)}

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
    data = as_mapping(data, "trace", source)
    files.no_unknown_fields(data, ("policy", "workers", "makespan", "jobs", "tasks", "holds"), **kw)
    policy = files.text(required(data, "policy", "", source), field="policy", **kw)
    workers = data.get("workers")
    if workers is not None:
        workers = files.integer(workers, lo=1, field="workers", **kw)
    items: dict[str, tuple] = {}
    for key, (kind, fields) in _TRACE_ITEMS.items():
        out = []
        for i, raw in enumerate(as_list(required(data, key, "", source) if key != "holds" else data.get(key, []),
                                      key, source)):
            where = f"{key}[{i}]"
            raw = as_mapping(raw, where, source)
            name = files.name(required(raw, "job", f"{where}.", source), field=f"{where}.job", **kw)
            files.no_unknown_fields(raw, fields, task=name, where=where, **kw)
            values = [name]
            for f in fields[1:]:
                v = required(raw, f, f"{where}.", source, name)
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
    >>> from instances.case import Job, Task, Workload, check, custom_config
    >>> w = Workload(custom_config("A30", [[(1, 0)]]), (Job("a", (Task(4, 10, 5.0, 0.5),), False),))
    >>> t = Trace("hand", (JobRun("a", 0.0, 0.0, 5.5),), (TaskRun("a", 0, 0, 0.5, 5.5),))
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json"); t.save(path)
    >>> load_trace(path) == t, check(w, load_trace(path))
    (True, [])
    """
    return Trace.from_json(files.read_text(path, CaseError), source=str(path))
