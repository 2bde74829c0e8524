"""The MIG heuristic registry (heuristics/mig.py): every method keeps the contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics.mig import METHODS
from instances import gpus, mig
from instances.errors import InstanceError

WORKLOADS = sorted(mig.SCALING_PRESETS)
TIMES = sorted(mig.TIME_PRESETS)


def test_names_are_the_compare_table_rows():
    from benchmarks import compare

    assert list(METHODS) == [m for m in compare.METHODS if m != "OPT"]
    # until benchmarks.compare builds its rows from the registry, its functions must agree with it
    if hasattr(compare, "_heuristics"):
        p = mig.generate(9, "A100", seed=5)
        theirs = dict(compare._heuristics(p.gpu))
        assert list(theirs) == list(METHODS)
        for name, method in METHODS.items():
            assert method(p) == theirs[name](p), name


@settings(max_examples=25)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 30), workload=st.sampled_from(WORKLOADS),
       times=st.sampled_from(TIMES), seed=st.integers(0, 10_000), reconf=st.booleans(),
       release=st.sampled_from([0.0, 0.0, 0.37, 25.0]))
def test_every_method_returns_a_checked_schedule(gpu, n, workload, times, seed, reconf, release):
    p = mig.generate(n, gpu, workload, times, seed=seed)
    if release:
        p = mig.Problem(p.gpu, p.tasks, release=release)
    if not reconf:
        p = p.without_reconfiguration()
    for name, method in METHODS.items():
        s = method(p)
        assert mig.check(p, s) == [], name
        assert {r.task for r in s.tasks} == {t.name for t in p.tasks}, name
        assert bool(s.reconfigurations) == reconf, name
        if name != "MIG-search":  # its determinism has its own test (test_mig_search.py); a run costs seconds
            assert method(p) == s, name  # deterministic


@settings(max_examples=10)
@given(gpu=st.sampled_from(["A30", "A100"]), sizes=st.lists(st.integers(1, 8), min_size=1, max_size=3),
       gap=st.sampled_from([0.0, 5.0, 40.0]), seed=st.integers(0, 10_000), reconf=st.booleans())
def test_every_method_handles_workloads(gpu, sizes, gap, seed, reconf):
    w = mig.generate_workload(sizes, [i * gap for i in range(len(sizes))], gpu, seed=seed)
    if not reconf:
        w = w.without_reconfiguration()
    for name, method in METHODS.items():
        assert mig.check(w, method(w)) == [], name


def test_bad_input_is_an_instance_error():
    huge = mig.Problem("A30", [mig.Task(f"t{i}", {s: 1e308 for s in gpus.get("A30").sizes}) for i in range(3)])
    for name, method in METHODS.items():
        with pytest.raises(InstanceError, match="too large"):
            method(huge)
        with pytest.raises(InstanceError):
            method("not a problem")
