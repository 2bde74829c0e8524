"""The on-time tail (bounds.hetero_dp.on_time_tail) inside the single-machine exact method: results stay exact."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from bounds import hetero as hb
from bounds.hetero_dp import on_time_tail
from heuristics.hetero import ils
from instances import hetero
from milp import Status

_spec = importlib.util.spec_from_file_location("hetero_oracle", Path(__file__).parents[1] / "hetero_oracle.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)
_exact_by_subsets = _oracle.by_subsets


@pytest.mark.parametrize("starved", [False, True])
def test_instances_with_an_on_time_tail_are_solved_exactly(monkeypatch, starved):
    # wide due dates and a low tardiness factor: jobs due after the others' total time form a tail; the solve
    # (from a poor hint; starved: the modifiers do the work, with the tail's pairs filtering their labels)
    # must give a bound below the optimum of the subset DP, and claim OPTIMAL only at it
    import milp.hetero_ssdp as ssdp

    if starved:
        monkeypatch.setattr(ssdp, "SUBGRADIENT_PASSES", 1)
        monkeypatch.setattr(ssdp, "TARGET_PASSES", 1)
        monkeypatch.setattr(hb, "FIRST_STAGE_PASSES", 0)
    rng = np.random.default_rng(23 + starved)
    tails = proven = 0
    for _ in range(10):
        n = int(rng.integers(12, 15))
        pb = hetero.generate_orlib(n, tf=float(rng.choice([0.3, 0.4])), rdd=1.0, seed=int(rng.integers(10 ** 6)))
        sm = hb.single_machine(pb)
        level = on_time_tail(sm.p, sm.w, sm.d)
        tails += 0 < (level > 0).sum() < n
        r = ssdp.solve_ssdp(pb, time_limit=20, hint=ils(pb, time_limit=None, max_iter=0, seed=0))
        assert hetero.check(pb, r.schedule) == []
        p, w, d = ([int(getattr(t, f)) for t in pb.tasks] for f in ("workload", "weight", "deadline"))
        opt = _exact_by_subsets(p, w, d)
        assert r.lower_bound <= opt + 1e-9 <= r.objective + 2e-9
        assert r.status is not Status.OPTIMAL or r.objective == pytest.approx(opt)
        proven += r.status is Status.OPTIMAL
    assert tails >= 3 and proven >= 5
