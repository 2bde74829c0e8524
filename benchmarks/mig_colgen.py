"""Root gap of the column-generation bound of MIG scheduling with reconfiguration.

For each n and instance (A100, ``reconfiguration=True``; the instances cycle
through the twelve preset families of the FAR paper's Sec. 6.3, three
workloads x two time presets x p_sup 0 and 0.5, seeded ``--first-seed``
onwards): the closed-form bound (``bounds.mig.lower_bound``), the CP-SAT
backend's run of ``--cpsat-time`` seconds (its assignment relaxation's bound,
its final bound and its best schedule), and the column-generation bound of
``bounds.mig_colgen`` run for ``--colgen-time`` seconds between the
closed-form bound and that schedule. Gaps are to the best schedule. The
column-generation figures: columns, pricing problems (and how many CP-SAT
left to HiGHS), master LPs, and the seconds in pricing and in the master.

Usage::

    python -m benchmarks.mig_colgen --n 20 35 --instances 4 --first-seed 9100 --markdown
"""

from __future__ import annotations

import time
from typing import Sequence

from benchmarks import common
from bounds import mig as mig_bounds
from instances import mig
from milp import solve_optimal

DEFAULT_RUN = "about 2 minutes (the measured n = 20 and 35 runs: --n 20 --instances 4 --colgen-time 420, about 30 minutes each)"
#: The preset families, in the order the instances take them.
FAMILIES = tuple((w, t, ps) for ps in (0.0, 0.5) for t in ("WideTimes", "NarrowTimes")
                 for w in ("PoorScaling", "MixedScaling", "GoodScaling"))


def measure(n: int, index: int, seed: int, cpsat_time: float, colgen_time: float) -> dict:
    """One instance's bounds, gaps and column-generation counts."""
    workload, times, p_sup = FAMILIES[index % len(FAMILIES)]
    p = mig.generate(n=n, gpu="A100", workload=workload, times=times, seed=seed, p_sup=p_sup)
    basic = mig_bounds.lower_bound(p)
    t0 = time.perf_counter()
    res = solve_optimal(p, reconfiguration=True, time_limit=cpsat_time, workers=2)
    cp_wall = time.perf_counter() - t0
    best = res.objective
    relax = res.info.get("relaxation", {}).get("bound")
    rep = mig_bounds.colgen_bound(p, time_limit=colgen_time, lower=basic, upper=best)

    def gap(b):
        return None if b is None else 100 * (best - b) / best

    return {"n": n, "family": f"{workload[:-7]}/{times[:-5]}/{p_sup:g}", "seed": seed, "best": best,
            "basic": gap(basic), "relax": gap(relax), "cpsat": gap(res.lower_bound), "cp_s": cp_wall,
            "colgen": gap(rep.bound), "bracket": gap(rep.feasible), "converged": rep.converged,
            "columns": rep.columns, "pricing": rep.pricing_calls, "fallbacks": rep.fallbacks,
            "lps": rep.lp_solves, "s": rep.seconds["total"], "price_s": rep.seconds["pricing"],
            "lp_s": rep.seconds["lp"]}


def main(argv: Sequence[str] | None = None) -> int:
    p = common.Parser(prog="python -m benchmarks.mig_colgen", description=common.description(__doc__, DEFAULT_RUN))
    p.add_argument("--n", type=common.integer(1, 200), nargs="+", default=[12], help="task counts (default: 12)")
    p.add_argument("--instances", type=common.count, default=2, help="instances per n (default: 2)")
    p.add_argument("--first-seed", type=common.seed, default=9100, help="seed of the first instance (default: 9100)")
    p.add_argument("--cpsat-time", type=common.seconds, default=20.0,
                   help="seconds of the CP-SAT backend per instance (default: 20)")
    p.add_argument("--colgen-time", type=common.seconds, default=60.0,
                   help="seconds of the column-generation bound per instance (default: 60)")
    common.add_markdown(p)
    common.add_quiet(p)
    a = p.parse_args(argv)
    rows = []
    jobs = [(n, k) for n in a.n for k in range(a.instances)]
    for n, k in common.progress(jobs, desc="instance", quiet=a.quiet):
        rows.append(measure(n, k, a.first_seed + k, a.cpsat_time, a.colgen_time))
    header = ["n", "family", "seed", "best", "gap basic %", "gap relax %", "gap CP-SAT %", "gap colgen %",
              "LP below %", "conv", "columns", "pricing (HiGHS)", "LPs", "colgen s", "pricing s", "LP s"]
    body = [[r["n"], r["family"], r["seed"], common.fmt(r["best"], ".4f"), common.fmt(r["basic"], ".3f"),
             common.fmt(r["relax"], ".3f"), common.fmt(r["cpsat"], ".3f"), common.fmt(r["colgen"], ".3f"),
             common.fmt(r["bracket"], ".3f"), "yes" if r["converged"] else "no", r["columns"],
             f"{r['pricing']} ({r['fallbacks']})", r["lps"], common.fmt(r["s"], ".1f"),
             common.fmt(r["price_s"], ".1f"), common.fmt(r["lp_s"], ".2f")] for r in rows]
    if a.markdown:
        print(common.markdown_table(header, body))
    else:
        for line in body:
            print("  ".join(str(x) for x in line))
    return 0


if __name__ == "__main__":
    common.run_cli(main)
