"""Dispatch shim: ``milp.solve_optimal`` looks up ``milp.<module of the problem class>``.

The MIG problem classes live in ``instances/mig_problem.py`` (re-exported by
``instances/mig.py``), so :func:`milp.family_of` names the family
``mig_problem``; this module forwards to :func:`milp.mig.solve`. (A cleaner fix
belongs in ``milp/__init__.py``: map ``instances.mig_*`` modules to ``mig``.)
"""

from milp.mig import solve

__all__ = ["solve"]
