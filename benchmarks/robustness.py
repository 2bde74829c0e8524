"""``python -m benchmarks.robustness``: how FAR, MIG-search and optimal plans hold up under timing error
(the defaults take about 20 s of CPU time, a minute of wall time on two busy cores).

A plan is made with the profiled times, but a task's real run time differs
from its profile (the FAR paper, Villarrubia, Costero, Igual, Olcoz,
"Leveraging Multi-Instance GPUs through moldable task scheduling", Sec. 6.2,
Table 3, measures up to about 2 % on an A30). For ``--instances`` generated
batches of ``--n`` tasks per GPU (the paper's generator, Sec. 6.3), three
plans are made: FAR, MIG-search and OPT (``milp.solve_optimal``, CP-SAT,
``--time-limit`` per solve). Each is then run by the event-driven executor of
``instances.mig_execution`` (operations wait for completions, never for
planned times) on durations drawn around the planned ones: every task time
and every create/destroy time scaled by a factor uniform in ``[1 - x, 1 + x]``
for each timing error x of ``--noise`` (``--draws`` draws each). The realised
makespan is compared with the optimum of the realised times (the same exact
solver on the problem with the drawn durations: what a clairvoyant planner
would reach). Both channel orders of the executor are run: ``plan`` (creates
and destroys in the plan's order) and ``ready`` (in the order they become
possible).

Columns: ``plan/OPT`` the planned makespan over the planned optimum;
``real/OPT* mean, max`` the realised makespan over the realised optimum;
``real/plan mean`` the realised over the planned makespan; each cell gives
the ``plan`` order, then the ``ready`` order. A ratio to an optimum
that the time limit left unproven uses the best makespan found (so it can
only understate the ratio); the caption counts the proven optima.

The defaults: A30 and A100, n = 8, 5 instances, 4 draws of 10, 20 and 30 %
(130 exact solves and 720 simulated runs).

Every instance (its plans, draws and exact solves) is one independent task of
:mod:`benchmarks.executor` (``--executor``, ``--jobs``). With ``--out DIR``
each is recorded in ``DIR/records.jsonl`` as it finishes and the same
command run again resumes from them; at the end every instance's figures
are written to ``DIR/robustness.json``. An instance that fails is left out
of its GPU's table, counted in the caption and listed on stderr (exit
status 1).

Examples
--------
::

    python -m benchmarks.robustness
    python -m benchmarks.robustness --markdown --out results/robustness   # the same line again resumes
    python -m benchmarks.robustness --gpus A100 --n 10 --instances 10 --draws 5 --noise 0.05,0.1 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmarks import common
from benchmarks import executor as ex
from heuristics.mig import METHODS
from instances import mig
from instances.mig_execution import ORDERS, Noise, simulate
import milp

__all__ = ["Config", "METHOD_NAMES", "FIGURES", "cell", "label", "run", "summarise", "format_table", "figures",
           "main"]

#: The plans compared, in table order (OPT is the exact solver's schedule).
METHOD_NAMES = ("FAR", "MIG-search", "OPT")
#: Most tasks per instance: the exact solver must prove optima of realised problems in seconds.
MAX_N = 14
#: The file of every instance's figures in ``--out``, beside the records.
FIGURES = "robustness.json"


@dataclass(frozen=True)
class Config:
    """One sweep: instances per GPU, timing errors, draws, the exact solver's limit."""

    gpus: tuple[str, ...] = ("A30", "A100")
    n: int = 8
    instances: int = 5
    noise: tuple[float, ...] = (0.1, 0.2, 0.3)
    draws: int = 4
    time_limit: float = 10.0
    seed: int = 0
    workload: str = "MixedScaling"
    times: str = "WideTimes"


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint32)[0])


def _optimum(problem: Any, time_limit: float) -> tuple[float, bool, Any]:
    r = milp.solve_optimal(problem, time_limit=time_limit, workers=1)
    if r.schedule is None:
        raise RuntimeError(f"the exact solver found no schedule ({r.status})")
    return r.objective, r.status == "OPTIMAL", r.schedule


def cell(task: tuple[Config, str, int]) -> dict[str, Any]:
    """One instance: its three plans, then per timing error and draw the realised makespans and optimum.

    Examples
    --------
    >>> c = cell((Config(n=4, noise=(0.2,), draws=1, time_limit=5.0), "A30", 0))
    >>> sorted(c["planned"]), len(c["runs"]), all(r["real"]["FAR plan"] >= r["opt"] * (1 - 1e-6) for r in c["runs"])
    (['FAR', 'MIG-search', 'OPT'], 1, True)
    """
    cfg, gpu, index = task
    problem = mig.generate(cfg.n, gpu, cfg.workload, cfg.times, _seed(cfg.seed, index))
    opt, proven, opt_schedule = _optimum(problem, cfg.time_limit)
    plans = {"FAR": METHODS["FAR"](problem), "MIG-search": METHODS["MIG-search"](problem), "OPT": opt_schedule}
    out: dict[str, Any] = {"gpu": gpu, "index": index, "opt": opt, "proven": proven,
                           "planned": {m: s.makespan for m, s in plans.items()}, "runs": []}
    for li, x in enumerate(cfg.noise):
        for d in range(cfg.draws):
            noise = Noise(tasks=x, reconfiguration=x, seed=_seed(cfg.seed, index, li, d))
            real: dict[str, float] = {}
            realised_problem = None
            for m, plan in plans.items():
                for order in ORDERS:
                    run_ = simulate(problem, plan, noise, order=order)
                    if run_.violations:  # the executor's promise; never expected
                        raise RuntimeError(f"{m} ({order}) realised schedule breaks a rule: {run_.violations[0]}")
                    real[f"{m} {order}"] = run_.makespan
                    realised_problem = run_.problem
            ropt, rproven, _ = _optimum(realised_problem, cfg.time_limit)
            out["runs"].append({"noise": x, "draw": d, "opt": ropt, "proven": rproven, "real": real})
    return out


def label(task: tuple[Config, str, int]) -> str:
    """How a task of :func:`run` is named in the records and in the list of failures."""
    _, gpu, index = task
    return f"{gpu} instance {index}"


def run(cfg: Config, executor: ex.Executor | None = None, quiet: bool = True) -> list[dict[str, Any]]:
    """Every instance's :func:`cell`, in (GPU, instance) order, one task each on ``executor``.

    An instance that fails in a command's sweep is left out (the command
    lists it and exits 1); :func:`format_table` counts it from ``cfg``.
    """
    tasks = [(cfg, gpu, i) for gpu in cfg.gpus for i in range(cfg.instances)]
    return ex.succeeded((executor or ex.Executor()).map(cell, tasks, quiet=quiet, desc="instances",
                                                        unit="instance", label=label))


def summarise(cfg: Config, cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (GPU, timing error, plan) with the ratios of the table, per channel order."""
    rows = []
    for gpu in cfg.gpus:
        mine = [c for c in cells if c["gpu"] == gpu]
        if not mine:  # every instance of this GPU failed
            continue
        for x in cfg.noise:
            runs = [(c, r) for c in mine for r in c["runs"] if r["noise"] == x]
            for m in METHOD_NAMES:
                row: dict[str, Any] = {"gpu": gpu, "noise": x, "method": m, "runs": len(runs),
                                       "plan_opt": statistics.fmean(c["planned"][m] / c["opt"] for c in mine)}
                for order in ORDERS:
                    real = [r["real"][f"{m} {order}"] / r["opt"] for _, r in runs]
                    growth = [r["real"][f"{m} {order}"] / c["planned"][m] for c, r in runs]
                    row[order] = {"real_opt_mean": statistics.fmean(real), "real_opt_max": max(real),
                                  "real_plan": statistics.fmean(growth)}
                rows.append(row)
    return rows


def format_table(cfg: Config, cells: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]],
                 markdown: bool = False) -> str:
    """The table: one block per GPU, its caption naming the sweep, the failed instances and the proven optima."""
    out = []
    for gpu in cfg.gpus:
        mine = [c for c in cells if c["gpu"] == gpu]
        failed = cfg.instances - len(mine)
        left_out = f" ({failed} failed, left out)" if failed else ""
        if not mine:
            out += [f"{gpu}: {cfg.instances} instances of n = {cfg.n}: every one failed, no table", ""]
            continue
        solves = [c["proven"] for c in mine] + [r["proven"] for c in mine for r in c["runs"]]
        out.append(f"{gpu}: {cfg.instances} instances{left_out} of n = {cfg.n} ({cfg.workload}, {cfg.times}), "
                   f"{cfg.draws} draws per timing error (uniform on task and create/destroy times); optima proven "
                   f"{sum(solves)}/{len(solves)} (CP-SAT, {cfg.time_limit:g} s each); cells: channel order "
                   f"plan / ready")
        if markdown:
            out.append("")

        def both(r: dict[str, Any], key: str) -> str:
            return " / ".join(f"{r[o][key]:.3f}" for o in ORDERS)

        body = [[f"{r['noise']:.0%}", r["method"], f"{r['plan_opt']:.3f}", both(r, "real_opt_mean"),
                 both(r, "real_opt_max"), both(r, "real_plan")] for r in rows if r["gpu"] == gpu]
        out.append(common.markdown_table(["error", "plan", "plan/OPT", "real/OPT* mean", "real/OPT* max",
                                          "real/plan mean"], body))
        out.append("")
    return "\n".join(out).rstrip("\n")


def figures(cfg: Config, cells: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The content of :data:`FIGURES`: the sweep, every finished instance, the table's rows, the failed ones."""
    finished = {(c["gpu"], c["index"]) for c in cells}
    failed = [label((cfg, g, i)) for g in cfg.gpus for i in range(cfg.instances) if (g, i) not in finished]
    return {"config": asdict(cfg), "instances": list(cells), "rows": list(rows), "failed": failed}


#: How long the command takes with its defaults on a 2-core machine (``--help`` says it).
DEFAULT_RUN = "about 30 seconds"


def main(argv: Sequence[str] | None = None) -> int:
    p = common.Parser(prog="python -m benchmarks.robustness", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--gpus", type=common.comma_choices(("A30", "A100", "H100"), "GPU"), default=["A30", "A100"],
                   help="GPU models, a comma list")
    p.add_argument("--n", type=common.integer(1, MAX_N, "the realised optima must be proven in seconds"),
                   default=8, help=f"tasks per instance, at most {MAX_N}")
    p.add_argument("--instances", type=common.count, default=5, help="instances per GPU")
    p.add_argument("--noise", type=_levels, default=[0.1, 0.2, 0.3],
                   help="timing errors x, a comma list of numbers from 0 to below 1 (factors uniform in "
                        "[1 - x, 1 + x])")
    p.add_argument("--draws", type=common.count, default=4, help="draws of real durations per instance and error")
    p.add_argument("--time-limit", type=common.seconds, default=10.0,
                   help="seconds for each exact solve (planned and realised optima)")
    p.add_argument("--seed", type=common.seed, default=0, help="seed of the instances and draws")
    ex.add_arguments(p, out=False)
    p.add_argument("--out", type=_folder, default=None, metavar="DIR",
                   help=f"folder for records.jsonl (every finished instance as it finishes: the same command run "
                        f"again resumes from them) and {FIGURES} (every instance's figures, written at the end) "
                        f"(default: none, nothing is kept)")
    common.add_markdown(p)
    common.add_quiet(p)
    a = p.parse_args(argv)
    executor = ex.from_args(p, a)
    cfg = Config(tuple(a.gpus), a.n, a.instances, tuple(a.noise), a.draws, a.time_limit, a.seed)
    try:
        cells = run(cfg, executor, quiet=a.quiet)
    except ex.ExecutorError as exc:
        p.error(str(exc))
    rows = summarise(cfg, cells)
    print(format_table(cfg, cells, rows, markdown=a.markdown))
    if a.out:
        with common.writing(p, "--out"):
            path = a.out / FIGURES
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(figures(cfg, cells, rows), indent=1) + "\n")
            tmp.replace(path)
    return 0


def _folder(text: str) -> Path:
    # a JSON file name here would silently become a folder of that name
    if text.endswith(".json"):
        raise argparse.ArgumentTypeError(f"{text!r} looks like a file: --out is a folder, for records.jsonl and "
                                         f"{FIGURES}")
    return common.output_dir(text)


def _levels(text: str) -> list[float]:
    one = common.number(0.0, 0.99, why="a factor 1 - x must stay positive")
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected a comma list such as 0.1,0.2, got {text!r}")
    return [one(x) for x in parts]


if __name__ == "__main__":
    common.run_cli(main)
