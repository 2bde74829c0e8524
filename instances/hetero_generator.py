"""The seeded instance generator of the heterogeneous-GPU family (:func:`generate`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from instances import console
from instances import options as opt
from instances.errors import OptionError
from instances.hetero_problem import GPU, HeteroProblem, Task

#: Most tasks (``n + unfit``) and GPUs of one generated instance: the command lines' maxima
#: (``instances.console.MAX_TASKS``; ``benchmarks.hetero``'s 64 GPUs).
MAX_TASKS = console.MAX_TASKS
MAX_GPUS = 64
#: Range of ``median_workload`` and ``sigma``: workloads, arrivals and deadlines stay integers far below
#: the loader's limit (``hetero_problem.MAX_TOTAL``).
MAX_MEDIAN_WORKLOAD, MAX_SIGMA = 1e9, 5.0


#: GPU models of the generator: (relative speed, memory GB). Speeds are rough
#: relative training throughputs (T4 = 1) from public benchmarks, rounded to
#: values whose reciprocals are short decimals (1, 2, 2.5, 5, 10), so that
#: ``p_ij = L_i / v_j`` with integer ``L_i`` is exact at resolution 0.1 and the
#: CP-SAT model needs no rounding.
GPU_MODELS: dict[str, tuple[float, float]] = {
    "T4": (1.0, 16.0),
    "L4": (2.0, 24.0),
    "V100": (2.5, 32.0),
    "A100-40GB": (5.0, 40.0),
    "A100-80GB": (5.0, 80.0),
    "H100": (10.0, 80.0),
}

#: Memory demands (GB) of the generator and their probabilities: most jobs are
#: small (inference, fine-tuning), a few need a large GPU.
MEMORY_LEVELS = (4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 40.0, 64.0, 80.0)
MEMORY_PROBS = (0.20, 0.20, 0.15, 0.15, 0.10, 0.08, 0.06, 0.04, 0.02)


def generate(n: int, gpus: Sequence[str] | int = ("T4", "V100", "A100-80GB"), *,
             tightness: float = 0.6, rdd: float = 0.6, load: float = 0.9,
             median_workload: float = 30.0, sigma: float = 0.8, seed: int = 0,
             unfit: int = 0) -> HeteroProblem:
    """Seeded random instance: a cluster of mixed GPU models and ``n`` tasks.

    Every draw uses ``numpy.random.default_rng(seed)`` in a fixed order, so a
    seed gives the same instance on any machine. Distributions:

    - cluster: ``gpus`` lists model names of :data:`GPU_MODELS`; an integer
      ``k`` draws ``k`` models uniformly from the table.
    - workload ``L_i`` (T4-seconds): lognormal with the given median and
      ``sigma``, rounded to an integer >= 1 (heavy-tailed job sizes).
    - memory ``m_i``: from :data:`MEMORY_LEVELS` with :data:`MEMORY_PROBS`,
      restricted to levels that fit the largest GPU (renormalised). ``unfit``
      extra tasks get twice the largest GPU memory (they fit nowhere).
    - arrivals: a Poisson process; inter-arrival times exponential with mean
      ``mean(L) / (load * sum_j v_j)`` (offered load ``load`` of the cluster),
      first arrival 0, rounded down to integers.
    - deadlines: the OR-Library scheme (Potts & Van Wassenhove) adapted to
      arrivals and a cluster: ``d_i = max(a_i + pmin_i, U[P(1-TF-RDD/2),
      P(1-TF+RDD/2)])`` rounded to an integer, where ``pmin_i`` is the
      fastest eligible run time (so no task is late by construction),
      ``P = sum_i L_i / (load sum_j v_j)`` the expected span of the arrivals
      (the fluid makespan stretched by the load), ``TF = tightness``
      (tardiness factor, higher = tighter) and ``RDD = rdd`` (relative range
      of due dates).
    - weights ``w_i``: integers uniform in [1, 10], as in the OR-Library.

    Examples
    --------
    >>> pb = generate(8, gpus=("T4", "H100"), seed=3)
    >>> pb == generate(8, gpus=("T4", "H100"), seed=3)
    True
    """
    n = opt.integer(n, "n", lo=0, hi=MAX_TASKS)
    unfit = opt.integer(unfit, "unfit", lo=0, hi=MAX_TASKS - n)
    tightness = opt.number(tightness, "tightness", lo=0.0, hi=1.0)
    rdd = opt.number(rdd, "rdd", lo=0.0, hi=1.0, above=True)
    load = opt.number(load, "load", lo=0.01, hi=100.0)
    median_workload = opt.number(median_workload, "median_workload", lo=1.0, hi=MAX_MEDIAN_WORKLOAD)
    sigma = opt.number(sigma, "sigma", lo=0.0, hi=MAX_SIGMA)
    seed = opt.seed(seed)
    rng = np.random.default_rng(seed)
    names = list(GPU_MODELS)
    if isinstance(gpus, (int, np.integer)) and not isinstance(gpus, bool):
        models = [names[k] for k in rng.integers(0, len(names), size=opt.integer(gpus, "gpus", lo=1, hi=MAX_GPUS))]
    else:
        if isinstance(gpus, (str, bytes)) or not isinstance(gpus, Sequence):
            raise OptionError(f"must be a count or a list of GPU models, got {gpus!r}", field="gpus")
        models = list(gpus)
        if not 1 <= len(models) <= MAX_GPUS:
            raise OptionError(f"need 1 to {MAX_GPUS} GPUs, got {len(models)}", field="gpus")
        for mname in models:
            if not isinstance(mname, str) or mname not in GPU_MODELS:
                raise OptionError(f"unknown GPU model {mname!r}; known: {', '.join(names)}", field="gpus")
    cluster = tuple(GPU(f"g{j}-{mname}", GPU_MODELS[mname][0], GPU_MODELS[mname][1], mname)
                    for j, mname in enumerate(models))
    speeds = np.array([g.speed for g in cluster])
    caps = np.array([g.memory for g in cluster])
    total = int(n) + int(unfit)
    L = np.maximum(1, np.rint(median_workload * np.exp(sigma * rng.standard_normal(total))))
    levels = np.array(MEMORY_LEVELS)
    probs = np.array(MEMORY_PROBS) * (levels <= caps.max())
    mem = rng.choice(levels, size=total, p=probs / probs.sum())
    mem[n:] = 2 * caps.max()
    gaps = rng.exponential(L.mean() / (load * speeds.sum()) if total else 1.0, size=total)
    if total:
        gaps[0] = 0.0
    arrival = np.floor(np.cumsum(gaps))
    P = L.sum() / (load * speeds.sum())
    u = rng.uniform(P * (1 - tightness - rdd / 2), P * (1 - tightness + rdd / 2), size=total)
    pmin = np.array([min((l / v for v, c in zip(speeds, caps) if mm <= c), default=l / speeds.max())
                     for l, mm in zip(L, mem)])
    deadline = np.ceil(np.maximum(arrival + pmin, np.rint(u)))
    weight = rng.integers(1, 11, size=total)
    tasks = tuple(Task(f"t{i}", float(L[i]), float(mem[i]), float(deadline[i]), float(weight[i]),
                       float(arrival[i])) for i in range(total))
    label = f"hetero-n{n}-{'+'.join(models)}-TF{tightness}-RDD{rdd}-load{load}-seed{seed}"
    return HeteroProblem(tasks, cluster, name=label)
