"""Hardware configurations of the pairing family: ``HC = {R^c, R^g, P^c, P^g}`` and the space of Table 4."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

from instances.errors import InstanceError


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
