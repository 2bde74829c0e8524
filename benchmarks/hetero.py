"""Heterogeneous-GPU comparison: the seed's heuristics and ILS against the optimum.

``python -m benchmarks.hetero`` generates small instances
(:func:`instances.hetero.generate`, n = 8..12 tasks on a T4 + V100 + A100-80GB
cluster by default), solves each exactly with CP-SAT, and prints per n and
method: how often the method reaches the optimum, the mean gap
(value - OPT) / max(OPT, 1), the mean deadline miss rate (eq. 10), the mean
utilisation (eq. 12) and the mean time.

Examples
--------
``python -m benchmarks.hetero --quiet``
``python -m benchmarks.hetero --n 8,10,12 --seeds 10 --gpus T4,L4,H100``
"""

from __future__ import annotations

import statistics
import sys
import time

from benchmarks import common
from instances import hetero
from heuristics import hetero as heur
from milp import solve_optimal

METHODS = ("fifo", "greedy", "sagreedy", "ils")


def main(argv: list[str] | None = None) -> int:
    parser = common.Parser(prog="python -m benchmarks.hetero", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="8,9,10,11,12", help="task counts, comma-separated")
    parser.add_argument("--seeds", type=int, default=5, help="instances per n (seeds 0..k-1)")
    parser.add_argument("--gpus", default="T4,V100,A100-80GB", help=f"GPU models of the cluster, comma-separated, from {', '.join(hetero.GPU_MODELS)}")
    parser.add_argument("--tightness", type=float, default=0.6, help="tardiness factor TF in [0, 1]")
    parser.add_argument("--rdd", type=float, default=0.6, help="relative range of due dates in (0, 1]")
    parser.add_argument("--time-limit", type=float, default=60.0, help="CP-SAT limit per instance (s)")
    parser.add_argument("--ils-time", type=float, default=0.5, help="ILS time limit per instance (s)")
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT threads")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, table only")
    args = parser.parse_args(argv)
    try:
        ns = [int(x) for x in args.n.split(",") if x]
    except ValueError:
        parser.error(f"--n: expected integers like 8,10,12, got {args.n!r}")
    if not ns or any(n < 1 for n in ns) or args.seeds < 1:
        parser.error("--n values and --seeds must be >= 1")
    gpus = [g for g in args.gpus.split(",") if g]
    bad = [g for g in gpus if g not in hetero.GPU_MODELS]
    if bad or not gpus:
        parser.error(f"--gpus: unknown {', '.join(bad) or '(none)'}; known: {', '.join(hetero.GPU_MODELS)}")
    if not 0 <= args.tightness <= 1 or not 0 < args.rdd <= 1:
        parser.error("--tightness must be in [0, 1] and --rdd in (0, 1]")
    if args.time_limit <= 0 or args.ils_time <= 0 or args.workers < 1:
        parser.error("--time-limit, --ils-time and --workers must be positive")

    jobs = [(n, s) for n in ns for s in range(args.seeds)]
    if not args.quiet:
        from tqdm import tqdm
        jobs = tqdm(jobs, desc="instances", file=sys.stderr, leave=False)
    stats: dict[tuple[int, str], dict[str, list]] = {}
    unproven = 0
    for n, seed in jobs:
        pb = hetero.generate(n, gpus=gpus, tightness=args.tightness, rdd=args.rdd, seed=seed)
        hint = heur.ils(pb, time_limit=args.ils_time, seed=seed)
        res = solve_optimal(pb, backend="cpsat", time_limit=args.time_limit, workers=args.workers,
                            hint=hint)
        if not res.proven:
            unproven += 1
            continue
        opt = res.objective
        entries = [("OPT (CP-SAT)", res.schedule, res.runtime)]
        for m in METHODS:
            t0 = time.perf_counter()
            if m == "ils":
                sched = heur.ils(pb, time_limit=args.ils_time, seed=seed)
            elif m == "sagreedy":
                sched = heur.sagreedy(pb, seed=seed)
            else:
                sched = heur.METHODS[m](pb)
            entries.append((m, sched, time.perf_counter() - t0))
        for m, sched, dt in entries:
            errs = hetero.check(pb, sched)
            if errs:
                raise SystemExit(f"{m} n={n} seed={seed}: infeasible schedule: {errs[:3]}")
            val = hetero.weighted_tardiness(pb, sched)
            if val < opt - 1e-6:
                raise SystemExit(f"{m} n={n} seed={seed}: {val} below the proven optimum {opt}")
            mt = hetero.metrics(pb, sched)
            st = stats.setdefault((n, m), {"hit": [], "gap": [], "dmr": [], "eta": [], "t": []})
            st["hit"].append(val <= opt + 1e-6)
            st["gap"].append((val - opt) / max(opt, 1.0))
            st["dmr"].append(mt.dmr)
            st["eta"].append(mt.utilisation)
            st["t"].append(dt)
    print(f"Heterogeneous comparison: cluster {'+'.join(gpus)}, TF {args.tightness:g}, RDD {args.rdd:g}, "
          f"{args.seeds} seeds per n")
    print("| n | method | optimum reached | mean gap % | mean DMR | mean eta | mean time s |")
    print("|---|---|---|---|---|---|---|")
    for (n, m), st in stats.items():
        print(f"| {n} | {m} | {sum(st['hit'])}/{len(st['hit'])} | {100 * statistics.fmean(st['gap']):.1f} | "
              f"{statistics.fmean(st['dmr']):.2f} | {statistics.fmean(st['eta']):.2f} | "
              f"{statistics.fmean(st['t']):.3f} |")
    if unproven:
        print(f"({unproven} instance(s) not proven optimal within {args.time_limit:g} s were left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
