"""Experiments of the real-time partitioning paper (Sec. 7): Figures 5-9 as tables and PNG plots.

For each task-set size ``n`` (50 and 200 by default) and total utilisation
``U`` on ``M = --sms`` SMs (68, the paper's RTX 2080 Ti), ``--reps`` task
sets are drawn with the Sec. 7.1 generator (a task is memory-intensive with
probability ``--prm``) and every heuristic of ``heuristics.realtime.METHODS``
(or those named by ``--methods``; an unknown name is an error) is run:

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

It prints the tables (``--markdown``: only those the README shows) and
writes four PNG plots, ``realtime_sched.png``, ``realtime_load.png``,
``realtime_parts.png`` and ``realtime_ms.png``, into ``--out`` (default
``results/realtime``, created if missing; ``--no-plots`` skips them).
The default run takes about a minute on a 2-core machine; the paper's sweep
(``--reps 100 --step 2``) takes hours. Timings are
wall-clock on a shared machine. Every task set is one task of
:mod:`benchmarks.executor` (``--executor``, ``--jobs``); with ``--out``
each is recorded as it finishes and the same command run again resumes.

Examples
--------
::

    python -m benchmarks.realtime
    python -m benchmarks.realtime --reps 10 --step 2 --gap-reps 10 --markdown
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

import numpy as np

from benchmarks import common
from benchmarks import executor as ex
from heuristics import realtime as h
from instances import realtime as rt
from milp.realtime import solve

#: The heuristics of every table, from the family's registry (``--methods`` picks some).
METHODS = list(h.METHODS)
DEFAULT_UTILS = {50: [30, 35, 40, 45, 50, 55, 60], 200: [34, 36, 38, 40, 42, 44, 46]}
#: Where the plots go without ``--out``.
PLOTS = Path("results/realtime")
#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 1 minute"
#: Largest task set of ``--n`` (the paper's are 50 and 200): every heuristic on one set of 500 tasks takes
#: about 40 s on a 2-core machine, on 1,000 tasks minutes and 1.6 GB.
MAX_N = 500
#: Most utilisation points ``--step`` may make over a range.
MAX_POINTS = 1000
_util = common.number(0, rt.MAX_SMS, above=True, why="a total utilisation is at most the number of SMs")


def task_seed(base: int, n: int, util: float, rep: int) -> int:
    """Seed of one task set, reproducible on any machine."""
    ss = np.random.SeedSequence([base, n, int(round(util * 1000)), rep])
    return int(ss.generate_state(1)[0])


def _partitioning(methods: list[str]) -> list[str]:
    return [m for m in methods if m != "1G"]


def set_task(task: tuple) -> dict:
    """One task set of :func:`sweep` (an executor task): its load bounds, 1G_fluid and every heuristic."""
    n, u, r, sms, prm, test, seed, methods = task
    p = rt.generate(n=n, utilization=u, sms=sms, prm=prm, seed=task_seed(seed, n, u, r))
    best, worst = rt.utilization_bounds(p)
    out = {"best": best / worst, "fluid": bool(h.one_gpu_fluid(p)), "methods": {}}
    for name in methods:
        res = h.run(p, name, test=test)
        rec = {"ok": bool(res.success), "ms": 1000 * res.runtime, "load": None, "parts": None}
        if res.success:
            errors = rt.check(p, res.solution)
            if errors:
                raise AssertionError(f"{name} returned an infeasible solution: {errors[0]}")
            rec["load"] = rt.scheduled_utilization(p, res.solution) / worst
            rec["parts"] = len(res.solution.partitions)
        out["methods"][name] = rec
    return out


def _map(executor: ex.Executor | None, fn, tasks: list, bar, what: str) -> list:
    """``executor.map(fn, tasks)`` (a failed task's place holds its ``Failed``), with ``bar`` moved past them."""
    quiet = bar is None or getattr(bar, "disable", True)
    results = (executor or ex.Executor()).map(fn, tasks, quiet=quiet, desc=what, unit="set",
                                              label=lambda t: f"n={t[0]} U={t[1]:g} set {t[2]}")
    if bar is not None:
        bar.update(len(tasks))
    return results


def sweep(n: int, utils: list[float], reps: int, sms: int, prm: float, test: str, seed: int,
          bar=None, methods: list[str] | None = None,
          executor: ex.Executor | None = None) -> dict[float, dict[str, dict[str, list]]]:
    """Run every heuristic on ``reps`` task sets per utilisation (one executor task per set; a set whose
    task failed in a command's sweep is left out, and the command lists it)."""
    methods = METHODS if methods is None else methods
    tasks = [(n, u, r, sms, prm, test, seed, tuple(methods)) for u in utils for r in range(reps)]
    results = _map(executor, set_task, tasks, bar, f"n={n}")
    out: dict[float, dict[str, dict[str, list]]] = {}
    for k, u in enumerate(utils):
        row = {name: {"ok": [], "load": [], "parts": [], "ms": []} for name in methods + ["1G_fluid"]}
        row["_bounds"] = {"best": [], "worst": []}
        for res in ex.succeeded(results[k * reps:(k + 1) * reps]):
            row["_bounds"]["best"].append(res["best"])
            row["_bounds"]["worst"].append(1.0)
            row["1G_fluid"]["ok"].append(res["fluid"])
            for name in methods:
                got, rec = res["methods"][name], row[name]
                rec["ok"].append(got["ok"])
                rec["ms"].append(got["ms"])
                if got["ok"]:
                    rec["load"].append(got["load"])
                    rec["parts"].append(got["parts"])
        out[u] = row
    return out


def _mean(xs: list) -> float:
    return float(np.mean(xs)) if xs else math.nan


def _fmt(x: float, nd: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


table = common.markdown_table


def report(n: int, res: dict, reps: int, methods: list[str] | None = None,
           markdown: bool = False) -> tuple[str, dict[str, dict]]:
    """Tables for one task-set size (``markdown``: only the README's schedulability table); also returns
    the series for plotting."""
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
        series["ms"][name] = [statistics.median(res[u][name]["ms"]) if res[u][name]["ms"] else math.nan
                              for u in utils]
    series["load"]["Best"] = [_mean(res[u]["_bounds"]["best"]) for u in utils]
    series["load"]["Worst"] = [1.0 for _ in utils]
    fig = {50: "Fig. 5", 200: "Fig. 7"}.get(n, "schedulability")
    if markdown:
        where = {50: " (Fig. 5)", 200: " (Fig. 7)"}.get(n, "")
        return "\n".join([f"Schedulability rate, n = {n}{where}, {reps} task set{'s' if reps > 1 else ''} per point:", "",
                          table(["U"] + cols, [[f"{u:g}"] + [_fmt(series['sched'][c][k]) for c in cols]
                                               for k, u in enumerate(utils)])]), series
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


def gap_task(task: tuple) -> dict | None:
    """One task set of :func:`gap_experiment` (an executor task): the exact minimum total SMs, the density
    test's, and each heuristic's total SMs (``None`` when the set has no valid partitioning)."""
    n, u, r, sms, prm, test, seed, part = task
    p = rt.generate(n=n, utilization=u, sms=sms, prm=prm, seed=task_seed(seed + 1, n, u, r))
    exact = solve(p, backend="enumerate", test=test, capacity=False)
    dens = solve(p, backend="cpsat", test="density", capacity=False, time_limit=30)
    if exact.objective is None:
        return None
    out = {"opt": exact.objective, "density": dens.objective, "sms": {}}
    for name in part:
        res = h.run(p, name, test=test, target=0)
        if res.solution is None:
            continue
        assert res.solution.total_sms >= exact.objective
        out["sms"][name] = res.solution.total_sms
    return out


def gap_experiment(n: int, utils: list[float], reps: int, sms: int, prm: float, test: str,
                   seed: int, bar=None, methods: list[str] | None = None, markdown: bool = False,
                   executor: ex.Executor | None = None) -> str:
    """Heuristics (merging until no valid merge) vs the exact minimum total SMs (one executor task per set)."""
    part = _partitioning(METHODS if methods is None else methods)
    tasks = [(n, u, r, sms, prm, test, seed, tuple(part)) for u in utils for r in range(reps)]
    results = _map(executor, gap_task, tasks, bar, "gap")
    rows = []
    for j, u in enumerate(utils):
        opt, opt_density, ratios = [], [], {name: [] for name in part}
        hits = {name: 0 for name in part}
        for got in ex.succeeded(results[j * reps:(j + 1) * reps]):
            if got is None:
                continue
            opt.append(got["opt"])
            if got["density"] is not None:
                opt_density.append(got["density"] / got["opt"])
            for name, total in got["sms"].items():
                ratios[name].append(total / got["opt"])
                hits[name] += total == got["opt"]
        k = len(opt)
        rows.append([f"{u:g}", str(k), _fmt(_mean(opt), 1), _fmt(_mean(opt_density), 3)]
                    + [f"{_fmt(_mean(ratios[c]), 3)} ({hits[c]}/{k})" for c in part])
    head = (f"Gap to the exact minimum number of SMs (n = {n}, {test} test, {reps} sets per row; mean "
            f"heuristic SMs / optimal SMs, sets where the heuristic is optimal in brackets):\n"
            if markdown else f"### Gap to the exact optimum: n = {n}, test = {test}; mean heuristic SMs / "
                             f"optimal SMs (optimal in x/k sets)\n")
    return head + "\n" + table(["U", "sets", f"OPT ({test})", "OPT density / OPT"] + part, rows)


#: Line styles of the plotted series: distinct marker, marker size and dash pattern for each, hollow
#: markers drawn largest first, so that series with identical values (SMS_ACT and SMS_INA often are)
#: stay visible as concentric markers on overlaid dashes instead of hiding each other.
_STYLES = [("o", 9, "-"), ("s", 7, "--"), ("^", 6, "-."), ("D", 4.5, ":"), ("v", 7.5, (0, (6, 2))),
           ("x", 6, (0, (3, 1, 1, 1))), ("*", 8, (0, (1, 2))), ("P", 5, (0, (8, 2, 2, 2)))]


def plot(all_series: dict[int, dict], utils: dict[int, list], out: Path) -> list[Path]:
    """PNG plots (Agg backend), one per metric, one panel per task-set size.

    A series without any data point (1G's load: it never schedules a set) is
    left out, legend entry included.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {"sched": "Schedulability rate", "load": "Scheduled load / worst load",
              "parts": "Number of partitions", "ms": "Analysis time (ms, median)"}
    paths = []
    out.mkdir(parents=True, exist_ok=True)
    # one colour and style per series name, the same in every plot
    names = list(dict.fromkeys(name for series in all_series.values() for per in series.values() for name in per))
    index = {name: i for i, name in enumerate(names)}
    for metric, title in titles.items():
        fig, axes = plt.subplots(1, len(all_series), figsize=(5.5 * len(all_series), 4),
                                 squeeze=False)
        for ax, (n, series) in zip(axes[0], all_series.items()):
            drawn = [(name, ys) for name, ys in series[metric].items()
                     if any(y is not None and not math.isnan(y) for y in ys)]
            for name, ys in drawn:
                i = index[name]
                marker, size, dash = _STYLES[i % len(_STYLES)]
                ax.plot(utils[n], ys, linestyle=dash, marker=marker, ms=size, mfc="none", mew=1.2,
                        lw=1.3, color=f"C{i % 10}", label=name, zorder=2 + i)
            ax.set_title(f"{title}, n = {n}")
            ax.set_xlabel("Total utilization")
            if metric == "ms":
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            if drawn:
                ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"realtime_{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = common.Parser(prog="python -m benchmarks.realtime", description=common.description(__doc__, DEFAULT_RUN))
    ap.add_argument("--n", type=common.integer(1, MAX_N), nargs="+", default=[50, 200],
                    help=f"task-set sizes, each at most {MAX_N:,}")
    ap.add_argument("--utils", type=_util, nargs="+",
                    help="total utilisations, the same for every n, each at most --sms (default: the paper's "
                         "range for n = 50 and n = 200, 30..60 and 34..46)")
    ap.add_argument("--step", type=_util,
                    help=f"utilisation step over the default range, at most {MAX_POINTS} points "
                         "(default: the paper's points)")
    ap.add_argument("--reps", type=common.count, default=3, help="task sets per point (the paper: 100)")
    ap.add_argument("--sms", type=common.integer(1, rt.MAX_SMS), default=68,
                    help=f"M, the GPU's number of streaming multiprocessors, at most {rt.MAX_SMS:,} "
                         "(the paper's RTX 2080 Ti has 68)")
    ap.add_argument("--prm", type=common.fraction, default=0.5,
                    help="prm of Sec. 7.1: the probability that a generated task is memory-intensive "
                         "(the others are compute-intensive)")
    ap.add_argument("--test", choices=rt.TESTS, default="demand",
                    help="EDF schedulability test on each partition: exact processor demand, or density")
    ap.add_argument("--seed", type=common.seed, default=0, help="base seed of the task sets")
    ap.add_argument("--gap-n", type=common.integer(0, 12, "exact enumeration is O(3^n)"), default=8,
                    help="tasks per set in the gap-to-optimum experiment, at most 12 (exact enumeration is "
                         "O(3^n); 0: skip)")
    ap.add_argument("--gap-utils", type=_util, nargs="+", default=[4, 8, 12],
                    help="total utilisations of the gap experiment, each at most --sms")
    ap.add_argument("--gap-reps", type=common.count, default=5, help="task sets per gap utilisation")
    ap.add_argument("--out", type=common.output_dir, default=None,
                    help="folder for the PNG plots realtime_sched/_load/_parts/_ms.png and records.jsonl (every "
                         "task set as it finishes: the same command run again resumes from them), created if "
                         f"missing (default: none, the plots go to {PLOTS})")
    ap.add_argument("--no-plots", action="store_true", help="write no PNG")
    ap.add_argument("--methods", type=common.comma_choices(h.METHODS, "heuristic"), default=None,
                    help=f"comma list from heuristics.realtime.METHODS (default: all, {','.join(METHODS)})")
    ex.add_arguments(ap, out=False)
    common.add_markdown(ap)
    common.add_quiet(ap)
    args = ap.parse_args(argv)
    methods = args.methods or list(METHODS)
    for name, values in (("--utils", args.utils or []), ("--gap-utils", args.gap_utils)):
        if any(u > args.sms for u in values):  # a demand above M SMs' capacity: nothing to schedule
            ap.error(f"{name}: a total utilisation above --sms {args.sms} cannot be scheduled, "
                     f"got {max(values):g}")

    utils: dict[int, list[float]] = {}
    for n in args.n:
        if args.utils:
            utils[n] = list(args.utils)
        else:
            lo, hi = DEFAULT_UTILS.get(n, DEFAULT_UTILS[50])[0], DEFAULT_UTILS.get(n, DEFAULT_UTILS[50])[-1]
            if args.step and (hi - lo) / args.step + 1 > MAX_POINTS:
                ap.error(f"--step: {args.step:g} makes more than {MAX_POINTS} points over {lo:g}..{hi:g}")
            utils[n] = (list(np.arange(lo, hi + 1e-9, args.step)) if args.step
                        else DEFAULT_UTILS.get(n, DEFAULT_UTILS[50]))
    executor = ex.from_args(ap, args)
    total = sum(len(u) for u in utils.values()) * args.reps
    total += (len(args.gap_utils) * args.gap_reps) if args.gap_n else 0
    bar = common.progress(total=total, quiet=args.quiet, desc="realtime", unit="set")
    if not args.markdown:
        print(f"# Real-time partitioning experiments: M = {args.sms} SMs, prm = {args.prm}, "
              f"test = {args.test}, {args.reps} task sets per point, seed {args.seed}\n")
    all_series = {}
    try:
        for n in args.n:
            try:
                res = sweep(n, utils[n], args.reps, args.sms, args.prm, args.test, args.seed, bar, methods,
                            executor)
            except rt.RealtimeError as exc:
                ap.error(str(exc))
            text, series = report(n, res, args.reps, methods, args.markdown)
            all_series[n] = series
            print(text + "\n", flush=True)
        if args.gap_n:
            print(gap_experiment(args.gap_n, args.gap_utils, args.gap_reps, args.sms, args.prm,
                                 args.test, args.seed, bar, methods, args.markdown, executor) + "\n", flush=True)
    finally:
        bar.close()
    if not args.no_plots:
        with common.writing(ap, "--out"):
            paths = plot(all_series, utils, args.out or PLOTS)
        print("plots: " + ", ".join(str(p) for p in paths), file=sys.stderr if args.markdown else sys.stdout)
    return 0


if __name__ == "__main__":
    common.run_cli(main)
