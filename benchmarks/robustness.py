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

Examples
--------
::

    python -m benchmarks.robustness
    python -m benchmarks.robustness --markdown --out robustness.json
    python -m benchmarks.robustness --gpus A100 --n 10 --instances 10 --draws 5 --noise 0.05,0.1
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from benchmarks import common
from heuristics.mig import METHODS
from instances import mig
from instances.mig_execution import ORDERS, Noise, simulate
import milp

__all__ = ["Config", "METHOD_NAMES", "cell", "run", "summarise", "format_table", "main"]

#: The plans compared, in table order (OPT is the exact solver's schedule).
METHOD_NAMES = ("FAR", "MIG-search", "OPT")
#: Most tasks per instance: the exact solver must prove optima of realised problems in seconds.
MAX_N = 14


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


def run(cfg: Config, quiet: bool = True) -> list[dict[str, Any]]:
    """Every instance's :func:`cell`, in (GPU, instance) order, in this process (the quick sweep needs no more)."""
    tasks = [(cfg, gpu, i) for gpu in cfg.gpus for i in range(cfg.instances)]
    return [cell(t) for t in common.progress(tasks, desc="instances", quiet=quiet)]


def summarise(cfg: Config, cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (GPU, timing error, plan) with the ratios of the table, per channel order."""
    rows = []
    for gpu in cfg.gpus:
        mine = [c for c in cells if c["gpu"] == gpu]
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
    """The table: one block per GPU, with a caption naming the sweep and the proven optima."""
    out = []
    for gpu in cfg.gpus:
        mine = [c for c in cells if c["gpu"] == gpu]
        solves = [c["proven"] for c in mine] + [r["proven"] for c in mine for r in c["runs"]]
        out.append(f"{gpu}: {cfg.instances} instances of n = {cfg.n} ({cfg.workload}, {cfg.times}), {cfg.draws} "
                   f"draws per timing error (uniform on task and create/destroy times); optima proven "
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
    p.add_argument("--out", type=common.output_file, default=None,
                   help="also write every instance's figures as JSON here (default: not written)")
    common.add_markdown(p)
    common.add_quiet(p)
    a = p.parse_args(argv)
    cfg = Config(tuple(a.gpus), a.n, a.instances, tuple(a.noise), a.draws, a.time_limit, a.seed)
    cells = run(cfg, quiet=a.quiet)
    rows = summarise(cfg, cells)
    print(format_table(cfg, cells, rows, markdown=a.markdown))
    if a.out:
        with common.writing(p, "--out"):
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(json.dumps({"config": asdict(cfg), "instances": list(cells), "rows": rows},
                                        indent=1) + "\n")
    return 0


def _levels(text: str) -> list[float]:
    one = common.number(0.0, 0.99, why="a factor 1 - x must stay positive")
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected a comma list such as 0.1,0.2, got {text!r}")
    return [one(x) for x in parts]


if __name__ == "__main__":
    common.run_cli(main)
