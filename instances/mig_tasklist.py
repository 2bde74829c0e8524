"""Reading MIG task lists: problem JSON, or the plain-text lists of the FAR paper's reference code.

:func:`load_tasklist` reads a file in any of three styles and returns a
:class:`~instances.mig_problem.Problem` (or a
:class:`~instances.mig_problem.Workload` for a multi-batch JSON):

* the problem JSON of :mod:`instances.mig` (``{"gpu": ..., "tasks": [...]}``),
  or a bare JSON list of tasks;
* the reference implementation's profile report::

    Task gaussian:
    Size 1: 10.5 seconds
    Size 2: 5.3 seconds

* one task per line, ``name t(s_1) t(s_2) ...`` (one time per GPU size in
  increasing size order) or ``name 1:10.5 2:5.3 ...``; ``#`` starts a comment.

A text list holds at most :data:`~instances.console.MAX_TASKS` (100,000)
tasks, the most a generated batch holds (FAR's work and the checker's are
linear in the tasks, but a million tasks take minutes); a JSON file is
bounded by :data:`~instances.files.MAX_FILE_BYTES`.

Numbers are read by :func:`instances.files.parse_integer` and
:func:`~instances.files.parse_real`, as strictly as the JSON (``1_0``,
Arabic-Indic digits, ``nan`` and ``inf`` are refused), and a size given twice
for one task is an error, as a key given twice in JSON is. Every error is an
:class:`~instances.errors.InstanceError` naming the file, the line and, where
known, the task.

Examples
--------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "tasks.txt")
>>> with open(path, "w") as fh:
...     _ = fh.write("# name t1 t2 t4\\nbfs 8 4.5 3\\nnw 1:6 2:3.5 4:2\\n")
>>> p = load_tasklist(path, "A30")
>>> [t.name for t in p.tasks], p.task("nw").time(2)
(['bfs', 'nw'], 3.5)
"""

from __future__ import annotations

import re
from pathlib import Path

from instances import files, gpus, mig_problem
from instances.console import MAX_TASKS
from instances.errors import InstanceError
from instances.files import parse_json, read_text
from instances.gpus import GPUSpec
from instances.mig_problem import Problem, Task, Workload

__all__ = ["load_tasklist", "parse_tasklist"]

# Larger than any GPU's slice count; a size beyond it is an error before the GPU is consulted.
_MAX_SIZE = 1_000_000

_SIZE_LINE = re.compile(r"^\s*size\s+([^\s:]+)\s*:\s*(\S+?)\s*(seconds?|s)?\s*$", re.I)
_TASK_LINE = re.compile(r"^\s*task\s+(\S+?)\s*:\s*$", re.I)


def parse_tasklist(text: str, gpu: GPUSpec, source: str) -> Problem:
    """A plain-text task list (either text style of the module docstring) as a problem on ``gpu``.

    Parameters
    ----------
    text
        The file's content.
    gpu
        The GPU the times are for (a line of bare times gives one per size of it).
    source
        Named in every error.

    Examples
    --------
    >>> p = parse_tasklist("Task lud:\\nSize 1: 4 seconds\\nSize 2: 2 seconds\\nSize 4: 1.5 seconds\\n",
    ...                    gpus.get("A30"), "profile.txt")
    >>> p.tasks[0].name, p.tasks[0].time(4)
    ('lud', 1.5)
    >>> parse_tasklist("bfs 8 4.5\\n", gpus.get("A30"), "list.txt")
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: list.txt: task bfs: field line 1: expected 3 times (sizes [1, 2, 4]) or size:time pairs, got 2 values
    """
    tasks: list[Task] = []
    current: tuple[str, dict[int, float]] | None = None
    seen: dict[int, int] = {}  # size -> line of the current profile-report task

    def add(times: dict[int, float], size: str, time: str, task: str, where: str, lineno: int,
            lines: dict[int, int]) -> None:
        s = files.parse_integer(size, lo=1, hi=_MAX_SIZE, source=source, task=task, field=f"{where}: size")
        if s in times:
            raise InstanceError(f"size {s} is given twice (first on line {lines[s]})", source=source,
                                task=task, field=where)
        times[s] = files.parse_real(time, source=source, task=task, field=f"{where}: size {s}")
        lines[s] = lineno

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or set(line) <= set("=-"):
            continue
        where = f"line {lineno}"
        if len(tasks) >= MAX_TASKS:
            _too_many(source, lineno)
        m = _TASK_LINE.match(line)
        if m:
            if current:
                tasks.append(Task(*current))
            current, seen = (m.group(1), {}), {}
            continue
        m = _SIZE_LINE.match(line)
        if m:
            if current is None:
                raise InstanceError("a 'Size s: t' line before any 'Task name:' line", source=source, field=where)
            add(current[1], m.group(1), m.group(2), current[0], where, lineno, seen)
            continue
        if line.lower().startswith("profiled times"):
            continue
        if current:
            tasks.append(Task(*current))
            current = None
        parts = line.replace(",", " ").split()
        name, vals = parts[0], parts[1:]
        times: dict[int, float] = {}
        if vals and all(":" in v or "=" in v for v in vals):
            on_line: dict[int, int] = {}
            for v in vals:
                size, time = re.split("[:=]", v, maxsplit=1)
                add(times, size, time, name, where, lineno, on_line)
        elif len(vals) == len(gpu.sizes):
            times = {s: files.parse_real(v, source=source, task=name, field=f"{where}: size {s}")
                     for s, v in zip(gpu.sizes, vals)}
        else:
            raise InstanceError(f"expected {len(gpu.sizes)} times (sizes {list(gpu.sizes)}) or size:time "
                                f"pairs, got {len(vals)} values", source=source, task=name, field=where)
        tasks.append(Task(name, times))
    if current:
        tasks.append(Task(*current))
    if len(tasks) > MAX_TASKS:
        _too_many(source, lineno)
    if not tasks:
        raise InstanceError("no tasks found", source=source)
    return Problem(gpu, tasks, source=source)


def _too_many(source: str, lineno: int) -> None:
    raise InstanceError(f"more than {MAX_TASKS:,} tasks (line {lineno}); a MIG batch holds at most {MAX_TASKS:,}",
                        source=source)


def load_tasklist(path: str | Path, gpu: str | None = None) -> Problem | Workload:
    """Read a problem: JSON (the :mod:`instances.mig` format) or a plain-text task list.

    Parameters
    ----------
    path
        The file.
    gpu
        GPU name. It overrides the GPU of a JSON file and gives the context of
        a text file (default A100 for a text file or a bare JSON task list).

    Raises
    ------
    InstanceError
        Naming the file, and the line and task at fault.
    """
    src = str(path)
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        data = parse_json(text, src)
        if isinstance(data, list):  # a bare task list
            data = {"gpu": gpu or "A100", "tasks": data}
        elif isinstance(data, dict) and gpu is not None:
            data = dict(data, gpu=gpu)
        return mig_problem.from_dict(data, source=src)
    try:
        g = gpus.get(gpu or "A100")
    except InstanceError as exc:
        raise exc.located(src) from None
    return parse_tasklist(text, g, src)
