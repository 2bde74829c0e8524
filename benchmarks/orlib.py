"""OR-Library wt40 benchmark: every hetero heuristic and the exact models.

``python -m benchmarks.orlib`` runs FIFO, Greedy (EFT), SAGreedy (seed 002,
Sec. III) and our iterated local search on the 125 single-machine instances
of OR-Library's wt40 (1||sum w_j T_j, the restriction of seed 002 Sec. II)
and prints, per method, how many known optima it reaches, the mean and worst
gap to the known optimum, and the mean time per instance (median of
``--repeats`` runs per instance). It then runs the exact models (CP-SAT and
the seed's MILP with HiGHS) with a per-instance time limit and prints what
they prove.

Gap = (value - optimum) / optimum over the instances with a positive
optimum (107 of the 125; the other 18 have optimum 0, where a relative gap
is undefined: the column "OPT = 0 solved" counts those reached).

Examples
--------
``python -m benchmarks.orlib --quiet``                 (defaults: ILS 0.9 s, exact 1 s)
``python -m benchmarks.orlib --exact-limit 60``        (60 s per instance and backend)
``python -m benchmarks.orlib --instances 1-25 --methods ils --no-exact``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from instances import hetero
from heuristics import hetero as heur
from milp import solve_optimal

METHODS = ("fifo", "greedy", "sagreedy", "ils")


def _parse_instances(text: str, parser: argparse.ArgumentParser) -> list[int]:
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.extend(range(lo, hi + 1))
            elif part:
                out.append(int(part))
    except ValueError:
        parser.error(f"--instances: expected numbers and ranges like 1-25,40, got {text!r}")
    if not out or any(not 1 <= k <= 125 for k in out):
        parser.error("--instances: numbers must be in 1..125")
    return out


def gap(value: float, optimum: float) -> float | None:
    """Relative gap (value - optimum) / optimum; ``None`` when the optimum is 0."""
    return (value - optimum) / optimum if optimum > 0 else None


def _summary(values: list, zero: list) -> str:
    """'mean gap % | worst gap % | OPT = 0 solved' cells."""
    gaps = [g for g in values if g is not None]
    mean = f"{100 * statistics.fmean(gaps):.3f}" if gaps else "-"
    worst = f"{100 * max(gaps):.2f}" if gaps else "-"
    return f"{mean} | {worst} | {sum(zero)}/{len(zero)}"


def run_heuristic(name: str, problem, ils_time: float, seed: int, ils_iters: int | None = None):
    if name == "ils":
        return heur.ils(problem, time_limit=ils_time, max_iter=ils_iters, seed=seed)
    if name == "sagreedy":
        return heur.sagreedy(problem, seed=seed)
    return heur.METHODS[name](problem)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.orlib", description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default="1-125", help="wt40 instance numbers, e.g. 1-125 or 1,5,10-20")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated heuristics from {', '.join(METHODS)}")
    parser.add_argument("--ils-time", type=float, default=0.9, help="ILS time limit per instance (s)")
    parser.add_argument("--ils-iters", type=int, default=None,
                        help="also stop ILS after this many iterations (deterministic runs)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per instance; the median time is used")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exact-limit", type=float, default=1.0,
                        help="time limit per instance and exact backend (s); 60 for the full study")
    parser.add_argument("--backends", default="cpsat,highs", help="exact backends to run")
    parser.add_argument("--workers", type=int, default=1, help="solver threads for the exact models")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact models")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, tables only")
    args = parser.parse_args(argv)
    ks = _parse_instances(args.instances, parser)
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        parser.error(f"--methods: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(METHODS)}")
    backends = [] if args.no_exact else [b for b in args.backends.split(",") if b]
    if any(b not in ("cpsat", "highs") for b in backends):
        parser.error("--backends: choose from cpsat, highs")
    if (args.ils_time <= 0 or args.exact_limit <= 0 or args.repeats < 1 or args.workers < 1
            or (args.ils_iters is not None and args.ils_iters < 0)):
        parser.error("--ils-time, --ils-iters, --exact-limit, --repeats and --workers must be positive")

    optima = hetero.orlib_wt40_optimum()
    from tqdm import tqdm

    def bar(it, desc):
        return tqdm(it, desc=desc, file=sys.stderr, leave=False, disable=args.quiet)

    rows = {m: {"hit": 0, "gaps": [], "zero": [], "times": []} for m in methods}
    for k in bar(ks, "heuristics"):
        pb = hetero.orlib_wt40(k)
        for m in methods:
            times, value = [], None
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                sched = run_heuristic(m, pb, args.ils_time, args.seed, args.ils_iters)
                times.append(time.perf_counter() - t0)
                errs = hetero.check(pb, sched)
                if errs:
                    raise SystemExit(f"{m} on wt40-{k}: infeasible schedule: {errs[:3]}")
                value = hetero.weighted_tardiness(pb, sched)
            r = rows[m]
            r["hit"] += value == optima[k - 1]
            r["gaps"].append(gap(value, optima[k - 1]))
            if optima[k - 1] == 0:
                r["zero"].append(value == 0)
            r["times"].append(statistics.median(times))
    print(f"OR-Library wt40: {len(ks)} instances, heuristics (ILS limit {args.ils_time:g} s, seed {args.seed})")
    print("| method | optima reached | mean gap % (OPT > 0) | worst gap % | OPT = 0 solved | mean time s |")
    print("|---|---|---|---|---|---|")
    for m in methods:
        r = rows[m]
        print(f"| {m} | {r['hit']}/{len(ks)} | {_summary(r['gaps'], r['zero'])} | "
              f"{statistics.fmean(r['times']):.3f} |")

    if backends:
        ex = {b: {"opt": 0, "found": 0, "gaps": [], "zero": [], "times": [], "none": 0} for b in backends}
        for k in bar(ks, "exact"):
            pb = hetero.orlib_wt40(k)
            for b in backends:
                res = solve_optimal(pb, backend=b, time_limit=args.exact_limit, workers=args.workers)
                e = ex[b]
                e["opt"] += res.proven
                if res.objective is None:
                    e["none"] += 1
                else:
                    e["found"] += res.objective == optima[k - 1]
                    e["gaps"].append(gap(res.objective, optima[k - 1]))
                    if optima[k - 1] == 0:
                        e["zero"].append(res.objective == 0)
                e["times"].append(res.runtime)
                if res.lower_bound is not None and res.lower_bound > optima[k - 1] + 1e-6 and k != 19:
                    raise SystemExit(f"{b} on wt40-{k}: bound {res.lower_bound} above the optimum")
        print()
        print(f"Exact models, {args.exact_limit:g} s per instance, {args.workers} worker(s)")
        print("| backend | proven optimal | known optimum found | no solution | mean gap % (OPT > 0) "
              "| worst gap % | OPT = 0 solved | mean time s |")
        print("|---|---|---|---|---|---|---|---|")
        for b in backends:
            e = ex[b]
            print(f"| {b} | {e['opt']}/{len(ks)} | {e['found']}/{len(ks)} | {e['none']} | "
                  f"{_summary(e['gaps'], e['zero'])} | {statistics.fmean(e['times']):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
