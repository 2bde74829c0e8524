"""Heuristics: FAR and every baseline and heuristic from the papers the toolkit implements (docs/references.md).

One module per problem family, each with a ``METHODS`` registry (display
name -> method) that the benchmarks build their tables from:

* MIG: ``far`` (FAR, the entry point; its chain ``far_tree`` -> ``far_refine``
  -> ``far_phase2`` -> ``far_report`` -> ``far_batch`` -> ``far_multibatch``,
  and ``far_cli``), ``far_baselines`` (MISO-opt, FixPart), ``mig_search``
  (local search from FAR), ``mig_plans`` (list-schedule and fixed-assignment
  plans, the exact backends' warm starts), ``mig`` (the registry);
* a node of g MIG GPUs: ``far_node`` (FAR on a node), ``mig_node`` (the registry);
* ``hetero`` (weighted tardiness on heterogeneous GPUs), ``pairing``
  (co-scheduling pairs), ``realtime`` (real-time partitioning), ``case``
  (CASE packing).

Heuristics import ``instances`` and ``bounds`` only, never ``milp`` or
``benchmarks`` (docs/architecture.md).
"""

#: The package exports nothing itself: import its modules (``from heuristics import far``).
__all__: list[str] = []
