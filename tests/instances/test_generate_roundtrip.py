"""Every family's generator writes only what its own loader reads back.

Property: for each family of ``milp.FAMILIES``, ``generate`` called with
random arguments, small valid ones and absurd ones mixed (sizes of 10**12 or
10**400, negative or fractional counts, NaN, infinite or huge times, bad
seeds, unknown names), either refuses them with one line of the toolkit's
own errors (``OptionError`` for an argument out of range, ``UnknownGPUError``
for a GPU name), or returns a problem that ``save`` then ``load`` give back
equal. Never a
``MemoryError``, an ``OverflowError``, numpy's errors or an endless loop, and
never a file the family's ``load`` refuses (``realtime.generate(sms=10**6)``
once wrote one).
"""

from __future__ import annotations

import math
import os
import signal
import tempfile

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import milp
from instances import case, hetero, mig, mig_node, pairing
from instances import realtime as rt
from instances.errors import InstanceError, OptionError

ABSURD_INTS = st.sampled_from([0, -1, 10**6, 10**9, 10**12, 10**400, 2.5, True, float("nan"), "5", None])
ABSURD_REALS = st.sampled_from([0.0, -1.0, -0.0, 5e-324, 1e-300, 1e300, 1e308, 10**400, float("nan"), float("inf"),
                                True, "1", None])
SEEDS = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([-1, 2**32, 2**64, 2.5, True, "x", None]))


def sizes(hi: int = 12):
    return st.one_of(st.integers(1, hi), ABSURD_INTS)


def reals(lo: float, hi: float):
    return st.one_of(st.floats(lo, hi, allow_nan=False), ABSURD_REALS)


def _timeout(*_):
    raise TimeoutError("generate ran past 20 s on a tiny or absurd argument")


def _roundtrip(family, make, save, load):
    """``make()`` refuses with one InstanceError line, or save/load give back an equal problem."""
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(20)
    try:
        try:
            problem = make()
        except InstanceError as exc:  # OptionError included
            assert "\n" not in str(exc)
            return
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{family}.json")
        save(problem, path)
        assert load(path) == problem, f"{family}: load(save(p)) != p"


COMMON = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_family_is_covered():
    assert set(milp.FAMILIES) == {"mig", "hetero", "pairing", "realtime", "case", "mig_node"}


@COMMON
@given(n=sizes(), gpu=st.sampled_from(["A30", "A100", "H100", "nope"]),
       workload=st.sampled_from(["PoorScaling", "MixedScaling", "GoodScaling", "x", {1: 100.0}, {1: float("nan")}]),
       times=st.one_of(st.sampled_from(["WideTimes", "NarrowTimes", "x"]),
                       st.tuples(reals(1e-3, 1e3), reals(1e-3, 1e3))),
       seed=SEEDS, p_sup=reals(0, 1), release=reals(0, 1e6),
       prefix=st.one_of(st.sampled_from(["t", "", "a b", "x" * 300, "\n", 5]), st.text(max_size=8)))
def test_mig(n, gpu, workload, times, seed, p_sup, release, prefix):
    _roundtrip("mig", lambda: mig.generate(n, gpu, workload, times, seed, p_sup=p_sup, release=release, prefix=prefix),
               mig.save, mig.load)


@COMMON
@given(n=sizes(), gpus=sizes(4), seed=SEEDS, gpu=st.sampled_from(["A30", "A100"]))
def test_mig_node(n, gpus, seed, gpu):
    _roundtrip("mig_node", lambda: mig_node.generate(n, gpu, gpus=gpus, seed=seed), mig_node.save, mig_node.load)


@COMMON
@given(n=st.one_of(st.integers(0, 12), ABSURD_INTS),
       gpus=st.one_of(sizes(4), st.sampled_from([("T4",), ("T4", "H100"), (), ("nope",)])),
       tightness=reals(0, 1), rdd=reals(0.01, 1), load=reals(0.1, 2), median=reals(1, 100), sigma=reals(0, 2),
       seed=SEEDS, unfit=st.one_of(st.integers(0, 3), ABSURD_INTS))
def test_hetero(n, gpus, tightness, rdd, load, median, sigma, seed, unfit):
    _roundtrip("hetero", lambda: hetero.generate(n, gpus, tightness=tightness, rdd=rdd, load=load,
                                                 median_workload=median, sigma=sigma, seed=seed, unfit=unfit),
               hetero.save, hetero.load)


@COMMON
@given(W=sizes(), seed=SEEDS, size_range=st.tuples(reals(0.1, 3), reals(0.1, 3)), jitter=reals(0, 0.5))
@example(W=1, seed=0, size_range=(1.0, 1.0), jitter=-0.0)   # found by hypothesis: numpy's uniform(0.0, -0.0) raised
def test_pairing(W, seed, size_range, jitter):
    _roundtrip("pairing", lambda: pairing.PairingProblem(pairing.generate(W, seed, size_range=size_range,
                                                                          jitter=jitter)),
               pairing.save, pairing.load)


@COMMON
@given(n=sizes(), utilization=reals(0.1, 8), sms=st.one_of(st.integers(1, 132), ABSURD_INTS), prm=reals(0, 1),
       seed=SEEDS, deadline_factor=reals(0.1, 1), min_exec=reals(0.1, 10),
       periods=st.one_of(st.just((50, 100, 200)), st.lists(reals(1, 1e4), min_size=0, max_size=3)))
def test_realtime(n, utilization, sms, prm, seed, deadline_factor, min_exec, periods):
    _roundtrip("realtime", lambda: rt.generate(n, utilization, sms=sms, prm=prm, seed=seed, periods=periods,
                                               deadline_factor=deadline_factor, min_exec=min_exec),
               rt.save, rt.load)


@COMMON
@given(config=st.sampled_from(["A", "B", "C", "D", "E"]),
       ratio=st.sampled_from(["1:1", "2:1", "0:1", "1:0", "x", "-1:2", "1_0:1", (2, 1), (10**400, 1)]),
       n=st.one_of(st.integers(1, 12), ABSURD_INTS), small=st.booleans(), seed=SEEDS)
def test_case(config, ratio, n, small, seed):
    _roundtrip("case", lambda: case.generate(config, ratio, n, small=small, seed=seed), case.save, case.load)


@pytest.mark.parametrize("make", [
    lambda: mig.generate(10**12), lambda: mig_node.generate(10**12), lambda: hetero.generate(10**12),
    lambda: pairing.generate(10**12), lambda: rt.generate(10**12, 2.0), lambda: case.generate("A", n=10**12),
    lambda: rt.generate(4, 2.0, sms=10**6), lambda: mig_node.generate(3, gpus=10**6),
    lambda: hetero.generate(3, gpus=10**9), lambda: mig.generate(3, seed=-1), lambda: hetero.generate(3, seed="x"),
], ids=["mig", "mig_node", "hetero", "pairing", "realtime", "case", "realtime-sms", "mig_node-gpus", "hetero-gpus",
        "mig-seed", "hetero-seed"])
def test_absurd_sizes_are_refused_at_once_with_the_maximum(make):
    with pytest.raises(OptionError) as info:
        make()
    message = str(info.value)
    assert "\n" not in message and ("at most" in message or " to " in message), message


@pytest.mark.parametrize("config", ["A", "D"])
def test_the_largest_case_batch_fits_the_loader(config, tmp_path):
    """A sample of 2,000 jobs, scaled to the maximum with a quarter to spare, stays under the file limit."""
    from instances import case_generator, files

    case.save(case.generate(config, "1:2", n=2000, seed=2), tmp_path / "w.json")
    per_job = (tmp_path / "w.json").stat().st_size / 2000
    assert 1.25 * per_job * case_generator.MAX_JOBS < files.MAX_FILE_BYTES


def test_the_largest_batch_is_documented_once():
    from instances import console, mig_generator

    assert mig_generator.MAX_TASKS == console.MAX_TASKS
    assert math.isfinite(mig_generator.MAX_TASKS)
