"""The MIG search (heuristics/mig_search.py): checked, never worse than FAR, close to the optimum."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far, mig_search
from heuristics.far_tree import Tree, replay
from instances import mig
from instances.errors import InstanceError, OptionError

WORKLOADS = sorted(mig.SCALING_PRESETS)


@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(0, 15), seed=st.integers(0, 10_000),
       reconf=st.booleans(), origin=st.sampled_from([0.0, 0.0, 3.5]))
def test_load_evaluator_times_like_replay(gpu, n, seed, reconf, origin):
    p = mig.generate(max(n, 1), gpu, seed=seed)
    if not reconf:
        p = p.without_reconfiguration()
    tree = Tree(p.gpu)
    rng = random.Random(seed)
    node = [rng.randrange(tree.n) for _ in range(n)]
    lists = [[] for _ in range(tree.n)]
    load, count = [0.0] * tree.n, [0] * tree.n
    for j, v in enumerate(node):
        lists[v].append(j)
        load[v] += p.tasks[j].times[tree.size[v]]
        count[v] += 1
    durations = [p.tasks[j].times[tree.size[v]] for j, v in enumerate(node)]
    expected = replay(tree, lists, durations, origin).makespan
    assert mig_search._Loads(tree, origin).makespan(load, count) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 14), workload=st.sampled_from(WORKLOADS),
       seed=st.integers(0, 10_000), search_seed=st.integers(0, 3), reconf=st.booleans(),
       release=st.sampled_from([0.0, 0.0, 0.37, 25.0]))
def test_schedules_are_checked_deterministic_and_never_worse_than_far(gpu, n, workload, seed, search_seed, reconf,
                                                                      release):
    p = mig.generate(n, gpu, workload, seed=seed, release=release)
    if not reconf:
        p = p.without_reconfiguration()
    result = mig_search.plan(p, time_limit=None, seed=search_seed, evaluations=1500)
    s = result.schedule
    assert mig.check(p, s) == []
    assert sorted(r.task for r in s.tasks) == sorted(t.name for t in p.tasks)
    assert s.makespan == result.makespan <= far.schedule(p).makespan == result.far_makespan
    assert bool(s.reconfigurations) == reconf
    assert mig_search.schedule(p, time_limit=None, seed=search_seed, evaluations=1500) == s


def test_search_improves_on_far_where_far_is_far_from_the_optimum():
    # n = 12, GoodScaling, generator seed 0: FAR is 10.8 % above the proven optimum 91.2057 s (CP-SAT)
    p = mig.generate(12, "A100", "GoodScaling", seed=0)
    result = mig_search.plan(p, time_limit=None)
    assert result.stats["stopped"] == "budget"
    assert result.makespan < 0.95 * result.far_makespan
    assert result.makespan >= 91.2057 * (1 - 1e-6)  # never below the optimum


# Measured with the default budget on the 24 generated A100 batches n = 5 and 7, all three workloads, generator
# seeds 0-3, against CP-SAT optima: mean 1.0047, worst 1.0551 (FAR: mean 1.072, worst 1.285). The bound is that
# worst, rounded up; the instances below are the three of n = 5 where FAR is furthest from the optimum.
MEASURED_WORST_RATIO = 1.06


@pytest.mark.parametrize("workload, seed", [("MixedScaling", 1), ("GoodScaling", 2), ("GoodScaling", 3)])
def test_close_to_the_cpsat_optimum_on_small_batches(workload, seed):
    import milp

    p = mig.generate(5, "A100", workload, seed=seed)
    exact = milp.solve_optimal(p, backend="cpsat", time_limit=120)
    assert str(exact.status) == "OPTIMAL"
    s = mig_search.schedule(p, time_limit=None)
    assert mig.check(p, s) == []
    assert s.makespan >= exact.objective * (1 - 1e-6)
    assert s.makespan <= exact.objective * MEASURED_WORST_RATIO
    assert s.makespan < far.schedule(p).makespan  # FAR is 8 %, 15 % and 28 % above the optimum here


def test_time_limit_is_honoured():
    p = mig.generate(60, "A100", seed=4)
    t0 = time.perf_counter()
    result = mig_search.plan(p, time_limit=0.5, evaluations=10**9)
    elapsed = time.perf_counter() - t0
    assert result.stats["stopped"] == "time"
    assert elapsed < 0.5 + 1.0  # one check of the clock every 64 steps; slack for a loaded machine
    assert mig.check(p, result.schedule) == []


def test_workload_gets_fars_schedule():
    w = mig.generate_workload([4, 5], [0.0, 30.0], "A30", seed=1)
    assert mig_search.schedule(w) == far.schedule(w)


def test_zero_budget_is_far():
    p = mig.generate(9, "A100", seed=2)
    assert mig_search.schedule(p, evaluations=0) == far.schedule(p)


@pytest.mark.parametrize("kwargs, field", [
    ({"time_limit": 0}, "time_limit"), ({"time_limit": "1"}, "time_limit"), ({"seed": 1.5}, "seed"),
    ({"seed": True}, "seed"), ({"evaluations": -1}, "evaluations"), ({"evaluations": 2.0}, "evaluations"),
])
def test_bad_options_are_option_errors(kwargs, field):
    p = mig.generate(4, "A30", seed=0)
    with pytest.raises(OptionError, match=field):
        mig_search.schedule(p, **kwargs)


def test_unknown_options_are_refused():
    p = mig.generate(4, "A30", seed=0)
    with pytest.raises(OptionError, match="unknown option 'time_limt'"):
        mig_search.schedule(p, time_limt=1.0)
    with pytest.raises(OptionError, match="unknown option 'refine'"):
        mig_search.plan(p, refine=False)


def test_bad_problem_is_an_instance_error():
    with pytest.raises(InstanceError):
        mig_search.schedule("not a problem")


def test_compare_and_paper_show_the_search_as_its_own_row(capsys):
    from benchmarks import compare, paper_tables

    assert "MIG-search" in compare.parse_config([])[0].methods
    assert "MIG-search" in paper_tables.columns5(paper_tables.registry())
    p = mig.generate(8, "A100", seed=3)
    rows, _ = compare.evaluate(p, ["FAR", "MIG-search"], exact=False, timing_repeats=1)
    by_name = {r["method"]: r for r in rows}
    assert by_name["MIG-search"]["feasible"] and by_name["MIG-search"]["kind"] == "heuristic"
    assert by_name["MIG-search"]["makespan"] <= by_name["FAR"]["makespan"]
    assert compare.main(["--n", "4", "--instances", "1", "--methods", "FAR,MIG-search", "--markdown", "--quiet"]) == 0
    table = capsys.readouterr().out
    assert any(line.startswith("| MIG-search |") for line in table.splitlines())
