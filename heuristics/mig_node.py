"""The heuristics of a node of g MIG GPUs (family ``mig_node``), by display name: :data:`METHODS`.

The registry the family contract names ``heuristics.<family>.METHODS``
(docs/architecture.md); the methods are FAR on a node
(:mod:`heuristics.far_node`). Every entry is a deterministic function
``method(problem) -> NodeSchedule`` of an
:class:`instances.mig_node.NodeProblem` whose schedule passes
:func:`instances.mig_node.check`.

Examples
--------
>>> from instances import mig_node
>>> from heuristics.mig_node import METHODS
>>> problem = mig_node.generate(6, "A30", gpus=2, seed=0)
>>> list(METHODS)
['FAR', 'FAR without refinement']
>>> all(mig_node.check(problem, method(problem)) == [] for method in METHODS.values())
True
"""

from __future__ import annotations

from heuristics.far_node import METHODS

__all__ = ["METHODS"]
