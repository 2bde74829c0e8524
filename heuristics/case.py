"""Discrete-event simulation of CASE and of a Slurm-like manager on fixed MIG instances (CASE paper).

Two policies run the same batch (:class:`instances.case.Workload`, all jobs
submitted at t = 0) on the same node:

``"slurm"``
    Sec. 1 and 3.1: one FIFO queue; each job, isolated or not, gets a whole
    instance sized by its declared peak memory (``footprint_gb``) for its
    whole lifetime, host phases included. One worker per instance.
``"case"``
    Algorithm 1: isolated jobs first, each on an instance that holds no
    isolated job (marking it ``HasIsolatedJob``); then non-isolated jobs are
    launched without a GPU while workers remain (4 per 1g, 8 per 2g
    instance). Algorithm 2: whenever a non-isolated job's task probe fires,
    the task goes to the instance without an isolated job that has enough
    free memory and the fewest warps in use; if none has, the task blocks
    until memory frees (Sec. 3.1, "non-isolated jobs will block until their
    GPU requests can be satisfied"). Tasks sharing an instance slow each
    other down by the workload's :class:`instances.case.Slowdown` model.

Readings where the pseudocode is silent or loose (see the module notes in
``benchmarks.case`` and the report):

* Algorithm 1, line 11 (``J.footprint == G.TotalMem``) is read as the
  workload's ``match`` rule (default: the smallest memory class that holds
  the footprint, like Slurm's typed GRES request); among eligible free
  instances we take empty ones first, then the lowest index.
* The inner loop of Algorithm 1 does not stop after launching J on G, and
  line 26 pops the non-isolated queue twice; we launch each job once.
* An isolated job may claim an instance on which non-isolated tasks still
  run (line 12 only tests ``HasIsolatedJob``); it then starts once those
  tasks have finished, and no new task is placed there meanwhile.
* Algorithm 2, line 8 tests ``MemReq < FreeMem``; we use ``<=`` so a task
  that needs exactly an instance's memory can run. Ties in warps go to the
  first instance in node order.
* Blocked tasks are retried in the order their probes fired; one that
  still does not fit does not stop later, smaller ones (no head-of-line
  blocking), as each blocked probe waits independently in the runtime.

Events at the same instant are all applied before the manager decides
(ends and probes first, then Algorithm 1, then Algorithm 2).

Examples
--------
>>> from instances import case
>>> from heuristics import case as sim
>>> w = case.generate("A", ratio="1:1", n=16, seed=0)
>>> s, c = sim.simulate(w, "slurm"), sim.simulate(w, "case")
>>> case.check(w, s), case.check(w, c)
([], [])
>>> c.makespan < s.makespan
True
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from instances.case import (EPS, Hold, Instance, Job, JobRun, TaskRun, Trace, Workload, eligible_instances,
                            metrics)
from instances.errors import OptionError
from instances import options as opt
from instances.options import known_options

__all__ = ["simulate", "compare", "METHODS"]

_POLICIES = ("slurm", "case")
_SAME_TIME = 1e-9


@dataclass
class _Running:
    job: str
    index: int
    memory: float
    warps: int
    start: float
    remaining: float      # standalone seconds of work left
    factor: float = 1.0   # current time stretch (1 + slowdown)
    last: float = 0.0
    version: int = 0


@dataclass
class _Slot:
    inst: Instance
    free: float
    warps: int = 0
    running: dict[tuple[str, int], _Running] = field(default_factory=dict)
    holder: str | None = None      # exclusive job that claimed the instance
    started: bool = False          # the holder has begun (instance drained)


class _Waiting:
    """Jobs waiting for a worker, in submission order, grouped by the instances they may claim.

    A pass over the queue (Algorithm 1's loops) launches, in queue order, each
    job that can start; claims only take instances and launches only take
    workers, so a job that cannot start is never startable later in the same
    pass, and neither is any job of its group (same eligible instances). The
    next job to start is therefore the earliest among the group heads that
    can start, which :meth:`next` finds in time independent of the queue's
    length.
    """

    def __init__(self) -> None:
        self.groups: dict[frozenset[int] | None, deque[tuple[int, Job]]] = {}
        self.size = 0

    def add(self, pos: int, job: Job, eligible: frozenset[int] | None) -> None:
        """Queue ``job`` (position ``pos``); ``eligible`` is ``None`` for a job that needs no instance."""
        self.groups.setdefault(eligible, deque()).append((pos, job))
        self.size += 1

    def next(self, free: set[int]) -> Job | None:
        """Remove and return the earliest job that needs no instance or may claim one of ``free``."""
        best = None
        for key, group in self.groups.items():
            if group and (key is None or not free.isdisjoint(key)) and (best is None or group[0][0] < best[1][0][0]):
                best = (key, group)
        if best is None:
            return None
        self.size -= 1
        return best[1].popleft()[1]

    def __bool__(self) -> bool:
        return self.size > 0


class _Sim:
    def __init__(self, w: Workload, policy: str, workers: int | None, isolated_first: bool = True) -> None:
        if policy not in _POLICIES:
            raise OptionError(f"policy must be one of {_POLICIES}, got {policy!r}")
        workers = opt.workers(workers)
        self.w, self.policy = w, policy
        cfg = w.config
        self.max_workers = workers or (cfg.workers_case if policy == "case" else cfg.workers_slurm)
        self.slots = [_Slot(i, i.memory_gb) for i in cfg.instances]
        self.jobs = {j.name: j for j in w.jobs}
        exclusive = [j for j in w.jobs if policy == "slurm" or j.isolated]
        self.exclusive = {j.name for j in exclusive}
        self.eligible = {j.name: frozenset(i.index for i in eligible_instances(w, j)) for j in exclusive}
        # Algorithm 1's two queues, or (ablation: isolated_first=False) one queue in submission order
        self.fifo = not (isolated_first or policy == "slurm")
        self.excl_queue, self.shared_queue = _Waiting(), _Waiting()
        for pos, j in enumerate(w.jobs):
            queue = self.excl_queue if (self.fifo or j.name in self.exclusive) else self.shared_queue
            queue.add(pos, j, self.eligible.get(j.name))
        self.workers = 0
        self.now = 0.0
        self.heap: list[tuple[float, int, str, tuple]] = []
        self.seq = itertools.count()
        self.pending: list[tuple[str, int]] = []   # blocked probes, in firing order
        self.home: dict[str, int] = {}             # exclusive job -> instance
        self.launch: dict[str, float] = {}
        self.start: dict[str, float] = {}
        self.end: dict[str, float] = {}
        self.hold_start: dict[str, float] = {}
        self.task_runs: list[TaskRun] = []
        self.holds: list[Hold] = []

    # -- events ------------------------------------------------------------
    def push(self, t: float, kind: str, *payload) -> None:
        heapq.heappush(self.heap, (t, next(self.seq), kind, payload))

    def step_ready(self, name: str, k: int) -> None:
        """The host phase before task k of job ``name`` is over: run or announce the task."""
        if name in self.exclusive:
            self.place(self.slots[self.home[name]], name, k)
        else:
            self.pending.append((name, k))

    def next_step(self, name: str, k: int) -> None:
        job = self.jobs[name]
        if k == len(job.tasks):
            self.finish_job(name)
        elif job.tasks[k].cpu > 0:
            self.push(self.now + job.tasks[k].cpu, "cpu", name, k)
        else:
            self.step_ready(name, k)

    def finish_job(self, name: str) -> None:
        self.end[name] = self.now
        self.workers -= 1
        if name in self.home:
            slot = self.slots[self.home[name]]
            self.holds.append(Hold(name, slot.inst.index, self.hold_start[name], self.now))
            slot.holder, slot.started = None, False

    # -- instance accounting with the slowdown model -------------------------
    def advance(self, slot: _Slot) -> None:
        for r in slot.running.values():
            r.remaining -= (self.now - r.last) / r.factor
            r.last = self.now

    def retime(self, slot: _Slot) -> None:
        sd = self.w.slowdown
        for key, r in slot.running.items():
            r.factor = sd.factor(r.warps, slot.warps, slot.inst.warp_capacity)
            r.version += 1
            self.push(self.now + max(0.0, r.remaining) * r.factor, "done", slot.inst.index, key, r.version)

    def place(self, slot: _Slot, name: str, k: int) -> None:
        t = self.jobs[name].tasks[k]
        self.advance(slot)
        slot.running[(name, k)] = _Running(name, k, t.memory_gb, t.warps, self.now, t.duration, last=self.now)
        slot.free -= t.memory_gb
        slot.warps += t.warps
        self.retime(slot)

    def task_done(self, idx: int, key: tuple[str, int], version: int) -> None:
        slot = self.slots[idx]
        r = slot.running.get(key)
        if r is None or r.version != version:
            return  # superseded by a later re-timing
        self.advance(slot)
        del slot.running[key]
        slot.free += r.memory
        slot.warps -= r.warps
        if not slot.running:
            slot.free = slot.inst.memory_gb  # drop float residue
        self.retime(slot)
        self.task_runs.append(TaskRun(r.job, r.index, idx, r.start, self.now))
        self.next_step(r.job, r.index + 1)

    # -- the manager -----------------------------------------------------------
    def begin(self, name: str) -> None:
        self.start[name] = self.now
        if name in self.home:
            self.hold_start[name] = self.now
            self.slots[self.home[name]].started = True
        self.next_step(name, 0)

    def claim(self, job: Job) -> None:
        """Algorithm 1, lines 10-19: give an exclusive job a free eligible instance (there is one)."""
        free = [s for s in self.slots if s.holder is None and s.inst.index in self.eligible[job.name]]
        slot = min(free, key=lambda s: (bool(s.running), s.inst.memory_gb, s.inst.index))
        slot.holder = job.name
        self.home[job.name] = slot.inst.index
        self.launch[job.name] = self.now
        self.workers += 1

    def start_waiting(self, queue: _Waiting) -> None:
        """One pass over ``queue`` in order: start every job that gets a worker and, if exclusive,
        a free eligible instance (Algorithm 1, lines 5-20 and 21-30)."""
        free = {s.inst.index for s in self.slots if s.holder is None}
        while self.workers < self.max_workers and queue:
            job = queue.next(free)
            if job is None:
                return
            if job.name in self.exclusive:
                self.claim(job)
                free.discard(self.home[job.name])
            else:
                self.launch_shared(job)

    def launch_shared(self, job: Job) -> None:
        """Algorithm 1, line 28: a non-isolated job starts on a worker, with no GPU chosen."""
        self.launch[job.name] = self.now
        self.workers += 1
        self.begin(job.name)

    def dispatch(self) -> None:
        if self.fifo:
            self.place_probes()
            self.start_waiting(self.excl_queue)  # one queue, every job in submission order
        else:
            # Algorithm 1, lines 5-20: isolated (here: exclusive) jobs first
            self.start_waiting(self.excl_queue)
            # Algorithm 1, lines 21-30: non-isolated jobs need only a worker
            self.start_waiting(self.shared_queue)
        # claimed instances that have drained start their exclusive job
        for slot in self.slots:
            if slot.holder is not None and not slot.started and not slot.running:
                self.begin(slot.holder)
        self.place_probes()

    def place_probes(self) -> None:
        """Algorithm 2 for every blocked probe, in firing order."""
        still = []
        for name, k in self.pending:
            mem = self.jobs[name].tasks[k].memory_gb
            target, min_warps = None, float("inf")
            for slot in self.slots:
                if slot.holder is not None:
                    continue
                if mem <= slot.free + EPS and slot.warps < min_warps:
                    target, min_warps = slot, slot.warps
            if target is None:
                still.append((name, k))
            else:
                self.place(target, name, k)
        self.pending = still

    def run(self) -> Trace:
        self.dispatch()
        while self.heap:
            self.now = self.heap[0][0]
            while self.heap and self.heap[0][0] <= self.now + _SAME_TIME:
                _, _, kind, payload = heapq.heappop(self.heap)
                if kind == "cpu":
                    self.step_ready(*payload)
                else:
                    self.task_done(*payload)
            self.dispatch()
        if len(self.end) != len(self.jobs):
            stuck = sorted(set(self.jobs) - set(self.end))[:5]
            raise RuntimeError(f"simulation stalled with jobs unfinished: {stuck}")
        runs = tuple(JobRun(j.name, self.launch[j.name], self.start[j.name], self.end[j.name]) for j in self.w.jobs)
        tasks = tuple(sorted(self.task_runs, key=lambda t: (t.start, t.instance, t.job, t.index)))
        holds = tuple(sorted(self.holds, key=lambda h: (h.start, h.instance)))
        return Trace(self.policy, runs, tasks, holds, self.max_workers)


@known_options
def simulate(workload: Workload, policy: str = "case", *, workers: int | None = None,
             isolated_first: bool = True) -> Trace:
    """Run the batch under ``policy`` (``"case"`` or ``"slurm"``) and return its trace.

    Parameters
    ----------
    workload
        The batch and node.
    policy
        ``"case"`` (Algorithms 1-2) or ``"slurm"`` (whole instance per job).
    workers
        Worker limit; default Sec. 3.1's (CASE: 4 per 1g and 8 per 2g
        instance; Slurm: one per instance).
    isolated_first
        CASE only. ``True`` is Algorithm 1 (the isolated queue is served
        before any non-isolated job is launched). ``False`` is an ablation
        (the paper says the preference "is not a requirement"): one launch
        queue in submission order, and blocked non-isolated tasks are placed
        before isolated jobs claim instances.

    Returns
    -------
    Trace
        Per-job launch/start/end, per-task instance and times, and the
        exclusive holds; it passes :func:`instances.case.check`.

    Examples
    --------
    >>> from instances import case
    >>> w = case.generate("A", ratio="1:0", n=8, seed=2)
    >>> simulate(w, "case").jobs == simulate(w, "slurm").jobs
    True
    """
    return _Sim(workload, policy, workers, isolated_first).run()


@known_options
def compare(workload: Workload, *, isolated_first: bool = True) -> dict[str, float]:
    """CASE against Slurm on one batch: the ratios plotted in Figures 1-4.

    Returns ``throughput`` (Slurm makespan / CASE makespan), ``turnaround``
    (Slurm mean turnaround / CASE's), ``mem_util`` (CASE / Slurm
    time-averaged memory utilisation) and CASE's mean task ``slowdown``, plus
    the raw metrics of both under ``case_*`` and ``slurm_*`` keys.

    Examples
    --------
    >>> from instances import case
    >>> r = compare(case.generate("A", ratio="1:0", n=8, seed=2))
    >>> r["throughput"], r["turnaround"]
    (1.0, 1.0)
    """
    ms = metrics(workload, simulate(workload, "slurm"))
    mc = metrics(workload, simulate(workload, "case", isolated_first=isolated_first))
    out = {
        "throughput": mc["throughput"] / ms["throughput"],
        "turnaround": ms["turnaround"] / mc["turnaround"],
        "mem_util": mc["mem_util"] / ms["mem_util"] if ms["mem_util"] > 0 else float("nan"),
        "slowdown": mc["slowdown"],
    }
    out.update({f"slurm_{k}": v for k, v in ms.items()})
    out.update({f"case_{k}": v for k, v in mc.items()})
    return out


#: Display name -> method ``method(workload) -> Trace`` (each trace passes
#: :func:`instances.case.check`): the CASE paper's two managers and the
#: ablation of CASE without Algorithm 1's isolated-first preference.
METHODS: dict[str, Callable[[Workload], Trace]] = {
    "slurm": lambda workload: simulate(workload, "slurm"),
    "case": lambda workload: simulate(workload, "case"),
    "case-fifo": lambda workload: simulate(workload, "case", isolated_first=False),
}
