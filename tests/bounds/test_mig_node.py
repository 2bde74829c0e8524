"""Node lower bounds: valid against the proven optimum, and the single-GPU bounds' counterparts for g = 1."""

import pytest
from hypothesis import given, settings, strategies as st

from bounds import mig as mig_bounds
from bounds import mig_node as node_bounds
from instances import mig, mig_node
from instances.errors import OptionError
from instances.mig_node import NodeProblem
from milp import Status, solve_optimal


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["A30", "A100"]), st.integers(1, 7), st.integers(1, 4), st.integers(0, 10_000),
       st.sampled_from(sorted(mig.TIME_PRESETS)), st.booleans())
def test_bounds_never_exceed_the_optimum(gpu, n, g, seed, times, reconfiguration):
    p = mig_node.generate(n, gpu, gpus=g, times=times, seed=seed)
    p = p if reconfiguration else p.without_reconfiguration()
    res = solve_optimal(p, time_limit=60)
    assert res.status is Status.OPTIMAL
    report = node_bounds.bound_report(p)
    assert report["lower_bound"] == max(report["area"], report["longest"], report["moldable_area"])
    assert report["lower_bound"] <= res.objective * (1 + 1e-9)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["A30", "A100", "H100"]), st.integers(1, 30), st.integers(0, 10_000), st.booleans())
def test_one_gpu_matches_the_single_gpu_bounds(gpu, n, seed, reconfiguration):
    single = mig.generate(n, gpu, seed=seed)
    single = single if reconfiguration else single.without_reconfiguration()
    node = node_bounds.bound_report(NodeProblem.from_problem(single, 1))
    one = mig_bounds.bound_report(single)
    assert node["area"] == pytest.approx(one["area"], rel=1e-12)
    assert node["moldable_area"] == pytest.approx(one["moldable_area"], rel=1e-12)
    assert node["lower_bound"] <= one["lower_bound"] * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["A30", "A100"]), st.integers(1, 30), st.integers(0, 10_000))
def test_more_gpus_never_raise_the_bound(gpu, n, seed):
    values = [node_bounds.lower_bound(mig_node.generate(n, gpu, gpus=g, seed=seed)) for g in (1, 2, 4, 8)]
    assert values == sorted(values, reverse=True)
    longest = max(min(t.times.values()) for t in mig.generate(n, gpu, seed=seed).tasks)
    assert values[-1] >= longest


def test_area_over_all_slices_of_the_node():
    tasks = [mig.Task(f"t{i}", {1: 4.0, 2: 2.0, 4: 1.0}) for i in range(8)]
    p = NodeProblem("A30", tasks, gpus=2)
    assert node_bounds.area_bound(p) == 4.0
    assert node_bounds.lower_bound(p.without_reconfiguration()) == 4.0
    assert node_bounds.lower_bound(p) == pytest.approx(4.0 + 0.11)  # no task before the first create


def test_unknown_option():
    with pytest.raises(OptionError, match="unknown option"):
        node_bounds.lower_bound(NodeProblem("A30", [], gpus=2), gpus=2)
