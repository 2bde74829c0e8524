"""``python -m benchmarks.mig_pyomo``: time to proven optimum of the Pyomo/HiGHS MIG MILP.

For each n, solves ``--seeds`` generated instances (seed 0, 1, ...) with
:func:`milp.mig.solve` (``backend="highs"``; without ``--reconfiguration`` on
``problem.without_reconfiguration()``) and prints the median and maximum
wall-clock time, how many were proven optimal within the time limit, the
median gap of the others, and (with reconfiguration) how many were closed by
the relaxations alone (the assignment relaxation, then R) without the full
session model. Every solve is one task of the executor
(``--executor local|dask``); results come back in task order.

Examples
--------
::

    python -m benchmarks.mig_pyomo --n 6 8 10 --seeds 10
    python -m benchmarks.mig_pyomo --n 4 6 --reconfiguration --seeds 10 --markdown
    python -m benchmarks.mig_pyomo --n 4 --reconfiguration --no-relaxation --quiet
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from benchmarks import common
from benchmarks import executor as ex
from benchmarks.executor import Executor
from instances import gpus, mig
from instances.mig_generator import SCALING_PRESETS, TIME_PRESETS
from milp.result import Status

__all__ = ["run", "main"]


def _solve_task(task: tuple) -> dict[str, Any]:
    """One instance: runtime, proven, gap, and whether the relaxations closed it before the session model."""
    from milp.mig import solve

    n, seed, reconfiguration, gpu, workload, times, time_limit, relaxation = task
    p = mig.generate(n, gpu, workload, times, seed)
    p = p if reconfiguration else p.without_reconfiguration()
    res = solve(p, backend="highs", time_limit=time_limit, relaxation=relaxation)
    return {"n": n, "runtime": res.runtime, "proven": res.status is Status.OPTIMAL, "gap": res.gap,
            "objective": res.objective, "lower_bound": res.lower_bound,
            "by_r": str(res.info.get("termination", "")).startswith("closed by")}


def run(ns, seeds: int, reconfiguration: bool, gpu: str = "A100", workload: str = "MixedScaling",
        times: str = "WideTimes", time_limit: float = 60.0, relaxation: bool = True, quiet: bool = False,
        executor: Executor | None = None):
    """One row per n: (n, median s, max s, proven, runs, median gap of unproven, closed by the relaxations).

    Examples
    --------
    >>> run([2], 1, False, gpu="A30", quiet=True)[0][3:5]
    (1, 1)
    """
    tasks = [(n, s, reconfiguration, gpu, workload, times, time_limit, relaxation) for n in ns for s in range(seeds)]
    results: dict[int, list] = {n: [] for n in ns}
    for r in ex.succeeded((executor or Executor()).map(_solve_task, tasks, quiet=quiet, desc="solving",
                                                       unit="instance", label=lambda t: f"n={t[0]} seed={t[1]}")):
        results[r["n"]].append(r)  # a failed instance of a command's sweep is left out (and listed)
    rows = []
    for n in dict.fromkeys(ns):
        rs = results[n]
        if not rs:
            continue
        secs = [r["runtime"] for r in rs]
        gaps = [r["gap"] for r in rs if not r["proven"] and r["gap"] is not None]
        rows.append((n, statistics.median(secs), max(secs), sum(r["proven"] for r in rs), len(rs),
                     statistics.median(gaps) if gaps else None, sum(r["by_r"] for r in rs)))
    return rows


def _gpu(text: str) -> str:
    try:
        return gpus.get(text).name
    except ValueError as exc:
        import argparse

        raise argparse.ArgumentTypeError(str(exc)) from None


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 30 seconds"


def _parser() -> common.Parser:
    p = common.Parser(prog="python -m benchmarks.mig_pyomo", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--n", type=common.integer(1, common.MAX_EXACT_TASKS), nargs="+", default=[6, 8, 10],
                   help=f"batch sizes, each at most {common.MAX_EXACT_TASKS:,}")
    p.add_argument("--seeds", type=common.count, default=10, help="instances per n (seeds 0..k-1)")
    p.add_argument("--reconfiguration", action="store_true",
                   help="model create/destroy operations (default: off, a GPU with zero create/destroy times)")
    p.add_argument("--no-relaxation", action="store_true",
                   help="solve the full model only, without the relaxations first (default: the assignment relaxation and R first)")
    p.add_argument("--gpu", type=_gpu, default="A100", help=f"GPU model, from {', '.join(gpus.names())}")
    p.add_argument("--workload", default="MixedScaling", choices=sorted(SCALING_PRESETS), help="scaling preset")
    p.add_argument("--times", default="WideTimes", choices=sorted(TIME_PRESETS), help="time preset")
    p.add_argument("--time-limit", type=common.seconds, default=60.0, help="seconds per instance")
    ex.add_arguments(p)
    common.add_markdown(p)
    common.add_quiet(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    executor = ex.from_args(p, a)
    try:
        rows = run(a.n, a.seeds, a.reconfiguration, a.gpu, a.workload, a.times, a.time_limit,
                   not a.no_relaxation, a.quiet, executor)
    except ex.ExecutorError as exc:
        p.error(str(exc))
    mode = "with" if a.reconfiguration else "without"
    closed_shown = a.reconfiguration and not a.no_relaxation
    title = (f"HiGHS MILP (Pyomo), {a.gpu} {a.workload}/{a.times}, {mode} reconfiguration, "
             f"limit {a.time_limit:g} s, {a.seeds} seeds" + (", full model only" if a.no_relaxation else ""))
    if a.markdown:  # the README's form: median time and proven (median gap of the unproven)
        body = [[n, f"{med:.2f} s", f"{proven}/{runs}" + (f" ({100 * gap:.2f} %)" if gap is not None else "")]
                + ([by_r] if closed_shown else []) for n, med, mx, proven, runs, gap, by_r in rows]
        header = ["n", f"median ({mode} reconfiguration)", "proven (median gap of the unproven)"] + \
            (["closed by the relaxations"] if closed_shown else [])
        print(f"{title}:\n\n{common.markdown_table(header, body)}")
        return 0
    print(title)
    print(f"{'n':>3} {'median s':>9} {'max s':>8} {'proven':>7} {'gap (unproven)':>15} {'closed by relaxations':>22}")
    for n, med, mx, proven, runs, gap, by_r in rows:
        g = "-" if gap is None else f"{100 * gap:.2f}%"
        closed = by_r if closed_shown else "-"
        print(f"{n:>3} {med:>9.2f} {mx:>8.2f} {f'{proven}/{runs}':>7} {g:>15} {closed:>22}")
    return 0


if __name__ == "__main__":
    common.run_cli(main)
