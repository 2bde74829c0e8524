"""The MIG family's heuristics, by display name: :data:`METHODS`.

The contract every entry keeps (and every new MIG heuristic must keep to be
listed here):

* it is a function ``method(problem) -> Schedule`` taking an
  :class:`instances.mig.Problem` (one batch) or an
  :class:`instances.mig.Workload` (several batches; no task starts before its
  batch's release);
* the schedule it returns passes :func:`instances.mig.check` against that
  problem, with the GPU's own create/destroy times (none are emitted when they
  are all zero, as after ``problem.without_reconfiguration()``);
* it is deterministic, and bad input raises
  :class:`~instances.errors.InstanceError` (times too large to sum included,
  see :func:`instances.mig_problem.check_scale`).

Benchmarks build their tables from :data:`METHODS` in its order. The names
are those the FAR paper's comparison uses (Sec. 6.5), and ``MIG-search`` is the
search of :mod:`heuristics.mig_search` (not in the paper); the FixPart names are
for the A100/H100 (on an A30, ``FixPart(7)`` is the whole 4-slice GPU).

Examples
--------
>>> from instances import mig
>>> from heuristics.mig import METHODS
>>> problem = mig.generate(n=10, gpu="A100", seed=0)
>>> list(METHODS)
['FAR', 'FAR without refinement', 'MIG-search', 'MISO-opt', 'FixPartBest', 'FixPart(7)', 'FixPart(1,...,1)']
>>> all(mig.check(problem, method(problem)) == [] for method in METHODS.values())
True
"""

from __future__ import annotations

from typing import Callable, Union

from heuristics import far, mig_search
from heuristics import far_baselines as baselines
from instances.mig_problem import Problem, Workload
from instances.mig_schedule import Schedule
from instances.options import known_options

__all__ = ["METHODS", "far_refined", "far_unrefined", "search"]


@known_options
def far_refined(problem: Union[Problem, Workload]) -> Schedule:
    """FAR, phases 1-3 (:func:`heuristics.far.schedule` with refinement)."""
    return far.schedule(problem, refine=True)


@known_options
def far_unrefined(problem: Union[Problem, Workload]) -> Schedule:
    """FAR without phase 3 (phases 1-2 only)."""
    return far.schedule(problem, refine=False)


@known_options
def search(problem: Union[Problem, Workload]) -> Schedule:
    """The MIG search from FAR (:func:`heuristics.mig_search.schedule`), seed 0.

    It runs its default budget of search steps with no wall limit: a wall
    limit would make the row depend on the machine's load, and the registry's
    methods are deterministic.
    """
    return mig_search.schedule(problem, time_limit=None)


#: Display name -> method, in table order.
METHODS: dict[str, Callable[[Union[Problem, Workload]], Schedule]] = {
    "FAR": far_refined,
    "FAR without refinement": far_unrefined,
    "MIG-search": search,
    "MISO-opt": baselines.miso_opt,
    "FixPartBest": baselines.fixpart_best,
    "FixPart(7)": baselines.fixpart_whole,
    "FixPart(1,...,1)": baselines.fixpart_ones,
}
