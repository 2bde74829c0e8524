"""The FAR paper's Tables 4-9 as experiments: the paper's figures and what each experiment runs on.

The paper's numbers (:data:`PAPER`, FAR paper, Tables 4-9), the task
configurations and sizes of each table, the seed of every cell
(:func:`cell_seed`), the Sec. 6.3 generator as the experiments use it
(:class:`Generator`), the readings of Tables 6-9 the paper leaves open
(:class:`Setting`, :data:`CANDIDATES`) and Table 4's FAR / OPT interval
column (:class:`FarOpt`). :mod:`benchmarks.paper_tables` runs the
experiments, :mod:`benchmarks.paper_format` prints them,
:mod:`benchmarks.paper` is the command line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from instances import mig
from instances.mig_generator import DEFAULT_P_SUP

__all__ = ["PAPER", "SCALINGS", "TIMES", "CONFIGS6", "N_T4", "N_T6", "APPROACHES", "MISO_SLICES",
           "MISO_SLICES_LABEL", "RELEASES", "MAX_GAP", "Generator", "Setting", "CANDIDATES", "FarOpt", "cell_seed",
           "mean"]

SCALINGS = ("PoorScaling", "MixedScaling", "GoodScaling")
TIMES = ("NarrowTimes", "WideTimes")
CONFIGS6 = tuple((s, t) for s in SCALINGS for t in TIMES)
N_T4 = (10, 15, 20, 25, 30, 35)
N_T6 = (10, 20, 30)
APPROACHES = ("MISO-opt", "FixPart(1,...,1)", "FixPartBest", "FixPart(7)")
#: Table 5's extra column: MISO-opt under the other repartitioning reading (no paper value).
MISO_SLICES = "MISO-opt/slices"
MISO_SLICES_LABEL = "MISO-opt, per-slice repartitioning"


def _rows(values: str, width: int) -> list[tuple[float, ...]]:
    nums = [float(x) for x in values.split()]
    return [tuple(nums[i:i + width]) for i in range(0, len(nums), width)]


#: The paper's numbers (FAR paper, Tables 4-9), keyed like our results.
PAPER: dict[int, dict] = {
    4: dict(zip(SCALINGS, _rows("1.23 1.08 1.04 1.03 1.02 1.02  1.20 1.08 1.04 1.03 1.02 1.02 "
                                "1.21 1.07 1.05 1.03 1.02 1.01", 6))),
    5: dict(zip(CONFIGS6, _rows("1.19 1.25 1.24 3.29  1.55 1.29 1.22 3.39  1.62 1.39 1.13 2.17 "
                                "2.03 1.47 1.09 2.16  1.83 1.61 1.00 1.31  2.14 1.78 1.01 1.28", 4))),
    6: dict(zip(CONFIGS6, _rows("0.31 0.00 0.02 13.15 0.00 3.25 11.45 0.00 4.26 "
                                "0.28 0.02 0.01 14.98 1.26 0.13 8.76 1.74 0.15 "
                                "0.76 0.02 0.06 13.87 0.00 3.23 9.04 0.00 4.31 "
                                "3.21 0.17 0.06 11.45 1.14 0.09 9.01 1.84 0.15 "
                                "0.78 0.01 0.01 13.44 0.00 3.01 7.54 0.00 3.64 "
                                "1.34 0.05 0.02 12.56 1.13 0.08 9.32 1.93 0.21", 9))),
    7: dict(zip(CONFIGS6, _rows("2.32 16.19 2.64 4.60 1.03 1.45  3.23 14.47 3.82 4.10 0.98 1.01 "
                                "5.43 16.22 4.53 4.82 0.86 1.01  4.87 14.30 2.41 4.26 0.44 0.46 "
                                "3.65 15.43 1.05 3.86 0.51 1.01  5.54 13.12 2.03 3.76 0.23 0.30", 6))),
    8: dict(zip(CONFIGS6, _rows("0.48 9.72 0.04 1.32 0.01 0.82  3.13 1.21 0.10 0.05 0.03 0.00 "
                                "0.30 9.52 0.02 1.12 0.00 0.62  3.51 1.12 0.13 0.06 0.05 0.01 "
                                "0.72 9.62 0.03 1.36 0.01 0.94  3.42 1.04 0.15 0.06 0.05 0.01", 6))),
    9: dict(zip(SCALINGS, _rows("84.42 94.12 95.21 95.21 92.32 93.21  89.56 94.00 93.01 95.01 90.21 92.03 "
                                "82.67 94.53 94.46 94.32 92.32 91.54", 6))),
}


def cell_seed(seed: int, *key: Any) -> int:
    """Seed of one repetition of one cell: independent of every other cell and of run order.

    Examples
    --------
    >>> cell_seed(0, 4, "PoorScaling", 10, 0) == cell_seed(0, 4, "PoorScaling", 10, 0)
    True
    """
    words = [int(seed)] + [sum(ord(c) * 131 ** i for i, c in enumerate(k)) % 2**32 if isinstance(k, str)
                           else int(k) for k in key]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0])


def mean(xs: Sequence[float]) -> float:
    """The mean of the numbers of ``xs`` that are neither None nor NaN; NaN when there are none.

    Examples
    --------
    >>> mean([1.0, None, float("nan"), 2.0]), mean([])
    (1.5, nan)
    """
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return math.fsum(xs) / len(xs) if xs else float("nan")



@dataclass(frozen=True)
class Generator:
    """The Sec. 6.3 generator as the experiments use it: the GPU and p_sup, which the presets leave open.

    With ``p_sup=0`` (no memory-bound tasks) FAR / area bound matches Table 4
    within 0.01 in 17 of 18 cells; the toolkit's default is Figure 11's 50 %.
    """

    gpu: str = "A100"
    p_sup: float = DEFAULT_P_SUP

    def batch(self, n: int, scaling: str, times: str, seed: int):
        return mig.generate(n, self.gpu, scaling, times, seed, p_sup=self.p_sup)

    def workload(self, sizes: list[int], releases: list[float], scaling: str, times: str, seed: int):
        return mig.generate_workload(sizes, releases, self.gpu, scaling, times, seed, p_sup=self.p_sup)


RELEASES = ("zero", "half", "end", "gap")
#: Largest ``gap`` factor ``--setting`` takes: batches released 100 times their ideal span apart.
MAX_GAP = 100.0


@dataclass(frozen=True)
class Setting:
    """A reading of Tables 6-9's experiments that the paper leaves open.

    Attributes
    ----------
    ties
        FAR's tie rules (``far.plan(..., ties=...)``): ``"ours"`` or
        ``"reference"`` (the FAR authors' C++ implementation).
    refined
        Table 6: ``"winner"`` refines the allocation phase 2 chose (Algorithm 2
        as the paper places it); ``"every"`` refines every allocation of the
        family and keeps the best refined makespan.
    release
        Tables 7-9, when each batch is released: ``"zero"`` (all at 0);
        ``"end"``: when the previous batches would end if each ran alone,
        back to back (the sum of their FAR makespans); ``"half"``: half of
        that; ``"gap"``: ``gap`` times the sum of the previous batches' area
        bounds (an arrival rate of ``1 / gap`` of the GPU's ideal throughput).
    gap
        The factor of ``release="gap"``.

    Examples
    --------
    >>> Setting.parse("ties=reference,release=gap,gap=2").label()
    'ties=reference, refined=winner, release=gap x2'
    >>> str(Setting())
    'ties=ours,refined=winner,release=zero,gap=1'
    """

    ties: str = "ours"
    refined: str = "winner"
    release: str = "zero"
    gap: float = 1.0

    def __post_init__(self) -> None:
        from instances import options

        options.choice(self.ties, ("ours", "reference"), "ties")
        options.choice(self.refined, ("winner", "every"), "refined")
        options.choice(self.release, RELEASES, "release")
        if not (isinstance(self.gap, (int, float)) and math.isfinite(self.gap) and self.gap > 0):
            from instances.errors import OptionError

            raise OptionError(f"gap must be a positive number, got {self.gap!r}")

    @classmethod
    def parse(cls, text: str) -> "Setting":
        """``"key=value,..."`` with keys ``ties``, ``refined``, ``release``, ``gap`` (a number in (0, 100]).

        A bad key or value is a ``ValueError`` (an ``OptionError`` for a value out of its choices).
        """
        import argparse

        from instances.console import number

        kw: dict[str, Any] = {}
        for part in filter(None, (x.strip() for x in text.split(","))):
            key, eq, value = part.partition("=")
            if not eq or key not in ("ties", "refined", "release", "gap"):
                raise ValueError(f"expected key=value with a key from ties, refined, release, gap; got {part!r}")
            try:
                kw[key] = number(0, MAX_GAP, above=True)(value) if key == "gap" else value
            except argparse.ArgumentTypeError as exc:
                raise ValueError(f"gap {exc}") from None
        return cls(**kw)

    def __str__(self) -> str:
        """The setting as ``--setting`` reads it: ``ties=ours,refined=winner,release=zero,gap=1``."""
        return f"ties={self.ties},refined={self.refined},release={self.release},gap={self.gap:g}"

    def label(self) -> str:
        rel = f"gap x{self.gap:g}" if self.release == "gap" else self.release
        return f"ties={self.ties}, refined={self.refined}, release={rel}"

    def releases(self, batches: Sequence[Any]) -> list[float]:
        """Release times of ``batches`` (problems, all generated at 0) under this setting."""
        from bounds import mig as mig_bounds
        from heuristics import far

        if self.release == "zero":
            return [0.0] * len(batches)
        out, acc = [], 0.0
        for b in batches:
            out.append(acc * (0.5 if self.release == "half" else 1.0))
            acc += (self.gap * mig_bounds.area_bound(b) if self.release == "gap"
                    else far.plan(b, ties=self.ties).makespan)
        return out

    def workload(self, w: Any) -> Any:
        """``w`` (all batches released at 0) with this setting's releases."""
        rel = self.releases(w.batches)
        return mig.Workload(w.gpu, [mig.Problem(w.gpu, b.tasks, r) for b, r in zip(w.batches, rel)])


#: The settings ``--candidates`` tries: per table, those that change it.
CANDIDATES: dict[str, list[Setting]] = {
    "6": [Setting(t, r) for t in ("ours", "reference") for r in ("winner", "every")],
    "78": [Setting(t, release=r) for t in ("ours", "reference") for r in ("zero", "half", "end")],
    "9": [Setting(t, release=r, gap=g) for t in ("ours", "reference")
          for r, g in (("zero", 1.0), ("end", 1.0), ("gap", 1.0), ("gap", 2.0))],
}


@dataclass(frozen=True)
class FarOpt:
    """Table 4's FAR / OPT interval column: which cells, how many instances, how long per solve.

    Parameters
    ----------
    reps
        Instances per cell solved exactly (the first ``reps`` of the cell's
        rho instances); ``0`` skips the column.
    time_limit
        Seconds per ``milp.solve_optimal(..., backend="cpsat",
        reconfiguration=True)`` call.
    ns
        The n of the cells (Table 4's by default); small n make a quick run.
    workers
        CP-SAT workers per solve (``None``: the solver's own).

    Examples
    --------
    >>> FarOpt(reps=1, time_limit=5, ns=(4,)).tasks(Generator(), 0)[0][:4]
    ('interval', Generator(gpu='A100', p_sup=0.5), 'PoorScaling', 4)
    """

    reps: int = 1
    time_limit: float = 60.0
    ns: tuple[int, ...] = N_T4
    workers: int | None = None

    def tasks(self, gen: Generator, seed: int) -> list[tuple]:
        """One task per solve: ``("interval", gen, scaling, n, r, seed, time_limit, workers)``."""
        return [("interval", gen, sc, n, r, seed, self.time_limit, self.workers)
                for sc in SCALINGS for n in self.ns for r in range(self.reps)]
