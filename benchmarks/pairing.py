"""Benchmark: co-scheduling with Edmonds' matching vs time sharing (co-scheduling paper, Sec. 5).

``python -m benchmarks.pairing`` prints

1. the paper's three job mixes (Table 6) under P_total = 350 and 400 W: total
   time of time sharing with naive caps, with optimal caps, Algorithm 1, and
   the exact optimum (CP-SAT), the speed-up over naive time sharing (the
   paper's metric, Sec. 5.2) and the job sets chosen (cf. Table 8);
2. generated queues: mean speed-ups over several seeds;
3. C = 3 on small generated queues: exact optimum vs the local search vs C = 2;
4. the full pipeline at W = 200 (configuration search for all 19,900 pairs,
   matching, split): median wall time of several runs.

All figures use :class:`instances.pairing.AnalyticModel` (or a CSV table via
``--table``), not the paper's measured hardware. The paper reports up to 67%
over naive time sharing (108.8 s vs 65.0 s, Sec. 5.2); the analytic model
gives 12-22% on the Table 6 mixes, for two reasons. (1) A co-run can beat
time sharing only through each job's imperfect scaling (Amdahl serial
fractions of the invented profiles, APPS): two jobs that each slow down by a
factor ``s`` with half the chip gain ``2/s - 1``, about 25% for ``s = 1.6``;
67% needs ``s ~ 1.2``. Memory contention and the shared chip-level caps eat
part of that. (2) Power capping costs solo runs little in the model (optimal
caps beat the even split by 0.3-1.9%), so the naive baseline is barely
handicapped; the paper's 67% is measured against that naive baseline and
includes whatever the even split costs on the real node (the text gives no
separate figure for it).

The heuristics come from ``heuristics.pairing.METHODS``: the C = 2 tables
report those of :data:`C2_METHODS`, the C = 3 table those of
:data:`C3_METHODS`; ``--methods`` keeps a subset (an unknown name is an
error). Every generated queue up to ``--exact-max-W`` (default: all of
them, W = 200 included) is also solved exactly, so the "Algorithm 1 =
exact" column counts proven optima only. ``--markdown`` prints the tables
the README shows. The default run takes about a minute on a 2-core machine.

Every job mix, generated queue and the pipeline timing is one task of
:mod:`benchmarks.executor` (``--executor``, ``--jobs``; the timing runs
after the others, alone); with ``--out DIR`` each is recorded in
``DIR/records.jsonl`` as it finishes and the same command run again
resumes from them (``--fresh`` starts over). A task that fails shows as
failed (or counts in no mean, the seeds column says so) and the command
exits 1.

Examples
--------
``python -m benchmarks.pairing --quiet --seeds 2 --timing-runs 3``
``python -m benchmarks.pairing --quiet --markdown``
``python -m benchmarks.pairing --jobs 2 --out results/pairing`` (records; the same line again resumes)
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from benchmarks import common
from benchmarks import executor as ex
from heuristics import pairing as hp
from instances import pairing


#: Registry methods of the C = 2 tables (the Sec. 5.2 comparison), baseline first.
C2_METHODS = ("ts-naive", "ts-opt", "algorithm1")
#: Registry methods compared with the C = 3 optimum.
C3_METHODS = ("algorithm1", "greedy", "local-search")
#: Largest window ``--W`` (pairs grow as W^2: W = 200 is 19,900 pairs).
MAX_W = 1000
#: Largest window of the C = 3 comparison (triples grow as W^3).
MAX_TRIPLE_W = 30
#: Largest total power cap ``--p-total`` [W].
MAX_P_TOTAL = 10_000.0
_window = common.integer(2, MAX_W)

_LABEL = {"ts-naive": "TS + naive caps", "ts-opt": "TS + opt caps", "algorithm1": "Algorithm 1",
          "greedy": "greedy", "local-search": "local search"}


def _label(name: str) -> str:
    return _LABEL.get(name, name)


def _speedup(base: float, t: float) -> float:
    return (base / t - 1.0) * 100.0


def _model_spec(model) -> Any:
    """What a task carries of the slowdown model: the model itself, or a table model's measurements
    (every task holds what it needs, and its records key changes with the data, not with a file name)."""
    if isinstance(model, pairing.TableModel):
        return ("table", tuple(sorted(model.table.items())), model.source)
    return model


def _model(spec: Any):
    """The slowdown model of :func:`_model_spec`'s ``spec``."""
    if isinstance(spec, tuple) and spec[0] == "table":
        return pairing.TableModel(dict(spec[1]), source=spec[2])
    return spec


def _policies(problem: pairing.PairingProblem, methods, exact: bool = True) -> dict[str, Any]:
    """Totals, planning times and job sets of the chosen C = 2 methods for one problem, and its exact optimum.

    Plain data (a task's result is recorded): ``total``, ``plan_s`` and
    ``sets`` (the job names of every set) per method; ``exact`` and
    ``exact_status`` with ``exact``.
    """
    out: dict[str, Any] = {"total": {}, "plan_s": {}, "sets": {}}
    for name in methods:
        t0 = time.perf_counter()
        plan = hp.METHODS[name](problem)
        out["plan_s"][name] = time.perf_counter() - t0
        errs = pairing.check(problem, plan)
        if errs:
            raise RuntimeError(f"{name} plan rejected by the checker: {errs[:2]}")
        out["total"][name] = plan.total_time
        out["sets"][name] = [list(x.jobs) for x in plan.sets]
    if exact:
        from milp.pairing import solve
        res = solve(problem, backend="cpsat", time_limit=60)
        out["exact"] = res.objective
        out["exact_status"] = str(res.status)
    return out


def mix_task(task: tuple) -> dict[str, Any]:
    """One Table 6 job mix at one power cap (an executor task): :func:`_policies` with the exact optimum."""
    pt, mix, spec, cols = task
    prob = pairing.PairingProblem(pairing.job_mix(mix), pairing.ConfigSpace(p_total=pt), _model(spec))
    return {"W": prob.W, **_policies(prob, cols)}


def queue_task(task: tuple) -> dict[str, Any]:
    """One generated queue (an executor task): :func:`_policies`, with the exact optimum when ``solve``."""
    pt, W, seed, spec, cols, solve = task
    model = _model(spec)
    prob = pairing.PairingProblem(pairing.generate(W, seed=seed, apps=_table_apps(model)),
                                  pairing.ConfigSpace(p_total=pt), model)
    return _policies(prob, cols, exact=solve)


def triple_task(task: tuple) -> dict[str, Any]:
    """One generated queue of the C = 3 comparison (an executor task): each method's total time over the
    exact C = 3 optimum (or its proven bound), and the exact solve's seconds."""
    from milp.pairing import solve

    p_total, W, seed, spec, cols = task
    model = _model(spec)
    prob = pairing.PairingProblem(pairing.generate(W, seed=seed, apps=_table_apps(model)),
                                  pairing.ConfigSpace(p_total=p_total), model, 3)
    costs = pairing.costs_of(prob, triples=True)
    t0 = time.perf_counter()
    res = solve(prob, backend="cpsat", costs=costs, time_limit=60)
    seconds = time.perf_counter() - t0
    opt = res.objective if res.proven else res.lower_bound
    ratios = {}
    for m in cols:
        plan = hp.METHODS[m](prob)
        if pairing.check(prob, plan):
            raise RuntimeError(f"{m} plan rejected by the checker: {pairing.check(prob, plan)[:2]}")
        ratios[m] = plan.total_time / opt
    return {"ratios": ratios, "solve_s": seconds}


def timing_task(task: tuple) -> dict[str, Any]:
    """The pipeline timing (an executor task, run alone: the sections before it have finished): seconds
    of the configuration search, of matching + split, and in total, per run."""
    W, runs, p_total, spec = task
    model = _model(spec)
    prob = pairing.PairingProblem(pairing.generate(W, seed=0, apps=_table_apps(model)),
                                  pairing.ConfigSpace(p_total=p_total), model)
    hp.algorithm1(prob)  # warm-up: imports (highspy, networkx) are not planning time
    tot, srch, match = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        costs = pairing.search(prob)
        t1 = time.perf_counter()
        plan = hp.algorithm1(prob, costs=costs)
        t2 = time.perf_counter()
        tot.append(t2 - t0)
        srch.append(t1 - t0)
        match.append(t2 - t1)
    errs = pairing.check(prob, plan)
    if errs:
        raise RuntimeError(f"W={W} plan rejected by the checker: {errs[:2]}")
    return {"total": tot, "search": srch, "match": match, "configs": len(prob.space.corun_configs(2))}


def _table_apps(model):
    """Programs a table model has measurements for (None: any program)."""
    if isinstance(model, pairing.TableModel):
        return sorted({k[0] for k in model.table})
    return None


def _has_triples(model) -> bool:
    return not isinstance(model, pairing.TableModel) or any(len(k[1]) == 2 for k in model.table)


def _heading(title: str, markdown: bool) -> list[str]:
    """A section title: a markdown heading in the report, a caption line under ``--markdown``."""
    return [f"{title}:", ""] if markdown else [f"## {title}", ""]


def _run(executor: ex.Executor | None, fn, tasks: list, quiet: bool, desc: str, label) -> list:
    """``executor.map(fn, tasks)``: a failed task's place holds its :class:`benchmarks.executor.Failed`."""
    return (executor or ex.Executor()).map(fn, tasks, quiet=quiet, desc=desc, unit="task", label=label)


def _seeds(done: int, asked: int) -> str:
    """The seeds column: the queues that finished (and how many failed)."""
    return str(done) if done == asked else f"{done} ({asked - done} failed)"


def table6(p_totals, model, quiet: bool, methods=C2_METHODS, markdown: bool = False,
           executor: ex.Executor | None = None) -> list[str]:
    """The paper's Table 6 job mixes: total time per method, the exact optimum, speed-ups over naive TS
    (one executor task per mix and cap; a failed one shows as failed)."""
    cols = [m for m in C2_METHODS if m in methods]
    base = "ts-naive" if "ts-naive" in cols else None
    ups = [m for m in cols if m != base] if base else []
    kind = "analytic model" if isinstance(model, pairing.AnalyticModel) else "table model"
    if markdown:
        header = (["mix (Table 6)", "P_total"] + [f"{_label(m)} [s]" for m in cols] + ["exact [s]"]
                  + [f"speed-up {_label(m)} vs naive" for m in ups])
    else:
        header = (["mix", "W", "P_total"] + [f"{_label(m)} [s]" for m in cols] + ["exact [s]"]
                  + [f"speed-up {_label(m)}" for m in ups] + ["planning [ms]", "job sets"])
    apps = _table_apps(model)
    todo = [(pt, mix) for pt in p_totals for mix in (1, 2, 3)]
    known = [(pt, mix) for pt, mix in todo if apps is None or set(pairing.JOB_MIXES[mix]) <= set(apps)]
    spec = _model_spec(model)
    results = dict(zip(known, _run(executor, mix_task, [(pt, mix, spec, tuple(cols)) for pt, mix in known],
                                   quiet, "job mixes", lambda t: f"JobMix{t[1]} P_total {t[0]:g}")))
    rows = []
    for pt, mix in todo:
        r = results.get((pt, mix))
        if r is None or isinstance(r, ex.Failed):
            cells = [f"JobMix{mix}"] + ([] if markdown else [""]) + [f"{pt:g}"]
            cells.append("failed" if r is not None else "skipped: the table lacks some of its programs")
            rows.append(cells + [""] * (len(header) - len(cells)))
            continue
        shown = "algorithm1" if "algorithm1" in cols else cols[-1]
        exact = f"{r['exact']:.2f}" + ("" if r["exact_status"] == "OPTIMAL" else f" ({r['exact_status']})")
        totals = [f"{r['total'][m]:.2f}" for m in cols]
        speed = [f"{_speedup(r['total'][base], r['total'][m]):.1f}%" for m in ups]
        if markdown:
            rows.append([f"JobMix{mix}", f"{pt:g}"] + totals + [exact] + speed)
        else:
            sets = ", ".join("-".join(jobs) for jobs in r["sets"][shown])
            rows.append([f"JobMix{mix}", str(r["W"]), f"{pt:g}"] + totals + [exact] + speed
                        + [f"{r['plan_s'][shown] * 1e3:.1f}", sets])
    return _heading(f"Table 6 job mixes, {kind}, total time of the window", markdown) + \
        [common.markdown_table(header, rows)]


def generated(p_totals, Ws, seeds, model, quiet: bool, exact_max_W: int = 200,
              methods=C2_METHODS, markdown: bool = False, executor: ex.Executor | None = None) -> list[str]:
    """Generated queues: mean speed-ups over ``seeds`` queues per (W, P_total), Algorithm 1 against the optimum
    (one executor task per queue; a failed one counts in no mean, the seeds column says so)."""
    cols = [m for m in C2_METHODS if m in methods]
    base = "ts-naive" if "ts-naive" in cols else None
    ups = [m for m in cols if m != base] if base else []
    alg = "algorithm1" in cols
    header = (["W", "P_total", "seeds"] + [f"speed-up {_label(m)}" for m in ups]
              + (["Algorithm 1 = exact (proven optima)"] + ([] if markdown else ["jobs co-run / W", "planning [ms]"])
                 if alg else ["exact [s]"]))
    todo = [(pt, W) for pt in p_totals for W in Ws]
    spec = _model_spec(model)
    tasks = [(pt, W, s, spec, tuple(cols), W <= exact_max_W) for pt, W in todo for s in range(seeds)]
    results = _run(executor, queue_task, tasks, quiet, "generated queues",
                   lambda t: f"queue W={t[1]} P_total {t[0]:g} seed {t[2]}")
    rows = []
    for k, (pt, W) in enumerate(todo):
        done = ex.succeeded(results[k * seeds:(k + 1) * seeds])
        if not done:
            rows.append([str(W), f"{pt:g}", _seeds(0, seeds)] + ["failed"] * (len(header) - 3))
            continue
        su = {m: [] for m in ups}
        eq, proven, frac, plan_ms, exs = 0, 0, [], [], []
        solve = W <= exact_max_W
        for r in done:
            for m in ups:
                su[m].append(_speedup(r["total"][base], r["total"][m]))
            ok = solve and r["exact_status"] == "OPTIMAL"
            proven += ok
            if ok:
                exs.append(r["exact"])
            if alg:
                total = r["total"]["algorithm1"]
                eq += ok and abs(r["exact"] - total) <= 1e-6 * r["exact"]
                frac.append(sum(len(jobs) for jobs in r["sets"]["algorithm1"] if len(jobs) > 1) / W)
                plan_ms.append(r["plan_s"]["algorithm1"] * 1e3)
        if not solve:
            exact_txt = f"not solved (W > --exact-max-W {exact_max_W})"
        else:
            exact_txt = f"{eq}/{proven}" + (f" ({len(done) - proven} not proven)" if proven < len(done) else "")
        row = [str(W), f"{pt:g}", _seeds(len(done), seeds)] + [f"{statistics.mean(su[m]):.1f}%" for m in ups]
        if alg:
            row.append(exact_txt)
            if not markdown:
                row += [f"{statistics.mean(frac):.2f}", f"{statistics.median(plan_ms):.1f}"]
        else:
            row.append(f"{statistics.mean(exs):.2f}" if exs else exact_txt)
        rows.append(row)
    return _heading("Generated queues (means over seeds)", markdown) + [common.markdown_table(header, rows)]


def triples(p_total, Ws, seeds, model, quiet: bool, methods=C3_METHODS, markdown: bool = False,
            executor: ex.Executor | None = None) -> list[str]:
    """C = 3: each method's total time over the exact C = 3 optimum (or its proven bound); one executor task
    per queue (a failed one counts in no mean, the seeds column says so)."""
    cols = [m for m in C3_METHODS if m in methods]
    header = ["W", "seeds"] + [f"{_label(m)} / C=3 OPT" for m in cols] + ["exact C=3 solve [s]"]
    spec = _model_spec(model)
    tasks = [(p_total, W, 100 + s, spec, tuple(cols)) for W in Ws for s in range(seeds)]
    results = _run(executor, triple_task, tasks, quiet, "C=3", lambda t: f"C=3 queue W={t[1]} seed {t[2]}")
    rows = []
    for k, W in enumerate(Ws):
        done = ex.succeeded(results[k * seeds:(k + 1) * seeds])
        if not done:
            rows.append([str(W), _seeds(0, seeds)] + ["failed"] * (len(header) - 2))
            continue
        ratios = {m: [r["ratios"][m] for r in done] for m in cols}
        rows.append([str(W), _seeds(len(done), seeds)]
                    + [f"{statistics.mean(ratios[m]):.4f} (max {max(ratios[m]):.4f})" for m in cols]
                    + [f"{statistics.median(r['solve_s'] for r in done):.2f}"])
    return _heading(f"C = 3 (triples) on generated queues, P_total {p_total:g}", markdown) + \
        [common.markdown_table(header, rows)]


def timing(W: int, runs: int, p_total: float, model, quiet: bool, markdown: bool = False,
           executor: ex.Executor | None = None) -> list[str]:
    """Wall time of the full pipeline (configuration search, matching, split) at window size ``W``."""
    header = ["W", "pairs", "configurations / pair", "runs", "search [s]", "matching + split [s]",
              "total median [s]", "total max [s]"]
    (r,) = _run(executor, timing_task, [(W, runs, p_total, _model_spec(model))], quiet, f"W={W} pipeline",
                lambda t: f"pipeline timing W={t[0]}")
    pairs = W * (W - 1) // 2
    if isinstance(r, ex.Failed):
        row = [W, pairs] + ["failed"] * (len(header) - 2)
    else:
        row = [W, pairs, r["configs"], runs, f"{statistics.median(r['search']):.3f}",
               f"{statistics.median(r['match']):.3f}", f"{statistics.median(r['total']):.3f}", f"{max(r['total']):.3f}"]
    return _heading("Full pipeline timing", markdown) + [common.markdown_table(header, [row])]


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 1 minute"


def main(argv: list[str] | None = None) -> int:
    ap = common.Parser(prog="python -m benchmarks.pairing", description=common.description(__doc__, DEFAULT_RUN))
    ap.add_argument("--p-total", type=common.number(0, MAX_P_TOTAL, above=True), nargs="+", default=[350.0, 400.0],
                    help=f"total power caps [W], each at most {MAX_P_TOTAL:g} (the paper's Table 4)")
    ap.add_argument("--W", type=_window, nargs="+", default=[8, 20, 50, 200],
                    help=f"window sizes of the generated queues, each at most {MAX_W}")
    ap.add_argument("--seeds", type=common.count, default=5, help="generated queues per (W, P_total)")
    ap.add_argument("--exact-max-W", type=common.integer(0, MAX_W), default=200,
                    help="solve the generated queues exactly (CP-SAT) up to this W (0: none)")
    ap.add_argument("--triple-W", type=common.integer(1, MAX_TRIPLE_W), nargs="*", default=[6, 9, 12, 15],
                    help=f"window sizes for the C = 3 comparison, each at most {MAX_TRIPLE_W} (none given: skip)")
    ap.add_argument("--timing-W", type=common.integer(0, MAX_W), default=200,
                    help="W of the pipeline timing (0: skip)")
    ap.add_argument("--timing-runs", type=common.count, default=7, help="runs of the pipeline timing")
    ap.add_argument("--table", help="slowdown CSV for a measured TableModel (default: the analytic model)")
    ap.add_argument("--methods", type=common.comma_choices(hp.METHODS, "method"), default=None,
                    help=f"comma list from heuristics.pairing.METHODS (default: all, {','.join(hp.METHODS)})")
    ex.add_arguments(ap)
    common.add_markdown(ap)
    common.add_quiet(ap)
    args = ap.parse_args(argv)
    methods = args.methods or list(hp.METHODS)
    if not any(m in C2_METHODS for m in methods):
        ap.error(f"--methods: the C = 2 tables need one of {', '.join(C2_METHODS)}")
    try:
        for pt in args.p_total:
            pairing.ConfigSpace(p_total=pt).power_pairs()
        model = pairing.TableModel.from_csv(args.table) if args.table else pairing.AnalyticModel()
    except pairing.InstanceError as e:
        ap.error(str(e))
    executor = ex.from_args(ap, args)
    md = args.markdown
    out = table6(args.p_total, model, args.quiet, methods, md, executor)
    out += [""] + generated(args.p_total, args.W, args.seeds, model, args.quiet, args.exact_max_W, methods, md,
                            executor)
    if args.triple_W and not _has_triples(model):
        out += ["", "C = 3 skipped: the slowdown table has no triple measurements."]
    elif args.triple_W and any(m in C3_METHODS for m in methods):
        out += [""] + triples(args.p_total[0], args.triple_W, args.seeds, model, args.quiet, methods, md, executor)
    if args.timing_W:
        out += [""] + timing(args.timing_W, args.timing_runs, args.p_total[0], model, args.quiet, md, executor)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    common.run_cli(main)
