"""``python -m benchmarks.paper``: the FAR paper's Tables 4-9 recomputed, our figure beside the paper's.

Every cell is the mean over ``--reps`` instances of the paper's generator
(Sec. 6.3; A100; the paper used 1000, ``--reps 1000`` does the same), printed
as ``ours (paper, ours - paper)``, or as the README's ``ours (paper)`` with
``--markdown``. Definitions (FAR paper):

* Table 4 (Sec. 6.4): ``rho = omega_FAR / baseline`` with ``baseline = sum_i
  min_s s t_i(s) / #slices`` (``bounds.mig.area_bound``); WideTimes; n = 10..35.
  Added, the column the paper could not have: ``--opt-reps`` instances of
  ``--opt-n`` tasks (default 3 of 10) solved exactly (``milp.solve_optimal``
  with reconfiguration), with every method of ``heuristics.mig.METHODS``, the
  optimum and the bounds as ratios to proven optima (the unproven instances
  only bracket them). And, only when asked, for every n of the table FAR /
  OPT as a proven interval: ``--far-opt-reps`` instances of each cell solved by
  ``milp.solve_optimal(p, backend="cpsat", reconfiguration=True,
  time_limit=--far-opt-time-limit)``; ``[mean FAR / best found, mean FAR /
  proven bound]`` brackets the mean FAR / OPT (equal ends when every instance
  is proven), with the number of instances proven.
* Table 5 (Sec. 6.5): ``sigma_A = omega_A / omega_FAR`` for every method of
  ``heuristics.mig.METHODS`` but FAR (the paper: MISO-opt, FixPart(1,...,1),
  FixPartBest, FixPart(7)); n = 15. A method added to the registry gets its
  column; one that raises is reported as failed.
* Table 6 (Sec. 6.6): ``p_ref = (omega_no-ref / omega_ref - 1) * 100`` and the
  mean number of task moves and swaps of the refinement; n = 10, 20, 30.
* Table 7 (Sec. 6.7.1): ``p_rev = (omega_trivial / omega_rev - 1) * 100`` and
  ``p_move/swap = (omega_trivial / omega_move/swap - 1) * 100`` for the
  concatenation of two FAR batches of n tasks, or with ``--chain K`` of a
  chain of K batches (the paper: 1001, one chain per cell, so ``--chain 1001
  --reps 1``), the percentages then on the whole chain's makespan.
* Table 8: mean moves and swaps of that move/swap concatenation (per
  concatenation for a chain).
* Table 9 (Sec. 6.7.2): ``p_multi-batch = (omega_multi / baseline_multi - 1) *
  100`` for ``--reps + 1`` batches (the paper: 1001) concatenated online by FAR,
  ``baseline_multi`` the area bound of all their tasks.

Readings we had to choose are printed under each table (e.g. the release times
of the multi-batch experiments, which the paper does not give). Tables 6-9 can
be run under other readings (:class:`Setting`, ``--setting``): FAR's tie rules
(ours or the FAR authors' C++ ones), which allocations are refined (the phase-2
winner, or every allocation of the family keeping the best refined one), and
the release times of the concatenated batches; ``--candidates`` runs every
candidate setting and prints, per table, how far each is from the paper. Every cell is
seeded on its own and the executor (``--executor local|dask``, ``--jobs``)
returns results in a fixed order, so every executor prints the same figures.

Examples
--------
::

    python -m benchmarks.paper                  # all tables, --reps 20, 9 exact solves at n = 10: 1-2 minutes
    python -m benchmarks.paper --opt-reps 0     # no exact solve at all
    python -m benchmarks.paper --tables 4 5 --reps 1000 --markdown
    python -m benchmarks.paper --tables 4 --reps 1000 --opt-reps 0 --p-sup 0     # Table 4 as the paper
    python -m benchmarks.paper --tables 4 --opt-reps 10 --executor dask --scheduler tcp://host:8786
    python -m benchmarks.paper --tables 6 7 8 9 --setting ties=reference,refined=every,release=end
    python -m benchmarks.paper --tables 6 7 8 9 --candidates --reps 50 --markdown
    python -m benchmarks.paper --tables 7 8 --chain 1001 --reps 1 --p-sup 0   # Table 7 as the paper chains it
    python -m benchmarks.paper --tables 5 --methods "FAR,FixPart(1,...,1)"
    python -m benchmarks.paper --tables 4 --far-opt-reps 5 --far-opt-time-limit 60 --markdown
                                                # the FAR / OPT interval: 90 solves of up to 60 s
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Sequence

from benchmarks import common
from benchmarks import executor as ex
from benchmarks.executor import Executor
from benchmarks.paper_format import (distance, format_candidates, format_table4, format_table5, format_table6,
                                     format_table7, format_table8, format_table9)
from benchmarks.paper_spec import (CANDIDATES, MAX_GAP, PAPER, SCALINGS, FarOpt, Generator, Setting,
                                   cell_seed)
from benchmarks.paper_tables import (assemble4, assemble5, registry, run_task, table4, table5, table6, table78,
                                     table9, tasks4, tasks5)
from instances.mig_generator import DEFAULT_P_SUP

__all__ = ["PAPER", "TABLES", "SCALINGS", "Generator", "Setting", "CANDIDATES", "FarOpt", "cell_seed", "table4",
           "table5", "table6", "table78", "table9", "distance", "main"]

TABLES = (4, 5, 6, 7, 8, 9)
#: Largest ``--chain``: three times the paper's 1001 batches; a chain of 30-task batches then stays within the
#: generator's 100,000 tasks per workload, and it is planned in one process.
MAX_CHAIN = 3_000
#: Largest ``--opt-n``: the exact column solves whole batches; beyond a few dozen tasks none is proven.
MAX_OPT_N = 100


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "1-2 minutes"


def _parser() -> common.Parser:
    p = common.Parser(prog="python -m benchmarks.paper", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--tables", type=common.integer(4, 9), nargs="+", default=list(TABLES), choices=TABLES,
                   metavar="T", help="which tables, from 4 5 6 7 8 9")
    p.add_argument("--reps", type=common.count, default=20,
                   help=f"instances per cell (the paper: 1000; at most {common.MAX_COUNT:,})")
    p.add_argument("--seed", type=common.seed, default=0, help="base seed of every cell")
    p.add_argument("--methods", type=common.comma_choices(registry(), "method"), default=None,
                   help=f"comma list from heuristics.mig.METHODS for Table 5's columns and the exact "
                        f"column's rows; a name's own commas stay in it, as in FixPart(1,...,1) (default: all: "
                        f"{', '.join(registry())})".replace("%", "%%"))
    p.add_argument("--opt-reps", type=common.count_or_zero, default=3,
                   help="Table 4's exact column: instances solved exactly per configuration (0: none)")
    p.add_argument("--opt-n", type=common.integer(1, MAX_OPT_N), default=10,
                   help=f"Table 4's exact column: tasks per instance, at most {MAX_OPT_N}")
    p.add_argument("--time-limit", type=common.seconds, default=20.0,
                   help="seconds per exact solve of Table 4's n = --opt-n column")
    p.add_argument("--far-opt-reps", type=common.count_or_zero, default=0,
                   help="Table 4's FAR / OPT interval: instances per cell solved by CP-SAT with reconfiguration; "
                        "0: no interval, no solve (1 is 18 solves of up to --far-opt-time-limit each)")
    p.add_argument("--far-opt-time-limit", type=common.seconds, default=FarOpt.time_limit,
                   help="seconds per solve of the FAR / OPT interval")
    p.add_argument("--far-opt-n", type=common.integer(1, MAX_OPT_N), nargs="+", default=list(FarOpt.ns),
                   metavar="N", help=f"the n of the FAR / OPT interval, each at most {MAX_OPT_N} (small n: a quick "
                                     "run)")
    p.add_argument("--backend", default="cpsat", choices=("cpsat", "highs"),
                   help="exact solver of the --opt-n column (the FAR / OPT interval is always CP-SAT)")
    p.add_argument("--workers", type=common.workers, default=None,
                   help="solver threads per exact solve (default: the solver's own)")
    p.add_argument("--gpu", default="A100", choices=("A30", "A100", "H100"),
                   help="GPU of the generated batches (the paper: A100)")
    p.add_argument("--p-sup", type=common.fraction, default=DEFAULT_P_SUP,
                   help="share of memory-bound tasks per class, which the presets leave open "
                        "(Figure 11's value; with 0 Table 4 comes within 0.01 of the paper in 17 of 18 cells)")
    p.add_argument("--setting", type=_setting_arg, default=Setting(),
                   help="the reading of Tables 6-9: comma list of key=value, keys ties (ours|reference), "
                        f"refined (winner|every), release (zero|half|end|gap), gap (a factor in (0, {MAX_GAP:g}])")
    p.add_argument("--chain", type=common.integer(2, MAX_CHAIN), default=2,
                   help=f"Tables 7-8: FAR batches concatenated per repetition, at most {MAX_CHAIN:,} (the paper: 1001 "
                        "in one chain; 2: one concatenation per repetition)")
    p.add_argument("--candidates", action="store_true",
                   help="run Tables 6-9 (those chosen) under every candidate setting and print how far each is "
                        "from the paper")
    ex.add_arguments(p)
    common.add_markdown(p)
    common.add_quiet(p)
    return p


def _setting_arg(text: str) -> Setting:
    try:
        return Setting.parse(text)
    except (ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    executor = ex.from_args(p, a)
    gen = Generator(a.gpu, a.p_sup)
    methods = tuple(a.methods) if a.methods else registry()
    tables = set(a.tables)
    far_opt = FarOpt(a.far_opt_reps, a.far_opt_time_limit, tuple(dict.fromkeys(a.far_opt_n)), a.workers) \
        if a.far_opt_reps else None
    plain = dict(reps=a.reps, seed=a.seed, gen=gen, setting=a.setting)
    plan: list[tuple[str, list[tuple]]] = []
    if a.candidates:
        return _main_candidates(p, a, executor, gen, tables)
    if 4 in tables:
        plan.append(("4", tasks4(a.reps, a.seed, a.opt_reps, a.time_limit, a.backend, gen, methods, a.opt_n,
                                 a.workers, far_opt)))
    if 5 in tables:
        plan.append(("5", tasks5(a.reps, a.seed, gen, methods)))
    if 6 in tables:
        plan.append(("6", [("whole", "6", plain)]))
    if 7 in tables or 8 in tables:
        plan.append(("78", [("whole", "78", {**plain, "chain": a.chain})]))
    if 9 in tables:
        plan.append(("9", [("whole", "9", plain)]))
    t0 = time.perf_counter()
    flat = [t for _, tasks in plan for t in tasks]
    try:
        results = executor.map(run_task, flat, quiet=a.quiet, desc="paper", unit="task", label=_label)
    except ex.ExecutorError as exc:
        p.error(str(exc))
    got: dict[str, tuple[list, list]] = {}
    k = 0
    for key, tasks in plan:
        got[key] = (tasks, results[k:k + len(tasks)])
        k += len(tasks)
    md = a.markdown
    blocks = []
    if "4" in got:
        blocks.append(format_table4(assemble4(*got["4"]), a.reps, a.time_limit, md, a.backend, a.opt_n, far_opt))
    if "5" in got:
        blocks.append(format_table5(assemble5(*got["5"]), a.reps, md))
    st = a.setting
    for key in ("6", "78", "9"):  # a table computed in one piece that failed is one line in its place
        if key in got and isinstance(got[key][1][0], ex.Failed):
            blocks.append(f"Table{'s 7-8' if key == '78' else ' ' + key}: failed: {got.pop(key)[1][0].error}")
    if "6" in got:
        blocks.append(format_table6(got["6"][1][0], a.reps, md, st))
    if "78" in got:
        t7, t8 = got["78"][1][0]
        if 7 in tables:
            blocks.append(format_table7(t7, a.reps, md, st, a.chain))
        if 8 in tables:
            blocks.append(format_table8(t8, a.reps, md, st, a.chain))
    if "9" in got:
        blocks.append(format_table9(got["9"][1][0], a.reps, md, st))
    if a.gpu != "A100":  # the titles name the paper's GPU; say which one ours ran on
        blocks = [b.replace(", A100,", f", {a.gpu} (the paper's figures: A100),", 1) for b in blocks]
        if md:
            blocks = [f"({a.gpu}; the paper's figures: A100)\n{b}" for b in blocks]
    print("\n\n".join(blocks))
    if not md:
        print(f"\n({a.gpu}, p_sup {a.p_sup}, seed {a.seed}; {time.perf_counter() - t0:.1f} s)")
    return 0


def _main_candidates(p: common.Parser, a: Any, executor: Executor, gen: Generator, tables: set[int]) -> int:
    """``--candidates``: every candidate setting of the chosen tables among 6-9, then the distance summary."""
    keys = [k for k, ts in (("6", {6}), ("78", {7, 8}), ("9", {9})) if ts & tables]
    extra = {"78": {"chain": a.chain}}
    tasks = [("whole", k, dict(reps=a.reps, seed=a.seed, gen=gen, setting=st, **extra.get(k, {})))
             for k in keys for st in CANDIDATES[k]]
    try:
        results = executor.map(run_task, tasks, quiet=a.quiet, desc="candidates", unit="table", label=_label)
    except ex.ExecutorError as exc:
        p.error(str(exc))
    found: dict[str, list[tuple[Setting, Any]]] = {}
    for (_, k, kw), res in zip(tasks, results):
        if isinstance(res, ex.Failed):  # left out of the summary; the command lists it
            continue
        if k == "78":
            if 7 in tables:
                found.setdefault("7", []).append((kw["setting"], res[0]))
            if 8 in tables:
                found.setdefault("8", []).append((kw["setting"], res[1]))
        else:
            found.setdefault(k, []).append((kw["setting"], res))
    print(format_candidates(found, a.reps, a.markdown))
    return 0


def _label(task: tuple) -> str:
    """A failed task's name: its kind, scaling and sizes (the generator and settings elided)."""
    if task[0] == "whole":
        return f"Table{'s 7-8' if task[1] == '78' else ' ' + task[1]}"
    return " ".join(str(x) for x in task[:1] + task[2:5])


if __name__ == "__main__":
    common.run_cli(main)
