"""Real-time partitioning exact models: CP-SAT, Pyomo + HiGHS and enumeration agree; statuses and errors."""

import pytest

from instances import realtime as rt
from instances.errors import OptionError
from milp import Status, solve_optimal
from milp.realtime import solve


@pytest.mark.parametrize("n,util,seed", [(5, 3, 0), (6, 5, 1), (7, 6, 2)])
def test_backends_agree_on_the_density_optimum(n, util, seed):
    # CP-SAT (OR-Tools) and HiGHS (highspy) are both loaded in this one process.
    p = rt.generate(n=n, utilization=util, sms=68, seed=seed)
    results = [solve_optimal(p, backend=b, test="density", time_limit=30)
               for b in ("cpsat", "highs", "enumerate")]
    for r in results:
        assert r.status is Status.OPTIMAL
        assert r.objective == r.lower_bound == r.schedule.total_sms
        assert rt.check(p, r.schedule, test="density") == []
    assert len({r.objective for r in results}) == 1
    demand = solve(p, backend="enumerate", test="demand")
    assert demand.status is Status.OPTIMAL and rt.check(p, demand.schedule) == []
    assert demand.objective <= results[0].objective


def test_optimum_is_a_lower_bound_on_every_single_partitioning():
    # brute force over the sizes of one fixed partitioning: no partitioning beats the optimum
    p = rt.generate(n=4, utilization=3, sms=68, seed=3)
    opt = solve(p, backend="cpsat", test="density").objective
    from milp.realtime import min_size
    for groups in ([[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0, 3], [1, 2]], [[0], [1], [2], [3]],
                   [[0, 1, 2, 3]]):
        sizes = [min_size(p, g, "density") for g in groups]
        if None not in sizes:
            assert sum(sizes) >= opt


def test_capacity_and_infeasibility():
    p = rt.generate(n=5, utilization=4, sms=68, seed=4)
    need = solve(p, backend="enumerate", test="density").objective
    tight = rt.RealtimeProblem(p.tasks, sms=int(need) - 1)
    for backend in ("cpsat", "highs", "enumerate"):
        assert solve(tight, backend=backend, time_limit=20).status is Status.INFEASIBLE
    loose = solve(tight, backend="cpsat", capacity=False)
    assert loose.objective == need and loose.status is Status.OPTIMAL


def test_errors():
    p = rt.generate(n=4, utilization=2, seed=0)
    with pytest.raises(OptionError, match="enumerate"):
        solve(p, backend="cpsat", test="demand")
    with pytest.raises(OptionError, match="backend"):
        solve(p, backend="gurobi")
    with pytest.raises(OptionError, match="unknown option"):
        solve(p, reconfiguration=True)
    with pytest.raises(OptionError, match="n <= 14"):
        solve(rt.generate(n=15, utilization=2, seed=0), backend="enumerate")
