"""Slowdown models of the pairing family: the interface of Sec. 4.1 and the analytic model.

The co-scheduling paper learns ``Slowdown_j(JS, HC)`` with a neural network
(Sec. 4.1.2); :class:`AnalyticModel` stands in for it with documented
assumptions. Measured slowdowns: :class:`instances.pairing_table.TableModel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from instances.errors import InstanceError
from instances.pairing_jobs import Job
from instances.pairing_space import Config


class SlowdownModel:
    """Interface of Sec. 4.1: ``Slowdown_j(JS, HC)``.

    ``slowdown(job, others, config)`` is the slowdown of ``job`` (relative to
    ``job.solo_time``, its time alone with everything and no cap) when it
    runs beside ``others`` (``()`` for a solo run) under ``config``, whose
    shares list ``job`` first and then ``others`` in order -- the paper's NN
    reorders its inputs the same way (Sec. 4.1.2).

    ``set_slowdowns`` evaluates many sets and configurations at once; the
    default loops over ``slowdown`` so that any model plugs in, subclasses
    override it with numpy.
    """

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        raise NotImplementedError

    def set_slowdowns(self, jobs: Sequence[Job], sets: np.ndarray,
                      configs: Sequence[Config]) -> np.ndarray:
        """Slowdowns ``S[m, p, k]`` of job ``sets[m, p]`` in set ``m`` under ``configs[k]``.

        ``configs`` list shares in the set's order (``sets[m, 0]`` first).
        """
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        out = np.empty((m, c, len(configs)))
        for p in range(c):
            order = [p] + [q for q in range(c) if q != p]
            views = [cfg.permuted(order) for cfg in configs]
            for i in range(m):
                job = jobs[sets[i, p]]
                others = tuple(jobs[sets[i, q]] for q in order[1:])
                for k, cfg in enumerate(views):
                    out[i, p, k] = self.slowdown(job, others, cfg)
        return out


@dataclass(frozen=True)
class AnalyticModel(SlowdownModel):
    """A transparent slowdown model standing in for the paper's neural network.

    Assumptions (each a simplification we chose; the paper learns the
    slowdown from 18 counters instead, Sec. 4.1.2 / Table 5):

    1. *Phases.* A job alternates CPU phases (fraction ``1 - g`` of its solo
       time) and GPU phases (fraction ``g = gpu_share``) that do not overlap.
    2. *Partitioning.* A phase scales with its share by Amdahl's law:
       ``A_c = (1 - p_c) + p_c * 32 / cores``, ``A_g = (1 - p_g) + p_g * 8 / gpcs``.
    3. *Compute vs memory.* A phase is a compute part ``1 - m`` that runs at
       the chip's clock and a memory part ``m`` that does not speed up with
       the clock but suffers bandwidth contention.
    4. *Contention.* A co-runner ``o`` adds traffic to the shared memory (host
       DDR4 for CPU phases; the L2 and HBM that all GPCs share for GPU
       phases): ``kappa_c = 1 + sum_o (1 - g_o) m_c,o cores_o / 32`` and
       ``kappa_g = 1 + sum_o g_o m_g,o gpcs_o / 8`` multiply the memory part.
    5. *Power capping.* The cap is chip-level. The chip's demand while the
       job is in a phase is ``idle + dyn * (own share * (1 - m/2) + sum_o
       duty_o * share_o * (1 - m_o/2))`` (memory-bound code draws less;
       co-runners count with their duty cycle), ``idle + dyn`` is the TDP
       (250 W for the 2990WX and the A100 PCIe). A cap below the demand
       lowers the clock to ``((cap - idle) / (demand - idle)) ** exponent``
       (``exponent = 1/2``: dynamic power between ``f^2`` and ``f^3``).

    The slowdown is ``(1 - g) A_c ((1 - m_c)/s_c + m_c kappa_c) + g A_g ((1 - m_g)/s_g
    + m_g kappa_g)``; it is 1 for a solo run with all resources and no cap and
    never grows when a cap grows. (A larger own share can slow a job: it also
    raises the chip's power demand under the same cap.)

    Examples
    --------
    >>> m = AnalyticModel(); j = Job("x", "lud", 10.0)
    >>> m.slowdown(j, (), Config((32,), (8,), 250, 250))
    1.0
    >>> m.slowdown(j, (Job("y", "srad", 5.0),), Config((16, 16), (4, 3), 175, 175)) > 1
    True
    """

    cpu_idle: float = 50.0
    cpu_dyn: float = 200.0
    gpu_idle: float = 50.0
    gpu_dyn: float = 200.0
    exponent: float = 0.5
    ref_cores: int = 32
    ref_gpcs: int = 8

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        if len(config.cores) != 1 + len(others):
            raise InstanceError(f"{config} has {len(config.cores)} shares for "
                                f"{1 + len(others)} job(s)", task=job.name, field="config")
        feats = [_feature_array([j]) for j in (job, *others)]
        cores = [np.array([[float(c)]]) for c in config.cores]
        gpcs = [np.array([[float(g)]]) for g in config.gpcs]
        caps = (np.array([[float(config.cpu_cap)]]), np.array([[float(config.gpu_cap)]]))
        return float(self._formula(feats, cores, gpcs, *caps)[0, 0])

    def set_slowdowns(self, jobs, sets, configs):
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        F = _feature_array(jobs)                      # (n, 6)
        C = np.array([cfg.cores for cfg in configs], float)   # (K, c)
        G = np.array([cfg.gpcs for cfg in configs], float)
        pc = np.array([cfg.cpu_cap for cfg in configs], float)[None, :]
        pg = np.array([cfg.gpu_cap for cfg in configs], float)[None, :]
        out = np.empty((m, c, len(configs)))
        for p in range(c):
            order = [p] + [q for q in range(c) if q != p]
            feats = [F[sets[:, q]][:, None, :] for q in order]          # (m, 1, 6)
            cores = [C[None, :, q] for q in order]                      # (1, K)
            gpcs = [G[None, :, q] for q in order]
            out[:, p, :] = self._formula(feats, cores, gpcs, pc, pg)
        return out

    def _formula(self, feats, cores, gpcs, pc, pg):
        """Assumptions 1-5 with numpy broadcasting; ``feats[0]`` is the job itself.

        ``feats[i][..., k]`` are the columns of :func:`_feature_array`.
        """
        if np.any(np.asarray(pc) <= self.cpu_idle) or np.any(np.asarray(pg) <= self.gpu_idle):
            raise InstanceError(f"caps must exceed the idle power ({self.cpu_idle:g} W CPU, "
                                f"{self.gpu_idle:g} W GPU) of the analytic model", field="caps")

        def col(f, k):
            return f[..., k]

        own = feats[0]
        g, p_c, p_g, m_c, m_g = (col(own, k) for k in range(1, 6))
        a_c = (1 - p_c) + p_c * self.ref_cores / cores[0]
        a_g = (1 - p_g) + p_g * self.ref_gpcs / gpcs[0]
        load_c = cores[0] / self.ref_cores * (1 - m_c / 2)
        load_g = gpcs[0] / self.ref_gpcs * (1 - m_g / 2)
        kap_c = 1.0
        kap_g = 1.0
        for f, c, q in zip(feats[1:], cores[1:], gpcs[1:]):
            go, mco, mgo = col(f, 1), col(f, 4), col(f, 5)
            share_c, share_g = c / self.ref_cores, q / self.ref_gpcs
            kap_c = kap_c + (1 - go) * mco * share_c
            kap_g = kap_g + go * mgo * share_g
            load_c = load_c + (1 - go) * share_c * (1 - mco / 2)
            load_g = load_g + go * share_g * (1 - mgo / 2)
        s_c = np.minimum(1.0, ((pc - self.cpu_idle) / (self.cpu_dyn * load_c)) ** self.exponent)
        s_g = np.minimum(1.0, ((pg - self.gpu_idle) / (self.gpu_dyn * load_g)) ** self.exponent)
        return ((1 - g) * a_c * ((1 - m_c) / s_c + m_c * kap_c)
                + g * a_g * ((1 - m_g) / s_g + m_g * kap_g))


def _feature_array(jobs: Sequence[Job]) -> np.ndarray:
    """Columns: solo_time, gpu_share, cpu_parallel, gpu_parallel, cpu_mem, gpu_mem."""
    return np.array([[j.solo_time, j.gpu_share, j.cpu_parallel, j.gpu_parallel, j.cpu_mem,
                      j.gpu_mem] for j in jobs], float).reshape(len(jobs), 6)
