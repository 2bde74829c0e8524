"""Carrying out a MIG schedule: its operations, what each waits for, and the event-driven loop that runs them.

The FAR paper (Villarrubia, Costero, Igual, Olcoz, "Leveraging Multi-Instance
GPUs through moldable task scheduling", Sec. 3.4, Algorithm 3) runs a schedule
by walking its repartitioning tree: each node creates its instance, runs its
tasks one after another, destroys the instance, and hands over to its children
in new threads. This module does the same for any schedule the checker
accepts (FAR's, the search's, an exact model's, several batches), written as a
list of :class:`Operation` s:

* ``create_gi`` / ``create_ci``: create the GPU instance of a placement (its
  profile at its start slice), then its compute instance; together they are
  the model's *create* operation;
* ``launch`` / ``wait``: start a task on the instance, wait for its end;
* ``destroy_ci`` / ``destroy_gi``: the model's *destroy* operation.

Every operation lists the operations it waits for (``after``) and never a
planned time, so the reconfiguration rules of ``docs/contracts.md`` hold
whatever the tasks and operations really last:

* a create waits for the destroys of the instances before it in the plan that
  share a slice with it (rule 3), and a destroy for the end of its instance's
  last task (rule 2);
* the first task of an instance waits for its compute instance, the next one
  for the end of the previous one (rule 2, no preemption);
* create and destroy operations hold the GPU's one reconfiguration channel
  from their first to their last step (rule 4). With ``order="plan"`` each
  also waits for the one before it in the plan, so the channel runs them in
  the plan's order; with ``order="ready"`` the channel takes, whenever it is
  free, the earliest-planned one whose other conditions are met (close to
  Algorithm 3, whose threads ask the driver as soon as they may and are
  served one at a time, FAR paper, Sec. 2.1).

A launch also waits for its batch's release when one is given (a batch cannot
start before it arrives). :func:`execute` runs the operations on a
:class:`Backend` (a simulation, NVML, or anything with the same four methods)
and returns the realised times, whose :meth:`Trace.schedule` is a schedule in
the toolkit's format.

Examples
--------
>>> from instances import mig
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 3.0, 2: 2.0, 4: 1.0})])
>>> whole = p.gpu.placement(4, 0)
>>> plan = mig.Schedule("A30", [mig.ScheduledTask("a", whole, 0.13, 1.63), mig.ScheduledTask("b", whole, 1.63, 2.63)],
...                     [mig.Reconfiguration("create", whole, 0.0, 0.13)])
>>> program = operations(plan)
>>> [(op.index, op.kind, op.task, op.after) for op in program.operations]  # doctest: +NORMALIZE_WHITESPACE
[(0, 'create_gi', None, ()), (1, 'create_ci', None, (0,)), (2, 'launch', 'a', (1,)), (3, 'wait', 'a', (2,)),
 (4, 'launch', 'b', (3,)), (5, 'wait', 'b', (4,)), (6, 'destroy_ci', None, (1, 5)), (7, 'destroy_gi', None, (6,))]
>>> program.operations[6].teardown  # the plan never destroys 4@0; the run leaves the GPU empty
True
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping

from instances import gpus
from instances.errors import InstanceError, OptionError
from instances.gpus import GPUSpec, Placement
from instances.mig_retime import sessionize
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.options import choice, flag, known_options

__all__ = ["CREATE_GI", "CREATE_CI", "LAUNCH", "WAIT", "DESTROY_CI", "DESTROY_GI", "KINDS", "ORDERS",
           "Session", "Operation", "Program", "operations", "Backend", "Trace", "ExecutionError", "execute"]

CREATE_GI, CREATE_CI, LAUNCH, WAIT, DESTROY_CI, DESTROY_GI = (
    "create_gi", "create_ci", "launch", "wait", "destroy_ci", "destroy_gi")
KINDS = (CREATE_GI, CREATE_CI, LAUNCH, WAIT, DESTROY_CI, DESTROY_GI)
#: How the reconfiguration channel picks its next operation (see the module docstring).
ORDERS = ("plan", "ready")

#: The first step of a create or destroy takes the channel, the second gives it back.
_OPENS = {CREATE_GI: CREATE_CI, DESTROY_CI: DESTROY_GI}
_CLOSES = frozenset(_OPENS.values())
#: At equal planned times: destroys before creates (a create may need the slices), creates before launches.
_RANK = {DESTROY_CI: 0, DESTROY_GI: 1, CREATE_GI: 2, CREATE_CI: 3, LAUNCH: 4, WAIT: 5}
_WORDS = {CREATE_GI: "create GPU instance", CREATE_CI: "create compute instance", LAUNCH: "launch",
          WAIT: "wait for", DESTROY_CI: "destroy compute instance", DESTROY_GI: "destroy GPU instance"}


def _tol(*values: float) -> float:
    # the checker's tolerance (instances.mig_check), so a schedule it accepts is read the same way
    return 1e-6 * max([1.0, *(abs(v) for v in values if math.isfinite(v))])


class ExecutionError(RuntimeError):
    """An operation failed while running a schedule (after the backend cleaned up what it had made)."""


@dataclass(frozen=True)
class Session:
    """One instance of the plan: its placement, its tasks in run order, its planned create and destroy.

    ``create`` and ``destroy`` are the planned (start, end) of the model's
    operations; ``destroy`` is ``None`` when the plan keeps the instance to the
    end. They order the channel and are reported; nothing waits for them.
    """

    index: int
    placement: Placement
    tasks: tuple[str, ...]
    create: tuple[float, float]
    destroy: tuple[float, float] | None


@dataclass(frozen=True)
class Operation:
    """One step of the run.

    Attributes
    ----------
    index
        Position in :attr:`Program.operations`, a valid sequential order.
    kind
        One of :data:`KINDS`.
    session
        Index of the :class:`Session` (the instance) it acts on.
    task
        The task of a ``launch`` or ``wait``; ``None`` otherwise.
    after
        Indices of the operations it waits for.
    planned
        When the plan starts it (for reports and the channel's order only).
    not_before
        A ``launch`` waits for this time too: its batch's release (0 for one batch).
    teardown
        A destroy the plan does not list: the instance is removed after its
        last task so that the GPU is left empty (not part of the makespan).
    """

    index: int
    kind: str
    session: int
    placement: Placement
    task: str | None
    after: tuple[int, ...]
    planned: float
    not_before: float = 0.0
    teardown: bool = False

    @property
    def channel(self) -> bool:
        """True for the four create / destroy steps, which run on the serialised reconfiguration channel."""
        return self.kind not in (LAUNCH, WAIT)

    def describe(self) -> str:
        """One line, e.g. ``#3 launch a on 2@0``."""
        what = f"{_WORDS[self.kind]} {self.task} on" if self.task is not None else _WORDS[self.kind]
        return f"#{self.index} {what} {self.placement.name}"


@dataclass(frozen=True)
class Program:
    """The operations of one schedule, in a valid sequential order, with the sessions they belong to."""

    gpu: GPUSpec
    sessions: tuple[Session, ...]
    operations: tuple[Operation, ...]
    order: str
    planned_makespan: float

    def __len__(self) -> int:
        return len(self.operations)

    def of_kind(self, kind: str) -> list[Operation]:
        return [op for op in self.operations if op.kind == kind]


# ---------------------------------------------------------------------------
# from a schedule to sessions

def _sessions_from_operations(schedule: Schedule) -> list[tuple[Placement, list[ScheduledTask], tuple, tuple | None]]:
    """Pair each placement's creates with the destroys after them, then put every task in its instance."""
    by_placement: dict[tuple[int, int], list[Reconfiguration]] = defaultdict(list)
    for op in schedule.reconfigurations:
        by_placement[op.placement.key()].append(op)
    found = []  # [placement, tasks, (create start, end), (destroy start, end) or None]
    for key, ops in sorted(by_placement.items()):
        ops.sort(key=lambda o: (o.start, 0 if o.op == "destroy" else 1))
        live = None
        for op in ops:
            if op.op == "create":
                if live is not None:
                    raise InstanceError(f"{op.placement.name} is created at {op.start:.9g} while its instance "
                                        f"created at {live[2][0]:.9g} still exists (rule 2)", field="reconfigurations")
                live = [op.placement, [], (op.start, op.end), None]
            else:
                if live is None:
                    raise InstanceError(f"{op.placement.name} is destroyed at {op.start:.9g} without an instance "
                                        "(rule 2)", field="reconfigurations")
                live[3] = (op.start, op.end)
                found.append(live)
                live = None
        if live is not None:
            found.append(live)
    for st in sorted(schedule.tasks, key=lambda r: (r.start, r.task)):
        homes = [s for s in found if s[0].key() == st.placement.key() and s[2][1] <= st.start + _tol(st.start)
                 and (s[3] is None or st.end <= s[3][0] + _tol(st.end))]
        if not homes:
            raise InstanceError(f"runs on {st.placement.name} from {st.start:.9g} to {st.end:.9g}, outside every "
                                "instance the schedule creates there (rule 2; python -m instances.mig check "
                                "tells more)", task=st.task, field="tasks")
        max(homes, key=lambda s: s[2][0])[1].append(st)
    return [(p, tasks, c, d) for p, tasks, c, d in found]


def _sessions(schedule: Schedule, gpu: GPUSpec) -> list[Session]:
    """The plan's instances: its own create/destroy operations, or, when it lists none, the fewest its task
    order allows (consecutive runs on one placement share an instance unless a slice-sharing run comes between)."""
    for st in schedule.tasks:
        p = st.placement
        if not gpu.has_placement(p.size, p.start):
            raise InstanceError(f"{p.name} is not a placement of {gpu.name}", task=st.task, field="placement")
    names = [st.task for st in schedule.tasks]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})[0]
        raise InstanceError("is scheduled more than once (rule 5)", task=twice, field="tasks")
    if schedule.reconfigurations:
        raw = _sessions_from_operations(schedule)
    else:
        groups, first, last = sessionize(schedule.tasks)
        by_name = {st.task: st for st in schedule.tasks}
        raw = []
        for g, c, d in zip(groups, first, last):
            later = any(h.placement.intersects(g.placement) and f > c for h, f in zip(groups, first))
            raw.append((g.placement, [by_name[n] for n in g.tasks], (c, c), (d, d) if later else None))
    raw.sort(key=lambda s: (s[2][0], s[0].key()))
    sessions = [Session(i, gpu.placement(p.size, p.start), tuple(st.task for st in tasks), c, d)
                for i, (p, tasks, c, d) in enumerate(raw)]
    for j, a in enumerate(sessions):  # rule 3 in the plan itself, else the waits below would form a cycle
        for b in sessions[j + 1:]:
            if a.placement.intersects(b.placement) and (a.destroy is None or
                                                         a.destroy[1] > b.create[0] + _tol(b.create[0])):
                until = "the end" if a.destroy is None else f"{a.destroy[1]:.9g}"
                raise InstanceError(f"instances {a.placement.name} ({a.create[0]:.9g}-{until}) and "
                                    f"{b.placement.name} (from {b.create[0]:.9g}) share a slice at the same time "
                                    "(rule 3)", field="reconfigurations")
    return sessions


# ---------------------------------------------------------------------------
# from sessions to operations

@known_options
def operations(schedule: Schedule, gpu: GPUSpec | str | None = None, *, order: str = "plan",
               teardown: bool = True, releases: Mapping[str, float] | None = None) -> Program:
    """The operations that carry out ``schedule``, each with the operations it waits for.

    Parameters
    ----------
    schedule
        A schedule the checker accepts (its create/destroy operations are
        used as planned; a schedule without them, planned with zero
        reconfiguration times, gets the fewest instances its task order
        allows).
    gpu
        The GPU (default: the built-in one the schedule names).
    order
        ``"plan"``: the channel runs creates and destroys in the plan's order;
        ``"ready"``: in the order they become possible (see the module docstring).
    teardown
        Destroy, after its last task, every instance the plan leaves on the
        GPU, so that a run ends with an empty GPU.
    releases
        Release time of each task's batch (``problem.releases()``); a launch
        waits for it. Default: 0 for every task.

    Raises
    ------
    InstanceError
        If the schedule is for another GPU, or its own operations do not hold
        its tasks (a task outside every instance, two instances sharing a
        slice at the same time).
    """
    order = choice(order, ORDERS, "order")
    flag(teardown, "teardown")
    gpu = gpus.get(gpu if gpu is not None else schedule.gpu)
    if gpu.name != schedule.gpu:
        raise InstanceError(f"the schedule is for {schedule.gpu!r}, the GPU is {gpu.name!r}", field="gpu")
    releases = dict(releases or {})
    sessions = _sessions(schedule, gpu)
    starts = {st.task: st.start for st in schedule.tasks}

    # nodes: key -> [kind, session, task, planned, teardown]; deps filled in below
    nodes: dict[tuple, list] = {}
    deps: dict[tuple, list[tuple]] = defaultdict(list)
    units = []  # channel units: (planned, rank, session, first node, last node)
    for s in sessions:
        j = s.index
        nodes[(CREATE_GI, j)] = [CREATE_GI, j, None, s.create[0], False]
        nodes[(CREATE_CI, j)] = [CREATE_CI, j, None, s.create[1], False]
        deps[(CREATE_CI, j)].append((CREATE_GI, j))
        units.append((s.create[0], 1, j, (CREATE_GI, j), (CREATE_CI, j)))
        prev = (CREATE_CI, j)
        for name in s.tasks:
            nodes[(LAUNCH, name)] = [LAUNCH, j, name, starts[name], False]
            nodes[(WAIT, name)] = [WAIT, j, name, starts[name], False]
            deps[(LAUNCH, name)].append(prev)
            deps[(WAIT, name)].append((LAUNCH, name))
            prev = (WAIT, name)
        if s.destroy is not None or teardown:
            at = s.destroy[0] if s.destroy is not None else max([s.create[1]] + [
                st.end for st in schedule.tasks if st.task in s.tasks])
            gone = s.destroy is None
            nodes[(DESTROY_CI, j)] = [DESTROY_CI, j, None, at, gone]
            nodes[(DESTROY_GI, j)] = [DESTROY_GI, j, None, at if gone else s.destroy[1], gone]
            deps[(DESTROY_CI, j)].append(prev)
            deps[(DESTROY_GI, j)].append((DESTROY_CI, j))
            # the plan's destroys by their planned start; teardowns after all of them, by their session's end
            units.append((math.inf, at, j, (DESTROY_CI, j), (DESTROY_GI, j)) if gone
                         else (at, 0, j, (DESTROY_CI, j), (DESTROY_GI, j)))
    # rule 3: a create waits for the last destroy, before it in the plan, of each placement sharing a slice
    for s in sessions:
        last_before: dict[tuple[int, int], int] = {}
        for e in sessions[:s.index]:
            if e.placement.intersects(s.placement):
                last_before[e.placement.key()] = e.index
        deps[(CREATE_GI, s.index)] += [(DESTROY_GI, e) for e in sorted(last_before.values())]
    if order == "plan":  # rule 4 as the plan orders it: each channel unit after the one before
        units.sort(key=lambda u: (u[0], u[1], u[2]))
        for a, b in zip(units, units[1:]):
            deps[b[3]].append(a[4])

    # a valid sequential order: topological, earliest planned first
    waiting = {k: len(set(deps[k])) for k in nodes}
    users: dict[tuple, list[tuple]] = defaultdict(list)
    for k in nodes:
        for d in set(deps[k]):
            users[d].append(k)

    def key(k: tuple) -> tuple:
        kind, j, name, planned, _ = nodes[k]
        return (planned, _RANK[kind], j, name or "")

    heap = [(key(k), k) for k in nodes if waiting[k] == 0]
    heapq.heapify(heap)
    index: dict[tuple, int] = {}
    while heap:
        _, k = heapq.heappop(heap)
        index[k] = len(index)
        for u in users[k]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(heap, (key(u), u))
    if len(index) != len(nodes):  # cannot happen once _sessions accepted the plan; kept as a guard
        raise InstanceError("the schedule's operations wait for each other in a cycle", field="reconfigurations")
    ops = [None] * len(index)
    for k, i in index.items():
        kind, j, name, planned, gone = nodes[k]
        ops[i] = Operation(i, kind, j, sessions[j].placement, name, tuple(sorted({index[d] for d in deps[k]})),
                           planned, releases.get(name, 0.0) if kind == LAUNCH else 0.0, gone)
    return Program(gpu, tuple(sessions), tuple(ops), order, max((st.end for st in schedule.tasks), default=0.0))


# ---------------------------------------------------------------------------
# the event-driven loop

class Backend:
    """Where operations run: a simulation, NVML, or a recorder in tests.

    :func:`execute` calls :meth:`start` for an operation whose conditions are
    met and learns of its end from :meth:`wait`; it never asks a backend to
    wait for a planned time.
    """

    def now(self) -> float:
        """Seconds since the run began."""
        raise NotImplementedError

    def start(self, op: Operation) -> None:
        """Begin ``op`` (an operation that completes at once reports its end through :meth:`wait`)."""
        raise NotImplementedError

    def wait(self, until: float | None) -> tuple[int, float] | None:
        """The next operation to end and its end time; ``None`` once ``until`` passes first."""
        raise NotImplementedError

    def abort(self) -> str:
        """Undo what a failed run left behind (stop tasks, destroy instances); say what was done."""
        return ""


@dataclass(frozen=True)
class Trace:
    """The realised start and end of every operation of a program (seconds from the run's start)."""

    program: Program
    start: tuple[float, ...]
    end: tuple[float, ...]

    def schedule(self) -> Schedule:
        """The realised schedule: each task from its launch to the end of its wait, each create from its GPU
        instance's start to its compute instance's end, each destroy from its compute instance's start to its
        GPU instance's end (teardown destroys included)."""
        at: dict[tuple, int] = {}
        for op in self.program.operations:
            at[(op.kind, op.task if op.task is not None else op.session)] = op.index
        tasks = [ScheduledTask(name, s.placement, self.start[at[(LAUNCH, name)]], self.end[at[(WAIT, name)]])
                 for s in self.program.sessions for name in s.tasks]
        recs = []
        for s in self.program.sessions:
            j = s.index
            recs.append(Reconfiguration("create", s.placement, self.start[at[(CREATE_GI, j)]],
                                        self.end[at[(CREATE_CI, j)]]))
            if (DESTROY_CI, j) in at:
                recs.append(Reconfiguration("destroy", s.placement, self.start[at[(DESTROY_CI, j)]],
                                            self.end[at[(DESTROY_GI, j)]]))
        tasks.sort(key=lambda r: (r.start, r.task))
        recs.sort(key=lambda r: (r.start, r.op == "create"))
        return Schedule(self.program.gpu.name, tasks, recs)

    @property
    def makespan(self) -> float:
        """End of the last task (rule 6: a final destroy does not count)."""
        return max((self.end[op.index] for op in self.program.operations if op.kind == WAIT), default=0.0)


def execute(program: Program, backend: Backend) -> Trace:
    """Run the program's operations on ``backend`` as their conditions are met; return the realised times.

    An operation starts once every operation in its ``after`` has ended, its
    release has passed (a launch) and, for the first step of a create or a
    destroy, the reconfiguration channel is free; among several, the lowest
    index goes first. Nothing waits for a planned time.

    Raises
    ------
    ExecutionError
        If the backend fails; it has cleaned up first (:meth:`Backend.abort`)
        and the message says which operation failed and what was undone.
    """
    ops = program.operations
    n = len(ops)
    waiting = [len(op.after) for op in ops]
    users: list[list[int]] = [[] for _ in ops]
    for op in ops:
        for d in op.after:
            users[d].append(op.index)
    ready = [i for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    start = [math.nan] * n
    end = [math.nan] * n
    running: set[int] = set()
    channel: int | None = None  # the session whose create or destroy holds the channel
    finished = 0
    current: Operation | None = None
    try:
        while finished < n:
            now = backend.now()
            held = []
            while ready:
                i = heapq.heappop(ready)
                op = ops[i]
                if op.not_before > now + _tol(now) or (op.kind in _OPENS and channel is not None):
                    held.append(i)
                    continue
                if op.kind in _OPENS:
                    channel = op.session
                current = op
                start[i] = now
                backend.start(op)
                running.add(i)
            for i in held:
                heapq.heappush(ready, i)
            later = [ops[i].not_before for i in ready if ops[i].not_before > now + _tol(now)]
            until = min(later) if later else None
            if not running and until is None:
                stuck = ", ".join(ops[i].describe() for i in sorted(ready)[:3]) or "none ready"
                raise ExecutionError(f"no operation can start ({stuck}); the program is inconsistent")
            current = None
            got = backend.wait(until)
            if got is None:
                continue
            i, t = got
            if i not in running:
                raise ExecutionError(f"the backend reported the end of operation #{i}, which is not running")
            running.discard(i)
            end[i] = t
            finished += 1
            if ops[i].kind in _CLOSES:
                channel = None
            for u in users[i]:
                waiting[u] -= 1
                if waiting[u] == 0:
                    heapq.heappush(ready, u)
    except ExecutionError:
        backend.abort()
        raise
    except Exception as exc:
        undone = backend.abort()
        where = current.describe() if current is not None else "waiting for an operation"
        raise ExecutionError(f"{where} failed: {exc}" + (f"; cleaned up: {undone}" if undone else "")) from exc
    except BaseException:  # Ctrl-C: leave the GPU as it was found, then stop
        backend.abort()
        raise
    return Trace(program, tuple(start), tuple(end))

