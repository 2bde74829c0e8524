r"""Command-line plumbing shared by the CLIs of ``instances`` and ``heuristics``.

The benchmarks have their own richer parser (``benchmarks.common``); the
package CLIs (``python -m instances.mig``, ``python -m heuristics.far``) may
not import benchmarks, so the two rules every CLI keeps live here:

* an argument error is one line on stderr and exit status 2 (argparse's
  default prints the usage block first);
* printing never crashes on a name the terminal's encoding cannot show
  (``PYTHONIOENCODING=ascii``, a Windows console) nor splits a line on a
  control character read from a file.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> say("t\tx", file=out)
>>> out.getvalue()
't\\tx\n'
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from instances.errors import one_line

__all__ = ["Parser", "say"]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (exit status 2).

    Examples
    --------
    >>> p = Parser(prog="demo")
    >>> _ = p.add_argument("--n", type=int)
    >>> try:
    ...     p.parse_args(["--n", "x"])
    ... except SystemExit as exc:
    ...     exc.code
    2
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {one_line(message)} (see {self.prog} --help)\n")


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
