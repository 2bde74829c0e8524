"""``python -m benchmarks.hetero``: heterogeneous GPUs: the paper's heuristics and ILS against the exact models.

Generates instances (:func:`instances.hetero.generate`: ``--n`` tasks with
arrivals on a cluster of ``--gpus``, by default T4 + V100 + A100-80GB),
solves each with an exact backend (``--backend``, default ``auto``: the
column-generation root of :mod:`milp.hetero_colgen`, then the
branch-and-price of :mod:`milp.hetero_bnp` where the gap stays open
(CP-SAT with the root's bound where its grid is not exact); ``cpsat`` and ``highs`` are the models of
formulation (1)-(6), warm-started from the ILS and given the
column-generation bound of :mod:`bounds.hetero_colgen`) within
``--time-limit`` seconds, and runs every
heuristic of :data:`heuristics.hetero.METHODS` (FIFO, Greedy (EFT) and
SAGreedy of the heterogeneous-GPU weighted-tardiness paper, Sec. III, and
the ILS).

Two tables, three with ``--bound-time``. *Bound*: per n, the gap
(best known - bound) / best known of :func:`bounds.hetero.lower_bound` run
alone from the ILS schedule within ``--bound-time`` seconds, the best known
being the least value of the exact method and every heuristic, and its
times. *Exact*: per n, how many instances are proven optimal, the mean
and worst gap (objective - bound) / objective of the others, and the times.
*Heuristics*: per n and method, how often the method reaches the best value
known (the exact model's, optimal where proven), the mean gap
(value - best) / max(best, 1), the means of the paper's six metrics (Sec.
I.E: total weighted completion time TWCT eq. 7, average completion time ACT
eq. 8, both over flow times c_i - a_i, deadline miss count DMC eq. 9, miss
rate DMR eq. 10, makespan C_max eq. 11, utilisation eta eq. 12) and the mean
time. Every schedule is checked; a
heuristic below a proven optimum stops the run with an error.

Every instance is one independent task of :mod:`benchmarks.executor`
(``--executor local|dask``, ``--scheduler``, ``--jobs``).

Examples
--------
``python -m benchmarks.hetero --quiet``
``python -m benchmarks.hetero --n 12,20,30 --seeds 5 --time-limit 60``
``python -m benchmarks.hetero --n 20,40 --seeds 5 --first-seed 1000 --bound-time 10 --time-limit 60``
``python -m benchmarks.hetero --n 8,10,12 --seeds 10 --gpus T4,L4,H100 --markdown``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

from benchmarks import executor as ex
from benchmarks.common import (Parser, add_markdown, add_quiet, count, count_or_zero, description, error_line, fmt,
                               fraction, integers, markdown_table, number, run_cli, seconds, seed, workers)
from instances.console import MAX_SECONDS
from heuristics import hetero as heur
from instances import hetero
from bounds.hetero import lower_bound
from milp import solve_optimal

BACKENDS = ("auto", "colgen", "cpsat", "highs")


@dataclass(frozen=True)
class Config:
    """One sweep (picklable: it travels with each task)."""

    ns: tuple[int, ...] = (8, 9, 10, 11, 12)
    seeds: int = 5
    first_seed: int = 0
    bound_time: float = 0.0
    gpus: tuple[str, ...] = ("T4", "V100", "A100-80GB")
    tightness: float = 0.6
    rdd: float = 0.6
    time_limit: float = 60.0
    backend: str = "auto"
    ils_time: float = 0.5
    ils_iters: int | None = None
    workers: int = 1
    methods: tuple[str, ...] = tuple(heur.METHODS)


def _heuristic(name: str, cfg: Config, seed: int):
    if name == "ils":
        return lambda pb: heur.ils(pb, time_limit=cfg.ils_time, max_iter=cfg.ils_iters, seed=seed)
    if name == "sagreedy":
        return lambda pb: heur.sagreedy(pb, seed=seed)
    return heur.METHODS[name]


def evaluate(task: tuple[Config, int, int]) -> dict[str, Any]:
    """One instance ``(cfg, n, seed)``: the exact result and every heuristic (times under ``*time_s``)."""
    cfg, n, seed = task
    pb = hetero.generate(n, gpus=cfg.gpus, tightness=cfg.tightness, rdd=cfg.rdd, seed=seed)
    hint = heur.ils(pb, time_limit=cfg.ils_time, max_iter=cfg.ils_iters, seed=seed)
    res = solve_optimal(pb, backend=cfg.backend, time_limit=cfg.time_limit, workers=cfg.workers, hint=hint,
                        seed=seed)
    rec: dict[str, Any] = {"n": n, "seed": seed, "proven": bool(res.proven), "best": res.objective,
                           "lower_bound": res.lower_bound, "gap": res.gap, "exact_time_s": res.runtime,
                           "methods": {}}
    if cfg.bound_time > 0:
        # the bound alone from the ILS schedule, as a user calls it; checked against every schedule below
        t0 = time.perf_counter()
        rec["bound"] = lower_bound(pb, hint, time_limit=cfg.bound_time)
        rec["bound_time_s"] = time.perf_counter() - t0
        if res.proven and rec["bound"] > res.objective + 1e-6 * max(1.0, res.objective):
            raise RuntimeError(f"n={n} seed={seed}: bound {rec['bound']} above the proven optimum {res.objective}")
    for m in cfg.methods:
        t0 = time.perf_counter()
        sched = _heuristic(m, cfg, seed)(pb)
        dt = time.perf_counter() - t0
        errs = hetero.check(pb, sched)
        if errs:
            raise RuntimeError(f"{m} n={n} seed={seed}: infeasible schedule: {errs[:3]}")
        val = hetero.weighted_tardiness(pb, sched)
        if res.proven and val < res.objective - 1e-6 * max(1.0, res.objective):
            raise RuntimeError(f"{m} n={n} seed={seed}: {val} below the proven optimum {res.objective}")
        if "bound" in rec and val < rec["bound"] - 1e-6 * max(1.0, rec["bound"]):
            raise RuntimeError(f"{m} n={n} seed={seed}: {val} below the lower bound {rec['bound']}")
        mt = hetero.metrics(pb, sched)
        rec["methods"][m] = {"value": val, "twct": mt.twct, "act": mt.act, "dmc": mt.dmc, "dmr": mt.dmr,
                             "cmax": mt.makespan, "eta": mt.utilisation, "time_s": dt}
    return rec


def run(cfg: Config, executor: ex.Executor | None = None, quiet: bool = True) -> list[dict[str, Any]]:
    """:func:`evaluate` on every ``(n, seed)`` of the sweep, in order (a failed instance of a command's sweep
    is left out: the command lists it and exits 1)."""
    tasks = [(cfg, n, s) for n in cfg.ns for s in range(cfg.first_seed, cfg.first_seed + cfg.seeds)]
    return ex.succeeded((executor or ex.Executor()).map(evaluate, tasks, quiet=quiet, desc="instances",
                                                        unit="instance", label=lambda t: f"n={t[1]} seed={t[2]}"))


#: The paper's six metrics (Sec. I.E) per method: record key and format, and the column headers.
_METRICS = (("twct", ".1f"), ("act", ".1f"), ("dmc", ".1f"), ("dmr", ".2f"), ("cmax", ".1f"), ("eta", ".2f"))
_METRIC_HEADERS = ("TWCT (7)", "ACT (8)", "DMC (9)", "DMR (10)", "C_max (11)", "eta (12)")


def tables(cfg: Config, recs: list[dict[str, Any]]) -> dict[str, str]:
    """The ``exact`` and ``heuristics`` markdown tables of a :func:`run`."""
    exact_rows, heur_rows, bound_rows = [], [], []
    for n in cfg.ns:
        rs = [r for r in recs if r["n"] == n]
        if not rs:  # every instance of this n failed
            continue
        open_gaps = [r["gap"] for r in rs if not r["proven"] and r["gap"] is not None]
        exact_rows.append([n, f"{sum(r['proven'] for r in rs)}/{len(rs)}",
                           fmt(100 * statistics.fmean(open_gaps), ".1f") if open_gaps else "-",
                           fmt(100 * max(open_gaps), ".1f") if open_gaps else "-",
                           fmt(statistics.fmean(r["exact_time_s"] for r in rs), ".2f"),
                           fmt(max(r["exact_time_s"] for r in rs), ".2f")])
        if cfg.bound_time > 0:
            known = [min([r["best"]] + [v["value"] for v in r["methods"].values()]) for r in rs]
            # a bound equal to the value can sit a rounding error above it: shown as 0
            gaps = [max(0.0, (k - r["bound"]) / k) if k > 0 else 0.0 for r, k in zip(rs, known)]
            bound_rows.append([n, fmt(100 * statistics.fmean(gaps), ".2f"), fmt(100 * max(gaps), ".2f"),
                               fmt(statistics.fmean(r["bound_time_s"] for r in rs), ".2f"),
                               fmt(max(r["bound_time_s"] for r in rs), ".2f")])
        for m in cfg.methods:
            vals = [(r["methods"][m], r["best"]) for r in rs]
            heur_rows.append([n, m, f"{sum(v['value'] <= b + 1e-6 * max(1.0, b) for v, b in vals)}/{len(rs)}",
                              fmt(100 * statistics.fmean((v["value"] - b) / max(b, 1.0) for v, b in vals), ".1f"),
                              *(fmt(statistics.fmean(v[k] for v, _ in vals), f) for k, f in _METRICS),
                              fmt(statistics.fmean(v["time_s"] for v, _ in vals))])
    out = {"bound": markdown_table(["n", "bound: mean gap % to best known", "worst gap %", "mean time s",
                                    "max time s"], bound_rows)} if cfg.bound_time > 0 else {}
    return {**out, "exact": markdown_table(["n", f"proven ({cfg.backend})", "mean gap % (unproven)", "worst gap %",
                                            "mean time s", "max time s"], exact_rows),
            "heuristics": markdown_table(["n", "method", "best known reached", "mean gap %",
                                          *(f"mean {h}" for h in _METRIC_HEADERS), "mean time s"], heur_rows)}


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "2-3 minutes"
#: Largest ``--n``: the exact models' memory grows as n^2 (about 1.3 GB at n = 300).
MAX_N = 200
#: Largest cluster of ``--gpus``.
MAX_GPUS = 64


def _gpus(text: str) -> list[str]:
    # not comma_choices: that one merges repeated names, and here a repeat is one more GPU
    out = [g.strip() for g in text.split(",") if g.strip()]
    if len(out) > MAX_GPUS:
        raise argparse.ArgumentTypeError(f"at most {MAX_GPUS} GPUs, got {len(out)}")
    bad = [g for g in out if g not in hetero.GPU_MODELS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"unknown GPU model {', '.join(bad) or '(none given)'}; "
                                         f"choose from {', '.join(hetero.GPU_MODELS)}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="python -m benchmarks.hetero", description=description(__doc__, DEFAULT_RUN))
    parser.add_argument("--n", type=integers(1, MAX_N), default=[8, 9, 10, 11, 12],
                        help=f"task counts, comma-separated, each at most {MAX_N}")
    parser.add_argument("--seeds", type=count, default=5, help="instances per n")
    parser.add_argument("--first-seed", type=seed, default=0, help="seed of the first instance of each n")
    parser.add_argument("--bound-time", type=number(0, MAX_SECONDS), default=0.0,
                        help="also time bounds.hetero.lower_bound alone from the ILS schedule, this many seconds "
                             "per instance, and table its gap to the best known value (default: 0, off)")
    parser.add_argument("--gpus", type=_gpus, default=["T4", "V100", "A100-80GB"],
                        help=f"GPU models of the cluster, at most {MAX_GPUS} (a model named twice is two GPUs)")
    parser.add_argument("--tightness", type=fraction, default=0.6, help="tardiness factor TF in [0, 1]")
    parser.add_argument("--rdd", type=number(0, 1, above=True), default=0.6,
                        help="relative range of due dates in (0, 1]")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="exact backend (auto: colgen for these clusters)")
    parser.add_argument("--time-limit", type=seconds, default=60.0, help="exact limit per instance (s)")
    parser.add_argument("--ils-time", type=seconds, default=0.5, help="ILS time limit per instance (s)")
    parser.add_argument("--ils-iters", type=count_or_zero, default=None,
                        help="also stop ILS after this many kicks, for deterministic runs (default: no kick limit)")
    parser.add_argument("--workers", type=workers, default=1, help="solver threads")
    ex.add_arguments(parser)
    add_markdown(parser)
    add_quiet(parser)
    args = parser.parse_args(argv)
    executor = ex.from_args(parser, args)
    cfg = Config(ns=tuple(args.n), seeds=args.seeds, first_seed=args.first_seed, bound_time=args.bound_time,
                 gpus=tuple(args.gpus), tightness=args.tightness, rdd=args.rdd,
                 time_limit=args.time_limit, backend=args.backend, ils_time=args.ils_time,
                 ils_iters=args.ils_iters, workers=args.workers)
    try:
        recs = run(cfg, executor, quiet=args.quiet)
    except ex.ExecutorError as exc:
        parser.error(str(exc))
    except RuntimeError as exc:  # a schedule the checker rejects, a value below a proven optimum: a bug
        print(error_line(parser.prog, exc), file=sys.stderr)
        return 1
    tabs = tables(cfg, recs)
    if args.markdown:
        print("\n\n".join(tabs.values()))
        return 0
    print(f"Heterogeneous GPUs: cluster {'+'.join(cfg.gpus)}, TF {cfg.tightness:g}, RDD {cfg.rdd:g}, "
          f"{cfg.seeds} seeds per n, {cfg.backend} {cfg.time_limit:g} s, ILS {cfg.ils_time:g} s")
    if "bound" in tabs:
        print(f"\nLower bound alone (bounds.hetero.lower_bound, {cfg.bound_time:g} s, from the ILS schedule)\n"
              f"{tabs['bound']}")
    print(f"\nExact\n{tabs['exact']}\n\nHeuristics against the best known value\n{tabs['heuristics']}")
    return 0


if __name__ == "__main__":
    run_cli(main)
