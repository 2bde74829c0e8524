"""Every seed, time limit, thread count and iteration count of the public API is checked in one place.

Discovery, not examples: every public callable (``__all__``) of every module
of ``instances``, ``bounds``, ``heuristics`` and ``milp`` that has a parameter
named ``seed``, ``time_limit``, ``workers`` (or an iteration count:
``max_iter``, ``evaluations``) is called on a tiny valid problem of its family
with each bad value below, and must raise one ``OptionError`` line naming
the parameter: never numpy's ``ValueError`` (``seed=-1``), an
``OverflowError`` (``time_limit=10**400``), OR-Tools' multi-line
``TypeError`` (``workers=2**31``), and never a run that accepts
``workers=2.5``. The checks are those of ``instances.options`` (``seed``,
``time_limit``, ``workers``, ``integer``), made before any work, so the
arguments that are a solver's intermediate state (a built model, a master
run) are given as ``None``: a function that touched them before checking its
options fails the test.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
import math
import signal

import numpy as np
import pytest

from instances import case, hetero, mig, mig_node, pairing
from instances import options as opt
from instances import realtime as rt
from instances.errors import OptionError

_spec = importlib.util.spec_from_file_location("package_walk", Path(__file__).parent / "package_walk.py")
_walk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_walk)
modules = _walk.modules

PACKAGES = ("instances", "bounds", "heuristics", "milp")
OPTIONS = ("seed", "time_limit", "workers", "max_iter", "evaluations")
BAD = [-1, "x", 2.5, True, 10**400, 2**32, float("nan")]
#: A time limit may be 2.5 s; it may not be 0 or infinite (``None`` is the way to ask for no limit).
BAD_SECONDS = [-1, 0, "x", True, 10**400, 2**32, float("nan"), float("inf")]
#: Classes take these only: their iteration counts are result fields, not options.
CLASS_OPTIONS = ("seed", "time_limit", "workers")
#: Result records, not options: a ``case.Trace`` records how many workers its run had (``case.check``
#: judges a trace; ``heuristics.case.simulate``, which makes one, checks its ``workers`` option).
RECORDS = ("instances.case_trace.Trace",)


def _public():
    found = {}
    for module in modules(PACKAGES):
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__.split(".")[0] not in PACKAGES \
                    or f"{obj.__module__}.{obj.__qualname__}" in RECORDS:
                continue
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            # named where it is defined: a family facade (instances.hetero) re-exports the modules' functions
            for name in CLASS_OPTIONS if inspect.isclass(obj) else OPTIONS:
                if name in params:
                    found[f"{obj.__module__}.{obj.__qualname__}:{name}"] = (obj, name)
    return found


PUBLIC = _public()


def _problems():
    return [mig.generate(3, "A30", seed=0), mig.generate_workload([2, 1], [0.0, 3.0], gpu="A30", seed=1),
            mig_node.generate(3, "A30", gpus=2, seed=0), hetero.generate(4, ("T4", "A100-80GB"), seed=0),
            pairing.PairingProblem(pairing.generate(4, seed=2)), rt.generate(n=4, utilization=2.0, sms=8, seed=0),
            case.generate("A", n=2, seed=0)]


PROBLEMS = _problems()


def _tiny_cpsat_model():
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = model.NewIntVar(0, 3, "x")
    model.Minimize(x)
    return model


def _tiny_pyomo_model():
    import pyomo.environ as pyo

    model = pyo.ConcreteModel()
    model.x = pyo.Var(bounds=(0, 3))
    model.obj = pyo.Objective(expr=model.x)
    return model


#: Required arguments other than a problem, by name (``None`` for a solver's intermediate state).
ARGUMENTS = {"n": 3, "tf": 0.4, "rdd": 0.6, "W": 4, "batch_sizes": [2, 1], "releases": [0.0, 3.0],
             "utilization": 2.0, "p": np.array([3.0, 2.0]), "w": np.array([1.0, 2.0]), "d": np.array([2.0, 4.0]),
             "policy": "case", "jobs": (), "tasks": ()}


def _argument(func, param):
    """A valid value for a required parameter: a problem of the annotated family, a size, a model."""
    if param.name == "model":
        return _tiny_pyomo_model() if func.__module__ == "milp.highs" else _tiny_cpsat_model()
    if func.__module__ == "milp.hetero_ssdp" and param.name == "problem":
        return hetero.generate_orlib(4, tf=0.4, rdd=0.6, seed=0)  # one machine, common arrival: ssdp's case
    kinds = opt._annotated_types(inspect.unwrap(func), param.annotation) if param.annotation is not param.empty \
        else None
    if kinds is not None:
        for problem in PROBLEMS:
            if isinstance(problem, kinds):
                return problem
    return ARGUMENTS.get(param.name)


def _call(func, option, value):
    kwargs = {option: value}
    for p in inspect.signature(func).parameters.values():
        assert p.kind is not p.POSITIONAL_ONLY, "a positional-only parameter"
        if p.name != option and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            kwargs[p.name] = _argument(func, p)
    return func(**kwargs)


def test_the_walk_finds_the_examples_of_the_issue():
    for key in ("instances.mig_generator.generate:seed", "heuristics.hetero.ils:seed",
                "heuristics.hetero.sagreedy:seed",
                "milp.mig.solve:time_limit", "milp.pairing.solve:workers", "heuristics.case.simulate:workers"):
        assert key in PUBLIC, key


def _timeout(*_):
    raise TimeoutError("the bad option was not refused up front")


CASES = [(key, bad) for key in sorted(PUBLIC) for bad in (BAD_SECONDS if key.endswith(":time_limit") else BAD)]


@pytest.mark.parametrize("key, bad", CASES, ids=[f"{k}={v!r:.12}" for k, v in CASES])
def test_a_bad_option_value_is_one_option_error_line(key, bad):
    func, option = PUBLIC[key]
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(30)
    try:
        with pytest.raises(OptionError) as info:
            _call(func, option, bad)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    message = str(info.value)
    assert "\n" not in message and option in message, message


def test_solve_optimal_checks_its_options_before_dispatch():
    import milp

    for option, values in (("time_limit", BAD_SECONDS), ("workers", BAD)):
        for bad in values:
            with pytest.raises(OptionError, match=option):
                milp.solve_optimal(PROBLEMS[0], **{option: bad})


@pytest.mark.parametrize("value", [0, 1, 2**31 - 1, 2**31, 2**32 - 1, np.int64(5), None])
def test_the_seed_validator_accepts_what_numpy_and_cp_sat_both_take(value):
    assert opt.seed(value) == (None if value is None else int(value))
    if value is not None:
        np.random.default_rng(opt.seed(value))


def test_a_32_bit_seed_reaches_cp_sat():
    from milp import cpsat

    run = cpsat.run(_tiny_cpsat_model(), seed=2**32 - 1, workers=1)
    assert run.status == "OPTIMAL"


def test_the_maxima_are_the_command_lines():
    from instances import console

    assert opt.MAX_SEED >= console.MAX_SEED and opt.MAX_WORKERS == console.MAX_WORKERS
    assert opt.time_limit(console.MAX_SECONDS) == console.MAX_SECONDS
    with pytest.raises(OptionError):
        opt.time_limit(math.nextafter(console.MAX_SECONDS, math.inf))
