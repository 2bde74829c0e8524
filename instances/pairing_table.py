"""Measured slowdowns of the pairing family, read from a CSV (:class:`TableModel`)."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

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
            if sd <= 0:
                raise InstanceError(f"line {line}: must be > 0, got {sd:g}", source=path,
                                    task=app, field="slowdown")
            cfg = Config(shares["cores"], shares["gpcs"], pc, pg)
            core_ok, gpc_ok = space.shares(len(cfg.cores))
            if cfg.cores not in core_ok:
                raise InstanceError(f"line {line}: core split {row['cores']} not in the "
                                    f"configuration space", source=path, task=app, field="cores")
            if cfg.gpcs not in gpc_ok:
                raise InstanceError(f"line {line}: GPC split {row['gpcs']} not in the "
                                    f"configuration space", source=path, task=app, field="gpcs")
            if pc not in space.cpu_caps or pg not in space.gpu_caps or pc + pg > space.p_max:
                raise InstanceError(f"line {line}: caps {pc:g}/{pg:g} W not on the grids "
                                    f"{list(space.cpu_caps)} / {list(space.gpu_caps)} or above "
                                    f"P_max", source=path, task=app, field="cpu_cap")
            k = cls.key(app, others, cfg)
            if k in table and table[k] != sd:
                raise InstanceError(f"line {line}: conflicting duplicate ({table[k]:g} vs "
                                    f"{sd:g})", source=path, task=app, field="slowdown")
            table[k] = sd
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
