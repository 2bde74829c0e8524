"""``python -m benchmarks.orlib``: weighted tardiness on OR-Library sets: heuristics, lower bound, exact methods.

Runs on the single-machine instances of the shipped OR-Library set wt40
(1||sum w_j T_j, the single-GPU restriction of the heterogeneous-GPU
weighted-tardiness paper, Sec. II), on any set in the OR-Library format
(``--file``, with the known values in ``--values``), or on a set drawn by
the OR-Library scheme (``--generate N``); by default on every fifth instance
of the set (the quick form), with ``--instances all`` on all of them:

1. every heuristic of :data:`heuristics.hetero.METHODS` (``--methods``):
   how many known values it reaches, the mean and worst gap to them, and the
   mean and largest time per instance (median of ``--repeats`` runs);
2. with ``--bound``, the lower bound of :func:`bounds.hetero.lower_bound`
   given the ILS schedule: how often it reaches the known value (a proof of
   optimality), mean and worst gap below it, times;
3. the exact methods (``--backends``; ``auto`` = successive sublimation
   dynamic programming on these instances, ``cpsat`` and ``highs`` the
   paper's formulation): how many instances are proven optimal within
   ``--exact-limit`` seconds, how many proven optima equal the known value,
   the mean gap where not proven, and the times.

Every instance is one independent task of :mod:`benchmarks.executor`
(``--executor local|dask``, ``--scheduler``, ``--jobs``); the tables are the
same whatever runs them, timings aside. Gap = (value - known) / known over
the instances with a known value > 0 (the column "known = 0 reached" counts
the others). Without known values, ``--reference SECONDS`` (or
``--reference-iters KICKS``) computes them as the best of three ILS runs of
that length (``--save-values`` writes them; ``--values`` reads them back
for the same ``--generate`` and ``--instances``). The tables show CPU seconds
beside wall seconds: on a shared machine the CPU time is the fair measure.
A bound above a known value, or a proven optimum above it, stops the run
with an error: either would be a bug.

Examples
--------
``python -m benchmarks.orlib --quiet``                          (25 wt40 instances: heuristics and exact, 60 s each)
``python -m benchmarks.orlib --instances all --quiet``          (all 125)
``python -m benchmarks.orlib --methods ils --bound --no-exact`` (ILS and bound gap)
``python -m benchmarks.orlib --file wt100.txt --values wtbest100b.txt --methods ils --no-exact``
``python -m benchmarks.orlib --generate 100 --gen-seed 7 --reference 20 --methods ils --no-exact``
``python -m benchmarks.orlib --generate 50 --instances 1-125:10 --reference-iters 1500 --methods ils --ils-iters 300 --ils-time 600 --no-exact``
(kick and pass counts instead of seconds: the same work on a loaded machine)
``python -m benchmarks.orlib --executor dask --scheduler tcp://host:8786 --markdown``
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from benchmarks import executor as ex
from benchmarks.common import (Parser, add_markdown, add_quiet, comma_choices, count, count_or_zero, description,
                               error_line, fmt, integer, markdown_table, output_file, run_cli, seconds, seed,
                               workers, writing)
from bounds import hetero as bounds_hetero
from heuristics import hetero as heur
from instances import hetero
from instances.errors import InstanceError
from milp import solve_optimal

BACKENDS = ("auto", "ssdp", "cpsat", "highs")
#: The default ``--instances``: every QUICK_STEP-th instance (``--instances all`` runs the whole set).
QUICK_STEP = 5
#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 1 minute (--instances all: about 10 minutes)"
#: Largest instance of ``--generate`` and ``--file-jobs`` (the OR-Library's largest sets have 100 jobs).
MAX_JOBS = 1000
#: Relative tolerance of "reaches the known value" and of the consistency checks.
TOL = 1e-6


@dataclass(frozen=True)
class Config:
    """What to run on every instance (picklable: it travels with each task)."""

    methods: tuple[str, ...] = tuple(heur.METHODS)
    ils_time: float = 1.0
    ils_iters: int | None = None
    repeats: int = 1
    seed: int = 0
    bound: bool = False
    bound_time: float = 2.0
    bound_iters: int = 300
    backends: tuple[str, ...] = ("auto",)
    exact_limit: float = 60.0
    workers: int = 1


_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?")


def _parse_instances(text: str, count: int) -> list[int]:
    """``"1-3,7,10-20:5"`` -> ``[1, 2, 3, 7, 10, 15, 20]`` (1-based, checked against ``count``).

    Digits 0-9 only; every number is checked against ``count`` before a range is built.

    Examples
    --------
    >>> _parse_instances("1-3,7,10-20:5", 125)
    [1, 2, 3, 7, 10, 15, 20]
    >>> _parse_instances("1-10000000000", 125)
    Traceback (most recent call last):
    ...
    ValueError: 10000000000 is not in 1..125
    """
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = _RANGE.fullmatch(part)
        if not m:
            raise ValueError(f"{part!r} is not a number, a range a-b or a range with a step a-b:s")
        first, last, step = m.groups()
        for num in (first, last):
            if num is not None and (len(num) > 12 or not 1 <= int(num) <= count):
                raise ValueError(f"{num if len(num) <= 12 else num[:12] + '...'} is not in 1..{count}")
        if step is not None and (len(step) > 12 or not 1 <= int(step) <= count):
            raise ValueError(f"the step must be in 1..{count}, got {step if len(step) <= 12 else step[:12] + '...'}")
        if last is not None and int(last) < int(first):
            raise ValueError(f"the range {part} is empty")
        out.extend(range(int(first), int(last or first) + 1, int(step or 1)))
    if not out:
        raise ValueError("no instance chosen")
    return out


def gap(value: float, known: float) -> float | None:
    """Relative gap (value - known) / known; ``None`` when the known value is 0.

    Examples
    --------
    >>> gap(110.0, 100.0), gap(3.0, 0.0)
    (0.1, None)
    """
    return (value - known) / known if known > 0 else None


def _value_text(v: float) -> str:
    """A value as written by ``--save-values``: exact (``:g`` would round 1234567 to 1.23457e+06).

    Examples
    --------
    >>> _value_text(1234567.0), _value_text(2.5)
    ('1234567', '2.5')
    """
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _known_values(path: str, count: int, ks: Sequence[int]) -> list[float]:
    """Known values for a set of ``count`` instances from ``path``: one per
    instance, or one per instance of ``ks`` in that order (others 0, unused).

    Raises :class:`InstanceError` naming the file when the count is neither.
    """
    vals = hetero.read_orlib_values(path)
    if len(vals) == count:
        return [float(v) for v in vals]
    if len(vals) != len(ks):
        raise InstanceError(f"expected {count} values (one per instance) or {len(ks)} (one per instance of "
                            f"--instances), found {len(vals)}", source=str(path))
    known = [0.0] * count
    for k, v in zip(ks, vals):
        known[k - 1] = float(v)
    return known


def _heuristic(name: str, cfg: Config):
    if name == "ils":
        return lambda pb: heur.ils(pb, time_limit=cfg.ils_time, max_iter=cfg.ils_iters, seed=cfg.seed)
    if name == "sagreedy":
        return lambda pb: heur.sagreedy(pb, seed=cfg.seed)
    return heur.METHODS[name]


def evaluate(task: tuple[Config, int, hetero.HeteroProblem, float]) -> dict[str, Any]:
    """Everything :class:`Config` asks for on one instance: ``(cfg, k, problem, known)`` -> record.

    Times are under keys ending in ``time_s``; everything else is the same
    on every executor (for ILS, when ``ils_iters`` bounds the run).
    """
    cfg, k, pb, known = task
    rec: dict[str, Any] = {"k": k, "known": known, "methods": {}, "exact": {}}
    ils_sched = None
    for m in cfg.methods:
        fn = _heuristic(m, cfg)
        times, cpus, value = [], [], None
        for _ in range(cfg.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            sched = fn(pb)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            errs = hetero.check(pb, sched)
            if errs:
                raise RuntimeError(f"{m} on instance {k}: infeasible schedule: {errs[:3]}")
            value = hetero.weighted_tardiness(pb, sched)
        if m == "ils":
            ils_sched = sched
        rec["methods"][m] = {"value": value, "time_s": statistics.median(times),
                             "cpu_time_s": statistics.median(cpus)}
    if cfg.bound:
        if ils_sched is None:
            ils_sched = heur.ils(pb, time_limit=cfg.ils_time, max_iter=cfg.ils_iters, seed=cfg.seed)
        t0, c0 = time.perf_counter(), time.process_time()
        lb = bounds_hetero.lower_bound(pb, ils_sched, time_limit=cfg.bound_time, max_iter=cfg.bound_iters)
        rec["bound"] = {"value": lb, "time_s": time.perf_counter() - t0, "cpu_time_s": time.process_time() - c0}
    for b in cfg.backends:
        c0 = time.process_time()
        res = solve_optimal(pb, backend=b, time_limit=cfg.exact_limit, workers=cfg.workers, seed=cfg.seed)
        rec["exact"][b] = {"proven": bool(res.proven), "objective": res.objective, "lower_bound": res.lower_bound,
                           "gap": res.gap, "stage": res.info.get("stage"), "time_s": res.runtime,
                           "cpu_time_s": time.process_time() - c0}
    return rec


def _reference(task: tuple[hetero.HeteroProblem, float | None, int | None, tuple[int, ...]]) -> float:
    pb, seconds, iters, seeds = task
    return min(hetero.weighted_tardiness(pb, heur.ils(pb, time_limit=seconds, max_iter=iters, seed=s))
               for s in seeds)


def reference_values(problems: Sequence[hetero.HeteroProblem], seconds: float | None, seeds=(0, 1, 2),
                     executor: ex.Executor | None = None, quiet: bool = True, iters: int | None = None) -> list[float]:
    """Best value of ``len(seeds)`` ILS runs of ``seconds`` each (or ``iters`` kicks each, a run that
    does not depend on the machine's load), per instance: a reference where no known values exist."""
    tasks = [(pb, seconds, iters, tuple(seeds)) for pb in problems]
    return (executor or ex.Executor()).map(_reference, tasks, quiet=quiet, desc="reference",
                                           label=lambda t: f"reference of {t[0].name or 'an instance'}")


def run(cfg: Config, problems: Sequence[hetero.HeteroProblem], known: Sequence[float], ks: Sequence[int],
        executor: ex.Executor | None = None, quiet: bool = True) -> list[dict[str, Any]]:
    """:func:`evaluate` on instances ``ks`` (1-based), in that order, on ``executor``; checks consistency.

    Raises ``RuntimeError`` when a bound exceeds a known (feasible) value or a
    proven optimum differs from a known optimum by more than :data:`TOL` upward.
    """
    tasks = [(cfg, k, problems[k - 1], float(known[k - 1])) for k in ks]
    # a failed instance of a command's sweep is left out of the tables (the command lists it)
    recs = ex.succeeded((executor or ex.Executor()).map(evaluate, tasks, quiet=quiet, desc="instances",
                                                        unit="instance", label=lambda t: f"instance {t[1]}"))
    for r in recs:
        slack = TOL * max(1.0, r["known"])
        lbs = [("bound", r["bound"]["value"])] if "bound" in r else []
        lbs += [(b, e["lower_bound"]) for b, e in r["exact"].items() if e["lower_bound"] is not None]
        for who, lb in lbs:
            if lb > r["known"] + slack:
                raise RuntimeError(f"instance {r['k']}: {who} bound {lb} above the known value {r['known']}")
        for b, e in r["exact"].items():
            if e["proven"] and e["objective"] > r["known"] + slack:
                raise RuntimeError(f"instance {r['k']}: {b} proved {e['objective']} above the known value "
                                   f"{r['known']}")
    return recs


def _gap_cells(gaps: list, zero: list) -> list[str]:
    g = [x for x in gaps if x is not None]
    return [fmt(100 * statistics.fmean(g)) if g else "-", fmt(100 * max(g, key=abs), ".2f") if g else "-",
            f"{sum(zero)}/{len(zero)}"]


def tables(cfg: Config, recs: list[dict[str, Any]]) -> dict[str, str]:
    """The markdown tables (``heuristics``, ``bound``, ``exact``; those that were run) of a :func:`run`."""
    out: dict[str, str] = {}
    N = len(recs)
    if cfg.methods:
        rows = []
        for m in cfg.methods:
            vals = [(r["methods"][m]["value"], r["known"]) for r in recs]
            times = [r["methods"][m]["time_s"] for r in recs]
            cpu = [r["methods"][m]["cpu_time_s"] for r in recs]
            hit = sum(v <= kn + TOL * max(1.0, kn) for v, kn in vals)
            rows.append([m, f"{hit}/{N}", *_gap_cells([gap(v, kn) for v, kn in vals],
                                                      [v == 0 for v, kn in vals if kn == 0]),
                         fmt(statistics.fmean(times)), fmt(max(times)), fmt(statistics.fmean(cpu))])
        out["heuristics"] = markdown_table(["method", "known value reached", "mean gap %", "worst gap %",
                                            "known = 0 reached", "mean time s", "max time s", "mean CPU s"], rows)
    if cfg.bound:
        b = [(r["bound"]["value"], r["known"]) for r in recs]
        times = [r["bound"]["time_s"] for r in recs]
        cpu = [r["bound"]["cpu_time_s"] for r in recs]
        reach = sum(lb >= kn - TOL * max(1.0, kn) for lb, kn in b)
        cells = _gap_cells([(kn - lb) / kn if kn > 0 else None for lb, kn in b], [lb == 0 for lb, kn in b if kn == 0])
        out["bound"] = markdown_table(["bound", "reaches the known value", "mean gap %", "worst gap %",
                                       "known = 0", "mean time s", "max time s", "mean CPU s", "max CPU s"],
                                      [["time-indexed Lagrangian", f"{reach}/{N}", *cells, fmt(statistics.fmean(times)),
                                        fmt(max(times)), fmt(statistics.fmean(cpu)), fmt(max(cpu))]])
    if cfg.backends:
        rows = []
        for bk in cfg.backends:
            es = [(r["exact"][bk], r["known"]) for r in recs]
            proven = [(e, kn) for e, kn in es if e["proven"]]
            equal = sum(abs(e["objective"] - kn) <= TOL * max(1.0, kn) for e, kn in proven)
            open_gaps = [e["gap"] for e, _ in es if not e["proven"] and e["gap"] is not None]
            times = [e["time_s"] for e, _ in es]
            cpu = [e["cpu_time_s"] for e, _ in es]
            none = sum(e["objective"] is None for e, _ in es)
            # the non-trivial instances: a schedule of cost 0 is optimal at once
            hard = [e["time_s"] for e, _ in es if e["objective"] is None or e["objective"] > 0]
            rows.append([bk, f"{len(proven)}/{N}", f"{equal}/{len(proven)}",
                         fmt(100 * statistics.fmean(open_gaps), ".2f") if open_gaps else "-",
                         fmt(statistics.fmean(times), ".2f"), fmt(max(times), ".2f"),
                         fmt(statistics.geometric_mean(hard), ".2f") if hard else "-",
                         fmt(statistics.median([e["time_s"] for e, _ in proven]), ".2f") if proven else "-",
                         fmt(statistics.fmean(cpu), ".2f"), none])
        out["exact"] = markdown_table(["backend", "proven optimal", "proven = known value",
                                       "mean gap % (unproven)", "mean time s", "max time s",
                                       "geo-mean time s (optimum > 0)", "median time proven s",
                                       "mean CPU s", "no schedule"], rows)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="python -m benchmarks.orlib", description=description(__doc__, DEFAULT_RUN))
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--file", default=None, help="an OR-Library weighted-tardiness file (default: the shipped wt40)")
    src.add_argument("--generate", type=integer(1, MAX_JOBS), default=None, metavar="N",
                     help=f"draw 125 instances of N jobs by the OR-Library scheme instead, N at most {MAX_JOBS:,} "
                          "(default: none, the shipped wt40)")
    parser.add_argument("--file-jobs", type=integer(1, MAX_JOBS), default=None, metavar="N",
                        help="with --file: jobs per instance, for a file not laid out as 125 instances "
                             "(default: the file's length / 375)")
    parser.add_argument("--file-instances", type=count, default=None, metavar="K",
                        help="with --file: the number of instances, for a file not laid out as 125 instances "
                             "(default: 125)")
    parser.add_argument("--gen-seed", type=seed, default=0, help="seed of --generate")
    parser.add_argument("--values", default=None,
                        help="known optimal / best values (with --file or --generate; wt40 brings its own): one per "
                             "instance of the set, or one per instance chosen by --instances, in that order (the "
                             "file --save-values writes) (default: none)")
    parser.add_argument("--reference", type=seconds, default=None, metavar="SECONDS",
                        help="without known values: the best of 3 ILS runs of this length is the reference "
                             "(default: none)")
    parser.add_argument("--reference-iters", type=count, default=None, metavar="KICKS",
                        help="without known values: the best of 3 ILS runs of this many kicks is the reference "
                             "(default: none)")
    parser.add_argument("--save-values", type=output_file, default=None,
                        help="write the reference values to this file (default: not written)")
    parser.add_argument("--instances", default=None,
                        help=f"instance numbers, e.g. 1-125, 1,5,10-20 or 1-125:5 (every 5th), or all (default: every "
                             f"{QUICK_STEP}th instance, 1-125:{QUICK_STEP} on a set of 125, the quick form)")
    parser.add_argument("--methods", type=comma_choices(heur.METHODS, "method"), default=list(heur.METHODS),
                        help=f"comma-separated heuristics from {', '.join(heur.METHODS)}")
    parser.add_argument("--no-methods", action="store_true", help="run no heuristic table")
    parser.add_argument("--ils-time", type=seconds, default=1.0, help="ILS time limit per instance (s)")
    parser.add_argument("--ils-iters", type=count_or_zero, default=None,
                        help="also stop ILS after this many kicks, for deterministic runs (default: no kick limit)")
    parser.add_argument("--repeats", type=count, default=1, help="runs per instance; the median time is used")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the ILS and of CP-SAT")
    parser.add_argument("--bound", action="store_true", help="also measure the lower bound")
    parser.add_argument("--bound-time", type=seconds, default=2.0, help="time limit of the bound (s)")
    parser.add_argument("--bound-iters", type=count, default=300,
                        help="also stop the bound's multiplier search after this many passes (with a long "
                             "--bound-time: a run that does not depend on the machine's load)")
    parser.add_argument("--exact-limit", type=seconds, default=60.0,
                        help="time limit per instance and backend (s)")
    parser.add_argument("--backends", type=comma_choices(BACKENDS, "backend"), default=["auto"],
                        help=f"exact backends from {', '.join(BACKENDS)}")
    parser.add_argument("--workers", type=workers, default=1, help="solver threads for the exact models")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact methods")
    ex.add_arguments(parser)
    add_markdown(parser)
    add_quiet(parser)
    args = parser.parse_args(argv)
    if args.values and not args.file and args.generate is None:
        parser.error("--values needs --file or --generate (the shipped wt40 brings its own)")
    if args.reference is not None and args.reference_iters is not None:
        parser.error("give --reference or --reference-iters, not both")
    if args.save_values and args.reference is None and args.reference_iters is None:
        parser.error("--save-values needs --reference or --reference-iters")
    if (args.file_jobs or args.file_instances) and not args.file:
        parser.error("--file-jobs and --file-instances describe the layout of a --file")
    executor = ex.from_args(parser, args)
    try:
        if args.file:
            problems = hetero.read_orlib(args.file, n=args.file_jobs, count=args.file_instances)
            label = Path(args.file).name
            known = None
        elif args.generate is not None:
            problems = hetero.generate_orlib_set(args.generate, seed=args.gen_seed)
            label = f"OR-Library scheme, n = {args.generate}, seed {args.gen_seed}"
            known = None
        else:
            problems = hetero.orlib_wt40_all()
            label = "OR-Library wt40"
            known = hetero.orlib_wt40_optimum()
    except InstanceError as exc:
        # the reader's advice names its keywords; here they are options
        parser.error(str(exc).replace("pass n= (jobs per instance) or count= (instances)",
                                      "give --file-jobs N or --file-instances K"))
    try:
        spec = args.instances or f"1-{len(problems)}:{QUICK_STEP}"
        ks = _parse_instances(f"1-{len(problems)}" if spec == "all" else spec, len(problems))
    except ValueError as exc:
        parser.error(f"--instances: expected numbers and ranges like 1-25,40 in 1..{len(problems)}; {exc}")
    kind = "known values"
    if args.values:
        try:
            known = _known_values(args.values, len(problems), ks)
        except InstanceError as exc:
            parser.error(str(exc))
    if known is None or args.reference is not None or args.reference_iters is not None:
        if args.reference is None and args.reference_iters is None:
            parser.error("no known values: give --values, --reference SECONDS or --reference-iters KICKS")
        ref = reference_values([problems[k - 1] for k in ks], args.reference, executor=executor, quiet=args.quiet,
                               iters=args.reference_iters)
        known = [0.0] * len(problems)
        for k, v in zip(ks, ref):
            known[k - 1] = v
        if any(isinstance(v, ex.Failed) for v in ref):  # no reference, no comparison: the command lists them
            ks = [k for k, v in zip(ks, ref) if not isinstance(v, ex.Failed)]
            if args.save_values:
                parser.error("--save-values: a reference run failed, so the file would not have one value per "
                             "chosen instance")
            if not ks:
                return 0  # nothing to compare; the failures are listed and the status is 1
        kind = ("reference values (best of 3 ILS runs of "
                + (f"{args.reference:g} s)" if args.reference is not None else f"{args.reference_iters} kicks)"))
        if args.save_values:
            with writing(parser, "--save-values"):
                args.save_values.parent.mkdir(parents=True, exist_ok=True)
                args.save_values.write_text("\n".join(_value_text(known[k - 1]) for k in ks) + "\n")
    cfg = Config(methods=() if args.no_methods else tuple(args.methods), ils_time=args.ils_time,
                 ils_iters=args.ils_iters, repeats=args.repeats, seed=args.seed, bound=args.bound,
                 bound_time=args.bound_time, bound_iters=args.bound_iters,
                 backends=() if args.no_exact else tuple(args.backends),
                 exact_limit=args.exact_limit, workers=args.workers)
    try:
        recs = run(cfg, problems, known, ks, executor, quiet=args.quiet)
    except ex.ExecutorError as exc:
        parser.error(str(exc))
    except RuntimeError as exc:  # a bound or a proven optimum above a known value, an infeasible schedule: a bug
        print(error_line(parser.prog, exc), file=sys.stderr)
        return 1
    tabs = tables(cfg, recs)
    if args.markdown:
        print("\n\n".join(tabs.values()))
        return 0
    n = problems[ks[0] - 1].n
    print(f"{label}: {len(ks)} instances of {n} jobs, compared with {kind}")
    titles = {"heuristics": f"Heuristics (ILS limit {cfg.ils_time:g} s, seed {cfg.seed})",
              "bound": f"Lower bound (time-indexed Lagrangian, limit {cfg.bound_time:g} s or {cfg.bound_iters} passes, "
                       "given the ILS schedule)",
              "exact": f"Exact methods, {cfg.exact_limit:g} s per instance, {cfg.workers} worker(s)"}
    for key, tab in tabs.items():
        print(f"\n{titles[key]}\n{tab}")
    return 0


if __name__ == "__main__":
    run_cli(main)
