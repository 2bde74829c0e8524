"""What every benchmark command shares: argument checks, progress bars, markdown tables, safe output.

A benchmark's ``main(argv)`` builds a :class:`Parser` (one-line errors,
exit status 2, ``--help`` with every default: the toolkit's one parser,
:mod:`instances.console`, re-exported here with its strictly read number
types :func:`integer`, :func:`number`, :data:`count`, :data:`seed`,
:data:`seconds`, ...), runs under :func:`run_cli`, shows progress with
:func:`progress` (a tqdm bar on stderr that ``--quiet`` switches off),
prints its tables with :func:`markdown_table`, and writes
files inside :func:`writing` so that an unwritable path ends in one line on
stderr and exit status 2, never in a traceback.

Examples
--------
>>> p = Parser(prog="demo")
>>> _ = p.add_argument("--reps", type=count, default=3, help="instances per point")
>>> p.parse_args(["--reps", "5"]).reps
5
>>> print(markdown_table(["n", "ratio"], [[10, "1.05"], [12, "1.07"]]))
| n | ratio |
|---|---|
| 10 | 1.05 |
| 12 | 1.07 |
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

# the toolkit's one parser, its checked number types and exit statuses, re-exported for the benchmarks
from instances.console import (MAX_COUNT, MAX_SECONDS, MAX_SEED, MAX_TASKS, MAX_WORKERS, CommandError,
                               HelpFormatter, Parser, comma_choices, count, count_or_zero, error_line, exit_status,
                               fraction, integer, integers, not_a_command, number, seconds, seed, workers)

__all__ = ["MAX_COUNT", "MAX_SECONDS", "MAX_SEED", "MAX_TASKS", "MAX_WORKERS", "MAX_EXACT_TASKS",
           "Parser", "HelpFormatter", "CommandError", "integer", "integers", "number", "count", "count_or_zero",
           "seed", "workers", "seconds", "fraction", "comma_choices", "output_dir", "output_file", "image_file",
           "writing", "prepare_dir", "progress", "markdown_table", "add_quiet", "add_markdown", "fmt", "run_cli",
           "exit_status", "error_line", "description", "command_names", "commands"]


def run_cli(main, *, prog: str | None = None, errors: tuple[type[BaseException], ...] = ()):
    """``sys.exit`` with a benchmark command's status (:func:`benchmarks.command.status`).

    As :func:`instances.console.run_cli`, and Ctrl-C stops the command's
    sweep (status 130), a sweep whose tasks failed ends with status 1.
    """
    from benchmarks import command

    command.run_cli(main, prog=prog, errors=errors)


# ---------------------------------------------------------------------------
# output paths

def _unwritable(path: Path, folder: bool) -> str | None:
    """Why ``path`` (a file, or a folder when ``folder``) cannot be written or created; None when it can."""
    if path.exists():
        if folder != path.is_dir():
            return "it is a file, not a folder" if folder else "it is a folder, not a file"
        return None if os.access(path, os.W_OK) else "permission denied"
    base = path.parent
    while not base.exists() and base.parent != base:
        base = base.parent
    if not base.is_dir():
        return f"{base} is not a folder"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"{base} is not writable"
    return None


def output_dir(text: str) -> Path:
    """argparse ``type`` for a folder to write into (created, parents included, when missing).

    Checked when the arguments are read, so a sweep of hours does not end on
    an unwritable path.

    Examples
    --------
    >>> output_dir("results/run1")
    PosixPath('results/run1')
    """
    path = Path(text)
    why = _unwritable(path, folder=True)
    if why:
        raise argparse.ArgumentTypeError(f"cannot write into {text!r}: {why}")
    return path


def output_file(text: str) -> Path:
    """argparse ``type`` for a file to write (its missing parent folders are created).

    Examples
    --------
    >>> output_file("fig.png")
    PosixPath('fig.png')
    """
    path = Path(text)
    why = "it is a folder, not a file" if text.endswith(("/", os.sep)) else _unwritable(path, folder=False)
    if why:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {why}")
    return path


def image_file(text: str) -> Path:
    """argparse ``type`` for an image to write: :func:`output_file` whose suffix matplotlib can write.

    Examples
    --------
    >>> image_file("fig.svg")
    PosixPath('fig.svg')
    >>> try:
    ...     image_file("fig.xyz")
    ... except argparse.ArgumentTypeError as exc:
    ...     print(str(exc)[:45])
    cannot write 'fig.xyz': unsupported image for
    """
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(text).suffix
    if suffix.lower().lstrip(".") not in formats:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: unsupported image format "
                                         f"{suffix or '(no suffix)'}; use one of "
                                         f"{', '.join('.' + f for f in sorted(formats))}")
    return output_file(text)


@contextlib.contextmanager
def writing(parser: argparse.ArgumentParser, what: str) -> Iterator[None]:
    """Turn an ``OSError`` while writing into ``parser.error`` (one line, exit status 2).

    The paths were checked when the arguments were read; this catches what
    changes or fails later (a full disk, a folder removed meanwhile).

    Examples
    --------
    >>> p = Parser(prog="demo")
    >>> try:
    ...     with writing(p, "--out"):
    ...         open("/dev/null/x", "w")
    ... except SystemExit as exc:
    ...     exc.code
    2
    """
    try:
        yield
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        parser.error(f"{what}: cannot write{where}: {exc.strerror or exc}")


def prepare_dir(parser: argparse.ArgumentParser, path: Path, what: str) -> Path:
    """Create ``path`` (parents included), reporting failure as a one-line error."""
    with writing(parser, what):
        path.mkdir(parents=True, exist_ok=True)
    return path


# ---------------------------------------------------------------------------
# progress and tables

def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str | None = None,
             quiet: bool = False, unit: str = "it"):
    """A tqdm progress bar on stderr; ``quiet=True`` (the ``--quiet`` flag) switches it off.

    Use as an iterator wrapper or as a context manager with ``bar.update(k)``.

    Examples
    --------
    >>> sum(progress(range(3), quiet=True))
    3
    >>> with progress(total=2, quiet=True) as bar:
    ...     bar.update(2)
    """
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=quiet, file=sys.stderr, leave=False)


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """One markdown table: a header row, the separator, one line per row (cells are ``str()``-ed).

    A ``|`` inside a cell is escaped so that it cannot split the cell; a row
    of the wrong length is an error rather than a table that renders shifted.

    Examples
    --------
    >>> print(markdown_table(["method", "ratio"], [["FAR", 1.1]]))
    | method | ratio |
    |---|---|
    | FAR | 1.1 |
    """
    def cell(x: Any) -> str:
        return " ".join(str(x).split()).replace("|", "\\|")

    head = [cell(h) for h in header]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        row = list(row)
        if len(row) != len(head):
            raise ValueError(f"row {row!r} has {len(row)} cells, the header {len(head)}")
        lines.append("| " + " | ".join(cell(x) for x in row) + " |")
    return "\n".join(lines)


def fmt(x: float | None, spec: str = ".3f", missing: str = "-") -> str:
    """A number formatted with ``spec``, or ``missing`` for None / NaN.

    Examples
    --------
    >>> fmt(1.23456), fmt(None), fmt(float("nan"), ".1f")
    ('1.235', '-', '-')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return missing
    return format(x, spec)


#: Largest batch an exact column of a benchmark solves (``--n`` of compare with the exact solver, the
#: rows of milp_speed, ...): CP-SAT builds the model of 1,000 MIG tasks in about 20 s on a 2-core machine.
MAX_EXACT_TASKS = 1000

def command_names() -> list[str]:
    """The package's commands: every module of ``benchmarks`` that defines its own ``main``.

    Read from the sources, not imported (this module is imported by them).

    Examples
    --------
    >>> {"compare", "paper", "report"} <= set(command_names()) and "common" not in command_names()
    True
    """
    return sorted(f.stem for f in Path(__file__).parent.glob("*.py")
                  if not f.stem.startswith("_") and re.search(r"^def main\(", f.read_text(encoding="utf-8"), re.M))


def commands() -> str:
    """Which modules are commands, for the helper modules ``python -m`` might be pointed at."""
    return f"python -m benchmarks.X --help, X one of {', '.join(command_names())}"


def description(doc: str | None, default_run: str | None = None) -> str:
    """A command's ``--help`` description from its module docstring: the first paragraph, without markup.

    ``default_run`` says how long the command takes with its defaults on a
    2-core machine (a table command's defaults are its quick form).

    Examples
    --------
    >>> description("``python -m x``: does y.\\n\\nMore.")
    'python -m x: does y.'
    >>> description("Does y.", "about 1 minute")
    'Does y. The default run takes about 1 minute on a 2-core machine.'
    """
    first = " ".join((doc or "").strip().split("\n\n")[0].replace("``", "").split())
    return first + (f" The default run takes {default_run} on a 2-core machine." if default_run else "")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bars (tables only)."""
    parser.add_argument("--quiet", action="store_true", help="no progress bars on stderr")


def add_markdown(parser: argparse.ArgumentParser) -> None:
    """``--markdown``: print exactly the README's table(s), nothing else on stdout."""
    parser.add_argument("--markdown", action="store_true",
                        help="print only the table(s) the README shows, as markdown to paste there")


if __name__ == "__main__":
    not_a_command("python -m benchmarks.common", commands())
