"""Every plain-text reader reads numbers as strictly as the JSON: property tests.

Python's ``int()`` and ``float()`` take ``1_0``, digits of other scripts
(``١``), ``nan`` and ``inf``. The readers of the toolkit's text formats
(OR-Library files and value lists, the three styles of FAR task list, the
pairing family's CSV files) and the command-line number types must not: for
any token, either the value read is the one a strict ASCII reading gives, or
the reader raises one line of ``InstanceError`` (``ArgumentTypeError`` for a
command line), never another exception.

The strict reading here is written independently of
:mod:`instances.files`: a token is a number when it is ASCII, holds only
the characters of a decimal number and ``float()`` (``int()`` for an
integer) takes it.
"""

from __future__ import annotations

import argparse
import math
import sys
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from instances import console, files, gpus
from instances.errors import InstanceError
from instances.hetero_orlib import MAX_ORLIB_VALUE, parse_orlib, read_orlib, read_orlib_values
from instances.mig_tasklist import load_tasklist, parse_tasklist
from instances.pairing_jobs import load_jobs
from instances.pairing_table import TableModel

# Decimal digits of scripts other than ASCII (Arabic-Indic, Devanagari, fullwidth, ...).
UNICODE_DIGITS = [c for c in map(chr, range(128, sys.maxunicode + 1)) if unicodedata.category(c) == "Nd"]

PIECES = ["0", "1", "7", "9", "42", "007", "_", "+", "-", ".", "e", "E", "e999", "e-999", "e308", "e+5",
          "nan", "inf", "Infinity", "NaN", "x", " ", "\u00a0", "0x1f", "1e5", "²"]
TOKENS = st.one_of(
    st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from(UNICODE_DIGITS)), min_size=1, max_size=6)
    .map("".join),
    st.text(alphabet="0123456789_+-.eE" + "".join(UNICODE_DIGITS[:40]), min_size=1, max_size=12),
    st.integers(-10**25, 10**25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
# A token that ``str.split()`` keeps whole (the text formats split on blanks).
WORDS = TOKENS.map(lambda t: "".join(t.split())).filter(bool)

_NUMBER_CHARS = set("0123456789+-.eE")


def strict_int(token: str) -> int | None:
    """The integer an ASCII-digits reading gives, or None."""
    body = token[1:] if token[:1] in "+-" else token
    if not token.isascii() or not body or not all(c in "0123456789" for c in body):
        return None
    return int(token)


def strict_real(token: str) -> float | None:
    """The finite float a plain decimal reading gives, or None (``1e999`` is not finite: None)."""
    if not token.isascii() or not set(token) <= _NUMBER_CHARS:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def one_line_error(exc: BaseException) -> None:
    assert isinstance(exc, InstanceError), f"{type(exc).__name__}: {exc}"
    assert "\n" not in str(exc) and str(exc).isprintable()


def outcome(call):
    """``(value, None)`` or ``(None, InstanceError)``; any other exception fails the test."""
    try:
        return call(), None
    except InstanceError as exc:
        one_line_error(exc)
        return None, exc


# ---------------------------------------------------------------------------
# the shared readers

@given(TOKENS)
@example("1_0")
@example("١")
@example("+5")
@example("-0")
def test_parse_integer_is_the_strict_reading(token):
    value, err = outcome(lambda: files.parse_integer(token))
    ref = strict_int(token)
    if ref is None or len(str(abs(ref))) > files.MAX_INT_DIGITS:
        assert err is not None
    else:
        assert value == ref


@given(TOKENS)
@example("1_0.5")
@example("٣.5")
@example("nan")
@example("-inf")
@example("1e999")
@example(".5")
@example("5.")
def test_parse_real_is_the_strict_reading(token):
    value, err = outcome(lambda: files.parse_real(token))
    ref = strict_real(token)
    if ref is None:
        assert err is not None
    else:
        assert value == ref


@given(TOKENS)
def test_command_line_numbers_are_the_strict_reading(token):
    """The command lines share the syntax (``console.integer`` and ``console.number``)."""
    for parse, ref in ((console.integer(-10**6, 10**6), strict_int(token)),
                       (console.number(-1e6, 1e6), strict_real(token))):
        try:
            value = parse(token)
        except argparse.ArgumentTypeError as exc:
            assert "\n" not in str(exc)
            assert ref is None or abs(ref) > 1e6
        else:
            assert value == ref


# ---------------------------------------------------------------------------
# OR-Library files

@given(WORDS, st.integers(0, 2))
@example("1_0", 1)
@example("٣", 2)
@example("-3", 1)
@example("9" * 30, 2)
@example(str(2**53), 0)
@example(str(2**53), 2)
def test_orlib_numbers(token, field):
    """The token as job 2's processing time (0), weight (1) or due date (2) of a 2-job instance."""
    data = [[5, 6], [1, 2], [10, 20]]
    words = [[str(v) for v in row] for row in data]
    words[field][1] = token
    text = " ".join(w for row in words for w in row)
    pbs, err = outcome(lambda: parse_orlib(text, "f.txt", n=2, count=1))
    ref = strict_int(token)
    lo = 1 if field == 0 else 0
    if ref is None or not lo <= ref <= MAX_ORLIB_VALUE:
        assert err is not None
    elif err is not None:
        # a valid number whose sum with the other run time no double holds exactly: the problem's
        # precision rule refuses it in one line (instances.hetero_problem)
        assert field == 0 and ref + 5 > 2**52 and "holds a time only to" in str(err)
    else:
        task = pbs[0].tasks[1]
        assert (task.workload, task.weight, task.deadline)[field] == ref


@settings(max_examples=25)
@given(WORDS)
@example("1_0")
@example("٣")
@example(str(2**53))
def test_orlib_file_readers(tmp_path_factory, token):
    d = tmp_path_factory.mktemp("orlib")
    data, values = d / "wt.txt", d / "opt.txt"
    data.write_text(f"3 {token}\n1 2\n4 5\n", encoding="utf-8")
    values.write_text(f"913 {token}\n", encoding="utf-8")
    ref = strict_int(token)
    pbs, err = outcome(lambda: read_orlib(data, n=2, count=1))
    if ref is None or not 1 <= ref <= MAX_ORLIB_VALUE:
        assert err is not None
    elif err is not None:  # the precision rule, as in test_orlib_numbers
        assert ref + 3 > 2**52 and "holds a time only to" in str(err)
    else:
        assert pbs[0].tasks[1].workload == ref
    vals, err = outcome(lambda: read_orlib_values(values, count=2))
    assert (err is not None) if ref is None or not 0 <= ref <= MAX_ORLIB_VALUE else vals == [913, ref]


# ---------------------------------------------------------------------------
# FAR task lists (A30: sizes 1, 2, 4; times must not grow with the size)

A30 = gpus.get("A30")


def _time_read(text: str, ref: float | None, get):
    problem, err = outcome(lambda: parse_tasklist(text, A30, "list.txt"))
    if ref is None or not 0 < ref <= 8:
        assert err is not None
    else:
        assert get(problem) == ref


@given(WORDS)
@example("1_0")
@example("٣")
@example("nan")
@example("1e999")
def test_tasklist_bare_times(token):
    _time_read(f"bfs 8 8 {token}\n", strict_real(token), lambda p: p.task("bfs").time(4))


@given(WORDS)
@example("1_0")
@example("٣.5")
def test_tasklist_pairs(token):
    _time_read(f"bfs 1:8 2=8 4:{token}\n", strict_real(token), lambda p: p.task("bfs").time(4))


@given(WORDS)
@example("1_0")
@example("inf")
def test_tasklist_report(token):
    _time_read(f"Task bfs:\nSize 1: 8 seconds\nSize 2: 8 seconds\nSize 4: {token} seconds\n",
               strict_real(token), lambda p: p.task("bfs").time(4))


@given(WORDS)
@example("4")
@example("+4")
@example("04")
@example("٤")
@example("1")
def test_tasklist_sizes(token):
    """The token as the third size of a report and of a pair list: only a reading of 4 is valid
    (1 and 2 are given already, another number is not an A30 size)."""
    for text in (f"Task bfs:\nSize 1: 8 seconds\nSize 2: 8\nSize {token}: 3\n", f"bfs 1:8 2:8 {token}:3\n"):
        if ":" in token or "#" in token:
            continue
        problem, err = outcome(lambda: parse_tasklist(text, A30, "list.txt"))
        if strict_int(token) == 4:
            assert problem.task("bfs").time(4) == 3
        else:
            assert err is not None


def test_tasklist_size_given_twice_names_both_lines(tmp_path):
    """The report once kept the last of two lines for one size silently; JSON refuses a key given twice."""
    f = tmp_path / "report.txt"
    f.write_text("Task bfs:\nSize 1: 8 seconds\nSize 2: 5 seconds\nSize 1: 7 seconds\nSize 4: 3 seconds\n")
    with pytest.raises(InstanceError, match=r"report.txt: task bfs: field line 4: size 1 is given twice "
                                            r"\(first on line 2\)$"):
        load_tasklist(f, "A30")
    f.write_text("bfs 1:8 2:5 1:7 4:3\n")
    with pytest.raises(InstanceError, match="field line 1: size 1 is given twice"):
        load_tasklist(f, "A30")
    f.write_text("Task bfs:\nSize 1: 8\nSize 2: 5\nSize 4: 3\nTask nw:\nSize 1: 8\nSize 2: 5\nSize 4: 3\n")
    assert [t.name for t in load_tasklist(f, "A30").tasks] == ["bfs", "nw"]  # sizes count per task


# ---------------------------------------------------------------------------
# pairing CSV files

@settings(max_examples=40)
@given(WORDS.filter(lambda t: "," not in t and '"' not in t))
@example("1_0")
@example("٣")
@example("nan")
def test_pairing_job_queue(tmp_path_factory, token):
    f = tmp_path_factory.mktemp("q") / "q.csv"
    f.write_text(f"name,app,solo_time\nj,lud,{token}\n", encoding="utf-8")
    jobs, err = outcome(lambda: load_jobs(f))
    ref = strict_real(token)
    if ref is None or not ref > 0:
        assert err is not None
    else:
        assert jobs[0].solo_time == ref


@settings(max_examples=40)
@given(WORDS.filter(lambda t: "," not in t and '"' not in t))
@example("1_0")
@example("١.5")
@example("inf")
def test_pairing_slowdown_table(tmp_path_factory, token):
    f = tmp_path_factory.mktemp("t") / "t.csv"
    f.write_text(f"app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown\nlud,,32,8,175,175,{token}\n",
                 encoding="utf-8")
    table, err = outcome(lambda: TableModel.from_csv(f))
    ref = strict_real(token)
    if ref is None or not ref > 0:
        assert err is not None
    else:
        assert list(table.table.values()) == [ref]
