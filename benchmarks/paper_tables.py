"""The FAR paper's Tables 4-9 computed: each table a list of independent tasks run by an executor.

A task is one cell, one exact solve, or a whole table for the tables
computed in one piece (6, 7-8, 9); an :class:`~benchmarks.executor.Executor`
runs them and returns the results in task order, so the figures are the
same for every executor and every ``--jobs``. :func:`table4` ..
:func:`table9` are the tables as functions; :func:`run_task` and the
``tasks*`` / ``assemble*`` pairs let the command line run several tables in
one executor map. The definitions are in :mod:`benchmarks.paper_spec`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from benchmarks import common
from benchmarks.executor import Executor, Failed
from benchmarks.paper_spec import (CONFIGS6, MISO_SLICES, N_T4, N_T6, SCALINGS, FarOpt, Generator, Setting,
                                   cell_seed, mean)

__all__ = ["table4", "table5", "table6", "table78", "table9", "run_task", "tasks4", "assemble4", "tasks5",
           "assemble5", "registry", "columns5", "interval_cell"]


def _stat(stats: dict, *names: str) -> float:
    for n in names:
        if n in stats:
            return float(stats[n])
    return float("nan")


def _Progress(total: int, quiet: bool, desc: str):
    """A progress bar of ``total`` repetitions (:func:`benchmarks.common.progress`)."""
    return common.progress(total=total, quiet=quiet, desc=desc, unit="rep")


def _far():
    from heuristics.mig import METHODS

    return METHODS["FAR"]


def _rho_cell(gen: Generator, sc: str, n: int, reps: int, seed: int) -> list[float]:
    from bounds import mig as mig_bounds

    far = _far()
    out = []
    for r in range(reps):
        p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
        out.append(far(p).makespan / mig_bounds.area_bound(p))
    return out


def _opt_instance(gen: Generator, sc: str, n: int, r: int, seed: int, methods: tuple[str, ...] | None,
                  backend: str, time_limit: float, workers: int | None) -> dict:
    from benchmarks.compare import evaluate

    p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
    rows, _ = evaluate(p, methods, exact=True, backend=backend, time_limit=time_limit, workers=workers,
                       timing_repeats=1)
    return {"index": r, "rows": [{"instance": r, **row} for row in rows]}


def _interval_instance(gen: Generator, sc: str, n: int, r: int, seed: int, time_limit: float,
                       workers: int | None) -> dict:
    """FAR's makespan and the exact solve's best found and proven bound on one Table 4 instance."""
    from milp import solve_optimal

    p = gen.batch(n, sc, "WideTimes", cell_seed(seed, 4, sc, n, r))
    far = _far()(p).makespan
    try:
        res = solve_optimal(p, backend="cpsat", reconfiguration=True, time_limit=time_limit, workers=workers)
    except Exception as exc:  # counted and shown under the table, never dropped
        return {"far": far, "error": " ".join(f"{type(exc).__name__}: {exc}".split())[:200]}
    return {"far": far, "best": res.objective, "bound": res.lower_bound, "proven": res.proven,
            "runtime": res.runtime}


def interval_cell(runs: list[dict]) -> dict:
    """``low``/``high``: mean FAR / best found and mean FAR / proven bound over the solved instances.

    Per instance FAR / best <= FAR / OPT <= FAR / bound, so the means bracket
    the mean FAR / OPT; a run without a positive bound leaves ``high`` open.
    """
    ok = [r for r in runs if "error" not in r and r.get("best")]
    highs = [r["far"] / r["bound"] if r.get("bound") and r["bound"] > 0 else math.inf for r in ok]
    return {"low": mean([r["far"] / r["best"] for r in ok]) if ok else float("nan"),
            "high": (math.fsum(highs) / len(highs)) if highs else float("nan"),
            "proven": sum(bool(r["proven"]) for r in ok), "count": len(runs), "failed": len(runs) - len(ok),
            "error": next((r["error"] for r in runs if "error" in r), None)}


def _sigma_cell(gen: Generator, sc: str, tm: str, reps: int, seed: int, methods: tuple[str, ...]) -> dict:
    """``{column: [sigma or an error string per rep]}`` for one Table 5 configuration."""
    from heuristics import far_baselines as fb
    from heuristics.mig import METHODS

    far = _far()
    out: dict[str, list] = {c: [] for c in methods + (MISO_SLICES,)}
    for r in range(reps):
        p = gen.batch(15, sc, tm, cell_seed(seed, 5, sc, tm, r))
        w = far(p).makespan
        for c in out:
            fn = (lambda q: fb.miso_opt(q, repartition="slices")) if c == MISO_SLICES else METHODS.get(c)
            try:
                if fn is None:
                    raise KeyError(f"{c!r} is not in heuristics.mig.METHODS")
                out[c].append(fn(p).makespan / w)
            except Exception as exc:  # reported under the table, never dropped
                out[c].append(" ".join(f"{type(exc).__name__}: {exc}".split())[:200])
    return out


def _whole_table(name: str, kwargs: dict):
    # the tables computed in one piece; their own progress bars would print inside a worker
    return {"6": table6, "78": table78, "9": table9}[name](**kwargs, quiet=True)


def run_task(task: tuple):
    """Run one task of :func:`tasks4`, :func:`tasks5` or ``("whole", "6" | "78" | "9", kwargs)``."""
    kind, *args = task
    return {"rho": _rho_cell, "opt": _opt_instance, "interval": _interval_instance, "sigma": _sigma_cell,
            "whole": _whole_table}[kind](*args)


def tasks4(reps: int, seed: int, opt_reps: int, time_limit: float, backend: str, gen: Generator,
           methods: tuple[str, ...] | None, opt_n: int, workers: int | None,
           far_opt: FarOpt | None = None) -> list[tuple]:
    """Table 4's tasks: one per rho cell, one per exact solve of the ``opt_n`` column and of ``far_opt``."""
    tasks: list[tuple] = [("rho", gen, sc, n, reps, seed) for sc in SCALINGS for n in N_T4]
    tasks += [("opt", gen, sc, opt_n, r, seed, methods, backend, time_limit, workers)
              for sc in SCALINGS for r in range(opt_reps)]
    tasks += far_opt.tasks(gen, seed) if far_opt is not None else []
    return tasks


def _failed_result(task: tuple, failure: Failed) -> Any:
    """What a failed task of Table 4 or 5 counts as: its cells shown as failed, never left out.

    A rho cell has no value (``-``); an exact solve and a sigma cell count as failed runs with the error.
    """
    kind = task[0]
    if kind == "rho":
        return [math.nan]
    if kind == "interval":
        return {"far": math.nan, "error": failure.error}
    if kind == "opt":
        from benchmarks.compare import Config, failed_instance

        return failed_instance(Config(n=task[3], methods=task[6], backend=task[7]), task[4], failure)
    return {c: [f"ERROR: {failure.error}"] * task[4] for c in task[6] + (MISO_SLICES,)}


def assemble4(tasks: list[tuple], results: list) -> dict:
    """Table 4 (as :func:`table4` returns it) from the results of :func:`tasks4`, in task order."""
    from benchmarks.compare import summarise

    out: dict = {sc: [] for sc in SCALINGS}
    runs: dict[str, list] = {}
    solves: dict[tuple[str, int], list] = {}
    for task, res in zip(tasks, results):
        res = _failed_result(task, res) if isinstance(res, Failed) else res
        if task[0] == "rho":
            out[task[2]].append(mean(res))
        elif task[0] == "interval":
            solves.setdefault((task[2], task[3]), []).append(res)
        else:
            runs.setdefault(task[2], []).append(res)
    out["opt"] = {sc: summarise(rs) for sc, rs in runs.items()}
    out["interval"] = {key: interval_cell(rs) for key, rs in solves.items()}
    return out


def table4(reps: int, seed: int = 0, opt_reps: int = 0, time_limit: float = 20.0, backend: str = "cpsat",
           quiet: bool = True, gen: Generator = Generator(), executor: Executor | None = None,
           methods: Sequence[str] | None = None, opt_n: int = 10, workers: int | None = None,
           far_opt: FarOpt | None = None) -> dict:
    """Table 4 and the exact columns the paper could not have.

    Returns
    -------
    dict
        ``{scaling: [mean rho for n in N_T4]}`` and ``"opt"``: ``{scaling:
        benchmarks.compare.summarise rows}`` for ``opt_reps`` instances of
        ``opt_n`` tasks solved exactly: every method of
        :data:`heuristics.mig.METHODS` (or ``methods``), the optimum and the
        bounds, as ratios to proven optima (brackets for the unproven ones);
        ``"interval"``: ``{(scaling, n): {"low", "high", "proven", "count",
        "failed", "error"}}``, FAR / OPT bracketed by the CP-SAT solves of
        ``far_opt`` (none when it is ``None``).

    Examples
    --------
    >>> t = table4(1, far_opt=FarOpt(reps=1, time_limit=20, ns=(3,), workers=1))
    >>> cell = t["interval"][("PoorScaling", 3)]
    >>> cell["proven"], cell["low"] >= 1, abs(cell["high"] - cell["low"]) < 1e-5  # proven: the ends meet
    (1, True, True)
    """
    methods = tuple(methods) if methods is not None else registry()
    tasks = tasks4(reps, seed, opt_reps, time_limit, backend, gen, methods, opt_n, workers, far_opt)
    results = (executor or Executor()).map(run_task, tasks, quiet=quiet, desc="Table 4", unit="task")
    return assemble4(tasks, results)


def tasks5(reps: int, seed: int, gen: Generator, methods: tuple[str, ...]) -> list[tuple]:
    """Table 5's tasks: one per task configuration."""
    return [("sigma", gen, sc, tm, reps, seed, columns5(methods)) for sc, tm in CONFIGS6]


def assemble5(tasks: list[tuple], results: list) -> dict:
    """Table 5 (as :func:`table5` returns it) from the results of :func:`tasks5`, in task order."""
    out: dict = {}
    for task, res in zip(tasks, results):
        res = _failed_result(task, res) if isinstance(res, Failed) else res
        out[(task[2], task[3])] = {
            c: {"mean": mean([v for v in vals if not isinstance(v, str)]),
                "failed": sum(isinstance(v, str) for v in vals),
                "error": next((v for v in vals if isinstance(v, str)), None), "reps": len(vals)}
            for c, vals in res.items()}
    return out


def registry() -> tuple[str, ...]:
    """The names of :data:`heuristics.mig.METHODS`, read when called (a method added later counts)."""
    from heuristics.mig import METHODS

    return tuple(METHODS)


def columns5(methods: tuple[str, ...]) -> tuple[str, ...]:
    """Table 5's columns: every chosen registry method but FAR, the reference of sigma."""
    return tuple(m for m in methods if m != "FAR")


def table5(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           executor: Executor | None = None, methods: Sequence[str] | None = None) -> dict:
    """``{(scaling, times): {column: {"mean", "failed", "error", "reps"}}}`` of sigma = omega_A / omega_FAR, n = 15.

    The columns are every method of :data:`heuristics.mig.METHODS` (or
    ``methods``) but FAR, then MISO-opt under the other repartitioning reading
    (``repartition="slices"``, no paper column). A method that raises is
    counted in ``failed`` with its first ``error``.
    """
    methods = tuple(methods) if methods is not None else registry()
    tasks = tasks5(reps, seed, gen, methods)
    return assemble5(tasks, (executor or Executor()).map(run_task, tasks, quiet=quiet, desc="Table 5",
                                                          unit="cell"))


def _refined_pair(p: Any, setting: Setting) -> tuple[float, Any]:
    """(makespan without refinement, the refined plan) under ``setting``."""
    from heuristics import far

    noref = far.plan(p, refine=False, ties=setting.ties).makespan
    if setting.refined == "winner":
        return noref, far.plan(p, refine=True, ties=setting.ties)
    plans = [far.schedule_allocation(p, a, refine=True, ties=setting.ties) for a in far.family(p, ties=setting.ties)]
    return noref, min(plans, key=lambda fp: fp.makespan)


def table6(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           setting: Setting = Setting()) -> dict:
    """``{(scaling, times): [p_ref, moves, swaps] * len(N_T6)}``."""
    out = {}
    with _Progress(len(CONFIGS6) * len(N_T6) * reps, quiet, "Table 6") as bar:
        for sc, tm in CONFIGS6:
            row = []
            for n in N_T6:
                pref, moves, swaps = [], [], []
                for r in range(reps):
                    p = gen.batch(n, sc, tm, cell_seed(seed, 6, sc, tm, n, r))
                    noref, plan = _refined_pair(p, setting)
                    pref.append((noref / plan.makespan - 1) * 100)
                    moves.append(_stat(plan.stats, "moves"))
                    swaps.append(_stat(plan.stats, "swaps"))
                    bar.update(1)
                row += [mean(pref), mean(moves), mean(swaps)]
            out[(sc, tm)] = row
    return out


def _chains(reps: int, seed: int, table: int, sc: str, tm: str, n: int, gen: Generator, chain: int):
    for r in range(reps):
        # ``chain`` batches of n tasks, all available at t = 0, concatenated in order (two: one pair)
        yield gen.workload([n] * chain, [0.0] * chain, sc, tm, cell_seed(seed, table, sc, tm, n, r))


def _concatenations(w: Any, ties: str) -> tuple[float, float, Any]:
    """The trivial and reversed concatenations' makespans and the move/swap plan of ``w``, on one set of batch plans."""
    from heuristics import far_batch, far_multibatch
    from instances import mig

    plans = [far_batch.plan(mig.Problem(w.gpu, b.tasks, 0.0), ties=ties) for b in w.batches]
    triv, rev, ms = (far_multibatch.plan_workload(w, m, plans=plans, ties=ties)
                     for m in ("trivial", "reversed", "move_swap"))
    return triv.makespan, rev.makespan, ms


def table78(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
            setting: Setting = Setting(), chain: int = 2) -> tuple[dict, dict]:
    """Tables 7 and 8 from the same concatenations: ``{cfg: [p_rev, p_ms] * 3}``, ``{cfg: [moves, swaps] * 3}``.

    Each of the ``reps`` repetitions of a cell is a chain of ``chain`` FAR
    batches (Sec. 6.7.1 chains 1001, i.e. 1000 concatenations; the default 2
    is one concatenation). ``p_rev`` and ``p_move/swap`` compare the whole
    chain's makespans (trivial against reversed, against move/swap), so over
    a long chain they are the makespan-weighted mean gain per concatenation;
    moves and swaps are counted per concatenation (the chain's total divided
    by ``chain - 1``). Every batch is planned once and the three
    concatenations share the plans.
    """
    if isinstance(chain, bool) or not isinstance(chain, int) or chain < 2:
        from instances.errors import OptionError

        raise OptionError(f"chain must be an integer >= 2, got {chain!r}")
    t7, t8 = {}, {}
    with _Progress(len(CONFIGS6) * len(N_T6) * reps, quiet, "Tables 7-8") as bar:
        for sc, tm in CONFIGS6:
            r7, r8 = [], []
            for n in N_T6:
                prev, pms, moves, swaps = [], [], [], []
                for w in _chains(reps, seed, 7, sc, tm, n, gen, chain):
                    triv, rev, plan = _concatenations(setting.workload(w), setting.ties)
                    prev.append((triv / rev - 1) * 100)
                    pms.append((triv / plan.makespan - 1) * 100)
                    moves.append(_stat(plan.stats, "concat_moves", "moves") / (chain - 1))
                    swaps.append(_stat(plan.stats, "concat_swaps", "swaps") / (chain - 1))
                    bar.update(1)
                r7 += [mean(prev), mean(pms)]
                r8 += [mean(moves), mean(swaps)]
            t7[(sc, tm)], t8[(sc, tm)] = r7, r8
    return t7, t8


def table9(reps: int, seed: int = 0, quiet: bool = True, gen: Generator = Generator(),
           setting: Setting = Setting()) -> dict:
    """``{scaling: [p_multi for n in N_T4]}`` for ``reps + 1`` WideTimes batches."""
    from bounds import mig as mig_bounds
    from heuristics import far

    out = {}
    k = reps + 1
    with _Progress(len(SCALINGS) * len(N_T4), quiet, "Table 9") as bar:
        for sc in SCALINGS:
            row = []
            for n in N_T4:
                w = setting.workload(gen.workload([n] * k, [0.0] * k, sc, "WideTimes", cell_seed(seed, 9, sc, n)))
                row.append((far.schedule(w, ties=setting.ties).makespan / mig_bounds.area_bound(w) - 1) * 100)
                bar.update(1)
            out[sc] = row
    return out

