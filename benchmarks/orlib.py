"""OR-Library weighted-tardiness benchmark: heuristics, the lower bound and the exact methods.

``python -m benchmarks.orlib`` runs, on the 125 single-machine instances of
the shipped OR-Library set wt40 (1||sum w_j T_j, the restriction of seed 002
Sec. II) or on any set in the OR-Library format (``--file``, with the known
values in ``--values``), or on a set drawn by the OR-Library scheme
(``--generate N``):

1. every heuristic of :data:`heuristics.hetero.METHODS` (``--methods``):
   how many known values it reaches, the mean and worst gap to them, and the
   mean time per instance;
2. with ``--bound``, the lower bound of :func:`bounds.hetero.lower_bound`
   given the ILS schedule: mean and worst gap below the known value, how
   often it proves the value optimal, mean time;
3. the exact methods (``--backends``, default ``auto`` = successive
   sublimation for these instances; ``cpsat`` and ``highs`` are the seed's
   formulation): how many instances are proven optimal within
   ``--exact-limit`` seconds, how many optima equal the known value (a proven
   optimum below a known value would be a finding and is reported), the mean
   and worst gap where not proven, and the times.

Tables are printed in Markdown. Gap = (value - known) / known over the
instances with a known value > 0 (the column "known = 0 reached" counts the
others). Without known values, ``--reference SECONDS`` computes them as the
best of three ILS runs of that length (``--save-values`` writes them).

Examples
--------
``python -m benchmarks.orlib --quiet``                         (wt40: heuristics and exact, 60 s)
``python -m benchmarks.orlib --methods ils --bound --no-exact`` (ILS and bound gap)
``python -m benchmarks.orlib --file wt100.txt --values wtbest100b.txt --methods ils --no-exact``
``python -m benchmarks.orlib --generate 100 --gen-seed 7 --reference 20 --methods ils --no-exact``
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

from bounds import hetero as bounds_hetero
from heuristics import hetero as heur
from instances import hetero
from instances.errors import InstanceError
from milp import solve_optimal

BACKENDS = ("auto", "ssdp", "cpsat", "highs")


def _parse_instances(text: str, count: int, parser: argparse.ArgumentParser) -> list[int]:
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
    if not out or any(not 1 <= k <= count for k in out):
        parser.error(f"--instances: numbers must be in 1..{count}")
    return out


def gap(value: float, known: float) -> float | None:
    """Relative gap (value - known) / known; ``None`` when the known value is 0."""
    return (value - known) / known if known > 0 else None


def _cells(gaps: list, zero: list) -> str:
    """'mean gap % | worst gap % | known = 0 reached' cells."""
    g = [x for x in gaps if x is not None]
    mean = f"{100 * statistics.fmean(g):.3f}" if g else "-"
    worst = f"{100 * max(g, key=abs):.2f}" if g else "-"
    return f"{mean} | {worst} | {sum(zero)}/{len(zero)}"


def _method(name: str, ils_time: float, seed: int, ils_iters: int | None):
    if name == "ils":
        return functools.partial(heur.ils, time_limit=ils_time, max_iter=ils_iters, seed=seed)
    if name == "sagreedy":
        return functools.partial(heur.sagreedy, seed=seed)
    return heur.METHODS[name]


def reference_values(problems, seconds: float, seeds=(0, 1, 2), bar=lambda it, desc: it) -> list[float]:
    """Best value of ``len(seeds)`` ILS runs of ``seconds`` each, per instance."""
    out = []
    for pb in bar(problems, "reference"):
        out.append(min(hetero.weighted_tardiness(pb, heur.ils(pb, time_limit=seconds, seed=s)) for s in seeds))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.orlib", description=__doc__.split("\n\n")[0])
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--file", help="an OR-Library weighted-tardiness file (default: the shipped wt40)")
    src.add_argument("--generate", type=int, metavar="N", help="draw 125 instances of N jobs by the OR-Library scheme")
    parser.add_argument("--gen-seed", type=int, default=0, help="seed of --generate")
    parser.add_argument("--values", help="known optimal / best values, one per instance (with --file)")
    parser.add_argument("--reference", type=float, metavar="SECONDS",
                        help="without known values: best of 3 ILS runs of this length as the reference")
    parser.add_argument("--save-values", help="write the reference values to this file")
    parser.add_argument("--instances", default=None, help="instance numbers, e.g. 1-125 or 1,5,10-20")
    parser.add_argument("--methods", default=",".join(heur.METHODS),
                        help=f"comma-separated heuristics from {', '.join(heur.METHODS)} ('' for none)")
    parser.add_argument("--ils-time", type=float, default=1.0, help="ILS time limit per instance (s)")
    parser.add_argument("--ils-iters", type=int, default=None,
                        help="also stop ILS after this many iterations (deterministic runs)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per instance; the median time is used")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bound", action="store_true", help="also measure the lower bound")
    parser.add_argument("--bound-time", type=float, default=10.0, help="time limit of the bound (s)")
    parser.add_argument("--exact-limit", type=float, default=60.0, help="time limit per instance and backend (s)")
    parser.add_argument("--backends", default="auto", help=f"exact backends from {', '.join(BACKENDS)}")
    parser.add_argument("--workers", type=int, default=1, help="solver threads for the exact models")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact methods")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, tables only")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in heur.METHODS]
    if bad:
        parser.error(f"--methods: unknown {', '.join(bad)}; choose from {', '.join(heur.METHODS)}")
    backends = [] if args.no_exact else [b for b in args.backends.split(",") if b]
    if any(b not in BACKENDS for b in backends):
        parser.error(f"--backends: choose from {', '.join(BACKENDS)}")
    if (args.ils_time <= 0 or args.exact_limit <= 0 or args.repeats < 1 or args.workers < 1
            or args.bound_time <= 0 or (args.ils_iters is not None and args.ils_iters < 0)
            or (args.reference is not None and args.reference <= 0)
            or (args.generate is not None and args.generate < 1)):
        parser.error("--ils-time, --ils-iters, --exact-limit, --bound-time, --reference, --generate, "
                     "--repeats and --workers must be positive")
    if args.values and not args.file:
        parser.error("--values needs --file (the shipped wt40 brings its own)")

    from tqdm import tqdm

    def bar(it, desc):
        return tqdm(it, desc=desc, file=sys.stderr, leave=False, disable=args.quiet)

    try:
        if args.file:
            problems = hetero.read_orlib(args.file)
            label = Path(args.file).name
            known = hetero.read_orlib_values(args.values, len(problems)) if args.values else None
        elif args.generate is not None:
            problems = hetero.generate_orlib_set(args.generate, seed=args.gen_seed)
            label = f"OR-Library scheme, n = {args.generate}, seed {args.gen_seed}"
            known = None
        else:
            problems = hetero.orlib_wt40_all()
            label = "OR-Library wt40"
            known = hetero.orlib_wt40_optimum()
    except InstanceError as exc:
        parser.error(str(exc))
    ks = _parse_instances(args.instances or f"1-{len(problems)}", len(problems), parser)
    kind = "known values"
    if known is None:
        if args.reference is None:
            parser.error("no known values: give --values or --reference SECONDS")
        ref = reference_values([problems[k - 1] for k in ks], args.reference, bar=bar)
        known = [0.0] * len(problems)
        for k, v in zip(ks, ref):
            known[k - 1] = v
        kind = f"reference values (best of 3 ILS runs of {args.reference:g} s)"
        if args.save_values:
            Path(args.save_values).write_text("\n".join(f"{known[k - 1]:g}" for k in ks) + "\n")
    n = problems[ks[0] - 1].n
    print(f"{label}: {len(ks)} instances of {n} jobs, compared with {kind}")

    ils_sched = {}
    if methods:
        rows = {m: {"hit": 0, "gaps": [], "zero": [], "times": []} for m in methods}
        for k in bar(ks, "heuristics"):
            pb, best = problems[k - 1], known[k - 1]
            for m in methods:
                fn = _method(m, args.ils_time, args.seed, args.ils_iters)
                times, value = [], None
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    sched = fn(pb)
                    times.append(time.perf_counter() - t0)
                    errs = hetero.check(pb, sched)
                    if errs:
                        raise SystemExit(f"{m} on instance {k}: infeasible schedule: {errs[:3]}")
                    value = hetero.weighted_tardiness(pb, sched)
                if m == "ils":
                    ils_sched[k] = sched
                r = rows[m]
                r["hit"] += value <= best + 1e-9
                r["gaps"].append(gap(value, best))
                if best == 0:
                    r["zero"].append(value == 0)
                r["times"].append(statistics.median(times))
        print()
        print(f"Heuristics (ILS limit {args.ils_time:g} s, seed {args.seed})")
        print("| method | known value reached | mean gap % | worst gap % | known = 0 reached | mean time s | max time s |")
        print("|---|---|---|---|---|---|---|")
        for m in methods:
            r = rows[m]
            print(f"| {m} | {r['hit']}/{len(ks)} | {_cells(r['gaps'], r['zero'])} | "
                  f"{statistics.fmean(r['times']):.3f} | {max(r['times']):.3f} |")

    if args.bound:
        gaps, zero, times, proved = [], [], [], 0
        for k in bar(ks, "bound"):
            pb, best = problems[k - 1], known[k - 1]
            upper = ils_sched.get(k) or heur.ils(pb, time_limit=args.ils_time, seed=args.seed)
            t0 = time.perf_counter()
            lb = bounds_hetero.lower_bound(pb, upper, time_limit=args.bound_time)
            times.append(time.perf_counter() - t0)
            if lb > best + 1e-6 * max(1.0, best) and kind == "known values":
                raise SystemExit(f"instance {k}: bound {lb} above the known value {best}")
            proved += lb >= best - 1e-9
            gaps.append((best - lb) / best if best > 0 else None)
            if best == 0:
                zero.append(lb == 0)
        print()
        print(f"Lower bound (time-indexed Lagrangian, limit {args.bound_time:g} s, given the ILS schedule)")
        print("| bound | reaches the known value | mean gap % | worst gap % | known = 0 | mean time s | max time s |")
        print("|---|---|---|---|---|---|---|")
        print(f"| Lagrangian | {proved}/{len(ks)} | {_cells(gaps, zero)} | {statistics.fmean(times):.3f} | "
              f"{max(times):.3f} |")

    if backends:
        ex = {b: {"opt": 0, "equal": 0, "below": [], "gaps": [], "times": [], "proven_t": [], "none": 0}
              for b in backends}
        for k in bar(ks, "exact"):
            pb, best = problems[k - 1], known[k - 1]
            for b in backends:
                res = solve_optimal(pb, backend=b, time_limit=args.exact_limit, workers=args.workers,
                                    seed=args.seed)
                e = ex[b]
                e["times"].append(res.runtime)
                if res.objective is None:
                    e["none"] += 1
                    continue
                if res.proven:
                    e["opt"] += 1
                    e["proven_t"].append(res.runtime)
                    if abs(res.objective - best) <= 1e-6 * max(1.0, best):
                        e["equal"] += 1
                    elif res.objective < best:
                        e["below"].append(k)
                    else:
                        raise SystemExit(f"{b} on instance {k}: proven optimum {res.objective} above the "
                                         f"known value {best}")
                elif res.gap is not None:
                    e["gaps"].append(res.gap)
                if res.lower_bound is not None and res.lower_bound > best + 1e-6 * max(1.0, best) \
                        and kind == "known values":
                    raise SystemExit(f"{b} on instance {k}: bound {res.lower_bound} above the known value {best}")
        print()
        print(f"Exact methods, {args.exact_limit:g} s per instance, {args.workers} worker(s)")
        print("| backend | proven optimal | proven = known value | mean proven gap % (unproven) "
              "| mean time s | max time s | median time proven s |")
        print("|---|---|---|---|---|---|---|")
        for b in backends:
            e = ex[b]
            g = f"{100 * statistics.fmean(e['gaps']):.2f}" if e["gaps"] else "-"
            med = f"{statistics.median(e['proven_t']):.2f}" if e["proven_t"] else "-"
            print(f"| {b} | {e['opt']}/{len(ks)} | {e['equal']}/{e['opt']} | {g} | "
                  f"{statistics.fmean(e['times']):.2f} | {max(e['times']):.2f} | {med} |")
            if e["below"]:
                print(f"(finding: {b} proved optima below the known value on instances {e['below']})")
            if e["none"]:
                print(f"({b}: no schedule on {e['none']} instance(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
