"""What every benchmark command shares: argument checks, progress bars, markdown tables, safe output.

A benchmark's ``main(argv)`` builds a :class:`Parser` (one-line errors,
exit status 2, ``--help`` with every default), reads its numbers with the
checked types below (:func:`positive_int`, :func:`positive_float`, ...),
shows progress with :func:`progress` (a tqdm bar on stderr that ``--quiet``
switches off), prints its tables with :func:`markdown_table`, and writes
files inside :func:`writing` so that an unwritable path ends in one line on
stderr and exit status 2, never in a traceback.

Examples
--------
>>> p = Parser(prog="demo")
>>> _ = p.add_argument("--reps", type=positive_int, default=3, help="instances per point")
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
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn, Sequence

from instances.errors import InstanceError

__all__ = ["Parser", "HelpFormatter", "positive_int", "nonnegative_int", "positive_float", "fraction",
           "comma_choices", "output_dir", "output_file", "image_file", "writing", "prepare_dir", "progress", "markdown_table",
           "add_quiet", "add_markdown", "fmt", "run_cli", "exit_status", "description"]


# ---------------------------------------------------------------------------
# argument checks

class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keep the description's line breaks and append ``(default: X)`` to every option's help.

    A default of ``None`` is not shown: its help text says what happens then.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (``PROG: error: MESSAGE``, no usage dump) and exit status 2.

    ``--help`` shows every option's default (:class:`HelpFormatter`), so every
    ``add_argument`` call should carry a ``help`` text.

    Examples
    --------
    >>> p = Parser(prog="demo")
    >>> _ = p.add_argument("--n", type=positive_int, default=1, help="tasks")
    >>> try:
    ...     p.parse_args(["--n", "0"])
    ... except SystemExit as exc:
    ...     exc.code
    2
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        # one line whatever the message holds: a newline would make a second line of stderr
        line = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {line}\n")


def _number(text: str, kind: Callable[[str], Any], what: str) -> Any:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (argparse ``type``).

    Examples
    --------
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got '0'
    """
    value = _number(text, int, "an integer >= 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (argparse ``type``; 0 usually means "skip").

    Examples
    --------
    >>> nonnegative_int("0")
    0
    """
    value = _number(text, int, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (argparse ``type``), e.g. a time limit in seconds.

    Examples
    --------
    >>> positive_float("2.5")
    2.5
    >>> positive_float("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got 'nan'
    """
    value = _number(text, float, "a finite number > 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def fraction(text: str) -> float:
    """A number in [0, 1] (argparse ``type``), e.g. a probability.

    Examples
    --------
    >>> fraction("0.5")
    0.5
    """
    value = _number(text, float, "a number in [0, 1]")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}")
    return value


def comma_choices(allowed: Iterable[str], what: str = "name") -> Callable[[str], list[str]]:
    """argparse ``type`` for a comma list of names from ``allowed``; an unknown name is an error.

    Nothing is dropped silently: every name must be known, and at least one is needed.

    Examples
    --------
    >>> pick = comma_choices(["FAR", "MISO-opt"], "method")
    >>> pick("FAR, MISO-opt")
    ['FAR', 'MISO-opt']
    >>> pick("FAR,nope")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown method 'nope'; choose from FAR, MISO-opt
    """
    names = list(allowed)

    def parse(text: str) -> list[str]:
        chosen = [x.strip() for x in text.split(",") if x.strip()]
        unknown = [x for x in chosen if x not in names]
        if unknown or not chosen:
            bad = ", ".join(repr(x) for x in unknown) or "(none given)"
            raise argparse.ArgumentTypeError(
                f"unknown {what}{'s' if len(unknown) > 1 else ''} {bad}; choose from {', '.join(names)}")
        return list(dict.fromkeys(chosen))  # a name given twice is one column

    parse.__name__ = f"{what} list"  # argparse names the type in some messages
    return parse


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


def run_cli(main: Callable[[Sequence[str] | None], int]) -> NoReturn:
    """``sys.exit(main())`` for ``python -m benchmarks.X``: :func:`exit_status` of ``main``."""
    sys.exit(exit_status(main))


def exit_status(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)`` and return its exit status, never a traceback for what the user controls.

    * Bad data found during the run (an :class:`~instances.errors.InstanceError`,
      e.g. a slowdown table lacking a measurement a queue needs) is one line
      ``error: ...`` on stderr, status 2, like an argument error.
    * ``python -m benchmarks.compare | head`` closes stdout early; that is the
      reader's choice, not an error worth a traceback (status 0).
    * Ctrl-C prints ``interrupted`` (status 130).

    Examples
    --------
    >>> from instances.errors import InstanceError
    >>> def main(argv):
    ...     raise InstanceError("no measurement", source="t.csv")
    >>> exit_status(main, [])
    2
    """
    try:
        code = main(argv)
        sys.stdout.flush()
    except InstanceError as exc:
        sys.stdout.flush()
        print(f"error: {exc}", file=sys.stderr)
        code = 2
    except BrokenPipeError:
        # stdout is gone: point it at devnull so the interpreter's final flush stays quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    return code


def description(doc: str | None) -> str:
    """A command's ``--help`` description from its module docstring: the first paragraph, without markup.

    Examples
    --------
    >>> description("``python -m x``: does y.\\n\\nMore.")
    'python -m x: does y.'
    """
    first = (doc or "").strip().split("\n\n")[0]
    return " ".join(first.replace("``", "").split())


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bars (tables only)."""
    parser.add_argument("--quiet", action="store_true", help="no progress bars on stderr")


def add_markdown(parser: argparse.ArgumentParser) -> None:
    """``--markdown``: print exactly the README's table(s), nothing else on stdout."""
    parser.add_argument("--markdown", action="store_true",
                        help="print only the table(s) the README shows, as markdown to paste there")
