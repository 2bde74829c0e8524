"""A sweep's finished tasks on disk: append-only records, resume, and a lock against a second run.

With ``--out DIR`` every task a sweep finishes is appended to
``DIR/records.jsonl`` as one JSON line and forced to disk (``fsync``)
before the next one is taken, so a crash, a reboot or a kill loses at most
the tasks in flight. The file opens with a header line holding the command,
the arguments that decide the results (not ``--out``, ``--jobs``,
``--executor``, ``--quiet`` or ``--markdown``) and the versions of the
solvers and of this toolkit; each record holds its task's key (a hash of
the task function and of everything the task carries: arguments, seed,
method), a label, and the result or the error.

Running the same command again reads the records, skips every task that
finished (a task that failed runs again) and prints the table an
uninterrupted run prints. Other arguments or other versions on an existing
``DIR/records.jsonl`` are refused with one line, unless ``--fresh`` starts
over. ``DIR/records.lock`` is locked (``fcntl.flock``) for as long as a run
holds the folder: a second run on the same ``--out`` refuses with one line
instead of interleaving its records.

Results are stored in JSON with tags for what JSON lacks (tuples, dict keys
that are not strings, non-finite floats), so a result read back equals the
one the task returned, types included.

Examples
--------
>>> decode(encode({("a", 1): (1.5, None), "x": [float("inf")]}))
{('a', 1): (1.5, None), 'x': [inf]}
>>> task_key(abs, (1, "FAR")) == task_key(abs, (1, "FAR")) != task_key(abs, (2, "FAR"))
True
"""

from __future__ import annotations

import dataclasses
import enum
import fcntl
import functools
import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable

__all__ = ["RECORDS", "LOCK", "IGNORED_ARGUMENTS", "RecordsError", "Records", "encode", "decode", "canonical",
           "task_key", "versions", "header_arguments"]

RECORDS = "records.jsonl"
LOCK = "records.lock"
#: Arguments that change how a sweep runs or prints, never its results: a resume may change them.
IGNORED_ARGUMENTS = frozenset({"out", "fresh", "quiet", "markdown", "executor", "jobs", "scheduler"})
#: Record format; a file of another format is refused like other arguments.
FORMAT = 1
_TAGS = ("__tuple__", "__items__", "__float__")
#: The lock and record files this process holds open.
_HELD: set[int] = set()


def _close_inherited() -> None:
    """In a forked child (a worker process): drop the copies of the parent's lock and record files.

    A lock taken with ``flock`` lasts while any copy of its file stays open: a worker that outlived a
    killed run would otherwise keep the next run out.
    """
    for fd in list(_HELD):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_inherited)


class RecordsError(Exception):
    """Records that cannot be used: other arguments, a damaged file, a folder another run holds (one line)."""


# ---------------------------------------------------------------------------
# values: exact round trip for results, a canonical form for keys

def encode(value: Any) -> Any:
    """``value`` as JSON data that :func:`decode` turns back into an equal value of the same types.

    Tuples, dicts whose keys are not all strings and non-finite floats are
    tagged; numpy scalars become Python numbers. Anything else that JSON
    cannot hold raises ``TypeError`` (a task result must be plain data).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not (len(value) == 1 and next(iter(value)) in _TAGS):
            return {k: encode(v) for k, v in value.items()}
        return {"__items__": [[encode(k), encode(v)] for k, v in value.items()]}
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return encode(value.item())
    raise TypeError(f"cannot record a value of type {type(value).__name__}")


def decode(data: Any) -> Any:
    """The value :func:`encode` was given."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict):
        if len(data) == 1:
            tag, inner = next(iter(data.items()))
            if tag == "__tuple__":
                return tuple(decode(v) for v in inner)
            if tag == "__items__":
                return {_hashable(decode(k)): decode(v) for k, v in inner}
            if tag == "__float__":
                return float(inner)
        return {k: decode(v) for k, v in data.items()}
    return data


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def canonical(value: Any) -> Any:
    """A JSON-able form of a task, the same in every process and run: the input of :func:`task_key`.

    Dataclasses count by their compared fields, enums by name, numpy arrays
    by dtype, shape and contents, functions by module and qualified name.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return [_qualname(type(value)), value.name]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [canonical(v) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(canonical(v), sort_keys=True) for v in value)]
    if isinstance(value, dict):
        return ["dict", sorted([json.dumps(canonical(k), sort_keys=True), canonical(v)] for k, v in value.items())]
    if isinstance(value, Path):
        return ["path", str(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [_qualname(type(value)), [[f.name, canonical(getattr(value, f.name))]
                                         for f in dataclasses.fields(value) if f.compare]]
    if isinstance(value, functools.partial):
        return ["partial", canonical(value.func), canonical(value.args), canonical(value.keywords)]
    if callable(value) and hasattr(value, "__qualname__"):
        return ["function", _qualname(value)]
    if type(value).__module__ == "numpy":
        if hasattr(value, "tobytes") and hasattr(value, "shape"):
            return ["ndarray", str(value.dtype), list(value.shape), hashlib.sha256(value.tobytes()).hexdigest()]
        return canonical(value.item())
    raise TypeError(f"cannot key a task holding a {type(value).__name__}")


def _qualname(obj: Any) -> str:
    module = obj.__module__
    if module == "__main__":  # python -m benchmarks.X: the module's own name, as in every other process
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        module = spec.name if spec is not None else module
    return f"{module}.{obj.__qualname__}"


def task_key(fn: Callable[[Any], Any], task: Any) -> str:
    """The key of ``fn(task)`` in the records: a hash of the function and of everything the task holds."""
    text = json.dumps([canonical(fn), canonical(task)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def versions() -> dict[str, str]:
    """The versions a sweep's results depend on: Python, this toolkit and its solvers."""
    from importlib import metadata

    out = {"python": ".".join(map(str, sys.version_info[:2]))}
    for dist in ("migsched", "ortools", "highspy", "pyomo", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "-"
    return out


def header_arguments(args: Any) -> dict[str, Any]:
    """The parsed arguments that decide a sweep's results (``vars(args)`` less :data:`IGNORED_ARGUMENTS`)."""
    return {k: _plain(v) for k, v in sorted(vars(args).items()) if k not in IGNORED_ARGUMENTS}


def _plain(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


# ---------------------------------------------------------------------------
# the file

class Records:
    """The records of one ``--out`` folder, locked against a second run for as long as this object lives.

    Use :meth:`open`; :attr:`done` maps the key of every task that finished
    to its result (failed tasks are not in it: a rerun retries them).
    """

    def __init__(self, folder: Path, header: dict[str, Any], done: dict[str, Any], lock_fd: int,
                 continued: bool) -> None:
        self.folder = folder
        self.path = folder / RECORDS
        self.header = header
        self.done = done
        self._lock_fd: int | None = lock_fd
        self._fd: int | None = None
        self._pid = os.getpid()  # a forked copy of this object owns no file (see _close_inherited)
        self._continued = continued  # the file holds this header and records: append to it

    @classmethod
    def open(cls, folder: str | Path, command: str, arguments: dict[str, Any], *, fresh: bool = False) -> "Records":
        """Lock ``folder`` and read its records.

        Raises
        ------
        RecordsError
            Another run holds the folder; the records were made with other
            arguments or versions (and ``fresh`` is false); the file is damaged.
        OSError
            The folder cannot be created or written.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        lock_fd = _lock(folder)
        try:
            header = {"records": FORMAT, "command": command, "arguments": arguments, "versions": versions()}
            path = folder / RECORDS
            done: dict[str, Any] | None = None
            if fresh:
                path.unlink(missing_ok=True)
            elif path.exists():
                done = _read(path, header)
            return cls(folder, header, done or {}, lock_fd, continued=done is not None)
        except BaseException:
            _HELD.discard(lock_fd)
            os.close(lock_fd)
            raise

    def add(self, key: str, label: str, result: Any, seconds: float | None = None) -> None:
        """Append a finished task and force it to disk."""
        line = {"key": key, "task": label, "status": "ok", "result": encode(result)}
        if seconds is not None:
            line["seconds"] = round(seconds, 3)
        self._append(line)
        self.done[key] = result

    def add_failure(self, key: str, label: str, error: str) -> None:
        """Append a failed task (a rerun runs it again) and force it to disk."""
        self._append({"key": key, "task": label, "status": "failed", "error": error})

    def _append(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        if self._fd is None:
            self._fd = self._start()
            _HELD.add(self._fd)
        while data:  # a kill mid-line leaves a tail that _read drops and _start cuts
            data = data[os.write(self._fd, data):]
        os.fsync(self._fd)

    def _start(self) -> int:
        """Open the file for appending; write the header first when the file holds no record yet."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        if self._continued:
            _drop_partial_tail(fd)
        else:
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(self.header, separators=(",", ":")) + "\n").encode())
        return fd

    def close(self) -> None:
        """Release the file and the lock (also done when the object is collected or the process ends)."""
        if getattr(self, "_pid", None) != os.getpid():
            return
        for name in ("_fd", "_lock_fd"):
            fd = getattr(self, name, None)
            if fd is not None:
                setattr(self, name, None)
                _HELD.discard(fd)
                os.close(fd)

    def __del__(self) -> None:
        self.close()


def _lock(folder: Path) -> int:
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise RecordsError(f"another run (pid {holder}) is using {folder}; wait for it to end or choose "
                           "another --out") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD.add(fd)
    return fd


def _drop_partial_tail(fd: int) -> None:
    """Cut a last line a killed run left without its newline, so the next record starts a line."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    pos = size
    while pos > 0:
        start = max(0, pos - 4096)
        chunk = os.pread(fd, pos - start, start)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            os.ftruncate(fd, start + nl + 1)
            return
        pos = start
    os.ftruncate(fd, 0)


def _read(path: Path, header: dict[str, Any]) -> dict[str, Any] | None:
    """``{key: result}`` of the finished tasks in ``path``, after checking its header against ``header``.

    ``None`` when the file holds no record (a run that ended before its
    first task finished): it is written anew, whatever its header says.
    """
    with open(path, "rb") as fh:
        complete = fh.read().split(b"\n")[:-1]  # a last line without newline is a write a kill cut short
    if not any(line.strip() for line in complete[1:]):
        return None
    try:
        head = json.loads(complete[0])
    except ValueError:
        raise RecordsError(f"{path} does not start with a records header; remove it or use --fresh") from None
    if not isinstance(head, dict) or head.get("records") != FORMAT:
        raise RecordsError(f"{path} is not a records file of this version; remove it or use --fresh")
    _check_header(path, head, header)
    done: dict[str, Any] = {}
    for number, raw in enumerate(complete[1:], start=2):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
            if rec["status"] == "ok":
                done[rec["key"]] = decode(rec["result"])
            else:
                done.pop(rec["key"], None)
        except (ValueError, KeyError, TypeError):
            raise RecordsError(f"{path}, line {number}: not a record; remove the file or use --fresh") from None
    return done


def _check_header(path: Path, head: dict[str, Any], header: dict[str, Any]) -> None:
    if head.get("command") != header["command"]:
        raise RecordsError(f"{path} holds the records of {head.get('command')!r}, not of {header['command']!r}; "
                           "choose another --out or use --fresh")
    was, now = head.get("arguments") or {}, header["arguments"]
    for name in sorted(set(was) | set(now)):
        if was.get(name) != now.get(name):
            raise RecordsError(f"{path} holds the records of other arguments ({_option(name)} "
                               f"{_shown(was.get(name))} there, {_shown(now.get(name))} now); rerun with those "
                               "arguments, choose another --out, or add --fresh to start over")
    was, now = head.get("versions") or {}, header["versions"]
    for name in sorted(set(was) | set(now)):
        if was.get(name) != now.get(name):
            raise RecordsError(f"{path} holds records made with {name} {was.get(name, '-')} (now "
                               f"{now.get(name, '-')}); add --fresh to start over")


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, list):
        return " ".join(map(str, value)) or "(none)"
    return str(value)
