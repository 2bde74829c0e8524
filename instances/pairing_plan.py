"""Solutions of the pairing family: :class:`JobSet` and :class:`Plan`, and their strict JSON form."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from instances import files
from instances.errors import InstanceError
from instances.pairing_space import Config


@dataclass(frozen=True)
class JobSet:
    """One job set ``JS_i`` with its configuration ``HC_i`` and its time.

    ``config`` is None for :class:`WeightedQueue` problems.
    """

    jobs: tuple[str, ...]
    config: Config | None
    time: float


@dataclass
class Plan:
    """A solution: the lists ``L_JS`` and ``L_HC`` of Sec. 3.2, run one after another.

    The JSON form (:meth:`to_json`, read back by :meth:`from_json`)::

        {"policy": "co-scheduling (Algorithm 1)",
         "sets": [{"jobs": ["j0", "j3"],
                   "config": {"cores": [16, 16], "gpcs": [3, 4], "cpu_cap": 175.0, "gpu_cap": 175.0},
                   "time": 12.5}],
         "info": {}}

    ``config`` is ``null`` for :class:`WeightedQueue` plans.

    Examples
    --------
    >>> plan = Plan([JobSet(("a",), None, 2.0), JobSet(("b", "c"), None, 3.5)])
    >>> plan.total_time
    5.5
    >>> Plan.from_json(plan.to_json()) == plan
    True
    """

    sets: list[JobSet]
    policy: str = ""
    info: dict = field(default_factory=dict)

    @property
    def total_time(self) -> float:
        return float(sum(s.time for s in self.sets))

    def pairs(self) -> list[tuple[str, ...]]:
        """The job sets as sorted name tuples, sorted (for comparisons)."""
        return sorted(tuple(sorted(s.jobs)) for s in self.sets)

    def to_json(self) -> str:
        """The plan as JSON text; :meth:`from_json` reads it back equal.

        Times and caps are written as floats (``repr``, so they read back
        exactly). Of ``info`` only the entries whose value is plain JSON data
        are written (dicts with string keys, lists, strings, integers, finite
        floats, booleans, ``None``); the others are dropped, since no JSON
        reader could rebuild them: the ``"costs"`` entry the heuristics add
        (a :class:`Costs`, which :func:`costs_of` rebuilds from the problem),
        numpy arrays and integers, tuples (they would read back as lists).

        Examples
        --------
        >>> plan = Plan([JobSet(("a",), Config((32,), (8,), 175, 175), 0.1 + 0.2)],
        ...             info={"costs": object(), "n": 1})
        >>> print(plan.to_json())  # doctest: +NORMALIZE_WHITESPACE
        {"policy": "", "sets": [{"jobs": ["a"], "config": {"cores": [32], "gpcs": [8], "cpu_cap": 175.0,
         "gpu_cap": 175.0}, "time": 0.30000000000000004}], "info": {"n": 1}}
        >>> back = Plan.from_json(plan.to_json())
        >>> back.sets == plan.sets, back.info
        (True, {'n': 1})
        """
        sets = []
        for s in self.sets:
            cfg = s.config
            sets.append({"jobs": list(s.jobs),
                         "config": None if cfg is None else {
                             "cores": [int(c) for c in cfg.cores], "gpcs": [int(g) for g in cfg.gpcs],
                             "cpu_cap": float(cfg.cpu_cap), "gpu_cap": float(cfg.gpu_cap)},
                         "time": float(s.time)})
        info = {k: v for k, v in self.info.items() if isinstance(k, str) and _plain_json(v)}
        return json.dumps({"policy": self.policy, "sets": sets, "info": info}, allow_nan=False)

    @classmethod
    def from_json(cls, text: str, *, source: str | None = None) -> "Plan":
        """Read a plan written by :meth:`to_json`, strictly.

        An unknown field, a share of ``4.7`` or ``true``, a time given as
        text, ``NaN`` or ``1e400``, a key written twice: each raises
        :class:`~instances.errors.InstanceError` naming ``source``, the set
        and the field, in one line. Whether the plan is feasible is
        :func:`check`'s business, not the reader's.

        Examples
        --------
        >>> Plan.from_json('{"sets": [{"jobs": ["a"], "config": null, "time": "2"}]}', source="p.json")
        Traceback (most recent call last):
        ...
        instances.errors.InstanceError: p.json: field sets[0].time: must be a number, got '2'
        """
        data = files.parse_json(text, source)
        if not isinstance(data, dict):
            raise InstanceError(f"a plan must be a JSON object, got {data!r}"[:200], source=source)
        files.no_unknown_fields(data, ("policy", "sets", "info"), source=source)
        if "sets" not in data:
            raise InstanceError("missing", source=source, field="sets")
        if not isinstance(data["sets"], list):
            raise InstanceError(f"must be a list, got {data['sets']!r}"[:200], source=source, field="sets")
        sets = []
        for k, raw in enumerate(data["sets"]):
            where = f"sets[{k}]"
            if not isinstance(raw, dict):
                raise InstanceError(f"must be an object, got {raw!r}"[:200], source=source, field=where)
            files.no_unknown_fields(raw, ("jobs", "config", "time"), source=source, where=where)
            for key in ("jobs", "time"):
                if key not in raw:
                    raise InstanceError("missing", source=source, field=f"{where}.{key}")
            if not isinstance(raw["jobs"], list):
                raise InstanceError(f"must be a list of job names, got {raw['jobs']!r}"[:200], source=source,
                                    field=f"{where}.jobs")
            jobs = tuple(files.name(n, source=source, field=f"{where}.jobs[{i}]")
                         for i, n in enumerate(raw["jobs"]))
            config = _read_config(raw.get("config"), f"{where}.config", source)
            sets.append(JobSet(jobs, config, files.real(raw["time"], source=source, field=f"{where}.time")))
        policy = files.text(data.get("policy", ""), source=source, field="policy")
        info = data.get("info", {})
        if not isinstance(info, dict):
            raise InstanceError(f"must be an object, got {info!r}"[:200], source=source, field="info")
        _finite_json(info, "info", source)
        return cls(sets, policy=policy, info=info)


def _plain_json(value) -> bool:
    """Whether ``value`` is JSON data that :func:`files.parse_json` reads back equal."""
    if value is None or isinstance(value, (bool, str)):
        return isinstance(value, bool) or value is None or files.bad_char(value) is None
    if isinstance(value, int):
        return len(str(abs(value))) <= files.MAX_INT_DIGITS
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and files.bad_char(k) is None and _plain_json(v) for k, v in value.items())
    return False


def _finite_json(value, where: str, source: str | None) -> None:
    """Refuse ``NaN`` and infinities anywhere inside a parsed JSON value."""
    if isinstance(value, float):
        files.real(value, source=source, field=where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite_json(v, f"{where}[{i}]", source)
    elif isinstance(value, dict):
        for k, v in value.items():
            _finite_json(v, f"{where}.{k}", source)


def _read_config(raw, where: str, source: str | None) -> Config | None:
    """A :class:`Config` from its JSON object (``null``: none), every field read strictly."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InstanceError(f"must be an object or null, got {raw!r}"[:200], source=source, field=where)
    keys = ("cores", "gpcs", "cpu_cap", "gpu_cap")
    files.no_unknown_fields(raw, keys, source=source, where=where)
    for key in keys:
        if key not in raw:
            raise InstanceError("missing", source=source, field=f"{where}.{key}")
    shares = {}
    for key in ("cores", "gpcs"):
        if not isinstance(raw[key], list):
            raise InstanceError(f"must be a list of integers, got {raw[key]!r}"[:200], source=source,
                                field=f"{where}.{key}")
        shares[key] = tuple(files.integer(x, lo=1, source=source, field=f"{where}.{key}[{i}]")
                            for i, x in enumerate(raw[key]))
    return Config(shares["cores"], shares["gpcs"],
                  files.real(raw["cpu_cap"], positive=True, source=source, field=f"{where}.cpu_cap"),
                  files.real(raw["gpu_cap"], positive=True, source=source, field=f"{where}.gpu_cap"))
