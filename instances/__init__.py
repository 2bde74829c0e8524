"""Problem definitions: GPU models, problem data, generators, readers, schedule
types, the independent feasibility checkers and metrics.

This package imports none of the others (data flows instances -> heuristics /
milp / bounds -> benchmarks).
"""

from instances.errors import InstanceError

__all__ = ["InstanceError"]
