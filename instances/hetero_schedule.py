"""Schedules of the heterogeneous-GPU family: assignments, their JSON form, evaluation of sequences."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from instances import files
from instances.errors import InstanceError
from instances.hetero_problem import HeteroProblem
from instances.options import typed


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


@typed
def evaluate_sequences(problem: HeteroProblem, sequences: Sequence[Sequence[int]]) -> Schedule:
    """Semi-active schedule of per-GPU task sequences: each task starts at
    ``max(a_i, end of its predecessor)`` (eqs. 4-6). Tasks in ``problem.unfit``
    are reported as unscheduled.

    Examples
    --------
    >>> from instances.hetero_orlib import orlib_wt40
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


@typed
def weighted_tardiness(problem: HeteroProblem, schedule: Schedule) -> float:
    """Objective (1): ``sum_i w_i max(0, c_i - d_i)`` over the scheduled tasks."""
    total = 0.0
    for a in schedule.assignments:
        t = problem.tasks[problem.index[a.task]]
        total += t.weight * max(0.0, a.end - t.deadline)
    return total
