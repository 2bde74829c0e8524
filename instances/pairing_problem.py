"""Problem types of the pairing family: :class:`PairingProblem` (Sec. 3.2) and :class:`WeightedQueue`."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from instances.errors import InstanceError
from instances.pairing_jobs import Job
from instances.pairing_slowdown import AnalyticModel, SlowdownModel
from instances.pairing_space import Config, ConfigSpace


@dataclass
class PairingProblem:
    """The optimisation problem of Sec. 3.2: window ``jobs``, space (``P_total``), ``C``.

    Examples
    --------
    >>> from instances.pairing_jobs import generate
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
        dup = {n for n, times in Counter(j.name for j in self.jobs).items() if times > 1}
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

    def __eq__(self, other: object) -> bool:
        # the arrays compare element by element (the generated __eq__ would ask numpy for one truth value)
        if not isinstance(other, WeightedQueue):
            return NotImplemented
        return (np.array_equal(self.solo, other.solo) and np.array_equal(self.pair, other.pair)
                and self.triple == other.triple and self.concurrency == other.concurrency
                and tuple(self.names) == tuple(other.names))

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
