"""Weighted-tardiness scheduling on heterogeneous GPUs (the heterogeneous-GPU scheduling paper).

The family under one name: problem data, validation, JSON load/save
(``hetero_problem``), a seeded generator (``hetero_generator``), the
OR-Library weighted-tardiness files, generator and shipped wt40 set
(``hetero_orlib``), the schedule type (``hetero_schedule``), the independent
checker (``hetero_check``) and the performance metrics of the
heterogeneous-GPU scheduling paper (``hetero_metrics``).

Model (heterogeneous-GPU scheduling paper, Sec. I.B): task ``i`` has workload ``L_i``, memory demand
``m_i`` (GB), deadline ``d_i``, weight ``w_i`` and arrival ``a_i``; GPU ``j``
has speed ``v_j`` (workload per time unit) and memory ``M_j`` (GB). Task
``i`` runs on GPU ``j`` for ``p_ij = L_i / v_j`` time units, without
preemption, only if ``m_i <= M_j`` (eq. 3), never before ``a_i`` (eq. 5),
one task at a time per GPU (eq. 6). The objective is the total weighted
tardiness ``sum_i w_i max(0, c_i - d_i)`` (eq. 1).

A task whose memory demand exceeds every GPU's memory cannot be scheduled at
all (the MILP (1)-(6) would be infeasible). We keep such tasks in the problem,
list them in :attr:`HeteroProblem.unfit`, and every schedule must report them
in :attr:`Schedule.unscheduled`; the objective and metrics are over the
scheduled tasks.

Examples
--------
>>> problem = generate(n=6, gpus=("T4", "A100-80GB"), seed=0)
>>> problem.n, problem.m
(6, 2)
>>> wt = orlib_wt40(1)          # OR-Library wt40 instance 1, one GPU
>>> wt.n, wt.m, orlib_wt40_optimum(1)
(40, 1, 913)
"""
from __future__ import annotations

from instances.hetero_check import TOL, check
from instances.hetero_generator import GPU_MODELS, MEMORY_LEVELS, MEMORY_PROBS, generate
from instances.hetero_metrics import Metrics, metrics
from instances.hetero_orlib import (ORLIB_RDD, ORLIB_TF, generate_orlib, generate_orlib_set, orlib_wt40,
                                    orlib_wt40_all, orlib_wt40_optimum, parse_orlib, read_orlib, read_orlib_values,
                                    write_orlib)
from instances.hetero_problem import GPU, MAX_TOTAL, HeteroProblem, Task, from_dict, load, save
from instances.hetero_schedule import Assignment, Schedule, evaluate_sequences, weighted_tardiness

__all__ = [
    "Task", "GPU", "HeteroProblem", "Assignment", "Schedule", "Metrics",
    "GPU_MODELS", "generate", "load", "save", "from_dict",
    "orlib_wt40", "orlib_wt40_all", "orlib_wt40_optimum", "parse_orlib", "read_orlib",
    "read_orlib_values", "write_orlib", "generate_orlib", "generate_orlib_set", "ORLIB_TF", "ORLIB_RDD",
    "check", "metrics", "evaluate_sequences", "weighted_tardiness",
]
