"""Time to proven optimum of the Pyomo/HiGHS MIG MILP.

For each n, solves ``--seeds`` generated instances (seed 0, 1, ...) with
:func:`milp.mig.solve` (``backend="highs"``; without ``--reconfiguration`` on
``problem.without_reconfiguration()``) and prints the median and maximum
wall-clock time, how many were proven optimal within the time limit, the
median gap of the others, and (with reconfiguration) how many were closed by
the relaxation R alone.

Examples
--------
::

    python -m benchmarks.mig_pyomo --n 6 8 10 --seeds 10
    python -m benchmarks.mig_pyomo --n 4 6 --reconfiguration --seeds 10
    python -m benchmarks.mig_pyomo --n 4 --reconfiguration --no-relaxation --quiet
"""

from __future__ import annotations

import argparse
import statistics
import sys

from instances import mig
from instances.mig_generator import SCALING_PRESETS, TIME_PRESETS
from milp.mig import solve
from milp.result import Status

__all__ = ["run", "main"]


def run(ns, seeds: int, reconfiguration: bool, gpu: str = "A100", workload: str = "MixedScaling",
        times: str = "WideTimes", time_limit: float = 60.0, relaxation: bool = True, quiet: bool = False):
    """One row per n: (n, median s, max s, proven, runs, median gap of unproven, closed by R)."""
    from tqdm import tqdm

    rows = []
    jobs = [(n, s) for n in ns for s in range(seeds)]
    results: dict[int, list] = {n: [] for n in ns}
    for n, seed in tqdm(jobs, disable=quiet, desc="solving", unit="instance"):
        p = mig.generate(n, gpu, workload, times, seed)
        p = p if reconfiguration else p.without_reconfiguration()
        res = solve(p, backend="highs", time_limit=time_limit, relaxation=relaxation)
        results[n].append(res)
    for n in ns:
        rs = results[n]
        secs = [r.runtime for r in rs]
        proven = [r for r in rs if r.status is Status.OPTIMAL]
        gaps = [r.gap for r in rs if r.status is not Status.OPTIMAL and r.gap is not None]
        by_r = sum(1 for r in rs if str(r.info.get("termination", "")).startswith("closed by"))
        rows.append((n, statistics.median(secs), max(secs), len(proven), len(rs),
                     statistics.median(gaps) if gaps else None, by_r))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mig_pyomo", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[6, 8, 10], help="batch sizes")
    parser.add_argument("--seeds", type=int, default=10, help="instances per n (seeds 0..k-1)")
    parser.add_argument("--reconfiguration", action="store_true", help="model create/destroy operations")
    parser.add_argument("--no-relaxation", action="store_true", help="skip the relaxation R (full model only)")
    parser.add_argument("--gpu", default="A100")
    parser.add_argument("--workload", default="MixedScaling", choices=sorted(SCALING_PRESETS))
    parser.add_argument("--times", default="WideTimes", choices=sorted(TIME_PRESETS))
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.n):
        parser.error("--n values must be at least 1")
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if not args.time_limit > 0:
        parser.error("--time-limit must be positive")
    try:
        from instances import gpus

        gpus.get(args.gpu)
    except ValueError as exc:
        parser.error(str(exc))
    rows = run(args.n, args.seeds, args.reconfiguration, args.gpu, args.workload, args.times, args.time_limit,
               not args.no_relaxation, args.quiet)
    mode = "with" if args.reconfiguration else "without"
    print(f"HiGHS MILP (Pyomo), {args.gpu} {args.workload}/{args.times}, {mode} reconfiguration, "
          f"limit {args.time_limit:g} s, {args.seeds} seeds" + (", full model only" if args.no_relaxation else ""))
    print(f"{'n':>3} {'median s':>9} {'max s':>8} {'proven':>7} {'gap (unproven)':>15} {'closed by R':>12}")
    for n, med, mx, proven, runs, gap, by_r in rows:
        g = "-" if gap is None else f"{100 * gap:.2f}%"
        closed = by_r if args.reconfiguration and not args.no_relaxation else "-"
        print(f"{n:>3} {med:>9.2f} {mx:>8.2f} {f'{proven}/{runs}':>7} {g:>15} {closed:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
