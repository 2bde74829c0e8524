"""milp.solve_optimal dispatches on the problem's family, whatever instances/ module defines the class."""

import pytest

from instances import mig
from milp import Status, family_of, solve_optimal


def test_mig_problem_and_workload_dispatch_to_milp_mig():
    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 3.0, 2: 2.0, 4: 1.2})])
    assert family_of(p) == "mig"
    assert family_of(mig.Workload("A30", [p])) == "mig"
    res = solve_optimal(p.without_reconfiguration(), backend="cpsat", reconfiguration=False, time_limit=20)
    assert res.status is Status.OPTIMAL
    # 4 slices: b on 2@0 (2.0) beside a on 2@2 (2.5) -> 2.5; a on 4@0 then b on 4@0 -> 2.7
    assert res.objective == pytest.approx(2.5, abs=1e-6)
    assert mig.check(p.without_reconfiguration(), res.schedule) == []


def test_non_problem_is_a_type_error():
    with pytest.raises(TypeError, match="not a problem type of a known family"):
        solve_optimal(object())
