"""Hardware of the CASE family: nodes with fixed MIG instances (CASE paper, Sec. 3, Table 1).

Configurations A, B, C are 1, 2 and 4 A30s, each split into 4 x 1g.6gb; D is
one A100 split into 2 x 2g.10gb + 3 x 1g.5gb. Slice memory and valid
placements come from :mod:`instances.gpus`. Also the family's error type
:class:`CaseError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from instances import gpus
from instances.errors import InstanceError


# A30 and A100 have 14 SMs per MIG compute slice (56 = 4 x 14, 98 of 108 usable
# = 7 x 14) and 64 resident warps per SM (compute capability 8.0).
WARPS_PER_SLICE = 14 * 64

EPS = 1e-6


class CaseError(InstanceError):
    """Invalid CASE problem data (a job, task, configuration or trace field)."""

    __module__ = "instances.case"  # reported under the family's name, where users catch it


@dataclass(frozen=True)
class Instance:
    """One MIG instance of a node, fixed for the whole batch.

    Attributes
    ----------
    index
        Position in the node's instance list (the order Algorithms 1-2 scan).
    gpu
        Index of the physical GPU in the node.
    model
        GPU model name ("A30", "A100").
    size
        Compute slices.
    memory_gb
        Memory of the instance (A30 1g: 6 GB, A100 1g: 5 GB, 2g: 10 GB).
    warp_capacity
        Resident warps the instance can hold (``size * WARPS_PER_SLICE``);
        used by the slowdown model only.
    """

    index: int
    gpu: int
    model: str
    size: int
    start: int
    memory_gb: float
    warp_capacity: int

    @property
    def profile(self) -> str:
        """NVIDIA profile name, e.g. ``1g.6gb``."""
        return f"{self.size}g.{self.memory_gb:g}gb"

    @property
    def name(self) -> str:
        return f"gpu{self.gpu}:{self.size}@{self.start}"


@dataclass(frozen=True)
class Config:
    """A node with fixed MIG instances (one row of Table 1).

    ``workers_case`` follows Sec. 3.1: 4 CASE workers per 1g instance and 8
    per 2g instance; Slurm gets one worker per instance.
    """

    name: str
    instances: tuple[Instance, ...]
    batch_size: int = 32

    @property
    def total_memory_gb(self) -> float:
        return float(sum(i.memory_gb for i in self.instances))

    @property
    def workers_slurm(self) -> int:
        return len(self.instances)

    @property
    def workers_case(self) -> int:
        return sum(4 * i.size for i in self.instances)

    @property
    def memory_classes(self) -> tuple[float, ...]:
        """Distinct instance memory sizes, increasing."""
        return tuple(sorted({i.memory_gb for i in self.instances}))

    def describe(self) -> str:
        counts: dict[str, int] = {}
        for i in self.instances:
            counts[i.profile] = counts.get(i.profile, 0) + 1
        gpus_used = sorted({(i.gpu, i.model) for i in self.instances})
        models = {m for _, m in gpus_used}
        return f"{len(gpus_used)}x{'/'.join(sorted(models))}: " + " + ".join(f"{n} x {p}" for p, n in counts.items())


def custom_config(model: str, layouts: Sequence[Sequence[tuple[int, int]]], *, name: str = "custom",
                  batch_size: int = 32) -> Config:
    """A node of identical GPU models, each with its own fixed instances.

    Parameters
    ----------
    model
        GPU model known to :func:`instances.gpus.get`.
    layouts
        One list of ``(size, start)`` placements per GPU; they must be
        pairwise slice-disjoint (part of a valid MIG partition).

    Examples
    --------
    >>> c = custom_config("A30", [[(1, 0), (1, 1)]], name="two")
    >>> [i.profile for i in c.instances], c.workers_case
    (['1g.6gb', '1g.6gb'], 8)
    """
    spec = gpus.get(model)
    out: list[Instance] = []
    for g, layout in enumerate(layouts):
        pls = [spec.placement(s, b) for s, b in layout]
        if not spec.is_valid_partition(pls):
            raise CaseError(f"placements {[p.name for p in pls]} share a slice", source=name,
                            field=f"layouts[{g}]")
        for p in pls:
            out.append(Instance(len(out), g, spec.name, p.size, p.start, float(spec.memory_gb[p.size]),
                                p.size * WARPS_PER_SLICE))
    if not out:
        raise CaseError("a node needs at least one instance", source=name, field="layouts")
    return Config(name, tuple(out), batch_size)


_A30_FULL = [(1, 0), (1, 1), (1, 2), (1, 3)]
CONFIGS: dict[str, Config] = {
    "A": custom_config("A30", [_A30_FULL], name="A", batch_size=32),
    "B": custom_config("A30", [_A30_FULL] * 2, name="B", batch_size=64),
    "C": custom_config("A30", [_A30_FULL] * 4, name="C", batch_size=128),
    "D": custom_config("A100", [[(2, 0), (2, 2), (1, 4), (1, 5), (1, 6)]], name="D", batch_size=32),
}
"""Table 1. Batch sizes 32, 64, 128, 32."""

BATCH_SIZE = {k: c.batch_size for k, c in CONFIGS.items()}


def config(name: str | Config) -> Config:
    """The configuration ``"A"``..``"D"`` of Table 1 (a :class:`Config` passes through)."""
    if isinstance(name, Config):
        return name
    try:
        return CONFIGS[str(name).upper()]
    except KeyError:
        raise CaseError(f"unknown configuration {name!r}; known: {', '.join(CONFIGS)}", field="config") from None
