"""A node of g identical MIG GPUs running one batch of moldable tasks.

The FAR paper (Villarrubia et al., Sec. 3.2, last paragraph; Sec. 5.1)
schedules "multiple A30s and multiple A100/H100s" with "as many trees as
GPUs". The problem read here:

* the node holds ``gpus`` (g >= 1) identical GPUs of one model, numbered
  ``0 .. g-1``; the batch is released at time 0;
* every task runs once, on one instance of one GPU (a MIG instance never spans
  two GPUs), for its time at that instance's size;
* every GPU obeys the six reconfiguration rules of :mod:`instances.mig_check`
  on its own: it starts empty, and its create/destroy operations are
  serialised on *its own* channel (rule 4 per GPU). The paper measured the
  serialisation on one GPU only (Sec. 1.2) and says nothing of operations on
  two GPUs at once; each GPU has its own driver state, so we read the channel
  as per GPU. Without reconfiguration (zero create/destroy times) the reading
  does not matter;
* the makespan is the last task end over all GPUs.

A schedule lists each task with the index of its GPU and its single-GPU
placement and times, and each create/destroy operation with its GPU index.
JSON::

    {"gpu": "A30", "gpus": 2,
     "tasks": [{"gpu_index": 1, "task": "t0", "placement": {"size": 2, "start": 2}, "start": 0.12, "end": 5.0}],
     "reconfigurations": [{"gpu_index": 1, "op": "create", "placement": {"size": 2, "start": 2},
                           "start": 0.0, "end": 0.12}],
     "makespan": 5.0}

A problem file is a MIG problem file with ``"gpus"``:
``{"gpu": "A30", "gpus": 2, "tasks": [...]}``.

:func:`check` is the independent checker: node rules (every task on exactly
one GPU, GPU indices in range, the makespan) and, per GPU, the single-GPU
checker :func:`instances.mig_check.check` on that GPU's tasks and operations.

Examples
--------
>>> from instances import mig_node
>>> p = mig_node.generate(6, "A30", gpus=2, seed=1)
>>> p.gpus, p.n, p.gpu.name
(2, 6, 'A30')
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from instances import files
from instances.errors import InstanceError
from instances.gpus import GPUSpec
from instances.mig_check import TOLERANCE, check as check_gpu
from instances.mig_generator import generate as _generate_batch
from instances.mig_problem import Problem, Task, from_dict as _batch_from_dict
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.options import integer, typed

__all__ = ["NodeProblem", "NodeSchedule", "check", "is_feasible", "generate", "load", "save", "from_dict",
           "MAX_GPUS"]

#: The most GPUs a node may hold (servers hold 4-8 MIG GPUs).
MAX_GPUS = 64


def _count(gpus: Any, source: str | None = None) -> int:
    return files.integer(gpus, lo=1, hi=MAX_GPUS, source=source, field="gpus")


@dataclass(frozen=True)
class NodeProblem:
    """A batch of moldable tasks on a node of ``gpus`` identical MIG GPUs.

    Attributes
    ----------
    batch
        The tasks and the GPU model, as a single-GPU :class:`~instances.mig.Problem`
        (validated as such; release 0).
    gpus
        Number of GPUs g, 1 to :data:`MAX_GPUS`.

    Examples
    --------
    >>> p = NodeProblem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})], gpus=3)
    >>> p.gpus, p.n, p.subproblem(["a"]).n
    (3, 1, 1)
    """

    batch: Problem
    gpus: int

    def __init__(self, gpu: GPUSpec | str, tasks: Sequence[Task], gpus: int = 1, *,
                 source: str | None = None) -> None:
        object.__setattr__(self, "gpus", _count(gpus, source))
        object.__setattr__(self, "batch", Problem(gpu, tasks, source=source))

    @classmethod
    def from_problem(cls, problem: Problem, gpus: int) -> "NodeProblem":
        """The batch of a single-GPU problem on ``gpus`` GPUs of its model (its release must be 0)."""
        if not isinstance(problem, Problem):
            raise InstanceError(f"expected a mig.Problem, got {type(problem).__name__}", field="problem")
        if problem.release:
            raise InstanceError(f"a node batch is released at 0, got release {problem.release}", field="release")
        return cls(problem.gpu, problem.tasks, gpus)

    @property
    def gpu(self) -> GPUSpec:
        return self.batch.gpu

    @property
    def tasks(self) -> tuple[Task, ...]:
        return self.batch.tasks

    @property
    def n(self) -> int:
        return self.batch.n

    def task(self, name: str) -> Task:
        return self.batch.task(name)

    def subproblem(self, names: Iterable[str]) -> Problem:
        """The single-GPU problem of the named tasks (in the node's task order)."""
        wanted = set(names)
        return Problem(self.gpu, [t for t in self.tasks if t.name in wanted])

    def without_reconfiguration(self) -> "NodeProblem":
        """The same node with zero create/destroy times."""
        return NodeProblem(self.gpu.without_reconfiguration(), self.tasks, self.gpus)

    def to_dict(self) -> dict[str, Any]:
        d = self.batch.to_dict()
        return {"gpu": d["gpu"], "gpus": self.gpus, "tasks": d["tasks"]}


def from_dict(data: Mapping[str, Any], *, source: str | None = None) -> NodeProblem:
    """A :class:`NodeProblem` from JSON data (a MIG problem with ``"gpus"``; no release, no batches).

    Examples
    --------
    >>> from_dict({"gpu": "A30", "gpus": 2, "tasks": [{"name": "a", "times": {"1": 4, "2": 2.5, "4": 1.5}}]}).gpus
    2
    >>> from_dict({"gpu": "A30", "gpus": 0, "tasks": []})
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field gpus: must be an integer between 1 and 64, got 0
    """
    if not isinstance(data, Mapping):
        raise InstanceError("the top level must be a JSON object", source=source)
    files.no_unknown_fields(data, ("gpu", "gpus", "tasks"), source=source)
    if "gpus" not in data:
        raise InstanceError("missing 'gpus' (the number of GPUs of the node)", source=source, field="gpus")
    count = _count(data["gpus"], source)
    batch = _batch_from_dict({k: v for k, v in data.items() if k != "gpus"}, source=source)
    return NodeProblem(batch.gpu, batch.tasks, count, source=source)


def load(path: str | Path) -> NodeProblem:
    """Read a node problem JSON file; bad content raises :class:`InstanceError` naming the file."""
    return from_dict(files.read_json(path), source=str(path))


@typed
def save(problem: NodeProblem, path: str | Path) -> None:
    """Write a node problem as JSON (``load(save(p)) == p``)."""
    files.write_text(path, json.dumps(problem.to_dict(), indent=1) + "\n")


def generate(n: int, gpu: str | GPUSpec = "A100", gpus: int = 2, workload: Any = "MixedScaling",
             times: Any = "WideTimes", seed: int | None = 0, **kwargs: Any) -> NodeProblem:
    """The FAR paper's synthetic batch (Sec. 6.3, :func:`instances.mig.generate`) on ``gpus`` GPUs.

    The tasks are those of ``mig.generate(n, gpu, workload, times, seed, **kwargs)``; ``gpus`` is
    1 to :data:`MAX_GPUS` (a bad value is an :class:`~instances.errors.OptionError`, checked first).

    Examples
    --------
    >>> from instances import mig
    >>> generate(5, "A30", gpus=3, seed=2).tasks == mig.generate(5, "A30", seed=2).tasks
    True
    """
    gpus = integer(gpus, "gpus", lo=1, hi=MAX_GPUS)
    return NodeProblem.from_problem(_generate_batch(n, gpu, workload, times, seed, **kwargs), gpus)


# ---------------------------------------------------------------------------
# schedules

@dataclass(frozen=True)
class NodeSchedule:
    """A schedule of a :class:`NodeProblem`: every task run and operation with its GPU index.

    Attributes
    ----------
    gpu
        Name of the GPU model.
    gpus
        Number of GPUs of the node.
    tasks
        ``(gpu index, ScheduledTask)`` pairs.
    reconfigurations
        ``(gpu index, Reconfiguration)`` pairs.
    makespan
        Last task end over all GPUs (computed when not given).

    Examples
    --------
    >>> from instances import gpus
    >>> a30 = gpus.get("A30").without_reconfiguration()
    >>> s = NodeSchedule.from_parts("A30", [Schedule("A30", []),
    ...                                     Schedule("A30", [ScheduledTask("a", a30.placement(4, 0), 0.0, 1.5)])])
    >>> s.gpus, s.makespan, s.part(1).tasks[0].task
    (2, 1.5, 'a')
    >>> NodeSchedule.from_json(s.to_json()) == s
    True
    """

    gpu: str
    gpus: int
    tasks: tuple[tuple[int, ScheduledTask], ...]
    reconfigurations: tuple[tuple[int, Reconfiguration], ...] = ()
    makespan: float = field(default=None)  # type: ignore[assignment]

    def __init__(self, gpu: str | GPUSpec, gpus: int, tasks: Iterable[tuple[int, ScheduledTask]],
                 reconfigurations: Iterable[tuple[int, Reconfiguration]] = (),
                 makespan: float | None = None) -> None:
        tasks = tuple((int(i), st) for i, st in tasks)
        object.__setattr__(self, "gpu", gpu.name if isinstance(gpu, GPUSpec) else str(gpu))
        object.__setattr__(self, "gpus", int(gpus))
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "reconfigurations", tuple((int(i), op) for i, op in reconfigurations))
        if makespan is None:
            makespan = max((st.end for _, st in tasks), default=0.0)
        object.__setattr__(self, "makespan", float(makespan))

    @classmethod
    def from_parts(cls, gpu: str | GPUSpec, parts: Sequence[Schedule]) -> "NodeSchedule":
        """The node schedule whose GPU ``i`` runs ``parts[i]``."""
        return cls(gpu, len(parts), [(i, st) for i, s in enumerate(parts) for st in s.tasks],
                   [(i, op) for i, s in enumerate(parts) for op in s.reconfigurations])

    def part(self, index: int) -> Schedule:
        """GPU ``index``'s own schedule (its tasks and operations)."""
        return Schedule(self.gpu, [st for i, st in self.tasks if i == index],
                        [op for i, op in self.reconfigurations if i == index])

    def assignment(self) -> dict[str, int]:
        """``{task name: gpu index}``."""
        return {st.task: i for i, st in self.tasks}

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "gpus": self.gpus,
                "tasks": [{"gpu_index": i, **st.to_dict()} for i, st in self.tasks],
                "reconfigurations": [{"gpu_index": i, **op.to_dict()} for i, op in self.reconfigurations],
                "makespan": self.makespan}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | Path) -> None:
        """Write the schedule JSON; an unwritable path raises :class:`~instances.errors.OutputError`."""
        files.write_text(path, self.to_json(indent=1) + "\n")

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any], gpu: GPUSpec | None = None, *,
                  source: str | None = None) -> "NodeSchedule":
        """Read a node schedule from JSON text or parsed data, as strictly as :meth:`Schedule.from_json`.

        A GPU index must be an integer >= 0; whether it is below ``gpus`` is
        the checker's question (:func:`check`).

        Examples
        --------
        >>> NodeSchedule.from_json('{"gpu": "A30", "gpus": 2, "tasks": [{"task": "a"}]}', source="s.json")
        Traceback (most recent call last):
        ...
        instances.errors.InstanceError: s.json: field tasks[0].gpu_index: missing 'gpu_index'
        """
        if isinstance(data, str):
            data = files.parse_json(data, source)
        if not isinstance(data, Mapping):
            raise InstanceError("a node schedule must be a JSON object", source=source)
        files.no_unknown_fields(data, ("gpu", "gpus", "tasks", "reconfigurations", "makespan"), source=source)
        if "gpus" not in data:
            raise InstanceError("missing 'gpus'", source=source, field="gpus")
        count = _count(data["gpus"], source)
        indices: dict[str, list[int]] = {}
        stripped: dict[str, Any] = {k: v for k, v in data.items() if k not in ("gpus", "tasks", "reconfigurations")}
        for key in ("tasks", "reconfigurations"):
            raw = data.get(key, [])
            if not isinstance(raw, list):
                raise InstanceError(f"must be a list, got {raw!r}"[:200], source=source, field=key)
            indices[key], entries = [], []
            for i, entry in enumerate(raw):
                where = f"{key}[{i}].gpu_index"
                if not isinstance(entry, Mapping):
                    raise InstanceError("each entry must be an object", source=source, field=f"{key}[{i}]")
                if "gpu_index" not in entry:
                    raise InstanceError("missing 'gpu_index'", source=source, field=where)
                indices[key].append(files.integer(entry["gpu_index"], lo=0, source=source, field=where))
                entries.append({k: v for k, v in entry.items() if k != "gpu_index"})
            stripped[key] = entries
        flat = Schedule.from_json(stripped, gpu, source=source)
        ms = data.get("makespan")
        return cls(flat.gpu, count, zip(indices["tasks"], flat.tasks),
                   zip(indices["reconfigurations"], flat.reconfigurations),
                   None if ms is None else flat.makespan)

    @classmethod
    def load(cls, path: str | Path, gpu: GPUSpec | None = None) -> "NodeSchedule":
        """Read a node schedule JSON file (see :meth:`from_json`)."""
        return cls.from_json(files.read_text(path), gpu, source=str(path))


# ---------------------------------------------------------------------------
# the checker

@typed
def check(problem: NodeProblem, schedule: NodeSchedule) -> list[str]:
    """Every rule the node schedule breaks, as messages; ``[]`` means feasible.

    Node rules (messages start with ``"node"``): the GPU model and count
    match, every GPU index is in ``0 .. g-1``, every task of the problem runs
    on exactly one GPU and no other task runs, the declared makespan is the
    last task end. Then, for each GPU ``i``, the single-GPU checker
    (:func:`instances.mig_check.check`, rules 1-6 with GPU ``i``'s own
    create/destroy channel) on the problem of the tasks GPU ``i`` runs and
    GPU ``i``'s schedule; its messages are prefixed ``"GPU i: "``.

    Examples
    --------
    >>> from instances import gpus
    >>> p = NodeProblem("A30", [Task("a", {1: 4.0, 2: 2.5, 4: 1.5})], gpus=2).without_reconfiguration()
    >>> a30 = p.gpu
    >>> run = ScheduledTask("a", a30.placement(4, 0), 0.0, 1.5)
    >>> check(p, NodeSchedule("A30", 2, [(1, run)]))
    []
    >>> check(p, NodeSchedule("A30", 2, [(0, run), (1, run)]))
    ['node: task a runs on GPUs 0 and 1 (each task runs once, on one GPU)']
    >>> check(p, NodeSchedule("A30", 2, [(2, run)]))[0]
    'node: task a is on GPU index 2; the node has GPUs 0..1'
    """
    out: list[str] = []
    g = problem.gpus
    if schedule.gpu != problem.gpu.name:
        out.append(f"node: the schedule is for {schedule.gpu!r}, the problem for {problem.gpu.name!r}")
    if schedule.gpus != g:
        out.append(f"node: the schedule is for {schedule.gpus} GPUs, the node has {g}")
    known = {t.name for t in problem.tasks}
    where: dict[str, set[int]] = defaultdict(set)
    for i, st in schedule.tasks:
        if not 0 <= i < g:
            out.append(f"node: task {st.task} is on GPU index {i}; the node has GPUs 0..{g - 1}")
        elif st.task not in known:
            out.append(f"node: task {st.task} is not in the problem")
        else:
            where[st.task].add(i)
    for i, op in schedule.reconfigurations:
        if not 0 <= i < g:
            out.append(f"node: {op.op} of {op.placement.name} at {op.start:.9g} is on GPU index {i}; "
                       f"the node has GPUs 0..{g - 1}")
    listed = {st.task for _, st in schedule.tasks}
    for t in problem.tasks:
        if t.name not in listed:
            out.append(f"node: task {t.name} is not scheduled")
        elif len(where[t.name]) > 1:
            on = sorted(where[t.name])
            out.append(f"node: task {t.name} runs on GPUs {', '.join(map(str, on[:-1]))} and {on[-1]} "
                       "(each task runs once, on one GPU)")
    last = max((st.end for _, st in schedule.tasks), default=0.0)
    if abs(schedule.makespan - last) > TOLERANCE * max(1.0, abs(last)):
        out.append(f"node: rule 6 (makespan): declared {schedule.makespan:.9g}, last task ends at {last:.9g}")
    if schedule.gpu != problem.gpu.name:
        return out  # placements of another GPU model cannot be checked against this one
    for i in range(g):
        runs = [st for k, st in schedule.tasks if k == i and st.task in known]
        ops = [op for k, op in schedule.reconfigurations if k == i]
        sub = problem.subproblem(st.task for st in runs)
        out += [f"GPU {i}: {v}" for v in check_gpu(sub, Schedule(schedule.gpu, runs, ops))]
    return out


@typed
def is_feasible(problem: NodeProblem, schedule: NodeSchedule) -> bool:
    """``check(problem, schedule) == []``."""
    return not check(problem, schedule)

