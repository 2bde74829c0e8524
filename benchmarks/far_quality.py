"""FAR's quality figures, side by side with seed 000's tables (Sec. 6.4, 6.6, 6.7).

* ``--table 4``: mean rho = FAR makespan / area bound on the A100, WideTimes,
  n = 10..35 (area bound = sum over tasks of min_s s*t(s), divided by the
  number of slices; Sec. 6.4).
* ``--table 6``: refinement (phase 3): mean p_ref = (phase-2 / refined - 1) * 100
  and mean numbers of moves and swaps, n = 10, 20, 30 (Sec. 6.6).
* ``--table 7``: multi-batch concatenation (Sec. 6.7.1): mean p_rev and
  p_move/swap against the trivial concatenation, and moves/swaps per batch
  boundary (Table 8), n = 10, 20, 30, on chains of ``--batches`` batches all
  released at time 0.
* ``--table 9``: p_multi-batch = (makespan / multi-batch area bound - 1) * 100
  for chains of ``--batches`` batches released at 0 (move/swap concatenation).

Usage::

    python -m benchmarks.far_quality --table 4 --runs 1000
    python -m benchmarks.far_quality --table 6 --runs 200 --quiet
    python -m benchmarks.far_quality --table 4 --runs 1000 --p-sup 0
"""

from __future__ import annotations

import argparse
import statistics
import sys

from heuristics import far, far_multibatch
from instances import mig

CONFIGS = ("PoorScaling", "MixedScaling", "GoodScaling")
TIMES = ("NarrowTimes", "WideTimes")

PAPER_T4 = {"PoorScaling": [1.23, 1.08, 1.04, 1.03, 1.02, 1.02],
            "MixedScaling": [1.20, 1.08, 1.04, 1.03, 1.02, 1.02],
            "GoodScaling": [1.21, 1.07, 1.05, 1.03, 1.02, 1.01]}
PAPER_T6 = {("PoorScaling", "NarrowTimes"): [0.31, 0.00, 0.02, 13.15, 0.00, 3.25, 11.45, 0.00, 4.26],
            ("PoorScaling", "WideTimes"): [0.28, 0.02, 0.01, 14.98, 1.26, 0.13, 8.76, 1.74, 0.15],
            ("MixedScaling", "NarrowTimes"): [0.76, 0.02, 0.06, 13.87, 0.00, 3.23, 9.04, 0.00, 4.31],
            ("MixedScaling", "WideTimes"): [3.21, 0.17, 0.06, 11.45, 1.14, 0.09, 9.01, 1.84, 0.15],
            ("GoodScaling", "NarrowTimes"): [0.78, 0.01, 0.01, 13.44, 0.00, 3.01, 7.54, 0.00, 3.64],
            ("GoodScaling", "WideTimes"): [1.34, 0.05, 0.02, 12.56, 1.13, 0.08, 9.32, 1.93, 0.21]}
PAPER_T7 = {("PoorScaling", "NarrowTimes"): [2.32, 16.19, 2.64, 4.60, 1.03, 1.45],
            ("PoorScaling", "WideTimes"): [3.23, 14.47, 3.82, 4.10, 0.98, 1.01],
            ("MixedScaling", "NarrowTimes"): [5.43, 16.22, 4.53, 4.82, 0.86, 1.01],
            ("MixedScaling", "WideTimes"): [4.87, 14.30, 2.41, 4.26, 0.44, 0.46],
            ("GoodScaling", "NarrowTimes"): [3.65, 15.43, 1.05, 3.86, 0.51, 1.01],
            ("GoodScaling", "WideTimes"): [5.54, 13.12, 2.03, 3.76, 0.23, 0.30]}
PAPER_T8 = {("PoorScaling", "NarrowTimes"): [0.48, 9.72, 0.04, 1.32, 0.01, 0.82],
            ("PoorScaling", "WideTimes"): [3.13, 1.21, 0.10, 0.05, 0.03, 0.00],
            ("MixedScaling", "NarrowTimes"): [0.30, 9.52, 0.02, 1.12, 0.00, 0.62],
            ("MixedScaling", "WideTimes"): [3.51, 1.12, 0.13, 0.06, 0.05, 0.01],
            ("GoodScaling", "NarrowTimes"): [0.72, 9.62, 0.03, 1.36, 0.01, 0.94],
            ("GoodScaling", "WideTimes"): [3.42, 1.04, 0.15, 0.06, 0.05, 0.01]}
PAPER_T9 = {"PoorScaling": [84.42, 94.12, 95.21, 95.21, 92.32, 93.21],
            "MixedScaling": [89.56, 94.00, 93.01, 95.01, 90.21, 92.03],
            "GoodScaling": [82.67, 94.53, 94.46, 94.32, 92.32, 91.54]}


#: Extra generator options (``--p-sup``), applied to every instance.
GEN: dict = {}


def area_bound(tasks, num_slices: int) -> float:
    """Sec. 6.4's baseline: sum of minimum areas over the slices (a lower bound on OPT)."""
    return sum(min(s * t.time(s) for s in t.sizes) for t in tasks) / num_slices


def table4(runs: int, gpu: str, ns, progress) -> None:
    print(f"Table 4: mean rho = FAR / area bound, {gpu} WideTimes, {runs} instances per cell (paper in brackets)")
    print(f"{'config':<14}" + "".join(f"{n:>14}" for n in ns))
    for cfg in CONFIGS:
        cells = []
        for i, n in enumerate(ns):
            rhos = []
            for seed in progress(range(runs)):
                p = mig.generate(n, gpu, cfg, "WideTimes", seed=seed, **GEN)
                rhos.append(far.plan(p).makespan / area_bound(p.tasks, p.gpu.num_slices))
            paper = PAPER_T4[cfg][i] if gpu == "A100" and i < 6 and n == 10 + 5 * i else None
            cells.append(f"{statistics.mean(rhos):.3f}" + (f" ({paper:.2f})" if paper else ""))
        print(f"{cfg:<14}" + "".join(f"{c:>14}" for c in cells))


def table6(runs: int, gpu: str, ns, progress) -> None:
    print(f"Table 6: refinement, mean p_ref % / moves / swaps, {gpu}, {runs} instances per cell (paper in brackets)")
    print(f"{'config':<28}" + "".join(f"{'n=' + str(n):>30}" for n in ns))
    for cfg in CONFIGS:
        for tm in TIMES:
            cells = []
            for i, n in enumerate(ns):
                pr, mv, sw = [], [], []
                for seed in progress(range(runs)):
                    r = far.plan(mig.generate(n, gpu, cfg, tm, seed=seed, **GEN))
                    pr.append(r.stats["p_ref"])
                    mv.append(r.stats["moves"])
                    sw.append(r.stats["swaps"])
                paper = PAPER_T6[(cfg, tm)][3 * i:3 * i + 3] if gpu == "A100" and n == 10 * (i + 1) else None
                cell = f"{statistics.mean(pr):.2f}/{statistics.mean(mv):.2f}/{statistics.mean(sw):.2f}"
                if paper:
                    cell += f" ({paper[0]:.2f}/{paper[1]:.2f}/{paper[2]:.2f})"
                cells.append(cell)
            print(f"{cfg + ', ' + tm:<28}" + "".join(f"{c:>30}" for c in cells))


def table7(runs: int, gpu: str, ns, batches: int, progress) -> None:
    print(f"Tables 7-8: concatenation of {batches} batches released at 0, {gpu}, {runs} chains per cell; "
          f"p_rev % / p_move_swap % / moves / swaps per boundary (paper in brackets)")
    print(f"{'config':<28}" + "".join(f"{'n=' + str(n):>44}" for n in ns))
    for cfg in CONFIGS:
        for tm in TIMES:
            cells = []
            for i, n in enumerate(ns):
                prev, pms, mv, sw = [], [], [], []
                for seed in progress(range(runs)):
                    w = mig.generate_workload([n] * batches, [0.0] * batches, gpu, cfg, tm, seed=seed * batches, **GEN)
                    r = far_multibatch.compare_concatenations(w)
                    prev.append(r["p_rev"])
                    pms.append(r["p_move_swap"])
                    mv.append(r["moves"] / (batches - 1))
                    sw.append(r["swaps"] / (batches - 1))
                cell = (f"{statistics.mean(prev):.2f}/{statistics.mean(pms):.2f}/"
                        f"{statistics.mean(mv):.2f}/{statistics.mean(sw):.2f}")
                if gpu == "A100" and n == 10 * (i + 1):
                    p7, p8 = PAPER_T7[(cfg, tm)][2 * i:2 * i + 2], PAPER_T8[(cfg, tm)][2 * i:2 * i + 2]
                    cell += f" ({p7[0]:.2f}/{p7[1]:.2f}/{p8[0]:.2f}/{p8[1]:.2f})"
                cells.append(cell)
            print(f"{cfg + ', ' + tm:<28}" + "".join(f"{c:>44}" for c in cells))


def table9(runs: int, gpu: str, ns, batches: int, progress) -> None:
    print(f"Table 9: p_multi-batch %, {batches} batches released at 0, {gpu} WideTimes, {runs} chains per cell "
          f"(paper, 1001 batches, in brackets)")
    print(f"{'config':<14}" + "".join(f"{n:>16}" for n in ns))
    for cfg in CONFIGS:
        cells = []
        for i, n in enumerate(ns):
            vals = []
            for seed in progress(range(runs)):
                w = mig.generate_workload([n] * batches, [0.0] * batches, gpu, cfg, "WideTimes", seed=seed * batches,
                                           **GEN)
                r = far.plan(w)
                vals.append((r.makespan / area_bound(w.tasks, w.gpu.num_slices) - 1) * 100)
            paper = PAPER_T9[cfg][i] if gpu == "A100" and i < 6 and n == 10 + 5 * i else None
            cells.append(f"{statistics.mean(vals):.2f}" + (f" ({paper:.2f})" if paper else ""))
        print(f"{cfg:<14}" + "".join(f"{c:>16}" for c in cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.far_quality", description=__doc__.split("\n")[0])
    parser.add_argument("--table", type=int, choices=[4, 6, 7, 9], required=True)
    parser.add_argument("--runs", type=int, default=100, help="instances (or chains) per cell")
    parser.add_argument("--gpu", default="A100", choices=["A30", "A100", "H100"])
    parser.add_argument("--n", type=int, nargs="+", help="numbers of tasks (default: the paper's)")
    parser.add_argument("--batches", type=int, default=11, help="batches per chain (tables 7 and 9)")
    parser.add_argument("--p-sup", type=float, help="share of memory-bound (super-linear) tasks per class "
                        "(generator default 0.5; the seed leaves it open)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.p_sup is not None:
        if not 0.0 <= args.p_sup <= 1.0:
            parser.error("--p-sup must lie in [0, 1]")
        GEN["p_sup"] = args.p_sup
    if args.runs < 1 or args.batches < 2 or (args.n and min(args.n) < 1):
        parser.error("--runs and --n must be positive and --batches at least 2")
    from tqdm import tqdm

    def progress(it):
        return it if args.quiet else tqdm(it, leave=False)

    if args.table == 4:
        table4(args.runs, args.gpu, args.n or [10, 15, 20, 25, 30, 35], progress)
    elif args.table == 6:
        table6(args.runs, args.gpu, args.n or [10, 20, 30], progress)
    elif args.table == 7:
        table7(args.runs, args.gpu, args.n or [10, 20, 30], args.batches, progress)
    else:
        table9(args.runs, args.gpu, args.n or [10, 15, 20, 25, 30, 35], args.batches, progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
