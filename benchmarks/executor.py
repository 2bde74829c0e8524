"""Run a benchmark's independent tasks here, in local processes, or on a Dask cluster; same results.

Every sweep that may outgrow one machine is written as a function applied
to a list of independent, picklable tasks (one instance, one table cell).
:class:`Executor` maps it and returns the results **in the order of the
tasks**, whatever order they finish in, so the aggregation (and every
printed figure, timings aside) is the same for every executor and every
``--jobs``:

* ``local`` with ``--jobs 1``: in this process, one after another;
* ``local`` with ``--jobs N``: ``N`` worker processes on this machine;
* ``dask``: a Dask cluster, the one at ``--scheduler tcp://host:8786`` or,
  without an address, a ``LocalCluster`` of ``--jobs`` single-threaded
  worker processes (``pip install "dask[distributed]"``).

Each task must carry everything it needs (configuration, seed): a worker
process sees neither this process's globals nor a monkeypatched registry.

Examples
--------
>>> from benchmarks.executor import Executor
>>> Executor().map(abs, [-2, 3, -1])
[2, 3, 1]
>>> Executor("local", jobs=2).map(abs, [-2, 3, -1])
[2, 3, 1]

On the command line::

    python -m benchmarks.compare --n 12 --executor local --jobs 2
    python -m benchmarks.compare --n 12 --executor dask --jobs 4                 # LocalCluster
    python -m benchmarks.compare --n 12 --executor dask --scheduler tcp://host:8786
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from instances.errors import OptionError
from instances.options import choice

__all__ = ["EXECUTORS", "SCHEMES", "Executor", "ExecutorError", "add_arguments", "from_args"]

EXECUTORS = ("local", "dask")
#: Address schemes a Dask scheduler listens on.
SCHEMES = ("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")


class ExecutorError(RuntimeError):
    """The executor itself failed (Dask missing, scheduler unreachable), as opposed to a task."""


@dataclass(frozen=True)
class Executor:
    """Where the tasks of a sweep run.

    Parameters
    ----------
    kind
        ``"local"`` or ``"dask"``.
    jobs
        Worker processes (``local``), or workers of the ``LocalCluster`` that
        ``dask`` starts when no ``scheduler`` is given. ``1`` with ``local``
        runs everything in this process.
    scheduler
        Address of a running Dask scheduler (``dask`` only).
    """

    kind: str = "local"
    jobs: int = 1
    scheduler: str | None = None

    def __post_init__(self) -> None:
        choice(self.kind, EXECUTORS, "executor")
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1:
            raise OptionError(f"must be an integer >= 1, got {self.jobs!r}", field="jobs")
        if self.scheduler is not None:
            if self.kind != "dask":
                raise OptionError("a scheduler address needs the dask executor", field="scheduler")
            if not isinstance(self.scheduler, str) or not self.scheduler.startswith(SCHEMES):
                raise OptionError(f"must be an address like tcp://host:8786, got {self.scheduler!r}",
                                  field="scheduler")

    @property
    def in_process(self) -> bool:
        """True when the tasks run in this process (progress bars inside a task are then visible)."""
        return self.kind == "local" and self.jobs == 1

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any], *, quiet: bool = True,
            desc: str | None = None, unit: str = "task") -> list:
        """``[fn(t) for t in tasks]``, run by this executor; a progress bar unless ``quiet``.

        ``fn`` must be picklable (a module-level function or a
        ``functools.partial`` of one) unless the executor is in-process.
        An exception raised by a task is raised here.
        """
        from benchmarks.common import progress

        tasks = list(tasks)
        with progress(total=len(tasks), desc=desc, quiet=quiet, unit=unit) as bar:
            if self.in_process:
                out = []
                for t in tasks:
                    out.append(fn(t))
                    bar.update(1)
                return out
            if self.kind == "local":
                return self._map_processes(fn, tasks, bar)
            return self._map_dask(fn, tasks, bar)

    def _map_processes(self, fn, tasks, bar) -> list:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        out: list = [None] * len(tasks)
        with ProcessPoolExecutor(max_workers=min(self.jobs, max(len(tasks), 1))) as pool:
            index = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
            for fut in as_completed(index):
                out[index[fut]] = fut.result()
                bar.update(1)
        return out

    def _map_dask(self, fn, tasks, bar) -> list:
        if importlib.util.find_spec("distributed") is None:
            raise ExecutorError('the dask executor needs dask[distributed]: pip install "dask[distributed]"')
        from dask.distributed import Client, LocalCluster, as_completed

        cluster = None
        try:
            if self.scheduler:
                client = Client(self.scheduler, timeout="20s")
            else:
                cluster = LocalCluster(n_workers=self.jobs, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
                client = Client(cluster)
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            where = self.scheduler or "a LocalCluster"
            raise ExecutorError(f"cannot reach the dask scheduler at {where}: {exc}") from None
        try:
            out: list = [None] * len(tasks)
            futures = client.map(fn, tasks, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            for fut in as_completed(futures):
                out[index[fut.key]] = fut.result()
                bar.update(1)
            return out
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--executor``, ``--scheduler`` and ``--jobs`` to a benchmark's parser."""
    from benchmarks.common import positive_int

    parser.add_argument("--executor", default="local", choices=EXECUTORS,
                        help="where the independent tasks run: this machine, or a Dask cluster")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="Dask scheduler address, e.g. tcp://host:8786, for --executor dask (default: none, "
                             "dask starts a LocalCluster of --jobs workers)")
    parser.add_argument("--jobs", type=positive_int, default=1,
                        help="worker processes (local) or LocalCluster workers (dask); 1 runs in this process")


def from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Executor:
    """The :class:`Executor` the parsed arguments ask for; a bad combination is ``parser.error``."""
    if args.executor == "dask" and importlib.util.find_spec("distributed") is None:
        parser.error('--executor dask needs dask[distributed]: pip install "dask[distributed]"')
    try:
        return Executor(args.executor, args.jobs, args.scheduler)
    except OptionError as exc:
        parser.error(f"--{exc.field}: {exc.reason}" if exc.field else str(exc))
