"""Checks for the arguments every solver and heuristic takes, and a shared deadline.

One place decides what a valid ``time_limit``, ``workers`` count, ``seed``,
iteration count, flag or method name is, so every family and backend rejects
the same bad values with the same one-line :class:`~instances.errors.OptionError`
(never numpy's ``ValueError``, an ``OverflowError`` or OR-Tools' multi-line
``TypeError``). The maxima: a seed at most ``2**32 - 1`` (:data:`MAX_SEED`: the
32-bit seeds the benchmarks derive with ``SeedSequence.generate_state``;
:func:`milp.cpsat.run` folds it into CP-SAT's signed 32-bit ``random_seed``),
and the command lines' (:mod:`instances.console`) at most 256 threads and a
time limit of at most 10^6 s. A problem argument of the wrong Python type is
refused by :func:`expect` (and :func:`known_options`, :func:`typed`, which
read the annotation) with one :class:`ArgumentTypeError` line.

Examples
--------
>>> time_limit(2), time_limit(None), workers(3), seed(7)
(2.0, None, 3, 7)
>>> time_limit(-1)
Traceback (most recent call last):
...
instances.errors.OptionError: field time_limit: must be a positive number of seconds (at most 1e+06) or None, got -1
>>> seed(-1)
Traceback (most recent call last):
...
instances.errors.OptionError: field seed: must be an integer from 0 to 4294967295, got -1
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import time
import types
import typing
from typing import Any, Callable, Collection, Mapping, TypeVar

from instances.console import MAX_SECONDS, MAX_WORKERS
from instances.errors import ArgumentTypeError, OptionError

__all__ = ["time_limit", "workers", "seed", "integer", "number", "flag", "choice", "no_unknown", "known_options",
           "expect", "typed", "ArgumentTypeError", "Deadline", "MAX_SECONDS", "MAX_SEED", "MAX_WORKERS",
           "MAX_ITERATIONS"]

#: Largest seed: numpy takes any, CP-SAT a signed 32-bit one; 32 bits are what seeds derived with
#: ``numpy.random.SeedSequence(...).generate_state(1)`` have (the command lines' ``--seed`` stops at 2**31 - 1).
MAX_SEED = 2**32 - 1
#: Iterations, evaluations or repetitions a heuristic may be asked for (``integer``'s default maximum).
MAX_ITERATIONS = 10**9

F = TypeVar("F", bound=Callable[..., Any])


def _shown(value: Any) -> str:
    """``repr`` of a bad value, cut short (an integer of 400 digits stays one readable line)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def time_limit(value: Any, name: str = "time_limit") -> float | None:
    """A time limit in seconds: a finite positive real number up to :data:`MAX_SECONDS`, or ``None``.

    Booleans, strings, NaN, infinities, values <= 0 and values above
    :data:`MAX_SECONDS` (10^6 s, about 11.6 days; ``10**400`` included, which
    ``float`` cannot even hold) raise :class:`OptionError`.
    """
    if value is None:
        return None
    msg = f"must be a positive number of seconds (at most {MAX_SECONDS:g}) or None, got {_shown(value)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionError(msg, field=name)
    try:
        seconds = float(value)
    except (OverflowError, ValueError, TypeError):
        raise OptionError(msg, field=name) from None
    if not (0 < seconds <= MAX_SECONDS):  # NaN fails too
        raise OptionError(msg, field=name)
    return seconds


def workers(value: Any, name: str = "workers") -> int | None:
    """A thread or worker count: an integer from 1 to :data:`MAX_WORKERS` (256), or ``None`` for the default."""
    if value is None:
        return None
    return integer(value, name, lo=1, hi=MAX_WORKERS)


def seed(value: Any, name: str = "seed", *, allow_none: bool = True) -> int | None:
    """A random seed: an integer from 0 to :data:`MAX_SEED` (``2**32 - 1``), or ``None`` where allowed.

    numpy refuses negative seeds with its own ``ValueError`` and OR-Tools a
    seed beyond 32 bits with a multi-line ``TypeError``; one range for every
    function keeps a seed that works in one place valid in every other.
    Booleans and floats (``2.0`` included) are refused.

    Examples
    --------
    >>> seed(0), seed(None), seed(2**32 - 1)
    (0, None, 4294967295)
    >>> seed(True)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: field seed: must be an integer from 0 to 4294967295, got True
    """
    if value is None and allow_none:
        return None
    return integer(value, name, lo=0, hi=MAX_SEED)


def integer(value: Any, name: str, *, lo: int = 1, hi: int = MAX_ITERATIONS) -> int:
    """An integer option in ``[lo, hi]`` (an iteration count, a repetition count, a seed).

    numpy integers are accepted; booleans, floats (even ``2.0``) and strings
    are not.

    Examples
    --------
    >>> integer(5, "max_iter")
    5
    >>> integer(2.5, "max_iter")
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: field max_iter: must be an integer from 1 to 1000000000, got 2.5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
        raise OptionError(f"must be an integer from {lo} to {hi}, got {_shown(value)}", field=name)
    return int(value)


def number(value: Any, name: str, *, lo: float = -math.inf, hi: float = math.inf, above: bool = False) -> float:
    """A finite real option in ``[lo, hi]`` (``(lo, hi]`` with ``above=True``).

    Booleans, strings, NaN, infinities and integers too large for a float are refused.

    Examples
    --------
    >>> number(0.5, "p_sup", lo=0, hi=1)
    0.5
    >>> number(float("nan"), "p_sup", lo=0, hi=1)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: field p_sup: must be a number from 0 to 1, got nan
    """
    low = "above" if above else "from"
    msg = f"must be a number {low} {lo:g} to {hi:g}, got {_shown(value)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionError(msg, field=name)
    try:
        x = float(value)
    except (OverflowError, ValueError, TypeError):
        raise OptionError(msg, field=name) from None
    if not (math.isfinite(x) and (x > lo if above else x >= lo) and x <= hi):
        raise OptionError(msg, field=name)
    return x


def flag(value: Any, name: str) -> bool:
    """A switch: exactly ``True`` or ``False`` (``"no"``, ``0`` and ``None`` are refused)."""
    if not isinstance(value, bool):
        raise OptionError(f"must be True or False, got {value!r}", field=name)
    return value


def choice(value: Any, allowed: Collection[str], name: str) -> str:
    """One of the names in ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise OptionError(f"must be one of {', '.join(map(repr, allowed))}; got {value!r}", field=name)
    return value


def expect(value: Any, types: type | tuple[type, ...], where: str, name: str = "problem") -> Any:
    """Return ``value`` if it is one of ``types``, else raise :class:`ArgumentTypeError` in one line.

    Public entry points call it on their problem or schedule argument first,
    so a ``dict`` or a file name fails with a line naming the function and the
    expected type instead of an ``AttributeError`` deep inside.

    Examples
    --------
    >>> expect({}, (int, float), "bounds.mig.lower_bound")
    Traceback (most recent call last):
    ...
    instances.errors.ArgumentTypeError: bounds.mig.lower_bound: problem must be of type builtins.int or builtins.float, got dict
    """
    if not isinstance(value, types):
        kinds = types if isinstance(types, tuple) else (types,)
        names = " or ".join(f"{t.__module__}.{t.__qualname__}" for t in kinds)
        raise ArgumentTypeError(f"{where}: {name} must be of type {names}, got {type(value).__name__}")
    return value


def no_unknown(options: Mapping[str, Any], where: str) -> None:
    """Refuse keyword options that a function does not know (they would otherwise vanish).

    Examples
    --------
    >>> no_unknown({"refin": False}, "far.schedule")
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: far.schedule: unknown option 'refin'
    """
    if options:
        names = ", ".join(repr(k) for k in sorted(options))
        raise OptionError(f"{where}: unknown option{'s' if len(options) > 1 else ''} {names}")


#: Parameters whose annotated type :func:`known_options` and :func:`typed` check on every call.
TYPED_FIRST = ("problem", "schedule", "workload", "plan", "solution", "trace")


def _annotated_types(func: Callable[..., Any], annotation: Any) -> tuple[type, ...] | None:
    """The classes an annotation names (``Problem | Workload``, ``Union[...]``, ``rt.RealtimeProblem``).

    ``None`` where it names anything else (``Any``, a generic, a name that does
    not resolve): such a parameter is not checked.
    """
    for _ in range(2):  # a quoted annotation under ``from __future__ import annotations`` is a string twice
        if not isinstance(annotation, str):
            break
        try:
            annotation = eval(annotation, dict(vars(typing)), func.__globals__)  # noqa: S307 (the module's own text)
        except Exception:  # an annotation that does not evaluate at run time is only documentation
            return None
    kinds = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) \
        else (annotation,)
    if not kinds or not all(isinstance(k, type) and k not in (object, typing.Any) for k in kinds):
        return None
    return tuple(kinds)


def _arg_checker(func: Callable[..., Any], where: str) -> Callable[[tuple, dict], None] | None:
    """A check of ``func``'s problem, schedule and workload arguments against their annotations.

    ``None`` where the function has no such parameter with a class annotation.
    """
    typed_params = [(i, p) for i, p in enumerate(inspect.signature(func).parameters.values())
                    if p.name in TYPED_FIRST and p.annotation is not inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not typed_params:
        return None
    resolved: list[list[tuple[type, ...] | None]] = []  # on the first call: classes defined later resolve too

    def check(args: tuple, kwargs: dict) -> None:
        if not resolved:
            resolved.append([_annotated_types(func, p.annotation) for _, p in typed_params])
        for (i, p), kinds in zip(typed_params, resolved[0]):
            if kinds is None:
                continue
            if i < len(args) and p.kind is not p.KEYWORD_ONLY:
                value = args[i]
            elif p.name in kwargs:
                value = kwargs[p.name]
            else:
                continue  # a missing argument is Python's own TypeError; a default is the function's own
            if not isinstance(value, kinds):
                expect(value, kinds, where, p.name)

    return check


def typed(func: F) -> F:
    """Decorate a public function so that a first argument of the wrong type is one :class:`ArgumentTypeError`.

    Every parameter named as in :data:`TYPED_FIRST` and annotated with classes (``HeteroProblem``, ``Problem | Workload``) is
    checked with :func:`expect` on every call (one ``isinstance`` each), so
    ``check(problem, "schedule.json")`` fails with one line naming the
    argument. :func:`known_options` does the same; use this on functions that
    take ``**options`` or need no keyword check.

    Examples
    --------
    >>> @typed
    ... def lower_bound(problem: "int | float") -> float:
    ...     return problem + 0.5
    >>> lower_bound(1)
    1.5
    >>> lower_bound("p.json")
    Traceback (most recent call last):
    ...
    instances.errors.ArgumentTypeError: instances.options.lower_bound: problem must be of type builtins.int or builtins.float, got str
    """
    check = _arg_checker(func, f"{func.__module__}.{func.__qualname__}")
    if check is None:
        raise TypeError(f"typed: {func.__qualname__} has no annotated problem, schedule or workload parameter")

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        return func(*args, **kwargs)

    return checked  # type: ignore[return-value]


def known_options(func: F) -> F:
    """Decorate a public function so that an unknown keyword is an :class:`OptionError`, not a ``TypeError``.

    Python already refuses a keyword a function does not declare, but with a
    ``TypeError``; the toolkit's contract is one ``OptionError`` for every bad
    option, whichever function gets it (functions that take ``**options``
    call :func:`no_unknown` instead). Keywords the function declares pass
    through untouched, at the cost of one set lookup each. Parameters named
    as in :data:`TYPED_FIRST` (``problem``, ``schedule``, ``workload``, ...)
    are checked against their annotations as :func:`typed` does.

    Examples
    --------
    >>> @known_options
    ... def fixpart(problem, partition=None):
    ...     return partition
    >>> fixpart(None, partition=3)
    3
    >>> fixpart(None, partiton=3)
    Traceback (most recent call last):
    ...
    instances.errors.OptionError: instances.options.fixpart: unknown option 'partiton'
    """
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        raise TypeError(f"known_options: {func.__qualname__} takes **options; check them with no_unknown")
    names = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    where = f"{func.__module__}.{func.__qualname__}"
    check_first = _arg_checker(func, where)

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            unknown = [k for k in kwargs if k not in names]
            if unknown:
                no_unknown(dict.fromkeys(unknown), where)
        if check_first is not None:
            check_first(args, kwargs)
        return func(*args, **kwargs)

    return checked  # type: ignore[return-value]


class Deadline:
    """Wall-clock budget that starts when the object is made.

    ``Deadline(None)`` never expires. ``remaining()`` is the seconds left
    (``None`` without a limit, never negative), so one budget can be handed
    from model building to the solver and on to a second solve.

    Examples
    --------
    >>> d = Deadline(None); d.remaining(), d.expired()
    (None, False)
    >>> d = Deadline(60.0); 59.0 < d.remaining() <= 60.0
    True
    """

    def __init__(self, seconds: float | None) -> None:
        self.start = time.perf_counter()
        self.limit = seconds
        self.at = None if seconds is None else self.start + seconds

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        if self.at is None:
            return None
        return max(0.0, self.at - time.perf_counter())

    def expired(self) -> bool:
        return self.at is not None and time.perf_counter() >= self.at

    def share(self, fraction: float) -> "Deadline":
        """A new budget of ``fraction`` of the time left (no limit when this one has none).

        >>> Deadline(None).share(0.25).remaining() is None
        True
        >>> 0.0 < Deadline(8.0).share(0.25).remaining() <= 2.0
        True
        """
        left = self.remaining()
        return Deadline(None if left is None else left * fraction)
