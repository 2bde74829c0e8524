"""Co-scheduling pairs under resource partitioning and power capping (co-scheduling paper).

The co-scheduling paper (Saba, Arima, Liu, Schulz: *Orchestrated
co-scheduling, resource partitioning, and power capping on CPU-GPU
heterogeneous systems*) takes a window of ``W`` jobs from a queue and
splits it into job sets of at most ``C`` jobs (Sec. 3.2). The sets run one
after another; the jobs of a set run side by side with the CPU cores and GPU
GPCs split between them and with one CPU and one GPU power cap whose sum is
within ``P_total``. The objective is the sum of the set times (Sec. 3.2),
where (Sec. 4.1.1)

* ``CoRunTime(JS, HC) = max_j Slowdown_j(JS, HC) * SoloRunAppTime_j(P_max)``
* ``SoloRunTime(JS, P_total) = sum_j SoloRunAppTime_j(P_total)``, each job
  alone with all resources and its own best caps ``OptP^c + OptP^g = P_total``.

This module holds the problem data and nothing that optimises it:

* :class:`Job` -- a job and its profile (solo time at ``P_max`` and the
  features the analytic model reads).
* :class:`ConfigSpace` -- the hardware configurations of Table 4.
* :class:`Config` -- one hardware configuration ``HC = {R^c, R^g, P^c, P^g}``.
* :class:`SlowdownModel` -- the interface ``slowdown(job, others, config)``
  with :class:`AnalyticModel` (documented assumptions) and
  :class:`TableModel` (measured slowdowns read from a CSV).
* :class:`PairingProblem` -- queue + space + model + concurrency ``C``;
  :class:`WeightedQueue` -- the same partitioning problem with set times given
  directly (for random-weight tests of the matching and exact models).
* :func:`generate`, :func:`job_mix` (Table 6), :func:`load_jobs`, :func:`save_jobs`.
* :class:`Costs` -- the one cost model (every set's time and best
  configuration) that heuristics and exact models read, built by
  :func:`costs_of` (:func:`search` / :func:`triple_costs` for a problem, the
  given times for a queue).
* :class:`Plan` / :class:`JobSet` -- the solution type; :func:`check` -- the
  independent checker (plain loops over the scalar slowdown interface).

Examples
--------
>>> from instances import pairing
>>> problem = pairing.PairingProblem(pairing.job_mix(1), pairing.ConfigSpace(p_total=350))
>>> [j.app for j in problem.jobs]
['gaussian', 'lud', 'pathfinder', 'streamcluster']
>>> len(problem.space.corun_configs(2)), len(problem.space.solo_configs())
(50, 5)
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from instances import files
from instances.errors import InstanceError

__all__ = [
    "Job", "Config", "ConfigSpace", "SlowdownModel", "AnalyticModel", "TableModel",
    "PairingProblem", "WeightedQueue", "JobSet", "Plan", "APPS", "JOB_MIXES",
    "generate", "job_mix", "load_jobs", "save_jobs", "check", "solo_time_at",
    "set_time", "SAMPLE_TABLE", "Costs", "costs_of", "search", "plain_search", "triple_costs",
]

# ---------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------

FEATURES = ("gpu_share", "cpu_parallel", "gpu_parallel", "cpu_mem", "gpu_mem")


@dataclass(frozen=True)
class Job:
    """One job of the queue and its profile (Sec. 3.3: collected on its first run).

    Parameters
    ----------
    name
        Unique name in the queue.
    app
        Application the job runs; the table-driven model looks slowdowns up by it.
    solo_time
        ``SoloRunAppTime(P_max)``: seconds alone, all cores and GPCs, no cap.
    gpu_share, cpu_parallel, gpu_parallel, cpu_mem, gpu_mem
        Features in [0, 1] read by :class:`AnalyticModel` (the paper's NN reads
        18 hardware counters instead, Table 5): fraction of the solo time in
        GPU phases, Amdahl parallel fraction of the CPU / GPU phases over cores
        / GPCs, and the memory-bound fraction of the CPU / GPU phases.

    Examples
    --------
    >>> Job("a", "lud", 10.0).solo_time
    10.0
    """

    name: str
    app: str
    solo_time: float
    gpu_share: float = 0.5
    cpu_parallel: float = 0.8
    gpu_parallel: float = 0.9
    cpu_mem: float = 0.3
    gpu_mem: float = 0.3

    def __post_init__(self) -> None:
        # one printable line each (no newline, no lone surrogate): names end up in CLI output
        files.name(self.name, task=repr(self.name) if isinstance(self.name, str) else None)
        files.name(self.app, task=self.name, field="app")
        t = self.solo_time
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise InstanceError(f"must be a finite number > 0, got {t!r}", task=self.name,
                                field="solo_time")
        for f in FEATURES:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0):
                raise InstanceError(f"must be in [0, 1], got {v!r}", task=self.name, field=f)


# Illustrative profiles of the eight programs of Sec. 5.1.2 (seven Rodinia
# programs and matvec). The paper gives no numbers for them; these are plausible
# values chosen by hand (GPU-heavy lavaMD / lud, memory-bound pathfinder /
# streamcluster, cooperative CPU+GPU matvec), NOT measurements.
APPS: Mapping[str, dict] = {
    "gaussian": dict(solo_time=12.0, gpu_share=0.55, cpu_parallel=0.20, gpu_parallel=0.60,
                     cpu_mem=0.30, gpu_mem=0.40),
    "lud": dict(solo_time=10.0, gpu_share=0.75, cpu_parallel=0.20, gpu_parallel=0.70,
                cpu_mem=0.20, gpu_mem=0.30),
    "pathfinder": dict(solo_time=8.0, gpu_share=0.50, cpu_parallel=0.30, gpu_parallel=0.50,
                       cpu_mem=0.50, gpu_mem=0.70),
    "streamcluster": dict(solo_time=15.0, gpu_share=0.60, cpu_parallel=0.70, gpu_parallel=0.60,
                          cpu_mem=0.60, gpu_mem=0.60),
    "srad": dict(solo_time=14.0, gpu_share=0.65, cpu_parallel=0.30, gpu_parallel=0.70,
                 cpu_mem=0.40, gpu_mem=0.60),
    "hotspot": dict(solo_time=9.0, gpu_share=0.70, cpu_parallel=0.30, gpu_parallel=0.60,
                    cpu_mem=0.30, gpu_mem=0.50),
    "lavaMD": dict(solo_time=16.0, gpu_share=0.85, cpu_parallel=0.20, gpu_parallel=0.90,
                   cpu_mem=0.10, gpu_mem=0.15),
    "matvec": dict(solo_time=20.0, gpu_share=0.50, cpu_parallel=0.90, gpu_parallel=0.90,
                   cpu_mem=0.20, gpu_mem=0.20),
}

# Table 6: the paper's three job mixes (C = 2, W = 4, 6, 8).
JOB_MIXES: Mapping[int, tuple[str, ...]] = {
    1: ("gaussian", "lud", "pathfinder", "streamcluster"),
    2: ("gaussian", "srad", "hotspot", "pathfinder", "lavaMD", "matvec"),
    3: ("gaussian", "srad", "hotspot", "lud", "pathfinder", "lavaMD", "streamcluster", "matvec"),
}


def job_mix(number: int) -> tuple[Job, ...]:
    """The jobs of JobMix1..3 (Table 6), one job per program, named after it.

    Examples
    --------
    >>> len(job_mix(3))
    8
    """
    if number not in JOB_MIXES:
        raise InstanceError(f"unknown job mix {number!r}; Table 6 has 1, 2, 3", field="mix")
    return tuple(Job(app, app, **APPS[app]) for app in JOB_MIXES[number])


def generate(W: int, seed: int = 0, apps: Sequence[str] | None = None,
             size_range: tuple[float, float] = (0.5, 2.0), jitter: float = 0.05) -> tuple[Job, ...]:
    """Seeded job queue of ``W`` jobs drawn from the program profiles.

    Each job picks a program uniformly, scales its solo time by a factor
    uniform in ``size_range`` (input size) and moves each feature by a uniform
    ``+-jitter`` (clipped to [0, 1]), so that jobs of one program differ.

    Examples
    --------
    >>> q = generate(6, seed=1)
    >>> len(q), q == generate(6, seed=1)
    (6, True)
    """
    if not isinstance(W, (int, np.integer)) or W < 1:
        raise InstanceError(f"must be an integer >= 1, got {W!r}", field="W")
    apps = tuple(apps) if apps is not None else tuple(APPS)
    for a in apps:
        if a not in APPS:
            raise InstanceError(f"unknown program {a!r}; known: {', '.join(APPS)}", field="apps")
    lo, hi = size_range
    if not (0 < lo <= hi):
        raise InstanceError(f"needs 0 < low <= high, got {size_range!r}", field="size_range")
    rng = np.random.default_rng(seed)
    jobs = []
    for k in range(W):
        app = apps[int(rng.integers(len(apps)))]
        base = APPS[app]
        scale = float(rng.uniform(lo, hi))
        feats = {f: float(np.clip(base[f] + rng.uniform(-jitter, jitter), 0.0, 1.0))
                 for f in FEATURES}
        jobs.append(Job(f"{app}-{k}", app, round(base["solo_time"] * scale, 6), **feats))
    return tuple(jobs)


JOB_COLUMNS = ("name", "app", "solo_time") + FEATURES


def save_jobs(jobs: Iterable[Job], path: str | Path) -> None:
    """Write jobs to a CSV with the columns of :data:`JOB_COLUMNS`."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(JOB_COLUMNS)
        for j in jobs:
            w.writerow([getattr(j, c) for c in JOB_COLUMNS])


def load_jobs(path: str | Path) -> tuple[Job, ...]:
    """Read jobs from a CSV (columns ``name, app, solo_time`` and optional features).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "q.csv"); save_jobs(job_mix(1), p)
    >>> load_jobs(p) == job_mix(1)
    True
    """
    path = str(path)
    rows = _read_csv(path, required=("name", "app", "solo_time"), optional=FEATURES)
    jobs, seen = [], set()
    for line, row in rows:
        name = row["name"]
        for c in ("name", "app", "solo_time"):
            if not row[c]:
                raise InstanceError(f"line {line}: empty {c}", source=path, task=name or None, field=c)
        try:
            kw = {c: _number(row[c], path, line, name, c) for c in ("solo_time",) + FEATURES
                  if row.get(c, "") != ""}
            job = Job(name, row["app"], **kw)
        except InstanceError as e:
            reason = e.reason if e.reason.startswith(f"line {line}:") else f"line {line}: {e.reason}"
            raise InstanceError(reason, source=path, task=e.task, field=e.field) from None
        if name in seen:
            raise InstanceError(f"line {line}: duplicate job name", source=path, task=name,
                                field="name")
        seen.add(name)
        jobs.append(job)
    if not jobs:
        raise InstanceError("no jobs", source=path)
    return tuple(jobs)


def _read_csv(path: str, required: Sequence[str], optional: Sequence[str] = ()):
    """Rows of a CSV as (line number, dict), with a clear error for a bad header.

    The file goes through :func:`instances.files.read_csv` (size bound,
    UTF-8, strict quoting, one-line cells); a column named twice would let
    the last one win silently, so it is an error.
    """
    rows = files.read_csv(path)
    if not rows:
        raise InstanceError("empty file (expected a header line)", source=path)
    _, header = rows[0]
    header = [h.strip() for h in header]
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise InstanceError(f"column(s) {', '.join(map(repr, twice))} named twice in the header", source=path,
                            field=twice[0])
    missing = [c for c in required if c not in header]
    if missing:
        raise InstanceError(f"header lacks column(s) {', '.join(missing)}; expected "
                            f"{', '.join(required)}", source=path, field=missing[0])
    unknown = [c for c in header if c not in required and c not in optional]
    if unknown:
        raise InstanceError(f"unknown column(s) {', '.join(map(repr, unknown))}", source=path,
                            field=unknown[0])
    out = []
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise InstanceError(f"line {line}: {len(row)} fields, header has {len(header)}",
                                source=path)
        out.append((line, {h: c.strip() for h, c in zip(header, row)}))
    return out


# A plain decimal number: ASCII digits, no '_' separators, no 'inf'/'nan'
# words (float() would take all three).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(text: str, path: str, line: int, task: str | None, fld: str) -> float:
    if _DECIMAL.fullmatch(text):
        v = float(text)
    else:
        try:
            v = float(text)
        except ValueError:
            v = 0.0
        if math.isfinite(v):
            raise InstanceError(f"line {line}: not a number: {text!r}", source=path, task=task,
                                field=fld)
    if not math.isfinite(v):
        raise InstanceError(f"line {line}: not finite: {text!r}", source=path, task=task,
                            field=fld)
    return v


def _shares(text: str, path: str, line: int, task: str, fld: str) -> tuple[int, ...]:
    """A share list such as ``16/16``: small non-negative integers in plain digits joined by '/'."""
    parts = text.split("/")
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        raise InstanceError(f"line {line}: expected integers joined by '/', got {text!r}", source=path,
                            task=task, field=fld)
    return tuple(int(p) for p in parts)


# ---------------------------------------------------------------------------
# Hardware configurations (Table 4)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One hardware configuration ``HC = {R^c, R^g, P^c, P^g}`` (Table 1).

    ``cores`` and ``gpcs`` give one share per job of the set, in the set's
    order; a solo run is ``cores=(32,)``, ``gpcs=(8,)`` (Table 4's (32,0), (8,0)).
    The caps are chip-level: one CPU cap and one GPU cap for the whole set.

    Examples
    --------
    >>> Config((16, 16), (3, 4), 175, 175).permuted((1, 0))
    Config(cores=(16, 16), gpcs=(4, 3), cpu_cap=175, gpu_cap=175)
    """

    cores: tuple[int, ...]
    gpcs: tuple[int, ...]
    cpu_cap: float
    gpu_cap: float

    def permuted(self, order: Sequence[int]) -> "Config":
        """The same configuration with the jobs listed in ``order``."""
        return Config(tuple(self.cores[i] for i in order), tuple(self.gpcs[i] for i in order),
                      self.cpu_cap, self.gpu_cap)

    def __str__(self) -> str:
        return (f"cores {'/'.join(map(str, self.cores))} gpcs {'/'.join(map(str, self.gpcs))} "
                f"caps {self.cpu_cap:g}/{self.gpu_cap:g} W")


def _splits(total: int, parts: int, step: int, sizes: Iterable[int]) -> tuple[tuple[int, ...], ...]:
    ok = set(sizes)
    return tuple(s for s in itertools.product(range(step, total + 1, step), repeat=parts)
                 if sum(s) == total and all(x in ok for x in s))


@dataclass(frozen=True)
class ConfigSpace:
    """The hardware configuration space of Table 4 (defaults) or a user's own.

    Parameters
    ----------
    p_total
        Total power cap ``P_total`` [W] (Table 4: 350 or 400).
    p_max
        ``P_max`` (TDP) [W]; ``P_total <= P_max``.
    cpu_caps, gpu_caps
        Grids of CPU / GPU caps [W] (Table 4).
    core_splits, gpc_splits
        Per-job shares for co-runs of two jobs (Table 4). One GPC is disabled
        under MIG, so co-run GPC splits sum to 7 while a solo run has 8.
    triple_core_splits, triple_gpc_splits
        Shares for C = 3, which the paper does not define. Our extension: the
        32 cores in blocks of 4 (every ordered split, 21) and the 7 GPCs in
        compute instances of 1-4 GPCs (12 ordered splits).
    solo_cores, solo_gpcs
        ``R^c_max``, ``R^g_max`` (32 cores, 8 GPCs).
    budget
        ``"equal"`` (default): caps with ``P^c + P^g = P_total``, the setups
        the paper measures (Sec. 5.1.2: 100 co-run setups for 350 and 400 W)
        and the solo rule ``OptP^c + OptP^g = P_total`` (Table 2).
        ``"at_most"``: ``P^c + P^g <= P_total``, the Sec. 3.2 constraint read
        literally. With a slowdown that never grows with a cap both give the
        same optimum except where the grid's maxima bind.

    Examples
    --------
    >>> ConfigSpace(p_total=350).power_pairs()
    ((100, 250), (125, 225), (150, 200), (175, 175), (200, 150))
    >>> len(ConfigSpace(p_total=350, budget="at_most").power_pairs())
    15
    """

    p_total: float = 350
    p_max: float = 500
    cpu_caps: tuple[float, ...] = (100, 125, 150, 175, 200, 225, 250)
    gpu_caps: tuple[float, ...] = (150, 175, 200, 225, 250)
    core_splits: tuple[tuple[int, ...], ...] = ((2, 30), (8, 24), (16, 16), (24, 8), (30, 2))
    gpc_splits: tuple[tuple[int, ...], ...] = ((3, 4), (4, 3))
    triple_core_splits: tuple[tuple[int, ...], ...] = _splits(32, 3, 4, range(4, 33, 4))
    triple_gpc_splits: tuple[tuple[int, ...], ...] = _splits(7, 3, 1, (1, 2, 3, 4))
    solo_cores: int = 32
    solo_gpcs: int = 8
    budget: str = "equal"

    def __post_init__(self) -> None:
        if self.budget not in ("equal", "at_most"):
            raise InstanceError(f"must be 'equal' or 'at_most', got {self.budget!r}",
                                field="budget")
        for name in ("p_total", "p_max"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InstanceError(f"must be a number > 0, got {v!r}", field=name)
        if self.p_total > self.p_max:
            raise InstanceError(f"P_total={self.p_total:g} W exceeds P_max={self.p_max:g} W",
                                field="p_total")
        for name in ("cpu_caps", "gpu_caps"):
            caps = getattr(self, name)
            if not caps or any(not (0 < c) for c in caps):
                raise InstanceError("needs positive caps", field=name)
        for name, total, n in (("core_splits", self.solo_cores, 2),
                               ("gpc_splits", self.solo_gpcs, 2),
                               ("triple_core_splits", self.solo_cores, 3),
                               ("triple_gpc_splits", self.solo_gpcs, 3)):
            splits = getattr(self, name)
            for s in splits:
                if len(s) != n or any(x <= 0 for x in s) or sum(s) > total:
                    raise InstanceError(f"split {s!r} needs {n} positive shares summing to at "
                                        f"most {total}", field=name)
            # A set's jobs have no order, so each split must come with its permutations.
            if set(splits) != {p for s in splits for p in itertools.permutations(s)}:
                raise InstanceError("must be closed under permutation", field=name)

    # -- caps -------------------------------------------------------------
    def power_pairs(self) -> tuple[tuple[float, float], ...]:
        """Every (CPU cap, GPU cap) of the grids allowed under ``P_total``.

        Raises InstanceError when no pair satisfies the budget.
        """
        return self._power_pairs

    @cached_property
    def _power_pairs(self) -> tuple[tuple[float, float], ...]:
        if self.budget == "equal":
            pairs = tuple((c, g) for c in self.cpu_caps for g in self.gpu_caps
                          if abs(c + g - self.p_total) < 1e-9)
        else:
            pairs = tuple((c, g) for c in self.cpu_caps for g in self.gpu_caps
                          if c + g <= self.p_total + 1e-9)
        if not pairs:
            rule = "=" if self.budget == "equal" else "<="
            raise InstanceError(
                f"no CPU cap in {list(self.cpu_caps)} and GPU cap in {list(self.gpu_caps)} "
                f"with P^c + P^g {rule} P_total={self.p_total:g} W", field="p_total")
        return pairs

    def naive_caps(self) -> tuple[float, float]:
        """Caps of the paper's naive policy: the budget split evenly (Sec. 5.2).

        When the even split is not on the grids, the allowed pair closest to
        it (then the larger sum) is used.
        """
        pairs = self.power_pairs()
        return min(pairs, key=lambda p: (abs(p[0] - p[1]), -(p[0] + p[1]), p[0]))

    # -- shares -------------------------------------------------------------
    def shares(self, size: int) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """(core splits, GPC splits) for a job set of ``size`` jobs."""
        if size == 1:
            return ((self.solo_cores,),), ((self.solo_gpcs,),)
        if size == 2:
            return self.core_splits, self.gpc_splits
        if size == 3:
            return self.triple_core_splits, self.triple_gpc_splits
        raise InstanceError(f"job sets of {size} jobs are not supported (C <= 3)",
                            field="concurrency")

    def corun_configs(self, size: int) -> tuple[Config, ...]:
        """Every configuration for a set of ``size`` jobs (``size=1``: solo runs)."""
        cores, gpcs = self.shares(size)
        return tuple(Config(c, g, pc, pg) for c in cores for g in gpcs
                     for pc, pg in self.power_pairs())

    def solo_configs(self) -> tuple[Config, ...]:
        """Every solo configuration ``{R^c_max, R^g_max, P^c, P^g}``."""
        return self.corun_configs(1)

    def validate(self, config: Config, task: str | None = None) -> None:
        """Raise InstanceError when ``config`` is outside this space."""
        n = len(config.cores)
        if len(config.gpcs) != n:
            raise InstanceError(f"{config}: {n} core shares but {len(config.gpcs)} GPC shares",
                                task=task, field="config")
        cores, gpcs = self.shares(n)
        if tuple(config.cores) not in cores:
            raise InstanceError(f"{config}: core split not in the space "
                                f"({len(cores)} splits for {n} job(s))", task=task,
                                field="cores")
        if tuple(config.gpcs) not in gpcs:
            raise InstanceError(f"{config}: GPC split not in the space", task=task,
                                field="gpcs")
        if (config.cpu_cap, config.gpu_cap) not in self.power_pairs():
            rule = "=" if self.budget == "equal" else "<="
            raise InstanceError(f"{config}: caps not on the grids or P^c + P^g {rule} "
                                f"P_total={self.p_total:g} W fails", task=task, field="caps")


# ---------------------------------------------------------------------------
# Slowdown models
# ---------------------------------------------------------------------------


class SlowdownModel:
    """Interface of Sec. 4.1: ``Slowdown_j(JS, HC)``.

    ``slowdown(job, others, config)`` is the slowdown of ``job`` (relative to
    ``job.solo_time``, its time alone with everything and no cap) when it
    runs beside ``others`` (``()`` for a solo run) under ``config``, whose
    shares list ``job`` first and then ``others`` in order -- the paper's NN
    reorders its inputs the same way (Sec. 4.1.2).

    ``set_slowdowns`` evaluates many sets and configurations at once; the
    default loops over ``slowdown`` so that any model plugs in, subclasses
    override it with numpy.
    """

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        raise NotImplementedError

    def set_slowdowns(self, jobs: Sequence[Job], sets: np.ndarray,
                      configs: Sequence[Config]) -> np.ndarray:
        """Slowdowns ``S[m, p, k]`` of job ``sets[m, p]`` in set ``m`` under ``configs[k]``.

        ``configs`` list shares in the set's order (``sets[m, 0]`` first).
        """
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        out = np.empty((m, c, len(configs)))
        for p in range(c):
            order = [p] + [q for q in range(c) if q != p]
            views = [cfg.permuted(order) for cfg in configs]
            for i in range(m):
                job = jobs[sets[i, p]]
                others = tuple(jobs[sets[i, q]] for q in order[1:])
                for k, cfg in enumerate(views):
                    out[i, p, k] = self.slowdown(job, others, cfg)
        return out


@dataclass(frozen=True)
class AnalyticModel(SlowdownModel):
    """A transparent slowdown model standing in for the paper's neural network.

    Assumptions (each a simplification we chose; the paper learns the
    slowdown from 18 counters instead, Sec. 4.1.2 / Table 5):

    1. *Phases.* A job alternates CPU phases (fraction ``1 - g`` of its solo
       time) and GPU phases (fraction ``g = gpu_share``) that do not overlap.
    2. *Partitioning.* A phase scales with its share by Amdahl's law:
       ``A_c = (1 - p_c) + p_c * 32 / cores``, ``A_g = (1 - p_g) + p_g * 8 / gpcs``.
    3. *Compute vs memory.* A phase is a compute part ``1 - m`` that runs at
       the chip's clock and a memory part ``m`` that does not speed up with
       the clock but suffers bandwidth contention.
    4. *Contention.* A co-runner ``o`` adds traffic to the shared memory (host
       DDR4 for CPU phases; the L2 and HBM that all GPCs share for GPU
       phases): ``kappa_c = 1 + sum_o (1 - g_o) m_c,o cores_o / 32`` and
       ``kappa_g = 1 + sum_o g_o m_g,o gpcs_o / 8`` multiply the memory part.
    5. *Power capping.* The cap is chip-level. The chip's demand while the
       job is in a phase is ``idle + dyn * (own share * (1 - m/2) + sum_o
       duty_o * share_o * (1 - m_o/2))`` (memory-bound code draws less;
       co-runners count with their duty cycle), ``idle + dyn`` is the TDP
       (250 W for the 2990WX and the A100 PCIe). A cap below the demand
       lowers the clock to ``((cap - idle) / (demand - idle)) ** exponent``
       (``exponent = 1/2``: dynamic power between ``f^2`` and ``f^3``).

    The slowdown is ``(1 - g) A_c ((1 - m_c)/s_c + m_c kappa_c) + g A_g ((1 - m_g)/s_g
    + m_g kappa_g)``; it is 1 for a solo run with all resources and no cap and
    never grows when a cap grows. (A larger own share can slow a job: it also
    raises the chip's power demand under the same cap.)

    Examples
    --------
    >>> m = AnalyticModel(); j = Job("x", "lud", 10.0)
    >>> m.slowdown(j, (), Config((32,), (8,), 250, 250))
    1.0
    >>> m.slowdown(j, (Job("y", "srad", 5.0),), Config((16, 16), (4, 3), 175, 175)) > 1
    True
    """

    cpu_idle: float = 50.0
    cpu_dyn: float = 200.0
    gpu_idle: float = 50.0
    gpu_dyn: float = 200.0
    exponent: float = 0.5
    ref_cores: int = 32
    ref_gpcs: int = 8

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        if len(config.cores) != 1 + len(others):
            raise InstanceError(f"{config} has {len(config.cores)} shares for "
                                f"{1 + len(others)} job(s)", task=job.name, field="config")
        feats = [_feature_array([j]) for j in (job, *others)]
        cores = [np.array([[float(c)]]) for c in config.cores]
        gpcs = [np.array([[float(g)]]) for g in config.gpcs]
        caps = (np.array([[float(config.cpu_cap)]]), np.array([[float(config.gpu_cap)]]))
        return float(self._formula(feats, cores, gpcs, *caps)[0, 0])

    def set_slowdowns(self, jobs, sets, configs):
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        F = _feature_array(jobs)                      # (n, 6)
        C = np.array([cfg.cores for cfg in configs], float)   # (K, c)
        G = np.array([cfg.gpcs for cfg in configs], float)
        pc = np.array([cfg.cpu_cap for cfg in configs], float)[None, :]
        pg = np.array([cfg.gpu_cap for cfg in configs], float)[None, :]
        out = np.empty((m, c, len(configs)))
        for p in range(c):
            order = [p] + [q for q in range(c) if q != p]
            feats = [F[sets[:, q]][:, None, :] for q in order]          # (m, 1, 6)
            cores = [C[None, :, q] for q in order]                      # (1, K)
            gpcs = [G[None, :, q] for q in order]
            out[:, p, :] = self._formula(feats, cores, gpcs, pc, pg)
        return out

    def _formula(self, feats, cores, gpcs, pc, pg):
        """Assumptions 1-5 with numpy broadcasting; ``feats[0]`` is the job itself.

        ``feats[i][..., k]`` are the columns of :func:`_feature_array`.
        """
        if np.any(np.asarray(pc) <= self.cpu_idle) or np.any(np.asarray(pg) <= self.gpu_idle):
            raise InstanceError(f"caps must exceed the idle power ({self.cpu_idle:g} W CPU, "
                                f"{self.gpu_idle:g} W GPU) of the analytic model", field="caps")

        def col(f, k):
            return f[..., k]

        own = feats[0]
        g, p_c, p_g, m_c, m_g = (col(own, k) for k in range(1, 6))
        a_c = (1 - p_c) + p_c * self.ref_cores / cores[0]
        a_g = (1 - p_g) + p_g * self.ref_gpcs / gpcs[0]
        load_c = cores[0] / self.ref_cores * (1 - m_c / 2)
        load_g = gpcs[0] / self.ref_gpcs * (1 - m_g / 2)
        kap_c = 1.0
        kap_g = 1.0
        for f, c, q in zip(feats[1:], cores[1:], gpcs[1:]):
            go, mco, mgo = col(f, 1), col(f, 4), col(f, 5)
            share_c, share_g = c / self.ref_cores, q / self.ref_gpcs
            kap_c = kap_c + (1 - go) * mco * share_c
            kap_g = kap_g + go * mgo * share_g
            load_c = load_c + (1 - go) * share_c * (1 - mco / 2)
            load_g = load_g + go * share_g * (1 - mgo / 2)
        s_c = np.minimum(1.0, ((pc - self.cpu_idle) / (self.cpu_dyn * load_c)) ** self.exponent)
        s_g = np.minimum(1.0, ((pg - self.gpu_idle) / (self.gpu_dyn * load_g)) ** self.exponent)
        return ((1 - g) * a_c * ((1 - m_c) / s_c + m_c * kap_c)
                + g * a_g * ((1 - m_g) / s_g + m_g * kap_g))


def _feature_array(jobs: Sequence[Job]) -> np.ndarray:
    """Columns: solo_time, gpu_share, cpu_parallel, gpu_parallel, cpu_mem, gpu_mem."""
    return np.array([[j.solo_time, j.gpu_share, j.cpu_parallel, j.gpu_parallel, j.cpu_mem,
                      j.gpu_mem] for j in jobs], float).reshape(len(jobs), 6)


TABLE_COLUMNS = ("app", "corunners", "cores", "gpcs", "cpu_cap", "gpu_cap", "slowdown")

# Sample table shipped with the package (tabulated from AnalyticModel, not measured).
SAMPLE_TABLE = Path(__file__).parent / "data" / "pairing" / "jobmix1_analytic.csv"


class TableModel(SlowdownModel):
    """Measured slowdowns read from a CSV (the researcher's own measurements).

    One row per (program, co-runners, configuration) with the columns of
    :data:`TABLE_COLUMNS`::

        app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown
        lud,,32,8,175,175,1.21            # solo run under caps 175/175 W
        lud,srad,16/16,4/3,175,175,1.64   # lud beside srad, lud gets 16 cores, 4 GPCs
        lud,srad+bfs,8/12/12,3/2/2,...    # C = 3: co-runners joined by '+'

    ``cores`` and ``gpcs`` list the program's own share first, then the
    co-runners' in the order given. Every row is checked against ``space``
    (shares and cap grids; the cap sum only against ``P_max`` so one file may
    hold several ``P_total``). A configuration the search asks for that the
    file lacks is a clear error naming it (see :meth:`slowdown`).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.csv")
    >>> _ = open(p, "w").write("app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown\\n"
    ...                        "lud,,32,8,175,175,1.2\\n")
    >>> TableModel.from_csv(p).slowdown(Job("j", "lud", 3.0), (), Config((32,), (8,), 175, 175))
    1.2
    """

    def __init__(self, table: Mapping[tuple, float], source: str = "<table>") -> None:
        self.table = dict(table)
        self.source = source

    @staticmethod
    def key(app: str, others: Sequence[str], config: Config) -> tuple:
        """Canonical key: co-runners sorted with their shares (their order is arbitrary)."""
        rest = sorted(zip(others, config.cores[1:], config.gpcs[1:]))
        return (app, tuple(r[0] for r in rest), (config.cores[0],) + tuple(r[1] for r in rest),
                (config.gpcs[0],) + tuple(r[2] for r in rest), float(config.cpu_cap),
                float(config.gpu_cap))

    @classmethod
    def from_csv(cls, path: str | Path, space: ConfigSpace | None = None) -> "TableModel":
        """Read and validate a slowdown table (raises InstanceError naming file, line, field)."""
        path = str(path)
        space = space if space is not None else ConfigSpace()
        rows = _read_csv(path, required=TABLE_COLUMNS)
        table: dict[tuple, float] = {}
        for line, row in rows:
            app = row["app"]
            if not app:
                raise InstanceError(f"line {line}: empty program name", source=path, field="app")
            others = tuple(o.strip() for o in row["corunners"].split("+")) if row["corunners"] else ()
            if any(not o for o in others):
                raise InstanceError(f"line {line}: empty co-runner name in "
                                    f"{row['corunners']!r}", source=path, task=app,
                                    field="corunners")
            if len(others) > 2:
                raise InstanceError(f"line {line}: {len(others)} co-runners; at most 2 (C <= 3)",
                                    source=path, task=app, field="corunners")
            shares = {}
            for fld in ("cores", "gpcs"):
                shares[fld] = _shares(row[fld], path, line, app, fld)
                if len(shares[fld]) != 1 + len(others):
                    raise InstanceError(f"line {line}: {len(shares[fld])} share(s) for "
                                        f"{1 + len(others)} job(s)", source=path, task=app,
                                        field=fld)
            pc = _number(row["cpu_cap"], path, line, app, "cpu_cap")
            pg = _number(row["gpu_cap"], path, line, app, "gpu_cap")
            sd = _number(row["slowdown"], path, line, app, "slowdown")
            if sd <= 0:
                raise InstanceError(f"line {line}: must be > 0, got {sd:g}", source=path,
                                    task=app, field="slowdown")
            cfg = Config(shares["cores"], shares["gpcs"], pc, pg)
            core_ok, gpc_ok = space.shares(len(cfg.cores))
            if cfg.cores not in core_ok:
                raise InstanceError(f"line {line}: core split {row['cores']} not in the "
                                    f"configuration space", source=path, task=app, field="cores")
            if cfg.gpcs not in gpc_ok:
                raise InstanceError(f"line {line}: GPC split {row['gpcs']} not in the "
                                    f"configuration space", source=path, task=app, field="gpcs")
            if pc not in space.cpu_caps or pg not in space.gpu_caps or pc + pg > space.p_max:
                raise InstanceError(f"line {line}: caps {pc:g}/{pg:g} W not on the grids "
                                    f"{list(space.cpu_caps)} / {list(space.gpu_caps)} or above "
                                    f"P_max", source=path, task=app, field="cpu_cap")
            k = cls.key(app, others, cfg)
            if k in table and table[k] != sd:
                raise InstanceError(f"line {line}: conflicting duplicate ({table[k]:g} vs "
                                    f"{sd:g})", source=path, task=app, field="slowdown")
            table[k] = sd
        if not table:
            raise InstanceError("no measurements (header only)", source=path)
        return cls(table, source=path)

    def to_csv(self, path: str | Path) -> None:
        """Write the table back in the CSV format :meth:`from_csv` reads."""
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(TABLE_COLUMNS)
            for (app, others, cores, gpcs, pc, pg), sd in sorted(self.table.items()):
                w.writerow([app, "+".join(others), "/".join(map(str, cores)),
                            "/".join(map(str, gpcs)), f"{pc:g}", f"{pg:g}", repr(sd)])

    @classmethod
    def from_model(cls, model: SlowdownModel, apps: Mapping[str, Job], space: ConfigSpace,
                   sizes: Sequence[int] = (1, 2)) -> "TableModel":
        """Tabulate another model for the programs ``apps`` (e.g. to make a sample file)."""
        table = {}
        names = sorted(apps)
        for size in sizes:
            for combo in itertools.product(names, repeat=size):
                for cfg in space.corun_configs(size):
                    job, others = apps[combo[0]], tuple(apps[a] for a in combo[1:])
                    table[cls.key(combo[0], combo[1:], cfg)] = model.slowdown(job, others, cfg)
        return cls(table, source=f"<tabulated {type(model).__name__}>")

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        k = self.key(job.app, tuple(o.app for o in others), config)
        try:
            return self.table[k]
        except KeyError:
            with_ = " beside " + "+".join(o.app for o in others) if others else " solo"
            raise InstanceError(f"no measurement for {job.app}{with_} at {config}",
                                source=self.source, task=job.name, field="slowdown") from None

    def set_slowdowns(self, jobs, sets, configs):
        # Jobs of one program share measurements: look each (programs, config)
        # up once and scatter to the sets that have those programs.
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        apps = sorted({j.app for j in jobs})
        code = np.array([apps.index(j.app) for j in jobs], dtype=np.int64)
        combos, inverse = np.unique(code[sets], axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        rep = np.array([int(np.flatnonzero(inverse == u)[0]) for u in range(len(combos))])
        small = SlowdownModel.set_slowdowns(self, jobs, sets[rep], configs)
        return small[inverse]


# ---------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------


@dataclass
class PairingProblem:
    """The optimisation problem of Sec. 3.2: window ``jobs``, space (``P_total``), ``C``.

    Examples
    --------
    >>> p = PairingProblem(generate(5, seed=0))
    >>> p.W, p.concurrency, p.space.p_total
    (5, 2, 350)
    """

    jobs: tuple[Job, ...]
    space: ConfigSpace = field(default_factory=ConfigSpace)
    model: SlowdownModel = field(default_factory=AnalyticModel)
    concurrency: int = 2

    def __post_init__(self) -> None:
        self.jobs = tuple(self.jobs)
        if not self.jobs:
            raise InstanceError("the window holds no jobs", field="jobs")
        names = [j.name for j in self.jobs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InstanceError("duplicate job name", task=sorted(dup)[0], field="name")
        if self.concurrency not in (1, 2, 3):
            raise InstanceError(f"must be 1, 2 or 3, got {self.concurrency!r}",
                                field="concurrency")
        self.space.power_pairs()  # a budget no configuration satisfies fails here, early

    @property
    def W(self) -> int:
        return len(self.jobs)

    def job(self, name: str) -> Job:
        for j in self.jobs:
            if j.name == name:
                return j
        raise InstanceError("not in the window", task=name, field="name")

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        """The model's slowdown after checking ``config`` lies in the space."""
        self.space.validate(config, task=job.name)
        return float(self.model.slowdown(job, tuple(others), config))


@dataclass
class WeightedQueue:
    """The job-set partitioning problem with set times given directly.

    ``solo[i]`` is job ``i``'s time alone, ``pair[i, j]`` the time of the
    co-run ``{i, j}`` (``inf``: not allowed), ``triple`` (optional, for
    ``concurrency=3``) maps sorted index triples to co-run times. Used to test
    the matching and the exact models on random weights.

    Examples
    --------
    >>> q = WeightedQueue.random(4, seed=0)
    >>> q.W, q.pair.shape
    (4, (4, 4))
    """

    solo: np.ndarray
    pair: np.ndarray
    triple: dict[tuple[int, int, int], float] | None = None
    concurrency: int = 2
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.solo = np.asarray(self.solo, float)
        self.pair = np.asarray(self.pair, float)
        W = len(self.solo)
        if W < 1 or self.solo.ndim != 1:
            raise InstanceError("needs a 1-d array of at least one solo time", field="solo")
        if self.pair.shape != (W, W):
            raise InstanceError(f"shape {self.pair.shape}, expected {(W, W)}", field="pair")
        if not np.all(np.isfinite(self.solo)) or np.any(self.solo <= 0):
            raise InstanceError("solo times must be finite and > 0", field="solo")
        off = ~np.eye(W, dtype=bool)
        if np.any(np.isnan(self.pair[off])) or np.any(self.pair[off] <= 0):
            raise InstanceError("pair times must be > 0 (inf for forbidden pairs)", field="pair")
        if not np.array_equal(self.pair, self.pair.T):
            raise InstanceError("must be symmetric", field="pair")
        if self.concurrency not in (1, 2, 3):
            raise InstanceError(f"must be 1, 2 or 3, got {self.concurrency!r}",
                                field="concurrency")
        if self.concurrency == 3 and self.triple is None:
            raise InstanceError("concurrency 3 needs triple times", field="triple")
        if not self.names:
            self.names = tuple(f"j{i}" for i in range(W))
        if len(self.names) != W or len(set(self.names)) != W:
            raise InstanceError("needs W distinct names", field="names")

    @property
    def W(self) -> int:
        return len(self.solo)

    @classmethod
    def random(cls, W: int, seed: int = 0, concurrency: int = 2) -> "WeightedQueue":
        """Random solo times in [1, 10] and co-run times around the larger solo time.

        Co-run times are ``max(solo_i, solo_j) * U(0.9, 1.9)`` (triples
        ``* U(1.0, 2.6)``), so that pairing pays for some pairs and not others.
        """
        rng = np.random.default_rng(seed)
        solo = rng.uniform(1.0, 10.0, W).round(3)
        pair = np.maximum.outer(solo, solo) * rng.uniform(0.9, 1.9, (W, W))
        pair = np.triu(pair, 1).round(3)
        pair = pair + pair.T
        np.fill_diagonal(pair, np.inf)
        triple = None
        if concurrency == 3:
            triple = {t: round(float(max(solo[list(t)]) * rng.uniform(1.0, 2.6)), 3)
                      for t in itertools.combinations(range(W), 3)}
        return cls(solo, pair, triple, concurrency)


# ---------------------------------------------------------------------------
# Set times: the one cost model of the family
# ---------------------------------------------------------------------------


@dataclass
class Costs:
    """The time of every allowed job set of a window and the configuration achieving it.

    The family's one cost model, read by the heuristics and the exact models
    alike. :func:`costs_of` builds it: for a :class:`PairingProblem` by the
    exhaustive configuration search of the co-scheduling paper, Sec. 4.2
    (:func:`search`, :func:`triple_costs`), for a :class:`WeightedQueue`
    from the given times.

    Attributes
    ----------
    names
        Job names, in window order.
    solo
        ``SoloRunAppTime_j(P_total)`` (best caps), shape (W,).
    solo_config
        The best solo configuration of each job (``None`` for a queue).
    corun
        ``CoRunTime`` of the best configuration of every pair, (W, W),
        ``inf`` on the diagonal and for forbidden pairs.
    corun_k
        Index into ``pair_configs`` of that configuration, listed with the
        lower-index job first; -1 on the diagonal and for a queue.
    pair_configs
        The co-run configurations searched.
    triple, triple_config
        For ``C = 3``: sorted index triple -> best co-run time / configuration
        (listed in the triple's order).
    concurrency
        The largest job set these times cover.

    Examples
    --------
    >>> c = costs_of(WeightedQueue(np.array([2.0, 3.0]), np.array([[np.inf, 4.0], [4.0, np.inf]])))
    >>> c.set_time((1, 0)), c.plan([(0, 1)]).total_time, c.plan([(0,), (1,)]).total_time
    (4.0, 4.0, 5.0)
    """

    names: tuple[str, ...]
    solo: np.ndarray
    solo_config: list
    corun: np.ndarray
    corun_k: np.ndarray
    pair_configs: tuple
    triple: dict | None = None
    triple_config: dict | None = None
    concurrency: int = 2

    @property
    def W(self) -> int:
        return len(self.solo)

    def pair_config(self, i: int, j: int) -> Config | None:
        """Best co-run configuration of ``{i, j}`` listed as (i, j)."""
        k = int(self.corun_k[i, j])
        if k < 0:
            return None
        cfg = self.pair_configs[k]
        return cfg if i < j else cfg.permuted((1, 0))

    def set_time(self, members: Sequence[int]) -> float:
        """Time of the job set with these indices (``inf`` when not allowed)."""
        s = tuple(sorted(int(x) for x in members))
        if len(s) == 1:
            return float(self.solo[s[0]])
        if len(s) == 2:
            return float(self.corun[s])
        if len(s) == 3 and self.triple is not None:
            return float(self.triple.get(s, math.inf))
        return math.inf

    def plan(self, sets: Sequence[Sequence[int]], policy: str = "", split: bool = True) -> "Plan":
        """Turn index sets into a :class:`Plan` with configurations and times.

        ``split=True`` applies the co-scheduling paper's Algorithm 1, lines
        19-31: a co-run set slower than its jobs' solo runs becomes solo runs
        (which never costs time).
        """
        out = []
        for s in sets:
            s = tuple(sorted(int(x) for x in s))
            co = self.set_time(s)
            alone = float(sum(self.solo[x] for x in s))
            if len(s) == 1 or (split and co > alone):
                out.extend(JobSet((self.names[x],), self.solo_config[x], float(self.solo[x]))
                           for x in s)
                continue
            cfg = self.pair_config(*s) if len(s) == 2 else (
                self.triple_config.get(s) if self.triple_config else None)
            out.append(JobSet(tuple(self.names[x] for x in s), cfg, co))
        return Plan(out, policy=policy)


def costs_of(problem: PairingProblem | WeightedQueue, triples: bool | None = None) -> Costs:
    """The set times of a problem: :func:`search` (plus triples), or a queue's given times.

    ``triples`` (default: ``problem.concurrency >= 3``) adds the triples of
    :func:`triple_costs` for a :class:`PairingProblem`.

    Examples
    --------
    >>> c = costs_of(PairingProblem(job_mix(1)))
    >>> c.W, c.triple is None
    (4, True)
    """
    if isinstance(problem, WeightedQueue):
        W = problem.W
        return Costs(tuple(problem.names), problem.solo.copy(), [None] * W, problem.pair.copy(),
                     np.full((W, W), -1, dtype=np.int64), (),
                     dict(problem.triple) if problem.triple is not None else None, None,
                     problem.concurrency)
    c = search(problem)
    if triples if triples is not None else problem.concurrency >= 3:
        c.triple, c.triple_config = triple_costs(problem)
        c.concurrency = 3
    return c


def search(problem: PairingProblem) -> Costs:
    """Exhaustive configuration search for every pair and every solo run (Sec. 4.2).

    The co-scheduling paper's ``GetOptimalCoRunHWConfig`` /
    ``GetOptimalSoloRunHWConfig`` (Algorithm 1, lines 6-7): all ``W (W - 1)
    / 2`` pairs and all co-run configurations are evaluated in one call of
    the model's vectorised ``set_slowdowns``; ``CoRunTime`` is the max over
    the two jobs (Sec. 4.1.1) and the best configuration the argmin (first
    in ``space.corun_configs(2)`` order on ties, like a plain loop).

    Examples
    --------
    >>> c = search(PairingProblem(job_mix(1)))
    >>> c.corun.shape, bool(np.all(c.solo > 0))
    ((4, 4), True)
    """
    jobs, space, model = problem.jobs, problem.space, problem.model
    W = len(jobs)
    t = np.array([j.solo_time for j in jobs], float)
    solo_cfgs = space.solo_configs()
    solo_t = model.set_slowdowns(jobs, np.arange(W)[:, None], solo_cfgs)[:, 0, :] * t[:, None]
    solo_k = np.argmin(solo_t, axis=1)
    solo = solo_t[np.arange(W), solo_k]
    corun = np.full((W, W), np.inf)
    corun_k = np.full((W, W), -1, dtype=np.int64)
    pair_cfgs = space.corun_configs(2) if problem.concurrency >= 2 else ()
    if W >= 2 and pair_cfgs:
        i, j = np.triu_indices(W, 1)
        sets = np.stack([i, j], axis=1)
        for lo in range(0, len(sets), 20000):   # bounded memory for large W
            part = sets[lo:lo + 20000]
            S = model.set_slowdowns(jobs, part, pair_cfgs)            # (m, 2, K)
            times = (S * t[part][:, :, None]).max(axis=1)              # (m, K)
            k = np.argmin(times, axis=1)
            best = times[np.arange(len(part)), k]
            a, b = part[:, 0], part[:, 1]
            corun[a, b] = corun[b, a] = best
            corun_k[a, b] = corun_k[b, a] = k
    _check_finite(problem, solo, corun)
    return Costs(tuple(j.name for j in jobs), solo, [solo_cfgs[k] for k in solo_k], corun,
                 corun_k, pair_cfgs, concurrency=min(problem.concurrency, 2))


def _check_finite(problem: PairingProblem, solo: np.ndarray, corun: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(solo) | (solo <= 0))
    if len(bad):
        raise InstanceError("the slowdown model gave a non-finite or non-positive solo time",
                            task=problem.jobs[bad[0]].name, field="slowdown")
    off = ~np.eye(len(solo), dtype=bool)
    if np.any(np.isnan(corun[off])) or np.any(corun[off] <= 0):
        a, b = np.argwhere(off & (np.isnan(corun) | (corun <= 0)))[0]
        raise InstanceError(f"the slowdown model gave an invalid co-run time beside "
                            f"{problem.jobs[b].name}", task=problem.jobs[a].name,
                            field="slowdown")


def plain_search(problem: PairingProblem) -> Costs:
    """Reference for :func:`search`: plain Python loops over the scalar interface.

    Slow; for tests on small windows.

    Examples
    --------
    >>> p = PairingProblem(job_mix(1))
    >>> bool(np.allclose(plain_search(p).corun, search(p).corun))
    True
    """
    jobs, space = problem.jobs, problem.space
    W = len(jobs)
    solo, solo_cfg = np.empty(W), []
    for a, job in enumerate(jobs):
        best = None
        for cfg in space.solo_configs():
            tt = problem.slowdown(job, (), cfg) * job.solo_time
            if best is None or tt < best[0]:
                best = (tt, cfg)
        solo[a] = best[0]
        solo_cfg.append(best[1])
    pair_cfgs = space.corun_configs(2)
    corun = np.full((W, W), np.inf)
    corun_k = np.full((W, W), -1, dtype=np.int64)
    for a in range(W):
        for b in range(a + 1, W):
            best = None
            for k, cfg in enumerate(pair_cfgs):
                ta = problem.slowdown(jobs[a], (jobs[b],), cfg) * jobs[a].solo_time
                tb = problem.slowdown(jobs[b], (jobs[a],), cfg.permuted((1, 0))) * jobs[b].solo_time
                tt = max(ta, tb)
                if best is None or tt < best[0]:
                    best = (tt, k)
            corun[a, b] = corun[b, a] = best[0]
            corun_k[a, b] = corun_k[b, a] = best[1]
    return Costs(tuple(j.name for j in jobs), solo, solo_cfg, corun, corun_k, pair_cfgs)


def triple_costs(problem: PairingProblem, chunk: int = 256) -> tuple[dict, dict]:
    """Best co-run time and configuration of every triple (our C = 3 extension).

    Uses the space's triple splits (our extension of Table 4). Returns two
    dicts keyed by sorted index triples. Cost grows as ``W^3``; meant for the
    small windows the exact C = 3 models handle.

    Examples
    --------
    >>> times, cfgs = triple_costs(PairingProblem(job_mix(1)))
    >>> sorted(times) == sorted(cfgs), len(times)
    (True, 4)
    """
    jobs, model = problem.jobs, problem.model
    cfgs = problem.space.corun_configs(3)
    t = np.array([j.solo_time for j in jobs], float)
    trip = np.array(list(itertools.combinations(range(len(jobs)), 3)), dtype=np.int64)
    times, configs = {}, {}
    for lo in range(0, len(trip), chunk):
        part = trip[lo:lo + chunk]
        S = model.set_slowdowns(jobs, part, cfgs)
        tt = (S * t[part][:, :, None]).max(axis=1)
        k = np.argmin(tt, axis=1)
        for row, kk, val in zip(part, k, tt[np.arange(len(part)), k]):
            key = tuple(int(x) for x in row)
            times[key] = float(val)
            configs[key] = cfgs[kk]
    return times, configs


# ---------------------------------------------------------------------------
# Solutions and the independent checker
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class JobSet:
    """One job set ``JS_i`` with its configuration ``HC_i`` and its time.

    ``config`` is None for :class:`WeightedQueue` problems.
    """

    jobs: tuple[str, ...]
    config: Config | None
    time: float


@dataclass
class Plan:
    """A solution: the lists ``L_JS`` and ``L_HC`` of Sec. 3.2, run one after another.

    The JSON form (:meth:`to_json`, read back by :meth:`from_json`)::

        {"policy": "co-scheduling (Algorithm 1)",
         "sets": [{"jobs": ["j0", "j3"],
                   "config": {"cores": [16, 16], "gpcs": [3, 4], "cpu_cap": 175.0, "gpu_cap": 175.0},
                   "time": 12.5}],
         "info": {}}

    ``config`` is ``null`` for :class:`WeightedQueue` plans.

    Examples
    --------
    >>> plan = Plan([JobSet(("a",), None, 2.0), JobSet(("b", "c"), None, 3.5)])
    >>> plan.total_time
    5.5
    >>> Plan.from_json(plan.to_json()) == plan
    True
    """

    sets: list[JobSet]
    policy: str = ""
    info: dict = field(default_factory=dict)

    @property
    def total_time(self) -> float:
        return float(sum(s.time for s in self.sets))

    def pairs(self) -> list[tuple[str, ...]]:
        """The job sets as sorted name tuples, sorted (for comparisons)."""
        return sorted(tuple(sorted(s.jobs)) for s in self.sets)

    def to_json(self) -> str:
        """The plan as JSON text; :meth:`from_json` reads it back equal.

        Times and caps are written as floats (``repr``, so they read back
        exactly). Of ``info`` only the entries whose value is plain JSON data
        are written (dicts with string keys, lists, strings, integers, finite
        floats, booleans, ``None``); the others are dropped, since no JSON
        reader could rebuild them: the ``"costs"`` entry the heuristics add
        (a :class:`Costs`, which :func:`costs_of` rebuilds from the problem),
        numpy arrays and integers, tuples (they would read back as lists).

        Examples
        --------
        >>> plan = Plan([JobSet(("a",), Config((32,), (8,), 175, 175), 0.1 + 0.2)],
        ...             info={"costs": object(), "n": 1})
        >>> print(plan.to_json())  # doctest: +NORMALIZE_WHITESPACE
        {"policy": "", "sets": [{"jobs": ["a"], "config": {"cores": [32], "gpcs": [8], "cpu_cap": 175.0,
         "gpu_cap": 175.0}, "time": 0.30000000000000004}], "info": {"n": 1}}
        >>> back = Plan.from_json(plan.to_json())
        >>> back.sets == plan.sets, back.info
        (True, {'n': 1})
        """
        sets = []
        for s in self.sets:
            cfg = s.config
            sets.append({"jobs": list(s.jobs),
                         "config": None if cfg is None else {
                             "cores": [int(c) for c in cfg.cores], "gpcs": [int(g) for g in cfg.gpcs],
                             "cpu_cap": float(cfg.cpu_cap), "gpu_cap": float(cfg.gpu_cap)},
                         "time": float(s.time)})
        info = {k: v for k, v in self.info.items() if isinstance(k, str) and _plain_json(v)}
        return json.dumps({"policy": self.policy, "sets": sets, "info": info}, allow_nan=False)

    @classmethod
    def from_json(cls, text: str, *, source: str | None = None) -> "Plan":
        """Read a plan written by :meth:`to_json`, strictly.

        An unknown field, a share of ``4.7`` or ``true``, a time given as
        text, ``NaN`` or ``1e400``, a key written twice: each raises
        :class:`~instances.errors.InstanceError` naming ``source``, the set
        and the field, in one line. Whether the plan is feasible is
        :func:`check`'s business, not the reader's.

        Examples
        --------
        >>> Plan.from_json('{"sets": [{"jobs": ["a"], "config": null, "time": "2"}]}', source="p.json")
        Traceback (most recent call last):
        ...
        instances.errors.InstanceError: p.json: field sets[0].time: must be a number, got '2'
        """
        data = files.parse_json(text, source)
        if not isinstance(data, dict):
            raise InstanceError(f"a plan must be a JSON object, got {data!r}"[:200], source=source)
        files.no_unknown_fields(data, ("policy", "sets", "info"), source=source)
        if "sets" not in data:
            raise InstanceError("missing", source=source, field="sets")
        if not isinstance(data["sets"], list):
            raise InstanceError(f"must be a list, got {data['sets']!r}"[:200], source=source, field="sets")
        sets = []
        for k, raw in enumerate(data["sets"]):
            where = f"sets[{k}]"
            if not isinstance(raw, dict):
                raise InstanceError(f"must be an object, got {raw!r}"[:200], source=source, field=where)
            files.no_unknown_fields(raw, ("jobs", "config", "time"), source=source, where=where)
            for key in ("jobs", "time"):
                if key not in raw:
                    raise InstanceError("missing", source=source, field=f"{where}.{key}")
            if not isinstance(raw["jobs"], list):
                raise InstanceError(f"must be a list of job names, got {raw['jobs']!r}"[:200], source=source,
                                    field=f"{where}.jobs")
            jobs = tuple(files.name(n, source=source, field=f"{where}.jobs[{i}]")
                         for i, n in enumerate(raw["jobs"]))
            config = _read_config(raw.get("config"), f"{where}.config", source)
            sets.append(JobSet(jobs, config, files.real(raw["time"], source=source, field=f"{where}.time")))
        policy = files.text(data.get("policy", ""), source=source, field="policy")
        info = data.get("info", {})
        if not isinstance(info, dict):
            raise InstanceError(f"must be an object, got {info!r}"[:200], source=source, field="info")
        _finite_json(info, "info", source)
        return cls(sets, policy=policy, info=info)


def _plain_json(value) -> bool:
    """Whether ``value`` is JSON data that :func:`files.parse_json` reads back equal."""
    if value is None or isinstance(value, (bool, str)):
        return isinstance(value, bool) or value is None or files.bad_char(value) is None
    if isinstance(value, int):
        return len(str(abs(value))) <= files.MAX_INT_DIGITS
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and files.bad_char(k) is None and _plain_json(v) for k, v in value.items())
    return False


def _finite_json(value, where: str, source: str | None) -> None:
    """Refuse ``NaN`` and infinities anywhere inside a parsed JSON value."""
    if isinstance(value, float):
        files.real(value, source=source, field=where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite_json(v, f"{where}[{i}]", source)
    elif isinstance(value, dict):
        for k, v in value.items():
            _finite_json(v, f"{where}.{k}", source)


def _read_config(raw, where: str, source: str | None) -> Config | None:
    """A :class:`Config` from its JSON object (``null``: none), every field read strictly."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InstanceError(f"must be an object or null, got {raw!r}"[:200], source=source, field=where)
    keys = ("cores", "gpcs", "cpu_cap", "gpu_cap")
    files.no_unknown_fields(raw, keys, source=source, where=where)
    for key in keys:
        if key not in raw:
            raise InstanceError("missing", source=source, field=f"{where}.{key}")
    shares = {}
    for key in ("cores", "gpcs"):
        if not isinstance(raw[key], list):
            raise InstanceError(f"must be a list of integers, got {raw[key]!r}"[:200], source=source,
                                field=f"{where}.{key}")
        shares[key] = tuple(files.integer(x, lo=1, source=source, field=f"{where}.{key}[{i}]")
                            for i, x in enumerate(raw[key]))
    return Config(shares["cores"], shares["gpcs"],
                  files.real(raw["cpu_cap"], positive=True, source=source, field=f"{where}.cpu_cap"),
                  files.real(raw["gpu_cap"], positive=True, source=source, field=f"{where}.gpu_cap"))


def set_time(problem: PairingProblem, members: Sequence[Job], config: Config) -> float:
    """``CoRunTime(JS, HC)`` (Sec. 4.1.1) by a plain evaluation of the model.

    The max over the jobs of slowdown x solo time, each job viewed first.
    """
    times = []
    for p, job in enumerate(members):
        order = [p] + [q for q in range(len(members)) if q != p]
        others = [members[q] for q in order[1:]]
        times.append(problem.slowdown(job, others, config.permuted(order)) * job.solo_time)
    return max(times)


def solo_time_at(problem: PairingProblem, job: Job) -> tuple[float, Config]:
    """``SoloRunAppTime_j(P_total)`` and its best solo configuration (plain loop)."""
    best = None
    for cfg in problem.space.solo_configs():
        t = problem.slowdown(job, (), cfg) * job.solo_time
        if best is None or t < best[0]:
            best = (t, cfg)
    return best


def _given_time(queue: WeightedQueue, members: Sequence[int]) -> float:
    """A queue's own time for a job set (plain lookup, independent of :class:`Costs`)."""
    s = tuple(sorted(members))
    if len(s) == 1:
        return float(queue.solo[s[0]])
    if len(s) == 2:
        return float(queue.pair[s[0], s[1]])
    if len(s) == 3 and queue.triple is not None:
        return float(queue.triple.get(s, math.inf))
    return math.inf


def check(problem: PairingProblem | WeightedQueue, plan: Plan, tol: float = 1e-6,
          require_corun_pays: bool = True) -> list[str]:
    """Independent checker: the list of violations of ``plan`` ([] = feasible).

    Checks (Sec. 3.2): every job of the window in exactly one set, ``1 <=
    |JS| <= C``, each configuration inside the space (caps within
    ``P_total``), each set time equal to a fresh evaluation of the model
    (within ``tol`` relative, so that tiny and huge times are checked alike), and,
    when ``require_corun_pays``, ``CoRunTime <= SoloRunTime(JS, P_total)``
    for every co-run set. Plain loops over the scalar slowdown interface,
    sharing no code with the search.

    Examples
    --------
    >>> q = WeightedQueue.random(2, seed=0)
    >>> check(q, Plan([JobSet(("j0",), None, float(q.solo[0]))]))
    ['job j1 is in no set']
    """
    errs: list[str] = []
    names = list(problem.names) if isinstance(problem, WeightedQueue) else [j.name for j in problem.jobs]
    index = {n: i for i, n in enumerate(names)}
    seen: dict[str, int] = {}
    for k, s in enumerate(plan.sets):
        if not (1 <= len(s.jobs) <= problem.concurrency):
            errs.append(f"set {k} has {len(s.jobs)} jobs; allowed 1..{problem.concurrency}")
        for n in s.jobs:
            if n not in index:
                errs.append(f"set {k}: unknown job {n}")
            elif n in seen:
                errs.append(f"job {n} is in sets {seen[n]} and {k}")
            else:
                seen[n] = k
    for n in names:
        if n not in seen:
            errs.append(f"job {n} is in no set")
    if errs:
        return errs
    for k, s in enumerate(plan.sets):
        if not math.isfinite(s.time):
            errs.append(f"set {k}: time {s.time}")
            continue
        if isinstance(problem, WeightedQueue):
            true = _given_time(problem, [index[n] for n in s.jobs])
            solo_sum = sum(float(problem.solo[index[n]]) for n in s.jobs)
        else:
            members = [problem.jobs[index[n]] for n in s.jobs]
            if s.config is None:
                errs.append(f"set {k}: no hardware configuration")
                continue
            if len(s.config.cores) != len(members):
                errs.append(f"set {k}: configuration {s.config} does not fit {len(members)} jobs")
                continue
            try:
                true = set_time(problem, members, s.config)
            except InstanceError as e:
                errs.append(f"set {k}: {e}")
                continue
            solo_sum = sum(solo_time_at(problem, j)[0] for j in members)
        if not math.isfinite(true):
            errs.append(f"set {k} {s.jobs}: not an allowed set")
        elif abs(true - s.time) > tol * abs(true):
            errs.append(f"set {k} {s.jobs}: time {s.time:.9g} but the model gives {true:.9g}")
        if require_corun_pays and len(s.jobs) > 1 and true > solo_sum * (1 + tol):
            errs.append(f"set {k} {s.jobs}: co-run {true:.6g} s slower than running its jobs "
                        f"alone {solo_sum:.6g} s (Sec. 3.2 constraint 1)")
    return errs
