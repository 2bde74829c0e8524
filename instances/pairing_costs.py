"""The pairing family's one cost model: the time and best configuration of every job set.

:class:`Costs`, built by :func:`costs_of` through the exhaustive configuration
search of the co-scheduling paper, Sec. 4.2 (:func:`search`, and
:func:`triple_costs` for our C = 3 extension).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from instances.errors import InstanceError
from instances.pairing_plan import JobSet, Plan
from instances.pairing_problem import PairingProblem, WeightedQueue
from instances.pairing_space import Config
from instances.options import typed


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


@typed
def costs_of(problem: PairingProblem | WeightedQueue, triples: bool | None = None) -> Costs:
    """The set times of a problem: :func:`search` (plus triples), or a queue's given times.

    ``triples`` (default: ``problem.concurrency >= 3``) adds the triples of
    :func:`triple_costs` for a :class:`PairingProblem`.

    Examples
    --------
    >>> from instances.pairing_jobs import job_mix
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


@typed
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
    >>> from instances.pairing_jobs import job_mix
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


@typed
def triple_costs(problem: PairingProblem, chunk: int = 256) -> tuple[dict, dict]:
    """Best co-run time and configuration of every triple (our C = 3 extension).

    Uses the space's triple splits (our extension of Table 4). Returns two
    dicts keyed by sorted index triples. Cost grows as ``W^3``; meant for the
    small windows the exact C = 3 models handle.

    Examples
    --------
    >>> from instances.pairing_jobs import job_mix
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
