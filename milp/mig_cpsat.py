"""CP-SAT backend of the exact MIG model (FAR paper, Sec. 2.2; rules 1-6 of :mod:`instances.mig_check`).

Call it through :func:`milp.mig.solve` (``backend="cpsat"``), which checks the
options, applies ``reconfiguration=False`` as ``problem.without_reconfiguration()``
and hands over a :class:`~instances.options.Deadline` and a checked incumbent.

Three models (:mod:`milp.mig_cpsat_model`): the *laminar assignment model*
(no reconfiguration, one release time: the makespan of an assignment is its
largest slice load), the *interval model* (no reconfiguration, release
times) and the *session model* (with reconfiguration: ordered session slots
per placement, create/destroy operations on one serialised channel), which
starts from the bound of an assignment relaxation
(:mod:`milp.mig_cpsat_relax`) and closes the gap it leaves by a Benders loop
(:mod:`milp.mig_cpsat_benders`). Symmetric subtrees of the GPU, dominated
placements and a slot bound reduce the search.

Times are integers (:mod:`milp.mig_cpsat_scale`): durations are rounded
*down* to units of ``1 / R`` seconds (at least one unit each), so the rounded
model is a relaxation whose bound, less the rounding excess, is valid for the
user's data; the resolution ``R`` is chosen from the data so that a rounded
optimum is also an optimum of the float problem within
:data:`milp.TOLERANCE`, and finer re-solves close what rounding leaves open.
Every solution is re-timed with the float durations
(:mod:`instances.mig_retime`) and checked before it is returned.

This module is the driver (:func:`solve_cpsat`: relaxation, Benders loop,
model solves, finer re-solves) and re-exports the names users import from
the backend (:class:`Scale`, :func:`session_slots`, :func:`relaxation_bound`,
...). The formulations and the proofs (slot bound, symmetry,
dominance, scaling and the validity of the bound) are in
``docs/models/mig_cpsat.md``.

Examples
--------
>>> from instances import mig
>>> from milp import mig as milp_mig
>>> p = mig.generate(n=5, gpu="A30", seed=2)
>>> res = milp_mig.solve(p, backend="cpsat", reconfiguration=False, time_limit=20, hint=False)
>>> str(res.status), res.gap <= 1e-6
('OPTIMAL', True)
"""

from __future__ import annotations

import math
from typing import Any, Union

from bounds import mig as mig_bounds
from heuristics.mig_plans import improve_assignment, tree_plans, tree_schedule
from instances import mig
from instances.errors import SolverError
from instances.mig_problem import Problem, Workload
from instances.mig_retime import canonical
from instances import options as opt
from instances.options import Deadline, known_options
from milp import cpsat
from milp.mig_cpsat_benders import benders_loop
from milp.mig_cpsat_model import OutOfTime, build, checked_plan, extract, hints, session_slots
from milp.mig_cpsat_relax import PROOF_SHARE, master_parameters, relaxation_bound, solve_relaxation
from milp.mig_cpsat_scale import MAX_UNITS, Scale, choose_resolution
from milp.result import TOLERANCE, Result

__all__ = ["solve_cpsat", "Scale", "choose_resolution", "session_slots", "tree_schedule", "tree_plans",
           "improve_assignment", "relaxation_bound", "MAX_UNITS"]

ProblemLike = Union[Problem, Workload]


def _phases(split: bool, deadline: Deadline, workers) -> list[tuple[float, dict[str, Any] | None]]:
    """The solves of one model: (share of the time left, CP-SAT parameters) each.

    With ``split`` (the laminar assignment model, a time limit, two or more
    workers) first :data:`PROOF_SHARE` of the time with every worker on a full
    search (:func:`master_parameters`), then CP-SAT's defaults, whose LNS
    workers find the better assignments, for the rest: the split the
    assignment relaxation uses (``docs/models/mig_cpsat.md``, "Design
    decisions").
    """
    proof = master_parameters(workers)
    if not split or not proof or deadline.remaining() is None:
        return [(1.0, None)]
    return [(PROOF_SHARE, proof), (1.0, None)]


@known_options
def solve_cpsat(problem: ProblemLike, *, deadline: Deadline, incumbent: mig.Schedule, hint: mig.Schedule | None,
                workers: int | None = None, lower_bound: float = 0.0, info: dict[str, Any] | None = None,
                resolution: float | None = None, symmetry: bool = True, redundant: bool = True,
                dominance: bool = True, model: str = "auto", relax: bool = True, relax_time: float = 40.0,
                relax_share: float = 2 / 3, benders: bool = True,
                fix_assignment: bool = False, log: bool = False, seed: int = 0) -> Result:
    """Solve a non-empty MIG problem or workload with CP-SAT (called by :func:`milp.mig.solve`).

    Parameters
    ----------
    problem
        The problem; it carries whether reconfiguration applies.
    deadline
        The whole call's budget (model building, relaxation and re-solves).
    incumbent
        A checked schedule (the re-timed hint, or the serial one): returned
        when the search finds nothing better.
    hint
        The schedule to hint to CP-SAT, or ``None``.
    lower_bound
        A bound valid for the float data (seconds).
    resolution
        Units per second of the first solve (``None``: chosen from the data,
        see :func:`choose_resolution`).
    symmetry, redundant, dominance
        Symmetry breaking, redundant constraints and cuts, dominated
        placements (switch off for experiments; results stay exact).
    model
        ``"auto"``, ``"laminar"`` or ``"intervals"``.
    relax, relax_time, relax_share
        With reconfiguration, first solve the assignment relaxation for at
        most ``relax_time`` s and ``relax_share`` of the time left, for its
        bound and its assignment.
    benders
        When the relaxation is proven but no schedule meets its bound, close
        the gap by logic-based Benders cuts
        (:func:`milp.mig_cpsat_benders.benders_loop`) before the session model.
    fix_assignment
        Fix every task to its placement in ``hint``.
    log, seed
        CP-SAT's search log and random seed.
    """
    workers, seed = opt.workers(workers), opt.seed(seed, allow_none=False)
    info = info if info is not None else {}
    gpu = problem.gpu
    reconf = gpu.reconfigurable
    one_release = len(set(problem.releases().values())) <= 1
    laminar = not reconf and one_release and model in ("auto", "laminar")
    info["model"] = "laminar" if laminar else ("sessions" if reconf else "intervals")
    best = incumbent
    lb = max(mig_bounds.lower_bound(problem), lower_bound)
    info["bounds_lower_bound"] = lb
    if resolution is None:
        R = choose_resolution(problem, lb, best.makespan)
        info["resolution_source"] = "data"
    else:
        R = float(resolution)
        info["resolution_source"] = "given"
    use_relaxation = reconf and relax and all(r == 0 for r in problem.releases().values())
    runs_info = []
    while True:
        scale = Scale.of(problem, R)
        horizon = math.floor(best.makespan * R + scale.excess) + 1
        lb_units = scale.units(lb)
        if use_relaxation and not deadline.expired():
            use_relaxation = False  # its bound (in seconds) carries over to finer re-solves
            own = {st.task: st.placement for st in (hint if fix_assignment else best).tasks}
            if not fix_assignment:
                # a quarter of the time at most: its swaps are quadratic in n, and the relaxation needs the rest
                own = improve_assignment(problem, own, deadline.share(1 / 4))
            master, master_run = solve_relaxation(problem, scale, lb_units, horizon, deadline, relax_time,
                                                   workers, seed, symmetry, info, share=relax_share)
            lb_units, assignment = master_run.units, master_run.assignment
            lb = max(lb, scale.bound(lb_units))
            # the relaxation's assignment and the incumbent's, improved by local search and
            # sequenced along the tree: often meets the relaxation's bound
            # with fix_assignment only the given assignment may be used (the relaxation's bound stays valid)
            starts = [own] if assignment is None or fix_assignment else \
                [assignment, improve_assignment(problem, assignment, deadline), own]
            for a in starts:
                tree = checked_plan(problem, tree_plans(problem, a, deadline))
                info["relaxation"].setdefault("tree_makespans", []).append(tree.makespan)
                if tree.makespan < best.makespan:
                    best = tree
                    horizon = math.floor(best.makespan * R + scale.excess) + 1
            if benders and not fix_assignment:
                lb, best = benders_loop(problem, master, master_run, scale, lb, best, deadline, workers, seed,
                                        info, solve=solve_cpsat)
                lb_units = max(lb_units, scale.units(lb))
                horizon = math.floor(best.makespan * R + scale.excess) + 1
            if best.makespan - lb <= TOLERANCE * best.makespan:
                info["skipped_session_model"] = True
                break
        try:  # building the session model alone takes seconds at large n: within the deadline too
            built = build(problem, scale, lb_units, horizon, laminar=laminar,
                          symmetry=symmetry and not fix_assignment, redundant=redundant,
                          dominance=dominance and not fix_assignment, deadline=deadline)
        except OutOfTime:
            info["stopped_before_session_model"] = True
            break
        if fix_assignment:
            placed = {st.task: st.placement.key() for st in hint.tasks}
            for (i, key), lit in built.x.items():
                built.model.add(lit == int(placed[problem.tasks[i].name] == key))
            info["fixed_assignment"] = True
        here: list[cpsat.CpsatRun] = []
        for share, parameters in _phases(laminar and not fix_assignment, deadline, workers):
            if here:
                if here[-1].status == "OPTIMAL" or deadline.expired():
                    break
                if here[-1].bound is not None:  # proven for this model: a valid row
                    built.model.add(built.makespan >= math.floor(here[-1].bound + 1e-9))
            if hint is not None:
                # the best schedule so far (at first the re-timed hint), in the symmetry-broken form
                shown = best if fix_assignment or not symmetry else canonical(problem, best)
                cpsat.set_hints(built.model, hints(built, problem, shown, scale))
            limit = deadline if share == 1.0 else deadline.share(share)
            run = cpsat.run(built.model, time_limit=limit, workers=workers, seed=seed, log=log,
                            parameters=parameters)
            if run.status == "INFEASIBLE":
                raise SolverError("CP-SAT reports the MIG model infeasible although a schedule fits its horizon "
                                  "(a model bug)")
            bound = run.bound
            if bound is not None:  # milp.cpsat.run reports finite bounds only
                lb = max(lb, scale.bound(bound))
            if run.has_solution:
                schedule = checked_plan(problem, extract(built, run, problem))
                if schedule.makespan < best.makespan:
                    best = schedule
            here.append(run)
            runs_info.append({"resolution": R, "status": run.status, "excess_units": scale.excess,
                              "model_objective": run.objective, "model_bound": bound, **run.stats})
        proven = any(r.status == "OPTIMAL" for r in here)
        gap = (best.makespan - lb) / best.makespan if best.makespan > 0 else 0.0
        finer = min(R * 2.0 ** math.ceil(math.log2(max(2.0, 2 * gap / TOLERANCE))),
                    2.0 ** math.floor(math.log2(MAX_UNITS / best.makespan)))
        # a rounded optimum whose true gap exceeds the tolerance: re-solve finer while time is left
        if proven and gap > TOLERANCE and finer > R and not deadline.expired():
            R = finer
            continue
        break
    info.update(resolution=R, runs=runs_info,
                model_objective=runs_info[-1]["model_objective"] if runs_info else None)
    return Result.from_bounds(best.makespan, lb, schedule=best, runtime=deadline.elapsed(), backend="cpsat",
                              info=info)
