"""Speed of the exact MIG models and the ratios they certify (FAR paper, Sec. 2.2 problem).

Usage::

    python -m benchmarks.milp_speed                 # a few minutes: short table, 5 seeds
    python -m benchmarks.milp_speed --full          # issue table: 10 seeds, 60 s, n sweeps, ratios n = 6..12
    python -m benchmarks.milp_speed --rows cpsat0:12 cpsat1:8 highs0:8 --seeds 10 --time-limit 60
    python -m benchmarks.milp_speed --naive         # add the interval model (naive-style baseline)

Instances: A100, MixedScaling, WideTimes, seeds 0..k-1 (``mig.generate``).
Prints, per row (backend, reconfiguration, n), the median over seeds of the
time to a *proven* optimum (an unproven run counts as beyond the limit, so a
median shown as ``>60`` means more than half were not proven), how many were
proven and the largest remaining gap. ``--sweep`` raises n until the median
is no longer proven within the limit. ``--ratios`` prints FAR / OPT and
OPT / LB (LB = :func:`bounds.mig.lower_bound`, and the paper's area baseline)
for each n, with and without reconfiguration: means over seeds, plus the
largest FAR / OPT computed against OPT's proven lower bound (so it stays an
upper bound of the ratio when a solve is not proven; ``proven`` counts them).

Rows without reconfiguration (``...0``) solve the batch on a GPU with zero
create/destroy times (``problem.without_reconfiguration()``); rows with it
(``...1``) the batch itself.

Row names: ``cpsat0`` = CP-SAT without reconfiguration (laminar model),
``cpsat1`` = CP-SAT with reconfiguration (session model), both with FAR's
schedule as hint; ``nohint0`` / ``nohint1`` = the same without a hint;
``naive0`` = the interval model (no laminar reduction) with the hint,
dominance, symmetry and redundant constraints; ``bare0`` = a naive model: one
optional interval per task and placement, per-slice NoOverlap, no hint,
dominance, symmetry breaking or redundant constraints; ``highs0`` /
``highs1`` = the Pyomo MILP of milp/mig_pyomo.py solved by HiGHS (FAR's
schedule as its starting incumbent).

Timings depend on the machine and its load; CP-SAT runs with 2 workers.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import Any

from tqdm import tqdm

from instances import mig

ROWS = {"cpsat0": ("cpsat", False, {}), "cpsat1": ("cpsat", True, {}),
        "naive0": ("cpsat", False, {"model": "intervals"}),
        "bare0": ("cpsat", False, {"model": "intervals", "symmetry": False, "redundant": False, "hint": False,
                              "dominance": False}),
        "nohint0": ("cpsat", False, {"hint": False}),
        "nohint1": ("cpsat", True, {"hint": False}),
        "highs0": ("highs", False, {}), "highs1": ("highs", True, {})}
TARGETS = {("cpsat0", 12): 5.0, ("cpsat1", 12): 60.0, ("highs0", 8): 60.0}


def _bar(iterable, total: int, quiet: bool, desc: str):
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False, disable=quiet)


def _instance(n: int, seed: int, reconf: bool = True) -> mig.Problem:
    """The benchmark batch; without reconfiguration its GPU has zero create/destroy times."""
    p = mig.generate(n=n, gpu="A100", workload="MixedScaling", times="WideTimes", seed=seed)
    return p if reconf else p.without_reconfiguration()


def run_one(row: str, n: int, seed: int, time_limit: float, workers: int) -> dict[str, Any]:
    """Solve one instance; returns time, proven, gap, objective, lower bound."""
    from milp.mig import solve

    backend, reconf, opts = ROWS[row]
    kwargs: dict[str, Any] = dict(backend=backend, time_limit=time_limit, workers=workers)
    kwargs.update(opts)  # hint: FAR's schedule unless the row says False
    res = solve(_instance(n, seed, reconf), **kwargs)
    return {"time": res.runtime, "proven": res.proven, "gap": res.gap or 0.0, "objective": res.objective,
            "lower_bound": res.lower_bound}


def summarise(runs: list[dict[str, Any]], time_limit: float) -> dict[str, Any]:
    times = sorted(r["time"] if r["proven"] else math.inf for r in runs)
    med = statistics.median(times)
    return {"median": med, "proven": sum(r["proven"] for r in runs), "count": len(runs),
            "max_gap": max((r["gap"] for r in runs), default=0.0),
            "median_text": f">{time_limit:g}" if math.isinf(med) else f"{med:.2f}"}


def speed_table(rows: list[tuple[str, int]], seeds: int, time_limit: float, workers: int, quiet: bool):
    """Yield one summary per row as soon as its seeds are solved."""
    for row, n in rows:
        runs = [run_one(row, n, s, time_limit, workers) for s in _bar(range(seeds), seeds, quiet, f"{row} n={n}")]
        summ = summarise(runs, time_limit)
        summ.update(row=row, n=n, target=TARGETS.get((row, n)))
        yield summ


def sweep(row: str, n_from: int, n_max: int, seeds: int, time_limit: float, workers: int, quiet: bool):
    """Raise n until the median run is no longer proven within the limit (yields one summary per n)."""
    for n in range(n_from, n_max + 1):
        runs = [run_one(row, n, s, time_limit, workers) for s in _bar(range(seeds), seeds, quiet, f"{row} n={n}")]
        summ = summarise(runs, time_limit)
        summ.update(row=row, n=n)
        yield summ
        if math.isinf(summ["median"]):
            break


def ratios(ns: list[int], seeds: int, time_limit: float, workers: int, quiet: bool) -> list:
    """FAR / OPT and OPT / LB per n, averaged over seeds, with and without reconfiguration."""
    from bounds import mig as mig_bounds
    from heuristics import far
    from milp.mig import solve

    out = []
    jobs = [(n, s) for n in ns for s in range(seeds)]
    acc: dict[tuple[int, bool], list] = {}
    for n, s in _bar(jobs, len(jobs), quiet, "ratios"):
        for reconf in (False, True):
            p = _instance(n, s, reconf)
            far_ms = far.schedule(p).makespan
            res = solve(p, backend="cpsat", time_limit=time_limit, workers=workers)
            lb = mig_bounds.lower_bound(p)
            acc.setdefault((n, reconf), []).append({
                "far_opt": far_ms / res.objective, "far_lb_opt": far_ms / res.lower_bound,
                "opt_lb": res.objective / lb, "opt_area": res.objective / mig_bounds.area_bound(p),
                "far_area": far_ms / mig_bounds.area_bound(p), "proven": res.proven})
    for (n, reconf), rs in sorted(acc.items()):
        out.append({"n": n, "reconf": reconf, "count": len(rs), "proven": sum(r["proven"] for r in rs),
                    **{k: statistics.mean(r[k] for r in rs) for k in
                       ("far_opt", "far_lb_opt", "opt_lb", "opt_area", "far_area")},
                    "far_opt_max": max(r["far_lb_opt"] for r in rs)})
    return out


def _parse_rows(specs: list[str], parser: argparse.ArgumentParser) -> list[tuple[str, int]]:
    rows = []
    for spec in specs:
        name, _, n = spec.partition(":")
        if name not in ROWS or not n.isdigit() or int(n) < 1:
            parser.error(f"bad row {spec!r}: use NAME:N with NAME in {', '.join(ROWS)}")
        rows.append((name, int(n)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.milp_speed", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", nargs="+", metavar="NAME:N",
                        help="rows to time (default cpsat0:12 cpsat1:8 highs0:6; --full: cpsat0:12 cpsat1:12 highs0:8)")
    parser.add_argument("--seeds", type=int, help="seeds per row (default 5; --full 10)")
    parser.add_argument("--time-limit", type=float, help="seconds per solve (default 30; --full 60)")
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT workers (default 2)")
    parser.add_argument("--full", action="store_true", help="the issue's table, n sweeps and ratios for n = 6..12")
    parser.add_argument("--naive", action="store_true", help="add the interval model row naive0:12")
    parser.add_argument("--sweep", nargs="*", metavar="NAME", help="n sweeps for these rows (default with --full: "
                        "cpsat0 cpsat1 highs0)")
    parser.add_argument("--sweep-max", type=int, default=20, help="largest n of a sweep (default 20)")
    parser.add_argument("--sweep-from", type=int, help="first n of every sweep (default per row: highs 4, "
                        "cpsat1 6, cpsat0 8)")
    parser.add_argument("--ratios", nargs="*", type=int, metavar="N", help="FAR/OPT and OPT/LB for these n "
                        "(default with --full: 6..12)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    seeds = args.seeds if args.seeds is not None else (10 if args.full else 5)
    limit = args.time_limit if args.time_limit is not None else (60.0 if args.full else 30.0)
    if seeds < 1:
        parser.error("--seeds must be at least 1")
    if limit <= 0:
        parser.error("--time-limit must be positive")
    if not 1 <= args.workers <= 2:
        parser.error("--workers must be 1 or 2 (the machine has 2 cores)")
    rows = _parse_rows(args.rows, parser) if args.rows else (
        [("cpsat0", 12), ("cpsat1", 12), ("highs0", 8)] if args.full else [("cpsat0", 12), ("cpsat1", 8),
                                                                             ("highs0", 6)])
    if args.naive:
        rows.append(("naive0", 12))
    sweeps = args.sweep if args.sweep is not None else (["cpsat0", "cpsat1", "highs0"] if args.full else [])
    for name in sweeps:
        if name not in ROWS:
            parser.error(f"unknown sweep row {name!r}; known: {', '.join(ROWS)}")
    ratio_ns = args.ratios if args.ratios is not None else (list(range(6, 13)) if args.full else [])
    if args.sweep_max < 1 or (args.sweep_from is not None and args.sweep_from < 1):
        parser.error("--sweep-max and --sweep-from must be positive")
    if any(n < 1 for n in ratio_ns):
        parser.error("--ratios needs positive n")

    print(f"A100 MixedScaling/WideTimes, {seeds} seeds, limit {limit:g} s, {args.workers} CP-SAT workers")
    print()
    print("| row | backend | reconf | n | median time to proven optimum (s) | proven | max gap | target |")
    print("|---|---|---|---|---|---|---|---|")
    for r in speed_table(rows, seeds, limit, args.workers, args.quiet):
        backend, reconf, _ = ROWS[r["row"]]
        target = f"<= {r['target']:g} s" if r["target"] else ""
        print(f"| {r['row']} | {backend} | {'yes' if reconf else 'no'} | {r['n']} | {r['median_text']} | "
              f"{r['proven']}/{r['count']} | {100 * r['max_gap']:.2f} % | {target} |", flush=True)
    for name in sweeps:
        start = args.sweep_from or {"highs0": 4, "highs1": 3, "cpsat1": 6}.get(name, 8)
        print()
        print(f"n sweep, {name}: median time to proven optimum within {limit:g} s")
        print("| n | median (s) | proven | max gap |")
        print("|---|---|---|---|")
        for r in sweep(name, start, args.sweep_max, seeds, limit, args.workers, args.quiet):
            print(f"| {r['n']} | {r['median_text']} | {r['proven']}/{r['count']} | {100 * r['max_gap']:.2f} % |",
                  flush=True)
    if ratio_ns:
        print()
        print("FAR / OPT and OPT / LB (means over seeds; \"FAR/OPT max\" divides by the proven lower bound of OPT)")
        print("| n | reconf | proven | FAR/OPT | FAR/OPT max | OPT/LB | OPT/area | FAR/area |")
        print("|---|---|---|---|---|---|---|---|")
        for r in ratios(ratio_ns, seeds, limit, args.workers, args.quiet):
            print(f"| {r['n']} | {'yes' if r['reconf'] else 'no'} | {r['proven']}/{r['count']} | "
                  f"{r['far_opt']:.4f} | {r['far_opt_max']:.4f} | {r['opt_lb']:.4f} | {r['opt_area']:.4f} | "
                  f"{r['far_area']:.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
