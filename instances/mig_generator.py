"""Synthetic MIG workloads, exactly as the FAR paper's Sec. 6.3 describes them.

The generator takes the number of tasks n, the percentage p_s of tasks that
scale well up to each instance size s, and the percentage p_sup of those
(with s >= 2) that start with a super-linear speed-up from 1 to 2 slices
(memory-bound). Then:

* class counts n_s = floor(n * p_s); while sum n_s < n, add one to the class
  farthest from its exact share, argmax_s (n * p_s - n_s) (footnote 8; ties go
  to the smallest size);
* in class s >= 2, ceil(p_sup * n_s) tasks are memory-bound and the rest
  compute-bound; class 1 tasks are neither (sub-linear from the first slice);
* t(1) ~ U(t_min, t_max) and, for every slice step k -> k+1 (k = 1..S-1),
  t(k+1) = (k + r) / (k + 1) * t(k) with r drawn from

    - super-linear  N(-0.25, 0.25) clipped to [-0.5, 0]
    - near-linear   N(0.1, 0.1)    clipped to [0, 0.2]
    - sub-linear    N(0.75, 0.25)  clipped to [0.5, 1]

  A step k -> k+1 is "within the good range" when k+1 <= s. Compute-bound
  tasks step near-linearly within the range; memory-bound tasks step
  super-linearly on 1 -> 2 and, on each later step within the range, turn
  compute-bound with probability 0.3 (from then on they step as the paper's
  A30 example says: sub-linearly, see ``transition``); every step beyond the
  range is sub-linear;
* times for slice counts that are not compute sizes of the GPU are discarded.

Readings we had to choose (the paper is ambiguous; see the README):

* "clipped" is read as ``numpy.clip`` (a point mass at the bounds), not as a
  truncated normal;
* the A30 example says a memory-bound task that turns compute-bound moves "to
  sub-linear speedup"; the general text says it "transitions to compute-bound"
  (near-linear within its range). ``transition="sub-linear"`` (default) follows
  the example, ``"near-linear"`` the other reading;
* the presets give p_sup no value; we use 50 %, the value of Figure 11;
* the presets are given for the A100/H100 only. For the A30 (sizes 1, 2, 4) we
  keep their shape: PoorScaling = the two smallest sizes 50/50, MixedScaling =
  equal shares, GoodScaling = the two largest sizes 50/50.

Random draws use ``numpy.random.default_rng(seed)`` (PCG64), so a seed gives
the same instance on any machine.

Every argument is checked before any work (:mod:`instances.options`): a bad
value is one :class:`~instances.errors.OptionError` line. A batch has at most
:data:`MAX_TASKS` tasks (the command line's maximum) and never more than the
loaders read back (:data:`instances.files.MAX_FILE_BYTES`), so whatever
``generate`` returns, ``save`` writes a file ``load`` accepts.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import json

import numpy as np

from instances import console, files, gpus
from instances import options as opt
from instances.errors import OptionError
from instances.gpus import GPUSpec
from instances.mig_problem import Problem, Task, Workload

__all__ = ["SCALING_PRESETS", "TIME_PRESETS", "scaling_shares", "class_counts", "generate", "generate_workload",
           "R_DISTRIBUTIONS", "P_TRANSITION", "DEFAULT_P_SUP", "MAX_TASKS", "MIN_TIME", "MAX_TIME"]

#: Most tasks of one generated batch or workload (``console.MAX_TASKS``, the command line's ``--n``).
MAX_TASKS = console.MAX_TASKS
#: Range of ``(t_min, t_max)``: every later time is at least ``t_min / 10**4`` (seven steps of at most
#: a quarter each), so no time underflows to 0, and sums of times stay far from overflow.
MIN_TIME, MAX_TIME = 1e-290, 1e290

#: (mean, standard deviation, low, high) of r per speed-up type (Sec. 6.3).
R_DISTRIBUTIONS: dict[str, tuple[float, float, float, float]] = {
    "super-linear": (-0.25, 0.25, -0.5, 0.0),
    "near-linear": (0.1, 0.1, 0.0, 0.2),
    "sub-linear": (0.75, 0.25, 0.5, 1.0),
}
#: Chance per slice that a memory-bound task turns compute-bound.
P_TRANSITION = 0.3
#: p_sup used by the presets (Figure 11's value; the presets do not give one).
DEFAULT_P_SUP = 0.5

#: (p_1, p_2, p_3, p_4, p_7) in percent for A100/H100 (Sec. 6.3).
SCALING_PRESETS: dict[str, dict[int, float]] = {
    "PoorScaling": {1: 50, 2: 50, 3: 0, 4: 0, 7: 0},
    "MixedScaling": {1: 20, 2: 20, 3: 20, 4: 20, 7: 20},
    "GoodScaling": {1: 0, 2: 0, 3: 0, 4: 50, 7: 50},
}
#: (t_min, t_max) in seconds (Sec. 6.3).
TIME_PRESETS: dict[str, tuple[float, float]] = {
    "WideTimes": (1.0, 100.0),
    "NarrowTimes": (90.0, 100.0),
}


def scaling_shares(gpu: GPUSpec, workload: str | Mapping[int, float]) -> dict[int, float]:
    """Percentages p_s per compute size of ``gpu`` for a preset name or explicit mapping.

    The paper's presets are for 7-slice GPUs; for other GPUs the preset's shape
    is kept (see the module docstring).
    """
    sizes = gpu.sizes
    if isinstance(workload, Mapping):
        shares = {opt.integer(s, "workload", lo=1, hi=gpus.MAX_SLICES): opt.number(p, "workload", lo=0, hi=100)
                  for s, p in workload.items()}
    else:
        if not isinstance(workload, str) or workload not in SCALING_PRESETS:
            raise OptionError(f"unknown workload preset {workload!r}; known: {', '.join(SCALING_PRESETS)}",
                              field="workload")
        if set(sizes) == set(SCALING_PRESETS[workload]):
            shares = dict(SCALING_PRESETS[workload])
        elif workload == "MixedScaling":
            shares = {s: 100.0 / len(sizes) for s in sizes}
        elif workload == "PoorScaling":
            shares = {s: (50.0 if s in sizes[:2] else 0.0) for s in sizes}
        else:
            shares = {s: (50.0 if s in sizes[-2:] else 0.0) for s in sizes}
    bad = [s for s in shares if s not in sizes]
    if bad:
        raise OptionError(f"sizes {bad} are not compute sizes of {gpu.name}", field="workload")
    if any(p < 0 for p in shares.values()) or not math.isclose(sum(shares.values()), 100.0, abs_tol=1e-6):
        raise OptionError(f"percentages {shares} must be >= 0 and sum to 100", field="workload")
    return {s: shares.get(s, 0.0) for s in sizes}


def class_counts(n: int, shares: Mapping[int, float]) -> dict[int, int]:
    """n_s = floor(n p_s), then footnote 8's fix-up until the counts sum to n.

    Examples
    --------
    >>> class_counts(12, {1: 20, 2: 20, 3: 20, 4: 20, 7: 20})
    {1: 3, 2: 3, 3: 2, 4: 2, 7: 2}
    """
    exact = {s: n * p / 100.0 for s, p in shares.items()}
    counts = {s: math.floor(e + 1e-9) for s, e in exact.items()}
    while sum(counts.values()) < n:
        j = max(sorted(counts), key=lambda s: exact[s] - counts[s])  # max() keeps the first: smallest size
        counts[j] += 1
    return counts


def _draw_r(rng: np.random.Generator, kind: str) -> float:
    mu, sigma, lo, hi = R_DISTRIBUTIONS[kind]
    return float(np.clip(rng.normal(mu, sigma), lo, hi))


def _task_times(rng: np.random.Generator, num_slices: int, scale_to: int, memory_bound: bool,
                t1: float, transition: str) -> list[float]:
    """Times on 1..num_slices slices for one task of class ``scale_to``."""
    times = [t1]
    bound = "memory" if memory_bound else "compute"
    for k in range(1, num_slices):
        within = k + 1 <= scale_to and scale_to >= 2
        if not within:
            kind = "sub-linear"
        elif bound == "memory":
            if k >= 2 and rng.random() < P_TRANSITION:
                bound = "turned"
                kind = transition
            else:
                kind = "super-linear"
        elif bound == "turned":
            kind = transition
        else:
            kind = "near-linear"
        r = _draw_r(rng, kind)
        times.append((k + r) / (k + 1) * times[-1])
    return times


def generate(n: int, gpu: str | GPUSpec = "A100", workload: str | Mapping[int, float] = "MixedScaling",
             times: str | tuple[float, float] = "WideTimes", seed: int | None = 0, *,
             p_sup: float = DEFAULT_P_SUP, transition: str = "sub-linear", prefix: str = "t",
             release: float = 0.0) -> Problem:
    """A synthetic batch of ``n`` tasks (Sec. 6.3).

    Parameters
    ----------
    n
        Number of tasks (>= 1).
    gpu
        GPU name or spec.
    workload
        ``"PoorScaling"``, ``"MixedScaling"``, ``"GoodScaling"`` or ``{size: percent}``.
    times
        ``"WideTimes"`` (U(1, 100)), ``"NarrowTimes"`` (U(90, 100)) or ``(t_min, t_max)``.
    seed
        Seed of ``numpy.random.default_rng``; the same seed gives the same tasks on any machine.
    p_sup
        Share of memory-bound (super-linear) tasks in every class s >= 2.
    transition
        Speed-up type after a memory-bound task turns compute-bound:
        ``"sub-linear"`` (the A30 example) or ``"near-linear"``.
    prefix, release
        Task names are ``f"{prefix}{i}"``; the batch's release time.

    Task order is shuffled (seeded) so the classes are mixed in FIFO order.

    Examples
    --------
    >>> p = generate(5, "A30", "MixedScaling", "NarrowTimes", seed=3)
    >>> [t.name for t in p.tasks], sorted(p.tasks[0].times)
    (['t0', 't1', 't2', 't3', 't4'], [1, 2, 4])
    """
    n = opt.integer(n, "n", lo=1, hi=MAX_TASKS)
    gpu = gpus.get(gpu)
    seed = opt.seed(seed)
    opt.choice(transition, ("sub-linear", "near-linear"), "transition")
    p_sup = opt.number(p_sup, "p_sup", lo=0.0, hi=1.0)
    release = opt.number(release, "release", lo=0.0, hi=MAX_TIME)
    if not isinstance(prefix, str):
        raise OptionError(f"must be a string, got {prefix!r}", field="prefix")
    files.name(prefix + "0", field="prefix", error=OptionError)
    if isinstance(times, str):
        if times not in TIME_PRESETS:
            raise OptionError(f"unknown times preset {times!r}; known: {', '.join(TIME_PRESETS)}", field="times")
        tmin, tmax = TIME_PRESETS[times]
    else:
        if not isinstance(times, (tuple, list)) or len(times) != 2:
            raise OptionError(f"must be a preset name or (t_min, t_max), got {times!r}", field="times")
        tmin, tmax = (opt.number(t, "times", lo=MIN_TIME, hi=MAX_TIME) for t in times)
        if tmin > tmax:
            raise OptionError(f"need {MIN_TIME:g} <= t_min <= t_max <= {MAX_TIME:g}, got {times!r}", field="times")
    _check_file_size(n, gpu, prefix)
    shares = scaling_shares(gpu, workload)
    counts = class_counts(n, shares)
    rng = np.random.default_rng(seed)

    specs: list[tuple[int, bool]] = []  # (class size, memory-bound)
    for s in gpu.sizes:
        ns = counts[s]
        n_mem = math.ceil(p_sup * ns - 1e-9) if s >= 2 else 0
        specs += [(s, True)] * n_mem + [(s, False)] * (ns - n_mem)
    order = rng.permutation(len(specs))
    tasks = []
    for i, idx in enumerate(order):
        scale_to, mem = specs[idx]
        t1 = float(rng.uniform(tmin, tmax))
        all_times = _task_times(rng, gpu.num_slices, scale_to, mem, t1, transition)
        tasks.append(Task(f"{prefix}{i}", {s: all_times[s - 1] for s in gpu.sizes}))
    return Problem(gpu, tasks, release)


def _check_file_size(n: int, gpu: GPUSpec, prefix: str) -> None:
    """Refuse a batch whose problem file would be larger than the loaders read (:data:`files.MAX_FILE_BYTES`).

    A bound, not a measure: each task takes at most its name, the JSON around
    it and 36 bytes per compute size (a size key and a float's ``repr``).
    """
    per_task = 40 + len(json.dumps(f"{prefix}{n}")) + 36 * len(gpu.sizes)
    if n * per_task > files.MAX_FILE_BYTES:
        raise OptionError(f"{n:,} tasks named {prefix!r}... on {gpu.name} would write up to {n * per_task:,} bytes, "
                          f"more than the {files.MAX_FILE_BYTES:,} the loader reads; generate fewer tasks",
                          field="n")


def generate_workload(batch_sizes: Sequence[int], releases: Sequence[float], gpu: str | GPUSpec = "A100",
                      workload: str | Mapping[int, float] = "MixedScaling",
                      times: str | tuple[float, float] = "WideTimes", seed: int | None = 0,
                      **kwargs) -> Workload:
    """A multi-batch workload: one :func:`generate` batch per entry, seeded ``seed + b``.

    Task names are ``b{batch}_t{i}``.
    """
    batch_sizes, releases = list(batch_sizes), list(releases)
    if len(batch_sizes) != len(releases):
        raise OptionError("need one release per batch", field="releases")
    sizes = [opt.integer(n, "batch_sizes", lo=1, hi=MAX_TASKS) for n in batch_sizes]
    if sum(sizes) > MAX_TASKS:
        raise OptionError(f"{sum(sizes):,} tasks in all; at most {MAX_TASKS:,}", field="batch_sizes")
    base = opt.seed(seed) or 0
    # each batch its own seed; wrapping keeps it in the seed range for every base
    batches = [generate(n, gpu, workload, times, (base + b) % (opt.MAX_SEED + 1), prefix=f"b{b}_t", release=r,
                        **kwargs)
               for b, (n, r) in enumerate(zip(sizes, releases))]
    return Workload(gpus.get(gpu), batches)
