"""``python -m benchmarks.paper``: the FAR paper's Tables 4-9 reproduced, our figure beside the paper's.

Every cell is the mean over ``--reps`` instances of the paper's generator
(Sec. 6.3; A100; the paper used 1000, ``--reps 1000`` does the same), printed
as ``ours (paper, ours - paper)``, or as the README's ``ours (paper)`` with
``--markdown``. Definitions (FAR paper):

* Table 4 (Sec. 6.4): ``rho = omega_FAR / baseline`` with ``baseline = sum_i
  min_s s t_i(s) / #slices`` (``bounds.mig.area_bound``); WideTimes; n = 10..35.
  Added, the column the paper could not have: ``--opt-reps`` instances of
  ``--opt-n`` tasks (default 10) solved exactly (``milp.solve_optimal`` with
  reconfiguration), with every method of ``heuristics.mig.METHODS``, the
  optimum and the bounds as ratios to proven optima (the unproven instances
  only bracket them). And for every n of the table, FAR / OPT as a proven
  interval: ``--far-opt-reps`` instances of each cell solved by
  ``milp.solve_optimal(p, backend="cpsat", reconfiguration=True,
  time_limit=--far-opt-time-limit)``; ``[mean FAR / best found, mean FAR /
  proven bound]`` brackets the mean FAR / OPT (equal ends when every instance
  is proven), with the number of instances proven.
* Table 5 (Sec. 6.5): ``sigma_A = omega_A / omega_FAR`` for every method of
  ``heuristics.mig.METHODS`` but FAR (the paper: MISO-opt, FixPart(1,...,1),
  FixPartBest, FixPart(7)); n = 15. A method added to the registry gets its
  column; one that raises is reported as failed.
* Table 6 (Sec. 6.6): ``p_ref = (omega_no-ref / omega_ref - 1) * 100`` and the
  mean number of task moves and swaps of the refinement; n = 10, 20, 30.
* Table 7 (Sec. 6.7.1): ``p_rev = (omega_trivial / omega_rev - 1) * 100`` and
  ``p_move/swap = (omega_trivial / omega_move/swap - 1) * 100`` for the
  concatenation of two FAR batches of n tasks.
* Table 8: mean moves and swaps of that move/swap concatenation.
* Table 9 (Sec. 6.7.2): ``p_multi-batch = (omega_multi / baseline_multi - 1) *
  100`` for ``--reps + 1`` batches (the paper: 1001) concatenated online by FAR,
  ``baseline_multi`` the area bound of all their tasks.

Readings we had to choose are printed under each table (e.g. the release times
of the multi-batch experiments, which the paper does not give). Tables 6-9 can
be run under other readings (:class:`Setting`, ``--setting``): FAR's tie rules
(ours or the FAR authors' C++ ones), which allocations are refined (the phase-2
winner, or every allocation of the family keeping the best refined one), and
the release times of the concatenated batches; ``--candidates`` runs every
candidate setting and prints, per table, how far each is from the paper. Every cell is
seeded on its own and the executor (``--executor local|dask``, ``--jobs``)
returns results in a fixed order, so every executor prints the same figures.

Examples
--------
::

    python -m benchmarks.paper                  # all tables, --reps 20 (FAR / OPT: 18 solves of <= 60 s)
    python -m benchmarks.paper --far-opt-reps 0 # the same without the FAR / OPT interval: a few seconds
    python -m benchmarks.paper --tables 4 5 --reps 1000 --markdown
    python -m benchmarks.paper --tables 4 --opt-reps 10 --executor dask --scheduler tcp://host:8786
    python -m benchmarks.paper --tables 6 7 8 9 --setting ties=reference,refined=every,release=end
    python -m benchmarks.paper --tables 6 7 8 9 --candidates --reps 50 --markdown
    python -m benchmarks.paper --tables 4 --far-opt-reps 5 --far-opt-time-limit 60 --markdown
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from benchmarks import common
from benchmarks import executor as ex
from benchmarks.executor import Executor
from instances import mig
from instances.mig_generator import DEFAULT_P_SUP

__all__ = ["PAPER", "TABLES", "Generator", "Setting", "CANDIDATES", "FarOpt", "cell_seed", "table4", "table5",
           "table6", "table78", "table9", "main"]

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


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return math.fsum(xs) / len(xs) if xs else float("nan")


def _stat(stats: dict, *names: str) -> float:
    for n in names:
        if n in stats:
            return float(stats[n])
    return float("nan")


def _Progress(total: int, quiet: bool, desc: str):
    """A progress bar of ``total`` repetitions (:func:`benchmarks.common.progress`)."""
    return common.progress(total=total, quiet=quiet, desc=desc, unit="rep")


# ---------------------------------------------------------------------------
# the experiments


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
        """``"key=value,..."`` with keys ``ties``, ``refined``, ``release``, ``gap``."""
        kw: dict[str, Any] = {}
        for part in filter(None, (x.strip() for x in text.split(","))):
            key, eq, value = part.partition("=")
            if not eq or key not in ("ties", "refined", "release", "gap"):
                raise ValueError(f"expected key=value with a key from ties, refined, release, gap; got {part!r}")
            kw[key] = float(value) if key == "gap" else value
        return cls(**kw)

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


# Every table is a list of independent tasks (a cell, one exact solve, or a whole table for the
# tables computed in one piece), run by an Executor, which returns results in task order: the
# figures are the same for every executor and every --jobs.

def _far():
    from heuristics.mig import METHODS

    return METHODS["FAR"]


def _rho_cell(gen: Generator, sc: str, n: int, reps: int, seed: int) -> list[float]:
    from bounds import mig as mig_bounds

    far = _far()
    out = []
    for r in range(reps):
        p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
        out.append(far(p).makespan / mig_bounds.area_bound(p))
    return out


def _opt_instance(gen: Generator, sc: str, n: int, r: int, seed: int, methods: tuple[str, ...] | None,
                  backend: str, time_limit: float, workers: int | None) -> dict:
    from benchmarks.compare import evaluate

    p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
    rows, _ = evaluate(p, methods, exact=True, backend=backend, time_limit=time_limit, workers=workers,
                       timing_repeats=1)
    return {"index": r, "rows": [{"instance": r, **row} for row in rows]}


def _interval_instance(gen: Generator, sc: str, n: int, r: int, seed: int, time_limit: float,
                       workers: int | None) -> dict:
    """FAR's makespan and the exact solve's best found and proven bound on one Table 4 instance."""
    from milp import solve_optimal

    p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
    far = _far()(p).makespan
    try:
        res = solve_optimal(p, backend="cpsat", reconfiguration=True, time_limit=time_limit, workers=workers)
    except Exception as exc:  # counted and shown under the table, never dropped
        return {"far": far, "error": " ".join(f"{type(exc).__name__}: {exc}".split())[:200]}
    return {"far": far, "best": res.objective, "bound": res.lower_bound, "proven": res.proven,
            "runtime": res.runtime}


def _interval_cell(runs: list[dict]) -> dict:
    """``low``/``high``: mean FAR / best found and mean FAR / proven bound over the solved instances.

    Per instance FAR / best <= FAR / OPT <= FAR / bound, so the means bracket
    the mean FAR / OPT; a run without a positive bound leaves ``high`` open.
    """
    ok = [r for r in runs if "error" not in r and r.get("best")]
    highs = [r["far"] / r["bound"] if r.get("bound") and r["bound"] > 0 else math.inf for r in ok]
    return {"low": _mean([r["far"] / r["best"] for r in ok]) if ok else float("nan"),
            "high": (math.fsum(highs) / len(highs)) if highs else float("nan"),
            "proven": sum(bool(r["proven"]) for r in ok), "count": len(runs), "failed": len(runs) - len(ok),
            "error": next((r["error"] for r in runs if "error" in r), None)}


def _sigma_cell(gen: Generator, sc: str, tm: str, reps: int, seed: int, methods: tuple[str, ...]) -> dict:
    """``{column: [sigma or an error string per rep]}`` for one Table 5 configuration."""
    from heuristics import far_baselines as fb
    from heuristics.mig import METHODS

    far = _far()
    out: dict[str, list] = {c: [] for c in methods + (MISO_SLICES,)}
    for r in range(reps):
        p = gen.batch(15, sc, tm, cell_seed(seed, 5, sc, tm, r))
        w = far(p).makespan
        for c in out:
            fn = (lambda q: fb.miso_opt(q, repartition="slices")) if c == MISO_SLICES else METHODS.get(c)
            try:
                if fn is None:
                    raise KeyError(f"{c!r} is not in heuristics.mig.METHODS")
                out[c].append(fn(p).makespan / w)
            except Exception as exc:  # reported under the table, never dropped
                out[c].append(" ".join(f"{type(exc).__name__}: {exc}".split())[:200])
    return out


def _whole_table(name: str, kwargs: dict):
    # the tables computed in one piece; their own progress bars would print inside a worker
    return {"6": table6, "78": table78, "9": table9}[name](**kwargs, quiet=True)


def _run_task(task: tuple):
    kind, *args = task
    return {"rho": _rho_cell, "opt": _opt_instance, "interval": _interval_instance, "sigma": _sigma_cell,
            "whole": _whole_table}[kind](*args)


def _tasks4(reps: int, seed: int, opt_reps: int, time_limit: float, backend: str, gen: Generator,
            methods: tuple[str, ...] | None, opt_n: int, workers: int | None,
            far_opt: FarOpt | None = None) -> list[tuple]:
    tasks: list[tuple] = [("rho", gen, sc, n, reps, seed) for sc in SCALINGS for n in N_T4]
    tasks += [("opt", gen, sc, opt_n, r, seed, methods, backend, time_limit, workers)
              for sc in SCALINGS for r in range(opt_reps)]
    tasks += far_opt.tasks(gen, seed) if far_opt is not None else []
    return tasks


def _assemble4(tasks: list[tuple], results: list) -> dict:
    from benchmarks.compare import summarise

    out: dict = {sc: [] for sc in SCALINGS}
    runs: dict[str, list] = {}
    solves: dict[tuple[str, int], list] = {}
    for task, res in zip(tasks, results):
        if task[0] == "rho":
            out[task[2]].append(_mean(res))
        elif task[0] == "interval":
            solves.setdefault((task[2], task[3]), []).append(res)
        else:
            runs.setdefault(task[2], []).append(res)
    out["opt"] = {sc: summarise(rs) for sc, rs in runs.items()}
    out["interval"] = {key: _interval_cell(rs) for key, rs in solves.items()}
    return out


def table4(reps: int, seed: int = 0, opt_reps: int = 0, time_limit: float = 20.0, backend: str = "cpsat",
           quiet: bool = True, gen: Generator = Generator(), executor: Executor | None = None,
           methods: Sequence[str] | None = None, opt_n: int = 10, workers: int | None = None,
           far_opt: FarOpt | None = None) -> dict:
    """Table 4 and the exact columns the paper could not have.

    Returns
    -------
    dict
        ``{scaling: [mean rho for n in N_T4]}`` and ``"opt"``: ``{scaling:
        benchmarks.compare.summarise rows}`` for ``opt_reps`` instances of
        ``opt_n`` tasks solved exactly: every method of
        :data:`heuristics.mig.METHODS` (or ``methods``), the optimum and the
        bounds, as ratios to proven optima (brackets for the unproven ones);
        ``"interval"``: ``{(scaling, n): {"low", "high", "proven", "count",
        "failed", "error"}}``, FAR / OPT bracketed by the CP-SAT solves of
        ``far_opt`` (none when it is ``None``).

    Examples
    --------
    >>> t = table4(1, far_opt=FarOpt(reps=1, time_limit=20, ns=(3,), workers=1))
    >>> cell = t["interval"][("PoorScaling", 3)]
    >>> cell["proven"], cell["low"] >= 1, abs(cell["high"] - cell["low"]) < 1e-5  # proven: the ends meet
    (1, True, True)
    """
    methods = tuple(methods) if methods is not None else _registry()
    tasks = _tasks4(reps, seed, opt_reps, time_limit, backend, gen, methods, opt_n, workers, far_opt)
    results = (executor or Executor()).map(_run_task, tasks, quiet=quiet, desc="Table 4", unit="task")
    return _assemble4(tasks, results)


def _tasks5(reps: int, seed: int, gen: Generator, methods: tuple[str, ...]) -> list[tuple]:
    return [("sigma", gen, sc, tm, reps, seed, _columns5(methods)) for sc, tm in CONFIGS6]


def _assemble5(tasks: list[tuple], results: list) -> dict:
    out: dict = {}
    for task, res in zip(tasks, results):
        out[(task[2], task[3])] = {
            c: {"mean": _mean([v for v in vals if not isinstance(v, str)]),
                "failed": sum(isinstance(v, str) for v in vals),
                "error": next((v for v in vals if isinstance(v, str)), None), "reps": len(vals)}
            for c, vals in res.items()}
    return out


def _registry() -> tuple[str, ...]:
    from heuristics.mig import METHODS

    return tuple(METHODS)


def _columns5(methods: tuple[str, ...]) -> tuple[str, ...]:
    """Table 5's columns: every chosen registry method but FAR, the reference of sigma."""
    return tuple(m for m in methods if m != "FAR")


def table5(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           executor: Executor | None = None, methods: Sequence[str] | None = None) -> dict:
    """``{(scaling, times): {column: {"mean", "failed", "error", "reps"}}}`` of sigma = omega_A / omega_FAR, n = 15.

    The columns are every method of :data:`heuristics.mig.METHODS` (or
    ``methods``) but FAR, then MISO-opt under the other repartitioning reading
    (``repartition="slices"``, no paper column). A method that raises is
    counted in ``failed`` with its first ``error``.
    """
    methods = tuple(methods) if methods is not None else _registry()
    tasks = _tasks5(reps, seed, gen, methods)
    return _assemble5(tasks, (executor or Executor()).map(_run_task, tasks, quiet=quiet, desc="Table 5",
                                                          unit="cell"))


def _refined_pair(p: Any, setting: Setting) -> tuple[float, Any]:
    """(makespan without refinement, the refined plan) under ``setting``."""
    from heuristics import far

    noref = far.plan(p, refine=False, ties=setting.ties).makespan
    if setting.refined == "winner":
        return noref, far.plan(p, refine=True, ties=setting.ties)
    plans = [far.schedule_allocation(p, a, refine=True, ties=setting.ties) for a in far.family(p, ties=setting.ties)]
    return noref, min(plans, key=lambda fp: fp.makespan)


def table6(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           setting: Setting = Setting()) -> dict:
    """``{(scaling, times): [p_ref, moves, swaps] * len(N_T6)}``."""
    out = {}
    with _Progress(len(CONFIGS6) * len(N_T6) * reps, quiet, "Table 6") as bar:
        for sc, tm in CONFIGS6:
            row = []
            for n in N_T6:
                pref, moves, swaps = [], [], []
                for r in range(reps):
                    p = gen.batch(n, sc, tm, cell_seed(seed, 6, sc, tm, n, r))
                    noref, plan = _refined_pair(p, setting)
                    pref.append((noref / plan.makespan - 1) * 100)
                    moves.append(_stat(plan.stats, "moves"))
                    swaps.append(_stat(plan.stats, "swaps"))
                    bar.update(1)
                row += [_mean(pref), _mean(moves), _mean(swaps)]
            out[(sc, tm)] = row
    return out


def _pairs(reps: int, seed: int, table: int, sc: str, tm: str, n: int, gen: Generator):
    for r in range(reps):
        # two batches of n tasks, both available at t = 0: the second is concatenated after the first
        yield gen.workload([n, n], [0.0, 0.0], sc, tm, cell_seed(seed, table, sc, tm, n, r))


def table78(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
            setting: Setting = Setting()) -> tuple[dict, dict]:
    """Tables 7 and 8 from the same concatenations: ``{cfg: [p_rev, p_ms] * 3}``, ``{cfg: [moves, swaps] * 3}``."""
    from heuristics import far

    t7, t8 = {}, {}
    with _Progress(len(CONFIGS6) * len(N_T6) * reps, quiet, "Tables 7-8") as bar:
        for sc, tm in CONFIGS6:
            r7, r8 = [], []
            for n in N_T6:
                prev, pms, moves, swaps = [], [], [], []
                for w in _pairs(reps, seed, 7, sc, tm, n, gen):
                    w = setting.workload(w)
                    triv = far.schedule(w, method="trivial", ties=setting.ties).makespan
                    rev = far.schedule(w, method="reversed", ties=setting.ties).makespan
                    plan = far.plan(w, method="move_swap", ties=setting.ties)
                    prev.append((triv / rev - 1) * 100)
                    pms.append((triv / plan.makespan - 1) * 100)
                    moves.append(_stat(plan.stats, "concat_moves", "moves"))
                    swaps.append(_stat(plan.stats, "concat_swaps", "swaps"))
                    bar.update(1)
                r7 += [_mean(prev), _mean(pms)]
                r8 += [_mean(moves), _mean(swaps)]
            t7[(sc, tm)], t8[(sc, tm)] = r7, r8
    return t7, t8


def table9(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           setting: Setting = Setting()) -> dict:
    """``{scaling: [p_multi for n in N_T4]}`` for ``reps + 1`` WideTimes batches."""
    from bounds import mig as mig_bounds
    from heuristics import far

    out = {}
    k = reps + 1
    with _Progress(len(SCALINGS) * len(N_T4), quiet, "Table 9") as bar:
        for sc in SCALINGS:
            row = []
            for n in N_T4:
                w = setting.workload(gen.workload([n] * k, [0.0] * k, sc, "WideTimes", cell_seed(seed, 9, sc, n)))
                row.append((far.schedule(w, ties=setting.ties).makespan / mig_bounds.area_bound(w) - 1) * 100)
                bar.update(1)
            out[sc] = row
    return out


# ---------------------------------------------------------------------------
# printing

def _cell(ours: float, paper: float, fmt: str = "{:.2f}") -> str:
    if ours is None or math.isnan(ours):
        return f"- ({fmt.format(paper)})"
    return f"{fmt.format(ours)} ({fmt.format(paper)}, {ours - paper:+.2f})"


_md = common.markdown_table


def _md_cell(ours: float, paper: float, spec: str = ".2f") -> str:
    """The README's cell: ``ours (paper)``."""
    return f"{common.fmt(ours, spec)} ({paper:.2f})"


def _opt_block(res: dict, time_limit: float, backend: str, opt_n: int) -> list[str]:
    from benchmarks.compare import opt_name

    scs = [sc for sc in SCALINGS if sc in res["opt"]]
    names = list(dict.fromkeys(s["method"] for sc in scs for s in res["opt"][sc]))
    by = {sc: {s["method"]: s for s in res["opt"][sc]} for sc in scs}

    def cell(s: dict | None) -> str:
        if s is None:
            return "-"
        text = common.fmt(s["mean_ratio_opt"])
        if s["kind"] == "exact":
            text += f" ({s['proven']}/{s['instances']} proven)"
        if s["unproven"] and s["kind"] != "exact":
            text += (f" [{common.fmt(s['unproven_ratio_low'])}, {common.fmt(s['unproven_ratio_high'])}]"
                     f" on {s['unproven']} unproven")
        if s["failed"]:
            text += f" (failed {s['failed']}/{s['instances']})"
        return text

    m = max((s["instances"] for sc in scs for s in res["opt"][sc]), default=0)
    out = ["", f"n = {opt_n} against the exact optimum: {m} instance{'s' if m != 1 else ''} per configuration "
               f"(WideTimes), {opt_name(backend)}, {time_limit:g} s per solve; mean makespan / OPT over proven "
               "optima, [a, b] = mean bracket of makespan / OPT on the instances not proven:",
           common.markdown_table(["method"] + scs, [[n] + [cell(by[sc].get(n)) for sc in scs] for n in names])]
    errors = [(n, sc, by[sc][n]["first_error"]) for n in names for sc in scs if by[sc].get(n, {}).get("failed")]
    out += [f"{n}, {sc}: failed, first: {e}" for n, sc, e in errors]
    return out


def _interval_text(c: dict) -> str:
    """``[low, high] proven/count``, or the single value when both ends agree to the digits shown."""
    if c["count"] == c["failed"]:
        return f"- (failed {c['failed']}/{c['count']})"
    low, high = common.fmt(c["low"]), ("open" if math.isinf(c["high"]) else common.fmt(c["high"]))
    text = low if low == high else f"[{low}, {high}]"
    text += f" {c['proven']}/{c['count']} proven"
    return text + (f" (failed {c['failed']})" if c["failed"] else "")


def _interval_block(res: dict, far_opt: FarOpt | None) -> list[str]:
    cells = res.get("interval") or {}
    if not cells:
        return []
    ns = sorted({n for _, n in cells})
    limit = f"{far_opt.time_limit:g} s" if far_opt else "the time limit"
    workers = f", {far_opt.workers} worker{'s' if far_opt.workers != 1 else ''}" if far_opt and far_opt.workers \
        else ""
    count = max(c["count"] for c in cells.values())
    first = "the first instance" if count == 1 else f"the first {count} instances"
    caption = (f"FAR / OPT, proven interval [mean FAR / best found, mean FAR / proven bound] over {first} of "
               f"each cell (WideTimes), CP-SAT with reconfiguration, {limit} per "
               f"solve{workers}; one value where both ends agree:")
    header = ["config"] + [f"n={ns[0]}"] + [str(n) for n in ns[1:]]
    rows = [[sc] + [_interval_text(cells[(sc, n)]) if (sc, n) in cells else "-" for n in ns] for sc in SCALINGS]
    out = ["", caption, "", common.markdown_table(header, rows)]
    out += [f"{sc}, n={n}: failed {c['failed']}/{c['count']}, first: {c['error']}"
            for (sc, n), c in sorted(cells.items()) if c["failed"]]
    return out


def format_table4(res: dict, reps: int, time_limit: float, markdown: bool = False, backend: str = "cpsat",
                  opt_n: int = 10, far_opt: FarOpt | None = None) -> str:
    if markdown:  # the README's form: ours (paper), three decimals for ours
        header = ["config"] + [f"n={N_T4[0]}"] + [str(n) for n in N_T4[1:]]
        rows = [[sc] + [_md_cell(o, p, ".3f") for o, p in zip(res[sc], PAPER[4][sc])] for sc in SCALINGS]
        out = [f"Table 4, mean rho = FAR / area bound, WideTimes, {reps} instances per cell, ours (paper):",
               "", common.markdown_table(header, rows)]
    else:
        header = ["Task configuration"] + [f"n={n}" for n in N_T4]
        rows = [[sc] + [_cell(o, p) for o, p in zip(res[sc], PAPER[4][sc])] for sc in SCALINGS]
        out = [f"Table 4: mean rho = FAR / baseline, A100, WideTimes, {reps} reps; ours (paper, difference)",
               common.markdown_table(header, rows)]
    if res.get("opt"):
        block = _opt_block(res, time_limit, backend, opt_n)
        out += block if not markdown else [block[0], block[1], ""] + block[2:]
    out += _interval_block(res, far_opt)
    return "\n".join(out)


def format_table5(res: dict, reps: int, markdown: bool = False) -> str:
    cfgs = [c for c in CONFIGS6 if c in res]
    cols = list(dict.fromkeys(c for cfg in cfgs for c in res[cfg]))
    paper = {cfg: dict(zip(APPROACHES, PAPER[5][cfg])) for cfg in cfgs}

    def cell(cfg, c) -> str:
        v = res[cfg][c]
        if c in paper[cfg]:
            text = _md_cell(v["mean"], paper[cfg][c]) if markdown else _cell(v["mean"], paper[cfg][c])
        else:
            text = common.fmt(v["mean"], ".2f")
        return text + (f" (failed {v['failed']}/{v['reps']})" if v["failed"] else "")

    header = (["" if markdown else "Task configuration"]
              + [MISO_SLICES_LABEL if c == MISO_SLICES else c for c in cols])
    rows = [[f"{sc}, {tm}"] + [cell((sc, tm), c) for c in cols] for sc, tm in cfgs]
    caption = (f"Table 5, mean sigma = method's makespan / FAR's makespan (n = 15, {reps} instances per row), "
               "ours (paper):" if markdown else
               f"Table 5: mean sigma_A = omega_A / omega_FAR, A100, n=15, {reps} reps; ours (paper, difference)")
    out = [caption] + ([""] if markdown else []) + [common.markdown_table(header, rows)]
    if not markdown:
        out.append("MISO-opt switches partition when all its tasks have ended (our reading of Sec. 6.5.1); "
                   "the per-slice column lets each new instance wait only for the instances on its slices. "
                   "Our FixPart includes the initial instance creations (rule 1), the paper's does not.")
    out += [f"{c}, {sc}, {tm}: failed {res[(sc, tm)][c]['failed']}/{reps}, first: {res[(sc, tm)][c]['error']}"
            for c in cols for sc, tm in cfgs if res[(sc, tm)][c]["failed"]]
    return "\n".join(out)


def _grid(caption: str, header: list[str], rows: list[list[Any]], markdown: bool, notes: Sequence[str] = ()) -> str:
    return "\n".join([caption] + ([""] if markdown else []) + [_md(header, rows)] + list(notes))


def _setting_note(setting: Setting) -> str:
    return "" if setting == Setting() else f"; setting: {setting.label()}"


def _pair_cells(res: dict, table: int, markdown: bool) -> list[list[Any]]:
    cell = _md_cell if markdown else _cell
    return [[f"{sc}, {tm}"] + [cell(o, p) for o, p in zip(res[(sc, tm)], PAPER[table][(sc, tm)])]
            for sc, tm in CONFIGS6]


def format_table6(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6
                                                            for h in ("p_ref %", "moves", "swaps")]
    caption = (f"Table 6, refinement: p_ref %, moves, swaps, {reps} instances per cell, ours (paper)"
               if markdown else f"Table 6: refinement, A100, {reps} reps; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 6, markdown), markdown)


def _release_words(setting: Setting) -> str:
    return {"zero": "both released at 0", "half": "the second released at half the first's FAR makespan",
            "end": "the second released at the first's FAR makespan",
            "gap": f"the second released at {setting.gap:g} x the first's area bound"}[setting.release]


def format_table7(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6
                                                            for h in ("p_rev %", "p_move/swap %")]
    what = f"concatenation of two FAR batches ({_release_words(setting)})"
    caption = (f"Table 7, {what}, {reps} pairs, ours (paper)" if markdown else
               f"Table 7: {what}, A100, {reps} pairs; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 7, markdown), markdown)


def format_table8(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6 for h in ("moves", "swaps")]
    caption = (f"Table 8, moves/swaps of the move/swap concatenation ({_release_words(setting)}), {reps} pairs, "
               "ours (paper)" if markdown else
               f"Table 8: moves/swaps of the move/swap concatenation, A100, {reps} pairs; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 8, markdown), markdown)


def format_table9(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    cell = _md_cell if markdown else _cell
    header = ["" if markdown else "Task configuration"] + [f"n={n}" for n in N_T4]
    rows = [[sc] + [cell(o, p) for o, p in zip(res[sc], PAPER[9][sc])] for sc in SCALINGS]
    rel = {"zero": "all released at 0", "half": "each released at half the previous batches' FAR makespans",
           "end": "each released when the previous ones would end back to back (sum of FAR makespans)",
           "gap": f"each released at {setting.gap:g} x the previous batches' area bounds"}[setting.release]
    caption = (f"Table 9, p_multi-batch %, WideTimes, {reps + 1} batches {rel} (the paper: 1001), ours (paper)"
               if markdown else
               f"Table 9: p_multi-batch %, A100, WideTimes, {reps + 1} batches {rel} (the paper: 1001); "
               "ours (paper, difference)")
    notes = [] if markdown or setting.release != "zero" else [
        "With every batch available, omega_multi <= sum of the batch makespans, so p_multi-batch stays near the "
        "single-batch rho - 1 of Table 4; the paper's 82-95 % needs idle time between batches (release times "
        "it does not state)."]
    return _grid(caption + _setting_note(setting), header, rows, markdown, notes)


def distance(table: str, res: Any) -> dict[str, float]:
    """Mean and largest absolute difference to the paper, and the mean paper value, over a table's cells.

    ``table`` is ``"6"``, ``"7"``, ``"8"`` or ``"9"``; ``res`` that table's result.

    Examples
    --------
    >>> d = distance("9", {sc: list(PAPER[9][sc]) for sc in SCALINGS})
    >>> d["mad"], d["max"]
    (0.0, 0.0)
    """
    keys = SCALINGS if table == "9" else CONFIGS6
    pairs = [(o, p) for k in keys for o, p in zip(res[k], PAPER[int(table)][k])]
    diffs = [abs(o - p) for o, p in pairs if o is not None and not math.isnan(o)]
    return {"mad": _mean(diffs), "max": max(diffs, default=float("nan")),
            "paper": _mean([abs(p) for _, p in pairs])}


def format_candidates(found: dict[str, list[tuple[Setting, Any]]], reps: int, markdown: bool = False) -> str:
    """Per table and candidate setting: mean / largest |ours - paper| and whether the setting reproduces it.

    A setting reproduces a table when its mean absolute difference is at most a
    tenth of the table's mean paper value.
    """
    rows = []
    for table, runs in found.items():
        for setting, res in runs:
            d = distance(table, res)
            ok = d["mad"] <= 0.1 * d["paper"]
            rows.append([table, setting.label(), common.fmt(d["mad"], ".2f"), common.fmt(d["max"], ".2f"),
                         common.fmt(d["paper"], ".2f"), "yes" if ok else "no"])
    caption = (f"Tables 6-9 under every candidate setting, {reps} instances per cell: mean and largest |ours - paper| "
               "over the table's cells; 'reproduces' = mean difference <= a tenth of the mean paper value")
    return _grid(caption, ["table", "setting", "mean abs diff", "max abs diff", "mean paper", "reproduces"], rows,
                 markdown)


TABLES = (4, 5, 6, 7, 8, 9)


def _parser() -> common.Parser:
    p = common.Parser(prog="python -m benchmarks.paper", description=common.description(__doc__))
    p.add_argument("--tables", type=int, nargs="+", default=list(TABLES), choices=TABLES, metavar="T",
                   help="which tables, from 4 5 6 7 8 9")
    p.add_argument("--reps", type=common.positive_int, default=20,
                   help="instances per cell (the paper: 1000)")
    p.add_argument("--seed", type=common.nonnegative_int, default=0, help="base seed of every cell")
    p.add_argument("--methods", type=common.comma_choices(_registry(), "method"), default=None,
                   help=f"comma list from heuristics.mig.METHODS for Table 5's columns and the exact "
                        f"column's rows (default: all, {','.join(_registry())})")
    p.add_argument("--opt-reps", type=common.nonnegative_int, default=3,
                   help="Table 4's exact column: instances solved exactly per configuration (0 skips)")
    p.add_argument("--opt-n", type=common.positive_int, default=10,
                   help="Table 4's exact column: tasks per instance")
    p.add_argument("--time-limit", type=common.positive_float, default=20.0,
                   help="seconds per exact solve of Table 4's n = --opt-n column")
    p.add_argument("--far-opt-reps", type=common.nonnegative_int, default=FarOpt.reps,
                   help="Table 4's FAR / OPT interval: instances per cell solved by CP-SAT with reconfiguration "
                        "(0 skips; a solve takes up to --far-opt-time-limit)")
    p.add_argument("--far-opt-time-limit", type=common.positive_float, default=FarOpt.time_limit,
                   help="seconds per solve of the FAR / OPT interval")
    p.add_argument("--far-opt-n", type=common.positive_int, nargs="+", default=list(FarOpt.ns), metavar="N",
                   help="the n of the FAR / OPT interval (small n: a quick run)")
    p.add_argument("--backend", default="cpsat", choices=("cpsat", "highs"),
                   help="exact solver of the --opt-n column (the FAR / OPT interval is always CP-SAT)")
    p.add_argument("--workers", type=common.positive_int, default=None,
                   help="solver threads per exact solve (default: the solver's own)")
    p.add_argument("--gpu", default="A100", choices=("A30", "A100", "H100"),
                   help="GPU of the generated batches (the paper: A100)")
    p.add_argument("--p-sup", type=common.fraction, default=DEFAULT_P_SUP,
                   help="share of memory-bound tasks per class, which the presets leave open "
                        "(Figure 11's value; 0 reproduces Table 4)")
    p.add_argument("--setting", type=_setting_arg, default=Setting(),
                   help="the reading of Tables 6-9: comma list of key=value, keys ties (ours|reference), "
                        "refined (winner|every), release (zero|half|end|gap), gap (a factor)")
    p.add_argument("--candidates", action="store_true",
                   help="run Tables 6-9 (those chosen) under every candidate setting and print how far each is "
                        "from the paper")
    ex.add_arguments(p)
    common.add_markdown(p)
    common.add_quiet(p)
    return p


def _setting_arg(text: str) -> Setting:
    import argparse

    try:
        return Setting.parse(text)
    except (ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    executor = ex.from_args(p, a)
    gen = Generator(a.gpu, a.p_sup)
    methods = tuple(a.methods) if a.methods else _registry()
    tables = set(a.tables)
    plain = dict(reps=a.reps, seed=a.seed, gen=gen, setting=a.setting)
    far_opt = FarOpt(a.far_opt_reps, a.far_opt_time_limit, tuple(dict.fromkeys(a.far_opt_n)), a.workers) \
        if a.far_opt_reps else None
    plain = dict(reps=a.reps, seed=a.seed, gen=gen)
    plan: list[tuple[str, list[tuple]]] = []
    if a.candidates:
        return _main_candidates(a, executor, gen, tables)
    if 4 in tables:
        plan.append(("4", _tasks4(a.reps, a.seed, a.opt_reps, a.time_limit, a.backend, gen, methods, a.opt_n,
                                  a.workers, far_opt)))
    if 5 in tables:
        plan.append(("5", _tasks5(a.reps, a.seed, gen, methods)))
    if 6 in tables:
        plan.append(("6", [("whole", "6", plain)]))
    if 7 in tables or 8 in tables:
        plan.append(("78", [("whole", "78", plain)]))
    if 9 in tables:
        plan.append(("9", [("whole", "9", plain)]))
    t0 = time.perf_counter()
    flat = [t for _, tasks in plan for t in tasks]
    try:
        results = executor.map(_run_task, flat, quiet=a.quiet, desc="paper", unit="task")
    except ex.ExecutorError as exc:
        p.error(str(exc))
    got: dict[str, tuple[list, list]] = {}
    k = 0
    for key, tasks in plan:
        got[key] = (tasks, results[k:k + len(tasks)])
        k += len(tasks)
    md = a.markdown
    blocks = []
    if "4" in got:
        blocks.append(format_table4(_assemble4(*got["4"]), a.reps, a.time_limit, md, a.backend, a.opt_n, far_opt))
    if "5" in got:
        blocks.append(format_table5(_assemble5(*got["5"]), a.reps, md))
    st = a.setting
    if "6" in got:
        blocks.append(format_table6(got["6"][1][0], a.reps, md, st))
    if "78" in got:
        t7, t8 = got["78"][1][0]
        if 7 in tables:
            blocks.append(format_table7(t7, a.reps, md, st))
        if 8 in tables:
            blocks.append(format_table8(t8, a.reps, md, st))
    if "9" in got:
        blocks.append(format_table9(got["9"][1][0], a.reps, md, st))
    if a.gpu != "A100":  # the titles name the paper's GPU; say which one ours ran on
        blocks = [b.replace(", A100,", f", {a.gpu} (the paper's figures: A100),", 1) for b in blocks]
        if md:
            blocks = [f"({a.gpu}; the paper's figures: A100)\n{b}" for b in blocks]
    print("\n\n".join(blocks))
    if not md:
        print(f"\n({a.gpu}, p_sup {a.p_sup}, seed {a.seed}; {time.perf_counter() - t0:.1f} s)")
    return 0


def _main_candidates(a: Any, executor: Executor, gen: Generator, tables: set[int]) -> int:
    """``--candidates``: every candidate setting of the chosen tables among 6-9, then the distance summary."""
    keys = [k for k, ts in (("6", {6}), ("78", {7, 8}), ("9", {9})) if ts & tables]
    tasks = [("whole", k, dict(reps=a.reps, seed=a.seed, gen=gen, setting=st)) for k in keys for st in CANDIDATES[k]]
    try:
        results = executor.map(_run_task, tasks, quiet=a.quiet, desc="candidates", unit="table")
    except ex.ExecutorError as exc:
        _parser().error(str(exc))
    found: dict[str, list[tuple[Setting, Any]]] = {}
    for (_, k, kw), res in zip(tasks, results):
        if k == "78":
            if 7 in tables:
                found.setdefault("7", []).append((kw["setting"], res[0]))
            if 8 in tables:
                found.setdefault("8", []).append((kw["setting"], res[1]))
        else:
            found.setdefault(k, []).append((kw["setting"], res))
    print(format_candidates(found, a.reps, a.markdown))
    return 0


if __name__ == "__main__":
    common.run_cli(main)
