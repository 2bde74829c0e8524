"""A reference for the pairing family's configuration search, for tests only.

:func:`plain_search` computes the same :class:`~instances.pairing.Costs` as
:func:`instances.pairing.search` with plain Python loops over the scalar
slowdown interface, so that the vectorised search can be checked against it.
"""

from __future__ import annotations

import numpy as np

from instances.pairing import Costs, PairingProblem


def plain_search(problem: PairingProblem) -> Costs:
    """Reference for :func:`search`: plain Python loops over the scalar interface.

    Slow; for tests on small windows.

    Examples
    --------
    >>> from instances.pairing import job_mix, search
    >>> p = PairingProblem(job_mix(1))
    >>> bool(np.allclose(plain_search(p).corun, search(p).corun))
    True
    """
    jobs, space = problem.jobs, problem.space
    W = len(jobs)
    solo, solo_cfg = np.empty(W), []
    for a, job in enumerate(jobs):
        best = None
        for cfg in space.solo_configs():
            tt = problem.slowdown(job, (), cfg) * job.solo_time
            if best is None or tt < best[0]:
                best = (tt, cfg)
        solo[a] = best[0]
        solo_cfg.append(best[1])
    pair_cfgs = space.corun_configs(2)
    corun = np.full((W, W), np.inf)
    corun_k = np.full((W, W), -1, dtype=np.int64)
    for a in range(W):
        for b in range(a + 1, W):
            best = None
            for k, cfg in enumerate(pair_cfgs):
                ta = problem.slowdown(jobs[a], (jobs[b],), cfg) * jobs[a].solo_time
                tb = problem.slowdown(jobs[b], (jobs[a],), cfg.permuted((1, 0))) * jobs[b].solo_time
                tt = max(ta, tb)
                if best is None or tt < best[0]:
                    best = (tt, k)
            corun[a, b] = corun[b, a] = best[0]
            corun_k[a, b] = corun_k[b, a] = best[1]
    return Costs(tuple(j.name for j in jobs), solo, solo_cfg, corun, corun_k, pair_cfgs)
