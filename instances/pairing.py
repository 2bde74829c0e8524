"""Co-scheduling pairs under resource partitioning and power capping (co-scheduling paper).

The co-scheduling paper (Saba, Arima, Liu, Schulz: *Orchestrated
co-scheduling, resource partitioning, and power capping on CPU-GPU
heterogeneous systems*) takes a window of ``W`` jobs from a queue and
splits it into job sets of at most ``C`` jobs (Sec. 3.2). The sets run one
after another; the jobs of a set run side by side with the CPU cores and GPU
GPCs split between them and with one CPU and one GPU power cap whose sum is
within ``P_total``. The objective is the sum of the set times (Sec. 3.2),
where (Sec. 4.1.1)

* ``CoRunTime(JS, HC) = max_j Slowdown_j(JS, HC) * SoloRunAppTime_j(P_max)``
* ``SoloRunTime(JS, P_total) = sum_j SoloRunAppTime_j(P_total)``, each job
  alone with all resources and its own best caps ``OptP^c + OptP^g = P_total``.

This module gathers the family under one name; it holds the problem data and
nothing that optimises it:

* :class:`Job` -- a job and its profile (solo time at ``P_max`` and the
  features the analytic model reads); :func:`generate`, :func:`job_mix`
  (Table 6), :func:`load_jobs`, :func:`save_jobs` (``pairing_jobs``).
* :class:`ConfigSpace` -- the hardware configurations of Table 4;
  :class:`Config` -- one hardware configuration ``HC = {R^c, R^g, P^c, P^g}``
  (``pairing_space``).
* :class:`SlowdownModel` -- the interface ``slowdown(job, others, config)``
  with :class:`AnalyticModel` (documented assumptions, ``pairing_slowdown``)
  and :class:`TableModel` (measured slowdowns read from a CSV,
  ``pairing_table``).
* :class:`PairingProblem` -- queue + space + model + concurrency ``C``;
  :class:`WeightedQueue` -- the same partitioning problem with set times given
  directly (for random-weight tests of the matching and exact models)
  (``pairing_problem``).
* :class:`Costs` -- the one cost model (every set's time and best
  configuration) that heuristics and exact models read, built by
  :func:`costs_of` (:func:`search` / :func:`triple_costs` for a problem, the
  given times for a queue) (``pairing_costs``).
* :func:`load` / :func:`save` / :func:`from_dict` / :func:`to_dict` -- the
  problems' strict JSON form (``pairing_json``).
* :class:`Plan` / :class:`JobSet` -- the solution type (``pairing_plan``);
  :func:`check` -- the independent checker (plain loops over the scalar
  slowdown interface, ``pairing_check``).

Examples
--------
>>> from instances import pairing
>>> problem = pairing.PairingProblem(pairing.job_mix(1), pairing.ConfigSpace(p_total=350))
>>> [j.app for j in problem.jobs]
['gaussian', 'lud', 'pathfinder', 'streamcluster']
>>> len(problem.space.corun_configs(2)), len(problem.space.solo_configs())
(50, 5)
"""

from __future__ import annotations

from instances.errors import InstanceError
from instances.pairing_check import check, set_time, solo_time_at
from instances.pairing_costs import Costs, costs_of, search, triple_costs
from instances.pairing_json import MAX_JOBS, from_dict, load, save, to_dict
from instances.pairing_jobs import APPS, FEATURES, JOB_COLUMNS, JOB_MIXES, Job, generate, job_mix, load_jobs, save_jobs
from instances.pairing_plan import JobSet, Plan
from instances.pairing_problem import PairingProblem, WeightedQueue
from instances.pairing_slowdown import AnalyticModel, SlowdownModel
from instances.pairing_space import Config, ConfigSpace
from instances.pairing_table import SAMPLE_TABLE, TABLE_COLUMNS, TableModel

__all__ = [
    "Job", "Config", "ConfigSpace", "SlowdownModel", "AnalyticModel", "TableModel",
    "PairingProblem", "WeightedQueue", "JobSet", "Plan", "APPS", "JOB_MIXES",
    "generate", "job_mix", "load_jobs", "save_jobs", "check", "solo_time_at",
    "set_time", "SAMPLE_TABLE", "Costs", "costs_of", "search", "triple_costs",
    "load", "save", "from_dict", "to_dict",
]
