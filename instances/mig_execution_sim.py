"""A simulated run of a MIG schedule whose tasks and reconfigurations last other than planned.

The FAR paper (Villarrubia, Costero, Igual, Olcoz, "Leveraging Multi-Instance
GPUs through moldable task scheduling", Sec. 6.2, Table 3) runs a FAR schedule
of 9 Rodinia kernels on an A30 and finds end times within about 2 % of the
planned ones. This module asks the question for any schedule and any timing
error: it draws real durations around the planned ones (:class:`Noise`), runs
the schedule's operations event by event (:mod:`instances.mig_execution_ops`)
on a virtual clock, and returns the realised schedule together with the
problem of the realised durations, which the checker accepts it against.

The noise model, seeded (``numpy.random.default_rng``):

* each task's times are multiplied by one factor (the same on every instance
  size, so the realised problem keeps the model's non-increasing times);
* each instance size's create time, and its destroy time, by one factor per
  run (the paper measured them stable, Sec. 2.1, so one draw per size and
  run rather than per operation; this also keeps them a property of the GPU,
  which is how the checker reads them);
* a factor is uniform in ``[1 - x, 1 + x]`` (``"uniform"``, x < 1) or
  lognormal with mean 1 and standard deviation x (``"lognormal"``).

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> two = [p.gpu.placement(2, 0), p.gpu.placement(2, 2)]
>>> plan = mig.Schedule("A30", [mig.ScheduledTask("a", two[0], 0.12, 2.62), mig.ScheduledTask("b", two[1], 0.24, 2.74)],
...                     [mig.Reconfiguration("create", two[0], 0.0, 0.12),
...                      mig.Reconfiguration("create", two[1], 0.12, 0.24)])
>>> run = simulate(p, plan, Noise(tasks=0.2, seed=1))
>>> run.violations, round(run.planned_makespan, 2), round(run.makespan, 2)
([], 2.74, 3.19)
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Union

import numpy as np

from instances import gpus
from instances.errors import InstanceError, OptionError
from instances.gpus import GPUSpec
from instances.mig_check import check
from instances.mig_execution_ops import (CREATE_GI, DESTROY_GI, WAIT, Backend, Operation, Program, Trace, execute,
                                         operations)
from instances.mig_problem import Problem, Task, Workload
from instances.mig_schedule import Schedule
from instances.options import choice, flag, known_options, seed as seed_option, typed

__all__ = ["DISTRIBUTIONS", "MAX_NOISE", "Noise", "Realisation", "realise", "SimulatedBackend", "Simulation",
           "simulate", "problem_from_schedule"]

AnyProblem = Union[Problem, Workload]
DISTRIBUTIONS = ("uniform", "lognormal")
#: Largest relative error accepted (lognormal; uniform needs x < 1 so that every time stays positive).
MAX_NOISE = 10.0


def _level(value: object, name: str, distribution: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise OptionError(f"must be a number >= 0, got {value!r}", field=name)
    hi = 1.0 if distribution == "uniform" else MAX_NOISE
    if value >= hi and not (distribution != "uniform" and value == hi):
        why = "below 1: a uniform factor must stay positive" if distribution == "uniform" else f"at most {hi:g}"
        raise OptionError(f"must be {why}, got {value!r}", field=name)
    return float(value)


@dataclass(frozen=True)
class Noise:
    """How far real durations stray from the planned ones.

    Attributes
    ----------
    tasks
        Relative error of the task times (0.2: up to +-20 % uniform, or a 20 %
        standard deviation lognormal).
    reconfiguration
        Relative error of the create and destroy times.
    distribution
        ``"uniform"`` or ``"lognormal"`` (:data:`DISTRIBUTIONS`).
    seed
        Seed of the draw; the same seed gives the same durations on every machine.
    """

    tasks: float = 0.0
    reconfiguration: float = 0.0
    distribution: str = "uniform"
    seed: int = 0

    def __post_init__(self) -> None:
        choice(self.distribution, DISTRIBUTIONS, "distribution")
        _level(self.tasks, "tasks", self.distribution)
        _level(self.reconfiguration, "reconfiguration", self.distribution)
        seed_option(self.seed, allow_none=False)

    def factors(self, rng: np.random.Generator, x: float, k: int) -> list[float]:
        """``k`` factors of relative error ``x``, each > 0."""
        if self.distribution == "uniform":
            return [float(v) for v in rng.uniform(1.0 - x, 1.0 + x, size=k)]
        sigma = math.sqrt(math.log1p(x * x))  # mean 1, standard deviation x
        return [float(v) for v in rng.lognormal(-sigma * sigma / 2, sigma, size=k)]


@dataclass(frozen=True)
class Realisation:
    """The drawn factors and the problem of the realised durations (same task names, releases and GPU name)."""

    problem: AnyProblem
    task_factors: dict[str, float]
    create_factors: dict[int, float]
    destroy_factors: dict[int, float]

    @property
    def largest_factor(self) -> float:
        return max([1.0, *self.task_factors.values(), *self.create_factors.values(),
                    *self.destroy_factors.values()])


@typed
def realise(problem: AnyProblem, noise: Noise) -> Realisation:
    """Draw real durations for ``problem``: tasks by name, then create and destroy times by size.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> r = realise(p, Noise(tasks=0.1, seed=3))
    >>> 0.9 <= r.task_factors["a"] <= 1.1, r.problem.task("a").time(4) == 1.5 * r.task_factors["a"]
    (True, True)
    """
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a MIG Problem or Workload, got {type(problem).__name__}", field="problem")
    if not isinstance(noise, Noise):
        raise OptionError(f"must be a Noise, got {type(noise).__name__}", field="noise")
    rng = np.random.default_rng(noise.seed)
    gpu = problem.gpu
    # by name, so that a task's factor depends on the seed, not on where the file lists it
    tf = dict(zip(sorted(t.name for t in problem.tasks), noise.factors(rng, noise.tasks, problem.n)))
    cf = dict(zip(gpu.sizes, noise.factors(rng, noise.reconfiguration, len(gpu.sizes))))
    df = dict(zip(gpu.sizes, noise.factors(rng, noise.reconfiguration, len(gpu.sizes))))
    real_gpu = replace(gpu, create_time=MappingProxyType({s: gpu.create_time[s] * cf[s] for s in gpu.sizes}),
                       destroy_time=MappingProxyType({s: gpu.destroy_time[s] * df[s] for s in gpu.sizes}))

    def scaled(batch: Problem) -> Problem:
        return Problem(real_gpu, [Task(t.name, {s: v * tf[t.name] for s, v in t.times.items()}, t.memory_gb)
                                  for t in batch.tasks], batch.release)

    real = (Workload(real_gpu, [scaled(b) for b in problem.batches]) if isinstance(problem, Workload)
            else scaled(problem))
    return Realisation(real, tf, cf, df)


@typed
def problem_from_schedule(schedule: Schedule, gpu: GPUSpec | str | None = None) -> Problem:
    """A problem whose task times on the sizes the schedule uses are the schedule's own durations.

    For a schedule read without its problem: a task that runs ``d`` seconds on
    ``s`` slices gets ``d`` on every size from ``s`` up and ``d * s / k`` on a
    smaller size ``k`` (non-increasing, as the model requires). Only the
    durations the schedule uses matter to the checker and to :func:`simulate`.

    Examples
    --------
    >>> from instances import mig
    >>> a30 = gpus.get("A30")
    >>> s = mig.Schedule("A30", [mig.ScheduledTask("a", a30.placement(2, 2), 0.12, 2.62)],
    ...                  [mig.Reconfiguration("create", a30.placement(2, 2), 0.0, 0.12)])
    >>> dict(problem_from_schedule(s).task("a").times)
    {1: 5.0, 2: 2.5, 4: 2.5}
    """
    gpu = gpus.get(gpu if gpu is not None else schedule.gpu)
    tasks = []
    for st in schedule.tasks:
        d, used = st.end - st.start, st.placement.size
        if not (d > 0 and math.isfinite(d)):
            raise InstanceError(f"runs {d!r} s; a task must run a finite time > 0", task=st.task, field="tasks")
        tasks.append(Task(st.task, {k: d if k >= used else d * used / k for k in gpu.sizes}))
    return Problem(gpu, tasks)


class SimulatedBackend(Backend):
    """Operations on a virtual clock, lasting what ``problem`` (the realised one) says.

    A create lasts the GPU's create time of the instance size (all of it on
    the GPU-instance step, the compute-instance step takes no time), a
    destroy its destroy time (on the GPU-instance step), a launch no time, a
    wait the task's time on the instance's size. Equal end times come out in
    the order the operations started.
    """

    def __init__(self, problem: AnyProblem) -> None:
        self.problem = problem
        self.clock = 0.0
        self._heap: list[tuple[float, int, int]] = []
        self._seq = 0

    def duration(self, op: Operation) -> float:
        size = op.placement.size
        if op.kind == CREATE_GI:
            return self.problem.gpu.create_time[size]
        if op.kind == DESTROY_GI:
            return self.problem.gpu.destroy_time[size]
        if op.kind == WAIT:
            return self.problem.task(op.task).time(size)
        return 0.0

    def now(self) -> float:
        return self.clock

    def start(self, op: Operation) -> None:
        heapq.heappush(self._heap, (self.clock + self.duration(op), self._seq, op.index))
        self._seq += 1

    def wait(self, until: float | None) -> tuple[int, float] | None:
        if self._heap and (until is None or self._heap[0][0] <= until):
            t, _, i = heapq.heappop(self._heap)
            self.clock = max(self.clock, t)
            return i, t
        if until is None:
            return None
        self.clock = max(self.clock, until)
        return None


@dataclass(frozen=True)
class Simulation:
    """What a simulated run gives: the realised schedule and problem, the checker's verdict, the times."""

    program: Program
    trace: Trace
    realisation: Realisation
    schedule: Schedule
    violations: list[str]
    planned_makespan: float

    @property
    def makespan(self) -> float:
        """The realised makespan (rule 6)."""
        return self.schedule.makespan

    @property
    def problem(self) -> AnyProblem:
        """The problem of the realised durations."""
        return self.realisation.problem


@known_options
def simulate(problem: AnyProblem, schedule: Schedule, noise: Noise | None = None, *, order: str = "plan",
             teardown: bool = True) -> Simulation:
    """Run ``schedule`` on a virtual clock with durations drawn around the problem's, and check the result.

    Parameters
    ----------
    problem
        The problem the schedule was planned for (its times are the planned ones).
    schedule
        The plan; it must pass :func:`instances.mig.check` against ``problem``.
    noise
        The timing error (default: none, the planned durations).
    order, teardown
        As in :func:`instances.mig_execution_ops.operations`.

    Returns
    -------
    Simulation
        ``violations`` is the checker's list for the realised schedule against
        the realised problem; ``[]`` unless this module has a bug.

    Raises
    ------
    InstanceError
        If the plan itself breaks a rule (the message names the first).
    """
    noise = Noise() if noise is None else noise
    flag(teardown, "teardown")
    planned_faults = check(problem, schedule)
    if planned_faults:
        raise InstanceError(f"the plan is not feasible: {planned_faults[0]}", field="schedule")
    real = realise(problem, noise)
    program = operations(schedule, problem.gpu, order=order, teardown=teardown, releases=problem.releases())
    trace = execute(program, SimulatedBackend(real.problem))
    realised = trace.schedule()
    return Simulation(program, trace, real, realised, check(real.problem, realised), schedule.makespan)
