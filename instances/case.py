"""CASE on MIG: isolated and non-isolated jobs on fixed MIG partitions (CASE paper).

Implements the problem data of Porter, Chen and Pande, *Compiler-Assisted
Scheduling for Multi-Instance GPUs* (GPGPU'22):

* **Nodes** with a fixed MIG partition (Sec. 3, Table 1): configurations
  A, B, C are 1, 2 and 4 A30s, each split into 4 x 1g.6gb; D is one A100
  split into 2 x 2g.10gb + 3 x 1g.5gb. Slice memory and valid placements
  come from :mod:`instances.gpus`.
* **Jobs** are sequences of *GPU tasks* (Sec. 2.1: a kernel launch and the
  operations its parameters touch), each with global memory, resident warps
  and a standalone duration, preceded by a host (CPU) phase. A job either
  demands isolation (it gets a whole instance to itself, Algorithm 1) or
  not (its tasks may be packed into any instance with free memory,
  Algorithm 2).
* A **slowdown model** for tasks sharing an instance (:class:`Slowdown`;
  the paper only measures 2.2 % mean and < 10 %, Table 2).
* A seeded **workload generator** (:func:`generate`) with the ratios
  1:0 ... 0:1 and the memory footprint ranges of Sec. 3.
* The **trace** type (:class:`Trace`) that simulators and exact models
  return, the independent checker :func:`check` and :func:`metrics`.

This module gathers the family under one name: the nodes
(``case_hardware``), jobs, slowdown model and workload with its JSON form
(``case_problem``), the generator (``case_generator``), traces
(``case_trace``), the checker (``case_check``) and the metrics
(``case_metrics``).

Examples
--------
>>> from instances import case
>>> w = case.generate("A", ratio="1:1", n=8, seed=0)
>>> len(w.jobs), sum(j.isolated for j in w.jobs), len(w.config.instances)
(8, 4, 4)
>>> [i.profile for i in case.config("D").instances]
['2g.10gb', '2g.10gb', '1g.5gb', '1g.5gb', '1g.5gb']
"""
from __future__ import annotations

from instances.case_check import check
from instances.case_generator import ISOLATED_POOL, ISOLATED_POOL_A100, NONISOLATED_POOL, RATIOS, generate
from instances.case_hardware import (BATCH_SIZE, CONFIGS, EPS, WARPS_PER_SLICE, CaseError, Config, Instance, config,
                                     custom_config)
from instances.case_metrics import memory_profile, metrics
from instances.case_problem import (MAX_TOTAL_TIME, MAX_WARPS, Job, Slowdown, Task, Workload, eligible_instances,
                                    from_dict, load, save)
from instances.case_trace import Hold, JobRun, TaskRun, Trace, load_trace

__all__ = [
    "Instance", "Config", "Task", "Job", "Slowdown", "Workload", "TaskRun", "Hold", "JobRun", "Trace",
    "CaseError", "config", "custom_config", "CONFIGS", "RATIOS", "BATCH_SIZE", "generate", "check",
    "metrics", "memory_profile", "eligible_instances", "WARPS_PER_SLICE", "MAX_WARPS",
    "load", "save", "from_dict", "load_trace",
]
