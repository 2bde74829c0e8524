"""Measured slowdowns of the pairing family, read from a CSV (:class:`TableModel`)."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from instances import files
from instances.errors import InstanceError
from instances.pairing_csv import parse_number, parse_shares, read_rows
from instances.pairing_jobs import Job
from instances.pairing_slowdown import SlowdownModel
from instances.pairing_space import Config, ConfigSpace


TABLE_COLUMNS = ("app", "corunners", "cores", "gpcs", "cpu_cap", "gpu_cap", "slowdown")

# Sample table shipped with the package (tabulated from AnalyticModel, not measured).
SAMPLE_TABLE = Path(__file__).parent / "data" / "pairing" / "jobmix1_analytic.csv"


class TableModel(SlowdownModel):
    """Measured slowdowns read from a CSV (the researcher's own measurements).

    One row per (program, co-runners, configuration) with the columns of
    :data:`TABLE_COLUMNS`::

        app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown
        lud,,32,8,175,175,1.21            # solo run under caps 175/175 W
        lud,srad,16/16,4/3,175,175,1.64   # lud beside srad, lud gets 16 cores, 4 GPCs
        lud,srad+bfs,8/12/12,3/2/2,...    # C = 3: co-runners joined by '+'

    ``cores`` and ``gpcs`` list the program's own share first, then the
    co-runners' in the order given. Every row is checked against ``space``
    (shares and cap grids; the cap sum only against ``P_max`` so one file may
    hold several ``P_total``). A configuration the search asks for that the
    file lacks is a clear error naming it (see :meth:`slowdown`).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.csv")
    >>> _ = open(p, "w").write("app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown\\n"
    ...                        "lud,,32,8,175,175,1.2\\n")
    >>> TableModel.from_csv(p).slowdown(Job("j", "lud", 3.0), (), Config((32,), (8,), 175, 175))
    1.2
    """

    def __init__(self, table: Mapping[tuple, float], source: str = "<table>") -> None:
        self.table = dict(table)
        self.source = source

    @staticmethod
    def key(app: str, others: Sequence[str], config: Config) -> tuple:
        """Canonical key: co-runners sorted with their shares (their order is arbitrary)."""
        rest = sorted(zip(others, config.cores[1:], config.gpcs[1:]))
        return (app, tuple(r[0] for r in rest), (config.cores[0],) + tuple(r[1] for r in rest),
                (config.gpcs[0],) + tuple(r[2] for r in rest), float(config.cpu_cap),
                float(config.gpu_cap))

    @classmethod
    def from_csv(cls, path: str | Path, space: ConfigSpace | None = None) -> "TableModel":
        """Read and validate a slowdown table (raises InstanceError naming file, line, field)."""
        path = str(path)
        space = space if space is not None else ConfigSpace()
        rows = read_rows(path, required=TABLE_COLUMNS)
        table: dict[tuple, float] = {}
        for line, row in rows:
            app = row["app"]
            if not app:
                raise InstanceError(f"line {line}: empty program name", source=path, field="app")
            others = tuple(o.strip() for o in row["corunners"].split("+")) if row["corunners"] else ()
            if any(not o for o in others):
                raise InstanceError(f"line {line}: empty co-runner name in "
                                    f"{row['corunners']!r}", source=path, task=app,
                                    field="corunners")
            if len(others) > 2:
                raise InstanceError(f"line {line}: {len(others)} co-runners; at most 2 (C <= 3)",
                                    source=path, task=app, field="corunners")
            shares = {}
            for fld in ("cores", "gpcs"):
                shares[fld] = parse_shares(row[fld], path, line, app, fld)
                if len(shares[fld]) != 1 + len(others):
                    raise InstanceError(f"line {line}: {len(shares[fld])} share(s) for "
                                        f"{1 + len(others)} job(s)", source=path, task=app,
                                        field=fld)
            pc = parse_number(row["cpu_cap"], path, line, app, "cpu_cap")
            pg = parse_number(row["gpu_cap"], path, line, app, "gpu_cap")
            sd = parse_number(row["slowdown"], path, line, app, "slowdown")
            cfg = Config(shares["cores"], shares["gpcs"], pc, pg)
            fault = _fault(space, table, cls.key(app, others, cfg), cfg, sd, row["cores"], row["gpcs"])
            if fault:
                raise InstanceError(f"line {line}: {fault[0]}", source=path, task=app, field=fault[1])
            table[cls.key(app, others, cfg)] = sd
        if not table:
            raise InstanceError("no measurements (header only)", source=path)
        return cls(table, source=path)

    def to_csv(self, path: str | Path) -> None:
        """Write the table back in the CSV format :meth:`from_csv` reads."""
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(TABLE_COLUMNS)
            for (app, others, cores, gpcs, pc, pg), sd in sorted(self.table.items()):
                w.writerow([app, "+".join(others), "/".join(map(str, cores)),
                            "/".join(map(str, gpcs)), f"{pc:g}", f"{pg:g}", repr(sd)])

    def to_rows(self) -> list[dict[str, Any]]:
        """The table as JSON-able rows, read back by :meth:`from_rows`.

        Examples
        --------
        >>> t = TableModel({TableModel.key("lud", (), Config((32,), (8,), 175, 175)): 1.2})
        >>> t.to_rows()  # doctest: +NORMALIZE_WHITESPACE
        [{'app': 'lud', 'corunners': [], 'cores': [32], 'gpcs': [8], 'cpu_cap': 175.0, 'gpu_cap': 175.0,
          'slowdown': 1.2}]
        >>> TableModel.from_rows(t.to_rows(), ConfigSpace()) == t
        True
        """
        return [{"app": app, "corunners": list(others), "cores": [int(c) for c in cores],
                 "gpcs": [int(g) for g in gpcs], "cpu_cap": float(pc), "gpu_cap": float(pg), "slowdown": float(sd)}
                for (app, others, cores, gpcs, pc, pg), sd in sorted(self.table.items())]

    @classmethod
    def from_rows(cls, rows: Any, space: ConfigSpace, *, source: str | None = None,
                  where: str = "model.table") -> "TableModel":
        """Read rows written by :meth:`to_rows`, strictly, and check them against ``space`` like :meth:`from_csv`.

        An unknown field, a share of ``4.7``, a slowdown given as text, a
        split or cap outside ``space``: each raises
        :class:`~instances.errors.InstanceError` naming ``source`` and the
        field (``where[k].field``).
        """
        if not isinstance(rows, list):
            raise InstanceError(f"must be a list of measurements, got {rows!r}"[:200], source=source, field=where)
        table: dict[tuple, float] = {}
        for k, raw in enumerate(rows):
            at = f"{where}[{k}]"
            if not isinstance(raw, dict):
                raise InstanceError(f"must be an object, got {raw!r}"[:200], source=source, field=at)
            files.no_unknown_fields(raw, _ROW_FIELDS, source=source, where=at)
            for key in _ROW_FIELDS:
                if key not in raw:
                    raise InstanceError("missing", source=source, field=f"{at}.{key}")
            app = files.name(raw["app"], source=source, field=f"{at}.app")
            if not isinstance(raw["corunners"], list) or len(raw["corunners"]) > 2:
                raise InstanceError(f"must be a list of at most 2 program names (C <= 3), got {raw['corunners']!r}"
                                    [:200], source=source, task=app, field=f"{at}.corunners")
            others = tuple(files.name(o, source=source, task=app, field=f"{at}.corunners[{i}]")
                           for i, o in enumerate(raw["corunners"]))
            shares = {}
            for fld in ("cores", "gpcs"):
                if not isinstance(raw[fld], list) or len(raw[fld]) != 1 + len(others):
                    raise InstanceError(f"must list {1 + len(others)} share(s), one per job, got {raw[fld]!r}"[:200],
                                        source=source, task=app, field=f"{at}.{fld}")
                shares[fld] = tuple(files.integer(x, lo=1, source=source, task=app, field=f"{at}.{fld}[{i}]")
                                    for i, x in enumerate(raw[fld]))
            pc, pg, sd = (files.real(raw[fld], source=source, task=app, field=f"{at}.{fld}")
                          for fld in ("cpu_cap", "gpu_cap", "slowdown"))
            cfg = Config(shares["cores"], shares["gpcs"], pc, pg)
            fault = _fault(space, table, cls.key(app, others, cfg), cfg, sd, "/".join(map(str, cfg.cores)),
                           "/".join(map(str, cfg.gpcs)))
            if fault:
                raise InstanceError(fault[0], source=source, task=app, field=f"{at}.{fault[1]}")
            table[cls.key(app, others, cfg)] = sd
        if not table:
            raise InstanceError("no measurements", source=source, field=where)
        return cls(table, source=source or "<table>")

    def __eq__(self, other: object) -> bool:
        # the measurements decide; where they were read from does not
        return isinstance(other, TableModel) and self.table == other.table

    __hash__ = None  # type: ignore[assignment]  (mutable table)

    @classmethod
    def from_model(cls, model: SlowdownModel, apps: Mapping[str, Job], space: ConfigSpace,
                   sizes: Sequence[int] = (1, 2)) -> "TableModel":
        """Tabulate another model for the programs ``apps`` (e.g. to make a sample file)."""
        table = {}
        names = sorted(apps)
        for size in sizes:
            for combo in itertools.product(names, repeat=size):
                for cfg in space.corun_configs(size):
                    job, others = apps[combo[0]], tuple(apps[a] for a in combo[1:])
                    table[cls.key(combo[0], combo[1:], cfg)] = model.slowdown(job, others, cfg)
        return cls(table, source=f"<tabulated {type(model).__name__}>")

    def slowdown(self, job: Job, others: Sequence[Job], config: Config) -> float:
        k = self.key(job.app, tuple(o.app for o in others), config)
        try:
            return self.table[k]
        except KeyError:
            with_ = " beside " + "+".join(o.app for o in others) if others else " solo"
            raise InstanceError(f"no measurement for {job.app}{with_} at {config}",
                                source=self.source, task=job.name, field="slowdown") from None

    def set_slowdowns(self, jobs, sets, configs):
        # Jobs of one program share measurements: look each (programs, config)
        # up once and scatter to the sets that have those programs.
        sets = np.asarray(sets, dtype=np.int64)
        m, c = sets.shape
        apps = sorted({j.app for j in jobs})
        code = np.array([apps.index(j.app) for j in jobs], dtype=np.int64)
        combos, inverse = np.unique(code[sets], axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        rep = np.array([int(np.flatnonzero(inverse == u)[0]) for u in range(len(combos))])
        small = SlowdownModel.set_slowdowns(self, jobs, sets[rep], configs)
        return small[inverse]


_ROW_FIELDS = ("app", "corunners", "cores", "gpcs", "cpu_cap", "gpu_cap", "slowdown")


def _fault(space: ConfigSpace, table: Mapping[tuple, float], key: tuple, config: Config, slowdown: float,
           cores_text: str, gpcs_text: str) -> tuple[str, str] | None:
    """Why one measurement cannot enter ``table`` (reason, field), or None.

    The slowdown must be positive, the shares a split of ``space``, the caps on
    its grids with a sum within ``P_max`` (not ``P_total``: one table may serve
    several budgets), and a repeated measurement must agree.
    """
    if slowdown <= 0:
        return f"must be > 0, got {slowdown:g}", "slowdown"
    core_ok, gpc_ok = space.shares(len(config.cores))
    if config.cores not in core_ok:
        return f"core split {cores_text} not in the configuration space", "cores"
    if config.gpcs not in gpc_ok:
        return f"GPC split {gpcs_text} not in the configuration space", "gpcs"
    pc, pg = config.cpu_cap, config.gpu_cap
    if pc not in space.cpu_caps or pg not in space.gpu_caps or pc + pg > space.p_max:
        return (f"caps {pc:g}/{pg:g} W not on the grids {list(space.cpu_caps)} / {list(space.gpu_caps)} or above "
                f"P_max", "cpu_cap")
    if key in table and table[key] != slowdown:
        return f"conflicting duplicate ({table[key]:g} vs {slowdown:g})", "slowdown"
    return None
