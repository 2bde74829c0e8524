"""The two independent MIG formulations agree: CP-SAT (milp/mig_cpsat.py) and the Pyomo MILP
solved by HiGHS (milp/mig_pyomo.py), with and without reconfiguration, in one process."""

from __future__ import annotations

import pytest

from instances import mig
from milp import TOLERANCE, Status, solve_optimal

CASES = [("A30", "MixedScaling", 4, 0), ("A30", "PoorScaling", 4, 1), ("A30", "GoodScaling", 4, 2),
         ("A100", "MixedScaling", 4, 3), ("A100", "GoodScaling", 3, 4)]


def _agree(p, reconf):
    a = solve_optimal(p, backend="cpsat", reconfiguration=reconf, time_limit=30, workers=2, hint=False)
    b = solve_optimal(p, backend="highs", reconfiguration=reconf, time_limit=60, workers=1)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL, (a.status, b.status)
    target = p if reconf else p.without_reconfiguration()
    for res in (a, b):
        assert mig.check(target, res.schedule) == []
        assert res.gap <= TOLERANCE
    # each objective is feasible, each bound proven: they must interleave
    tol = 1e-9 * max(1.0, a.objective)
    assert a.lower_bound <= b.objective + tol
    assert b.lower_bound <= a.objective + tol
    # and both optima coincide within the contract's tolerance
    assert abs(a.objective - b.objective) <= 2 * TOLERANCE * max(a.objective, b.objective)
    return a, b


@pytest.mark.parametrize("gpu,preset,n,seed", CASES)
def test_backends_agree_without_reconfiguration(gpu, preset, n, seed):
    _agree(mig.generate(n=n, gpu=gpu, workload=preset, seed=seed), False)


@pytest.mark.parametrize("gpu,preset,n,seed", CASES[:3] + [("A100", "MixedScaling", 3, 3)])
def test_backends_agree_with_reconfiguration(gpu, preset, n, seed):
    _agree(mig.generate(n=n, gpu=gpu, workload=preset, seed=seed), True)


def test_backends_agree_on_a_workload_with_releases():
    w = mig.generate_workload([2, 2], [0.0, 10.0], gpu="A30", seed=6)
    _agree(w, False)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("reconf", [False, True])
def test_backends_agree_a100_n6(seed, reconf):
    _agree(mig.generate(n=6, gpu="A100", seed=seed), reconf)
