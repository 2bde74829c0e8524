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

A command line's executor (:func:`from_args`) runs a *sweep*: a task that
raises, or whose worker process dies, is recorded as :class:`Failed` in its
place and the other tasks go on (the command then exits 1, see
:func:`benchmarks.command.status`); with ``--out DIR`` every finished task is recorded
in ``DIR/records.jsonl`` (:mod:`benchmarks.records`) and the same command
run again skips it. A worker process that dies takes the tasks it ran with
it: a local pool reruns the tasks that had started, one at a time, so that
only the one that kills its worker is recorded as failed; Dask reschedules
them on another worker (and gives up after the scheduler's
``allowed-failures``). Ctrl-C stops the workers and drops the tasks in
flight (:mod:`benchmarks.command`). The executor of the Python API
(``Executor()``) raises the first task's exception instead.

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
    python -m benchmarks.compare --n 12 --out results/n12   # records; the same line again resumes
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from benchmarks import command
from instances.console import CommandError
from instances.errors import OptionError
from instances.options import choice

__all__ = ["EXECUTORS", "SCHEMES", "Executor", "ExecutorError", "Failed", "WorkerDied", "succeeded",
           "add_arguments", "from_args"]

EXECUTORS = ("local", "dask")
#: Address schemes a Dask scheduler listens on.
SCHEMES = ("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")

#: Dask settings for the clusters :func:`local_cluster` starts. Nobody opens their dashboard, yet by
#: default each worker samples its threads every 10 ms for the dashboard's profile and every process
#: checks its event loop every 20 ms, which an idle cluster pays for all its life on a small machine.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def local_cluster(workers: int) -> Any:
    """A dask ``LocalCluster`` of single-threaded worker processes, without dashboard or profiler.

    Parameters
    ----------
    workers : int
        Worker processes (each one thread, so a task has a core to itself).

    Returns
    -------
    distributed.LocalCluster
        Started; close it (or use it as a context manager) when done.
    """
    import dask
    from dask.distributed import LocalCluster

    # the nanny hands the configuration to its worker process, so the workers run with it too
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                            silence_logs=logging.CRITICAL)


class ExecutorError(CommandError):
    """The executor itself failed (Dask missing, scheduler unreachable), as opposed to a task.

    A ``CommandError``: a command line reports it as one error line, exit status 2.
    """


class WorkerDied(RuntimeError):
    """The worker process running a task died (killed, out of memory, a crash in native code)."""


@dataclass(frozen=True)
class Failed:
    """A failed task's place in a sweep's results: what it was and its error, on one line each.

    Examples
    --------
    >>> Executor(keep_going=True).map(lambda x: 1 // x, [1, 0], label=lambda x: f"x={x}")
    [1, Failed(label='x=0', error='ZeroDivisionError: integer division or modulo by zero')]
    """

    label: str
    error: str


def succeeded(results: Sequence[Any]) -> list:
    """The results that are not :class:`Failed`, in order (a table is built from these)."""
    return [r for r in results if not isinstance(r, Failed)]



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
    keep_going
        Record a failing task as :class:`Failed` and run the others (a
        command's sweep) instead of raising its exception (the Python API).
    records
        A :class:`benchmarks.records.Records`: skip the tasks it holds,
        record every task that finishes.
    """

    kind: str = "local"
    jobs: int = 1
    scheduler: str | None = None
    keep_going: bool = field(default=False, compare=False)
    records: Any = field(default=None, compare=False, repr=False)

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
            desc: str | None = None, unit: str = "task", label: Callable[[Any], str] | None = None) -> list:
        """``[fn(t) for t in tasks]``, run by this executor; a progress bar unless ``quiet``.

        ``fn`` must be picklable (a module-level function or a
        ``functools.partial`` of one) unless the executor is in-process.
        An exception raised by a task is raised here, unless ``keep_going``:
        then the task's place holds a :class:`Failed` named by ``label(task)``
        (default: the task's plain fields). With ``records``, a task recorded
        as finished is not run again; every task that finishes is recorded.
        """
        from benchmarks import records as rec
        from benchmarks.common import progress

        tasks = list(tasks)
        name = label or _label
        out: list = [None] * len(tasks)
        keys = [rec.task_key(fn, t) for t in tasks] if self.records is not None else None
        todo = []
        for i in range(len(tasks)):
            if keys is not None and keys[i] in self.records.done:
                out[i] = self.records.done[keys[i]]
            else:
                todo.append(i)
        runs = self._run_here(fn, tasks, todo) if self.in_process else \
            self._run_processes(fn, tasks, todo) if self.kind == "local" else self._run_dask(fn, tasks, todo)
        seen: set[int] = set()
        with progress(total=len(tasks), desc=desc, quiet=quiet, unit=unit) as bar:
            bar.update(len(tasks) - len(todo))
            try:
                for i, value, exc, seconds in runs:
                    seen.add(i)
                    if exc is None:
                        out[i] = value
                        if keys is not None:
                            self.records.add(keys[i], name(tasks[i]), value, seconds)
                    elif not self.keep_going:
                        raise exc
                    else:
                        out[i] = Failed(name(tasks[i]), _one_line(exc))
                        command.note_failure(out[i])
                        if keys is not None:
                            self.records.add_failure(keys[i], out[i].label, out[i].error)
                    bar.update(1)
            finally:
                runs.close()  # on an exception or Ctrl-C: stop the workers, drop what is in flight
        if len(seen) != len(todo):
            raise ExecutorError(f"the {self.kind} executor returned {len(seen)} of {len(todo)} results")
        return out

    # Each runner yields (index, result, exception, seconds) as tasks finish; closing it early stops
    # its workers.

    def _run_here(self, fn, tasks, todo) -> Iterator[tuple]:
        for i in todo:
            t0 = time.perf_counter()
            try:
                value = fn(tasks[i])
            except Exception as exc:
                yield i, None, exc, None
            else:
                yield i, value, None, time.perf_counter() - t0

    def _run_processes(self, fn, tasks, todo) -> Iterator[tuple]:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        marks = tempfile.mkdtemp(prefix="sweep-started-")
        pending, alone = list(todo), []  # alone: tasks a dead worker may have taken, rerun one at a time
        try:
            while pending or alone:
                isolated = bool(alone)
                batch = [alone.pop(0)] if isolated else pending
                if not isolated:
                    pending = []
                pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(batch)), initializer=_init_worker)
                clean = False
                try:
                    futures = {pool.submit(_marked, fn, tasks[i], os.path.join(marks, str(i))): i for i in batch}
                    done: set[int] = set()
                    broken = False
                    for fut in as_completed(futures):
                        i = futures[fut]
                        exc = fut.exception()
                        if isinstance(exc, BrokenProcessPool):
                            broken = True
                            break
                        done.add(i)
                        if exc is not None:
                            yield i, None, exc, None
                        else:
                            value, seconds = fut.result()
                            yield i, value, None, seconds
                    if broken:
                        rest = [i for i in batch if i not in done]
                        if isolated:
                            yield rest[0], None, WorkerDied("the worker process running it died"), None
                        else:
                            started = [i for i in rest if os.path.exists(os.path.join(marks, str(i)))]
                            alone += started
                            pending = [i for i in rest if i not in started]
                    clean = True
                finally:
                    _close_pool(pool, abort=not clean)
        finally:
            shutil.rmtree(marks, ignore_errors=True)

    def _run_dask(self, fn, tasks, todo) -> Iterator[tuple]:
        if importlib.util.find_spec("distributed") is None:
            raise ExecutorError('the dask executor needs dask[distributed]: pip install "dask[distributed]"')
        from dask.distributed import Client
        from distributed.scheduler import KilledWorker

        if not todo:
            return
        cluster = None
        # our own cluster's scheduler runs in this process and logs each lost worker as an error:
        # the sweep reports what became of the task instead
        quiet = _QuietLogs(*(() if self.scheduler else ("distributed.scheduler", "distributed.nanny")))
        quiet.__enter__()
        try:
            if self.scheduler:
                client = _within(CONNECT_SECONDS, lambda: Client(self.scheduler, timeout=f"{CONNECT_SECONDS}s"))
            else:
                with _sigint_ignored():  # the cluster's processes inherit it: Ctrl-C is the command's to handle
                    cluster = local_cluster(self.jobs)
                client = Client(cluster)
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            quiet.__exit__()
            where = self.scheduler or "a LocalCluster"
            raise ExecutorError(f"cannot reach the dask scheduler at {where}: {exc}") from None
        futures = []
        clean = False
        try:
            futures = client.map(functools.partial(_in_worker, fn), [tasks[i] for i in todo], pure=False)
            index = {f.key: i for f, i in zip(futures, todo)}
            for fut in _completed(client, futures, watch=cluster is not None):
                i = index[fut.key]
                try:
                    # a result lost with its worker is computed again: result() waits for it
                    value, seconds = fut.result()
                except KilledWorker:  # the scheduler gave up after allowed-failures lost workers
                    yield i, None, WorkerDied("every worker process that ran it died"), None
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # the task's error, or a cancellation (a BaseException)
                    yield i, None, exc, None
                else:
                    yield i, value, None, seconds
            clean = True
        finally:
            if not clean and futures:
                client.cancel(futures)
            client.close()
            if cluster is not None:
                cluster.close()
            quiet.__exit__()


WATCH_SECONDS = 5.0


def _completed(client, futures: list, watch: bool) -> Iterator[Any]:
    """The futures as they finish; with ``watch``, raise ExecutorError once the cluster has had no worker
    for two checks ``WATCH_SECONDS`` apart.

    A worker that cannot load a task (its function lives in a module the worker cannot import) ends, and
    a LocalCluster's nanny does not start it again: without the check the sweep would wait forever. A
    remote scheduler's workers may join later, so only our own cluster is watched.
    """
    from dask.distributed import wait

    remaining = set(futures)
    order = {f.key: k for k, f in enumerate(futures)}
    empty = 0
    while remaining:
        try:
            done = wait(list(remaining), timeout=WATCH_SECONDS, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            if watch:
                empty = 0 if client.scheduler_info()["workers"] else empty + 1
                if empty >= 2:
                    raise ExecutorError("every worker of the local dask cluster ended and none came back: a task "
                                        "its workers cannot load (a function from a module they cannot import) "
                                        "ends them; see the workers' log above") from None
            continue
        empty = 0
        for fut in sorted(done, key=lambda f: order[f.key]):
            remaining.discard(fut)
            yield fut


def _label(task: Any) -> str:
    """A failed task's name: its plain fields (numbers, names), the others elided."""
    items = task if isinstance(task, tuple) else (task,)
    shown = [repr(x) if isinstance(x, (int, float, str, type(None))) else "..." for x in items]
    text = ", ".join(shown)
    return "task " + (text if len(text) <= 120 else text[:117] + "...")


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _init_worker() -> None:
    """A pool worker leaves Ctrl-C to the command, which stops it (a terminal sends SIGINT to all), and
    ends when the command is gone (killed: nothing else would end a worker waiting for its next task)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.set_wakeup_fd(-1)  # a forked worker inherits the command's wakeup socket
    command.leave_sigint_to_the_command()
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watcher", daemon=True).start()


def _marked(fn: Callable[[Any], Any], task: Any, mark: str) -> tuple[Any, float]:
    """``fn(task)`` and its seconds, after leaving a mark that the task started (see ``_run_processes``)."""
    with open(mark, "w"):
        pass
    t0 = time.perf_counter()
    return fn(task), time.perf_counter() - t0


def _in_worker(fn: Callable[[Any], Any], task: Any) -> tuple[Any, float]:
    """``fn(task)`` and its seconds in a Dask worker, whose CP-SAT solves leave Ctrl-C to the command."""
    command.leave_sigint_to_the_command()
    t0 = time.perf_counter()
    return fn(task), time.perf_counter() - t0


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while processes are started: they keep ignoring it (Python leaves an ignored SIGINT
    alone), so a terminal's Ctrl-C reaches only the command, which stops them."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _close_pool(pool, abort: bool) -> None:
    if not abort:
        pool.shutdown(wait=True)
        return
    # no public way to stop a running task before Python 3.14's kill_workers(): kill its process
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.join(timeout=10)


class _QuietLogs:
    """Raise the named loggers to CRITICAL while active (Dask logs every lost worker as an error)."""

    def __init__(self, *names: str) -> None:
        self._names = names
        self._old: dict[str, int] | None = None

    def __enter__(self) -> "_QuietLogs":
        self._old = {n: logging.getLogger(n).level for n in self._names}
        for n in self._names:
            logging.getLogger(n).setLevel(logging.CRITICAL)
        return self

    def __exit__(self, *exc: Any) -> None:
        for n, level in (self._old or {}).items():
            logging.getLogger(n).setLevel(level)
        self._old = None


def add_arguments(parser: argparse.ArgumentParser, out: bool = True) -> None:
    """Add ``--executor``, ``--scheduler``, ``--jobs``, ``--fresh`` and (unless ``out`` is false) ``--out``.

    A benchmark whose ``--out`` folder holds more than the records defines
    its own ``--out`` (``out=False``); :func:`from_args` keeps the records
    in that folder all the same.
    """
    from instances.console import MAX_WORKERS, integer

    parser.add_argument("--executor", default="local", choices=EXECUTORS,
                        help="where the independent tasks run: this machine, or a Dask cluster")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="Dask scheduler address, e.g. tcp://host:8786, for --executor dask (default: none, "
                             "dask starts a LocalCluster of --jobs workers)")
    parser.add_argument("--jobs", type=integer(1, MAX_WORKERS), default=1,
                        help=f"worker processes (local) or LocalCluster workers (dask), at most {MAX_WORKERS}; "
                             "1 runs in this process")
    if out:
        from benchmarks.common import output_dir

        parser.add_argument("--out", type=output_dir, default=None, metavar="DIR",
                            help="folder for records.jsonl, every finished task as it finishes: the same command "
                                 "run again resumes from them (default: none, nothing is kept)")
    parser.add_argument("--fresh", action="store_true",
                        help="with --out: drop the records there and start over (needed when they were made "
                             "with other arguments)")


def from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Executor:
    """The :class:`Executor` the parsed arguments ask for; a bad combination is ``parser.error``."""
    if args.executor == "dask" and importlib.util.find_spec("distributed") is None:
        parser.error('--executor dask needs dask[distributed]: pip install "dask[distributed]"')
    try:
        executor = Executor(args.executor, args.jobs, args.scheduler, keep_going=True)
    except OptionError as exc:
        parser.error(f"--{exc.field}: {exc.reason}" if exc.field else str(exc))
    why = (_unreachable(executor.scheduler) or _no_handshake(executor.scheduler)) if executor.scheduler else None
    if why:  # before any work, and at once rather than after Dask's 20 s of retries
        parser.error(f"--scheduler: cannot reach the dask scheduler at {executor.scheduler}: {why}")
    if getattr(args, "fresh", False) and getattr(args, "out", None) is None:
        parser.error("--fresh needs --out DIR, the folder whose records to drop")
    if getattr(args, "out", None) is not None:
        executor = dataclasses.replace(executor, records=_open_records(parser, args))
    else:
        command.not_recorded()
    return executor


def _open_records(parser: argparse.ArgumentParser, args: argparse.Namespace):
    from benchmarks import records

    try:
        found = records.Records.open(args.out, parser.prog, records.header_arguments(args),
                                     fresh=bool(getattr(args, "fresh", False)))
    except records.RecordsError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"--out: cannot write {exc.filename or args.out}: {exc.strerror or exc}")
    command.resumable()
    return found


#: Seconds a connection to a Dask scheduler may take, handshake included.
CONNECT_SECONDS = 20


def _within(seconds: float, make: Callable[[], Any]) -> Any:
    """``make()``, run in a daemon thread that is given up after ``seconds`` (plus a grace of 1 s) with a
    ``TimeoutError``: Dask's own timeout does not cover a server that accepts the connection but never
    answers the handshake (a web server, such as the dashboard's port), where ``Client`` waits forever.
    Any other failure of ``make()`` than an ``OSError`` is a ``ConnectionError`` (a server that sends
    something else, an SSH banner say, makes Dask read a frame length of exabytes: ``MemoryError``)."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = make()
        except (OSError, TimeoutError) as exc:  # handed to the caller's thread
            box["error"] = exc
        except Exception as exc:  # e.g. MemoryError: another server's bytes read as a Dask frame length
            box["error"] = ConnectionError(f"the server there answered, but not as a Dask scheduler "
                                           f"({type(exc).__name__})")

    thread = threading.Thread(target=run, name="dask-connect", daemon=True)
    thread.start()
    thread.join(seconds + 1)
    if "error" in box:
        raise box["error"]
    if "value" not in box:
        raise TimeoutError(f"no Dask handshake within {seconds:g} s (something that is not a Dask scheduler "
                           "accepts connections there, such as its dashboard's port)")
    return box["value"]


def _no_handshake(address: str, seconds: float = 10.0) -> str | None:
    """Why no Dask scheduler completes a handshake at ``address`` within ``seconds``, or ``None``."""
    import asyncio

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=seconds)
        await comm.close()

    try:
        _within(seconds, lambda: asyncio.run(probe()))
    except (OSError, TimeoutError, ValueError) as exc:
        return " ".join(str(exc).split()) or type(exc).__name__
    return None


def _unreachable(address: str, timeout: float = 5.0) -> str | None:
    """Why nothing accepts a TCP connection at a ``tcp://`` or ``tls://`` address, or ``None``.

    Other schemes are not probed (``None``); the default port is Dask's 8786.
    """
    import socket
    from urllib.parse import urlsplit

    if not address.startswith(("tcp://", "tls://")):
        return None
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port or 8786
    except ValueError as exc:
        return str(exc)
    if not host:
        return "no host in the address"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


if __name__ == "__main__":
    from benchmarks.common import commands, not_a_command

    not_a_command("python -m benchmarks.executor", commands())
