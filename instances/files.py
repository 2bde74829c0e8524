"""Reading and writing input files, shared by every problem family.

One reader for text, JSON and CSV, so that every loader meets a bad file
the same way: with one :class:`~instances.errors.InstanceError` line that
names the file, the place in it and the fault, never an exception from deep
inside the standard library, and never unbounded work.

What a file may hold, and why:

* At most :data:`MAX_FILE_BYTES` (32 MiB). The instances the benchmarks
  generate are well under 1 MiB; a 100,000-task MIG problem (the most
  ``python -m instances.mig generate`` writes) is about 18 MiB. The bound
  also stops a device such as ``/dev/zero``.
* UTF-8 text; a leading byte-order mark is skipped (spreadsheet programs
  write one), any other undecodable byte is an error naming its line.
* JSON nested at most :data:`MAX_DEPTH` levels (every schema needs fewer
  than 8), integer literals of at most :data:`MAX_INT_DIGITS` digits (a
  double holds 309; a longer literal is never a meaningful number, and
  converting one costs time), and no object with the same key
  twice (``json`` would keep the last one silently). ``NaN``, ``Infinity``
  and numbers too large for a double (``1e400``) parse to non-finite
  floats, which :func:`real` refuses, so the loaders name the task and field.
* Strings (JSON strings, CSV cells) without control characters, line
  separators or lone surrogates: every such string is a name or a keyword
  here, and such characters would split an error message over two lines or
  crash the program that prints it.
* CSV fields of at most :data:`MAX_CSV_FIELD` characters, with strict
  quoting (``"a"b`` is an error, not ``ab``).

The field helpers (:func:`integer`, :func:`real`, :func:`boolean`,
:func:`name`, :func:`no_unknown_fields`) give the loaders one strict reading
of a value: ``4.7`` is not an integer, ``true`` is not a number, ``"5"`` is
not a number and ``"false"`` is not a boolean.

The token readers (:func:`parse_integer`, :func:`parse_real`) give every
plain-text format (OR-Library files, the FAR task lists, the pairing CSV
files) and every command line (:mod:`instances.console`) the number syntax
of JSON: ASCII digits 0-9, a sign, a decimal point and an exponent, nothing
else. Python's ``int()`` and ``float()`` also take ``1_0``, Arabic-Indic
digits (``١``), surrounding blanks, ``nan`` and ``inf``; a file holding
those was written by something else than intended, so they are errors.

Examples
--------
>>> parse_json('{"a": 1, "a": 2}', "p.json")
Traceback (most recent call last):
...
instances.errors.InstanceError: p.json: field a: key 'a' appears twice in one object
>>> real(parse_json('{"t": NaN}')["t"], source="p.json", task="a", field="t")
Traceback (most recent call last):
...
instances.errors.InstanceError: p.json: task a: field t: must be a finite number, got nan
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import re
import unicodedata
from pathlib import Path
from typing import Any, Collection, Mapping

from instances.errors import InstanceError, OutputError

__all__ = [
    "MAX_FILE_BYTES", "MAX_DEPTH", "MAX_INT_DIGITS", "MAX_CSV_FIELD",
    "read_text", "parse_json", "read_json", "read_csv", "write_text",
    "integer", "real", "boolean", "name", "text", "no_unknown_fields", "bad_char",
    "INTEGER_TEXT", "REAL_TEXT", "parse_integer", "parse_real",
]

#: Largest input file read, in bytes.
MAX_FILE_BYTES = 32 * 1024 * 1024
#: Deepest nesting of JSON arrays and objects.
MAX_DEPTH = 64
#: Most digits of a JSON integer literal (a double reaches 1.8e308, 309 digits).
MAX_INT_DIGITS = 310
#: Longest CSV field, in characters (the ``csv`` module's own default).
MAX_CSV_FIELD = 131_072

_UNSAFE = frozenset({"Cc", "Cs", "Zl", "Zp"})

#: An integer as text: an optional sign and ASCII digits (``[0-9]``, unlike
#: ``\d``, matches no other script's digits).
INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
#: A number as text: JSON's syntax, plus a leading ``+``, ``.5`` and ``5.``.
REAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def bad_char(value: str) -> str | None:
    """Why ``value`` cannot be a name (a control character, line separator or lone
    surrogate, by code point), or ``None`` if it is fine.

    Examples
    --------
    >>> bad_char("gpu-0"), bad_char("a\\tb"), bad_char("\\ud83d")
    (None, 'control character U+0009', 'lone surrogate U+D83D')
    """
    if value.isprintable():
        return None
    for c in value:
        cat = unicodedata.category(c)
        if cat in _UNSAFE:
            kind = {"Cc": "control character", "Cs": "lone surrogate", "Zl": "line separator",
                    "Zp": "paragraph separator"}[cat]
            return f"{kind} U+{ord(c):04X}"
    return None


# ---------------------------------------------------------------------------
# Text

def read_text(path: str | Path, error: type[InstanceError] = InstanceError) -> str:
    """The file's text (UTF-8, a leading byte-order mark skipped); any failure raises ``error``.

    Examples
    --------
    >>> read_text("no/such/file.json")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: no/such/file.json: file not found (cannot read it)
    """
    src = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise error("file not found (cannot read it)", source=src) from None
    except IsADirectoryError:
        raise error("is a directory, not a file", source=src) from None
    except OSError as exc:
        raise error(f"cannot read ({exc.strerror or exc})", source=src) from None
    if len(data) > MAX_FILE_BYTES:
        raise error(f"larger than {MAX_FILE_BYTES // 2**20} MiB, the limit for input files", source=src)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, byte {column} of the line)",
                    source=src) from None


def write_text(path: str | Path, content: str, error: type[InstanceError] = OutputError) -> None:
    """Write ``content`` as UTF-8; a path that cannot be written raises ``error`` naming it.

    Examples
    --------
    >>> write_text("/no/such/folder/out.json", "{}")
    Traceback (most recent call last):
    ...
    instances.errors.OutputError: /no/such/folder/out.json: cannot write (No such file or directory)
    """
    try:
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
    except IsADirectoryError:
        raise error("cannot write (is a directory)", source=str(path)) from None
    except OSError as exc:
        raise error(f"cannot write ({exc.strerror or exc})", source=str(path)) from None
    except UnicodeEncodeError as exc:
        raise error(f"cannot write {content[exc.start:exc.end]!r} as UTF-8", source=str(path)) from None


# ---------------------------------------------------------------------------
# JSON

class _Pairs(list):
    """A JSON object as parsed: its (key, value) pairs in order, duplicates kept for the check."""


class _TooLong(Exception):
    pass


def _parse_int(literal: str) -> int:
    if len(literal) - literal.startswith("-") > MAX_INT_DIGITS:
        raise _TooLong(literal)
    return int(literal)


def _where(path: list) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _clean(value: Any, path: list, depth: int, source: str | None, error: type[InstanceError]) -> Any:
    """Check a parsed value (depth, keys, strings) and turn ``_Pairs`` into dicts."""
    if isinstance(value, (_Pairs, list)):
        if depth >= MAX_DEPTH:
            raise error(f"nested deeper than {MAX_DEPTH} levels", source=source, field=_where(path) or None)
        if isinstance(value, _Pairs):
            out: dict[str, Any] = {}
            for key, item in value:
                path.append(key)
                why = bad_char(key)
                if why:
                    raise error(f"key {key!r} contains a {why}", source=source, field=_where(path))
                if key in out:
                    raise error(f"key {key!r} appears twice in one object", source=source, field=_where(path))
                out[key] = _clean(item, path, depth + 1, source, error)
                path.pop()
            return out
        items = []
        for i, item in enumerate(value):
            path.append(i)
            items.append(_clean(item, path, depth + 1, source, error))
            path.pop()
        return items
    if isinstance(value, str):
        why = bad_char(value)
        if why:
            raise error(f"text {value!r} contains a {why}", source=source, field=_where(path) or None)
    return value


def parse_json(text: str, source: str | None = None, error: type[InstanceError] = InstanceError) -> Any:
    """Parse JSON text under the rules of this module; any fault raises ``error``.

    Syntax errors give the line and column; the other faults give the path
    of the value (``tasks[3].times.2``) as the field.

    Examples
    --------
    >>> parse_json('{"gpu": "A30", "tasks": []}')
    {'gpu': 'A30', 'tasks': []}
    >>> parse_json('[' * 100 + ']' * 100, "deep.json")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: deep.json: field [0][0][0][0]...: nested deeper than 64 levels
    """
    try:
        raw = json.loads(text, object_pairs_hook=_Pairs, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                    source=source) from None
    except RecursionError:
        raise error(f"nested deeper than {MAX_DEPTH} levels", source=source) from None
    except _TooLong as exc:
        digits = len(exc.args[0]) - exc.args[0].startswith("-")
        raise error(f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are allowed",
                    source=source) from None
    try:
        return _clean(raw, [], 0, source, error)
    except InstanceError as exc:
        if exc.field and len(exc.field) > 80:  # a deep path: its head says enough
            raise error(exc.reason, source=source, field=exc.field[:12] + "...") from None
        raise


def read_json(path: str | Path, error: type[InstanceError] = InstanceError) -> Any:
    """:func:`read_text` then :func:`parse_json`."""
    return parse_json(read_text(path, error), str(path), error)


# ---------------------------------------------------------------------------
# CSV

def read_csv(path: str | Path, error: type[InstanceError] = InstanceError) -> list[tuple[int, list[str]]]:
    """The rows of a CSV file as ``(line number, cells)``; blank lines are skipped.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write('a,b\\n1,"x, y"\\n\\n2,z\\n')
    >>> read_csv(p)
    [(1, ['a', 'b']), (2, ['1', 'x, y']), (4, ['2', 'z'])]
    """
    src = str(path)
    text = read_text(path, error)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    line = 0
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row):
                continue
            for k, cell in enumerate(row):
                if len(cell) > MAX_CSV_FIELD:  # in case another module raised csv.field_size_limit
                    raise error(f"line {line}: column {k + 1} is longer than {MAX_CSV_FIELD:,} characters",
                                source=src)
                why = bad_char(cell)
                if why:
                    raise error(f"line {line}: column {k + 1}: {cell!r} contains a {why}", source=src)
            rows.append((line, row))
    except csv.Error as exc:
        msg = str(exc)
        if "field larger than field limit" in msg:
            msg = f"a field is longer than {MAX_CSV_FIELD:,} characters"
        # the row at fault starts on the line after the last good one (a quoted cell may span lines)
        raise error(f"not valid CSV (row starting on line {line + 1}: {msg})", source=src) from None
    return rows


# ---------------------------------------------------------------------------
# Fields

def _place(source: str | None, task: str | None, field: str | None) -> dict[str, Any]:
    return {"source": source, "task": task, "field": field}


def integer(value: Any, *, lo: int | None = None, hi: int | None = None, source: str | None = None,
            task: str | None = None, field: str | None = None,
            error: type[InstanceError] = InstanceError) -> int:
    """``value`` as an int: an integer (not a bool, not 4.0 or "4") within ``[lo, hi]``.

    Examples
    --------
    >>> integer(3, lo=1, field="size")
    3
    >>> integer(4.7, field="size")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field size: 4.7 is not an integer
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{value!r} is not an integer", **_place(source, task, field))
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = (f"between {lo} and {hi}" if lo is not None and hi is not None
               else f">= {lo}" if lo is not None else f"<= {hi}")
        raise error(f"must be an integer {rng}, got {value}", **_place(source, task, field))
    return value


def real(value: Any, *, lo: float | None = None, positive: bool = False, hi: float | None = None,
         source: str | None = None, task: str | None = None, field: str | None = None,
         error: type[InstanceError] = InstanceError) -> float:
    """``value`` as a finite float: a number (not a bool, not "5"), ``> 0`` if ``positive``,
    within ``[lo, hi]``.

    Examples
    --------
    >>> real(2, positive=True, field="duration")
    2.0
    >>> real("5", field="duration")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field duration: must be a number, got '5'
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"must be a number, got {value!r}", **_place(source, task, field))
    try:
        number = float(value)
    except OverflowError:
        raise error("is too large for a float", **_place(source, task, field)) from None
    if not math.isfinite(number):
        raise error(f"must be a finite number, got {value!r}", **_place(source, task, field))
    if positive and not number > 0:
        raise error(f"must be > 0, got {value!r}", **_place(source, task, field))
    if lo is not None and number < lo:
        raise error(f"must be >= {lo:g}, got {value!r}", **_place(source, task, field))
    if hi is not None and number > hi:
        raise error(f"must be <= {hi:g}, got {value!r}", **_place(source, task, field))
    return number


def _shown(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:37] + "...")


def parse_integer(token: str, *, lo: int | None = None, hi: int | None = None, source: str | None = None,
                  task: str | None = None, field: str | None = None,
                  error: type[InstanceError] = InstanceError) -> int:
    """A text token as an int: :data:`INTEGER_TEXT`, at most :data:`MAX_INT_DIGITS` digits, within ``[lo, hi]``.

    A sign is part of the syntax; ``lo=0`` is how a reader says that negative
    values are not allowed.

    Examples
    --------
    >>> parse_integer("+12"), parse_integer("007", lo=0)
    (12, 7)
    >>> parse_integer("1_0", field="weight")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: field weight: not an integer: '1_0' (digits 0-9 only)
    >>> parse_integer("-3", lo=0, source="opt.txt", field="value 2")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: opt.txt: field value 2: must be an integer >= 0, got -3
    """
    if not isinstance(token, str) or not INTEGER_TEXT.fullmatch(token):
        raise error(f"not an integer: {_shown(str(token))} (digits 0-9 only)", **_place(source, task, field))
    if len(token.lstrip("+-").lstrip("0")) > MAX_INT_DIGITS:  # int() of a huge digit string is slow
        raise error(f"an integer of more than {MAX_INT_DIGITS} digits: {_shown(token)}",
                    **_place(source, task, field))
    return integer(int(token), lo=lo, hi=hi, source=source, task=task, field=field, error=error)


_NOT_FINITE = frozenset({"nan", "inf", "infinity"})


def parse_real(token: str, *, lo: float | None = None, positive: bool = False, hi: float | None = None,
               source: str | None = None, task: str | None = None, field: str | None = None,
               error: type[InstanceError] = InstanceError) -> float:
    """A text token as a finite float: :data:`REAL_TEXT`, then the checks of :func:`real`.

    ``1e999`` has the syntax but is not finite, so it is refused like ``inf`` and ``nan``.

    Examples
    --------
    >>> parse_real("2.5e-1"), parse_real(".5", positive=True)
    (0.25, 0.5)
    >>> parse_real("x", source="list.txt", task="bfs", field="line 3")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: list.txt: task bfs: field line 3: not a number: 'x' (digits 0-9, '.', 'e' only)
    """
    if not isinstance(token, str) or not REAL_TEXT.fullmatch(token):
        if isinstance(token, str) and token.lstrip("+-").lower() in _NOT_FINITE:
            raise error(f"not finite: {_shown(token)}", **_place(source, task, field))
        raise error(f"not a number: {_shown(str(token))} (digits 0-9, '.', 'e' only)",
                    **_place(source, task, field))
    value = float(token)
    if not math.isfinite(value):
        raise error(f"not finite (too large for a float): {_shown(token)}", **_place(source, task, field))
    if lo is None and hi is None and not positive:  # the common case, once per number of a large file
        return value
    return real(value, lo=lo, positive=positive, hi=hi, source=source, task=task, field=field, error=error)


def boolean(value: Any, *, source: str | None = None, task: str | None = None, field: str | None = None,
            error: type[InstanceError] = InstanceError) -> bool:
    """``value`` if it is ``true`` or ``false`` (``"false"``, ``0`` and ``null`` are refused)."""
    if not isinstance(value, bool):
        raise error(f"{value!r} is not true or false", **_place(source, task, field))
    return value


def text(value: Any, *, empty: bool = True, source: str | None = None, task: str | None = None,
         field: str | None = None, error: type[InstanceError] = InstanceError) -> str:
    """``value`` if it is a string of one printable line (empty only if ``empty``)."""
    if not isinstance(value, str):
        raise error(f"{value!r} is not a string", **_place(source, task, field))
    if not empty and not value:
        raise error("must be a non-empty string", **_place(source, task, field))
    why = bad_char(value)
    if why:
        raise error(f"{value!r} contains a {why}; names must be one printable line",
                    **_place(source, task, field))
    return value


def name(value: Any, *, source: str | None = None, task: str | None = None, field: str | None = "name",
         error: type[InstanceError] = InstanceError) -> str:
    """A name: a non-empty string of one printable line.

    Examples
    --------
    >>> name("t0")
    't0'
    >>> name("a\\nb", task="#3")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: task #3: field name: 'a\\nb' contains a control character U+000A; names must be one printable line
    """
    return text(value, empty=False, source=source, task=task, field=field, error=error)


def no_unknown_fields(raw: Mapping[str, Any], allowed: Collection[str], *, source: str | None = None,
                      task: str | None = None, where: str | None = None,
                      error: type[InstanceError] = InstanceError) -> None:
    """Refuse keys of ``raw`` outside ``allowed`` (a typo such as ``relase`` would otherwise vanish).

    Examples
    --------
    >>> no_unknown_fields({"gpu": "A30", "relase": 5}, ("gpu", "tasks", "release"), source="p.json")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: p.json: field relase: unknown field; expected one of gpu, tasks, release
    """
    unknown = [k for k in raw if k not in allowed]
    if unknown:
        k = unknown[0]
        fld = f"{where}.{k}" if where else str(k)
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise error(f"unknown field{more}; expected one of {', '.join(allowed)}", source=source, task=task,
                    field=fld)
