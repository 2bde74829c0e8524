"""FAR's planning time as n grows, and how much its tie rules move its makespan.

Speed (the default): for each n, the CPU and wall time of the full FAR
(phases 1-3, ``far.plan``) on generated instances (A100, MixedScaling,
WideTimes by default; the median over ``--seeds`` instances x ``--repeats``
runs, one run of one instance for n > 1000), the growth exponent (the slope
of log CPU time against log n, fitted over all n and between the last two),
and the near-identical batch of n tasks ``{1: 10 + i % 7, 2: 6, 3: 4.5, 4:
3.5, 7: 2}`` (the case whose family of allocations is longest). The paper's
C++ averages (FAR paper, Sec. 6.4.2) are printed where it has them. CPU time
is the fairer figure on a shared machine; wall time is printed beside it.

Ties (``--ties``): for each n, FAR's makespan with the FAR authors' tie rules
(``ties="reference"``, their C++ implementation bit for bit) divided by ours
(the default, ``ties="ours"``), after phases 1+2 and after refinement, on
``--reps`` generated instances per n with fresh seeds; mean, standard
deviation, extremes, how many differ, and what ``ties="best"`` gains over ours.
Every instance is a task of :mod:`benchmarks.executor` (``--out`` records
them; the same command resumes); an instance whose task failed is left out
of the figures and of the count of differing ones, which is then out of the
instances that finished, and a ``failed`` column counts it.

Usage::

    python -m benchmarks.far_speed                      # n = 100, 1000, 10,000, 100,000
    python -m benchmarks.far_speed --n 100 1000 --seeds 3 --repeats 3 --markdown
    python -m benchmarks.far_speed --ties --reps 50 --markdown
    python -m benchmarks.far_speed --ties --executor dask --scheduler tcp://host:8786
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any, Sequence

from benchmarks import common
from benchmarks import executor as ex
from heuristics import far, far_batch
from instances import gpus, mig

PAPER_MS = {15: 19.43, 100: 12.32, 500: 532.21, 1000: 1620.82}  # Sec. 6.4.2 / 6.5.2 (MixedScaling), C++
DEFAULT_N = (100, 1000, 10_000, 100_000)
TIES_N = (10, 15, 20, 25, 30, 35)
TIES_SEED = 70_000  # fresh: no test or table uses these seeds
#: Largest near-identical batch (``--near``): its family of allocations is the longest FAR scans.
MAX_NEAR = 100_000


def near_identical(n: int, gpu: str = "A100") -> mig.Problem:
    """Task ``i`` takes ``10 + i % 7`` on one slice and the same times on larger instances.

    Examples
    --------
    >>> [dict(t.times) for t in near_identical(2).tasks][1]
    {1: 11.0, 2: 6.0, 3: 4.5, 4: 3.5, 7: 2.0}
    """
    g = gpus.get(gpu)
    rest = {2: 6.0, 3: 4.5, 4: 3.5, 7: 2.0} if g.num_slices == 7 else {2: 6.0, 4: 3.5}
    return mig.Problem(g, [mig.Task(f"t{i}", {1: 10.0 + i % 7, **rest}) for i in range(n)])


def _time(problem: mig.Problem) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    far.plan(problem)
    return time.process_time() - c0, time.perf_counter() - t0


def measure(n: int, gpu: str = "A100", workload: str = "MixedScaling", times: str = "WideTimes", seeds: int = 3,
            repeats: int = 3) -> dict[str, float]:
    """Median CPU and wall seconds of ``far.plan`` (one run of one instance when n > 1000).

    Examples
    --------
    >>> r = measure(20, seeds=1, repeats=1)
    >>> sorted(r), r["cpu"] > 0
    (['cpu', 'runs', 'wall'], True)
    """
    if n > 1000:
        seeds = repeats = 1
    cpu, wall = [], []
    for seed in range(seeds):
        p = mig.generate(n, gpu, workload, times, seed=seed)
        if n <= 1000:
            far.plan(p)  # warm-up
        for _ in range(repeats):
            c, w = _time(p)
            cpu.append(c)
            wall.append(w)
    return {"cpu": statistics.median(cpu), "wall": statistics.median(wall), "runs": len(cpu)}


def growth(ns: Sequence[int], secs: Sequence[float]) -> float | None:
    """Least-squares slope of log(seconds) against log(n): time grows like n ** slope.

    Examples
    --------
    >>> round(growth([10, 100, 1000], [0.01, 0.1, 1.0]), 6)
    1.0
    """
    pts = [(math.log(n), math.log(s)) for n, s in zip(ns, secs) if s > 0]
    if len(pts) < 2:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def tie_cell(task: tuple[int, int, str, str, str]) -> dict[str, Any]:
    """One instance of the ties sweep: FAR's makespans under the three tie rules (phase 2 and refined)."""
    n, seed, gpu, workload, times = task
    p = mig.generate(n, gpu, workload, times, seed=seed)
    out: dict[str, Any] = {}
    for rule in far_batch.TIE_RULES:
        r = far.plan(p, ties=rule)
        out[rule] = (r.phase2_makespan, r.makespan)
    return out


def ties_sweep(ns: Sequence[int], reps: int, seed: int, gpu: str, workload: str, times: str,
               runner: ex.Executor, quiet: bool = True) -> dict[int, dict[str, Any]]:
    """Per n: statistics of reference / ours (phase 2 and refined) and of best / ours (refined) over the
    instances that finished (``done``; ``failed`` more were asked for, left out and listed by the command)."""
    tasks = [(n, seed + 1000 * i + r, gpu, workload, times) for i, n in enumerate(ns) for r in range(reps)]
    cells = runner.map(tie_cell, tasks, quiet=quiet, desc="instances", label=lambda t: f"n={t[0]} seed={t[1]}")
    res: dict[int, dict[str, Any]] = {}
    for i, n in enumerate(ns):
        mine = ex.succeeded(cells[i * reps:(i + 1) * reps])  # a failed instance is left out (and listed)
        row: dict[str, Any] = {"done": len(mine), "failed": reps - len(mine)}
        res[n] = row
        if not mine:
            continue
        for key, a, b, phase in (("p2", "reference", "ours", 0), ("ref", "reference", "ours", 1),
                                 ("best", "best", "ours", 1)):
            ratios = [c[a][phase] / c[b][phase] for c in mine]
            row[key] = {"mean": statistics.fmean(ratios), "sd": statistics.pstdev(ratios),
                        "min": min(ratios), "max": max(ratios), "differ": sum(x != 1.0 for x in ratios)}
    return res


def format_ties(res: dict[int, dict[str, Any]], reps: int, gpu: str, workload: str, times: str,
                markdown: bool = False) -> str:
    """The ties table: one row per n; a ``failed`` column when instances failed (the figures are over the
    instances that finished, and so is the count of differing ones)."""
    caption = (f"FAR, authors' tie rules / ours: makespan ratio over {reps} instances per n ({gpu}, {workload}, "
               f"{times}); mean +- sd [min, max] (differing instances)")
    failures = any(r.get("failed", 0) for r in res.values())
    header = ["n", "phases 1+2", "refined", "best / ours (refined)"] + (["failed"] if failures else [])

    def cell(r: dict[str, Any], key: str) -> str:
        if key not in r:
            return "failed"
        s, done = r[key], r.get("done", reps)
        return f"{s['mean']:.4f} +- {s['sd']:.4f} [{s['min']:.3f}, {s['max']:.3f}] ({s['differ']}/{done})"

    rows = [[n] + [cell(r, k) for k in ("p2", "ref", "best")] + ([f"{r['failed']}/{reps}"] if failures else [])
            for n, r in res.items()]
    return "\n".join([caption, ""] + [common.markdown_table(header, rows)] if markdown
                     else [caption, common.markdown_table(header, rows)])


def format_speed(rows: list[dict[str, Any]], near: dict[str, Any] | None, gpu: str, workload: str, times: str,
                 markdown: bool = False) -> str:
    """The speed table, the growth exponents, and the near-identical row."""
    header = ["n", "CPU s", "wall s", "runs", "paper C++ s"]
    body = [[r["n"], f"{r['cpu']:.3f}", f"{r['wall']:.3f}", r["runs"],
             common.fmt(PAPER_MS.get(r["n"]) and PAPER_MS[r["n"]] / 1000, ".3f")] for r in rows]
    if near is not None:
        body.append([f"{near['n']} near-identical", f"{near['cpu']:.3f}", f"{near['wall']:.3f}", 1, "-"])
    ns = [r["n"] for r in rows]
    cpus = [r["cpu"] for r in rows]
    fit = growth(ns, cpus)
    last = growth(ns[-2:], cpus[-2:])
    caption = f"FAR planning time (phases 1-3), {gpu} {workload} {times}"
    tail = (f"growth exponent (CPU time ~ n^k): k = {common.fmt(fit, '.2f')} over n = {ns[0]}..{ns[-1]}, "
            f"{common.fmt(last, '.2f')} between the last two")
    return "\n".join([caption] + ([""] if markdown else []) + [common.markdown_table(header, body), "", tail])


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 15 seconds, with --ties about 30 seconds"


def main(argv: Sequence[str] | None = None) -> int:
    p = common.Parser(prog="python -m benchmarks.far_speed", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--n", type=common.integer(1, common.MAX_TASKS), nargs="+", default=None,
                   help=f"task counts, each at most {common.MAX_TASKS:,} (default: {' '.join(map(str, DEFAULT_N))}; "
                        f"with --ties {' '.join(map(str, TIES_N))})")
    p.add_argument("--gpu", default="A100", choices=("A30", "A100", "H100"), help="GPU model (default: A100)")
    p.add_argument("--workload", default="MixedScaling", choices=sorted(mig.SCALING_PRESETS),
                   help="scaling preset of the generated tasks (default: MixedScaling)")
    p.add_argument("--times", default="WideTimes", choices=sorted(mig.TIME_PRESETS),
                   help="time preset of the generated tasks (default: WideTimes)")
    p.add_argument("--seeds", type=common.count, default=3, help="instances per n (n <= 1000)")
    p.add_argument("--repeats", type=common.count, default=3, help="runs per instance (n <= 1000)")
    p.add_argument("--near", type=common.integer(0, MAX_NEAR), default=10_000,
                   help=f"n of the near-identical batch, at most {MAX_NEAR:,} (0: skip it)")
    p.add_argument("--ties", action="store_true", help="measure the tie rules instead of the speed")
    p.add_argument("--reps", type=common.count, default=50, help="instances per n with --ties")
    p.add_argument("--seed", type=common.seed, default=TIES_SEED, help="base seed with --ties")
    ex.add_arguments(p)
    common.add_markdown(p)
    common.add_quiet(p)
    a = p.parse_args(argv)
    runner = ex.from_args(p, a)
    if a.ties:
        ns = a.n or list(TIES_N)
        res = ties_sweep(ns, a.reps, a.seed, a.gpu, a.workload, a.times, runner, a.quiet)
        print(format_ties(res, a.reps, a.gpu, a.workload, a.times, a.markdown))
        return 0
    ns = sorted(a.n or DEFAULT_N)
    rows = []
    for n in common.progress(ns, desc="n", quiet=a.quiet):
        rows.append({"n": n, **measure(n, a.gpu, a.workload, a.times, a.seeds, a.repeats)})
    near = None
    if a.near:
        c, w = _time(near_identical(a.near, a.gpu))
        near = {"n": a.near, "cpu": c, "wall": w}
    print(format_speed(rows, near, a.gpu, a.workload, a.times, a.markdown))
    return 0


if __name__ == "__main__":
    common.run_cli(main)
