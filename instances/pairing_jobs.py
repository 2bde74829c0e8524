"""Jobs of the co-scheduling pairing family: profiles, the Table 6 job mixes, the generator, CSV queues.

A job is a program run with its profile (Sec. 3.3 of the co-scheduling
paper: collected on its first run): its solo time at ``P_max`` and the
features :class:`~instances.pairing_slowdown.AnalyticModel` reads.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from instances import files
from instances import options as opt
from instances.errors import InstanceError, OptionError
from instances.pairing_csv import parse_number, read_rows


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


#: Largest factor of ``size_range``: solo times stay far below the loader's limits.
MAX_SIZE_FACTOR = 1e6
#: Most jobs of a window, generated or read from a file (``pairing_json``): the configuration search
#: evaluates every pair (``W^2 / 2`` of them), so this bounds its work and memory.
MAX_JOBS = 10_000


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
    W = opt.integer(W, "W", lo=1, hi=MAX_JOBS)
    apps = tuple(apps) if apps is not None else tuple(APPS)
    if not apps:
        raise OptionError("needs at least one program", field="apps")
    for a in apps:
        if not isinstance(a, str) or a not in APPS:
            raise OptionError(f"unknown program {a!r}; known: {', '.join(APPS)}", field="apps")
    if not isinstance(size_range, (tuple, list)) or len(size_range) != 2:
        raise OptionError(f"needs (low, high), got {size_range!r}", field="size_range")
    lo = opt.number(size_range[0], "size_range", lo=0.0, hi=MAX_SIZE_FACTOR, above=True)
    hi = opt.number(size_range[1], "size_range", lo=lo, hi=MAX_SIZE_FACTOR)
    jitter = opt.number(jitter, "jitter", lo=0.0, hi=1.0) + 0.0   # -0.0 -> 0.0: numpy refuses uniform(0.0, -0.0)
    rng = np.random.default_rng(opt.seed(seed))
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
    rows = read_rows(path, required=("name", "app", "solo_time"), optional=FEATURES)
    jobs, seen = [], set()
    for line, row in rows:
        name = row["name"]
        for c in ("name", "app", "solo_time"):
            if not row[c]:
                raise InstanceError(f"line {line}: empty {c}", source=path, task=name or None, field=c)
        try:
            kw = {c: parse_number(row[c], path, line, name, c) for c in ("solo_time",) + FEATURES
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
