"""The problem of the heterogeneous-GPU family: tasks, GPUs, validation, and its JSON form.

Model (heterogeneous-GPU scheduling paper, Sec. I.B): task ``i`` has
workload ``L_i``, memory demand ``m_i`` (GB), deadline ``d_i``, weight
``w_i`` and arrival ``a_i``; GPU ``j`` has speed ``v_j`` and memory ``M_j``.
:func:`load` / :func:`save` / :func:`from_dict` read and write the JSON
form strictly (unknown fields refused, numbers never coerced).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from instances import files
from instances.errors import InstanceError
from instances.options import typed


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
#: The checker's tolerance (``hetero_check.TOL``) and the roundings at the horizon allowed in a
#: start + duration: data whose shortest run a double cannot hold that precisely near the horizon
#: (a task arriving at 1e17 that "runs 0 s") is refused, as ``mig_problem.check_scale`` does.
PRECISION_TOL = 1e-6
PRECISION_ROUNDINGS = 8


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
            # precision: near the horizon a double holds a time only to ulp(horizon); the shortest run
            # (least workload on the fastest GPU) must survive a start + duration within the checker's
            # tolerance TOL * max(1, p), with PRECISION_ROUNDINGS roundings to spare
            shortest = min(t.workload for t in self.tasks) / max(g.speed for g in self.gpus)
            # whole-number runs and arrivals below 2**53 (OR-Library data) add up exactly: always kept
            exact = horizon <= 2**53 and bool(np.all(np.mod(self.p, 1) == 0)) and all(
                float(t.arrival).is_integer() for t in self.tasks)
            if not exact and PRECISION_ROUNDINGS * math.ulp(horizon) > PRECISION_TOL * max(1.0, shortest):
                arrivals = max(t.arrival for t in self.tasks)
                raise InstanceError(f"times reach {horizon:.3g}, where a double holds a time only to "
                                    f"{math.ulp(horizon):.3g}: the shortest run, {shortest:.3g}, would be lost in a "
                                    f"start + duration (allowed: {PRECISION_ROUNDINGS} roundings within the "
                                    f"checker's tolerance {PRECISION_TOL:g} * max(1, p)); shift the arrivals towards "
                                    "0 or use other units", source=src,
                                    field="arrival" if arrivals >= horizon / 2 else "workload")

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


@typed
def save(problem: HeteroProblem, path: str | Path) -> None:
    """Write ``problem`` as JSON (round-trips through :func:`load`)."""
    Path(path).write_text(json.dumps(problem.to_dict(), indent=1))
