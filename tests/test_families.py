"""The family contract (docs/architecture.md, "The family contract"), checked for every family in ``milp.FAMILIES``.

The families are found in the registry ``milp.solve_optimal`` dispatches
on, not listed here, so a family added there is held to the contract at once:

1. its ``instances`` module has ``load``, ``save``, ``from_dict``, ``check``
   and ``generate``, and the problem classes the registry names;
2. ``heuristics.<family>.METHODS`` is a registry of display name -> method;
3. ``milp.<family>.solve`` (and ``milp.solve_optimal``) take every option
   after the problem by keyword only: a positional ``False`` must never be
   read as a backend, a time limit or a flag by its place;
4. on a tiny generated instance: the same seed gives the same instance, it
   saves and loads back equal (through ``from_dict`` and its dict form too), every method's
   solution and the exact solution pass the family's checker, and each
   solution's type writes itself with ``to_json`` and reads back with
   ``from_json`` to a solution that writes the same text and still passes
   the checker.

The tiny instances are the one thing a new family must add here
(:data:`TINY`); the test says so when one is missing.
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any, Callable

import pytest

import milp
from instances import case, hetero, mig, mig_node, pairing
from instances import realtime as rt

#: A tiny instance of each family, built from its generator (a few tasks; every exact solve takes < 1 s).
TINY: dict[str, Callable[[], Any]] = {
    "mig": lambda: mig.generate(4, "A30", seed=0),
    "hetero": lambda: hetero.generate(4, ("T4", "A100-80GB"), seed=0),
    "pairing": lambda: pairing.PairingProblem(pairing.generate(4, seed=2)),
    "realtime": lambda: rt.generate(n=4, utilization=2.0, sms=8, seed=0),
    "case": lambda: case.generate("A", n=2, seed=0),
    "mig_node": lambda: mig_node.generate(4, "A30", gpus=2, seed=0),
}

FAMILIES = sorted(milp.FAMILIES)


def _modules(family: str):
    inst_module, classes, milp_module = milp.FAMILIES[family]
    return (importlib.import_module(inst_module), tuple(classes), importlib.import_module(milp_module),
            importlib.import_module(f"heuristics.{family}"))


def test_every_family_has_a_tiny_instance():
    assert set(TINY) == set(milp.FAMILIES), "add a tiny instance of the new family to TINY"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_family_provides_its_functions(family):
    inst, classes, exact, heur = _modules(family)
    for name in ("load", "save", "from_dict", "check", "generate"):
        assert callable(getattr(inst, name, None)), f"{inst.__name__} has no {name}"
        assert name in inst.__all__, f"{inst.__name__}.__all__ lacks {name}"
    for name in classes:
        assert isinstance(getattr(inst, name, None), type), f"{inst.__name__} has no class {name}"
    assert isinstance(heur.METHODS, dict) and heur.METHODS, f"{heur.__name__}.METHODS is not a registry"
    assert all(isinstance(k, str) and callable(v) for k, v in heur.METHODS.items())
    assert callable(exact.solve)


def _keyword_only_after_problem(f: Callable) -> list[str]:
    params = list(inspect.signature(f).parameters.values())
    assert params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)
    return [p.name for p in params[1:] if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]


@pytest.mark.parametrize("family", FAMILIES)
def test_solve_takes_its_options_by_keyword_only(family):
    _, _, exact, _ = _modules(family)
    positional = _keyword_only_after_problem(exact.solve)
    assert not positional, f"{exact.__name__}.solve takes {positional} by position"
    with pytest.raises(TypeError):
        exact.solve(TINY[family](), "cpsat")


def test_solve_optimal_takes_its_options_by_keyword_only():
    assert not _keyword_only_after_problem(milp.solve_optimal)
    with pytest.raises(TypeError):
        milp.solve_optimal(TINY["mig"](), "cpsat")


def _saved_text(inst, problem, tmp_path, name: str) -> str:
    path = tmp_path / name
    inst.save(problem, path)
    return path.read_text()


@pytest.mark.parametrize("family", FAMILIES)
def test_the_tiny_instance_is_reproducible_and_round_trips(family, tmp_path):
    inst, classes, _, _ = _modules(family)
    problem = TINY[family]()
    assert isinstance(problem, tuple(getattr(inst, c) for c in classes))
    text = _saved_text(inst, problem, tmp_path, "a.json")
    assert _saved_text(inst, TINY[family](), tmp_path, "b.json") == text, "the same seed gave another instance"
    loaded = inst.load(tmp_path / "a.json")
    assert loaded == problem
    assert _saved_text(inst, loaded, tmp_path, "c.json") == text
    again = inst.from_dict(json.loads(text))
    assert again == problem
    assert milp.family_of(loaded) == family
    # the dict form: a method of the problem, or (pairing, whose problem module cannot import its JSON
    # module without a cycle) the family module's to_dict
    to_dict = getattr(problem, "to_dict", None) or (lambda: inst.to_dict(problem))
    assert inst.from_dict(to_dict()) == problem
    assert to_dict() == json.loads(text)


def _round_trip(inst, problem, solution) -> None:
    kind = type(solution)
    assert callable(getattr(solution, "to_json", None)) and callable(getattr(kind, "from_json", None)), \
        f"{kind.__module__}.{kind.__qualname__} lacks to_json/from_json"
    text = solution.to_json()
    back = kind.from_json(text)
    assert back.to_json() == text
    assert inst.check(problem, back) == []


@pytest.mark.parametrize("family", FAMILIES)
def test_every_method_gives_a_checked_solution_that_round_trips(family):
    inst, _, _, heur = _modules(family)
    problem = TINY[family]()
    solved = 0
    for name, method in heur.METHODS.items():
        solution = method(problem)
        if solution is None:  # a method that may fail (real-time partitioning) says so with None
            continue
        assert inst.check(problem, solution) == [], name
        _round_trip(inst, problem, solution)
        solved += 1
    assert solved, "no method solved the tiny instance"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_exact_solution_is_checked_and_round_trips(family):
    inst, _, _, _ = _modules(family)
    problem = TINY[family]()
    res = milp.solve_optimal(problem, time_limit=30)
    assert str(res.status) == "OPTIMAL", res
    assert inst.check(problem, res.schedule) == []
    _round_trip(inst, problem, res.schedule)
