"""Experiments of the real-time partitioning paper (Sec. 7): Figures 5-9 as tables and PNG plots.

For each task-set size ``n`` (50 and 200 by default) and total utilisation
``U`` on ``M = 68`` SMs, ``--reps`` task sets are drawn with the Sec. 7.1
generator (``prm = 0.5``) and every heuristic of ``heuristics.realtime.METHODS``
(or those named by ``--methods``) is run:

- schedulability rate (Fig. 5, 7): share of task sets a heuristic fits in
  ``M`` SMs (1G: one 68-SM partition under EDF). ``1G_fluid`` is the
  utilisation bound ``sum C^c_i(1)/T_i <= M``, which is what the paper's 1G
  curve appears to use (see ``heuristics.realtime.one_gpu_fluid``);
- scheduled load (Fig. 6, 8): ``sum C_i(T(P), 1)/T_i`` over the successful
  runs, divided by the worst load (every task in conflict); ``best`` is the
  no-conflict load, so ``best`` <= value <= 1;
- number of partitions (Sec. 7.2 text) over the successful runs;
- analysis time (Fig. 9): median milliseconds per task set;
- gap to the exact optimum on small sets: heuristics run until no merge is
  valid (``target=0``) vs the minimum total SMs (``milp.realtime``,
  enumeration with the same test).

Run ``python -m benchmarks.realtime`` (a few minutes) or with ``--reps 100``
and ``--step 2`` for the paper's full sweep. Timings are wall-clock on a
shared machine.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np

from heuristics import realtime as h
from instances import realtime as rt
from milp.realtime import solve

#: The heuristics of every table, from the family's registry (``--methods`` picks some).
METHODS = list(h.METHODS)
DEFAULT_UTILS = {50: [30, 35, 40, 45, 50, 55, 60], 200: [34, 36, 38, 40, 42, 44, 46]}


def task_seed(base: int, n: int, util: float, rep: int) -> int:
    """Seed of one task set, reproducible on any machine."""
    ss = np.random.SeedSequence([base, n, int(round(util * 1000)), rep])
    return int(ss.generate_state(1)[0])


def methods_from(names: str | None) -> list[str]:
    """The heuristics named in a comma list (all of :data:`heuristics.realtime.METHODS` for ``None``).

    Raises ``ValueError`` naming an unknown heuristic instead of dropping it.
    """
    if names is None:
        return list(METHODS)
    chosen = [x.strip() for x in names.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in h.METHODS]
    if unknown or not chosen:
        raise ValueError(f"unknown heuristic(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(h.METHODS)}")
    return chosen


def _partitioning(methods: list[str]) -> list[str]:
    return [m for m in methods if m != "1G"]


def sweep(n: int, utils: list[float], reps: int, sms: int, prm: float, test: str, seed: int,
          bar=None, methods: list[str] | None = None) -> dict[float, dict[str, dict[str, list]]]:
    """Run every heuristic on ``reps`` task sets per utilisation."""
    methods = METHODS if methods is None else methods
    out: dict[float, dict[str, dict[str, list]]] = {}
    for u in utils:
        row = {name: {"ok": [], "load": [], "parts": [], "ms": []} for name in methods + ["1G_fluid"]}
        row["_bounds"] = {"best": [], "worst": []}
        for r in range(reps):
            p = rt.generate(n=n, utilization=u, sms=sms, prm=prm, seed=task_seed(seed, n, u, r))
            best, worst = rt.utilization_bounds(p)
            row["_bounds"]["best"].append(best / worst)
            row["_bounds"]["worst"].append(1.0)
            row["1G_fluid"]["ok"].append(h.one_gpu_fluid(p))
            for name in methods:
                res = h.run(p, name, test=test)
                rec = row[name]
                rec["ok"].append(res.success)
                rec["ms"].append(1000 * res.runtime)
                if res.success:
                    errors = rt.check(p, res.solution)
                    if errors:
                        raise AssertionError(f"{name} returned an infeasible solution: {errors[0]}")
                    rec["load"].append(rt.scheduled_utilization(p, res.solution) / worst)
                    rec["parts"].append(len(res.solution.partitions))
            if bar is not None:
                bar.update(1)
        out[u] = row
    return out


def _mean(xs: list) -> float:
    return float(np.mean(xs)) if xs else math.nan


def _fmt(x: float, nd: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def report(n: int, res: dict, reps: int, methods: list[str] | None = None) -> tuple[str, dict[str, dict]]:
    """Tables for one task-set size; also returns the series for plotting."""
    methods = METHODS if methods is None else methods
    part = _partitioning(methods)
    utils = list(res)
    series: dict[str, dict] = {"sched": {}, "load": {}, "parts": {}, "ms": {}}
    cols = methods + ["1G_fluid"]
    for name in cols:
        series["sched"][name] = [_mean(res[u][name]["ok"]) for u in utils]
    for name in methods:
        series["load"][name] = [_mean(res[u][name]["load"]) for u in utils]
        series["parts"][name] = [_mean(res[u][name]["parts"]) for u in utils]
        series["ms"][name] = [statistics.median(res[u][name]["ms"]) for u in utils]
    series["load"]["Best"] = [_mean(res[u]["_bounds"]["best"]) for u in utils]
    series["load"]["Worst"] = [1.0 for _ in utils]
    fig = {50: "Fig. 5", 200: "Fig. 7"}.get(n, "schedulability")
    out = [f"### n = {n} tasks: schedulability rate ({fig}; {reps} task sets per point)\n",
           table(["U"] + cols, [[f"{u:g}"] + [_fmt(series['sched'][c][k]) for c in cols]
                                for k, u in enumerate(utils)]),
           f"\n### n = {n}: scheduled load / worst load (Fig. 6, 8; successful runs; best = no conflict)\n",
           table(["U", "best"] + methods,
                 [[f"{u:g}", _fmt(series['load']['Best'][k])]
                  + [_fmt(series['load'][c][k]) for c in methods]
                  for k, u in enumerate(utils)]),
           f"\n### n = {n}: mean number of partitions (successful runs)\n",
           table(["U"] + part,
                 [[f"{u:g}"] + [_fmt(series['parts'][c][k], 1) for c in part]
                  for k, u in enumerate(utils)]),
           f"\n### n = {n}: analysis time, median ms per task set (Fig. 9)\n",
           table(["U"] + methods,
                 [[f"{u:g}"] + [_fmt(series['ms'][c][k], 1) for c in methods]
                  for k, u in enumerate(utils)])]
    return "\n".join(out), series


def gap_experiment(n: int, utils: list[float], reps: int, sms: int, prm: float, test: str,
                   seed: int, bar=None, methods: list[str] | None = None) -> str:
    """Heuristics (merging until no valid merge) vs the exact minimum total SMs."""
    part = _partitioning(METHODS if methods is None else methods)
    rows = []
    for u in utils:
        opt, opt_density, ratios = [], [], {name: [] for name in part}
        hits = {name: 0 for name in part}
        for r in range(reps):
            p = rt.generate(n=n, utilization=u, sms=sms, prm=prm, seed=task_seed(seed + 1, n, u, r))
            exact = solve(p, backend="enumerate", test=test, capacity=False)
            dens = solve(p, backend="cpsat", test="density", capacity=False, time_limit=30)
            if bar is not None:
                bar.update(1)
            if exact.objective is None:
                continue
            opt.append(exact.objective)
            if dens.objective is not None:
                opt_density.append(dens.objective / exact.objective)
            for name in part:
                res = h.run(p, name, test=test, target=0)
                if res.solution is None:
                    continue
                assert res.solution.total_sms >= exact.objective
                ratios[name].append(res.solution.total_sms / exact.objective)
                hits[name] += res.solution.total_sms == exact.objective
        k = len(opt)
        rows.append([f"{u:g}", str(k), _fmt(_mean(opt), 1), _fmt(_mean(opt_density), 3)]
                    + [f"{_fmt(_mean(ratios[c]), 3)} ({hits[c]}/{k})" for c in part])
    head = (f"### Gap to the exact optimum: n = {n}, test = {test}; mean heuristic SMs / "
            f"optimal SMs (optimal in x/k sets)\n")
    return head + "\n" + table(["U", "sets", f"OPT ({test})", "OPT density / OPT"] + part, rows)


def plot(all_series: dict[int, dict], utils: dict[int, list], out: Path) -> list[Path]:
    """PNG plots (Agg backend), one per metric, one panel per task-set size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {"sched": "Schedulability rate", "load": "Scheduled load / worst load",
              "parts": "Number of partitions", "ms": "Analysis time (ms, median)"}
    paths = []
    out.mkdir(parents=True, exist_ok=True)
    for metric, title in titles.items():
        fig, axes = plt.subplots(1, len(all_series), figsize=(5.5 * len(all_series), 4),
                                 squeeze=False)
        for ax, (n, series) in zip(axes[0], all_series.items()):
            for name, ys in series[metric].items():
                style = "--" if name in ("Best", "Worst", "1G_fluid") else "-"
                ax.plot(utils[n], ys, style, marker="o", ms=3, label=name)
            ax.set_title(f"{title}, n = {n}")
            ax.set_xlabel("Total utilization")
            if metric == "ms":
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"realtime_{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.realtime", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 200], help="task-set sizes")
    ap.add_argument("--utils", type=float, nargs="+", help="total utilisations (same for every n)")
    ap.add_argument("--step", type=float, help="utilisation step over the default range")
    ap.add_argument("--reps", type=int, default=3, help="task sets per point (paper: 100)")
    ap.add_argument("--sms", type=int, default=68)
    ap.add_argument("--prm", type=float, default=0.5)
    ap.add_argument("--test", choices=rt.TESTS, default="demand")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gap-n", type=int, default=8, help="tasks per set in the gap experiment (0: skip)")
    ap.add_argument("--gap-utils", type=float, nargs="+", default=[4, 8, 12])
    ap.add_argument("--gap-reps", type=int, default=5)
    ap.add_argument("--out", default="results/realtime", help="folder for the PNG plots")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--methods", help=f"comma list of heuristics (default all: {','.join(METHODS)})")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        methods = methods_from(args.methods)
    except ValueError as exc:
        ap.error(f"--methods: {exc}")
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    if any(n < 1 for n in args.n):
        ap.error("--n must be >= 1")
    if args.sms < 1:
        ap.error("--sms must be >= 1")
    if not 0 <= args.prm <= 1:
        ap.error("--prm must be in [0, 1]")
    if args.utils is not None and any(u <= 0 for u in args.utils):
        ap.error("--utils must be > 0")
    if args.step is not None and args.step <= 0:
        ap.error("--step must be > 0")
    if not 0 <= args.gap_n <= 12:
        ap.error("--gap-n must be in 0..12 (exact enumeration is O(3^n))")
    if args.gap_reps < 1 or any(u <= 0 for u in args.gap_utils):
        ap.error("--gap-reps must be >= 1 and --gap-utils > 0")

    utils: dict[int, list[float]] = {}
    for n in args.n:
        if args.utils:
            utils[n] = list(args.utils)
        else:
            lo, hi = DEFAULT_UTILS.get(n, DEFAULT_UTILS[50])[0], DEFAULT_UTILS.get(n, DEFAULT_UTILS[50])[-1]
            utils[n] = (list(np.arange(lo, hi + 1e-9, args.step)) if args.step
                        else DEFAULT_UTILS.get(n, DEFAULT_UTILS[50]))
    total = sum(len(u) for u in utils.values()) * args.reps
    total += (len(args.gap_utils) * args.gap_reps) if args.gap_n else 0
    from tqdm import tqdm

    bar = tqdm(total=total, disable=args.quiet, file=sys.stderr, desc="realtime")
    print(f"# Real-time partitioning experiments: M = {args.sms} SMs, prm = {args.prm}, test = {args.test}, "
          f"{args.reps} task sets per point, seed {args.seed}\n")
    all_series = {}
    try:
        for n in args.n:
            try:
                res = sweep(n, utils[n], args.reps, args.sms, args.prm, args.test, args.seed, bar, methods)
            except rt.RealtimeError as exc:
                ap.error(str(exc))
            text, series = report(n, res, args.reps, methods)
            all_series[n] = series
            print(text + "\n", flush=True)
        if args.gap_n:
            print(gap_experiment(args.gap_n, args.gap_utils, args.gap_reps, args.sms, args.prm,
                                 args.test, args.seed, bar, methods) + "\n", flush=True)
    finally:
        bar.close()
    if not args.no_plots:
        paths = plot(all_series, utils, Path(args.out))
        print("plots: " + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
