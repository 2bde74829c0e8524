"""Exact method for one machine: successive sublimation dynamic programming.

For a problem that is one GPU with a common arrival time (the OR-Library
case, 1||sum w_j T_j) this is the strongest exact method of the toolkit. It
follows Tanaka, Fujikuma & Araki (J. Scheduling 2009), in three stages on the
time-indexed network of :mod:`bounds.hetero_ti`:

1. an incumbent from the iterated dynasearch of :func:`heuristics.hetero.ils`
   (or a given hint);
2. the Lagrangian relaxation on the compiled grid network of
   :mod:`bounds.hetero_dp` (2-cycle elimination, adjacent-pair dominance),
   its multipliers first from the cheap relaxation without those rules,
   then by subgradient optimisation towards the incumbent
   (:func:`bounds.hetero.relax_grid`), with elimination of every arc that
   no schedule cheaper than the incumbent can use. On most OR-Library
   instances the reduced network has no path left, which proves the
   incumbent optimal. Relaxed paths repaired into schedules (then improved
   by dynasearch) replace the incumbent when they are better;
3. otherwise state-space modifiers (:class:`milp.hetero_modifiers.ModifierSearch`):
   jobs that the relaxed path repeats or misses join the modifier set, whose
   members the relaxation then schedules exactly once; forward and backward
   passes alternate, each pruned by the other's labels, and the network
   shrinks with every pass. The search ends when no path survives (the
   incumbent is optimal) or the cheapest surviving path is a schedule (it is
   optimal); with every job a modifier the relaxation is the problem itself,
   so the method is exact given time and memory. When the labels outgrow
   their limit, more multiplier passes narrow the gap and the modifiers
   start again.

Why this rather than a time-indexed MILP with the bound: the dynamic programs
exploit the structure (one machine, no idle time, integer times) that a MILP
solver does not see, and every step produces either a proof or a smaller
network; the MILP would have to close the same gap with a weaker LP bound.

The grid must hold the data exactly (:func:`bounds.hetero.single_machine`);
times and weights are then integers in model units, every schedule's model
cost is its user cost times a known factor, and a proof on the model is a
proof for the user's data. The returned schedule is evaluated and checked on
the user's data.

Examples
--------
>>> from instances import hetero
>>> res = solve_ssdp(hetero.orlib_wt40(1), time_limit=60)
>>> str(res.status), res.objective
('OPTIMAL', 913.0)
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bounds import hetero as hb
from bounds.hetero_dp import Grid, tardiness_precedences
from bounds.hetero_subgradient import optimize
from bounds.hetero_ti import INF, Expired
from instances.errors import SolverError
from instances.options import known_options
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from instances import options as opt
from instances.options import Deadline, known_options
from heuristics.hetero_dynasearch import dynasearch
from milp.hetero_modifiers import MAX_MODIFIERS, ModifierSearch
from milp.result import Result

__all__ = ["solve_ssdp", "applies"]

#: Forward passes of the multiplier optimisation before the modifier stage (and between its rounds).
SUBGRADIENT_PASSES = 600
#: Growth of the subgradient step on each better bound (:class:`bounds.hetero_subgradient.StepScale`).
GRID_EXPAND = 1.2
#: Share of the time left that the multipliers get before the modifier stage.
STAGE2_SHARE = 0.5
#: Seconds of the ILS per job when no hint is given (at most 1 s and 10 % of the time limit).
ILS_SECONDS_PER_JOB = 0.005
#: Rounds of "schedule from the relaxed path, multipliers again" when that schedule is better.
IMPROVE_ROUNDS = 3
#: Subgradient steps under the modifiers when the labels outgrow their limit.
REPRICE_STEPS = 12
#: Label limit of one modifier pass (memory: about 60 bytes a label).
MAX_LABELS = 3_000_000
#: Sweeps of the three-job dominance over the reduced network before the modifiers.
THREE_JOB_ROUNDS = 2


@known_options
def _reprice(net: Grid, mu: np.ndarray, modifiers: list[int], ub: float, steps: int, deadline: float | None,
             max_labels: int, prec: np.ndarray | None = None) -> tuple[float, np.ndarray, list]:
    """Subgradient steps on the relaxation with the modifier jobs ``modifiers``.

    The successive sublimation method re-optimises the multipliers of each
    relaxation it tightens (Ibaraki; Tanaka, Fujikuma & Araki 2009, Sec. 5):
    each step is a forward modifier pass at the current multipliers, pruned
    by the plain backward labels at the same multipliers (each pass also
    shrinks the grid). Returns the best bound (``inf``: no schedule cheaper
    than ``ub`` is left; ``-inf``: no pass fitted ``max_labels`` or the
    deadline, nothing is known), its multipliers and its relaxed path. The
    passes are pruned less than those of the modifier search (the plain
    backward labels instead of modifier labels), so when the first one does
    not fit, the first half of the modifiers is tried.
    """
    best, best_mu, best_path = -INF, mu, []
    scale, stall = 1.0, 0
    mods = list(modifiers)
    for _ in range(steps):
        search = ModifierSearch(net, mu, ub - 0.5, prec=prec)
        search.add(mods)
        out = search.forward(max_labels=max_labels, deadline=deadline)
        if out.aborted:
            if best > -INF or not mods or (deadline is not None and time.perf_counter() > deadline):
                break
            mods = mods[:len(mods) // 2]
            continue
        if not math.isfinite(out.value):
            return INF, mu, []
        if out.bound > best:
            best, best_mu, best_path, stall = out.bound, mu.copy(), out.path, 0
        else:
            stall += 1
            if stall >= 3:
                scale, stall = 0.5 * scale, 0
        g = 1.0 - net.counts(out.path)
        if not g.any():
            return out.bound, mu, out.path
        mu = mu + scale * (ub - out.bound) / float(g @ g) * g
    return best, best_mu, best_path


def _candidates(net: Grid, path, modifiers: list[int]) -> list[int]:
    """Jobs to make modifiers next, best first: those the relaxed path misses,
    then those it repeats (missing jobs first, as in Tanaka's published
    implementation of the method), each group by fewest states left in the
    network (a job confined to a short window adds few labels)."""
    counts = net.counts(path)
    states = net.alive.sum(axis=0)
    order = np.lexsort((states, np.where(counts == 0, 0, 1)))
    taken = set(modifiers)
    return [int(j) for j in order if counts[j] != 1 and int(j) not in taken]


@known_options
def applies(problem: HeteroProblem) -> bool:
    """Whether :func:`solve_ssdp` can prove optimality: one machine, a common
    arrival, data exact on a practical grid."""
    sm = hb.single_machine(problem)
    return sm is not None and sm.exact


def _schedule(problem: HeteroProblem, sm: hb.SingleMachine, sequence) -> Schedule:
    seqs: list[list[int]] = [[] for _ in range(problem.m)]
    seqs[sm.gpu] = [int(sm.tasks[j]) for j in sequence]
    return evaluate_sequences(problem, seqs)


@known_options
def solve_ssdp(problem: HeteroProblem, time_limit: float | Deadline | None = None,
               hint: Schedule | None = None, log: bool = False, seed: int = 0) -> Result:
    """Solve a single-machine problem exactly (see the module docstring).

    Parameters
    ----------
    problem
        One GPU (or one usable GPU) and a common arrival time.
    time_limit
        Seconds or a :class:`~instances.options.Deadline` for the whole call.
    hint
        A schedule to start from; without one the ILS runs for
        ``min(1 s, 5 ms per job, 10 %)`` of the budget. Schedules repaired
        from the relaxed paths (then improved by dynasearch) replace it
        when they are better.
    log
        Print the stages.

    Returns
    -------
    Result
        ``backend="ssdp"``; OPTIMAL when proven, else FEASIBLE with the best
        schedule and the best bound.
    """
    dl = time_limit if isinstance(time_limit, Deadline) else Deadline(opt.time_limit(time_limit))
    seed = opt.seed(seed, allow_none=False)
    sm = hb.single_machine(problem)
    if sm is None:
        raise SolverError("ssdp applies to one machine with a common arrival time only")
    info: dict[str, Any] = {"grid": sm.time_unit, "weight_grid": sm.weight_unit, "exact_grid": sm.exact}

    def say(msg: str) -> None:
        if log:
            print(f"[ssdp {dl.elapsed():7.2f}s] {msg}", flush=True)

    # stage 1: incumbent
    if hint is None:
        from heuristics.hetero import ils

        rem = dl.remaining()
        budget = min(1.0, ILS_SECONDS_PER_JOB * problem.n)
        budget = budget if rem is None else max(0.01, min(budget, 0.1 * rem))
        hint = ils(problem, time_limit=budget, seed=seed)
    if not sm.exact:
        # the grid cannot hold the data: no proof is possible, report the bound of the rounded model
        errors = check(problem, hint)
        if errors:
            raise SolverError(f"ssdp: hint fails the checker: {errors[:3]}")
        lag = hb.lagrangian(problem, hint, deadline=dl.at, sm=sm)
        info.update(stage="Lagrangian (inexact grid)", **lag.info)
        return Result.from_bounds(weighted_tardiness(problem, hint), lag.bound, schedule=hint,
                                  runtime=dl.elapsed(), backend="ssdp", info=info)
    best_seq = [int(j) for j in sm.sequence_of(problem, hint)]
    if len(best_seq) != sm.n:
        raise SolverError("the hint does not schedule every task on the machine")
    ub = float(sm.model_cost(best_seq))
    say(f"incumbent {ub * sm.cost_unit:g}")

    def result(bound_model: float, stage: str) -> Result:
        sched = _schedule(problem, sm, best_seq)
        errors = check(problem, sched)
        if errors:
            raise SolverError(f"ssdp: schedule fails the checker: {errors[:3]}")
        obj = weighted_tardiness(problem, sched)
        info["stage"] = stage
        return Result.from_bounds(obj, max(0.0, bound_model) * sm.cost_unit, schedule=sched,
                                  runtime=dl.elapsed(), backend="ssdp", info=info)

    if ub == 0:
        return result(0.0, "incumbent has cost 0")
    size = hb.grid_bytes(sm)
    if size > hb.MAX_GRID_BYTES:
        info["skipped"] = f"network too large ({size / 2 ** 20:.0f} MiB)"
        return result(0.0, "network too large")
    # stage 2: Lagrangian relaxation with elimination
    try:
        net = Grid(sm.p, sm.costs(), weights=sm.w, deadline=dl.at, max_cost=ub - 0.5)
    except Expired:
        return result(0.0, "time limit (building the network)")
    # pairs that one optimal schedule keeps: time windows now, filters on the modifier labels later
    prec = tardiness_precedences(sm.p, sm.w, sm.d, net.rank)
    info["precedences"] = int(prec.sum())
    info["window_states_removed"] = net.restrict(prec)
    def improve(path) -> bool:
        """A schedule from a relaxed path (repair, then dynasearch descent); True if it beats the incumbent."""
        nonlocal best_seq, ub
        if not path:
            return False
        seq, _ = dynasearch(sm.p, sm.w, sm.d, hb.repair_path(sm, path))
        cost = float(sm.model_cost(seq))
        if cost >= ub:
            return False
        best_seq, ub = [int(j) for j in seq], cost
        say(f"incumbent {ub * sm.cost_unit:g} from a relaxed path")
        return True

    rem = dl.remaining()
    # the modifiers need a narrow gap; the multipliers get up to half of the time left to narrow it
    stage2 = dl.at if rem is None else time.perf_counter() + STAGE2_SHARE * rem
    relax = hb.relax_grid(net, ub, best_seq, deadline=stage2, max_iter=SUBGRADIENT_PASSES, expand=GRID_EXPAND)
    # a better incumbent lowers the threshold: the grid (reduced for the old one) keeps what the new one needs
    for _ in range(IMPROVE_ROUNDS):
        if relax.proved or dl.expired() or not improve(relax.path):
            break
        relax = optimize(net, ub, deadline=stage2, max_iter=SUBGRADIENT_PASSES, mu0=relax.mu,
                         patience=hb.GRID_PATIENCE, expand=GRID_EXPAND)
    info.update(subgradient_passes=relax.evaluations, nodes_after_stage2=net.N)
    bound = min(float(math.ceil(relax.bound - 1e-6 * max(1.0, abs(relax.bound)))), ub)
    say(f"Lagrangian bound {bound * sm.cost_unit:g} after {relax.evaluations} passes, {net.N} nodes left")
    if bound >= ub:
        return result(ub, "Lagrangian")
    # stage 3: state-space modifiers; when the labels outgrow the limit, more multiplier passes and again
    info["three_job_arcs_removed"] = net.dominate3(rounds=THREE_JOB_ROUNDS)
    net.eliminate(relax.mu, ub - 0.5)
    passes = 0
    rounds = 0
    while True:
        rounds += 1
        search = ModifierSearch(net, relax.mu, ub - 0.5, prec=prec)
        path = relax.path
        add = 4
        stopped = None
        while not dl.expired():
            cands = _candidates(net, path, search.modifiers)
            room = MAX_MODIFIERS - len(search.modifiers)
            if not cands or room <= 0:
                stopped = "modifier limit"
                break
            before = len(search.modifiers)
            search.add(cands[:min(add, room)])
            aborted = False
            for direction in ("forward", "backward"):
                run = search.forward if direction == "forward" else search.backward
                out = run(max_labels=MAX_LABELS, deadline=dl.at)
                passes += 1
                if out.aborted:
                    aborted = True
                    break
                say(f"{direction} pass, {len(search.modifiers)} modifiers: bound "
                    f"{min(out.bound, ub) * sm.cost_unit:g}, {out.labels} labels, {net.N} nodes left")
                info.update(modifiers=len(search.modifiers), modifier_passes=passes, modifier_rounds=rounds)
                if not math.isfinite(out.value):
                    return result(ub, "modifiers")
                bound = max(bound, min(float(math.ceil(out.bound - 1e-6 * max(1.0, abs(out.bound)))), ub))
                c = net.counts(out.path)
                if (c == 1).all():
                    seq = [j for j, _ in out.path]
                    val = sm.model_cost(seq)
                    if val < ub:
                        best_seq, ub = seq, float(val)
                    return result(min(bound, ub), "modifiers (relaxed path is a schedule)")
                path = out.path
                if improve(path):
                    search.limit = ub - 0.5 - search.shift
                if out.labels > MAX_LABELS // 4:
                    add = max(1, add // 2)
                elif out.labels < MAX_LABELS // 40:
                    add = min(8, add + 1)
            if not aborted:
                continue
            if dl.expired():
                break
            del search.modifiers[before:]
            search.fl = search.bl = None   # the passes of the last round were lost
            if add > 1:
                add = max(1, add // 2)
                continue
            # the label limit even for one more modifier: re-price the jobs under the kept modifiers
            rb, mu, rpath = _reprice(net, search.mu, search.modifiers, ub, REPRICE_STEPS, dl.at, MAX_LABELS, prec)
            passes += REPRICE_STEPS
            if rb == INF:
                return result(ub, "modifiers (re-priced)")
            if rb <= bound + 1e-9:
                # no better (-inf: not one pass fitted the label limit or the time, nothing was learnt)
                stopped = "label limit"
                break
            bound = max(bound, min(float(math.ceil(rb - 1e-6 * max(1.0, abs(rb)))), ub))
            say(f"re-priced under {len(search.modifiers)} modifiers: bound {min(rb, ub) * sm.cost_unit:g}, "
                f"{net.N} nodes left")
            if bound >= ub:
                return result(ub, "modifiers (re-priced)")
            if rpath and (net.counts(rpath) == 1).all():
                seq = [j for j, _ in rpath]
                val = sm.model_cost(seq)
                if val < ub:
                    best_seq, ub = seq, float(val)
                return result(min(bound, ub), "modifiers (relaxed path is a schedule)")
            mods = list(search.modifiers)
            search = ModifierSearch(net, mu, ub - 0.5, prec=prec)
            search.add(mods)
            path = rpath or path
        if stopped is None or dl.expired():
            info["stopped"] = stopped or "time limit"
            break
        # the gap was too wide for the modifiers: better multipliers shrink it and the network
        old = relax.bound
        relax = optimize(net, ub, deadline=dl.at, max_iter=SUBGRADIENT_PASSES, mu0=relax.mu,
                         patience=hb.GRID_PATIENCE, expand=GRID_EXPAND)
        say(f"{stopped}: Lagrangian bound {min(relax.bound, ub) * sm.cost_unit:g} after "
            f"{relax.evaluations} more passes, {net.N} nodes left")
        bound = max(bound, min(float(math.ceil(relax.bound - 1e-6 * max(1.0, abs(relax.bound)))), ub))
        if bound >= ub:
            return result(ub, "Lagrangian")
        if relax.bound <= old + 1e-9:
            info["stopped"] = stopped
            break
    return result(bound, "time limit" if dl.expired() else info["stopped"])
