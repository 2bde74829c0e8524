"""The JSON form of the pairing family's problems: :func:`load`, :func:`save`, :func:`from_dict`, :func:`to_dict`.

A :class:`~instances.pairing_problem.PairingProblem` is written as::

    {"jobs": [{"name": "lud-0", "app": "lud", "solo_time": 10.0, "gpu_share": 0.75, ...}],
     "space": {"p_total": 350.0, "p_max": 500.0, "cpu_caps": [...], "gpu_caps": [...],
               "core_splits": [[2, 30], ...], "gpc_splits": [[3, 4], [4, 3]],
               "triple_core_splits": [...], "triple_gpc_splits": [...],
               "solo_cores": 32, "solo_gpcs": 8, "budget": "equal"},
     "model": {"analytic": {"cpu_idle": 50.0, "cpu_dyn": 200.0, ...}},
     "concurrency": 2}

where ``model`` is either ``{"analytic": {...}}`` (the parameters of
:class:`~instances.pairing_slowdown.AnalyticModel`) or ``{"table": [...]}``
(the measurements of :class:`~instances.pairing_table.TableModel`, one object
per row, checked against ``space`` as its CSV reader does). Every field but
``jobs`` may be left out (the defaults of Table 4 and the analytic model), and
so may a job's features. A :class:`~instances.pairing_problem.WeightedQueue`
is written as ``{"solo": [...], "pair": [[...]], "triple": [{"jobs": [i, j, k],
"time": t}], "concurrency": 2, "names": [...]}`` with ``null`` for a forbidden
pair or triple (``inf``; the diagonal of ``pair`` too).

Reading is strict, as for every family (:mod:`instances.files`): an unknown
field, a number given as text or a boolean, ``NaN``, a share of ``4.7``: each
raises one :class:`~instances.errors.InstanceError` line naming the file, the
job and the field.

Examples
--------
>>> from instances.pairing_jobs import job_mix
>>> from instances.pairing_problem import PairingProblem
>>> problem = PairingProblem(job_mix(1))
>>> from_dict(to_dict(problem)) == problem
True
>>> from_dict({"jobs": [{"name": "a", "app": "lud", "solo_time": "10"}]}, source="q.json")
Traceback (most recent call last):
...
instances.errors.InstanceError: q.json: task a: field solo_time: must be a number, got '10'
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from instances import files
from instances.errors import InstanceError
from instances.pairing_jobs import FEATURES, MAX_JOBS, Job  # MAX_JOBS: most jobs of a window read from a file
from instances.pairing_problem import PairingProblem, WeightedQueue
from instances.pairing_slowdown import AnalyticModel
from instances.pairing_space import ConfigSpace
from instances.pairing_table import TableModel
from instances.options import typed

__all__ = ["load", "save", "from_dict", "to_dict"]

_PROBLEM_FIELDS = ("jobs", "space", "model", "concurrency")
_QUEUE_FIELDS = ("solo", "pair", "triple", "concurrency", "names")
_JOB_FIELDS = ("name", "app", "solo_time") + FEATURES
_SPLIT_FIELDS = ("core_splits", "gpc_splits", "triple_core_splits", "triple_gpc_splits")
_SPACE_FIELDS = ("p_total", "p_max", "cpu_caps", "gpu_caps") + _SPLIT_FIELDS + ("solo_cores", "solo_gpcs", "budget")
_ANALYTIC_FIELDS = tuple(f.name for f in dataclasses.fields(AnalyticModel))


@typed
def to_dict(problem: PairingProblem | WeightedQueue) -> dict[str, Any]:
    """The JSON-able form of a problem, read back equal by :func:`from_dict`.

    Raises
    ------
    InstanceError
        For a :class:`PairingProblem` whose slowdown model is neither the
        analytic model nor a table (a model of your own has no JSON form).
    """
    if isinstance(problem, WeightedQueue):
        return _queue_to_dict(problem)
    if not isinstance(problem, PairingProblem):
        raise TypeError(f"not a pairing problem: {type(problem).__name__}")
    space = problem.space
    out_space: dict[str, Any] = {"p_total": float(space.p_total), "p_max": float(space.p_max),
                                 "cpu_caps": [float(c) for c in space.cpu_caps],
                                 "gpu_caps": [float(g) for g in space.gpu_caps]}
    out_space.update({key: [[int(x) for x in s] for s in getattr(space, key)] for key in _SPLIT_FIELDS})
    out_space.update(solo_cores=int(space.solo_cores), solo_gpcs=int(space.solo_gpcs), budget=space.budget)
    model = problem.model
    if type(model) is AnalyticModel:
        out_model: dict[str, Any] = {"analytic": {f: getattr(model, f) for f in _ANALYTIC_FIELDS}}
    elif isinstance(model, TableModel):
        out_model = {"table": model.to_rows()}
    else:
        raise InstanceError(f"a {type(model).__name__} has no JSON form (only the analytic model and a table have)",
                            field="model")
    return {"jobs": [{"name": j.name, "app": j.app, "solo_time": float(j.solo_time),
                      **{f: float(getattr(j, f)) for f in FEATURES}} for j in problem.jobs],
            "space": out_space, "model": out_model, "concurrency": int(problem.concurrency)}


def from_dict(data: Any, source: str | None = None) -> PairingProblem | WeightedQueue:
    """Build a problem from its JSON form (see the module docstring), every field read strictly.

    A :class:`PairingProblem` has the key ``jobs``, a :class:`WeightedQueue`
    the key ``solo``.
    """
    if not isinstance(data, dict):
        raise InstanceError(f"a problem must be a JSON object, got {data!r}"[:200], source=source)
    try:
        if "solo" in data and "jobs" not in data:
            return _queue_from_dict(data, source)
        return _problem_from_dict(data, source)
    except InstanceError as exc:
        if source and not exc.source:  # a check of the data types, which know no file: name it
            raise InstanceError(exc.reason, source=source, task=exc.task, field=exc.field) from None
        raise


def load(path: str | Path) -> PairingProblem | WeightedQueue:
    """Read a problem JSON file (see :func:`from_dict`); bad content raises an ``InstanceError`` naming the file.

    Examples
    --------
    >>> import os, tempfile
    >>> from instances.pairing_jobs import generate
    >>> problem = PairingProblem(generate(5, seed=1), ConfigSpace(p_total=400), concurrency=3)
    >>> path = os.path.join(tempfile.mkdtemp(), "p.json"); save(problem, path)
    >>> load(path) == problem
    True
    """
    return from_dict(files.read_json(path), source=str(path))


@typed
def save(problem: PairingProblem | WeightedQueue, path: str | Path) -> None:
    """Write a problem as JSON (floats written exactly, so ``load`` reads it back equal).

    A path that cannot be written raises :class:`~instances.errors.OutputError` naming it.
    """
    files.write_text(path, json.dumps(to_dict(problem), indent=1, allow_nan=False) + "\n")


# ---------------------------------------------------------------------------
# PairingProblem

def _object(raw: Any, where: str, source: str | None, task: str | None = None) -> dict:
    if not isinstance(raw, dict):
        raise InstanceError(f"must be an object, got {raw!r}"[:200], source=source, task=task, field=where)
    return raw


def _list(raw: Any, where: str, source: str | None, task: str | None = None) -> list:
    if not isinstance(raw, list):
        raise InstanceError(f"must be a list, got {raw!r}"[:200], source=source, task=task, field=where)
    return raw


def _problem_from_dict(data: dict, source: str | None) -> PairingProblem:
    files.no_unknown_fields(data, _PROBLEM_FIELDS, source=source)
    if "jobs" not in data:
        raise InstanceError("missing", source=source, field="jobs")
    raw_jobs = _list(data["jobs"], "jobs", source)
    if len(raw_jobs) > MAX_JOBS:
        raise InstanceError(f"{len(raw_jobs)} jobs; at most {MAX_JOBS:,} in one window", source=source, field="jobs")
    jobs = tuple(_job(raw, k, source) for k, raw in enumerate(raw_jobs))
    space = _space(_object(data.get("space", {}), "space", source), source)
    model = _model(_object(data.get("model", {"analytic": {}}), "model", source), space, source)
    concurrency = files.integer(data.get("concurrency", 2), lo=1, hi=3, source=source, field="concurrency")
    return PairingProblem(jobs, space, model, concurrency)


def _job(raw: Any, k: int, source: str | None) -> Job:
    raw = _object(raw, f"jobs[{k}]", source)
    if "name" not in raw:
        raise InstanceError("missing", source=source, field=f"jobs[{k}].name")
    name = files.name(raw["name"], source=source, task=f"#{k}")
    files.no_unknown_fields(raw, _JOB_FIELDS, source=source, task=name)
    for key in ("app", "solo_time"):
        if key not in raw:
            raise InstanceError("missing", source=source, task=name, field=key)
    app = files.name(raw["app"], source=source, task=name, field="app")
    values = {key: files.real(raw[key], source=source, task=name, field=key)
              for key in ("solo_time",) + FEATURES if key in raw}
    return Job(name, app, **values)


def _space(raw: dict, source: str | None) -> ConfigSpace:
    files.no_unknown_fields(raw, _SPACE_FIELDS, source=source, where="space")
    kw: dict[str, Any] = {}
    for key in ("p_total", "p_max"):
        if key in raw:
            kw[key] = files.real(raw[key], positive=True, source=source, field=f"space.{key}")
    for key in ("cpu_caps", "gpu_caps"):
        if key in raw:
            kw[key] = tuple(files.real(c, positive=True, source=source, field=f"space.{key}[{i}]")
                            for i, c in enumerate(_list(raw[key], f"space.{key}", source)))
    for key in _SPLIT_FIELDS:
        if key in raw:
            kw[key] = tuple(tuple(files.integer(x, lo=1, source=source, field=f"space.{key}[{i}][{m}]")
                                  for m, x in enumerate(_list(s, f"space.{key}[{i}]", source)))
                            for i, s in enumerate(_list(raw[key], f"space.{key}", source)))
    for key in ("solo_cores", "solo_gpcs"):
        if key in raw:
            kw[key] = files.integer(raw[key], lo=1, hi=10**6, source=source, field=f"space.{key}")
    if "budget" in raw:
        kw["budget"] = files.text(raw["budget"], source=source, field="space.budget")
    try:
        return ConfigSpace(**kw)
    except InstanceError as exc:
        raise InstanceError(exc.reason, source=source, field=f"space.{exc.field}") from None


def _model(raw: dict, space: ConfigSpace, source: str | None):
    files.no_unknown_fields(raw, ("analytic", "table"), source=source, where="model")
    if len(raw) != 1:
        raise InstanceError("give one of 'analytic' (its parameters) or 'table' (measured slowdowns)",
                            source=source, field="model")
    if "table" in raw:
        return TableModel.from_rows(raw["table"], space, source=source, where="model.table")
    params = _object(raw["analytic"], "model.analytic", source)
    files.no_unknown_fields(params, _ANALYTIC_FIELDS, source=source, where="model.analytic")
    kw: dict[str, Any] = {}
    for key in _ANALYTIC_FIELDS:
        if key not in params:
            continue
        where = f"model.analytic.{key}"
        if key.startswith("ref_"):
            kw[key] = files.integer(params[key], lo=1, hi=10**6, source=source, field=where)
        elif key.endswith("_idle"):
            kw[key] = files.real(params[key], lo=0.0, source=source, field=where)
        else:
            kw[key] = files.real(params[key], positive=True, source=source, field=where)
    return AnalyticModel(**kw)


# ---------------------------------------------------------------------------
# WeightedQueue

def _time(value: float) -> float | None:
    return None if math.isinf(value) else float(value)


def _queue_to_dict(queue: WeightedQueue) -> dict[str, Any]:
    out: dict[str, Any] = {"solo": [float(t) for t in queue.solo],
                           "pair": [[_time(t) for t in row] for row in queue.pair]}
    if queue.triple is not None:
        out["triple"] = [{"jobs": [int(i) for i in key], "time": _time(t)} for key, t in sorted(queue.triple.items())]
    out.update(concurrency=int(queue.concurrency), names=list(queue.names))
    return out


def _queue_from_dict(data: dict, source: str | None) -> WeightedQueue:
    files.no_unknown_fields(data, _QUEUE_FIELDS, source=source)
    solo = [files.real(t, positive=True, source=source, field=f"solo[{i}]")
            for i, t in enumerate(_list(data["solo"], "solo", source))]
    W = len(solo)
    if W > MAX_JOBS:
        raise InstanceError(f"{W} jobs; at most {MAX_JOBS:,} in one window", source=source, field="solo")
    if "pair" not in data:
        raise InstanceError("missing", source=source, field="pair")
    rows = _list(data["pair"], "pair", source)
    if len(rows) != W:
        raise InstanceError(f"{len(rows)} rows for {W} jobs", source=source, field="pair")
    pair = np.empty((W, W))
    for i, row in enumerate(rows):
        row = _list(row, f"pair[{i}]", source)
        if len(row) != W:
            raise InstanceError(f"{len(row)} entries for {W} jobs", source=source, field=f"pair[{i}]")
        for j, t in enumerate(row):
            pair[i, j] = math.inf if t is None else files.real(t, positive=True, source=source,
                                                                 field=f"pair[{i}][{j}]")
    triple = None
    if "triple" in data:
        triple = {}
        for k, raw in enumerate(_list(data["triple"], "triple", source)):
            where = f"triple[{k}]"
            raw = _object(raw, where, source)
            files.no_unknown_fields(raw, ("jobs", "time"), source=source, where=where)
            for key in ("jobs", "time"):
                if key not in raw:
                    raise InstanceError("missing", source=source, field=f"{where}.{key}")
            members = _list(raw["jobs"], f"{where}.jobs", source)
            key = tuple(files.integer(x, lo=0, hi=W - 1, source=source, field=f"{where}.jobs[{m}]")
                        for m, x in enumerate(members))
            if len(key) != 3 or not key[0] < key[1] < key[2]:
                raise InstanceError(f"must be three increasing job indices, got {list(key)}", source=source,
                                    field=f"{where}.jobs")
            if key in triple:
                raise InstanceError(f"the set {list(key)} is listed twice", source=source, field=f"{where}.jobs")
            t = raw["time"]
            triple[key] = math.inf if t is None else files.real(t, positive=True, source=source,
                                                                 field=f"{where}.time")
    concurrency = files.integer(data.get("concurrency", 2), lo=1, hi=3, source=source, field="concurrency")
    names = tuple(files.name(n, source=source, field=f"names[{i}]")
                  for i, n in enumerate(_list(data.get("names", []), "names", source)))
    return WeightedQueue(np.array(solo, float), pair, triple, concurrency, names)
