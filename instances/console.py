r"""What every command line of the toolkit shares: one parser, one error format, strictly read numbers.

Every command (``python -m instances.mig``, ``python -m heuristics.far`` and
every ``python -m benchmarks.X``) builds a :class:`Parser` and runs under
:func:`run_cli`, so they all keep the same rules:

* exit status 0 when done, 2 for bad input with exactly one line on stderr,
  ``PROG: error: MESSAGE`` (:func:`error_line`), never a traceback; 1 only
  where a checker finds a violation (``instances.mig check`` on an
  infeasible schedule, or a command whose own result fails its check, which
  would be a bug);
* a number typed on the command line is read as strictly as the project's
  JSON: ASCII digits only (``1_000``, ``١``, `` 3``, ``nan`` and ``inf`` are
  refused, although Python's ``int()`` and ``float()`` take them), and every
  size has a documented maximum (:func:`integer`, :func:`number` and the
  kinds built on them: :data:`count`, :data:`seed`, :data:`workers`,
  :data:`seconds`, :data:`fraction`), so an absurd size is one line, not an
  allocation that fails minutes later;
* ``--help`` shows every option's default as it would be typed
  (``8,9,10`` for a comma list, ``50 200`` for a space list);
* printing never crashes on a name the terminal's encoding cannot show
  (``PYTHONIOENCODING=ascii``, a Windows console) nor splits a line on a
  control character read from a file (:func:`say`).

Examples
--------
>>> p = Parser(prog="demo")
>>> _ = p.add_argument("--reps", type=count, default=3, help="instances per point")
>>> p.parse_args(["--reps", "5"]).reps
5
>>> count("1_000")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be an integer from 1 to 100,000 (digits 0-9 only), got '1_000'
>>> import io
>>> out = io.StringIO()
>>> say("t\tx", file=out)
>>> out.getvalue()
't\\tx\n'
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Iterable, NoReturn, Sequence, TextIO

from instances.errors import InstanceError, one_line
from instances.files import INTEGER_TEXT, REAL_TEXT

__all__ = ["CommandError", "Parser", "HelpFormatter", "say", "error_line", "exit_status", "run_cli", "not_a_command",
           "integer", "number", "integers", "comma_choices", "split_names",
           "count", "count_or_zero", "seed", "workers", "seconds", "fraction",
           "MAX_COUNT", "MAX_SEED", "MAX_WORKERS", "MAX_SECONDS", "MAX_TASKS"]

#: Instances, seeds, repetitions of one command (the FAR paper used 1,000 per cell).
MAX_COUNT = 100_000
#: Seeds reach CP-SAT's ``random_seed``, a 32-bit signed integer.
MAX_SEED = 2**31 - 1
#: Solver threads or worker processes.
MAX_WORKERS = 256
#: A time limit: about 11.6 days.
MAX_SECONDS = 1e6
#: Tasks of one generated MIG batch (``instances.mig.generate`` writes 100,000 in about 15 s).
MAX_TASKS = 100_000

# the one syntax of numbers as text, shared with the file readers
_INT, _REAL = INTEGER_TEXT, REAL_TEXT


# ---------------------------------------------------------------------------
# the parser and its one error format

class CommandError(RuntimeError):
    """A command cannot run as asked for a reason outside its data: a service it needs is missing or
    unreachable (e.g. ``benchmarks.executor.ExecutorError``: no Dask scheduler at the address given).

    :func:`exit_status` reports it like bad input: one error line, exit status 2.
    """


def error_line(prog: str, message: Any) -> str:
    """The one error format of every command: ``PROG: error: MESSAGE`` on one printable line.

    Whitespace runs (a newline included) become one space; any other control
    character is escaped (:func:`instances.errors.one_line`).

    Examples
    --------
    >>> error_line("python -m demo", "first\\nsecond")
    'python -m demo: error: first second'
    """
    return f"{prog}: error: {one_line(' '.join(str(message).split()))}"


def _text(value: Any, sep: str) -> str:
    """A default as the user would type it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return sep.join(_text(v, sep) for v in value)
    return str(value)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keep the description's line breaks; append ``(default: X)`` to every option's help, X as typed.

    A list default is shown joined the way the option reads it: with spaces
    for an option taking several words (``nargs``), with commas for one
    comma list. A flag's default is ``off``. A default of ``None`` is not
    shown (the help says what happens then), nor one the help already states.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is argparse.SUPPRESS or "(default" in text \
                or not action.option_strings:
            return text
        sep = " " if action.nargs not in (None, "?") else ","
        shown = _text(action.default, sep).replace("%", "%%")  # help strings are %-formatted
        return f"{text} (default: {shown})"


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with the toolkit's one error format and ``--help`` with every default.

    An error is :func:`error_line` on stderr (no usage block) and exit status
    2. Every ``add_argument`` call should carry a ``help`` text.

    Examples
    --------
    >>> p = Parser(prog="demo")
    >>> _ = p.add_argument("--n", type=count, default=1, help="tasks")
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
        say(error_line(self.prog, message), file=sys.stderr)
        sys.exit(2)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse drops a '--' given as an option's value ("--n=--") and then stores [] without calling the
        # option's type, so the command would run on a list where it expects a checked number
        if arg_strings == ["--"] and action.nargs in (None, argparse.ONE_OR_MORE):
            name = "/".join(action.option_strings) or action.metavar or action.dest
            self.error(f"argument {name}: expected a value, got '--'")
        return super()._get_values(action, arg_strings)


def say(text: str, file: TextIO | None = None) -> None:
    """Print ``text`` as printable lines, whatever the terminal's encoding.

    Each line of ``text`` goes through :func:`instances.errors.one_line`
    (control characters and lone surrogates escaped); characters the stream's
    encoding lacks are written as backslash escapes instead of raising
    ``UnicodeEncodeError``.
    """
    stream = file if file is not None else sys.stdout
    text = "\n".join(one_line(line) for line in str(text).split("\n"))
    try:
        print(text, file=stream)
    except UnicodeEncodeError:
        enc = getattr(stream, "encoding", None) or "ascii"
        print(text.encode(enc, "backslashreplace").decode(enc), file=stream)


def _prog(main: Callable) -> str:
    """``python -m PACKAGE.MODULE`` of the module defining ``main`` (also when it runs as ``__main__``)."""
    name = getattr(main, "__module__", None) or "?"
    if name == "__main__":
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        name = spec.name if spec is not None else name
    return f"python -m {name}"


def exit_status(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None, *,
                prog: str | None = None, errors: tuple[type[BaseException], ...] = ()) -> int:
    """Run ``main(argv)`` and return its exit status, never a traceback for what the user controls.

    * Bad data found during the run (an :class:`~instances.errors.InstanceError`),
      a :class:`CommandError` (an unreachable service) or one of ``errors`` is
      one line :func:`error_line` on stderr, status 2, like an argument error.
    * ``python -m benchmarks.compare | head`` closes stdout early; that is the
      reader's choice, not an error worth a traceback (status 0).
    * Ctrl-C prints ``interrupted`` (status 130).

    Examples
    --------
    >>> def main(argv):
    ...     raise InstanceError("no measurement", source="t.csv")
    >>> exit_status(main, [], prog="demo")
    2
    """
    try:
        code = main(argv)
        sys.stdout.flush()
    except (InstanceError, CommandError, *errors) as exc:
        sys.stdout.flush()
        say(error_line(prog or _prog(main), exc), file=sys.stderr)
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


def run_cli(main: Callable[[Sequence[str] | None], int], *, prog: str | None = None,
            errors: tuple[type[BaseException], ...] = ()) -> NoReturn:
    """``sys.exit(exit_status(main))``: the ``if __name__ == "__main__"`` line of every command."""
    sys.exit(exit_status(main, prog=prog, errors=errors))


def not_a_command(prog: str, commands: str) -> NoReturn:
    """For a module of helpers run with ``python -m``: say it is not a command (status 2).

    Examples
    --------
    >>> try:
    ...     not_a_command("python -m demo.helpers", "python -m demo.run")
    ... except SystemExit as exc:
    ...     exc.code
    2
    """
    say(error_line(prog, f"not a command; the commands: {commands}"), file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------------------
# numbers and names, read strictly

def _shown(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e16:
        return f"{int(x):,}"
    return f"{x:g}"


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def integer(lo: int, hi: int, why: str | None = None) -> Callable[[str], int]:
    """argparse ``type``: an integer from ``lo`` to ``hi``, ASCII digits only.

    ``why`` says where ``hi`` comes from; it is part of the error message.

    Examples
    --------
    >>> integer(2, 40)("12")
    12
    >>> integer(2, 40, "the exact model is for small batches")("41")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer from 2 to 40 (the exact model is for small batches), got '41'
    """
    span = f"an integer from {_shown(lo)} to {_shown(hi)}"
    limit = len(str(max(abs(lo), abs(hi)))) + 1

    def parse(text: str) -> int:
        if not _INT.fullmatch(text):
            raise argparse.ArgumentTypeError(f"must be {span} (digits 0-9 only), got {_quoted(text)}")
        digits = text.lstrip("+-").lstrip("0")
        if len(digits) > limit or not lo <= int(text) <= hi:  # no int() of a huge digit string
            raise argparse.ArgumentTypeError(f"must be {span}{f' ({why})' if why else ''}, got {_quoted(text)}")
        return int(text)

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def number(lo: float, hi: float, *, above: bool = False, why: str | None = None) -> Callable[[str], float]:
    """argparse ``type``: a finite number in ``[lo, hi]`` (``(lo, hi]`` when ``above``), plain decimal notation.

    ``1.5``, ``.5``, ``2e-3`` are numbers; ``nan``, ``inf``, ``1_000.5`` and
    digits other than 0-9 are not.

    Examples
    --------
    >>> number(0, 1)("0.25"), number(0, 10, above=True)("2e-3")
    (0.25, 0.002)
    >>> number(0, 10, above=True)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number > 0 and <= 10, got '0'
    """
    span = (f"a number > {_shown(lo)} and <= {_shown(hi)}" if above
            else f"a number from {_shown(lo)} to {_shown(hi)}")

    def parse(text: str) -> float:
        if not _REAL.fullmatch(text):
            raise argparse.ArgumentTypeError(f"must be {span} (digits 0-9, '.', 'e'), got {_quoted(text)}")
        value = float(text)
        if not (lo < value <= hi if above else lo <= value <= hi):  # also inf from 1e999
            raise argparse.ArgumentTypeError(f"must be {span}{f' ({why})' if why else ''}, got {_quoted(text)}")
        return value

    parse.__name__ = "number"
    return parse


def integers(lo: int, hi: int, why: str | None = None) -> Callable[[str], list[int]]:
    """argparse ``type``: a comma list of :func:`integer`s, e.g. ``8,10,12``; at least one.

    Examples
    --------
    >>> integers(1, 100)("8, 10,12")
    [8, 10, 12]
    """
    one = integer(lo, hi, why)

    def parse(text: str) -> list[int]:
        parts = [x.strip() for x in text.split(",") if x.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"expected a comma list of integers like 8,10,12, got {_quoted(text)}")
        return [one(x) for x in parts]

    parse.__name__ = "integer list"
    return parse


def split_names(text: str) -> list[str]:
    """Split a comma list at the commas outside parentheses, so ``FixPart(1,...,1)`` stays one name.

    Examples
    --------
    >>> split_names("FAR, FixPart(1,...,1),MISO-opt")
    ['FAR', 'FixPart(1,...,1)', 'MISO-opt']
    """
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [x.strip() for x in out if x.strip()]


def comma_choices(allowed: Iterable[str], what: str = "name") -> Callable[[str], list[str]]:
    """argparse ``type`` for a comma list of names from ``allowed``; an unknown name is an error.

    Nothing is dropped silently: every name must be known, and at least one
    is needed. Commas inside parentheses belong to the name
    (:func:`split_names`).

    Examples
    --------
    >>> pick = comma_choices(["FAR", "FixPart(1,...,1)"], "method")
    >>> pick("FixPart(1,...,1), FAR")
    ['FixPart(1,...,1)', 'FAR']
    >>> pick("FAR,nope")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown method 'nope'; choose from FAR, FixPart(1,...,1)
    """
    names = list(allowed)

    def parse(text: str) -> list[str]:
        chosen = split_names(text)
        unknown = [x for x in chosen if x not in names]
        if unknown or not chosen:
            bad = ", ".join(repr(x) for x in unknown) or "(none given)"
            raise argparse.ArgumentTypeError(
                f"unknown {what}{'s' if len(unknown) > 1 else ''} {bad}; choose from {', '.join(names)}")
        return list(dict.fromkeys(chosen))  # a name given twice is one column

    parse.__name__ = f"{what} list"
    return parse


#: Instances, seeds or repetitions: 1 to :data:`MAX_COUNT`.
count = integer(1, MAX_COUNT)
#: The same where 0 skips the step.
count_or_zero = integer(0, MAX_COUNT)
#: A random seed: 0 to :data:`MAX_SEED`.
seed = integer(0, MAX_SEED, "a 32-bit seed")
#: Solver threads or worker processes: 1 to :data:`MAX_WORKERS`.
workers = integer(1, MAX_WORKERS)
#: A time limit in seconds: > 0, at most :data:`MAX_SECONDS`.
seconds = number(0, MAX_SECONDS, above=True)
#: A share or probability in [0, 1].
fraction = number(0, 1)
