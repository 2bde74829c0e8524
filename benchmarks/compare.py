"""``python -m benchmarks.compare --n 12``: every MIG method against the exact optimum.

Generates ``--instances`` batches of ``--n`` tasks with the FAR paper's
generator (Sec. 6.3) and runs every heuristic of the registry
:data:`heuristics.mig.METHODS` (or those named by ``--methods``; an unknown
name is an error), the exact optimum with reconfiguration
(``milp.solve_optimal``; CP-SAT by default, warm started from the best
heuristic schedule) and the lower bounds of ``bounds/mig.py``, then prints
one table, the one the README shows: per row the mean and worst ratio to
OPT, the mean ratio to the FAR paper's baseline (the area bound of Sec.
6.4), how many optima were proven and the mean and median planning time (per
instance the median of 3 runs for a heuristic, the one solve for OPT; for
OPT the median is the typical time to proof, which one slow instance does
not move). A method added to the registry gets its row without any change
here.

Ratios to OPT use only instances whose optimum was *proven*. For the others the
solver's best makespan U and best valid lower bound L (the larger of the
solver's bound and ``bounds.mig.lower_bound``) bracket OPT, so a method of
makespan M has ``M/U <= M/OPT <= M/L``; the table shows that bracket apart,
and each unproven instance is listed with its gap under the table. A method
that raises, or returns a schedule the checker rejects, is counted in a
``failed`` column (shown only when something failed) with its first error
under the table; it is never left out.

With ``--gpus g`` (g > 1) every instance is the same batch on a node of g
GPUs (``instances/mig_node.py``): the rows are FAR on the node
(:data:`heuristics.far_node.METHODS`, the FAR paper's one heap over g trees),
the node's exact optimum (``milp.solve_optimal`` on the node, CP-SAT) and the
node's bounds (``bounds/mig_node.py``), in the same table.

Every instance is seeded on its own (``numpy.random.SeedSequence([seed,
index])``) and the executor returns results in instance order, so ``--executor
local`` or ``dask`` and any ``--jobs`` give the same figures (planning times
aside).

Examples
--------
::

    python -m benchmarks.compare --n 12
    python -m benchmarks.compare --n 12 --markdown          # exactly the README's table
    python -m benchmarks.compare --n 8 --instances 20 --jobs 2 --out results/
    python -m benchmarks.compare --n 12 --methods FAR,MISO-opt --no-exact
    python -m benchmarks.compare --n 10 --gpus 2 --gpu A30  # FAR and OPT on a node of two A30s
    python -m benchmarks.compare --n 12 --executor dask --scheduler tcp://host:8786
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from benchmarks import common
from benchmarks import executor as ex
from heuristics.mig import METHODS  # the registry itself (not a copy): its rows are this table's rows
from instances.mig_node import MAX_GPUS

__all__ = ["Config", "METHODS", "BACKENDS", "LOWER_BOUND", "AREA_BOUND", "BOUND_ROWS", "NODE_BOUND_ROWS", "HEADER",
           "opt_name", "bound_rows",
           "method_names", "instance_seed", "make_problem", "solve_exact", "evaluate", "run_instance", "run",
           "failed_instance", "summarise", "format_table", "write_outputs", "parse_config", "main"]

BACKENDS = ("cpsat", "highs")
_BACKEND_NAMES = {"cpsat": "CP-SAT", "highs": "HiGHS"}
#: The lower-bound rows (their ratio to OPT shows how tight they are).
LOWER_BOUND = "lower bound (bounds.mig.lower_bound)"
AREA_BOUND = "area bound (FAR paper, Sec. 6.4)"
BOUND_ROWS = (LOWER_BOUND, AREA_BOUND)
#: The columns of the printed table (the README's); ``failed`` is added when something failed.
HEADER = ("method", "mean /OPT", "worst /OPT", "mean /area bound", "OPT proven", "unproven: /OPT within",
          "mean time (ms)", "median time (ms)")


def opt_name(backend: str) -> str:
    """Row name of the exact optimum, e.g. ``"OPT (CP-SAT, with reconfiguration)"``.

    Examples
    --------
    >>> opt_name("highs")
    'OPT (HiGHS, with reconfiguration)'
    """
    return f"OPT ({_BACKEND_NAMES.get(backend, backend)}, with reconfiguration)"


def method_names(gpus: int = 1) -> tuple[str, ...]:
    """The heuristics of the registry :data:`heuristics.mig.METHODS`, in its order (read at call time);
    for a node of ``gpus > 1`` GPUs those of :data:`heuristics.far_node.METHODS`."""
    if gpus > 1:
        from heuristics import far_node

        return tuple(far_node.METHODS)
    return tuple(METHODS)


#: The bound rows of a node of g GPUs (``--gpus g``).
NODE_BOUND_ROWS = ("lower bound (bounds.mig_node.lower_bound)",
                   "area bound over the node's GPUs (FAR paper, Sec. 6.4)")


def bound_rows(gpus: int = 1) -> tuple[str, str]:
    """The names of the lower-bound rows: :data:`BOUND_ROWS`, or :data:`NODE_BOUND_ROWS` for ``gpus > 1``."""
    return NODE_BOUND_ROWS if gpus > 1 else BOUND_ROWS


def _family(problem) -> tuple[dict[str, Callable], Callable, tuple[tuple[str, float], ...]]:
    """The registry, the checker and the (lower bound, area bound) rows of one GPU's batch or of a node."""
    from instances.mig_node import NodeProblem

    if isinstance(problem, NodeProblem):
        from bounds import mig_node as node_bounds
        from heuristics import far_node
        from instances import mig_node

        return far_node.METHODS, mig_node.check, tuple(zip(NODE_BOUND_ROWS, (node_bounds.lower_bound(problem),
                                                                            node_bounds.area_bound(problem))))
    from bounds import mig as mig_bounds
    from instances import mig

    return METHODS, mig.check, ((LOWER_BOUND, mig_bounds.lower_bound(problem)),
                                (AREA_BOUND, mig_bounds.area_bound(problem)))


@dataclass(frozen=True)
class Config:
    """One sweep: what to generate and how to solve it.

    ``methods`` names the registry's heuristics to run (``None``: all of
    them, read when the sweep starts); the names travel with the tasks so
    that every worker runs the same rows.
    """

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
    methods: tuple[str, ...] | None = None
    gpus: int = 1  # > 1: the batch on a node of that many GPUs


def instance_seed(seed: int, index: int) -> int:
    """The generator seed of instance ``index``: independent of the other instances and of run order.

    Examples
    --------
    >>> instance_seed(0, 3) == instance_seed(0, 3) != instance_seed(1, 3)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint32)[0])


def make_problem(cfg: Config, index: int):
    """Instance ``index`` of the sweep (a ``mig.Problem``; with ``gpus > 1`` a ``mig_node.NodeProblem``)."""
    from instances import mig

    problem = mig.generate(cfg.n, cfg.gpu, cfg.workload, cfg.times, instance_seed(cfg.seed, index))
    if cfg.gpus > 1:
        from instances.mig_node import NodeProblem

        return NodeProblem.from_problem(problem, cfg.gpus)
    return problem


def _timed(fn: Callable, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def _timed_median(fn: Callable, problem, repeats: int):
    """Result of the first run and the median time of ``repeats`` runs (heuristics are deterministic)."""
    out, first = _timed(fn, problem)
    times = [first] + [_timed(fn, problem)[1] for _ in range(repeats - 1)]
    return out, float(np.median(times))


def _error(exc: BaseException) -> str:
    return " ".join(f"ERROR: {type(exc).__name__}: {exc}".split())[:300]


def solve_exact(problem, **options):
    """``milp.solve_optimal(problem, **options)`` (imported lazily, so worker processes load OR-Tools only when used)."""
    from milp import solve_optimal

    return solve_optimal(problem, **options)


def evaluate(problem, methods: Sequence[str] | None = None, *, exact: bool = True, backend: str = "cpsat",
             time_limit: float | None = 30.0, workers: int | None = None,
             timing_repeats: int = 3) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every row of the table on one problem: the heuristics, the exact optimum, the bounds.

    Parameters
    ----------
    problem
        A ``mig.Problem``, or a ``mig_node.NodeProblem`` (rows from
        :data:`heuristics.far_node.METHODS`, the node's checker and bounds).
    methods
        Names from :data:`heuristics.mig.METHODS` (``None``: all, in registry order).

    Returns
    -------
    rows, schedules
        One dict per row in table order (``method``, ``kind`` = ``"heuristic"``,
        ``"exact"`` or ``"bound"``, ``makespan``, ``time_s``, ``feasible``,
        ``status``, the ratios to OPT and to the area bound, and the instance's
        OPT figures); ``{row name: schedule JSON}`` of every feasible schedule.
        A method that raises or returns an infeasible schedule gets a row with
        ``feasible=False`` and the error in ``status``.

    Examples
    --------
    >>> from instances import mig
    >>> rows, _ = evaluate(mig.generate(n=4, gpu="A100", seed=1), ["FAR"], exact=False, timing_repeats=1)
    >>> [(r["method"], r["kind"]) for r in rows]
    [('FAR', 'heuristic'), ('lower bound (bounds.mig.lower_bound)', 'bound'), ('area bound (FAR paper, Sec. 6.4)', 'bound')]
    """
    registry, check, bounds = _family(problem)
    (_, lower), (_, area) = bounds
    results: list[dict[str, Any]] = []
    schedules: dict[str, str] = {}
    best = None  # the best feasible heuristic schedule: the exact solver's warm start
    for name in (tuple(registry) if methods is None else methods):
        row = {"method": name, "kind": "heuristic", "makespan": None, "time_s": None, "feasible": False}
        try:
            fn = registry[name]  # a worker without the name (e.g. a patched registry) reports it here
            sched, secs = _timed_median(fn, problem, timing_repeats)
            violations = check(problem, sched)
        except Exception as exc:  # a crash is a result to report, not a reason to lose the sweep
            results.append(dict(row, status=_error(exc)))
            continue
        if violations:
            results.append(dict(row, time_s=secs, status=f"INFEASIBLE: {violations[0]}"[:300]))
            continue
        results.append(dict(row, makespan=sched.makespan, time_s=secs, feasible=True, status="heuristic"))
        schedules[name] = sched.to_json()
        if best is None or sched.makespan < best.makespan:
            best = sched

    opt_obj = opt_lb = None
    opt_status = "SKIPPED"
    if exact:
        row = {"method": opt_name(backend), "kind": "exact", "makespan": None, "time_s": None,
               "feasible": False}
        try:
            res, secs = _timed(solve_exact, problem, backend=backend, reconfiguration=True,
                               time_limit=time_limit, workers=workers, hint=best)
            opt_status = str(res.status)
            opt_lb = res.lower_bound
            feasible = res.schedule is not None and not check(problem, res.schedule)
            if res.schedule is not None and not feasible:
                opt_status = "INFEASIBLE-SCHEDULE"  # never trust a schedule the checker rejects
            if feasible:
                opt_obj = res.objective
                schedules[row["method"]] = res.schedule.to_json()
            results.append(dict(row, makespan=opt_obj, time_s=secs, feasible=feasible, status=opt_status))
        except Exception as exc:
            opt_status = _error(exc)
            results.append(dict(row, status=opt_status))
    proven = opt_status == "OPTIMAL" and opt_obj is not None
    # the best valid lower bound on OPT; the solver's bound only counts when it reported one
    best_lb = max([lower, area] + ([opt_lb] if opt_lb is not None and math.isfinite(opt_lb) else []))
    if proven:
        best_lb = opt_obj
    for name, value in bounds:
        results.append({"method": name, "kind": "bound", "makespan": value, "time_s": None, "feasible": True,
                        "status": "bound"})

    rows = []
    for r in results:
        m = r["makespan"]
        row = {**r, "opt_status": opt_status, "opt_proven": proven, "opt_objective": opt_obj,
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
    return rows, schedules


def run_instance(cfg: Config, index: int) -> dict[str, Any]:
    """:func:`evaluate` on instance ``index`` of the sweep; picklable in and out (for process pools and dask).

    Returns
    -------
    dict
        ``index``; ``rows``: :func:`evaluate`'s rows, each also naming the
        instance, its seed and the sweep's generator settings; ``schedules``.
    """
    seed = instance_seed(cfg.seed, index)
    rows, schedules = evaluate(make_problem(cfg, index), cfg.methods, exact=cfg.exact, backend=cfg.backend,
                               time_limit=cfg.time_limit, workers=cfg.workers, timing_repeats=cfg.timing_repeats)
    meta = {"instance": index, "seed": seed, "gpu": cfg.gpu, "workload": cfg.workload, "times": cfg.times,
            "n": cfg.n, **({"gpus": cfg.gpus} if cfg.gpus > 1 else {})}
    return {"index": index, "rows": [{**meta, **r} for r in rows], "schedules": schedules}


def run(cfg: Config, executor: ex.Executor | None = None, *, quiet: bool = True) -> list[dict[str, Any]]:
    """Run the sweep on ``executor`` (default: in this process); per-instance results in instance order."""
    if cfg.methods is None:  # fix the rows here, so that every worker runs the same ones
        from dataclasses import replace

        cfg = replace(cfg, methods=method_names(cfg.gpus))
    executor = executor or ex.Executor()
    results = executor.map(functools.partial(run_instance, cfg), range(cfg.instances), quiet=quiet,
                           desc=f"n={cfg.n} {cfg.gpu}", unit="inst", label=lambda i: f"instance {i}")
    return [failed_instance(cfg, i, r) if isinstance(r, ex.Failed) else r for i, r in enumerate(results)]


def failed_instance(cfg: Config, index: int, failure: ex.Failed) -> dict[str, Any]:
    """The result of an instance whose task failed as a whole (``failed``: every row failed with its error)."""
    error = f"ERROR: {failure.error}"
    names = list(cfg.methods or method_names(cfg.gpus)) + ([opt_name(cfg.backend)] if cfg.exact else []) + \
        list(bound_rows(cfg.gpus))
    meta = {"instance": index, "seed": instance_seed(cfg.seed, index), "gpu": cfg.gpu, "workload": cfg.workload,
            "times": cfg.times, "n": cfg.n, **({"gpus": cfg.gpus} if cfg.gpus > 1 else {})}
    kinds = {opt_name(cfg.backend): "exact", **{b: "bound" for b in bound_rows(cfg.gpus)}}
    rows = [{**meta, "method": m, "kind": kinds.get(m, "heuristic"), "makespan": None, "time_s": None,
             "feasible": False, "status": error, "opt_status": error, "opt_proven": False, "opt_objective": None,
             "opt_bound": None, "area_bound": None, "lower_bound": None, "gap": None, "ratio_opt": None,
             "ratio_opt_low": None, "ratio_opt_high": None, "ratio_area": None} for m in names]
    return {"index": index, "rows": rows, "schedules": {}, "failed": True}


# ---------------------------------------------------------------------------
# aggregation and output

def _mean(xs: Iterable[float]) -> float | None:
    xs = sorted(xs)  # fsum of a sorted list: the same bits whatever the completion order
    return math.fsum(xs) / len(xs) if xs else None


def summarise(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary dict per row (table order): ratios to OPT on proven instances, brackets elsewhere."""
    rows = [r for res in sorted(results, key=lambda r: r["index"]) for r in res["rows"]]
    names = list(dict.fromkeys(r["method"] for r in rows))  # first appearance = table order
    out = []
    for m in names:
        mine = [r for r in rows if r["method"] == m]
        ok = [r for r in mine if r["makespan"] is not None and r["feasible"]]
        proven = [r for r in ok if r["opt_proven"]]
        unproven = [r for r in ok if not r["opt_proven"]]
        times = [r["time_s"] for r in ok if r["time_s"] is not None]
        failures = [r for r in mine if not (r["makespan"] is not None and r["feasible"])]
        out.append({
            "method": m,
            "kind": mine[0].get("kind", "heuristic"),
            "instances": len(mine),
            "failed": len(failures),
            "first_error": None if not failures else f"instance {failures[0].get('instance', '?')}: {failures[0]['status']}",
            "proven": len(proven),
            "mean_ratio_opt": _mean(r["ratio_opt"] for r in proven),
            "worst_ratio_opt": max((r["ratio_opt"] for r in proven), default=None),
            "unproven": len(unproven),
            "unproven_ratio_low": _mean(r["ratio_opt_low"] for r in unproven if r["ratio_opt_low"] is not None),
            "unproven_ratio_high": _mean(r["ratio_opt_high"] for r in unproven),
            "mean_ratio_area": _mean(r["ratio_area"] for r in ok),
            "mean_time_s": _mean(times),
            "median_time_s": float(np.median(times)) if times else None,
        })
    return out


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    ms = 1000 * seconds
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def format_table(cfg: Config, results: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]],
                 markdown: bool = False) -> str:
    """The printed report: the README's table, then the unproven instances and the failures.

    With ``markdown=True`` the line describing the run is left out, so the
    output is exactly what the README shows under its command.
    """
    k = len(results)
    opt = next((s for s in summary if s["kind"] == "exact"), None)
    n_proven = opt["proven"] if opt else 0
    failed = any(s["failed"] for s in summary)
    header = list(HEADER) + (["failed"] if failed else [])
    body = []
    for s in summary:
        bracket = "-" if not s["unproven"] else \
            f"{s['unproven']} inst: [{common.fmt(s['unproven_ratio_low'])}, {common.fmt(s['unproven_ratio_high'])}]"
        cells = [s["method"], common.fmt(s["mean_ratio_opt"]), common.fmt(s["worst_ratio_opt"]),
                 common.fmt(s["mean_ratio_area"]), f"{s['proven']}/{s['instances']}", bracket,
                 _ms(s["mean_time_s"]), _ms(s["median_time_s"])]
        body.append(cells + ([f"{s['failed']}/{s['instances']}"] if failed else []))
    lines = []
    if not markdown:
        node = cfg.gpu if cfg.gpus == 1 else f"{cfg.gpus} x {cfg.gpu}"
        lines += [f"{node}, {cfg.workload}/{cfg.times}, n={cfg.n}, {k} instances (seed {cfg.seed}); "
                  f"OPT: {cfg.backend if cfg.exact else 'not run'}"
                  + (f", {cfg.time_limit:g} s limit, proven on {n_proven}/{k}" if cfg.exact else ""), ""]
    lines.append(common.markdown_table(header, body))
    unproven = [res for res in results
                if res["rows"] and not res["rows"][0]["opt_proven"] and not res.get("failed")]
    if cfg.exact and unproven:
        lines += ["", "OPT not proven on these instances (the ratios to OPT above leave them out; the bracket "
                      "uses U = best found, L = best lower bound):", ""]
        for res in unproven:
            r0 = res["rows"][0]
            first = next((r for r in res["rows"] if r["kind"] == "heuristic" and r["makespan"] is not None), None)
            gap = "-" if r0["gap"] is None else f"{100 * r0['gap']:.2f}%"
            lines.append(f"- instance {res['index']} (seed {r0['seed']}): {r0['opt_status']}, "
                         f"U={common.fmt(r0['opt_objective'])}, L={common.fmt(r0['opt_bound'])}, gap {gap}"
                         + (f", {first['method']}/OPT in [{common.fmt(first['ratio_opt_low'])}, "
                            f"{common.fmt(first['ratio_opt_high'])}]" if first else ""))
    if failed:
        lines += ["", "Failed runs (counted in the failed column, left out of the ratios):", ""]
        lines += [f"- {s['method']}: {s['failed']}/{s['instances']}, first: {s['first_error']}"
                  for s in summary if s["failed"]]
    return "\n".join(lines)


def _csv_value(v: Any) -> Any:
    return "" if v is None else v


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", name).strip("_")


def write_outputs(out_dir: str | Path, cfg: Config, results: Sequence[dict[str, Any]],
                  summary: Sequence[dict[str, Any]]) -> list[Path]:
    """Write ``results.csv``, ``results.json`` (one row per instance and row of the table), every
    feasible schedule, and ``gantt.png`` (FAR above OPT on one instance, shared time axis)."""
    from instances import gpus, mig

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for res in results for r in res["rows"]]
    written = []
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in fields})
    written.append(out / "results.csv")
    (out / "results.json").write_text(json.dumps({"config": asdict(cfg), "rows": rows, "summary": summary},
                                                 indent=1) + "\n")
    written.append(out / "results.json")
    opt = opt_name(cfg.backend)
    sched_dir = out / "schedules"
    sched_dir.mkdir(exist_ok=True)
    for res in results:
        for m, js in res["schedules"].items():
            (sched_dir / f"instance{res['index']}_{'OPT' if m == opt else _slug(m)}.json").write_text(js + "\n")
    written.append(sched_dir)
    # Gantt: FAR (or the first heuristic) against OPT on the instance where it is furthest from a
    # proven optimum (the most visible difference)
    heur = [s["method"] for s in summary if s["kind"] == "heuristic"]
    shown = "FAR" if "FAR" in heur else (heur[0] if heur else None)
    best = None
    for res in results:
        if shown in res["schedules"] and opt in res["schedules"]:
            row = next(r for r in res["rows"] if r["method"] == shown)
            key = (row["opt_proven"], row["ratio_opt_low"] or 0.0)
            if best is None or key > best[0]:
                best = (key, res)
    if best is not None:
        res = best[1]
        gpu = gpus.get(cfg.gpu)
        r0 = res["rows"][0]
        state = "proven optimal" if r0["opt_proven"] else \
            f"best found, not proven ({r0['opt_status']}, gap {100 * (r0['gap'] or 0):.2f} %)"
        if cfg.gpus > 1:  # one panel per GPU of the node, FAR's above OPT's
            from instances.mig_node import NodeSchedule

            heur_n, opt_n = (NodeSchedule.from_json(res["schedules"][m], gpu) for m in (shown, opt))
            mig.save_gantt([s.part(k) for s in (heur_n, opt_n) for k in range(cfg.gpus)], gpu, out / "gantt.png",
                           titles=[f"{shown}, instance {res['index']} (n = {cfg.n}), GPU {k}: makespan "
                                   f"{heur_n.makespan:.2f} s" for k in range(cfg.gpus)]
                           + [f"{opt}, {state}, GPU {k}: makespan {opt_n.makespan:.2f} s" for k in range(cfg.gpus)])
        else:
            heur_s = mig.Schedule.from_json(res["schedules"][shown], gpu)
            opt_s = mig.Schedule.from_json(res["schedules"][opt], gpu)
            mig.save_gantt([heur_s, opt_s], gpu, out / "gantt.png",
                           titles=[f"{shown}, instance {res['index']} (n = {cfg.n}): makespan "
                                   f"{heur_s.makespan:.2f} s", f"{opt}, {state}: makespan {opt_s.makespan:.2f} s"])
        written.append(out / "gantt.png")
    return written


# ---------------------------------------------------------------------------
# command line

#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "1-2 minutes (ten exact solves of n = 12)"


def _parser() -> common.Parser:
    from instances import mig

    p = common.Parser(prog="python -m benchmarks.compare", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--n", type=common.integer(1, common.MAX_TASKS), default=12,
                   help=f"tasks per instance, at most {common.MAX_EXACT_TASKS:,} with the exact solver (rarely "
                        f"proven beyond n = 20), {common.MAX_TASKS:,} with --no-exact")
    p.add_argument("--instances", type=common.count, default=10,
                   help=f"number of instances, at most {common.MAX_COUNT:,}")
    p.add_argument("--gpu", default="A100", help="A30, A100, H100 or a GPU defined by the user")
    p.add_argument("--gpus", type=common.integer(1, MAX_GPUS), default=1,
                   help=f"GPUs of the node, at most {MAX_GPUS}: with more than one, FAR on the node "
                        "(heuristics.far_node) against the node's optimum (default: 1, the single GPU)")
    p.add_argument("--workload", default="MixedScaling", choices=sorted(mig.SCALING_PRESETS),
                   help="scaling preset of the generator (FAR paper, Sec. 6.3)")
    p.add_argument("--times", default="WideTimes", choices=sorted(mig.TIME_PRESETS),
                   help="time preset of the generator (FAR paper, Sec. 6.3)")
    p.add_argument("--seed", type=common.seed, default=0, help="base seed of the instances")
    p.add_argument("--methods", type=common.comma_choices(method_names(), "method"), default=None,
                   help=f"comma list of heuristics from heuristics.mig.METHODS "
                        f"(default: all, {','.join(method_names())})")
    p.add_argument("--backend", default="cpsat", choices=BACKENDS, help="exact solver")
    p.add_argument("--time-limit", type=common.seconds, default=30.0, help="seconds per exact solve")
    p.add_argument("--workers", type=common.workers, default=None,
                   help="solver threads per exact solve (default: the solver's own)")
    p.add_argument("--no-exact", action="store_true", help="skip the exact solver (heuristics and bounds only)")
    ex.add_arguments(p, out=False)
    p.add_argument("--out", type=common.output_dir, default=None,
                   help="folder for results.csv, results.json, schedules/, gantt.png and records.jsonl (every "
                        "instance as it finishes: the same command run again resumes from them), created if "
                        "missing (default: none, the table only)")
    common.add_markdown(p)
    common.add_quiet(p)
    return p


def _parse(argv: Sequence[str] | None) -> tuple[common.Parser, Config, argparse.Namespace]:
    from instances import gpus
    from instances.errors import InstanceError

    parser = _parser()
    a = parser.parse_args(argv)
    if not a.no_exact and a.n > common.MAX_EXACT_TASKS:
        parser.error(f"--n: at most {common.MAX_EXACT_TASKS:,} with the exact solver, got {a.n:,}; "
                     "--no-exact runs the heuristics and bounds alone")
    try:
        gpus.get(a.gpu)
    except InstanceError as exc:
        parser.error(f"--gpu: {exc}")
    if a.gpus > 1:
        wrong = [m for m in a.methods or () if m not in method_names(a.gpus)]
        if wrong:
            parser.error(f"--methods: {wrong[0]!r} has no node version; with --gpus > 1 choose from "
                         f"{','.join(method_names(a.gpus))}")
        if a.backend != "cpsat" and not a.no_exact:
            parser.error("--backend: a node's exact models are CP-SAT only (milp.mig_node)")
    a.executor_obj = ex.from_args(parser, a)
    cfg = Config(n=a.n, instances=a.instances, gpu=a.gpu, workload=a.workload, times=a.times, seed=a.seed,
                 backend=a.backend, time_limit=a.time_limit, workers=a.workers, exact=not a.no_exact,
                 methods=tuple(a.methods) if a.methods else method_names(a.gpus), gpus=a.gpus)
    return parser, cfg, a


def parse_config(argv: Sequence[str] | None = None) -> tuple[Config, argparse.Namespace]:
    """The sweep's :class:`Config` and the parsed arguments; a bad argument exits with status 2."""
    _, cfg, a = _parse(argv)
    return cfg, a


def main(argv: Sequence[str] | None = None) -> int:
    parser, cfg, a = _parse(argv)
    try:
        results = run(cfg, a.executor_obj, quiet=a.quiet)
    except ex.ExecutorError as exc:
        parser.error(str(exc))
    summary = summarise(results)
    print(format_table(cfg, results, summary, markdown=a.markdown))
    if a.out:
        with common.writing(parser, "--out"):
            paths = write_outputs(a.out, cfg, results, summary)
        # stdout stays the table alone under --markdown
        for path in paths:
            print(f"wrote {path}", file=sys.stderr if a.markdown else sys.stdout)
    return 0


if __name__ == "__main__":
    common.run_cli(main)
