"""Every public function of the method packages refuses an unknown keyword with one ``OptionError``.

A misspelt option (``far.schedule(problem, refin=False)``) must never run
silently with the default, and must fail with the toolkit's own error type
whichever function receives it: functions that take ``**options`` check them
with ``instances.options.no_unknown``; the others are wrapped by
``instances.options.known_options``.

The functions are found, not listed: every module of ``heuristics``,
``bounds`` and ``milp`` (``pkgutil.walk_packages``) must declare ``__all__``,
and every function in it that the module defines is called with an unknown
keyword, as is the constructor of every public class that takes options (a
parameter with a default). Dataclasses are records of values, not calls
with options, and are left out. A new function that takes ``**options``
needs a call on a real problem in :func:`_calls` (such functions may look at
the problem before the options); the test says so when one is missing.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

from instances import case, hetero, mig, mig_node, pairing
from instances import realtime as rt
from instances.errors import OptionError

PACKAGES = ("heuristics", "bounds", "milp")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        root = importlib.import_module(package)
        names += [info.name for info in pkgutil.walk_packages(root.__path__, package + ".")]
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_all(name):
    """``__all__`` is the public API the other tests (and ``import *``) rely on (a package that exports
    nothing itself says so with an empty one)."""
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} declares no __all__"
    missing = [attr for attr in module.__all__ if not hasattr(module, attr)]
    assert not missing, f"{name}.__all__ names what the module does not have: {missing}"


def _takes_options(cls: type) -> bool:
    """A hand-written constructor with a parameter that has a default (an option)."""
    if dataclasses.is_dataclass(cls) or issubclass(cls, BaseException) or "__init__" not in vars(cls):
        return False
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return any(p.default is not p.empty or p.kind is p.KEYWORD_ONLY for p in params)


def _public_callables():
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            f = getattr(module, attr)
            if getattr(f, "__module__", None) != name:
                continue  # a re-export: checked in its own module
            if inspect.isfunction(f):
                yield f"{name}.{attr}", f
            elif inspect.isclass(f) and _takes_options(f):
                yield f"{name}.{attr}", f


def _takes_var_keywords(f) -> bool:
    target = f.__init__ if inspect.isclass(f) else f
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(target).parameters.values())


PUBLIC = dict(_public_callables())
PLAIN = sorted(n for n, f in PUBLIC.items() if not _takes_var_keywords(f))
VARIADIC = sorted(n for n, f in PUBLIC.items() if _takes_var_keywords(f))


def test_the_walk_finds_the_method_modules():
    """The discovery itself: a broken walk must not pass by finding nothing."""
    for expected in ("heuristics.far", "heuristics.hetero_dynasearch", "bounds.hetero_multi", "milp.mig_node_cpsat"):
        assert expected in MODULES
    assert len(PLAIN) > 50 and len(VARIADIC) > 10


@pytest.mark.parametrize("name", PLAIN)
def test_functions_without_var_keywords_refuse_an_unknown_one(name):
    short = name.rsplit(".", 1)[-1]
    with pytest.raises(OptionError, match=rf"{short}(\.__init__)?: unknown option 'refin'"):
        PUBLIC[name](refin=False)


def _problems():
    a30 = mig.generate(4, "A30", seed=0)
    workload = mig.generate_workload([3, 2], [0.0, 4.0], gpu="A30", seed=1)
    return {
        "mig": a30, "workload": workload, "hetero": hetero.generate(4, ("T4", "A100-80GB"), seed=0),
        "pairing": pairing.PairingProblem(pairing.generate(4, seed=2)),
        "realtime": rt.generate(n=4, utilization=2.0, sms=8, seed=0), "case": case.generate("A", n=2, seed=0),
        "mig_node": mig_node.generate(4, "A30", gpus=2, seed=0),
    }


def _calls(p):
    from heuristics import far, far_batch, far_multibatch, far_node, mig_search
    import milp
    from milp import case as milp_case, hetero as milp_hetero, mig as milp_mig, pairing as milp_pairing
    from milp import mig_node as milp_node, realtime as milp_realtime

    return {
        "heuristics.far.plan": [lambda: far.plan(p["mig"], refine=False, refin=1),
                                lambda: far.plan(p["workload"], refin=1)],
        "heuristics.far.schedule": [lambda: far.schedule(p["mig"], refine=False, refin=1),
                                    lambda: far.schedule(p["workload"], refine=False, refin=1)],
        "heuristics.far_batch.plan": [lambda: far_batch.plan(p["mig"], refine=False, refin=1)],
        "heuristics.far_node.plan": [lambda: far_node.plan(p["mig_node"], refine=False, refin=1)],
        "heuristics.far_node.schedule": [lambda: far_node.schedule(p["mig_node"], refine=False, refin=1)],
        "heuristics.mig_search.plan": [lambda: mig_search.plan(p["mig"], seed=1, refin=1),
                                       lambda: mig_search.plan(p["workload"], refin=1)],
        "heuristics.mig_search.schedule": [lambda: mig_search.schedule(p["mig"], evaluations=10, refin=1),
                                           lambda: mig_search.schedule(p["workload"], refin=1)],
        "heuristics.far_batch.schedule_allocation": [
            lambda: far_batch.schedule_allocation(p["mig"], {t.name: 1 for t in p["mig"].tasks}, refin=1)],
        "heuristics.far_multibatch.plan_workload": [lambda: far_multibatch.plan_workload(p["workload"], refin=1)],
        "heuristics.far_multibatch.compare_concatenations": [
            lambda: far_multibatch.compare_concatenations(p["workload"], refin=1)],
        "milp.solve_optimal": [lambda k=k: milp.solve_optimal(p[k], refin=1) for k in
                               ("mig", "realtime", "case", "pairing", "hetero", "mig_node")]
        + [lambda: milp.solve_optimal(p["mig"], backend="highs", refin=1)],
        "milp.mig.solve": [lambda: milp_mig.solve(p["mig"], refin=1),
                           lambda: milp_mig.solve(p["mig"], backend="highs", refin=1)],
        "milp.mig_node.solve": [lambda: milp_node.solve(p["mig_node"], refin=1)],
        "milp.realtime.solve": [lambda b=b: milp_realtime.solve(p["realtime"], backend=b, refin=1)
                                for b in ("cpsat", "highs")],
        "milp.case.solve": [lambda b=b: milp_case.solve(p["case"], backend=b, refin=1) for b in ("cpsat", "highs")],
        "milp.pairing.solve": [lambda b=b: milp_pairing.solve(p["pairing"], backend=b, refin=1)
                               for b in ("cpsat", "highs")],
        "milp.hetero.solve": [lambda b=b: milp_hetero.solve(p["hetero"], backend=b, refin=1)
                              for b in ("cpsat", "highs", "auto")],
        "bounds.hetero_compact.optimize_grid": [lambda: _one_machine_search(refin=1)],
    }


def _one_machine_search(**options):
    """The single-machine multiplier search over a small time-indexed network."""
    import numpy as np

    from bounds.hetero_compact import optimize_grid
    from bounds.hetero_dp import Grid
    from bounds.hetero_ti import tardiness_costs

    p, w, d = np.array([3, 2, 4]), np.array([2, 1, 3]), np.array([4, 3, 5])
    return optimize_grid(Grid(p, tardiness_costs(p, w, d), weights=w), 20.0, max_iter=5, **options)


@pytest.fixture(scope="module")
def calls():
    return _calls(_problems())


@pytest.mark.parametrize("name", VARIADIC)
def test_functions_with_var_keywords_refuse_an_unknown_one(name, calls):
    assert name in calls, f"{name} takes **options: add a call on a real problem to _calls"
    for call in calls[name]:
        with pytest.raises(OptionError, match="unknown option 'refin'"):
            call()


def test_every_call_is_of_a_public_function(calls):
    """A call kept for a function that left ``__all__`` (or was renamed) would test nothing."""
    assert set(calls) <= set(VARIADIC)


def test_known_options_pass_through():
    from bounds import hetero as hetero_bounds
    from bounds import mig as mig_bounds
    from heuristics import far_baselines

    p = mig.generate(4, "A30", seed=0)
    assert far_baselines.miso_opt(p, repartition="barrier").makespan > 0
    assert mig_bounds.lower_bound(problem=p) > 0
    assert hetero_bounds.lower_bound(hetero.generate(4, ("T4", "A100-80GB"), seed=0), time_limit=5) >= 0
    with pytest.raises(OptionError, match="must be one of"):
        far_baselines.miso_opt(p, repartition="nope")
