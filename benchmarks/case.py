"""CASE vs Slurm on MIG (CASE paper): Figures 1-4 and Table 2 of the paper, plus an exact bound.

Usage::

    python -m benchmarks.case                   # all figures, 5 seeds, bound on small batches
    python -m benchmarks.case --seeds 3 --no-bound --png fig4.png
    python -m benchmarks.case --figures 3 --quiet

Prints, per isolated:non-isolated ratio and configuration, the median over
seeds of CASE's throughput improvement (Slurm makespan / CASE makespan) and
job turnaround speed-up (Slurm mean turnaround / CASE's), as Figures 1
(A30, non-isolated footprints 1-6 GB), 2 (0.3-6 GB) and 3 (A100), and the
average over the mixed ratios (4:1 .. 1:4) that the paper quotes, and the
same average for an ablation of CASE without Algorithm 1's isolated-first
preference (``isolated_first=False``). Then the
memory-utilisation gain and CASE's mean task slowdown (Table 2), the
Figure 4 plot (memory utilisation over time, 1:4 batch of 128 jobs on
4 x A30) as a PNG, and for small batches how far each method of
``heuristics.case.METHODS`` (or those named by ``--methods``; an unknown
name is an error) is from the CP-SAT lower bound of :mod:`milp.case`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Sequence

from tqdm import tqdm

from heuristics import case as sim
from instances import case

PAPER = {  # mixed-ratio averages quoted in Sec. 3.2-3.3: (throughput, turnaround)
    1: (1.45, 1.39), 2: (1.53, 1.48), 3: (1.15, 2.31)}
FIGURES = {1: ("ABC", False, "A30, non-isolated footprints 1-6 GB"),
           2: ("ABC", True, "A30, non-isolated footprints 0.3-6 GB"),
           3: ("D", False, "A100, 2 x 2g.10gb + 3 x 1g.5gb")}
MIXED = case.RATIOS[1:-1]


def _bar(iterable, total: int, quiet: bool, desc: str):
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False, disable=quiet)


def sweep(figures: Sequence[int], seeds: int, quiet: bool) -> dict:
    """``{(fig, cfg, ratio): [compare() dict per seed]}``."""
    jobs = [(f, c, r, s) for f in figures for c in FIGURES[f][0] for r in case.RATIOS for s in range(seeds)]
    out: dict = {}
    for f, c, r, s in _bar(jobs, len(jobs), quiet, "simulating"):
        w = case.generate(c, r, seed=s, small=FIGURES[f][1])
        row = sim.compare(w)
        abl = sim.compare(w, isolated_first=False)
        row.update({f"fifo_{k}": abl[k] for k in ("throughput", "turnaround")})
        out.setdefault((f, c, r), []).append(row)
    return out


def _med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def print_figure(f: int, res: dict) -> dict[str, float]:
    cfgs, _, title = FIGURES[f]
    print(f"\nFigure {f}: {title}; CASE over Slurm, median of seeds (throughput x / turnaround x)")
    head = "| ratio | " + " | ".join(f"{c} thr | {c} tat" for c in cfgs) + " |"
    print(head)
    print("|" + "---|" * (1 + 2 * len(cfgs)))
    for r in case.RATIOS:
        cells = []
        for c in cfgs:
            rows = res[(f, c, r)]
            cells += [f"{_med(rows, 'throughput'):.2f}", f"{_med(rows, 'turnaround'):.2f}"]
        print(f"| {r} | " + " | ".join(cells) + " |")
    thr = statistics.mean(_med(res[(f, c, r)], "throughput") for c in cfgs for r in MIXED)
    tat = statistics.mean(_med(res[(f, c, r)], "turnaround") for c in cfgs for r in MIXED)
    mem = statistics.mean(_med(res[(f, c, r)], "mem_util") for c in cfgs for r in MIXED)
    print(f"mixed-ratio average: throughput {thr:.2f}x (paper {PAPER[f][0]}x), "
          f"turnaround {tat:.2f}x (paper {PAPER[f][1]}x), memory utilisation {mem:.2f}x")
    fthr = statistics.mean(_med(res[(f, c, r)], "fifo_throughput") for c in cfgs for r in MIXED)
    ftat = statistics.mean(_med(res[(f, c, r)], "fifo_turnaround") for c in cfgs for r in MIXED)
    print(f"ablation, CASE without the isolated-first preference: throughput {fthr:.2f}x, turnaround {ftat:.2f}x")
    return {"throughput": thr, "turnaround": tat, "mem_util": mem}


def print_utilisation(figures: Sequence[int], res: dict) -> None:
    print("\nMemory utilisation (time-averaged, CASE / Slurm, median of seeds); paper: 2.93x on A30")
    for f in figures:
        cfgs = FIGURES[f][0]
        print(f"Figure {f} workloads: " + ", ".join(
            f"{c} " + " ".join(f"{r}={_med(res[(f, c, r)], 'mem_util'):.2f}" for r in case.RATIOS) for c in cfgs))


def print_slowdown(res: dict) -> None:
    if not all((1, c, r) in res for c in "ABC" for r in ("1:4", "0:1")):
        return
    print("\nTable 2: mean task slowdown under CASE (%), median of seeds; paper: -1.7 .. 7.5, mean 2.2")
    cols = [(r, c) for c in "ABC" for r in ("1:4", "0:1")]
    vals = [100 * _med(res[(1, c, r)], "slowdown") for r, c in cols]
    print("| " + " | ".join(f"{r}-{c}" for r, c in cols) + " | Avg |")
    print("|" + "---|" * (len(cols) + 1))
    print("| " + " | ".join(f"{v:.1f}" for v in vals) + f" | {statistics.mean(vals):.1f} |")


def plot_figure4(path: str, seed: int) -> dict[str, float]:
    """Memory utilisation over time for the 1:4, 128-job batch on 4 x A30 (Figure 4)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = case.generate("C", "1:4", seed=seed)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    out = {}
    for policy, style in (("slurm", "-"), ("case", "-")):
        t = sim.simulate(w, policy)
        times, frac = case.memory_profile(w, t)
        ax.step(times, 100 * frac, where="post", linestyle=style, label=policy.upper() if policy == "case" else "Slurm")
        out[policy] = case.metrics(w, t)["mem_util"]
    ax.set_xlabel("time (s)")
    ax.set_ylabel("GPU memory in use (%)")
    ax.set_title("Memory utilisation, 1:4 batch of 128 jobs on 4 x A30 (config C)")
    ax.set_ylim(0, 100)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return out


def methods_from(names: str | None) -> list[str]:
    """Registry names from a comma list (``None``: all of :data:`heuristics.case.METHODS`).

    Raises ``ValueError`` naming an unknown method instead of dropping it.
    """
    if names is None:
        return list(sim.METHODS)
    chosen = [x.strip() for x in names.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in sim.METHODS]
    if unknown or not chosen:
        raise ValueError(f"unknown method(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(sim.METHODS)}")
    return chosen


def bound_table(n: int, seeds: int, time_limit: float, quiet: bool, methods: Sequence[str] = tuple(sim.METHODS)) -> None:
    from milp import solve_optimal

    cases = [(c, r, s) for c in ("A", "D") for r in ("1:1", "1:4", "0:1") for s in range(seeds)]
    print(f"\nExact reference (milp.case, CP-SAT, {time_limit:g} s, CASE packing rules, no worker limit, "
          f"no slowdown), batches of {n} jobs")
    print("| config | ratio | seed | status | LB (s) | OPT/UB (s) | " + " | ".join(f"{m} / LB" for m in methods)
          + " | Slurm-rules OPT (s) |")
    print("|---|---|---|---|---|---|" + "---|" * (len(methods) + 1))
    ratios: dict[str, list[float]] = {m: [] for m in methods}
    for c, r, s in _bar(cases, len(cases), quiet, "solving"):
        w = case.generate(c, r, n=n, seed=s)
        traces = {m: sim.METHODS[m](w) for m in methods}
        res = solve_optimal(w, time_limit=time_limit, workers=1)
        rs = solve_optimal(w, time_limit=time_limit, workers=1, rules="slurm")
        lb = res.lower_bound
        for m, t in traces.items():
            ratios[m].append(t.makespan / lb)
        srule = f"{rs.objective:.1f}" + ("" if rs.status.value == "OPTIMAL" else f" (LB {rs.lower_bound:.1f})")
        print(f"| {c} | {r} | {s} | {res.status} | {lb:.1f} | {res.objective:.1f} | "
              + " | ".join(f"{t.makespan / lb:.2f}" for t in traces.values()) + f" | {srule} |")
    print("median makespan / lower bound: " + ", ".join(f"{m} {statistics.median(v):.2f}" for m, v in ratios.items()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.case", description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="workloads per cell (default 5)")
    ap.add_argument("--figures", default="1,2,3", help="comma list of 1, 2, 3 (default all)")
    ap.add_argument("--png", default="case_fig4.png", help="Figure 4 output (default case_fig4.png)")
    ap.add_argument("--no-plot", action="store_true", help="skip Figure 4")
    ap.add_argument("--no-bound", action="store_true", help="skip the exact-bound table")
    ap.add_argument("--bound-n", type=int, default=12, help="batch size for the exact bound (default 12)")
    ap.add_argument("--bound-seeds", type=int, default=2, help="batches per cell for the bound (default 2)")
    ap.add_argument("--time-limit", type=float, default=5.0, help="CP-SAT seconds per solve (default 5)")
    ap.add_argument("--methods", help=f"comma list for the bound table (default all: {','.join(sim.METHODS)})")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    try:
        methods = methods_from(args.methods)
    except ValueError as e:
        ap.error(f"--methods: {e}")
    try:
        figures = sorted({int(x) for x in args.figures.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--figures must be a comma list of 1, 2, 3, got {args.figures!r}")
    if not figures or any(f not in FIGURES for f in figures):
        ap.error(f"--figures must be a comma list of 1, 2, 3, got {args.figures!r}")
    if args.seeds < 1 or args.bound_seeds < 1:
        ap.error("--seeds and --bound-seeds must be >= 1")
    if not 2 <= args.bound_n <= 40:
        ap.error("--bound-n must be in 2..40 (the exact model is for small batches)")
    if not args.time_limit > 0:
        ap.error("--time-limit must be > 0")

    res = sweep(figures, args.seeds, args.quiet)
    for f in figures:
        print_figure(f, res)
    print_utilisation(figures, res)
    print_slowdown(res)
    if not args.no_plot:
        util = plot_figure4(args.png, seed=0)
        print(f"\nFigure 4 written to {args.png}: time-averaged memory utilisation "
              f"Slurm {100 * util['slurm']:.1f} %, CASE {100 * util['case']:.1f} % "
              f"({util['case'] / util['slurm']:.2f}x)")
    if not args.no_bound:
        bound_table(args.bound_n, args.bound_seeds, args.time_limit, args.quiet, methods)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
