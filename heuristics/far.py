"""FAR: Family of Allocations and Repartitioning (FAR paper, Sec. 3-5).

FAR schedules moldable tasks on a MIG GPU: phase 1 builds a family of
allocations (a size per task, Sec. 3.1), phase 2 list-schedules each on the
repartitioning tree and keeps the best (Algorithm 1, Sec. 3.2), phase 3 moves
and swaps tasks between instances of the same size (Algorithm 2, Sec. 3.3).
Several batches with release times are concatenated online (Sec. 4).

This module is the entry point: :func:`plan` and :func:`schedule` take a
:class:`~instances.mig.Problem` (one batch) or a
:class:`~instances.mig.Workload` (several). The algorithm lives in a chain of
modules, each importing only the ones before it:

1. :mod:`heuristics.far_tree` -- the repartitioning tree as index lists and the
   exact timing (:func:`~heuristics.far_tree.replay`) of node task lists;
   the public API for other MIG heuristics;
2. :mod:`heuristics.far_refine` -- phase 3;
3. :mod:`heuristics.far_phase2` -- phase 2's simulations (Algorithm 1) and
   its lower bound;
4. :mod:`heuristics.far_report` -- the reports (:class:`FarPlan`,
   :class:`RepartitionTree`, :class:`TreeNode`);
5. :mod:`heuristics.far_batch` -- phases 1-3 for one batch;
6. :mod:`heuristics.far_multibatch` -- Sec. 4's concatenation;
7. this module; the command line is :mod:`heuristics.far_cli`.

Examples
--------
>>> from instances import mig
>>> from heuristics import far
>>> problem = mig.generate(n=12, gpu="A100", seed=0)
>>> p = far.plan(problem)
>>> mig.check(problem, p.schedule)
[]
>>> p.makespan <= p.phase2_makespan
True

Command line::

    python -m heuristics.far tasks.json --json schedule.json --plot gantt.png
    python -m heuristics.far tasks.json --gpu A30 --no-refine --ties reference     # --help for every option
"""

from __future__ import annotations

from typing import Any, Union

from heuristics import far_batch
from heuristics.far_batch import FarPlan, RepartitionTree, TreeNode, family, schedule_allocation
from heuristics.far_multibatch import MultiBatchPlan, check_concatenation, plan_workload
from instances import options as opt
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule

__all__ = ["plan", "schedule", "FarPlan", "MultiBatchPlan", "RepartitionTree", "TreeNode", "family",
           "schedule_allocation"]

_PLAN_OPTIONS = ("prune", "max_iterations", "min_improvement", "method", "max_ops", "ties")


@opt.typed
def plan(problem: Union[Problem, Workload], refine: bool = True, *, prune: bool = True, max_iterations: int = 100,
         min_improvement: float = 0.0, method: str = "move_swap", max_ops: int = 1000, ties: str = "ours",
         **unknown: Any) -> Union[FarPlan, MultiBatchPlan]:
    """FAR phases 1-3 for a batch (or Sec. 4's concatenation for a workload).

    A :class:`~instances.mig.Problem` is planned by
    :func:`heuristics.far_batch.plan`, whose docstring describes ``refine``,
    ``prune``, ``max_iterations``, ``min_improvement`` and ``ties``; a
    :class:`~instances.mig.Workload` by
    :func:`heuristics.far_multibatch.plan_workload`, which also takes
    ``method`` (one of :data:`heuristics.far_multibatch.CONCATENATIONS`) and
    ``max_ops`` (for a single batch these two are checked and have no effect).
    Returns a :class:`FarPlan` (a :class:`MultiBatchPlan` for a workload);
    raises :class:`~instances.errors.InstanceError` for a bad problem and
    :class:`~instances.errors.OptionError` for a bad or unknown option.

    Examples
    --------
    >>> from instances import mig
    >>> p = plan(mig.generate(n=20, gpu="A30", seed=1))
    >>> sorted(p.stats)[:3]
    ['allocation_index', 'allocations', 'allocations_pruned']
    >>> plan(mig.generate(n=5, gpu="A30", seed=1), refne=False)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: far.plan: unknown option 'refne'
    """
    opt.no_unknown(unknown, "far.plan")
    if isinstance(problem, Workload):
        return plan_workload(problem, method, refine, max_ops=max_ops, prune=prune, max_iterations=max_iterations,
                             min_improvement=min_improvement, ties=ties)
    check_concatenation(method, max_ops)
    return far_batch.plan(problem, refine, prune=prune, max_iterations=max_iterations,
                          min_improvement=min_improvement, ties=ties)


@opt.typed
def schedule(problem: Union[Problem, Workload], refine: bool = True, **options: Any) -> Schedule:
    """FAR's schedule (feasible for :func:`instances.mig.check`); the options are those of :func:`plan`.

    Examples
    --------
    >>> from instances import mig
    >>> problem = mig.generate(n=8, gpu="A30", seed=2)
    >>> mig.check(problem, schedule(problem))
    []
    """
    opt.no_unknown({k: v for k, v in options.items() if k not in _PLAN_OPTIONS}, "far.schedule")
    return plan(problem, refine=refine, **options).schedule


if __name__ == "__main__":
    from heuristics.far_cli import PROG, main
    from instances.console import run_cli

    run_cli(main, prog=PROG)
