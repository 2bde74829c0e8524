"""The single-machine exact method with its grid multipliers searched by the proximal bundle method.

The ssdp takes the bundle method (bounds.hetero_bundle) from ``BUNDLE_JOBS``
jobs; here the threshold is lowered so that small instances, with an
independent optimum, go through that path: the whole method (incumbent,
bundle search with eliminations and repaired relaxed paths, modifiers) must
stay exact.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from instances import hetero
from milp import TOLERANCE, Status
from milp import hetero_ssdp
from milp.hetero_ssdp import solve_ssdp

_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)


@pytest.fixture
def bundle_everywhere(monkeypatch):
    monkeypatch.setattr(hetero_ssdp, "BUNDLE_JOBS", 1)


def _check(pb, r, optimum):
    assert r.status is Status.OPTIMAL and r.gap <= TOLERANCE
    assert hetero.check(pb, r.schedule) == []
    assert r.objective == pytest.approx(hetero.weighted_tardiness(pb, r.schedule), abs=1e-9)
    assert r.objective == pytest.approx(optimum, abs=1e-9)


def test_the_search_options_follow_the_threshold(bundle_everywhere):
    assert hetero_ssdp._search_options(2) == {"method": "bundle", "improve_every": hetero_ssdp.IMPROVE_EVERY}


@settings(max_examples=25, deadline=None)
@given(_oracle.small_jobs(max_p=12, max_w=10, max_d=50))
def test_bundle_path_equals_brute_force(data):
    hetero_ssdp.BUNDLE_JOBS, old = 1, hetero_ssdp.BUNDLE_JOBS   # hypothesis runs many examples per fixture
    try:
        p, w, d = (np.array(x, dtype=float) for x in data)
        pb = _oracle.single(p, w, d)
        _check(pb, solve_ssdp(pb, time_limit=30), _oracle.brute(p, w, d))
    finally:
        hetero_ssdp.BUNDLE_JOBS = old


@pytest.fixture
def searches(monkeypatch):
    """The bundle searches the solve makes: (passes, proved) of each."""
    from bounds import hetero_compact

    made = []
    search = hetero_compact.bundle_optimize

    def counted(*args, **kwargs):
        r = search(*args, **kwargs)
        made.append((r.evaluations, r.proved))
        return r

    monkeypatch.setattr(hetero_compact, "bundle_optimize", counted)
    return made


def test_bundle_path_equals_the_subset_dp(bundle_everywhere, searches):
    pb = hetero.generate_orlib(12, tf=0.8, rdd=0.2, seed=6)
    p, w, d = ([getattr(t, f) for t in pb.tasks] for f in ("workload", "weight", "deadline"))
    _check(pb, solve_ssdp(pb, time_limit=60), _oracle.by_subsets(p, w, d))
    assert searches


@pytest.mark.parametrize("n,seed", [(40, 2), (50, 1), (50, 2)])
def test_bundle_path_agrees_with_the_subgradient_path(monkeypatch, searches, n, seed):
    # a proof either way is an optimum: the two multiplier searches must reach the same value (on 50, 2 the
    # bundle's bound leaves a gap that the modifiers close)
    pb = hetero.generate_orlib(n, tf=0.8, rdd=0.2, seed=seed)
    a = solve_ssdp(pb, time_limit=60)
    assert not searches
    monkeypatch.setattr(hetero_ssdp, "BUNDLE_JOBS", 1)
    b = solve_ssdp(pb, time_limit=60)
    assert searches and sum(k for k, _ in searches) >= 10
    _check(pb, a, b.objective)
    _check(pb, b, a.objective)
