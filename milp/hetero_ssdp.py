"""Exact method for one machine: successive sublimation dynamic programming.

For a problem that is one GPU with a common arrival time (the OR-Library
case, 1||sum w_j T_j) this is the strongest exact method of the toolkit. It
follows Tanaka, Fujikuma & Araki (J. Scheduling 2009), in three stages on the
time-indexed network of :mod:`bounds.hetero_ti`:

1. an incumbent from the iterated dynasearch of :func:`heuristics.hetero.ils`
   (or a given hint);
2. the Lagrangian relaxation on the compiled grid network of
   :mod:`bounds.hetero_dp` (2-cycle elimination, adjacent-pair dominance,
   and job windows from the precedence pairs of the interchange rule of
   Rinnooy Kan, Lageweg & Lenstra (Operations Research 1975) for weighted
   tardiness, :func:`bounds.hetero_precedence.interchange_precedences`,
   among them the jobs that
   one optimal schedule completes on time at its end,
   :func:`bounds.hetero_dp.on_time_tail`), its multipliers first
   from the cheap relaxation without those rules, then by subgradient
   optimisation towards the incumbent (from ``BUNDLE_JOBS`` jobs by the
   proximal bundle method of :mod:`bounds.hetero_bundle` instead, which
   gets there in fewer passes; :func:`_multipliers`; the step
   grows on each better bound and, when it collapses while the bound still
   rises, restarts from the best multipliers, where the gap is still wide
   with Polyak steps towards a level that moves with the bound,
   :class:`bounds.hetero_subgradient.TargetLevel`), with elimination of
   every arc that no schedule cheaper than the
   incumbent can use (once the eliminations have reduced the grid, its
   passes run over a list of the live states and their arcs,
   :class:`bounds.hetero_compact.Compact`). On most OR-Library instances the
   reduced network has no path left, which proves the incumbent optimal.
   Relaxed paths repaired into schedules (then improved by dynasearch),
   after the cheap stage, after 10 and 25 grid passes and then every 50,
   and after each modifier pass, replace the incumbent when
   they are better (a lower incumbent aims the steps lower and eliminates
   more);
3. otherwise the dominance of three successive jobs clears more arcs, and
   state-space modifiers (:class:`milp.hetero_modifiers.ModifierSearch`)
   make the relaxation exact job by job, in rounds: each round decides
   whether a schedule of cost at most a target exists. A round first
   searches the multipliers towards its target, eliminating at it
   (:func:`_target_multipliers`), which may decide it alone. Jobs that the
   relaxed path misses or repeats join the modifier set, whose members the
   relaxation then schedules exactly once (and, by the precedence pairs, in
   an order one optimal schedule keeps); forward and backward passes
   alternate, each pruned by the other's labels at the target, and the
   network shrinks with every pass. A round ends when no path survives
   (the bound rises above the target), when the cheapest surviving path is
   a schedule (it is optimal); the target starts halfway between the bound
   and the incumbent (Tanaka, Fujikuma & Araki's tentative upper bound: a
   lower target prunes more labels), moves halfway down towards the bound,
   keeping the modifiers and the reduced network, when the labels outgrow
   their limit or the round its share of the time, and climbs towards the
   incumbent after an empty round. With every job a modifier the
   relaxation is the problem itself, so the method is exact given time and
   memory. When even the lowest target is too large, more multiplier passes
   narrow the gap (their relaxed paths repaired into schedules too) and the
   rounds start again; when those passes no longer raise the bound, the
   label limit doubles (up to four times), or, where the rounds had filled
   the 62 modifiers of a one-word set, the rounds go on with more modifiers
   in sets of several words (:mod:`milp.hetero_labels`).

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
from bounds.hetero_dp import Grid, tail_rank
from bounds.hetero_compact import optimize_grid
from bounds.hetero_precedence import interchange_precedences
from bounds.hetero_subgradient import Relaxation, below_next_integer
from bounds.hetero_ti import INF, Expired
from instances.errors import SolverError
from instances.hetero import HeteroProblem, Schedule, check, evaluate_sequences, weighted_tardiness
from instances import options as opt
from instances.options import Deadline, known_options
from heuristics.hetero_dynasearch import dynasearch
from milp.hetero_modifiers import ModifierSearch
from milp.result import Result

__all__ = ["solve_ssdp", "applies"]

#: Forward passes of the multiplier optimisation before the modifier stage (and between its rounds) for a time
#: limit of ``PASS_SECONDS`` or less (or none); a longer limit allows proportionally more (:func:`_pass_budget`).
SUBGRADIENT_PASSES = 600
#: Seconds of time limit for which ``SUBGRADIENT_PASSES`` passes are the cap.
PASS_SECONDS = 20.0
#: Growth of the subgradient step on each better bound (:class:`bounds.hetero_subgradient.StepScale`).
GRID_EXPAND = 1.2
#: Restarts of the subgradient from the best multipliers when its step collapses while the bound still rises.
GRID_RESTARTS = 2
#: Step scale below which the subgradient counts as collapsed (and restarts).
GRID_MIN_SCALE = 0.01
#: Patience factor of each restart: a step that decays more slowly climbs on where the quick one stalled.
GRID_SLOWER = 4.0
#: A restart of the subgradient aims at a level that moves with the bound while the gap left is at least this share
#: of the incumbent, and at the incumbent itself below it.
LEVEL_GAP = 0.001
#: Share of the time left that the multipliers get before the modifier stage.
STAGE2_SHARE = 0.5
#: Kicks of the first iterated dynasearch per job when no hint is given, times n / 100: a count, so that the
#: incumbent, and with it the whole solve, does not depend on the machine's speed or load (times
#: :func:`_search_scale` of the time limit).
ILS_KICKS_PER_JOB = 0.6
#: Seconds per job after which the first search stops even short of its kicks (times n / 100 beyond 100 jobs; at
#: most 1 s, both times :func:`_search_scale`, and 10 % of the time limit): a guard for a slow machine or a short
#: limit.
ILS_SECONDS_PER_JOB = 0.006
#: Rounds of "schedule from the relaxed path, multipliers again" when that schedule is better.
IMPROVE_ROUNDS = 3
#: Share of the time left that one round of modifier passes may take before a lower target is tried.
ROUND_SHARE = 0.3
#: Subgradient passes between two repairs of the relaxed path into a schedule.
IMPROVE_EVERY = 50
#: Share of the time so far that repairing relaxed paths into schedules may take.
IMPROVE_SHARE = 0.05
#: Label limit of one modifier pass (memory: about 60 bytes a label).
MAX_LABELS = 3_000_000
#: The label limit doubles, up to this factor, when a round at the bound ran out of labels and more multiplier
#: passes did not raise the bound.
LABEL_GROWTH = 4
#: Sweeps of the three-job dominance over the reduced network before the modifiers.
THREE_JOB_ROUNDS = 2
#: Grid passes of the multipliers towards each round's target before its modifier passes.
TARGET_PASSES = 250


#: Jobs from which the grid's multipliers are searched by the proximal bundle method
#: (:mod:`bounds.hetero_bundle`) rather than by the subgradient method (see :func:`_search_options`).
BUNDLE_JOBS = 200


_GRID_SEARCH = dict(expand=GRID_EXPAND, restarts=GRID_RESTARTS, slower=GRID_SLOWER, min_scale=GRID_MIN_SCALE,
                    improve_every=IMPROVE_EVERY, level_gap=LEVEL_GAP)
_BUNDLE_SEARCH = dict(method="bundle", improve_every=IMPROVE_EVERY)


def _search_options(jobs: int) -> dict:
    """The options of the grid's multiplier search for ``jobs`` jobs (:func:`bounds.hetero.relax_grid`'s):
    from ``BUNDLE_JOBS`` jobs the proximal bundle method, which keeps a cutting-plane model of the
    Lagrangian function where the subgradient keeps one direction. At n = 200 the subgradient is still
    rising when its share of the time ends, and the bundle's bound, reached in far fewer passes, is what
    lets the modifiers prove. At n = 150 both reach about the same bound in that share, the bundle sooner,
    but the modifier rounds that follow from its multipliers end the open instances with wider gaps, so
    the subgradient stays there and below.

    Examples
    --------
    >>> _search_options(200)["method"], "method" in _search_options(150)
    ('bundle', False)
    """
    return dict(_BUNDLE_SEARCH) if jobs >= BUNDLE_JOBS else dict(_GRID_SEARCH)


def _pass_budget(limit: float | None) -> int:
    """The cap on the grid passes of one multiplier search: ``SUBGRADIENT_PASSES``
    per ``PASS_SECONDS`` of the call's time limit, at least ``SUBGRADIENT_PASSES``
    (and that without a time limit). It depends on the limit, not on the time
    left, so that it does not depend on the machine's speed.

    A search stops earlier when its step collapses after its restarts
    (:func:`bounds.hetero_subgradient.optimize`) or at its deadline (stage 2:
    ``STAGE2_SHARE`` of the time left); the cap keeps a short limit from
    spending its share on passes that the modifiers use better. With a long
    limit at n = 150 the multipliers can still climb well past 600 passes
    (each better bound lets the eliminations shrink the network, and the
    bound on the smaller network rises), so a longer limit lets them go on.

    Examples
    --------
    >>> _pass_budget(None), _pass_budget(20.0), _pass_budget(120.0)
    (600, 600, 3600)
    """
    if limit is None:
        return SUBGRADIENT_PASSES
    return max(SUBGRADIENT_PASSES, int(SUBGRADIENT_PASSES * limit / PASS_SECONDS))


def _search_scale(limit: float | None) -> float:
    """How many times ``PASS_SECONDS`` the call's time limit is, at least 1 (and 1
    without a limit): the factor on the first search's kicks and time guard.

    With a long limit at n = 150-200 the first search's 1 s ended a few
    hundred units above schedules that 10 s of the same search find, and
    the multipliers aimed at that incumbent for the first half of the time
    (their repaired relaxed paths found the better ones late or not at
    all); like :func:`_pass_budget` it depends on the limit, not on the
    time left, and leaves a limit of ``PASS_SECONDS`` or less as it was.

    Examples
    --------
    >>> _search_scale(None), _search_scale(20.0), _search_scale(120.0)
    (1.0, 1.0, 6.0)
    """
    return 1.0 if limit is None else max(1.0, float(limit) / PASS_SECONDS)


def _grid_search(net: Grid, ub: float, mu, deadline: float | None, improve=None,
                 passes: int = SUBGRADIENT_PASSES) -> Relaxation:
    """Subgradient search of the grid's multipliers from ``mu`` towards ``ub``
    (:func:`bounds.hetero_subgradient.optimize`): the step halves after
    ``GRID_PATIENCE`` passes without a better bound and grows by
    ``GRID_EXPAND`` on each better one; when it has fallen below
    ``GRID_MIN_SCALE``, the search starts again from the best multipliers,
    up to ``GRID_RESTARTS`` times, with ``GRID_SLOWER`` times the patience,
    and while the gap left is at least ``LEVEL_GAP`` of the incumbent with
    Polyak steps towards a level that moves with the bound
    (:class:`bounds.hetero_subgradient.TargetLevel`, from the incumbent).
    ``improve`` repairs a relaxed path after a fifth and a half of
    ``IMPROVE_EVERY`` passes, then every
    ``IMPROVE_EVERY``: a better incumbent aims the steps lower and lets the
    eliminations remove more. From ``BUNDLE_JOBS`` jobs the search is the
    proximal bundle method instead (:func:`_search_options`)."""
    search = _search_options(net.jobs)
    if "method" not in search:
        search["patience"] = hb.GRID_PATIENCE
    return optimize_grid(net, ub, deadline=deadline, max_iter=passes, mu0=mu, improve=improve, **search)


def _multipliers(net: Grid, ub: float, sequence, deadline: float | None, improve=None,
                 passes: int = SUBGRADIENT_PASSES) -> Relaxation:
    """Multipliers in two stages (:func:`bounds.hetero.relax_grid`: the cheap
    relaxation, then the grid's), the grid stage searched as in
    :func:`_grid_search`."""
    return hb.relax_grid(net, ub, sequence, deadline=deadline, max_iter=passes, improve=improve,
                         **_search_options(net.jobs))


def _target_multipliers(net: Grid, mu, target: float, dl: Deadline) -> Relaxation:
    """Multipliers searched from ``mu`` towards a round's ``target`` (Polyak
    steps aimed at ``target + 1``, as in :func:`_grid_search` without its
    restarts), eliminating what no schedule of cost at most ``target`` uses.

    The search aims at the tentative upper bound rather than at the
    incumbent, so its steps are shorter near the dual optimum, and its
    eliminations at the lower threshold shrink the network the round starts
    from (restored with it). ``proved`` means that no schedule costs at most
    ``target``; otherwise ``min(bound, target + 1)`` is a valid bound, and
    the best multipliers are at least as good on this network as ``mu``."""
    return optimize_grid(net, target + 1, deadline=dl.at, max_iter=TARGET_PASSES, mu0=mu,
                         patience=hb.GRID_PATIENCE, expand=GRID_EXPAND, min_scale=GRID_MIN_SCALE)


def _candidates(net: Grid, path, modifiers: list[int]) -> list[int]:
    """Jobs to make modifiers next, best first: those the relaxed path misses
    or repeats, by fewest states left in the network (a job confined to a
    short window adds few labels), whether missing or repeated (Tanaka's
    published implementation takes the missing jobs first; ordering all of
    them by window lets a round reach more modifiers within its labels)."""
    counts = net.counts(path)
    states = net.alive.sum(axis=0)
    taken = set(modifiers)
    return [int(j) for j in np.argsort(states, kind="stable") if counts[j] != 1 and int(j) not in taken]


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
        A schedule to start from; without one the ILS runs
        ``ILS_KICKS_PER_JOB`` kicks per job times n / 100 (the same
        schedule on any machine), stopped after
        ``ILS_SECONDS_PER_JOB`` per job, at most 1 s and 10 % of the
        budget; kicks and guard times the time limit over ``PASS_SECONDS``
        where that is more than 1 (:func:`_search_scale`). Schedules
        repaired from the relaxed paths (then improved by dynasearch)
        replace it when they are better.
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
        # the incumbent matters more as n grows: kicks quadratic in n (below 100 jobs the multipliers' repaired
        # paths find what more kicks would, at less cost); the time guard is quadratic only beyond 100 jobs;
        # both grow with a time limit beyond PASS_SECONDS, as the multipliers' pass cap does
        scale = _search_scale(dl.limit)
        kicks = max(1, round(ILS_KICKS_PER_JOB * problem.n * problem.n / 100 * scale))
        budget = scale * min(1.0, ILS_SECONDS_PER_JOB * problem.n * max(1.0, problem.n / 100))
        budget = budget if rem is None else max(0.01, min(budget, 0.1 * rem))
        hint = ils(problem, time_limit=budget, max_iter=kicks, seed=seed)
        info["first_search_kicks"] = kicks
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
    # pairs that one optimal schedule keeps: time windows before the arcs are built, filters on the modifier
    # labels later
    rank = tail_rank(sm.p, sm.w, sm.d)
    prec = interchange_precedences(sm.p, sm.w, sm.d, rank)
    info["precedences"] = int(prec.sum())
    try:
        net = Grid(sm.p, sm.costs(), rank=rank, weights=sm.w, deadline=dl.at, max_cost=below_next_integer(ub),
                   prec=prec)
    except Expired:
        return result(0.0, "time limit (building the network)")
    info["window_states_removed"] = net.windowed
    tried: set[int] = set()
    spent = 0.0

    def improve(path) -> float | None:
        """A schedule from a relaxed path (repair, then dynasearch descent); its
        cost if it beats the incumbent (which it then replaces), else None.

        A path whose job order was repaired before is skipped, and so is every
        path once the repairs took ``IMPROVE_SHARE`` of the time so far (at
        n = 150 a repair costs as much as a modifier pass)."""
        nonlocal best_seq, ub, spent
        if not path:
            return None
        key = hash(tuple(j for j, _ in path))
        if key in tried or (tried and spent > IMPROVE_SHARE * dl.elapsed()):
            return None
        tried.add(key)
        t0 = time.perf_counter()
        seq, _ = dynasearch(sm.p, sm.w, sm.d, hb.repair_path(sm, path))
        spent += time.perf_counter() - t0
        cost = float(sm.model_cost(seq))
        if cost >= ub:
            return None
        best_seq, ub = [int(j) for j in seq], cost
        say(f"incumbent {ub * sm.cost_unit:g} from a relaxed path")
        return ub

    rem = dl.remaining()
    # the modifiers need a narrow gap; the multipliers get up to half of the time left to narrow it
    stage2 = dl.at if rem is None else time.perf_counter() + STAGE2_SHARE * rem
    cap = _pass_budget(dl.limit)
    info["pass_cap"] = cap
    relax = _multipliers(net, ub, best_seq, stage2, improve, cap)
    passes = relax.evaluations
    # a better incumbent lowers the threshold: the grid (reduced for the old one) keeps what the new one needs
    for _ in range(IMPROVE_ROUNDS):
        if relax.proved or dl.expired() or improve(relax.path) is None or time.perf_counter() >= stage2:
            break
        relax = _grid_search(net, ub, relax.mu, stage2, improve, cap)
        passes += relax.evaluations
    info.update(subgradient_passes=passes, nodes_after_stage2=net.N)
    bound = min(float(math.ceil(relax.bound - 1e-6 * max(1.0, abs(relax.bound)))), ub)
    say(f"Lagrangian bound {bound * sm.cost_unit:g} after {passes} passes, {net.N} nodes left")
    if bound >= ub:
        return result(ub, "Lagrangian")
    # stage 3: state-space modifiers, in rounds that each decide whether a schedule of cost <= target exists
    info["three_job_arcs_removed"] = net.dominate3(rounds=THREE_JOB_ROUNDS)
    net.eliminate(relax.mu, below_next_integer(ub))
    mu, path = relax.mu, relax.path
    counters = {"modifier_passes": 0, "modifier_rounds": 0}
    labels = MAX_LABELS
    wide = False
    # the first target halfway: a round below the incumbent prunes more, and an empty one still raises the bound
    step = max(0, (ub - 1 - bound) // 2)
    target = bound + step
    while not dl.expired():
        base = (net.alive.copy(), net.mask.copy())
        counters["modifier_rounds"] += 1
        tm = _target_multipliers(net, mu, target, dl)
        counters["target_passes"] = counters.get("target_passes", 0) + tm.evaluations
        mu, path = tm.mu, tm.path or path
        if tm.proved:
            counters["target_proofs"] = counters.get("target_proofs", 0) + 1
            out = _Round("empty", target + 1, target, step, path)
        else:
            bound = max(bound, float(math.ceil(tm.bound - 1e-6 * max(1.0, abs(tm.bound)))))
            out = _round(net, mu, target, path, prec, dl, counters, improve, say, sm, bound, step, labels, wide)
        info.update(counters)
        target, step = out.target, out.step
        bound = max(bound, min(out.bound, target + 1))
        path = out.path or path
        if out.status == "schedule":
            val = float(sm.model_cost(out.sequence))
            if val < ub:
                best_seq, ub = out.sequence, val
            return result(min(bound, ub), "modifiers (relaxed path is a schedule)")
        target = min(target, ub - 1)   # a better incumbent from the relaxed paths
        if out.status == "empty":
            bound = max(bound, target + 1)
            if bound >= ub:
                return result(ub, "modifiers")
            say(f"no schedule of cost <= {target * sm.cost_unit:g}")
            net.alive, net.mask = base
            target = min(ub - 1, bound + (step if step else ub))
            continue
        net.alive, net.mask = base
        if out.status == "time":
            break
        if out.status == "labels":
            info["label_limit_rounds"] = info.get("label_limit_rounds", 0) + 1
        if out.status in ("labels", "modifier limit") and target > bound:
            # a lower tentative target prunes more labels and paths (Tanaka, Fujikuma & Araki's tentative upper
            # bound): it may decide with fewer labels, or fewer modifiers
            step = max(0, (target - bound) // 2)
            target = bound + step
            say(f"{out.status}: tentative target {target * sm.cost_unit:g}")
            continue
        # the gap is too wide for the modifiers even at the lowest target: better multipliers narrow it
        old = relax.bound
        relax = _grid_search(net, ub, mu, dl.at, improve, cap)
        say(f"{out.status}: Lagrangian bound {min(relax.bound, ub) * sm.cost_unit:g} after "
            f"{relax.evaluations} more passes, {net.N} nodes left")
        bound = max(bound, min(float(math.ceil(relax.bound - 1e-6 * max(1.0, abs(relax.bound)))), ub))
        if bound >= ub:
            return result(ub, "Lagrangian")
        if relax.bound <= old + 1e-9 and out.status == "labels" and labels < MAX_LABELS * LABEL_GROWTH:
            # the multipliers are at their best: a round with more labels is what is left to try
            labels *= 2
            step = max(0, (ub - 1 - bound) // 2)
            target = bound + step
            say(f"label limit {labels:,}, tentative target {target * sm.cost_unit:g}")
            continue
        if relax.bound <= old + 1e-9 and out.status == "modifier limit" and not wide:
            # the multipliers are at their best and the one-word sets full at the bound: more modifiers, in sets
            # of several words, are what is left to try
            wide = True
            step = max(0, (ub - 1 - bound) // 2)
            target = bound + step
            info["wide_sets"] = True
            say(f"sets of several words, tentative target {target * sm.cost_unit:g}")
            continue
        if relax.bound <= old + 1e-9:
            info["stopped"] = "label limit" if out.status == "labels" else out.status
            return result(bound, info["stopped"])
        mu, path, target, step = relax.mu, relax.path or path, ub - 1, None
    info["stopped"] = "time limit"
    return result(bound, "time limit")


class _Round:
    """Outcome of one round of modifier passes (:func:`_round`): ``status``
    ``"empty"`` (no schedule costs at most ``target``), ``"schedule"`` (the
    cheapest surviving relaxed path, ``sequence``, is a schedule, hence
    optimal), ``"labels"`` (the label limit even for one more modifier, at
    the lowest target), ``"modifier limit"`` or ``"time"``; ``bound`` a valid
    integer lower bound on the schedules of cost at most ``target`` (the
    round's last target), ``path`` the last relaxed path, ``step`` the last
    distance between the target and the bound below it."""

    def __init__(self, status: str, bound: float, target: float, step: float, path=None, sequence=None):
        self.status, self.bound, self.target, self.step = status, bound, target, step
        self.path, self.sequence = path or [], sequence


def _round(net: Grid, mu: np.ndarray, target: float, path, prec, dl: Deadline, counters: dict, improve, say,
           sm: hb.SingleMachine, floor: float, step: float, max_labels: int = MAX_LABELS,
           wide: bool = False) -> _Round:
    """Modifier passes that decide whether a schedule of cost ``<= target`` exists.

    Jobs the relaxed path misses or repeats (:func:`_candidates`) join the
    modifiers, a few at a time (fewer when the labels grow, more when they
    stay small); forward and backward passes alternate, each pruned by the
    other's labels at the threshold ``target`` plus a rounding margin
    (:func:`bounds.hetero_subgradient.below_next_integer` of ``target + 1``) and shrinking the
    network in place. Relaxed paths are repaired into schedules
    (``improve``); a better incumbent lowers the threshold. When the labels
    outgrow their limit even for one more modifier, when the modifiers fill
    the one-word sets (``ModifierSearch.WORD_BITS``) or run out, or when the
    round takes more than its share of the time left, the
    target moves halfway down towards the bound (``floor``, the best bound
    known, or the passes' own) and the passes go on with the same modifiers
    and the network reduced so far: what no schedule of cost at most the old
    target uses, none of cost at most the new one uses (Tanaka, Fujikuma &
    Araki's tentative upper bound, lowered without losing the work done).
    The round ends ``"labels"`` or ``"modifier limit"`` only when the target
    is down at the bound; there, with ``wide``, more modifiers than one word
    holds go on in sets of several words (:mod:`milp.hetero_labels`).
    """
    search = ModifierSearch(net, mu, below_next_integer(target + 1), prec=prec)
    bound, add = -INF, 4

    def share() -> float | None:
        rem = dl.remaining()
        return None if rem is None else time.perf_counter() + ROUND_SHARE * rem

    cap = share()

    def lower(why: str) -> bool:
        """Move the target halfway down to the bound; False when it is there already."""
        nonlocal target, step, cap
        lo = max(floor, bound)
        if target <= lo:
            return False
        step = (target - lo) // 2
        target = lo + step
        search.limit = below_next_integer(target + 1) - search.shift
        cap = share()
        counters["lowered_targets"] = counters.get("lowered_targets", 0) + 1
        say(f"{why}: tentative target {target * sm.cost_unit:g}, {len(search.modifiers)} modifiers kept")
        return True

    while not dl.expired():
        if cap is not None and time.perf_counter() > cap and not lower("round time"):
            return _Round("labels", bound, target, step, path)
        cands = _candidates(net, path, search.modifiers)
        # one-word sets while the target can still be lowered (a lower target decides with fewer labels than
        # wider sets make); sets of several words only once the target is down at the bound
        most = search.max_modifiers if wide and target <= max(floor, bound) else min(search.max_modifiers,
                                                                                     search.WORD_BITS)
        room = most - len(search.modifiers)
        fresh = bool(cands) and room > 0
        if not fresh and not lower("modifier limit"):
            return _Round("modifier limit", bound, target, step, path)
        before = len(search.modifiers)
        if fresh:
            search.add(cands[:min(add, room)])
        for direction in ("forward", "backward"):
            run = search.forward if direction == "forward" else search.backward
            out = run(max_labels=max_labels, deadline=dl.at)
            counters["modifier_passes"] += 1
            if out.aborted:
                if dl.expired():
                    return _Round("time", bound, target, step, path)
                del search.modifiers[before:]
                # labels of a pass that tracked the dropped modifiers cannot prune the next one
                if search.fl is not None and search.fl.nmod > before:
                    search.fl = None
                if search.bl is not None and search.bl.nmod > before:
                    search.bl = None
                if add == 1 and not lower("labels"):
                    return _Round("labels", bound, target, step, path)
                add = max(1, add // 2)
                break
            counters["modifiers"] = len(search.modifiers)
            say(f"{direction} pass, {len(search.modifiers)} modifiers: bound "
                f"{min(out.bound, target + 1) * sm.cost_unit:g}, {out.labels} labels, {net.N} nodes left")
            if not math.isfinite(out.value):
                return _Round("empty", target + 1, target, step, path)
            bound = max(bound, float(math.ceil(out.bound - 1e-6 * max(1.0, abs(out.bound)))))
            if (net.counts(out.path) == 1).all():
                return _Round("schedule", bound, target, step, out.path, [j for j, _ in out.path])
            path = out.path
            ub = improve(path)
            if ub is not None and ub - 1 < target:
                target = ub - 1
                search.limit = below_next_integer(target + 1) - search.shift
            if out.labels > max_labels // 4:
                add = max(1, add // 2)
            elif out.labels < max_labels // 40:
                add = min(8, add + 1)
    return _Round("time", bound, target, step, path)
