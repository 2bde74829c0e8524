"""Planning time of the full FAR (phases 1-3), as in the FAR paper, Sec. 6.4.2.

Prints, per number of tasks n, the median wall time of ``far.plan`` over
several generated instances and repetitions (A100, MixedScaling, WideTimes by
default), next to the paper's averages (C++, 1000 runs) and the issue's
targets for a 2-core machine (n = 100: 5 ms, n = 1000: 100 ms).

Usage::

    python -m benchmarks.far_speed                # n = 15, 100, 1000
    python -m benchmarks.far_speed --n 15 100 1000 --seeds 5 --repeats 7 --quiet
"""

from __future__ import annotations

import statistics
import sys
import time

from benchmarks import common
from heuristics import far
from instances import gpus, mig

PAPER_MS = {15: 19.43, 100: 12.32, 500: 532.21, 1000: 1620.82}  # Sec. 6.4.2 / 6.5.2 (MixedScaling)
TARGET_MS = {100: 5.0, 1000: 100.0}


def measure(n: int, gpu: str = "A100", workload: str = "MixedScaling", times: str = "WideTimes",
            seeds: int = 5, repeats: int = 7, refine: bool = True) -> dict[str, float]:
    """Median / min / max seconds of ``far.plan`` over ``seeds`` instances x ``repeats`` runs."""
    samples = []
    for seed in range(seeds):
        p = mig.generate(n, gpu, workload, times, seed=seed)
        far.plan(p, refine=refine)  # warm-up (imports, caches)
        for _ in range(repeats):
            t0 = time.perf_counter()
            far.plan(p, refine=refine)
            samples.append(time.perf_counter() - t0)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def main(argv: list[str] | None = None) -> int:
    parser = common.Parser(prog="python -m benchmarks.far_speed", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[15, 100, 1000], metavar="N",
                        help="numbers of tasks, one table row each")
    parser.add_argument("--gpu", default="A100", choices=list(gpus.names()), help="GPU model")
    parser.add_argument("--workload", default="MixedScaling", choices=sorted(mig.SCALING_PRESETS),
                        help="how task times scale with the instance size (generator preset)")
    parser.add_argument("--times", default="WideTimes", choices=sorted(mig.TIME_PRESETS),
                        help="range of the task times (generator preset)")
    parser.add_argument("--seeds", type=int, default=5, help="generated instances per n (seeds 0..k-1)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per instance, after one warm-up")
    parser.add_argument("--no-refine", action="store_true", help="time phases 1-2 only (no refinement)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.n) or args.seeds < 1 or args.repeats < 1:
        parser.error("--n, --seeds and --repeats must be positive")
    from tqdm import tqdm

    print(f"FAR planning time ({'phases 1-2' if args.no_refine else 'phases 1-3'}), {args.gpu} {args.workload} "
          f"{args.times}, median of {args.seeds} instances x {args.repeats} runs")
    print(f"{'n':>6} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'target ms':>10} {'paper ms':>9}")
    for n in tqdm(args.n, disable=args.quiet, leave=False):
        r = measure(n, args.gpu, args.workload, args.times, args.seeds, args.repeats, not args.no_refine)
        tgt = TARGET_MS.get(n)
        paper = PAPER_MS.get(n)
        line = (f"{n:>6} {r['median'] * 1e3:>10.2f} {r['min'] * 1e3:>8.2f} {r['max'] * 1e3:>8.2f} "
                f"{'' if tgt is None else f'{tgt:.0f}':>10} {'' if paper is None else f'{paper:.2f}':>9}")
        tqdm.write(line) if not args.quiet else print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
