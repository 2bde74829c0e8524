"""Lower bounds and performance guarantees for the MIG problem (FAR paper).

* :func:`area_bound` -- the paper's baseline of Sec. 6.4: every task at its
  minimum area, the total spread evenly over the slices.
* :func:`lower_bound` -- a stronger bound, valid for the exact problem with
  reconfiguration (rules 1-6 of :mod:`instances.mig_check`) and for
  multi-batch workloads with release times. The problem carries the
  reconfiguration times: on ``problem.without_reconfiguration()`` (all zero)
  they drop out. It is the largest of

  1. a *moldable area bound*: for a candidate makespan C every task must use
     a size s that finishes by C, ``e_i(s) + t_i(s) <= C`` (``e_i`` = its
     release, and with reconfiguration also the create time of s, since its
     instance must be created first), so it covers at least
     ``a_i(C) = min{s * t_i(s) : s allowed at C}`` slice-seconds; no task
     runs before ``t0`` (the release, and with reconfiguration the shortest
     create time, because the GPU starts empty, rule 1). C is feasible only if
     ``t0 + sum_i a_i(C) / S <= C``. This dominates both the area baseline and
     the longest minimum task time ``max_i min_s t_i(s)``;
  2. a *slice chain bound*: the tasks whose every placement allowed at C
     occupies a given slice k run one after another, so
     ``t0 + sum of their shortest allowed times <= C`` (e.g. A100 tasks that
     may only use sizes 4 and 7 within C all need slices 0-3);
  3. for a workload, both bounds applied to the tasks of batches b, b+1, ...
     from the release of batch b (no task of them runs earlier).

  Each test is monotone in C, so the smallest feasible C is found exactly by
  scanning the breakpoints ``e_i(s) + t_i(s)``.

  ``lower_bound(problem, method="colgen", time_limit=...)`` raises it with
  the column-generation bound of :mod:`bounds.mig_colgen` (sessions'
  creates and destroys inside the columns; ``docs/models/mig_colgen.md``);
  :func:`colgen_bound` returns that search's report.
* :func:`approximation_factor` -- Sec. 5: 7/4 for one A30, (8g - 1)/(4g) for
  g A30s, 2 for the A100/H100 (reconfiguration times not counted).
* :func:`competitive_ratio` -- 2 * rho for online multi-batch concatenation
  (Sec. 5, after Shmoys, Wein and Williamson).

Examples
--------
>>> from instances import mig
>>> from bounds import mig as mig_bounds
>>> p = mig.generate(n=8, gpu="A100", seed=3)
>>> mig_bounds.area_bound(p) <= mig_bounds.lower_bound(p)
True
>>> mig_bounds.approximation_factor("A30"), mig_bounds.competitive_ratio("A100")
(1.75, 4.0)
"""

from __future__ import annotations

from typing import Iterable, Sequence, Union

from instances import gpus as _gpus
from instances.errors import InstanceError
from instances.gpus import GPUSpec
from instances.mig_problem import Problem, Task, Workload
from instances import options as _opt
from instances.options import known_options
from bounds.mig_colgen import ColgenReport, colgen_bound

__all__ = ["area_bound", "lower_bound", "bound_report", "approximation_factor", "competitive_ratio",
           "colgen_bound", "ColgenReport"]

ProblemLike = Union[Problem, Workload]


@known_options
def area_bound(problem: ProblemLike) -> float:
    """The paper's baseline (Sec. 6.4): ``sum_i min_s s * t_i(s) / #slices``.

    Ignores reconfiguration and release times; a valid lower bound on the
    optimal makespan of every variant.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> area_bound(p)  # min(4, 5, 6) / 4
    1.0
    """
    gpu = problem.gpu
    return sum(min(t.work(s) for s in t.sizes) for t in problem.tasks) / gpu.num_slices


def _options(task: Task, gpu: GPUSpec, release: float, create: bool) -> list[tuple[float, float, frozenset, float]]:
    """(earliest finish, time, occupied slices, area) of each placement the task may use.

    ``create``: the task's instance must still be created (from time 0).
    """
    out = []
    for p in gpu.placements:
        if p.size not in task.times:
            continue
        t = task.times[p.size]
        earliest = max(release, gpu.create_time[p.size] if create else 0.0)
        out.append((earliest + t, t, p.slices, p.size * t))
    return out


def _min_feasible(breakpoints: Iterable[float], load) -> float:
    """Smallest C >= min breakpoint with ``load(C) <= C``, for a load that is
    non-increasing and piecewise constant, changing only at the breakpoints."""
    pts = sorted(set(breakpoints))
    for k, c in enumerate(pts):
        value = load(c)
        if value == float("inf"):
            continue
        nxt = pts[k + 1] if k + 1 < len(pts) else float("inf")
        candidate = max(c, value)
        if candidate < nxt or nxt == float("inf"):
            return candidate
    return pts[-1]  # pragma: no cover - load is finite at the last breakpoint


def _bounds_for(tasks: Sequence[Task], releases: dict[str, float], gpu: GPUSpec, t0: float,
                create: bool) -> tuple[float, float]:
    """(moldable area bound, slice chain bound) for ``tasks``, none running before ``t0``."""
    if not tasks:
        return 0.0, 0.0
    opts = [_options(t, gpu, max(releases[t.name], t0), create) for t in tasks]
    pts = [o[0] for os_ in opts for o in os_]
    S = gpu.num_slices

    def area_load(c: float) -> float:
        total = 0.0
        for os_ in opts:
            allowed = [o[3] for o in os_ if o[0] <= c]
            if not allowed:
                return float("inf")
            total += min(allowed)
        return t0 + total / S

    def chain_load(c: float) -> float:
        worst = 0.0
        for k in range(S):
            total = 0.0
            for os_ in opts:
                allowed = [o for o in os_ if o[0] <= c]
                if not allowed:
                    return float("inf")
                if all(k in o[2] for o in allowed):
                    total += min(o[1] for o in allowed)
            worst = max(worst, total)
        return t0 + worst

    return _min_feasible(pts, area_load), _min_feasible(pts, chain_load)


@known_options
def bound_report(problem: ProblemLike) -> dict[str, float]:
    """Every bound :func:`lower_bound` combines, by name (seconds).

    Keys: ``area`` (the paper's baseline), ``longest`` (longest minimum task
    time), ``moldable_area``, ``slice_chain`` and ``lower_bound`` (their max).

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> bound_report(p)["moldable_area"], bound_report(p.without_reconfiguration())["moldable_area"]
    (1.63, 1.5)
    """
    gpu = problem.gpu
    # zero create/destroy times (a problem without reconfiguration) make every
    # create term below vanish
    reconfiguration = gpu.reconfigurable
    releases = problem.releases()
    batches = problem.batches if isinstance(problem, Workload) else (problem,)
    tc_min = min(gpu.create_time.values()) if reconfiguration else 0.0
    molded = chain = 0.0
    for b, batch in enumerate(batches):
        later = [t for bb in batches[b:] for t in bb.tasks]
        # instances may be created before a release, so the empty-GPU delay
        # only holds from time 0
        t0 = max(batch.release, tc_min)
        # with reconfiguration the create-before-run rule applies to every task
        m, c = _bounds_for(later, releases, gpu, t0 if b == 0 else batch.release,
                           reconfiguration and b == 0)
        molded, chain = max(molded, m), max(chain, c)
    longest = max((min(t.times.values()) + releases[t.name] for t in problem.tasks), default=0.0)
    report = {"area": area_bound(problem), "longest": longest, "moldable_area": molded, "slice_chain": chain}
    report["lower_bound"] = max(report.values())
    return report


@known_options
def lower_bound(problem: ProblemLike, method: str = "basic", time_limit: float | None = 60.0) -> float:
    """A proven lower bound on the optimal makespan (see the module docstring).

    Parameters
    ----------
    problem
        A single batch or a multi-batch workload (release times respected).
        Create times count when the GPU has them; on
        ``problem.without_reconfiguration()`` they are zero.
    method
        ``"basic"``: the closed-form bounds above (instant); ``"colgen"``: also the
        column-generation bound of :mod:`bounds.mig_colgen` started from them.
    time_limit
        Seconds for ``method="colgen"`` (``None``: until its search converges); a
        stopped search keeps only the makespans it proved infeasible.

    Examples
    --------
    >>> from instances import mig
    >>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    >>> lower_bound(p)  # the create of 4@0 (0.13 s), then 1.5 s
    1.63
    >>> lower_bound(p.without_reconfiguration())
    1.5
    """
    _opt.choice(method, ("basic", "colgen"), "method")
    time_limit = _opt.time_limit(time_limit)  # checked for "basic" too: a bad value is never silently unused
    basic = bound_report(problem)["lower_bound"]
    if method == "basic":
        return basic
    return max(basic, colgen_bound(problem, time_limit=time_limit, lower=basic).bound)


@known_options
def approximation_factor(gpu: GPUSpec | str, gpus: int = 1) -> float:
    """FAR's approximation factor rho (Sec. 5), reconfiguration times not counted.

    7/4 for one A30 (Sec. 5.1), (8g - 1) / (4g) for g A30s used together, 2 for
    one A100 or H100 (Sec. 5.2). The paper proves nothing for several A100/H100
    or other GPUs; those raise :class:`InstanceError`.

    Examples
    --------
    >>> approximation_factor("A30"), approximation_factor("A30", gpus=2), approximation_factor("H100")
    (1.75, 1.875, 2.0)
    """
    g = gpus
    name = _gpus.get(gpu).name
    if not isinstance(g, int) or g < 1:
        raise InstanceError(f"gpus must be a positive integer, got {g!r}", field="gpus")
    if name == "A30":
        return (8 * g - 1) / (4 * g)
    if name in ("A100", "H100"):
        if g != 1:
            raise InstanceError(f"Sec. 5.2 proves the factor 2 for one {name} only, not {g}", field="gpus")
        return 2.0
    raise InstanceError(f"no approximation factor is proven for GPU {name!r} (Sec. 5 covers A30, A100, H100)",
                        field="gpu")


@known_options
def competitive_ratio(gpu: GPUSpec | str, gpus: int = 1) -> float:
    """2 * rho: online batch concatenation vs the offline optimum (Sec. 5, Shmoys-Wein-Williamson).

    Examples
    --------
    >>> competitive_ratio("A30")
    3.5
    """
    return 2.0 * approximation_factor(gpu, gpus=gpus)


@known_options
def phase2_bound(gpu: GPUSpec | str, work: float, h_max: float) -> float:
    """FAR paper, Sec. 5: the bound on Algorithm 1's makespan without reconfiguration times.

    For one allocation of total work ``work`` (sum of ``s * t(s)``) whose
    longest task takes ``h_max``, FAR's phase 2 ends by
    ``W/4 + 3/4 h_max`` on an A30 (Sec. 5.1) and by
    ``max(W/6 + 5/6 h_max, W/4, W/5 + 3/5 h_max)`` on an A100/H100 (Sec. 5.2).

    Raises
    ------
    InstanceError
        For a GPU whose slices and sizes are not those of Sec. 5.

    Examples
    --------
    >>> phase2_bound("A30", 8.0, 2.0)
    3.5
    """
    gpu = _gpus.get(gpu)
    if gpu.num_slices == 4 and set(gpu.sizes) == {1, 2, 4}:
        return work / 4 + 0.75 * h_max
    if gpu.num_slices == 7 and set(gpu.sizes) == {1, 2, 3, 4, 7}:
        return max(work / 6 + 5 / 6 * h_max, work / 4, work / 5 + 0.6 * h_max)
    raise InstanceError(f"the FAR paper proves no phase-2 bound for {gpu.name}", field="gpu")


__all__ += ["phase2_bound"]
