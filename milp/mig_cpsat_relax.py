"""The assignment relaxation of the CP-SAT session model: its solves and its bound.

Part of the CP-SAT backend (:mod:`milp.mig_cpsat`). With reconfiguration
and all releases 0, :func:`milp.mig_cpsat.solve_cpsat` first solves the
laminar assignment relaxation of the session model
(:func:`milp.mig_cpsat_model.build` with ``relaxation=True``;
``docs/models/mig_cpsat.md``, "Assignment relaxation"): which task on which
placement, with the slice loads, the sessions' operations and the create
channel relaxed to rows. :func:`solve_relaxation` builds and solves it
(full-search workers first, :func:`master_parameters`, then CP-SAT's
defaults); its model is the master of the Benders loop
(:mod:`milp.mig_cpsat_benders`), which re-solves it with
:func:`solve_master`. :func:`relaxation_bound` is the bound alone, for users.

Examples
--------
>>> master_parameters(2)["subsolvers"]
['lb_tree_search', 'no_lp']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

from bounds import mig as mig_bounds
from heuristics.mig_plans import best_plan
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances import options as opt
from instances.options import Deadline, known_options
from milp import cpsat
from milp.mig_cpsat_model import Model, build
from milp.mig_cpsat_scale import Scale, choose_resolution

__all__ = ["relaxation_bound", "solve_relaxation", "solve_master", "master_parameters", "MasterRun",
           "MASTER_SUBSOLVERS", "PROOF_SHARE"]

ProblemLike = Union[Problem, Workload]


@dataclass
class MasterRun:
    """One solve of the assignment relaxation: its proven bound (model units), status and best assignment."""

    units: int
    status: str
    assignment: dict[str, Placement] | None = None
    literals: dict = field(default_factory=dict)  # task name -> its x literal in that assignment
    objective: int | None = None
    stats: dict = field(default_factory=dict)  # the solve's wall time


#: Full-search subsolvers of the assignment relaxation, in the order workers get them: its bound
#: matters, its incumbent little (the tree plans and Benders subproblems give the schedules), so
#: ``lb_tree_search`` (a best-first search on the objective's lower bound) raises the bound and
#: ``no_lp`` (pure clause learning) closes it.
MASTER_SUBSOLVERS = ("lb_tree_search", "no_lp", "max_lp", "default_lp", "quick_restart", "quick_restart_no_lp",
                     "pseudo_costs", "reduced_costs", "core")


@known_options
def master_parameters(workers: int | None) -> dict[str, Any]:
    """CP-SAT parameters of the relaxation (Benders master) solves: every worker on a full search.

    With ``w >= 2`` workers the first ``w`` of :data:`MASTER_SUBSOLVERS` run
    as full-problem subsolvers (CP-SAT's default keeps one worker for LNS);
    the worker count the caller gave is kept; one worker, or more workers
    than subsolvers listed, get CP-SAT's own portfolio (``{}``). Why these
    subsolvers: ``docs/models/mig_cpsat.md``, "Subsolvers".

    Examples
    --------
    >>> master_parameters(2)["subsolvers"]
    ['lb_tree_search', 'no_lp']
    >>> master_parameters(1)
    {}
    """
    w = opt.workers(workers) or cpsat.DEFAULT_WORKERS
    if w < 2 or w > len(MASTER_SUBSOLVERS):
        return {}  # one worker has no choice; many get CP-SAT's own portfolio
    names = list(MASTER_SUBSOLVERS[:w])
    return {"num_full_subsolvers": len(names), "subsolvers": names}


#: Share of the relaxation's budget spent by the full-search workers before CP-SAT's defaults take
#: over (:func:`solve_relaxation`).
PROOF_SHARE = 5 / 8


@known_options
def solve_master(built: Model, problem: ProblemLike, lb_units: int, limit: float, workers, seed,
                  proof: bool = True) -> MasterRun:
    """Solve the assignment relaxation (with any Benders cuts added so far) for at most ``limit`` s.

    ``proof``: every worker on a full search (:func:`master_parameters`);
    otherwise CP-SAT's defaults, whose LNS workers find better assignments.
    """
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    # no hint: the incumbent's assignment as a hint gave worse tree plans (docs/models/mig_cpsat.md)
    run = cpsat.run(built.model, time_limit=Deadline(limit), workers=workers, seed=seed,
                    parameters=master_parameters(workers) if proof else None)
    bound = run.bound
    units = lb_units if bound is None else max(lb_units, int(math.floor(bound + 1e-9)))
    if run.status == "INFEASIBLE":
        # every assignment's (cut) value exceeds the horizon: the horizon itself is a bound
        return MasterRun(max(lb_units, built.horizon + 1), run.status)
    out = MasterRun(units, run.status, objective=run.objective)
    out.stats = {k: v for k, v in run.stats.items() if k == "wall_time"}
    if run.has_solution:
        gpu = problem.gpu
        chosen = [(i, key, lit) for (i, key), lit in built.x.items() if run.boolean(lit)]
        out.assignment = {problem.tasks[i].name: gpu.placement(*key) for i, key, _ in chosen}
        out.literals = {problem.tasks[i].name: lit for i, _, lit in chosen}
    return out


@known_options
def solve_relaxation(problem: ProblemLike, scale, lb_units, horizon, deadline, relax_time, workers, seed, symmetry,
                      info, share: float = 1 / 3, converge: bool = False) -> tuple[Model, MasterRun]:
    """Build and solve the assignment relaxation; return the model (the Benders master) and its run."""
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    built = build(problem, scale, lb_units, horizon, laminar=False, symmetry=symmetry, redundant=True,
                   dominance=False, relaxation=True, converge=converge)
    remaining = deadline.remaining()
    limit = relax_time if remaining is None else min(relax_time, remaining * share)
    # masters that are proven at all are proven early by the full-search workers; when the first
    # part of the budget ends without a proof, the rest goes to CP-SAT's defaults, whose LNS finds
    # the better assignments (and hence schedules) on such large instances
    started = deadline.elapsed()
    run = solve_master(built, problem, lb_units, limit * PROOF_SHARE, workers, seed)
    info["relaxation"] = {"status": run.status, "bound": scale.bound(run.units), **run.stats}
    rest = limit - (deadline.elapsed() - started)
    if run.status in ("OPTIMAL", "INFEASIBLE") or not math.isfinite(limit) or rest <= 0:
        return built, run
    built.model.add(built.makespan >= run.units)  # proven for this model: a valid row
    wide = solve_master(built, problem, run.units, rest, workers, seed, proof=False)
    best = wide if wide.assignment is not None and (run.objective is None or wide.objective <= run.objective) \
        else run
    status = wide.status if wide.status in ("OPTIMAL", "INFEASIBLE") else best.status
    out = MasterRun(max(run.units, wide.units), status, best.assignment, best.literals, best.objective,
                     {"wall_time": run.stats.get("wall_time", 0.0) + wide.stats.get("wall_time", 0.0)})
    info["relaxation"] = {"status": out.status, "bound": scale.bound(out.units),
                          "proof_phase_bound": scale.bound(run.units), **out.stats}
    return built, out


@known_options
def relaxation_bound(problem: Problem, time_limit: float = 10.0, workers: int | None = None,
                     seed: int = 0, converge: bool = False) -> float:
    """The assignment relaxation's proven lower bound (seconds), valid for the float data.

    The relaxation of the session model that :func:`solve_cpsat` solves first
    (``docs/models/mig_cpsat.md``, "Assignment relaxation"): slice loads of
    the tasks plus the create and destroy of every used placement covering
    the slice (a session that stays to the end needs no destroy), all after
    the first create on the slice, with the creates one at a time on the
    channel. Single batch with reconfiguration, all releases 0; at least
    :func:`bounds.mig.lower_bound`.

    ``converge=True`` adds the convergence rows (a session that stays to the
    end waits for the destroys before it, one at a time): the relaxation the
    HiGHS backend solves. Stronger, but CP-SAT proves it more slowly, so
    :func:`milp.mig_cpsat.solve_cpsat` leaves them out and closes such gaps
    with its Benders loop.

    Examples
    --------
    >>> from instances import mig
    >>> from bounds import mig as mig_bounds
    >>> p = mig.generate(n=6, gpu="A100", seed=1)
    >>> relaxation_bound(p, time_limit=10) >= mig_bounds.lower_bound(p)
    True
    """
    time_limit = opt.time_limit(time_limit)
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    if not problem.gpu.reconfigurable or any(r != 0 for r in problem.releases().values()) or not problem.n:
        raise ValueError("the assignment relaxation is for one batch with reconfiguration and no release times")
    deadline = Deadline(time_limit)
    lb = mig_bounds.lower_bound(problem)
    upper = best_plan(problem, deadline=deadline).makespan
    R = choose_resolution(problem, lb, upper)
    scale = Scale.of(problem, R)
    horizon = math.floor(upper * R + scale.excess) + 1
    _, run = solve_relaxation(problem, scale, scale.units(lb), horizon, deadline, math.inf, workers, seed,
                               True, {}, share=1.0, converge=converge)
    return max(lb, scale.bound(run.units))
