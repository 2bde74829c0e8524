"""Checks for the arguments every solver and heuristic takes, and a shared deadline.

One place decides what a valid ``time_limit``, ``workers`` count, flag or
method name is, so every family and backend rejects the same bad values with
the same one-line :class:`~instances.errors.OptionError`.

Examples
--------
>>> time_limit(2), time_limit(None), workers(3)
(2.0, None, 3)
>>> time_limit(-1)
Traceback (most recent call last):
...
instances.errors.OptionError: field time_limit: must be a positive number of seconds or None, got -1
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import time
from typing import Any, Callable, Collection, Mapping, TypeVar

from instances.errors import OptionError

__all__ = ["time_limit", "workers", "flag", "choice", "no_unknown", "known_options", "Deadline"]

F = TypeVar("F", bound=Callable[..., Any])


def time_limit(value: Any, name: str = "time_limit") -> float | None:
    """A time limit in seconds: a finite positive real number, or ``None`` for no limit.

    Booleans, strings, NaN, infinities and values <= 0 raise :class:`OptionError`.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionError(f"must be a positive number of seconds or None, got {value!r}", field=name)
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise OptionError(f"must be a positive number of seconds or None, got {value!r}", field=name)
    return seconds


def workers(value: Any, name: str = "workers") -> int | None:
    """A thread count: an integer >= 1, or ``None`` for the backend's default."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise OptionError(f"must be an integer >= 1 or None, got {value!r}", field=name)
    return int(value)


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


def known_options(func: F) -> F:
    """Decorate a public function so that an unknown keyword is an :class:`OptionError`, not a ``TypeError``.

    Python already refuses a keyword a function does not declare, but with a
    ``TypeError``; the toolkit's contract is one ``OptionError`` for every bad
    option, whichever function gets it (functions that take ``**options``
    call :func:`no_unknown` instead). Keywords the function declares pass
    through untouched, at the cost of one set lookup each.

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

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            unknown = [k for k in kwargs if k not in names]
            if unknown:
                no_unknown(dict.fromkeys(unknown), where)
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
