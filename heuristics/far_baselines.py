"""The baselines FAR is compared with in the FAR paper, Sec. 6.5: MISO-opt and FixPart.

* :func:`miso_opt` -- MISO-opt (Li et al., SoCC'22, as described in Sec. 6.5):
  tasks in FIFO order; the next partition ``P = {I_0, ..., I_|P|-1}`` of
  MIG-Part_G is the one maximising ``sum_i speedup_{k+i}(|I_i|)`` where ``T_k``
  is the next unscheduled task. Each instance of ``P`` runs one of the next
  ``|P|`` tasks; then the next partition is chosen for the following tasks.
* :func:`fixpart` -- FixPart(P): a static partition ``P``; tasks in FIFO order,
  each on the first instance that becomes free.
* :func:`fixpart_best` (FixPartBest: the best of the 19 A100 / 5 A30 maximal
  partitions), :func:`fixpart_whole` (FixPart(7)) and :func:`fixpart_ones`
  (FixPart(1,...,1)).

Every schedule obeys the reconfiguration rules 1-6 (so ``mig.check``
accepts it with reconfiguration): the GPU starts empty, each instance is
created before its first task, instances are destroyed only when a later
instance needs their slices, and all create/destroy operations are
serialised on one channel (:class:`instances.mig_channel.OpChannel`). On a
GPU whose create/destroy times are all zero
(``problem.without_reconfiguration()``) no operations are emitted.

Readings of the paper we had to choose (the text is silent on them):

* ``speedup_j(s) = t_j(s0) / t_j(s)`` with ``s0`` the smallest size task ``j``
  may use (1 for every generated task); sizes a task's memory rules out are
  not assignable. The instances of ``P`` are matched to the next tasks by the
  best assignment (``P`` is a set, so its order is free); ties between
  partitions go to the first in ``gpu.partitions()`` order.
* How MISO-opt moves from one partition to the next. Sec. 6.5.1 says its
  "partitioning decisions are independent, resulting in longer idle periods as
  instances wait for preceding tasks to complete". ``repartition="barrier"``
  (default) reads this literally: the GPU switches partition when every task
  of the current partition has finished; instances of the new partition that
  were already live are kept, the others are destroyed and the new ones
  created (serialised). ``repartition="slices"`` is a more generous variant:
  each new instance only waits for the instances that share its slices.
* FixPart in the paper carries no reconfiguration cost; here its instances are
  created at the start (serialised, each when first needed), as the checker's
  rule 1 requires. This adds at most the sum of the create times (< 1.5 s on
  A100) to the makespan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence, Union

from instances import options
from instances.errors import InstanceError
from instances.gpus import GPUSpec, Placement
from instances.mig import Problem, Reconfiguration, Schedule, ScheduledTask, Task, Workload, check_scale
from instances.mig_channel import OpChannel

__all__ = ["miso_opt", "fixpart", "fixpart_best", "fixpart_whole", "fixpart_ones", "fixpart_all",
           "speedup", "REPARTITION_MODES"]

REPARTITION_MODES = ("barrier", "slices")

_EPS = 1e-12


# ---------------------------------------------------------------------------
# shared simulation state: live instance sessions and the serial op channel

@dataclass
class _Session:
    placement: Placement
    free: float  # when the instance can take its next task (create end, then last task end)


@dataclass
class _GPUState:
    """Live sessions, per-slice release times and the emitted operations."""

    gpu: GPUSpec
    live: dict[tuple[int, int], _Session] = field(default_factory=dict)
    slice_free: dict[int, float] = field(default_factory=dict)
    ops: list[Reconfiguration] = field(default_factory=list)
    channel: OpChannel = field(default_factory=OpChannel)

    def __post_init__(self) -> None:
        self.reconfigurable = self.gpu.reconfigurable
        self.slice_free = {s: 0.0 for s in range(self.gpu.num_slices)}

    def blockers(self, p: Placement) -> list[_Session]:
        return [s for k, s in self.live.items() if k != p.key() and s.placement.intersects(p)]

    def ready(self, p: Placement, earliest: float = 0.0) -> float:
        """Lower bound on when ``p`` could run a task, ignoring the op channel."""
        if p.key() in self.live:
            return max(earliest, self.live[p.key()].free)
        t = max([earliest] + [self.slice_free[s] for s in p.slices] + [b.free for b in self.blockers(p)])
        return t

    def _op(self, kind: str, p: Placement, earliest: float) -> float:
        dur = (self.gpu.create_time if kind == "create" else self.gpu.destroy_time)[p.size]
        start = self.channel.place(earliest, dur)
        end = start + dur
        self.ops.append(Reconfiguration(kind, p, start, end))
        return end

    def open(self, p: Placement, earliest: float = 0.0) -> _Session:
        """Make ``p`` live (reuse it, or destroy what blocks it and create it)."""
        if p.key() in self.live:
            return self.live[p.key()]
        t = max([earliest] + [self.slice_free[s] for s in p.slices])
        for b in self.blockers(p):
            # rule 2: a destroy starts no earlier than the instance's last task end
            end = self._op("destroy", b.placement, max(b.free, earliest)) if self.reconfigurable else b.free
            for s in b.placement.slices:
                self.slice_free[s] = max(self.slice_free[s], end)
            del self.live[b.placement.key()]
            t = max(t, end)
        t = self._op("create", p, t) if self.reconfigurable else t
        sess = _Session(p, t)
        self.live[p.key()] = sess
        return sess


def _tasks_and_releases(problem: Union[Problem, Workload]) -> tuple[tuple[Task, ...], dict[str, float]]:
    if not isinstance(problem, (Problem, Workload)):
        raise InstanceError(f"expected a mig.Problem or mig.Workload, got {type(problem).__name__}",
                            field="problem")
    check_scale(problem)
    return problem.tasks, problem.releases()


def _schedule(gpu: GPUSpec, runs: list[ScheduledTask], state: _GPUState) -> Schedule:
    runs = sorted(runs, key=lambda r: (r.start, r.placement.start, r.task))
    ops = sorted(state.ops, key=lambda o: (o.start, o.op))
    return Schedule(gpu.name, runs, ops)


# ---------------------------------------------------------------------------
# FixPart

def _as_partition(gpu: GPUSpec, partition: Iterable[Placement | tuple[int, int] | str]) -> tuple[Placement, ...]:
    out = []
    for p in partition:
        if isinstance(p, Placement):
            p = gpu.placement(p.size, p.start)
        elif isinstance(p, str):
            size, _, start = p.partition("@")
            p = gpu.placement(int(size), int(start))
        else:
            p = gpu.placement(*p)
        out.append(p)
    if not out:
        raise InstanceError("a partition needs at least one placement", field="partition")
    if not gpu.is_valid_partition(out):
        raise InstanceError(f"placements {', '.join(p.name for p in out)} share slices; not a partition "
                            f"of {gpu.name}", field="partition")
    order = {p.key(): i for i, p in enumerate(gpu.placements)}
    return tuple(sorted(out, key=lambda p: order[p.key()]))


@options.known_options
def fixpart(problem: Union[Problem, Workload], partition: Iterable[Placement | tuple[int, int] | str]) -> Schedule:
    """FixPart(P) (Sec. 6.5): a fixed partition, tasks in FIFO order on the first free instance.

    Parameters
    ----------
    problem
        One batch (or a multi-batch workload: tasks then also wait for their release).
    partition
        Placements of one valid partition (``Placement``, ``(size, start)`` or ``"size@start"``).

    The instances are created once, serially from t = 0, each when a task first
    needs it (an instance no task uses is never created, rule 2), and never
    destroyed. "First free" counts an instance not yet created as free when
    its create could end; ties go to a live instance, then to the partition's
    order (BFS of the repartitioning tree).

    Raises
    ------
    InstanceError
        If the partition is invalid, or some task may use none of its sizes.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.0}), mig.Task("b", {1: 2.0, 2: 1.5, 4: 1.0})])
    >>> s = fixpart(p, ["2@0", "2@2"])
    >>> [(r.task, r.placement.name, r.start, r.end) for r in s.tasks]
    [('a', '2@0', 0.12, 2.12), ('b', '2@2', 0.24, 1.74)]
    >>> mig.check(p, s)
    []
    """
    tasks, releases = _tasks_and_releases(problem)
    gpu = problem.gpu
    parts = _as_partition(gpu, partition)
    state = _GPUState(gpu)
    runs: list[ScheduledTask] = []
    rank = {p.key(): i for i, p in enumerate(parts)}
    for task in tasks:
        choices = [p for p in parts if p.size in task.times]
        if not choices:
            raise InstanceError(f"cannot run on any instance of the partition "
                                f"({', '.join(p.name for p in parts)}; allowed sizes {list(task.sizes)})",
                                task=task.name, field="partition")
        best = None
        for p in choices:
            if p.key() in state.live:
                ready, live = state.live[p.key()].free, 0
            elif state.reconfigurable:
                ready, live = state.channel.first_fit(0.0, gpu.create_time[p.size]) + gpu.create_time[p.size], 1
            else:
                ready, live = 0.0, 1
            key = (max(ready, releases[task.name]) + 0.0, live, rank[p.key()])
            if best is None or key < best[0]:
                best = (key, p)
        p = best[1]
        sess = state.open(p)
        start = max(sess.free, releases[task.name])
        end = start + task.times[p.size]
        runs.append(ScheduledTask(task.name, p, start, end))
        sess.free = end
    return _schedule(gpu, runs, state)


@options.known_options
def fixpart_all(problem: Union[Problem, Workload]) -> dict[frozenset[Placement], Schedule]:
    """FixPart(P) for every maximal partition P the tasks fit (``{partition: schedule}``)."""
    _tasks_and_releases(problem)  # a bad problem is an error, not a partition that does not fit
    out = {}
    for part in problem.gpu.partitions():
        try:
            out[part] = fixpart(problem, part)
        except InstanceError:
            continue  # some task's memory rules out every size of this partition
    return out


@options.known_options
def fixpart_best(problem: Union[Problem, Workload]) -> Schedule:
    """FixPartBest (Sec. 6.5): the FixPart schedule of lowest makespan over every maximal partition.

    Ties go to the first partition in ``gpu.partitions()`` order.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(8, "A30", seed=1)
    >>> fixpart_best(p).makespan <= min(fixpart(p, part).makespan for part in p.gpu.partitions())
    True
    """
    every = fixpart_all(problem)
    if not every:
        raise InstanceError("no partition of the GPU can run every task", field="partition")
    return min(every.values(), key=lambda s: s.makespan)


@options.known_options
def fixpart_whole(problem: Union[Problem, Workload]) -> Schedule:
    """FixPart(7) on A100/H100 (FixPart(4) on A30): the whole GPU for one task at a time.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(3, "A100", seed=0)
    >>> s = fixpart_whole(p)
    >>> {r.placement.name for r in s.tasks}
    {'7@0'}
    """
    _tasks_and_releases(problem)
    return fixpart(problem, [problem.gpu.root])


@options.known_options
def fixpart_ones(problem: Union[Problem, Workload]) -> Schedule:
    """FixPart(1,...,1): one instance of size 1 per slice.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(9, "A100", seed=0)
    >>> sorted({r.placement.size for r in fixpart_ones(p).tasks})
    [1]
    """
    _tasks_and_releases(problem)
    return fixpart(problem, problem.gpu.placements_of_size(min(problem.gpu.sizes)))


# ---------------------------------------------------------------------------
# MISO-opt

@options.known_options
def speedup(task: Task, size: int) -> float:
    """``t(s0) / t(size)`` with ``s0`` the smallest size the task may use (Sec. 6.5's speedup).

    Examples
    --------
    >>> speedup(Task("a", {1: 4.0, 2: 2.0, 4: 1.6}), 4)
    2.5
    """
    return task.times[task.sizes[0]] / task.times[size]


def _best_assignment(tasks: Sequence[Task], part: Sequence[Placement]) -> tuple[float, list[int]] | None:
    """Max total speed-up matching of ``tasks`` (<= |part|) to instances; ``None`` if some task cannot fit.

    A dynamic programme over the set of instances already used (|part| <= 7,
    so at most 128 states per task); ties keep the lexicographically first
    choice of instances, which makes the result deterministic.
    """
    width = len(part)
    # best[mask] = (total, choices) after assigning the first popcount(mask) tasks
    best: dict[int, tuple[float, tuple[int, ...]]] = {0: (0.0, ())}
    for t in tasks:
        nxt: dict[int, tuple[float, tuple[int, ...]]] = {}
        for mask, (total, picks) in best.items():
            for j in range(width):
                if mask >> j & 1 or part[j].size not in t.times:
                    continue
                cand = (total + speedup(t, part[j].size), picks + (j,))
                old = nxt.get(mask | 1 << j)
                if old is None or cand[0] > old[0] + _EPS or (abs(cand[0] - old[0]) <= _EPS and cand[1] < old[1]):
                    nxt[mask | 1 << j] = cand
        best = nxt
        if not best:
            return None
    total, picks = max(best.values(), key=lambda v: (v[0], tuple(-x for x in v[1])))
    return total, list(picks)


@options.known_options
def miso_opt(problem: Union[Problem, Workload], repartition: str = "barrier") -> Schedule:
    """MISO-opt (Sec. 6.5): FIFO, each next partition maximises the sum of speed-ups of the next tasks.

    Parameters
    ----------
    problem
        One batch (or a workload; tasks then also wait for their release).
    repartition
        ``"barrier"`` (default): the next partition starts when every task of
        the current one has ended; ``"slices"``: each new instance only waits
        for the instances sharing its slices. See the module docstring.

    Instances of the next partition that are already live are reused; others
    are created after the live instances sharing their slices are destroyed.
    Within one partition, tasks assigned the same size go to the instance
    ready first, earlier tasks first.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.generate(10, "A100", seed=2)
    >>> s = miso_opt(p)
    >>> mig.check(p, s)
    []
    """
    options.choice(repartition, REPARTITION_MODES, "repartition")
    tasks, releases = _tasks_and_releases(problem)
    gpu = problem.gpu
    partitions = [tuple(sorted(part, key=lambda p: (-p.size, p.start))) for part in gpu.partitions()]
    state = _GPUState(gpu)
    runs: list[ScheduledTask] = []
    k = 0
    barrier = 0.0
    while k < len(tasks):
        best = None
        for part in partitions:
            nxt = tasks[k:k + len(part)]
            got = _best_assignment(nxt, part)
            if got is not None and (best is None or got[0] > best[0] + 1e-12):
                best = (got[0], part, nxt, got[1])
        if best is None:  # cannot happen for a valid Problem: the root fits every task
            raise InstanceError("no partition fits the next task", task=tasks[k].name, field="times")
        _, part, nxt, col_of = best
        earliest = barrier if repartition == "barrier" else 0.0
        # same-size ties: earlier tasks to instances ready earlier
        used = [part[c] for c in col_of]
        by_size: dict[int, list[Placement]] = {}
        for p in used:
            by_size.setdefault(p.size, []).append(p)
        for size in by_size:
            by_size[size].sort(key=lambda p: (state.ready(p, earliest), p.start))
        pairs = []
        for t, p in zip(nxt, used):
            pairs.append((t, by_size[p.size].pop(0)))
        # open instances in order of readiness so early ones get the early op slots
        pairs.sort(key=lambda tp: (state.ready(tp[1], earliest), tp[1].start))
        round_end = barrier
        for t, p in pairs:
            sess = state.open(p, earliest)
            start = max(sess.free, earliest, releases[t.name])
            end = start + t.times[p.size]
            runs.append(ScheduledTask(t.name, p, start, end))
            sess.free = end
            round_end = max(round_end, end)
        barrier = round_end
        k += len(nxt)
    return _schedule(gpu, runs, state)
