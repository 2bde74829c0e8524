"""Every public function of the method packages refuses an unknown keyword with one ``OptionError``.

A misspelt option (``far.schedule(problem, refin=False)``) must never run
silently with the default, and must fail with the toolkit's own error type
whichever function receives it: functions that take ``**options`` check them
with ``instances.options.no_unknown``; the others are wrapped by
``instances.options.known_options``.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from instances import case, hetero, mig, pairing
from instances import realtime as rt
from instances.errors import OptionError

MODULES = ["heuristics.far", "heuristics.far_baselines", "heuristics.far_batch", "heuristics.far_multibatch",
           "heuristics.far_refine", "heuristics.far_tree", "heuristics.far_phase2", "heuristics.mig",
           "heuristics.mig_search", "heuristics.mig_plans",
           "heuristics.hetero", "heuristics.pairing", "heuristics.realtime", "heuristics.case", "bounds.mig", "milp",
           "milp.mig", "milp.mig_cpsat", "milp.mig_cpsat_scale", "milp.mig_cpsat_model", "milp.mig_cpsat_relax",
           "milp.mig_cpsat_benders", "milp.mig_plans", "milp.mig_pyomo", "milp.pairing", "milp.realtime", "milp.case", "milp.hetero"]


def _public_functions():
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            f = getattr(module, attr)
            if inspect.isfunction(f) and f.__module__ == name:
                yield f"{name}.{attr}", f


def _takes_var_keywords(f) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(f).parameters.values())


PUBLIC = dict(_public_functions())
PLAIN = sorted(n for n, f in PUBLIC.items() if not _takes_var_keywords(f))
VARIADIC = sorted(n for n, f in PUBLIC.items() if _takes_var_keywords(f))


@pytest.mark.parametrize("name", PLAIN)
def test_functions_without_var_keywords_refuse_an_unknown_one(name):
    with pytest.raises(OptionError, match=rf"{name.rsplit('.', 1)[-1]}: unknown option 'refin'"):
        PUBLIC[name](None, refin=False)


def _problems():
    a30 = mig.generate(4, "A30", seed=0)
    workload = mig.generate_workload([3, 2], [0.0, 4.0], gpu="A30", seed=1)
    return {
        "mig": a30, "workload": workload, "hetero": hetero.generate(4, ("T4", "A100-80GB"), seed=0),
        "pairing": pairing.PairingProblem(pairing.generate(4, seed=2)),
        "realtime": rt.generate(n=4, utilization=2.0, sms=8, seed=0), "case": case.generate("A", n=2, seed=0),
    }


def _calls(p):
    from heuristics import far, far_batch, far_multibatch, mig_search
    import milp
    from milp import case as milp_case, hetero as milp_hetero, mig as milp_mig, pairing as milp_pairing
    from milp import realtime as milp_realtime

    return {
        "heuristics.far.plan": [lambda: far.plan(p["mig"], refine=False, refin=1),
                                lambda: far.plan(p["workload"], refin=1)],
        "heuristics.far.schedule": [lambda: far.schedule(p["mig"], refine=False, refin=1),
                                    lambda: far.schedule(p["workload"], refine=False, refin=1)],
        "heuristics.far_batch.plan": [lambda: far_batch.plan(p["mig"], refine=False, refin=1)],
        "heuristics.mig_search.plan": [lambda: mig_search.plan(p["mig"], seed=1, refin=1),
                                       lambda: mig_search.plan(p["workload"], refin=1)],
        "heuristics.mig_search.schedule": [lambda: mig_search.schedule(p["mig"], evaluations=10, refin=1),
                                           lambda: mig_search.schedule(p["workload"], refin=1)],
        "heuristics.far_batch.schedule_allocation": [
            lambda: far_batch.schedule_allocation(p["mig"], {t.name: 1 for t in p["mig"].tasks}, refin=1)],
        "heuristics.far_multibatch.plan_workload": [lambda: far_multibatch.plan_workload(p["workload"], refin=1)],
        "heuristics.far_multibatch.compare_concatenations": [
            lambda: far_multibatch.compare_concatenations(p["workload"], refin=1)],
        "milp.solve_optimal": [lambda k=k: milp.solve_optimal(p[k], refin=1) for k in ("mig", "realtime", "case", "pairing")]
        + [lambda: milp.solve_optimal(p["mig"], backend="highs", refin=1)],
        "milp.mig.solve": [lambda: milp_mig.solve(p["mig"], refin=1),
                           lambda: milp_mig.solve(p["mig"], backend="highs", refin=1)],
        "milp.realtime.solve": [lambda b=b: milp_realtime.solve(p["realtime"], backend=b, refin=1)
                                for b in ("cpsat", "highs")],
        "milp.case.solve": [lambda b=b: milp_case.solve(p["case"], backend=b, refin=1) for b in ("cpsat", "highs")],
        "milp.pairing.solve": [lambda b=b: milp_pairing.solve(p["pairing"], backend=b, refin=1)
                               for b in ("cpsat", "highs")],
        "milp.hetero.solve": [lambda b=b: milp_hetero.solve(p["hetero"], backend=b, refin=1)
                              for b in ("cpsat", "highs")],
    }


@pytest.mark.parametrize("name", VARIADIC)
def test_functions_with_var_keywords_refuse_an_unknown_one(name):
    calls = _calls(_problems())
    assert name in calls, f"{name} takes **options: add a call here"
    for call in calls[name]:
        with pytest.raises(OptionError, match="unknown option 'refin'"):
            call()


def test_known_options_pass_through():
    from bounds import mig as mig_bounds
    from heuristics import far_baselines

    p = mig.generate(4, "A30", seed=0)
    assert far_baselines.miso_opt(p, repartition="barrier").makespan > 0
    assert mig_bounds.lower_bound(problem=p) > 0
    with pytest.raises(OptionError, match="must be one of"):
        far_baselines.miso_opt(p, repartition="nope")
