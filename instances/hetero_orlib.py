"""OR-Library weighted tardiness (single GPU, all arrivals 0, memory ignored): files, generator, wt40.

Reads and writes the OR-Library format (Beasley's weighted-tardiness sets;
Crauwels, Potts & Van Wassenhove 1998), draws instances by the same scheme,
and serves the shipped wt40 set with its known optima. Each instance is a
one-GPU :class:`~instances.hetero_problem.HeteroProblem`: the single-GPU
restriction of the heterogeneous-GPU scheduling paper, Sec. II
(1||sum w_j T_j).
"""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from instances import files
from instances import options as opt
from instances.errors import InstanceError, OptionError
from instances.hetero_problem import GPU, HeteroProblem, Task


_ORLIB_N = 40
_ORLIB_COUNT = 125
_WT40 = "instances/data/orlib-wt/wt40.txt"
_WTOPT40 = "instances/data/orlib-wt/wtopt40.txt"
_FIELDS = ("processing time", "weight", "due date")

#: Largest value in an OR-Library file: every integer up to it is exact as a double.
MAX_ORLIB_VALUE = 2**53
#: Most instances of one file (``count=``); the OR-Library sets hold 125.
MAX_ORLIB_COUNT = 100_000
#: Most jobs of one instance (``n=``); the OR-Library's largest sets have 100.
MAX_ORLIB_JOBS = 1_000_000

#: Tardiness factors and relative ranges of due dates of the OR-Library sets,
#: in file order: the range is the outer loop, the factor the inner one, five
#: instances per pair (instances 1-5: TF 0.2, RDD 0.2; 6-10: TF 0.4, RDD 0.2; ...).
ORLIB_TF = (0.2, 0.4, 0.6, 0.8, 1.0)
ORLIB_RDD = (0.2, 0.4, 0.6, 0.8, 1.0)


def _orlib_text(name: str) -> tuple[str, str]:
    ref = resources.files("instances").joinpath("data", "orlib-wt", name)
    return ref.read_text(), f"instances/data/orlib-wt/{name}"


def _count_option(value, name: str, hi: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                              or not 1 <= value <= hi):
        raise OptionError(f"must be an integer from 1 to {hi:,}, got {value!r}", field=name)


# A text whose every whitespace-separated token is an integer in ASCII digits: no character but
# digits, signs and blanks, and a sign only at the start of a token, before a digit.
_NOT_INTEGERS = re.compile(r"[^\s0-9+-]|[0-9+-][+-]|[+-](?![0-9])")


def _integers(text: str, source: str, what, lo: int) -> np.ndarray:
    """All whitespace-separated tokens as integers in ``[lo, MAX_ORLIB_VALUE]``, read by
    :func:`instances.files.parse_integer`'s rules; a bad token raises an :class:`InstanceError`
    located by ``what(position)`` (1-based token number)."""
    tokens = text.split()
    vals = None
    if not _NOT_INTEGERS.search(text):  # the usual case: one pass in C, then numpy
        try:
            vals = np.array(tokens, dtype=np.int64)
        except (ValueError, OverflowError):  # a number beyond 64 bits, reported below
            vals = None
    if vals is not None and not (len(vals) and (vals.min() < lo or vals.max() > MAX_ORLIB_VALUE)):
        return vals
    for pos, tok in enumerate(tokens):
        try:
            files.parse_integer(tok, lo=lo, hi=MAX_ORLIB_VALUE)
        except InstanceError as exc:
            raise InstanceError(f"{what(pos)}: {exc.reason}", source=source) from None
    raise AssertionError("unreachable: some token is not a valid integer")  # pragma: no cover


def parse_orlib(text: str, source: str = "<text>", n: int | None = None,
                count: int | None = None) -> list[HeteroProblem]:
    """Weighted-tardiness instances in the OR-Library format (see :func:`read_orlib`).

    Examples
    --------
    >>> [pb.name for pb in parse_orlib("3 1 2  5 4 9", source="two.txt", n=1)]
    ['two-1', 'two-2']
    >>> parse_orlib("3 1 2  5 x 9", source="bad.txt", n=1)
    Traceback (most recent call last):
    ...
    instances.errors.InstanceError: bad.txt: instance 2, weight of job 1 (number 5 in the file): not an integer: 'x' (digits 0-9 only)
    """
    _count_option(n, "n", MAX_ORLIB_JOBS)
    _count_option(count, "count", MAX_ORLIB_COUNT)
    total = len(text.split())
    if total == 0:
        raise InstanceError("no numbers (an OR-Library file holds 3n numbers per instance)", source=source)
    if n is None and count is None:
        if total % (3 * _ORLIB_COUNT):
            raise InstanceError(
                f"{total} numbers is not {_ORLIB_COUNT} instances of 3n numbers; pass n= (jobs per "
                "instance) or count= (instances) to read another layout", source=source)
        count = _ORLIB_COUNT
    if n is None:
        if total % (3 * count):
            raise InstanceError(f"{total} numbers cannot hold {count} instances of 3n numbers",
                                source=source)
        n = total // (3 * count)
    if count is not None and total < 3 * n * count:
        raise InstanceError(f"{total} numbers are too few for {count:,} instances of 3 x {n:,} numbers",
                            source=source)

    def where(pos: int) -> str:
        k, r = divmod(pos, 3 * n)
        f, j = divmod(r, n)
        return f"instance {k + 1}, {_FIELDS[f]} of job {j + 1} (number {pos + 1} in the file)"

    vals = _integers(text, source, where, lo=0)
    if count is None:
        count = total // (3 * n)
    if total != 3 * n * count:
        raise InstanceError(f"{total} numbers do not split into {count if count else 'whole'} instances "
                            f"of 3 x {n} numbers (the last instance is cut short)", source=source)
    data = vals.reshape(count, 3, n)
    bad = np.argwhere(np.concatenate([data[:, :1] < 1, data[:, 1:] < 0], axis=1))
    if len(bad):
        k, f, j = (int(x) for x in bad[0])
        need = ">= 1" if f == 0 else ">= 0"
        raise InstanceError(f"{where(k * 3 * n + f * n + j)}: must be {need}, got {data[k, f, j]}",
                            source=source)
    label = Path(source).stem if source != "<text>" else "orlib"
    out = []
    for k in range(count):
        p, w, d = data[k]
        tasks = tuple(Task(f"j{i + 1}", float(p[i]), 0.0, float(d[i]), float(w[i]), 0.0) for i in range(n))
        out.append(HeteroProblem(tasks, (GPU("machine", 1.0, math.inf, "single"),),
                                 name=f"{label}-{k + 1}", source=source))
    return out


def read_orlib(path: str | Path, n: int | None = None, count: int | None = None) -> list[HeteroProblem]:
    """Read an OR-Library weighted-tardiness file (wt40, wt50, wt100, ... or your own).

    The format: for each instance, ``n`` processing times, ``n`` weights and
    ``n`` due dates, all integers separated by any whitespace. The number of
    jobs is inferred from the file's length: ``125`` instances of ``3n``
    numbers, as in every OR-Library set. Pass ``n`` (jobs per instance) or
    ``count`` (number of instances) for another layout. Each instance becomes
    a single-GPU problem (speed 1, all arrivals 0): the restriction of the
    heterogeneous-GPU scheduling paper, Sec. II.

    Raises
    ------
    InstanceError
        A missing file, a token that is not an integer in ASCII digits (``1_0``
        and Arabic-Indic digits are refused, although ``int()`` takes them), a
        negative value, a value above :data:`MAX_ORLIB_VALUE` or a processing
        time below 1 (naming the file, instance, field, job and position), or a
        length that does not split into whole instances.
    OptionError
        ``n`` or ``count`` not an integer from 1 to :data:`MAX_ORLIB_JOBS`
        (:data:`MAX_ORLIB_COUNT`).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "wt2.txt")
    >>> _ = open(path, "w").write("1 2  3 4  5 6\\n" * 125)
    >>> pbs = read_orlib(path); len(pbs), pbs[0].n, pbs[0].tasks[1].deadline
    (125, 2, 6.0)
    """
    from instances.files import read_text

    return parse_orlib(read_text(path), str(path), n=n, count=count)


def read_orlib_values(path: str | Path, count: int | None = None) -> list[int]:
    """The known optimal (or best known) values of an OR-Library set, one per instance.

    Values are integers from 0 to :data:`MAX_ORLIB_VALUE` in ASCII digits (a
    weighted tardiness is never negative); ``count``, when given, is the
    number of values expected, an integer from 1 to :data:`MAX_ORLIB_COUNT`
    (else an :class:`OptionError`).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "opt.txt")
    >>> _ = open(path, "w").write("913\\n 1225 537")
    >>> read_orlib_values(path)
    [913, 1225, 537]
    """
    from instances.files import read_text

    _count_option(count, "count", MAX_ORLIB_COUNT)
    text, src = read_text(path), str(path)
    vals = _integers(text, src, lambda pos: f"value {pos + 1}", lo=0)
    if count is not None and len(vals) != count:
        raise InstanceError(f"expected {count} values, found {len(vals)}", source=src)
    return [int(v) for v in vals]


def write_orlib(problems: Sequence[HeteroProblem], path: str | Path) -> None:
    """Write single-GPU problems with integer data in the OR-Library format
    (20 numbers a line, right-aligned in 6 columns, as the OR-Library files).

    The GPU's speed must be 1 and every arrival 0 (the format has no place
    for them); every value must be an integer.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "wt5.txt")
    >>> pbs = generate_orlib_set(5, seed=1)
    >>> write_orlib(pbs, path)
    >>> [q.to_dict()["tasks"] for q in read_orlib(path)] == [q.to_dict()["tasks"] for q in pbs]
    True
    """
    numbers: list[int] = []
    for pb in problems:
        if pb.m != 1 or pb.gpus[0].speed != 1 or any(t.arrival for t in pb.tasks):
            raise InstanceError("the OR-Library format holds one machine of speed 1 and no arrivals",
                                source=str(path), field=pb.name)
        for field in ("workload", "weight", "deadline"):
            for t in pb.tasks:
                v = getattr(t, field)
                if not float(v).is_integer():
                    raise InstanceError(f"not an integer: {v!r}", source=str(path), task=t.name, field=field)
                numbers.append(int(v))
    lines = ["".join(f"{v:6d}" for v in numbers[i:i + 20]) for i in range(0, len(numbers), 20)]
    Path(path).write_text("\n".join(lines) + "\n")


def generate_orlib(n: int, *, tf: float, rdd: float, seed: int = 0, name: str | None = None) -> HeteroProblem:
    """One single-machine weighted-tardiness instance drawn by the OR-Library scheme.

    The scheme of the OR-Library sets (Potts & Van Wassenhove; Crauwels,
    Potts & Van Wassenhove 1998): processing times ``p_j ~ U{1..100}``,
    weights ``w_j ~ U{1..10}``, and with ``P = sum_j p_j`` due dates
    ``d_j ~ U{round(P(1 - TF - RDD/2)) .. round(P(1 - TF + RDD/2))}``, clipped
    at 0 as in the OR-Library files, where ``TF`` is the tardiness factor
    (higher: more jobs late) and ``RDD`` the relative range of due dates.
    Draws use ``numpy.random.default_rng(seed)`` in this order (p, w, d).

    Examples
    --------
    >>> pb = generate_orlib(50, tf=0.6, rdd=0.4, seed=7)
    >>> pb.n, pb.m, pb == generate_orlib(50, tf=0.6, rdd=0.4, seed=7)
    (50, 1, True)
    >>> all(1 <= t.workload <= 100 and 1 <= t.weight <= 10 and t.deadline >= 0 for t in pb.tasks)
    True
    """
    n = opt.integer(n, "n", lo=0, hi=MAX_ORLIB_JOBS)
    tf, rdd = opt.number(tf, "tf", lo=0.0, hi=1.0), opt.number(rdd, "rdd", lo=0.0, hi=1.0)
    return _generate_orlib(n, tf, rdd, opt.seed(seed), name)


def _generate_orlib(n: int, tf: float, rdd: float, seed: int | None, name: str | None) -> HeteroProblem:
    """The draws of :func:`generate_orlib` on checked arguments (a set derives seeds beyond ``MAX_SEED``)."""
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 101, size=n)
    w = rng.integers(1, 11, size=n)
    P = int(p.sum())
    lo, hi = round(P * (1 - tf - rdd / 2)), round(P * (1 - tf + rdd / 2))
    d = np.maximum(0, rng.integers(lo, hi + 1, size=n))
    tasks = tuple(Task(f"j{i + 1}", float(p[i]), 0.0, float(d[i]), float(w[i]), 0.0) for i in range(n))
    return HeteroProblem(tasks, (GPU("machine", 1.0, math.inf, "single"),),
                         name=name or f"orlib-n{n}-TF{tf:g}-RDD{rdd:g}-seed{seed}")


def generate_orlib_set(n: int, seed: int = 0, per_pair: int = 5) -> list[HeteroProblem]:
    """A set laid out like the OR-Library files: for each RDD (outer) and TF
    (inner) of :data:`ORLIB_TF` x :data:`ORLIB_RDD`, ``per_pair`` instances
    (125 for the default 5). Instance ``k`` (0-based) uses the seed
    ``seed * 1_000_003 + k``, so a set and any instance of it are reproducible.

    Examples
    --------
    >>> pbs = generate_orlib_set(10, seed=3)
    >>> len(pbs), pbs[0].name, pbs[5].name
    (125, 'orlib-n10-s3-1', 'orlib-n10-s3-6')
    """
    n = opt.integer(n, "n", lo=0, hi=MAX_ORLIB_JOBS)
    seed = opt.seed(seed, allow_none=False)
    per_pair = opt.integer(per_pair, "per_pair", lo=1, hi=MAX_ORLIB_COUNT // (len(ORLIB_RDD) * len(ORLIB_TF)))
    if n * per_pair * len(ORLIB_RDD) * len(ORLIB_TF) > MAX_ORLIB_JOBS:
        raise OptionError(f"{n:,} jobs x {per_pair * len(ORLIB_RDD) * len(ORLIB_TF):,} instances; at most "
                          f"{MAX_ORLIB_JOBS:,} jobs in one set", field="n")
    out = []
    for rdd in ORLIB_RDD:
        for tf in ORLIB_TF:
            for _ in range(per_pair):
                k = len(out)
                out.append(_generate_orlib(n, tf, rdd, seed * 1_000_003 + k, f"orlib-n{n}-s{seed}-{k + 1}"))
    return out


def orlib_wt40(k: int) -> HeteroProblem:
    """OR-Library wt40 instance ``k`` (1-based, 1..125) as a single-GPU problem.

    The file lists, per instance, 40 processing times, 40 weights, 40 due
    dates. The GPU has speed 1 and unlimited memory, tasks arrive at 0 and need
    no memory: exactly the single-GPU restriction of the heterogeneous-GPU scheduling paper, Sec. II (1||sum w_j T_j).

    Examples
    --------
    >>> pb = orlib_wt40(1)
    >>> pb.tasks[0].workload, pb.tasks[0].weight, pb.tasks[0].deadline
    (26.0, 1.0, 1588.0)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _ORLIB_COUNT:
        raise InstanceError(f"instance number must be in 1..{_ORLIB_COUNT}, got {k!r}", source=_WT40)
    return _wt40()[k - 1]


_WT40_CACHE: list[HeteroProblem] = []


def _wt40() -> list[HeteroProblem]:
    if not _WT40_CACHE:
        text, src = _orlib_text("wt40.txt")
        pbs = parse_orlib(text, src, n=_ORLIB_N, count=_ORLIB_COUNT)
        _WT40_CACHE.extend(HeteroProblem(pb.tasks, pb.gpus, name=f"wt40-{k + 1}", source=src)
                           for k, pb in enumerate(pbs))
    return _WT40_CACHE


def orlib_wt40_all() -> list[HeteroProblem]:
    """All 125 wt40 instances, in file order."""
    return list(_wt40())


def orlib_wt40_optimum(k: int | None = None):
    """Known optimum of wt40 instance ``k`` (1-based), or the list of all 125.

    Instance 19 is the one whose value is only the best known (see the
    shipped README.txt); the other 124 are proven optima.
    """
    text, src = _orlib_text("wtopt40.txt")
    vals = [int(v) for v in _integers(text, src, lambda pos: f"value {pos + 1}", lo=0)]
    if len(vals) != _ORLIB_COUNT:
        raise InstanceError(f"expected {_ORLIB_COUNT} values, found {len(vals)}", source=src)
    if k is None:
        return vals
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= _ORLIB_COUNT:
        raise InstanceError(f"instance number must be in 1..{_ORLIB_COUNT}, got {k!r}", source=src)
    return vals[k - 1]
