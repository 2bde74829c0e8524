"""A problem, schedule or workload argument of the wrong Python type fails with one ``TypeError`` line.

Discovery, not examples: every public callable (``__all__``) of every module
of ``instances``, ``bounds``, ``heuristics`` and ``milp`` whose first
parameter is named ``problem``, ``schedule`` or ``workload`` is called with a
``dict`` and with a file name in that place. It must raise a ``TypeError`` (or
an ``OptionError``) of one line that names what it got (``got dict``), never an
``AttributeError``, ``KeyError`` or ``IndexError`` from deep inside. The
entry points check the argument with ``instances.options.expect`` first, so
the other required arguments are given as ``None``: a function that looked at
them before its problem would fail with a message that does not name the
wrong argument, and the test with it.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from instances.errors import OptionError

_spec = importlib.util.spec_from_file_location("package_walk", Path(__file__).parent / "package_walk.py")
_walk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_walk)
modules = _walk.modules

PACKAGES = ("instances", "bounds", "heuristics", "milp")
FIRST = ("problem", "schedule", "workload")


def _public():
    found = {}
    for module in modules(PACKAGES):
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not inspect.isfunction(obj) or obj.__module__.split(".")[0] not in PACKAGES:
                continue  # classes are result records and backends
            try:
                params = list(inspect.signature(obj).parameters.values())
            except (TypeError, ValueError):
                continue
            if params and params[0].name in FIRST:  # named where it is defined (facades re-export it)
                found[f"{obj.__module__}.{obj.__qualname__}"] = (obj, params)
    return found


PUBLIC = _public()


def test_the_walk_finds_the_entry_points():
    for name in ("bounds.mig.lower_bound", "instances.mig_check.check", "heuristics.hetero.ils",
                 "heuristics.case.simulate", "milp.pairing.solve", "instances.realtime.check"):
        assert name in PUBLIC


@pytest.mark.parametrize("bad", [{}, "schedule.json"], ids=["dict", "str"])
@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_a_wrong_type_is_one_type_error_line(name, bad):
    func, params = PUBLIC[name]
    rest = [None for p in params[1:] if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    kwargs = {p.name: None for p in params[1:] if p.default is p.empty and p.kind is p.KEYWORD_ONLY}
    with pytest.raises((TypeError, OptionError)) as info:
        func(bad, *rest, **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    assert f"got {type(bad).__name__}" in message, message


def _checkers():
    from instances import case, hetero, mig, mig_node, pairing
    from instances import realtime as rt

    return {
        "mig": (mig.check, mig.generate(3, "A30", seed=0)),
        "mig_node": (mig_node.check, mig_node.generate(3, "A30", gpus=2, seed=0)),
        "hetero": (hetero.check, hetero.generate(3, ("T4", "A100-80GB"), seed=0)),
        "pairing": (pairing.check, pairing.PairingProblem(pairing.generate(4, seed=2))),
        "realtime": (rt.check, rt.generate(n=4, utilization=2.0, sms=8, seed=0)),
        "case": (case.check, case.generate("A", n=2, seed=0)),
    }


@pytest.mark.parametrize("bad", [{}, "schedule.json"], ids=["dict", "str"])
@pytest.mark.parametrize("family", ["mig", "mig_node", "hetero", "pairing", "realtime", "case"])
def test_every_checker_refuses_a_schedule_of_the_wrong_type(family, bad):
    check, problem = _checkers()[family]
    with pytest.raises(TypeError) as info:
        check(problem, bad)
    message = str(info.value)
    assert "\n" not in message and f"got {type(bad).__name__}" in message, message
