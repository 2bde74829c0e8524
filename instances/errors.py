"""The toolkit's own exception types.

Every bad input (a malformed file, an unknown GPU, a task time that breaks
monotony) raises :class:`InstanceError` or a subclass. It is a ``ValueError``
so callers that already catch ``ValueError`` keep working, and its message
names the file, task and field at fault.
"""

from __future__ import annotations

import unicodedata

# Characters that would break the one-line, printable form of a message:
# control characters (a newline makes a two-line error), line and paragraph
# separators, and lone surrogates (which no terminal encoding can print).
_UNSAFE = frozenset({"Cc", "Cs", "Zl", "Zp"})


def one_line(text: str) -> str:
    """``text`` with every control character, line separator and lone surrogate escaped.

    The result prints as one line on any terminal, so a task name read from a
    file can never split an error message or crash the print.

    Examples
    --------
    >>> one_line("a\\nb"), one_line("t\\ud800"), one_line("naïve 名")
    ('a\\\\nb', 't\\\\ud800', 'naïve 名')
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in _UNSAFE else c
                   for c in text)


class InstanceError(ValueError):
    """Invalid problem data, with the location of the fault in the message.

    Parameters
    ----------
    message
        What is wrong, in one line.
    source
        The file (or other origin) the data came from, if any.
    task
        The task at fault, if any.
    field
        The field at fault, if any.

    Examples
    --------
    >>> str(InstanceError("time must be positive", source="tasks.json", task="t3", field="times.2"))
    'tasks.json: task t3: field times.2: time must be positive'

    Every part is passed through :func:`one_line`, so the message is one
    printable line whatever the data holds:

    >>> str(InstanceError("bad", task="a\\nb"))
    'task a\\\\nb: bad'
    """

    def __init__(self, message: str, *, source: str | None = None, task: str | None = None,
                 field: str | None = None) -> None:
        self.reason = message
        self.source = source
        self.task = task
        self.field = field
        parts = []
        if source:
            parts.append(one_line(source))
        if task is not None:
            parts.append(f"task {one_line(task)}")
        if field:
            parts.append(f"field {one_line(field)}")
        parts.append(one_line(message))
        super().__init__(": ".join(parts))

    def located(self, source: str) -> "InstanceError":
        """Return a copy of this error that also names ``source`` (a file path)."""
        err = type(self)(self.reason, source=source, task=self.task, field=self.field)
        return err


class UnknownGPUError(InstanceError):
    """A GPU name that is not built in and not defined by the user."""


class GPUSpecError(InstanceError):
    """A user-defined GPU that breaks the MIG properties FAR relies on (Sec. 1.2)."""


class OutputError(InstanceError):
    """An output file that cannot be written (missing folder, no permission, disk full)."""


class OptionError(InstanceError):
    """An invalid argument to a toolkit function: an unknown method, backend or test name, or a
    parameter out of its range."""


class ArgumentTypeError(InstanceError, TypeError):
    """A problem, schedule or workload argument of the wrong Python type (a dict, a file name).

    Both a ``TypeError`` (it is a programming error, not bad data) and an
    :class:`InstanceError` (so that the command lines and callers that catch the
    toolkit's errors print it as the one line it is). Raised by
    :func:`instances.options.expect` and the decorators built on it.
    """


class SolverError(RuntimeError):
    """A solver backend that is missing or failed in a way that is not the model's fault."""
