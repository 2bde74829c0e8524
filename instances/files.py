"""Reading input files with errors that name the file (shared by every problem family)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from instances.errors import InstanceError

__all__ = ["read_text", "parse_json", "read_json"]


def read_text(path: str | Path, error: type[InstanceError] = InstanceError) -> str:
    """The file's text; a missing or unreadable file raises ``error`` naming it.

    Examples
    --------
    >>> read_text("no/such/file.json")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: no/such/file.json: file not found
    """
    src = str(path)
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        raise error("file not found", source=src) from None
    except UnicodeDecodeError:
        raise error("cannot read (not UTF-8 text)", source=src) from None
    except OSError as exc:
        raise error(f"cannot read ({exc.strerror})", source=src) from None


def parse_json(text: str, source: str | None = None, error: type[InstanceError] = InstanceError) -> Any:
    """``json.loads`` whose syntax errors raise ``error`` with the line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                    source=source) from None


def read_json(path: str | Path, error: type[InstanceError] = InstanceError) -> Any:
    """:func:`read_text` then :func:`parse_json`."""
    return parse_json(read_text(path, error), str(path), error)
