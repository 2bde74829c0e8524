"""``python -m benchmarks.compare --n 12``: every MIG method against the exact optimum.

Generates ``--instances`` batches of ``--n`` tasks with the Sec. 6.3 generator
(seed 000), runs FAR (phases 1-3), FAR without refinement, the Sec. 6.5
baselines (MISO-opt, FixPartBest, FixPart(7), FixPart(1,...,1)), the exact
optimum with reconfiguration (``milp.solve_optimal``; CP-SAT by default, warm
started from FAR's schedule) and the lower bounds of ``bounds/mig.py``, then
prints one table: per method the mean and worst ratio to OPT, the mean ratio to
the paper's baseline bound (Sec. 6.4's area bound), how many optima were
proven and the mean planning time (per instance the median of 3 runs for a
heuristic, the one solve for OPT).

Ratios to OPT use only instances whose optimum was *proven*. For the others the
solver's best makespan U and best valid lower bound L (the larger of the
solver's bound and ``bounds.mig.lower_bound``) bracket OPT, so a method of
makespan M has ``M/U <= M/OPT <= M/L``; the table shows that bracket apart,
and each unproven instance is listed with its gap.

Every instance is seeded on its own (``numpy.random.SeedSequence([seed,
index])``) and the aggregation sorts rows before summing, so the local and the
dask executors, any ``--jobs`` and any completion order give the same figures
(planning times aside).

Examples
--------
::

    python -m benchmarks.compare --n 12
    python -m benchmarks.compare --n 8 --instances 20 --jobs 2 --out results/
    python -m benchmarks.compare --n 12 --executor dask                # LocalCluster
    python -m benchmarks.compare --n 12 --executor dask --scheduler tcp://host:8786
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

__all__ = ["Config", "METHODS", "BOUND_ROWS", "instance_seed", "make_problem", "solve_exact", "run_instance",
           "run", "summarise", "format_table", "write_outputs", "parse_config", "main"]

#: Methods in table order. The FixPart names are for the A100/H100 (FixPart(4) on an A30).
METHODS = ("FAR", "FAR-noref", "MISO-opt", "FixPartBest", "FixPart(7)", "FixPart(1,...,1)", "OPT")
#: Lower bounds, reported as rows too (their ratio to OPT shows how tight they are).
BOUND_ROWS = ("LowerBound", "AreaBound")
BACKENDS = ("cpsat", "highs")
EXECUTORS = ("local", "dask")


@dataclass(frozen=True)
class Config:
    """One sweep: what to generate and how to solve it."""

    n: int = 12
    instances: int = 10
    gpu: str = "A100"
    workload: str = "MixedScaling"
    times: str = "WideTimes"
    seed: int = 0
    backend: str = "cpsat"
    time_limit: float = 30.0
    workers: int | None = None
    exact: bool = True
    timing_repeats: int = 3  # heuristic planning time = median of this many runs


def instance_seed(seed: int, index: int) -> int:
    """The generator seed of instance ``index``: independent of the other instances and of run order.

    Examples
    --------
    >>> instance_seed(0, 3) == instance_seed(0, 3) != instance_seed(1, 3)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint32)[0])


def make_problem(cfg: Config, index: int):
    """Instance ``index`` of the sweep (a ``mig.Problem``)."""
    from instances import mig

    return mig.generate(cfg.n, cfg.gpu, cfg.workload, cfg.times, instance_seed(cfg.seed, index))


def _timed(fn: Callable, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def _timed_median(fn: Callable, problem, repeats: int):
    """Result of the first run and the median time of ``repeats`` runs (heuristics are deterministic)."""
    out, first = _timed(fn, problem)
    times = [first] + [_timed(fn, problem)[1] for _ in range(repeats - 1)]
    return out, float(np.median(times))


def _heuristics(gpu) -> list[tuple[str, Callable]]:
    from heuristics import far
    from heuristics import far_baselines as fb

    return [
        ("FAR", lambda p: far.schedule(p, refine=True)),
        ("FAR-noref", lambda p: far.schedule(p, refine=False)),
        ("MISO-opt", fb.miso_opt),
        ("FixPartBest", fb.fixpart_best),
        ("FixPart(7)", fb.fixpart_whole),
        ("FixPart(1,...,1)", fb.fixpart_ones),
    ]


def solve_exact(problem, **options):
    """``milp.solve_optimal(problem, **options)`` (imported lazily, so worker processes load OR-Tools only when used)."""
    from milp import solve_optimal

    return solve_optimal(problem, **options)


def run_instance(cfg: Config, index: int) -> dict[str, Any]:
    """Run every method on instance ``index``; picklable in and out (for process pools and dask).

    Returns
    -------
    dict
        ``rows``: one dict per method and bound (see :data:`METHODS`, :data:`BOUND_ROWS`);
        ``schedules``: ``{method: schedule JSON}`` for FAR and OPT (for the Gantt chart).
    """
    from bounds import mig as mig_bounds
    from instances import mig

    problem = make_problem(cfg, index)
    seed = instance_seed(cfg.seed, index)
    area = mig_bounds.area_bound(problem)
    lower = mig_bounds.lower_bound(problem)
    results: list[dict[str, Any]] = []
    schedules: dict[str, str] = {}
    far_schedule = None
    for name, fn in _heuristics(problem.gpu):
        try:
            sched, secs = _timed_median(fn, problem, cfg.timing_repeats)
        except Exception as exc:  # a crash is a result to report, not a reason to lose the sweep
            results.append({"method": name, "makespan": None, "time_s": None, "feasible": False,
                            "status": f"ERROR: {type(exc).__name__}: {exc}"[:300]})
            continue
        violations = mig.check(problem, sched)
        results.append({"method": name, "makespan": sched.makespan, "time_s": secs,
                        "feasible": not violations, "status": "heuristic" if not violations
                        else f"INFEASIBLE: {violations[0]}"[:300]})
        if name == "FAR":
            far_schedule = sched
            schedules["FAR"] = sched.to_json()

    opt_obj = opt_lb = None
    opt_status = "SKIPPED"
    if cfg.exact:
        try:
            res, secs = _timed(solve_exact, problem, backend=cfg.backend, reconfiguration=True,
                               time_limit=cfg.time_limit, workers=cfg.workers, hint=far_schedule)
            opt_status = str(res.status)
            opt_lb = res.lower_bound
            feasible = res.schedule is not None and not mig.check(problem, res.schedule)
            if res.schedule is not None and not feasible:
                opt_status = "INFEASIBLE-SCHEDULE"  # never trust a schedule the checker rejects
            if feasible:
                opt_obj = res.objective
                schedules["OPT"] = res.schedule.to_json()
            results.append({"method": "OPT", "makespan": opt_obj, "time_s": secs, "feasible": feasible,
                            "status": opt_status})
        except Exception as exc:
            opt_status = f"ERROR: {type(exc).__name__}: {exc}"[:300]
            results.append({"method": "OPT", "makespan": None, "time_s": None, "feasible": False,
                            "status": opt_status})
    proven = opt_status == "OPTIMAL" and opt_obj is not None
    # the best valid lower bound on OPT; the solver's bound only counts when it reported one
    best_lb = max([lower, area] + ([opt_lb] if opt_lb is not None and math.isfinite(opt_lb) else []))
    if proven:
        best_lb = opt_obj
    results.append({"method": "LowerBound", "makespan": lower, "time_s": None, "feasible": True,
                    "status": "bound"})
    results.append({"method": "AreaBound", "makespan": area, "time_s": None, "feasible": True,
                    "status": "bound"})

    rows = []
    for r in results:
        m = r["makespan"]
        row = {"instance": index, "seed": seed, "gpu": cfg.gpu, "workload": cfg.workload, "times": cfg.times,
               "n": cfg.n, **r, "opt_status": opt_status, "opt_proven": proven, "opt_objective": opt_obj,
               "opt_bound": best_lb, "area_bound": area, "lower_bound": lower,
               "gap": None if opt_obj is None else (opt_obj - best_lb) / opt_obj,
               "ratio_opt": None, "ratio_opt_low": None, "ratio_opt_high": None,
               "ratio_area": None if m is None else m / area}
        if m is not None:
            if proven:
                row["ratio_opt"] = row["ratio_opt_low"] = row["ratio_opt_high"] = m / opt_obj
            else:
                row["ratio_opt_low"] = None if opt_obj is None else m / opt_obj
                row["ratio_opt_high"] = m / best_lb
        rows.append(row)
    return {"index": index, "rows": rows, "schedules": schedules}


# ---------------------------------------------------------------------------
# executors

def _iter_local(cfg: Config, indices: Sequence[int], jobs: int):
    if jobs == 1:
        for i in indices:
            yield run_instance(cfg, i)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(run_instance, cfg, i) for i in indices]
        for f in as_completed(futs):
            yield f.result()


def _iter_dask(cfg: Config, indices: Sequence[int], jobs: int, scheduler: str | None):
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=40)
        client = Client(cluster)
    try:
        futs = client.map(run_instance, [cfg] * len(indices), list(indices), pure=False)
        for f in as_completed(futs):
            yield f.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run(cfg: Config, *, jobs: int = 1, executor: str = "local", scheduler: str | None = None,
        quiet: bool = True) -> list[dict[str, Any]]:
    """Run the sweep; per-instance results sorted by instance index (order-independent)."""
    from tqdm import tqdm

    indices = list(range(cfg.instances))
    it = _iter_local(cfg, indices, jobs) if executor == "local" else _iter_dask(cfg, indices, jobs, scheduler)
    out = []
    with tqdm(total=len(indices), desc=f"n={cfg.n} {cfg.gpu}", unit="inst", disable=quiet,
              file=sys.stderr) as bar:
        for res in it:
            out.append(res)
            bar.update(1)
    return sorted(out, key=lambda r: r["index"])


# ---------------------------------------------------------------------------
# aggregation and output

def _mean(xs: Iterable[float]) -> float | None:
    xs = sorted(xs)  # fsum of a sorted list: the same bits whatever the completion order
    return math.fsum(xs) / len(xs) if xs else None


def summarise(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary dict per method (table order): ratios to OPT on proven instances, brackets elsewhere."""
    rows = [r for res in sorted(results, key=lambda r: r["index"]) for r in res["rows"]]
    names = [m for m in METHODS + BOUND_ROWS if any(r["method"] == m for r in rows)]
    out = []
    for m in names:
        mine = [r for r in rows if r["method"] == m]
        ok = [r for r in mine if r["makespan"] is not None and r["feasible"]]
        proven = [r for r in ok if r["opt_proven"]]
        unproven = [r for r in ok if not r["opt_proven"]]
        times = [r["time_s"] for r in ok if r["time_s"] is not None]
        out.append({
            "method": m,
            "instances": len(mine),
            "failed": len(mine) - len(ok),
            "proven": len(proven),
            "mean_ratio_opt": _mean(r["ratio_opt"] for r in proven),
            "worst_ratio_opt": max((r["ratio_opt"] for r in proven), default=None),
            "unproven": len(unproven),
            "unproven_ratio_low": _mean(r["ratio_opt_low"] for r in unproven if r["ratio_opt_low"] is not None),
            "unproven_ratio_high": _mean(r["ratio_opt_high"] for r in unproven),
            "mean_ratio_area": _mean(r["ratio_area"] for r in ok),
            "mean_time_s": _mean(times),
        })
    return out


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def format_table(cfg: Config, results: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]]) -> str:
    """The printed report: one markdown table, then the unproven instances with their gaps."""
    k = len(results)
    opt = next((s for s in summary if s["method"] == "OPT"), None)
    n_proven = opt["proven"] if opt else 0
    head = (f"{cfg.gpu}, {cfg.workload}/{cfg.times}, n={cfg.n}, {k} instances (seed {cfg.seed}); "
            f"OPT: {cfg.backend if cfg.exact else 'not run'}"
            + (f", {cfg.time_limit:g} s limit, proven on {n_proven}/{k}" if cfg.exact else ""))
    lines = [head, "",
             "| method | mean /OPT | worst /OPT | mean /area bound | OPT proven | unproven: /OPT within |"
             " failed | mean time (ms) |",
             "|---|---|---|---|---|---|---|---|"]
    for s in summary:
        bracket = "-" if not s["unproven"] else \
            f"{s['unproven']} inst: [{_f(s['unproven_ratio_low'])}, {_f(s['unproven_ratio_high'])}]"
        t = s["mean_time_s"]
        lines.append(f"| {s['method']} | {_f(s['mean_ratio_opt'])} | {_f(s['worst_ratio_opt'])} | "
                     f"{_f(s['mean_ratio_area'])} | {s['proven']}/{s['instances']} | {bracket} | {s['failed']} | "
                     f"{_f(None if t is None else 1000 * t, '{:.1f}')} |")
    unproven = [res for res in results if res["rows"] and not res["rows"][0]["opt_proven"]]
    if cfg.exact and unproven:
        lines.append("")
        lines.append("OPT not proven (ratios above exclude these; the bracket uses U = best found, "
                     "L = best lower bound):")
        for res in unproven:
            r0 = res["rows"][0]
            far = next((r for r in res["rows"] if r["method"] == "FAR"), None)
            gap = "-" if r0["gap"] is None else f"{100 * r0['gap']:.2f}%"
            lines.append(f"  instance {res['index']} (seed {r0['seed']}): {r0['opt_status']}, "
                         f"U={_f(r0['opt_objective'])}, L={_f(r0['opt_bound'])}, gap {gap}"
                         + (f", FAR/OPT in [{_f(far['ratio_opt_low'])}, {_f(far['ratio_opt_high'])}]"
                            if far and far["makespan"] is not None else ""))
    return "\n".join(lines)


def _csv_value(v: Any) -> Any:
    return "" if v is None else v


def write_outputs(out_dir: str | Path, cfg: Config, results: Sequence[dict[str, Any]],
                  summary: Sequence[dict[str, Any]]) -> list[Path]:
    """Write ``results.csv``, ``results.json`` (one row per instance and method), the FAR and OPT
    schedules, and ``gantt.png`` (FAR above OPT, one instance, shared time axis)."""
    from instances import gpus, mig

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for res in results for r in res["rows"]]
    written = []
    fields = list(rows[0]) if rows else []
    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(v) for k, v in r.items()})
    written.append(out / "results.csv")
    (out / "results.json").write_text(json.dumps({"config": asdict(cfg), "rows": rows, "summary": summary},
                                                 indent=1) + "\n")
    written.append(out / "results.json")
    sched_dir = out / "schedules"
    sched_dir.mkdir(exist_ok=True)
    for res in results:
        for m, js in res["schedules"].items():
            (sched_dir / f"instance{res['index']}_{m}.json").write_text(js + "\n")
    # Gantt: the proven instance where FAR is furthest from OPT (the most visible difference)
    best = None
    for res in results:
        if "FAR" in res["schedules"] and "OPT" in res["schedules"]:
            far_row = next(r for r in res["rows"] if r["method"] == "FAR")
            key = (far_row["opt_proven"], far_row["ratio_opt_low"] or 0.0)
            if best is None or key > best[0]:
                best = (key, res)
    if best is not None:
        res = best[1]
        gpu = gpus.get(cfg.gpu)
        far_s = mig.Schedule.from_json(res["schedules"]["FAR"], gpu)
        opt_s = mig.Schedule.from_json(res["schedules"]["OPT"], gpu)
        status = res["rows"][0]["opt_status"]
        mig.save_gantt([far_s, opt_s], gpu, out / "gantt.png",
                       titles=[f"FAR, instance {res['index']}: makespan {far_s.makespan:.2f} s",
                               f"exact ({cfg.backend}, {status}): makespan {opt_s.makespan:.2f} s"])
        written.append(out / "gantt.png")
    return written


# ---------------------------------------------------------------------------
# command line

class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> _Parser:
    from instances import mig

    p = _Parser(prog="python -m benchmarks.compare", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=12, help="tasks per instance (default 12)")
    p.add_argument("--instances", type=int, default=10, help="number of instances (default 10)")
    p.add_argument("--gpu", default="A100", help="A30, A100 or H100 (default A100)")
    p.add_argument("--workload", default="MixedScaling", choices=sorted(mig.SCALING_PRESETS))
    p.add_argument("--times", default="WideTimes", choices=sorted(mig.TIME_PRESETS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", default="cpsat", choices=BACKENDS, help="exact solver (default cpsat)")
    p.add_argument("--time-limit", type=float, default=30.0, help="seconds per exact solve (default 30)")
    p.add_argument("--workers", type=int, default=None, help="solver threads per exact solve")
    p.add_argument("--no-exact", action="store_true", help="skip the exact solver (heuristics and bounds only)")
    p.add_argument("--jobs", type=int, default=1, help="instances run in parallel processes (default 1)")
    p.add_argument("--executor", default="local", choices=EXECUTORS)
    p.add_argument("--scheduler", default=None, help="dask scheduler address tcp://host:port "
                                                     "(default: a LocalCluster of --jobs workers)")
    p.add_argument("--out", default=None, help="directory for results.csv/json, schedules and gantt.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def parse_config(argv: Sequence[str] | None = None) -> tuple[Config, argparse.Namespace]:
    from instances import gpus
    from instances.errors import InstanceError

    parser = _parser()
    a = parser.parse_args(argv)
    if a.n < 1:
        parser.error(f"--n must be at least 1, got {a.n}")
    if a.instances < 1:
        parser.error(f"--instances must be at least 1, got {a.instances}")
    try:
        gpus.get(a.gpu)
    except InstanceError as exc:
        parser.error(f"--gpu: {exc}")
    if not (a.time_limit > 0 and math.isfinite(a.time_limit)):
        parser.error(f"--time-limit must be a positive number of seconds, got {a.time_limit}")
    if a.workers is not None and a.workers < 1:
        parser.error(f"--workers must be at least 1, got {a.workers}")
    if a.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {a.jobs}")
    if a.scheduler and a.executor != "dask":
        parser.error("--scheduler needs --executor dask")
    if a.scheduler and not a.scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        parser.error(f"--scheduler must be an address like tcp://host:8786, got {a.scheduler!r}")
    cfg = Config(n=a.n, instances=a.instances, gpu=a.gpu, workload=a.workload, times=a.times, seed=a.seed,
                 backend=a.backend, time_limit=a.time_limit, workers=a.workers, exact=not a.no_exact)
    return cfg, a


def main(argv: Sequence[str] | None = None) -> int:
    cfg, a = parse_config(argv)
    results = run(cfg, jobs=a.jobs, executor=a.executor, scheduler=a.scheduler, quiet=a.quiet)
    summary = summarise(results)
    print(format_table(cfg, results, summary))
    if a.out:
        for path in write_outputs(a.out, cfg, results, summary):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
