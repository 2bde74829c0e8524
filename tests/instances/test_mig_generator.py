"""The Sec. 6.3 generator: reproducibility, class counts (footnote 8), and distribution properties."""

import math

import numpy as np
import pytest

from instances import gpus, mig
from instances.errors import InstanceError
from instances.mig_generator import DEFAULT_P_SUP, P_TRANSITION, _task_times


def step_r(times, k):
    """r of the step k -> k+1 recovered from t(k+1) = (k + r)/(k + 1) t(k)."""
    return (k + 1) * times[k + 1] / times[k] - k


def test_same_seed_same_instance_and_known_values():
    a = mig.generate(12, "A100", "MixedScaling", "WideTimes", seed=0)
    b = mig.generate(12, "A100", "MixedScaling", "WideTimes", seed=0)
    assert a == b
    assert a != mig.generate(12, "A100", "MixedScaling", "WideTimes", seed=1)
    # pinned values: the same seed must give the same instance on any machine (PCG64 is portable)
    assert round(a.tasks[0].times[1], 6) == 81.769502
    assert round(a.tasks[0].times[7], 6) == 18.272003


@pytest.mark.parametrize("n,shares,expected", [
    (12, {1: 20, 2: 20, 3: 20, 4: 20, 7: 20}, {1: 3, 2: 3, 3: 2, 4: 2, 7: 2}),
    (15, {1: 20, 2: 20, 3: 20, 4: 20, 7: 20}, {1: 3, 2: 3, 3: 3, 4: 3, 7: 3}),
    (7, {1: 50, 2: 50, 3: 0, 4: 0, 7: 0}, {1: 4, 2: 3, 3: 0, 4: 0, 7: 0}),
    (10, {1: 100 / 3, 2: 100 / 3, 4: 100 / 3}, {1: 4, 2: 3, 4: 3}),
    (1, {1: 0, 2: 0, 3: 0, 4: 50, 7: 50}, {1: 0, 2: 0, 3: 0, 4: 1, 7: 0}),
])
def test_class_counts_footnote_8(n, shares, expected):
    assert mig.class_counts(n, shares) == expected


def test_a30_presets_keep_the_shape():
    a30 = gpus.get("A30")
    assert mig.scaling_shares(a30, "PoorScaling") == {1: 50, 2: 50, 4: 0}
    assert mig.scaling_shares(a30, "GoodScaling") == {1: 0, 2: 50, 4: 50}
    assert all(math.isclose(v, 100 / 3) for v in mig.scaling_shares(a30, "MixedScaling").values())
    assert mig.scaling_shares(gpus.get("A100"), "GoodScaling") == {1: 0, 2: 0, 3: 0, 4: 50, 7: 50}


def big(workload, gpu="A100", n=4000, times="WideTimes", seed=11):
    return mig.generate(n, gpu, workload, times, seed)


@pytest.mark.parametrize("gpu", ["A30", "A100", "H100"])
@pytest.mark.parametrize("workload", ["PoorScaling", "MixedScaling", "GoodScaling"])
def test_times_positive_monotone_and_in_range(gpu, workload):
    for times, (lo, hi) in mig.TIME_PRESETS.items():
        p = big(workload, gpu, n=600, times=times)
        for t in p.tasks:
            ts = [t.times[s] for s in p.gpu.sizes]
            assert lo <= ts[0] <= hi
            assert all(x > 0 for x in ts)
            assert all(b <= a for a, b in zip(ts, ts[1:]))
            assert sorted(t.times) == list(p.gpu.sizes)


def test_class_one_share_is_exact():
    """Class-1 tasks step 1->2 sub-linearly (r >= 0.5); every other class has r <= 0.2 there."""
    n = 4000
    for workload in ("PoorScaling", "MixedScaling", "GoodScaling"):
        p = big(workload, n=n)
        r12 = np.array([step_r({1: t.times[1], 2: t.times[2]}, 1) for t in p.tasks])
        counts = mig.class_counts(n, mig.scaling_shares(p.gpu, workload))
        assert int((r12 >= 0.5 - 1e-9).sum()) == counts[1]
        assert int(((r12 > 0.2 + 1e-9) & (r12 < 0.5 - 1e-9)).sum()) == 0


def test_share_of_super_linear_first_steps():
    """Memory-bound tasks (ceil(p_sup n_s) of each class s >= 2) step 1->2 super-linearly:
    r ~ N(-0.25, 0.25) clipped to [-0.5, 0], so r < 0 with probability Phi(1) = 0.841."""
    n = 5000
    p = big("MixedScaling", n=n)
    r12 = np.array([2 * t.times[2] / t.times[1] - 1 for t in p.tasks])
    counts = mig.class_counts(n, mig.scaling_shares(p.gpu, "MixedScaling"))
    memory_bound = sum(math.ceil(DEFAULT_P_SUP * counts[s]) for s in (2, 3, 4, 7))
    share = (r12 < -1e-12).mean()
    assert abs(share - memory_bound / n * 0.8413) < 0.02
    # clipping puts point masses at the bounds: r = -0.5 with probability 1 - Phi(1)
    assert abs((r12 <= -0.5 + 1e-9).mean() - memory_bound / n * 0.1587) < 0.015


def test_poor_scaling_never_scales_past_two_slices():
    p = big("PoorScaling", n=2000)
    r23 = np.array([step_r({2: t.times[2], 3: t.times[3]}, 2) for t in p.tasks])
    assert (r23 >= 0.5 - 1e-9).all()


def test_good_scaling_steps_well_up_to_four():
    """Read with transition="near-linear", every step up to 4 slices is near- or super-linear."""
    p = mig.generate(2000, "A100", "GoodScaling", "WideTimes", 11, transition="near-linear")
    for k in (1, 2, 3):
        r = np.array([step_r({k: t.times[k], k + 1: t.times[k + 1]}, k) for t in p.tasks])
        assert (r <= 0.2 + 1e-9).all()
    # the default (the A30 example's reading): a memory-bound task that turns compute-bound
    # steps sub-linearly; on 2->3 that is p_sup * 0.3 of the tasks
    p = big("GoodScaling", n=4000)
    r23 = np.array([step_r({2: t.times[2], 3: t.times[3]}, 2) for t in p.tasks])
    assert abs((r23 >= 0.5 - 1e-9).mean() - DEFAULT_P_SUP * P_TRANSITION) < 0.02


def test_memory_bound_transition_probability_per_slice():
    """A memory-bound task of class 4 stays super-linear on 2->3 with probability 1 - 0.3."""
    rng = np.random.default_rng(5)
    stays = []
    for _ in range(6000):
        ts = _task_times(rng, 7, 4, True, 50.0, "sub-linear")
        r23 = 3 * ts[2] / ts[1] - 2
        stays.append(r23 <= 0)
    assert abs(np.mean(stays) - (1 - P_TRANSITION)) < 0.02
    # A30 example: super-linear from 2 to 4 kept with probability (1 - 0.3)^2
    rng = np.random.default_rng(6)
    kept = [max(3 * ts[2] / ts[1] - 2, 4 * ts[3] / ts[2] - 3) <= 0
            for ts in (_task_times(rng, 4, 4, True, 50.0, "sub-linear") for _ in range(6000))]
    assert abs(np.mean(kept) - (1 - P_TRANSITION) ** 2) < 0.02


@pytest.mark.parametrize("kwargs,needle", [
    ({"n": 0}, "field n: must be an integer from 1 to 100000, got 0"),
    ({"n": 10**12}, "field n: must be an integer from 1 to 100000"),
    ({"n": 3, "seed": -1}, "field seed: must be an integer from 0 to 4294967295, got -1"),
    ({"n": 100_000, "prefix": "x" * 400}, "more than the 33,554,432 the loader reads"),
    ({"n": 3, "workload": "Fancy"}, "unknown workload preset 'Fancy'"),
    ({"n": 3, "times": "Short"}, "unknown times preset 'Short'"),
    ({"n": 3, "gpu": "V100"}, "unknown GPU 'V100'"),
    ({"n": 3, "workload": {1: 60, 2: 60, 3: 0, 4: 0, 7: 0}}, "sum to 100"),
    ({"n": 3, "times": (5.0, 1.0)}, "t_min <= t_max"),
])
def test_bad_generator_arguments(kwargs, needle):
    with pytest.raises(InstanceError, match=None) as info:
        mig.generate(**kwargs)
    assert needle in str(info.value)
