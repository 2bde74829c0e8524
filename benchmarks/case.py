"""CASE vs Slurm on MIG (CASE paper): Figures 1-4 and Table 2 of the paper, plus an exact bound.

Usage::

    python -m benchmarks.case                   # all figures, 5 seeds, bound on small batches
    python -m benchmarks.case --markdown        # only the tables the README shows
    python -m benchmarks.case --seeds 3 --no-bound --png fig4.png
    python -m benchmarks.case --figures 3 --quiet
    python -m benchmarks.case --jobs 2 --out results/case   # records; the same line again resumes

Prints, per isolated:non-isolated ratio and configuration, the median over
seeds of CASE's throughput improvement (Slurm makespan / CASE makespan) and
job turnaround speed-up (Slurm mean turnaround / CASE's), as Figures 1
(A30, non-isolated footprints 1-6 GB), 2 (0.3-6 GB) and 3 (A100), and the
average over the mixed ratios (4:1 .. 1:4) that the paper quotes, and the
same average for an ablation of CASE without Algorithm 1's isolated-first
preference (``isolated_first=False``). Then the
memory-utilisation gain and CASE's mean task slowdown (Table 2), the
Figure 4 plot (memory utilisation over time, 1:4 batch of 128 jobs on
4 x A30) as a PNG (``--png``, default ``case_fig4.png`` in the current
folder), and for small batches how far each method of
``heuristics.case.METHODS`` (or those named by ``--methods``; an unknown
name is an error) is from the CP-SAT lower bound of :mod:`milp.case`.
The default run takes about a minute.

Every simulated batch and every exact solve is one task of
:mod:`benchmarks.executor` (``--executor``, ``--jobs``); with ``--out DIR``
each is recorded in ``DIR/records.jsonl`` as it finishes and the same
command run again resumes from them (``--fresh`` starts over). A task that
fails is left out of the tables and listed, and the command exits 1.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Sequence

from benchmarks import common
from benchmarks import executor as ex
from heuristics import case as sim
from instances import case

PAPER = {  # mixed-ratio averages quoted in Sec. 3.2-3.3: (throughput, turnaround)
    1: (1.45, 1.39), 2: (1.53, 1.48), 3: (1.15, 2.31)}
FIGURES = {1: ("ABC", False, "A30, non-isolated footprints 1-6 GB"),
           2: ("ABC", True, "A30, non-isolated footprints 0.3-6 GB"),
           3: ("D", False, "A100, 2 x 2g.10gb + 3 x 1g.5gb")}
MIXED = case.RATIOS[1:-1]


def sim_task(task: tuple[int, str, str, int]) -> dict[str, float]:
    """One batch of :func:`sweep` (an executor task): :func:`heuristics.case.compare` of CASE and Slurm,
    plus the ablation's ``fifo_throughput`` and ``fifo_turnaround`` (CASE without the isolated-first
    preference)."""
    f, c, r, s = task
    w = case.generate(c, r, seed=s, small=FIGURES[f][1])
    row = sim.compare(w)
    abl = sim.compare(w, isolated_first=False)
    row.update({f"fifo_{k}": abl[k] for k in ("throughput", "turnaround")})
    return row


def sweep(figures: Sequence[int], seeds: int, quiet: bool, executor: ex.Executor | None = None) -> dict:
    """``{(fig, cfg, ratio): [compare() dict per seed]}``, one executor task per batch (a batch whose task
    failed in a command's sweep is left out, and the command lists it)."""
    jobs = [(f, c, r, s) for f in figures for c in FIGURES[f][0] for r in case.RATIOS for s in range(seeds)]
    rows = (executor or ex.Executor()).map(sim_task, jobs, quiet=quiet, desc="simulating", unit="batch",
                                           label=lambda t: f"figure {t[0]} config {t[1]} ratio {t[2]} seed {t[3]}")
    out: dict = {(f, c, r): [] for f, c, r, _ in jobs}
    for (f, c, r, _), row in zip(jobs, rows):
        if not isinstance(row, ex.Failed):
            out[(f, c, r)].append(row)
    return out


def _med(rows: list[dict], key: str) -> float:
    """Median over the seeds (NaN when every seed's task failed)."""
    return statistics.median(r[key] for r in rows) if rows else float("nan")


def _mixed(res: dict, f: int, key: str) -> float:
    """Mean over the figure's configurations and the mixed ratios of the median over seeds (cells whose
    every seed failed are left out)."""
    cells = [_med(res[(f, c, r)], key) for c in FIGURES[f][0] for r in MIXED if res[(f, c, r)]]
    return statistics.mean(cells) if cells else float("nan")


def figure_table(f: int, res: dict) -> str:
    """One figure: per ratio and configuration, CASE over Slurm (throughput x, turnaround x)."""
    cfgs = FIGURES[f][0]
    header = ["ratio"] + [f"{c} {k}" for c in cfgs for k in ("thr", "tat")]
    rows = [[r] + [f"{_med(res[(f, c, r)], k):.2f}" if res[(f, c, r)] else "failed"
                   for c in cfgs for k in ("throughput", "turnaround")]
            for r in case.RATIOS]
    return common.markdown_table(header, rows)


def summary_table(figures: Sequence[int], res: dict) -> str:
    """The mixed-ratio averages of every figure beside the paper's."""
    rows = [[f"Fig. {f}, {FIGURES[f][2]}", f"{_mixed(res, f, 'throughput'):.2f}x",
             f"{_mixed(res, f, 'turnaround'):.2f}x", f"{PAPER[f][0]}x / {PAPER[f][1]}x"] for f in figures]
    return common.markdown_table(["mixed ratios 4:1 .. 1:4, CASE over Slurm", "throughput", "turnaround",
                                  "paper (thr / tat)"], rows)


def print_figure(f: int, res: dict) -> dict[str, float]:
    cfgs, _, title = FIGURES[f]
    print(f"\nFigure {f}: {title}; CASE over Slurm, median of seeds (throughput x / turnaround x)")
    print(figure_table(f, res))
    thr, tat, mem = (_mixed(res, f, k) for k in ("throughput", "turnaround", "mem_util"))
    print(f"mixed-ratio average: throughput {thr:.2f}x (paper {PAPER[f][0]}x), "
          f"turnaround {tat:.2f}x (paper {PAPER[f][1]}x), memory utilisation {mem:.2f}x")
    fthr, ftat = _mixed(res, f, "fifo_throughput"), _mixed(res, f, "fifo_turnaround")
    print(f"ablation, CASE without the isolated-first preference: throughput {fthr:.2f}x, turnaround {ftat:.2f}x")
    return {"throughput": thr, "turnaround": tat, "mem_util": mem}


def print_utilisation(figures: Sequence[int], res: dict) -> None:
    print("\nMemory utilisation (time-averaged, CASE / Slurm, median of seeds); paper: 2.93x on A30")
    for f in figures:
        cfgs = FIGURES[f][0]
        print(f"Figure {f} workloads: " + ", ".join(
            f"{c} " + " ".join(f"{r}={_med(res[(f, c, r)], 'mem_util'):.2f}" for r in case.RATIOS) for c in cfgs))


def slowdown_table(res: dict) -> str | None:
    """Table 2: CASE's mean task slowdown (%) on the Figure 1 workloads (None without Figure 1)."""
    if not all((1, c, r) in res for c in "ABC" for r in ("1:4", "0:1")):
        return None
    cols = [(r, c) for c in "ABC" for r in ("1:4", "0:1")]
    vals = [100 * _med(res[(1, c, r)], "slowdown") for r, c in cols]
    return common.markdown_table([f"{r}-{c}" for r, c in cols] + ["Avg"],
                                 [[f"{v:.1f}" for v in vals] + [f"{statistics.mean(vals):.1f}"]])


def print_slowdown(res: dict) -> None:
    table = slowdown_table(res)
    if table is not None:
        print("\nTable 2: mean task slowdown under CASE (%), median of seeds; paper: -1.7 .. 7.5, mean 2.2")
        print(table)


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


def bound_task(task: tuple[str, str, int, int, float, tuple[str, ...]]) -> dict:
    """One small batch of :func:`bound_table` (an executor task): every method's makespan and the exact
    solves under CASE's and under Slurm's packing rules (status, objective, lower bound)."""
    from milp import solve_optimal

    c, r, s, n, time_limit, methods = task
    w = case.generate(c, r, n=n, seed=s)
    makespans = {m: sim.METHODS[m](w).makespan for m in methods}
    res = solve_optimal(w, time_limit=time_limit, workers=1)
    rs = solve_optimal(w, time_limit=time_limit, workers=1, rules="slurm")
    return {"makespans": makespans, "status": str(res.status), "lb": res.lower_bound, "objective": res.objective,
            "slurm": {"status": str(rs.status), "lb": rs.lower_bound, "objective": rs.objective}}


def bound_table(n: int, seeds: int, time_limit: float, quiet: bool, methods: Sequence[str] = tuple(sim.METHODS),
                markdown: bool = False, executor: ex.Executor | None = None) -> None:
    """Small batches against the CP-SAT lower bound of :mod:`milp.case`: per batch (the report) or, with
    ``markdown``, the median makespan / lower bound of every method (the README's table). One executor
    task per batch; a batch whose task failed shows as failed and counts in no median."""
    cases = [(c, r, s) for c in ("A", "D") for r in ("1:1", "1:4", "0:1") for s in range(seeds)]
    caption = (f"Exact reference (milp.case, CP-SAT, {time_limit:g} s, CASE packing rules, no worker limit, "
               f"no slowdown), batches of {n} jobs")
    tasks = [(c, r, s, n, time_limit, tuple(methods)) for c, r, s in cases]
    results = (executor or ex.Executor()).map(bound_task, tasks, quiet=quiet, desc="solving", unit="batch",
                                              label=lambda t: f"bound config {t[0]} ratio {t[1]} seed {t[2]}")
    rows = []
    ratios: dict[str, list[float]] = {m: [] for m in methods}
    proven = failed = 0
    for (c, r, s), got in zip(cases, results):
        if isinstance(got, ex.Failed):
            failed += 1
            rows.append([c, r, s, "failed", "", ""] + [""] * len(methods) + [""])
            continue
        lb, rs = got["lb"], got["slurm"]
        proven += got["status"] == "OPTIMAL"
        for m, makespan in got["makespans"].items():
            ratios[m].append(makespan / lb)
        srule = f"{rs['objective']:.1f}" + ("" if rs["status"] == "OPTIMAL" else f" (LB {rs['lb']:.1f})")
        rows.append([c, r, s, got["status"], f"{lb:.1f}", f"{got['objective']:.1f}"]
                    + [f"{makespan / lb:.2f}" for makespan in got["makespans"].values()] + [srule])
    ratios = {m: v or [float("nan")] for m, v in ratios.items()}
    if markdown:
        shown = f"{len(cases)} batches" + (f" ({failed} failed)" if failed else "")
        print(f"\n{caption}; {shown}, optimum proven on {proven}:\n")
        print(common.markdown_table(["method", "median makespan / lower bound"],
                                    [[m, f"{statistics.median(v):.2f}"] for m, v in ratios.items()]))
        return
    print("\n" + caption)
    print(common.markdown_table(["config", "ratio", "seed", "status", "LB (s)", "OPT/UB (s)"]
                                + [f"{m} / LB" for m in methods] + ["Slurm-rules OPT (s)"], rows))
    print("median makespan / lower bound: " + ", ".join(f"{m} {statistics.median(v):.2f}" for m, v in ratios.items()))


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "under a minute"


def main(argv: Sequence[str] | None = None) -> int:
    ap = common.Parser(prog="python -m benchmarks.case", description=common.description(__doc__, DEFAULT_RUN))
    ap.add_argument("--seeds", type=common.count, default=5, help="workloads per cell")
    ap.add_argument("--figures", type=common.comma_choices(["1", "2", "3"], "figure"), default=["1", "2", "3"],
                    help="comma list of the figures to reproduce, from 1, 2, 3")
    ap.add_argument("--png", type=common.image_file, default=Path("case_fig4.png"),
                    help="where to write the Figure 4 PNG (parent folders are created)")
    ap.add_argument("--no-plot", action="store_true", help="skip Figure 4 (write no PNG)")
    ap.add_argument("--no-bound", action="store_true", help="skip the exact-bound table")
    ap.add_argument("--bound-n", type=common.integer(2, 40, "the exact model is for small batches"), default=12,
                    help="batch size for the exact bound, 2..40 (the exact model is for small batches)")
    ap.add_argument("--bound-seeds", type=common.count, default=2, help="batches per cell for the bound")
    ap.add_argument("--time-limit", type=common.seconds, default=5.0, help="CP-SAT seconds per solve")
    ap.add_argument("--methods", type=common.comma_choices(sim.METHODS, "method"), default=None,
                    help=f"comma list from heuristics.case.METHODS for the bound table "
                         f"(default: all, {','.join(sim.METHODS)})")
    ex.add_arguments(ap)
    common.add_markdown(ap)
    common.add_quiet(ap)
    args = ap.parse_args(argv)
    methods = args.methods or list(sim.METHODS)
    figures = sorted(int(f) for f in args.figures)
    executor = ex.from_args(ap, args)

    res = sweep(figures, args.seeds, args.quiet, executor)
    md = args.markdown
    if md:
        print(f"Mixed-ratio averages (4:1 .. 1:4), median of {args.seeds} seed{'s' if args.seeds > 1 else ''} "
              "per cell:\n")
        print(summary_table(figures, res))
        for f in figures:
            print(f"\nFigure {f}, {FIGURES[f][2]}: CASE over Slurm per isolated:non-isolated ratio "
                  "(throughput x, turnaround x):\n")
            print(figure_table(f, res))
        table = slowdown_table(res)
        if table is not None:
            print("\nTable 2, mean task slowdown under CASE (%), Figure 1 workloads:\n")
            print(table)
    else:
        for f in figures:
            print_figure(f, res)
        print_utilisation(figures, res)
        print_slowdown(res)
    if not args.no_plot:
        with common.writing(ap, "--png"):
            args.png.parent.mkdir(parents=True, exist_ok=True)
            util = plot_figure4(str(args.png), seed=0)
        print(f"\nFigure 4 written to {args.png}: time-averaged memory utilisation "
              f"Slurm {100 * util['slurm']:.1f} %, CASE {100 * util['case']:.1f} % "
              f"({util['case'] / util['slurm']:.2f}x)", file=sys.stderr if md else sys.stdout)
    if not args.no_bound:
        bound_table(args.bound_n, args.bound_seeds, args.time_limit, args.quiet, methods, md, executor)
    return 0


if __name__ == "__main__":
    common.run_cli(main)
