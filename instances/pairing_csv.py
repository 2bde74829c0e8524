"""Strict reading of the pairing family's CSV files (job queues and slowdown tables).

Every file goes through :func:`instances.files.read_csv`; these helpers add
the header rules (no column named twice, none missing, none unknown) and the
plain number formats the two CSV readers share.

Examples
--------
>>> parse_number("2.5", "q.csv", 3, "a", "solo_time"), parse_shares("16/16", "t.csv", 2, "lud", "cores")
(2.5, (16, 16))
"""

from __future__ import annotations

from typing import Sequence

from instances import files
from instances.errors import InstanceError


def read_rows(path: str, required: Sequence[str], optional: Sequence[str] = ()):
    """Rows of a CSV as (line number, dict), with a clear error for a bad header.

    The file goes through :func:`instances.files.read_csv` (size bound,
    UTF-8, strict quoting, one-line cells); a column named twice would let
    the last one win silently, so it is an error.
    """
    rows = files.read_csv(path)
    if not rows:
        raise InstanceError("empty file (expected a header line)", source=path)
    _, header = rows[0]
    header = [h.strip() for h in header]
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise InstanceError(f"column(s) {', '.join(map(repr, twice))} named twice in the header", source=path,
                            field=twice[0])
    missing = [c for c in required if c not in header]
    if missing:
        raise InstanceError(f"header lacks column(s) {', '.join(missing)}; expected "
                            f"{', '.join(required)}", source=path, field=missing[0])
    unknown = [c for c in header if c not in required and c not in optional]
    if unknown:
        raise InstanceError(f"unknown column(s) {', '.join(map(repr, unknown))}", source=path,
                            field=unknown[0])
    out = []
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise InstanceError(f"line {line}: {len(row)} fields, header has {len(header)}",
                                source=path)
        out.append((line, {h: c.strip() for h, c in zip(header, row)}))
    return out


def parse_number(text: str, path: str, line: int, task: str | None, fld: str) -> float:
    """A finite number in the syntax of :func:`instances.files.parse_real` (ASCII digits, no '_',
    no 'inf' or 'nan', which ``float()`` would all take), located by line, task and column."""
    try:
        return files.parse_real(text)
    except InstanceError as exc:
        raise InstanceError(f"line {line}: {exc.reason}", source=path, task=task, field=fld) from None


def parse_shares(text: str, path: str, line: int, task: str, fld: str) -> tuple[int, ...]:
    """A share list such as ``16/16``: small non-negative integers in plain digits joined by '/'."""
    parts = text.split("/")
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        raise InstanceError(f"line {line}: expected integers joined by '/', got {text!r}", source=path,
                            task=task, field=fld)
    return tuple(int(p) for p in parts)
