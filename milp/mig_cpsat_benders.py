"""The Benders loop of the CP-SAT backend: closing the gap the assignment relaxation leaves.

Part of the CP-SAT backend (:mod:`milp.mig_cpsat`): when the assignment
relaxation (:mod:`milp.mig_cpsat_relax`) is proven but no schedule meets its
bound, :func:`benders_loop` adds logic-based Benders cuts to it (the master) and
solves it again; each cut is strengthened by :func:`deletion_filter`. The
subproblem is the session model with the assignment fixed, solved by the
``solve`` the caller passes (:func:`milp.mig_cpsat.solve_cpsat` with
``fix_assignment=True``). ``docs/models/mig_cpsat.md``, "Benders loop",
gives the argument why the bound stays valid.

Examples
--------
>>> from instances import mig
>>> from milp import mig as milp_mig
>>> p = mig.generate(n=6, gpu="A30", seed=35)
>>> res = milp_mig.solve(p, backend="cpsat", time_limit=30, workers=2)
>>> str(res.status), res.info["benders"][0]["master_bound"] < res.objective
('OPTIMAL', True)
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Union

from heuristics.mig_plans import tree_plans
from instances import mig
from instances.gpus import Placement
from instances.mig_problem import Problem, Workload
from instances import options as opt
from instances.options import Deadline, known_options
from milp import cpsat
from milp.mig_cpsat_model import Model, checked_plan
from milp.mig_cpsat_relax import MasterRun, solve_master
from milp.mig_cpsat_scale import Scale
from milp.result import TOLERANCE, Result

__all__ = ["benders_loop", "deletion_filter"]

ProblemLike = Union[Problem, Workload]
#: The subproblem solver: :func:`milp.mig_cpsat.solve_cpsat`'s signature.
Solver = Callable[..., Result]


@known_options
def deletion_filter(problem: Problem, assignment: dict[str, Placement], target: float, deadline: Deadline,
                    workers: int | None, seed: int, *, solve: Solver) -> set[str]:
    """Tasks whose placements in ``assignment`` alone force a makespan of at least ``target``.

    The deletion filter of Benders cut strengthening (Hooker, "Planning and
    scheduling by logic-based Benders decomposition", Operations Research 55,
    2007): a task is dropped from the cut when the session model of the
    remaining tasks, with their placements fixed, still proves ``target``.
    Valid because removing tasks from a schedule leaves a schedule of the
    rest that is no longer (empty sessions are deleted), so every assignment
    that places the kept tasks as ``assignment`` does has makespan >= ``target``.
    Tasks on the least loaded slices are tried first; at most a quarter of
    the time left is spent.
    """
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    gpu = problem.gpu
    load = defaultdict(float)
    for t in problem.tasks:
        for k in assignment[t.name].slices:
            load[k] += t.times[assignment[t.name].size]
    order = sorted(problem.tasks, key=lambda t: (max(load[k] for k in assignment[t.name].slices), t.name))
    kept = {t.name for t in problem.tasks}
    budget = deadline.share(1 / 4)
    for t in order:
        if budget.expired():
            break
        rest = [u for u in problem.tasks if u.name in kept and u.name != t.name]
        if not rest:
            break
        sub = Problem(gpu, rest)
        mine = {u.name: assignment[u.name] for u in rest}
        # pure orders only: the mixed ones make the filter several times slower
        # (docs/models/mig_cpsat.md, "Design decisions")
        tree = checked_plan(sub, tree_plans(sub, mine, budget, mixed=False))
        if tree.makespan < target * (1 - TOLERANCE):
            continue  # the rest already has a shorter schedule
        res = solve(sub, deadline=Deadline(budget.remaining()), incumbent=tree, hint=tree, workers=workers,
                          relax=False, fix_assignment=True, seed=seed)
        if res.lower_bound >= target:
            kept.discard(t.name)
    return kept


@known_options
def benders_loop(problem: ProblemLike, master: Model, run: MasterRun, scale: Scale, lb: float,
                 best: mig.Schedule, deadline: Deadline, workers: int | None, seed: int, info: dict, *,
                 solve: Solver) -> tuple[float, mig.Schedule]:
    """Close the gap left by the assignment relaxation by logic-based Benders decomposition.

    Hooker & Ottosson, "Logic-based Benders decomposition", Math. Programming
    96 (2003), with the relaxation as master (which task on which placement)
    and the session model with that assignment fixed as subproblem (its exact
    optimum: sessions, operations, channel). While the master is proven
    optimal with assignment A whose best schedule is longer than the master's
    value, the cut "assignment A => makespan >= the subproblem's bound"
    is added and the master solved again. Every schedule with assignment A is
    at least that long, so the master stays a relaxation of the MIG problem
    and its bound stays valid; when the master proves a value that a
    subproblem schedule reaches, that schedule is optimal (``docs/models/mig_cpsat.md``,
    "Benders loop"). Returns the new bound (seconds) and the best schedule.
    """
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    steps = info.setdefault("benders", [])
    # per assignment met before: the subproblem's bound and best schedule, to resume from
    seen: dict[frozenset, tuple[float, mig.Schedule]] = {}
    while run.status == "OPTIMAL" and run.assignment is not None and not deadline.expired():
        if best.makespan - lb <= TOLERANCE * best.makespan:
            break
        key = frozenset((nm, p.key()) for nm, p in run.assignment.items())
        if key in seen:
            floor, tree = seen[key]
        else:
            floor, tree = lb, checked_plan(problem, tree_plans(problem, run.assignment, deadline))
        remaining = deadline.remaining()
        # a first subproblem gets a short budget: most prove in seconds, and one that does not may
        # still cut the master with its bound; an assignment the master returns again (its cut was
        # too weak) resumes from its bound and schedule with half the time left
        if remaining is None:
            share = None
        elif key in seen:
            share = remaining / 2
        else:
            share = min(remaining / 2, max(3.0, remaining / 8))
        t0 = deadline.elapsed()
        fixed = solve(problem, deadline=Deadline(share), incumbent=tree, hint=tree, workers=workers,
                            lower_bound=max(lb, floor), relax=False, fix_assignment=True, seed=seed)
        t1 = deadline.elapsed()
        seen[key] = (fixed.lower_bound, fixed.schedule)
        if fixed.schedule.makespan < best.makespan:
            best = fixed.schedule
        cut = scale.units(fixed.lower_bound)
        steps.append({"master": run.status, "master_bound": scale.bound(run.units), "fixed": str(fixed.status),
                      "fixed_objective": fixed.objective, "fixed_bound": fixed.lower_bound,
                      "fixed_time": round(t1 - t0, 3)})
        if run.objective is None or cut <= run.objective or best.makespan - lb <= TOLERANCE * best.makespan:
            break  # a cut that would not move the master (an unproven subproblem) ends the loop
        kept = deletion_filter(problem, run.assignment, fixed.lower_bound, deadline, workers, seed, solve=solve)
        steps[-1].update(cut_tasks=len(kept), filter_time=round(deadline.elapsed() - t1, 3))
        master.model.add(master.makespan >= cut).only_enforce_if([run.literals[nm] for nm in sorted(kept)])
        cpsat.set_hints(master.model, [(lit, 1) for lit in run.literals.values()])
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            break
        run = solve_master(master, problem, scale.units(lb), math.inf if remaining is None else remaining,
                            workers, seed)
        lb = max(lb, min(best.makespan, scale.bound(run.units)))
        steps[-1].update(next_master=run.status, master_time=run.stats.get("wall_time"))
    return lb, best
