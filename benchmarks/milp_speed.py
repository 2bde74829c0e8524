"""``python -m benchmarks.milp_speed``: speed of the exact MIG models and the ratios they certify (FAR paper, Sec. 2.2).

Instances: A100, MixedScaling/WideTimes, seeds 0..k-1 (``mig.generate``).
Prints, per row (model, n), the median over seeds of the time to a *proven*
optimum (an unproven run counts as beyond the limit, so a median shown as
``>60`` means more than half were not proven), how many were proven and the
largest remaining gap.

* ``--sweep ROW ...`` raises n until the median is no longer proven within
  the limit; the frontier table then gives, per row, the largest n whose
  median instance is proven.
* ``--gap-n N ...`` (rows ``--gap-rows``) gives the median gap at larger n:
  ``(best found - proven bound) / best found`` per instance, 0 when proven.
* ``--presets`` runs one model (``--preset-row``) on every instance family
  of the FAR paper's Sec. 6.3 (three workloads x two time presets x p_sup 0
  and 0.5): proven count and median time at ``--preset-n``, median gap at
  ``--preset-gap-n``. ``--first-seed`` moves every table to fresh seeds.
* ``--ratios N ...`` prints FAR / OPT and OPT / LB (LB =
  :func:`bounds.mig.lower_bound`, and the paper's area baseline) per n, with
  and without reconfiguration: means over seeds, plus the largest FAR / OPT
  computed against OPT's proven bound (an upper bound of the ratio when a
  solve is not proven; ``proven`` counts the proven ones).

Rows without reconfiguration (``...0``) solve the batch on a GPU with zero
create/destroy times (``problem.without_reconfiguration()``); rows with it
(``...1``) the batch itself. Every solve is one task of the executor
(``--executor local|dask``), whose results come back in task order, so the
figures other than times are the same for every executor. Timings depend
on the machine and its load.

Examples
--------
::

    python -m benchmarks.milp_speed                 # seconds: short table, 5 seeds
    python -m benchmarks.milp_speed --full          # 10 seeds, 60 s, n sweeps, gaps at n = 20..35, ratios
    python -m benchmarks.milp_speed --rows cpsat0:12 cpsat1:8 highs0:8 --seeds 10 --time-limit 60
    python -m benchmarks.milp_speed --rows cpsat1:10 --sweep cpsat1 highs1 --gap-n 20 25 30 35 --markdown
    python -m benchmarks.milp_speed --full --executor dask --scheduler tcp://host:8786
    python -m benchmarks.milp_speed --presets --seeds 2 --first-seed 900 --time-limit 60
"""

from __future__ import annotations

import argparse
import math
import statistics
from typing import Any, Sequence

from benchmarks import common
from benchmarks import executor as ex
from benchmarks.executor import Executor
from instances import mig

__all__ = ["ROWS", "LABELS", "TARGETS", "GAP_NS", "threads", "run_one", "summarise", "speed_table", "sweep", "gaps",
           "ratios", "presets", "FAMILY", "PRESETS", "main"]

#: Row name -> (backend, reconfiguration, extra options of :func:`milp.mig.solve`).
ROWS = {"cpsat0": ("cpsat", False, {}), "cpsat1": ("cpsat", True, {}),
        "naive0": ("cpsat", False, {"model": "intervals"}),
        "bare0": ("cpsat", False, {"model": "intervals", "symmetry": False, "redundant": False, "hint": False,
                                   "dominance": False}),
        "nohint0": ("cpsat", False, {"hint": False}),
        "nohint1": ("cpsat", True, {"hint": False}),
        "highs0": ("highs", False, {}), "highs1": ("highs", True, {}),
        "nobenders1": ("cpsat", True, {"benders": False})}
#: Row name -> what it is, for ``--help`` and the README's "model" column.
LABELS = {"cpsat0": "CP-SAT (laminar assignment model, FAR hint)",
          "cpsat1": "CP-SAT (session model, FAR hint)",
          "naive0": "CP-SAT, interval model (no laminar reduction) with hint, dominance, symmetry, redundancy",
          "bare0": "CP-SAT, the naive model (one optional interval per task and placement)",
          "nohint0": "CP-SAT (laminar assignment model), no hint",
          "nohint1": "CP-SAT (session model), no hint",
          "highs0": "HiGHS (Pyomo MILP, FAR as incumbent)",
          "highs1": "HiGHS (Pyomo MILP, FAR as incumbent)",
          "nobenders1": "CP-SAT (session model, FAR hint), no Benders loop"}
TARGETS = {("cpsat0", 12): 5.0, ("cpsat1", 12): 60.0, ("highs0", 8): 60.0}
#: Where the median gap is reported (the paper's largest batches).
GAP_NS = (20, 25, 30, 35)
SWEEP_FROM = {"highs0": 4, "highs1": 3, "cpsat1": 6, "nohint1": 6}


#: The instance family of every table but ``--presets``: (workload, time preset, share of memory-bound tasks).
FAMILY = ("MixedScaling", "WideTimes", 0.5)
#: ``--presets``: every workload and time preset of the FAR paper (Sec. 6.3), with and without memory-bound tasks.
PRESETS = tuple((w, t, ps) for w in ("PoorScaling", "MixedScaling", "GoodScaling")
                for t in ("WideTimes", "NarrowTimes") for ps in (0.0, 0.5))


def _instance(n: int, seed: int, reconf: bool = True, family: tuple = FAMILY) -> mig.Problem:
    """The benchmark batch; without reconfiguration its GPU has zero create/destroy times."""
    workload, times, p_sup = family
    p = mig.generate(n=n, gpu="A100", workload=workload, times=times, seed=seed, p_sup=p_sup)
    return p if reconf else p.without_reconfiguration()


def run_one(row: str, n: int, seed: int, time_limit: float, workers: int, family: tuple = FAMILY) -> dict[str, Any]:
    """Solve one instance of a row: ``time``, ``proven``, ``gap``, ``objective``, ``lower_bound``.

    ``family`` is (workload, time preset, p_sup) of :func:`instances.mig.generate`.

    Examples
    --------
    >>> r = run_one("cpsat0", 3, 0, 20, 1)
    >>> r["proven"], r["gap"] <= 1e-6, r["objective"] >= r["lower_bound"]
    (True, True, True)
    """
    from milp.mig import solve

    backend, reconf, opts = ROWS[row]
    kwargs: dict[str, Any] = dict(backend=backend, time_limit=time_limit, workers=workers)
    kwargs.update(opts)  # hint: FAR's schedule unless the row says False
    res = solve(_instance(n, seed, reconf, family), **kwargs)
    gap = res.gap if res.gap is not None else math.inf
    return {"row": row, "n": n, "seed": seed, "family": tuple(family), "time": res.runtime, "proven": res.proven,
            "gap": gap, "objective": res.objective, "lower_bound": res.lower_bound}


def _solve_task(task: tuple) -> dict[str, Any]:
    return run_one(*task)


def _solve_all(keys: list[tuple], seeds: int, time_limit: float, workers: int, executor: Executor,
               quiet: bool, desc: str, first_seed: int = 0) -> dict[tuple, list[dict]]:
    """Every (row, n) or (row, n, family) of ``keys`` on seeds first_seed.., one executor task per solve."""
    tasks = [(key[0], key[1], s, time_limit, workers, key[2] if len(key) > 2 else FAMILY)
             for key in keys for s in range(first_seed, first_seed + seeds)]
    runs = executor.map(_solve_task, tasks, quiet=quiet, desc=desc, unit="solve",
                        label=lambda t: f"{t[0]} n={t[1]} seed={t[2]}")
    out: dict[tuple, list[dict]] = {k: [] for k in keys}
    for key, r in zip((t for t in keys for _ in range(seeds)), runs):
        if not isinstance(r, ex.Failed):  # a failed solve of a command's sweep is left out (and listed)
            out[key].append(r)
    return out


def summarise(runs: list[dict[str, Any]], time_limit: float) -> dict[str, Any]:
    """Median time to proof (an unproven run counts as infinite), proven count, largest and median gap."""
    times = sorted(r["time"] if r["proven"] else math.inf for r in runs)
    med = statistics.median(times) if times else math.inf
    return {"median": med, "proven": sum(r["proven"] for r in runs), "count": len(runs),
            "max_gap": max((r["gap"] for r in runs), default=0.0),
            "median_gap": statistics.median(r["gap"] for r in runs) if runs else math.nan,
            "median_text": f">{time_limit:g}" if math.isinf(med) else f"{med:.2f}"}


def speed_table(rows: list[tuple[str, int]], seeds: int, time_limit: float, workers: int, quiet: bool = True,
                executor: Executor | None = None, first_seed: int = 0) -> list[dict[str, Any]]:
    """One summary per row (:func:`summarise` plus ``row``, ``n``, ``target``, ``runs``)."""
    got = _solve_all(list(dict.fromkeys(rows)), seeds, time_limit, workers, executor or Executor(), quiet, "rows",
                     first_seed)
    return [{**summarise(got[(row, n)], time_limit), "row": row, "n": n, "target": TARGETS.get((row, n)),
             "runs": got[(row, n)]} for row, n in rows]


def sweep(row: str, n_from: int, n_max: int, seeds: int, time_limit: float, workers: int, quiet: bool = True,
          executor: Executor | None = None, first_seed: int = 0) -> list[dict[str, Any]]:
    """Raise n until the median run is no longer proven within the limit (one summary per n tried).

    The seeds of one n run together on the executor; the next n waits for
    them, since whether it is tried depends on their result.
    """
    out = []
    for n in range(n_from, n_max + 1):
        got = _solve_all([(row, n)], seeds, time_limit, workers, executor or Executor(), quiet, f"{row} n={n}",
                         first_seed)
        out.append({**summarise(got[(row, n)], time_limit), "row": row, "n": n})
        if math.isinf(out[-1]["median"]):
            break
    return out


def largest_proven(summaries: list[dict[str, Any]]) -> int | None:
    """The largest n of a sweep whose median instance is proven (None when not even the first).

    Examples
    --------
    >>> largest_proven([{"n": 6, "median": 1.0}, {"n": 7, "median": math.inf}])
    6
    """
    ok = [s["n"] for s in summaries if not math.isinf(s["median"])]
    return max(ok) if ok else None


def gaps(rows: list[str], ns: Sequence[int], seeds: int, time_limit: float, workers: int, quiet: bool = True,
         executor: Executor | None = None, first_seed: int = 0) -> dict[tuple[str, int], dict[str, Any]]:
    """``{(row, n): summary}`` (:func:`summarise`) for every row at every n, all solves in one map."""
    keys = [(row, n) for row in rows for n in ns]
    got = _solve_all(keys, seeds, time_limit, workers, executor or Executor(), quiet, "gaps", first_seed)
    return {k: summarise(got[k], time_limit) for k in keys}


def presets(row: str, proof_n: int, gap_ns: Sequence[int], seeds: int, time_limit: float, workers: int,
            quiet: bool = True, executor: Executor | None = None, first_seed: int = 0,
            families: Sequence[tuple] = PRESETS) -> list[dict[str, Any]]:
    """One row per instance family: ``row`` at ``proof_n`` and at every n of ``gap_ns`` (all solves in one map).

    Each entry has ``family`` and ``{n: summary}`` (:func:`summarise`) under ``by_n``.

    Examples
    --------
    >>> out = presets("cpsat0", 3, [], 1, 20, 1, families=[("PoorScaling", "NarrowTimes", 0.0)])
    >>> out[0]["family"], out[0]["by_n"][3]["proven"]
    (('PoorScaling', 'NarrowTimes', 0.0), 1)
    """
    ns = list(dict.fromkeys([proof_n, *gap_ns]))
    keys = [(row, n, tuple(f)) for f in families for n in ns]
    got = _solve_all(keys, seeds, time_limit, workers, executor or Executor(), quiet, "presets", first_seed)
    return [{"family": tuple(f), "by_n": {n: summarise(got[(row, n, tuple(f))], time_limit) for n in ns}}
            for f in families]


def _ratio_task(task: tuple) -> list[dict[str, Any]]:
    """FAR / OPT, OPT / LB and the area ratios of one (n, seed), without and with reconfiguration."""
    from bounds import mig as mig_bounds
    from heuristics import far
    from milp.mig import solve

    n, s, time_limit, workers = task
    out = []
    for reconf in (False, True):
        p = _instance(n, s, reconf)  # the FAMILY instances
        far_ms = far.schedule(p).makespan
        res = solve(p, backend="cpsat", time_limit=time_limit, workers=workers)
        lb = mig_bounds.lower_bound(p)
        area = mig_bounds.area_bound(p)
        out.append({"n": n, "reconf": reconf, "far_opt": far_ms / res.objective,
                    "far_lb_opt": far_ms / res.lower_bound, "opt_lb": res.objective / lb,
                    "opt_area": res.objective / area, "far_area": far_ms / area, "proven": res.proven})
    return out


def ratios(ns: list[int], seeds: int, time_limit: float, workers: int, quiet: bool = True,
           executor: Executor | None = None, first_seed: int = 0) -> list[dict[str, Any]]:
    """FAR / OPT and OPT / LB per n, averaged over seeds, without and with reconfiguration.

    One executor task per (n, seed); the rows are sorted by (n, reconfiguration).
    """
    tasks = [(n, s, time_limit, workers) for n in ns for s in range(first_seed, first_seed + seeds)]
    acc: dict[tuple[int, bool], list] = {}
    for pair in ex.succeeded((executor or Executor()).map(_ratio_task, tasks, quiet=quiet, desc="ratios",
                                                          unit="instance", label=lambda t: f"n={t[0]} seed={t[1]}")):
        for r in pair:
            acc.setdefault((r["n"], r["reconf"]), []).append(r)
    return [{"n": n, "reconf": reconf, "count": len(rs), "proven": sum(r["proven"] for r in rs),
             **{k: statistics.mean(r[k] for r in rs) for k in
                ("far_opt", "far_lb_opt", "opt_lb", "opt_area", "far_area")},
             "far_opt_max": max(r["far_lb_opt"] for r in rs)}
            for (n, reconf), rs in sorted(acc.items())]


# ---------------------------------------------------------------------------
# the command line

_N = common.integer(1, common.MAX_EXACT_TASKS)


def _row_spec(text: str) -> tuple[str, int]:
    name, colon, n = text.partition(":")
    if name not in ROWS or not colon:
        raise argparse.ArgumentTypeError(f"bad row {text!r}: use NAME:N with NAME in {', '.join(ROWS)}")
    try:
        return name, _N(n)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"bad row {text!r}: N {exc}") from None


def _row_name(text: str) -> str:
    if text not in ROWS:
        raise argparse.ArgumentTypeError(f"unknown row {text!r}; choose from {', '.join(ROWS)}")
    return text


_workers = common.integer(1, 2, "the reference machine has 2 cores")


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "under 10 seconds"


def _parser() -> common.Parser:
    names = "\n".join(f"  {k:<8} {v}, {'with' if ROWS[k][1] else 'without'} reconfiguration"
                      for k, v in LABELS.items())
    p = common.Parser(prog="python -m benchmarks.milp_speed", description=common.description(__doc__, DEFAULT_RUN),
                      epilog=f"rows (NAME):\n{names}")
    p.add_argument("--rows", type=_row_spec, nargs="+", metavar="NAME:N", default=None,
                   help=f"rows to time, NAME from {', '.join(ROWS)}, N at most {common.MAX_EXACT_TASKS:,} "
                        "(default: cpsat0:12 cpsat1:8 highs0:6; --full: cpsat0:12 cpsat1:12 highs0:8)")
    p.add_argument("--seeds", type=common.count, default=None, help="seeds per row (default: 5; --full 10)")
    p.add_argument("--time-limit", type=common.seconds, default=None,
                   help="seconds per solve (default: 30; --full 60)")
    p.add_argument("--workers", type=_workers, default=2,
                   help="solver threads per solve, 1 or 2: CP-SAT workers, HiGHS threads")
    p.add_argument("--full", action="store_true",
                   help="the full table: 10 seeds, 60 s, sweeps of cpsat0 cpsat1 highs0 highs1, median gaps of "
                        f"cpsat1 highs1 at n = {' '.join(map(str, GAP_NS))}, ratios for n = 6..12")
    p.add_argument("--naive", action="store_true", help="add the row naive0:12 (the interval model)")
    p.add_argument("--sweep", type=_row_name, nargs="*", metavar="NAME", default=None,
                   help=f"n sweeps for these rows, NAME from {', '.join(ROWS)} (default: none; --full: cpsat0 "
                        "cpsat1 highs0 highs1)")
    p.add_argument("--sweep-max", type=_N, default=20,
                   help=f"largest n of a sweep, at most {common.MAX_EXACT_TASKS:,}")
    p.add_argument("--sweep-from", type=_N, default=None,
                   help="first n of every sweep (default per row: highs0 4, highs1 3, cpsat1 6, others 8)")
    p.add_argument("--gap-n", type=_N, nargs="*", metavar="N", default=None,
                   help=f"median gap at these n (default: none; --full: {' '.join(map(str, GAP_NS))})")
    p.add_argument("--gap-rows", type=_row_name, nargs="+", metavar="NAME", default=["cpsat1", "highs1"],
                   help=f"rows of the --gap-n table, NAME from {', '.join(ROWS)} (default: cpsat1 highs1)")
    p.add_argument("--ratios", type=_N, nargs="*", metavar="N", default=None,
                   help="FAR/OPT and OPT/LB for these n (default: none; --full: 6..12)")
    p.add_argument("--first-seed", type=common.seed, default=0,
                   help="instances use seeds FIRST_SEED .. FIRST_SEED + SEEDS - 1 (fresh seeds: a figure not tuned on)")
    p.add_argument("--presets", action="store_true",
                   help="the table per instance family: every workload (Poor/Mixed/GoodScaling), time preset "
                        "(Wide/NarrowTimes) and p_sup (0, 0.5); alone, it replaces the speed table")
    p.add_argument("--preset-row", type=_row_name, default="cpsat1", metavar="NAME",
                   help="the model of --presets")
    p.add_argument("--preset-n", type=_N, default=12,
                   help="the n of --presets's proven / median time columns")
    p.add_argument("--preset-gap-n", type=_N, nargs="*", metavar="N", default=[20, 35],
                   help="the n of --presets's median gap columns")
    ex.add_arguments(p)
    common.add_markdown(p)
    common.add_quiet(p)
    return p


def threads(rows: Sequence[str], workers: int) -> str:
    """``"2 CP-SAT workers"``, ``"1 HiGHS thread"`` or both, as the backends of ``rows`` use ``workers``.

    Examples
    --------
    >>> threads(["highs0"], 2), threads(["cpsat0", "highs1"], 2)
    ('2 HiGHS threads', '2 CP-SAT workers / HiGHS threads')
    """
    backends = {ROWS[r][0] for r in rows}
    names = [n for b, n in (("cpsat", "CP-SAT worker"), ("highs", "HiGHS thread")) if b in backends]
    return f"{workers} " + " / ".join(n + ("s" if workers > 1 else "") for n in names)


def _speed_lines(summaries: list[dict], markdown: bool) -> list[str]:
    if markdown:  # the README's form
        header = ["model", "reconfiguration", "n", "median", "proven", "target"]
        rows = [[LABELS[r["row"]], "yes" if ROWS[r["row"]][1] else "no", r["n"],
                 r["median_text"] + ("" if r["median_text"].startswith(">") else " s"),
                 f"{r['proven']}/{r['count']}", f"{r['target']:g} s" if r["target"] else "-"] for r in summaries]
    else:
        header = ["row", "backend", "reconf", "n", "median time to proven optimum (s)", "proven", "max gap",
                  "target"]
        rows = [[r["row"], ROWS[r["row"]][0], "yes" if ROWS[r["row"]][1] else "no", r["n"], r["median_text"],
                 f"{r['proven']}/{r['count']}", _pct(r["max_gap"]), f"<= {r['target']:g} s" if r["target"] else ""]
                for r in summaries]
    return [common.markdown_table(header, rows)]


def _pct(gap: float) -> str:
    return "-" if math.isinf(gap) or math.isnan(gap) else f"{100 * gap:.2f} %"


def _frontier_lines(sweeps: dict[str, list[dict]], gap_table: dict[tuple[str, int], dict], gap_ns: list[int],
                    limit: float, seeds: int) -> list[str]:
    rows = list(dict.fromkeys(list(sweeps) + [r for r, _ in gap_table]))
    header = ["model", "reconfiguration", f"largest n proven in {limit:g} s (median of {seeds})"] + \
        [f"median gap n={n}" for n in gap_ns]

    def frontier(row: str) -> str:
        if row not in sweeps:
            return "-"
        n = largest_proven(sweeps[row])
        last = sweeps[row][-1]
        beyond = f" (n = {last['n']}: {last['proven']}/{last['count']}, median gap {_pct(last['median_gap'])})" \
            if math.isinf(last["median"]) else " (sweep maximum reached)"
        return (f"< {sweeps[row][0]['n']}" if n is None else str(n)) + beyond

    def gap(row: str, n: int) -> str:
        s = gap_table.get((row, n))
        return "-" if s is None else f"{_pct(s['median_gap'])} ({s['proven']}/{s['count']} proven)"

    body = [[LABELS[r], "yes" if ROWS[r][1] else "no", frontier(r)] + [gap(r, n) for n in gap_ns] for r in rows]
    return [common.markdown_table(header, body)]


def _preset_lines(rows: list[dict], proof_n: int, gap_ns: Sequence[int]) -> list[str]:
    gap_ns = [n for n in dict.fromkeys(gap_ns) if n != proof_n]
    header = ["workload", "times", "p_sup", f"n={proof_n} proven", f"n={proof_n} median time"] + \
        [f"n={n} median gap" for n in gap_ns]
    body = []
    for r in rows:
        w, t, ps = r["family"]
        s = r["by_n"][proof_n]
        body.append([w, t, f"{ps:g}", f"{s['proven']}/{s['count']}",
                     s["median_text"] + ("" if s["median_text"].startswith(">") else " s")] +
                    [f"{_pct(r['by_n'][n]['median_gap'])} ({r['by_n'][n]['proven']}/{r['by_n'][n]['count']} "
                     f"proven, max {_pct(r['by_n'][n]['max_gap'])})" for n in gap_ns])
    return [common.markdown_table(header, body)]


def _ratio_lines(rs: list[dict], markdown: bool) -> list[str]:
    if markdown:  # the README's form: both readings in one row per n
        by = {(r["n"], r["reconf"]): r for r in rs}
        ns = sorted({r["n"] for r in rs})

        def pair(n: int, key: str) -> str:
            return f"{by[(n, False)][key]:.3f} / {by[(n, True)][key]:.3f}"

        header = ["n", "proven", "FAR/OPT (no reconf. / reconf.)", "OPT/LB (no reconf. / reconf.)",
                  "OPT/area baseline (no reconf. / reconf.)"]
        body = [[n, f"{by[(n, False)]['proven'] + by[(n, True)]['proven']}/"
                    f"{by[(n, False)]['count'] + by[(n, True)]['count']}",
                 pair(n, "far_opt"), pair(n, "opt_lb"), pair(n, "opt_area")] for n in ns]
        return [common.markdown_table(header, body)]
    header = ["n", "reconf", "proven", "FAR/OPT", "FAR/OPT max", "OPT/LB", "OPT/area", "FAR/area"]
    body = [[r["n"], "yes" if r["reconf"] else "no", f"{r['proven']}/{r['count']}", f"{r['far_opt']:.4f}",
             f"{r['far_opt_max']:.4f}", f"{r['opt_lb']:.4f}", f"{r['opt_area']:.4f}", f"{r['far_area']:.4f}"]
            for r in rs]
    return [common.markdown_table(header, body)]


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    executor = ex.from_args(p, a)
    seeds = a.seeds if a.seeds is not None else (10 if a.full else 5)
    limit = a.time_limit if a.time_limit is not None else (60.0 if a.full else 30.0)
    rows = list(a.rows) if a.rows else (
        [("cpsat0", 12), ("cpsat1", 12), ("highs0", 8)] if a.full else [("cpsat0", 12), ("cpsat1", 8), ("highs0", 6)])
    if a.naive:
        rows.append(("naive0", 12))
    sweep_rows = list(dict.fromkeys(a.sweep if a.sweep is not None else
                                    (["cpsat0", "cpsat1", "highs0", "highs1"] if a.full else [])))
    gap_ns = list(dict.fromkeys(a.gap_n if a.gap_n is not None else (list(GAP_NS) if a.full else [])))
    ratio_ns = list(dict.fromkeys(a.ratios if a.ratios is not None else (list(range(6, 13)) if a.full else [])))
    md = a.markdown
    run = dict(seeds=seeds, time_limit=limit, workers=a.workers, quiet=a.quiet, executor=executor,
               first_seed=a.first_seed)
    if a.presets and not a.rows and not a.full and not a.naive:
        rows = []
    try:
        speed = speed_table(rows, **run) if rows else []
        preset_rows = presets(a.preset_row, a.preset_n, a.preset_gap_n, **run) if a.presets else []
        sweeps = {row: sweep(row, a.sweep_from or SWEEP_FROM.get(row, 8), a.sweep_max, **run) for row in sweep_rows}
        gap_table = gaps(list(dict.fromkeys(a.gap_rows)), gap_ns, **run) if gap_ns else {}
        ratio_rows = ratios(ratio_ns, **run) if ratio_ns else []
    except ex.ExecutorError as exc:
        p.error(str(exc))

    seed_text = f"seeds {a.first_seed}..{a.first_seed + seeds - 1}"
    out = []
    if speed:
        out += [f"{'Median time to proven optimum, ' if md else ''}A100 MixedScaling/WideTimes p_sup 0.5, "
                f"{seed_text}, limit {limit:g} s, {threads([r for r, _ in rows], a.workers)}"
                + (":" if md else ""), ""]
        out += _speed_lines(speed, md)
    if preset_rows:
        out += ([""] if out else []) + [
            f"{LABELS[a.preset_row]} on every instance family, A100, {seed_text}, limit {limit:g} s, "
            f"{threads([a.preset_row], a.workers)}:", ""]
        out += _preset_lines(preset_rows, a.preset_n, a.preset_gap_n)
    if not md:
        for row, summaries in sweeps.items():
            out += ["", f"n sweep, {row}: median time to proven optimum within {limit:g} s",
                    common.markdown_table(["n", "median (s)", "proven", "max gap"],
                                          [[r["n"], r["median_text"], f"{r['proven']}/{r['count']}",
                                            _pct(r["max_gap"])] for r in summaries])]
    if sweeps or gap_table:
        out += ["", f"Largest n whose median instance is proven within {limit:g} s, and the median gap "
                    f"(best found - proven bound) / best found at larger n, {seeds} seeds:", ""]
        out += _frontier_lines(sweeps, gap_table, gap_ns, limit, seeds)
    if ratio_rows:
        out += ["", "FAR / OPT and OPT / LB, means over seeds" +
                ("" if md else " (\"FAR/OPT max\" divides by the proven lower bound of OPT)") + ":", ""]
        out += _ratio_lines(ratio_rows, md)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    common.run_cli(main)
