"""How a benchmark command ends: Ctrl-C stops it with status 130, failed sweep tasks give status 1.

:func:`run_cli` is the ``if __name__ == "__main__"`` line of every benchmark
(through :func:`benchmarks.common.run_cli`): :func:`status` runs the
command's ``main`` as :func:`instances.console.exit_status` does (one error
line and status 2 for bad input), under :func:`guard`, and lists the tasks
that :mod:`benchmarks.executor` recorded as failed (:func:`note_failure`).

CP-SAT, left to itself, takes SIGINT as "stop this search" and returns its
best solution as if its time limit had been reached (SatParameters
``catch_sigint_signal``, on by default): in a sweep that result would be
recorded as an unproven instance that came from the keyboard, and the sweep
would go on. So a benchmark command runs inside :func:`guard`:

* every CP-SAT solve of the command, in this process and in the worker
  processes of :mod:`benchmarks.executor`, leaves SIGINT alone
  (:func:`leave_sigint_to_the_command`);
* the first SIGINT raises ``KeyboardInterrupt`` in the main thread as soon as
  it runs Python code: the executor stops its workers, drops the results in
  flight (nothing half-done is recorded) and :func:`status` prints
  :func:`message` and returns 130;
* while the main thread is inside native code (a CP-SAT search of an
  in-process sweep), a watcher thread ends the process after a short grace
  period with the same line and status; the records on disk are complete up
  to the last finished task, so nothing else is lost. A second SIGINT ends
  the process at once.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import socket
import sys
import threading
from typing import Any, Callable, Iterator, NoReturn, Sequence

__all__ = ["run_cli", "status", "guard", "message", "resumable", "not_recorded", "leave_sigint_to_the_command",
           "note_failure", "take_failures", "EXIT_STATUS"]

EXIT_STATUS = 130  # 128 + SIGINT, the shell's status for a command ended by Ctrl-C
_MESSAGE = "interrupted"
#: The failed tasks of this process's sweeps (objects with ``label`` and ``error``), for the exit status.
_FAILURES: list[Any] = []


def run_cli(main: Callable[[Sequence[str] | None], int], *, prog: str | None = None,
            errors: tuple[type[BaseException], ...] = ()) -> NoReturn:
    """``sys.exit(status(main))``."""
    sys.exit(status(main, prog=prog, errors=errors))


def status(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None, *,
           prog: str | None = None, errors: tuple[type[BaseException], ...] = ()) -> int:
    """The exit status of a benchmark command: :func:`instances.console.exit_status` plus the sweep's rules.

    Runs ``main`` under :func:`guard`: Ctrl-C prints :func:`message` and gives
    130. When ``main`` succeeds but tasks of its sweeps failed, they are listed
    on stderr (the tables show what finished) and the status is 1.
    """
    from instances.console import exit_status

    @functools.wraps(main)
    def run(args: Sequence[str] | None) -> int:
        try:
            return main(args)
        except KeyboardInterrupt:
            sys.stdout.flush()
            print(message(), file=sys.stderr)
            return EXIT_STATUS

    take_failures()
    with guard():
        code = exit_status(run, argv, prog=prog, errors=errors)
    failures = take_failures()
    if failures and code == 0:
        print(f"{len(failures)} task{'s' if len(failures) > 1 else ''} failed (shown as failed or left out "
              "above; with --out, a rerun of the same command runs only these again):", file=sys.stderr)
        for f in failures:
            print(f"- {f.label}: {f.error}", file=sys.stderr)
        code = 1
    return code


def note_failure(failure: Any) -> None:
    """Count a failed sweep task (with ``label`` and ``error``) towards the command's exit status."""
    _FAILURES.append(failure)


def take_failures() -> list[Any]:
    """The failed tasks of this process's sweeps since the last call (and forget them)."""
    out = list(_FAILURES)
    _FAILURES.clear()
    return out


def resumable() -> None:
    """Say that this command records its tasks (``--out``): the interrupt message tells how to resume."""
    global _MESSAGE
    _MESSAGE = "interrupted; rerun the same command to resume"


def not_recorded() -> None:
    """Say that this command could record its tasks but does not (no ``--out``): the message says how."""
    global _MESSAGE
    _MESSAGE = "interrupted; nothing was kept (with --out DIR a rerun resumes from the finished tasks)"


def message() -> str:
    """The one line printed on Ctrl-C."""
    return _MESSAGE


def leave_sigint_to_the_command() -> None:
    """Make every later CP-SAT solve of this process leave SIGINT to the command (see the module docstring)."""
    from milp import cpsat

    cpsat.CATCH_SIGINT = False


def _hard_exit() -> None:
    for child in multiprocessing.active_children():  # worker processes would outlive us
        with contextlib.suppress(Exception):
            child.kill()
    with contextlib.suppress(Exception):
        sys.stderr.write(message() + "\n")
        sys.stderr.flush()
    os._exit(EXIT_STATUS)


@contextlib.contextmanager
def guard(grace: float = 1.0) -> Iterator[None]:
    """Run a command under the Ctrl-C rules of this module (a no-op outside the main thread).

    Parameters
    ----------
    grace
        Seconds the main thread has to take the first SIGINT before the
        watcher thread ends the process.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    leave_sigint_to_the_command()
    taken = threading.Event()
    reader, writer = socket.socketpair()
    writer.setblocking(False)

    def on_sigint(signum, frame):
        if taken.is_set():
            return  # the first one is being handled; the watcher sees this one
        taken.set()
        raise KeyboardInterrupt

    def watch() -> None:
        seen = 0
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                return
            seen += data.count(signal.SIGINT)
            if seen >= 2 or (seen == 1 and not taken.wait(grace)):
                _hard_exit()

    old_handler = signal.signal(signal.SIGINT, on_sigint)
    old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    watcher = threading.Thread(target=watch, name="sigint-watcher", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_fd)
        signal.signal(signal.SIGINT, old_handler)
        writer.close()
        with contextlib.suppress(OSError):
            reader.shutdown(socket.SHUT_RDWR)
        reader.close()
