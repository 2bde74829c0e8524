"""Every command line of the toolkit keeps one contract (``instances.console``).

Exit status 0, or 2 with exactly one line ``python -m X: error: ...`` on
stderr and no traceback, for every size a user can type (absurd sizes have a
documented maximum), for numbers Python would read laxly (``1_000``, Arabic-
Indic digits, ``nan``) and for an unreachable Dask scheduler. Most cases call
the commands' ``main(argv)`` in this process (fast); a few run real
processes, where a traceback would show.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.common import command_names
from instances import console

ROOT = Path(__file__).resolve().parents[1]

#: Every command: module name -> the module holding its ``main``.
COMMANDS = {
    "instances.mig": "instances.mig",
    "instances.mig_execution": "instances.mig_execution",
    "heuristics.far": "heuristics.far_cli",
    **{f"benchmarks.{m}": f"benchmarks.{m}" for m in command_names()},
}


def run(command: str, argv: list[str]) -> tuple[int, str, str]:
    """``python -m command *argv`` in this process: (exit status, stdout, stderr)."""
    main = importlib.import_module(COMMANDS[command]).main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = console.exit_status(main, argv, prog=f"python -m {command}")
        except SystemExit as exc:  # argparse
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


#: The benchmarks whose work runs through ``benchmarks.executor``: those with ``--executor``.
WITH_EXECUTOR = [m[len("benchmarks."):] for m in sorted(COMMANDS)
                 if m.startswith("benchmarks.") and "--executor" in run(m, ["--help"])[1]]


def assert_one_error(command: str, rc: int, err: str, needle: str = "") -> None:
    lines = err.splitlines()
    assert rc == 2, (rc, err)
    # a subcommand's errors name it: "python -m instances.mig generate: error: ..."
    assert len(lines) == 1 and re.match(rf"python -m {re.escape(command)}( \w+)?: error: ", lines[0]), err
    assert "Traceback" not in err and needle in lines[0], (needle, err)


# ---------------------------------------------------------------------------
# absurd sizes: every size has a bound, said in one line

ABSURD = [
    ("benchmarks.compare", ["--n", "1000000000000"], "--n"),
    ("benchmarks.compare", ["--instances", "1000000000000"], "--instances"),
    ("benchmarks.compare", ["--n", "5000"], "exact"),  # beyond the exact models without --no-exact
    ("benchmarks.compare", ["--time-limit", "1e400"], "--time-limit"),
    ("benchmarks.compare", ["--workers", str(2**31)], "--workers"),
    ("benchmarks.compare", ["--jobs", "100000"], "--jobs"),
    ("benchmarks.compare", ["--seed", str(2**40)], "--seed"),
    ("benchmarks.far_speed", ["--n", "1000000000000"], "--n"),
    ("benchmarks.far_speed", ["--near", "1000000000"], "--near"),
    ("benchmarks.far_speed", ["--ties", "--reps", "1000000000"], "--reps"),
    ("benchmarks.paper", ["--far-opt-n", "1000000000000"], "--far-opt-n"),
    ("benchmarks.paper", ["--reps", "1000000000000"], "--reps"),
    ("benchmarks.paper", ["--opt-n", "100000"], "--opt-n"),
    ("benchmarks.paper", ["--setting", "release=gap,gap=1e308"], "gap"),
    ("benchmarks.milp_speed", ["--rows", "cpsat0:1000000000000"], "cpsat0:1000000000000"),
    ("benchmarks.milp_speed", ["--sweep-max", "1000000000"], "--sweep-max"),
    ("benchmarks.milp_speed", ["--gap-n", "1000000000"], "--gap-n"),
    ("benchmarks.mig_pyomo", ["--n", "1000000000000"], "--n"),
    ("benchmarks.orlib", ["--instances", "1-10000000000"], "--instances"),
    ("benchmarks.orlib", ["--instances", "1-" + "9" * 29], "--instances"),
    ("benchmarks.orlib", ["--generate", "1000000000"], "--generate"),
    ("benchmarks.hetero", ["--n", "1" + "0" * 26], "--n"),
    ("benchmarks.hetero", ["--gpus", ",".join(["T4"] * 1000)], "--gpus"),
    ("benchmarks.realtime", ["--n", "1000000000"], "--n"),
    ("benchmarks.realtime", ["--step", "1e-300"], "--step"),
    ("benchmarks.realtime", ["--utils", "1e308"], "--utils"),
    ("benchmarks.realtime", ["--utils", "100"], "--sms"),  # above the 68 SMs' capacity
    ("benchmarks.realtime", ["--sms", "100000"], "--sms"),
    ("benchmarks.pairing", ["--W", "1000000000"], "--W"),
    ("benchmarks.pairing", ["--triple-W", "1000"], "--triple-W"),
    ("benchmarks.pairing", ["--p-total", "1e308"], "--p-total"),
    ("benchmarks.case", ["--seeds", "1000000000"], "--seeds"),
    ("benchmarks.case", ["--bound-n", "41"], "--bound-n"),
    ("benchmarks.robustness", ["--n", "1000000000000"], "--n"),
    ("benchmarks.robustness", ["--instances", "1000000000000"], "--instances"),
    ("benchmarks.robustness", ["--noise", "0.1,1e308"], "--noise"),
    ("instances.mig_execution", ["s.json", "--dry-run", "--gpu-index", "1000000000000"], "--gpu-index"),
    ("instances.mig_execution", ["s.json", "--simulate", "--noise", "nan"], "--noise"),
    ("instances.mig", ["generate", "--n", "1000000000000", "--out", "x.json"], "--n"),
    ("instances.mig", ["generate", "--n", "3", "--seed", str(2**64), "--out", "x.json"], "--seed"),
]


@pytest.mark.parametrize("command, argv, needle", ABSURD, ids=[f"{c}:{' '.join(a)[:40]}" for c, a, _ in ABSURD])
def test_absurd_sizes_are_one_line(command, argv, needle):
    rc, out, err = run(command, argv)
    assert_one_error(command, rc, err, needle)
    assert out == ""


# ---------------------------------------------------------------------------
# lax numbers: what Python's int() and float() accept and the project's JSON refuses

LAX_INTEGERS = ["1_000", "١٢", "１２", " 12", "12 ", "+inf", "nan", "0x10", "1e3", "12.0", "", "--"]
LAX_REALS = ["1_0.5", "٣.5", "inf", "-inf", "nan", "NaN", "1e999", "0x1p3", " 2", "2,5", ""]
#: (command, the arguments before the number, the option taking the number)
INTEGER_OPTIONS = [
    ("benchmarks.compare", [], "--n"), ("benchmarks.far_speed", [], "--near"), ("benchmarks.paper", [], "--reps"),
    ("benchmarks.paper", [], "--tables"), ("benchmarks.milp_speed", [], "--seeds"),
    ("benchmarks.mig_pyomo", [], "--n"), ("benchmarks.hetero", [], "--n"), ("benchmarks.orlib", [], "--generate"),
    ("benchmarks.pairing", [], "--W"), ("benchmarks.realtime", [], "--reps"), ("benchmarks.case", [], "--seeds"),
    ("benchmarks.robustness", [], "--draws"), ("instances.mig", ["generate", "--out", "x.json"], "--n"),
    ("instances.mig_execution", ["s.json", "--simulate"], "--seed"),
]
REAL_OPTIONS = [
    ("benchmarks.compare", [], "--time-limit"), ("benchmarks.paper", [], "--p-sup"),
    ("benchmarks.hetero", [], "--rdd"), ("benchmarks.orlib", [], "--ils-time"),
    ("benchmarks.pairing", [], "--p-total"), ("benchmarks.realtime", [], "--utils"),
    ("benchmarks.case", [], "--time-limit"), ("benchmarks.milp_speed", [], "--time-limit"),
]


@pytest.mark.parametrize("command, before, option", INTEGER_OPTIONS)
def test_lax_integers_are_refused(command, before, option):
    comma_list = (command, option) == ("benchmarks.hetero", "--n")  # "8, 10, 12": spaces around items are fine
    for text in LAX_INTEGERS:
        if comma_list and text.strip() != text:
            continue
        rc, _, err = run(command, before + [f"{option}={text}"])
        assert_one_error(command, rc, err, option)


@pytest.mark.parametrize("command, before, option", REAL_OPTIONS)
def test_lax_reals_are_refused(command, before, option):
    for text in LAX_REALS:
        rc, _, err = run(command, before + [f"{option}={text}"])
        assert_one_error(command, rc, err, option)


def test_milp_speed_row_sizes_are_strict():
    for text in ("cpsat0:1_0", "cpsat0:١٢", "cpsat0:", "cpsat0", "nope:3", "cpsat0:0"):
        rc, _, err = run("benchmarks.milp_speed", ["--rows", text])
        assert_one_error("benchmarks.milp_speed", rc, err, "row")


# ---------------------------------------------------------------------------
# an unreachable Dask scheduler

@pytest.mark.parametrize("name", WITH_EXECUTOR)
def test_unreachable_scheduler_is_one_line_before_any_work(name):
    extra = ["--ties"] if name == "far_speed" else []
    rc, out, err = run(f"benchmarks.{name}", extra + ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"])
    assert_one_error(f"benchmarks.{name}", rc, err, "cannot reach the dask scheduler at tcp://127.0.0.1:1")
    assert out == ""


@pytest.mark.parametrize("command, argv", [
    ("benchmarks.far_speed", ["--ties", "--n", "3", "--reps", "1", "--quiet"]),
    ("benchmarks.orlib", ["--instances", "1", "--methods", "fifo", "--no-exact", "--quiet"]),
    ("benchmarks.hetero", ["--n", "2", "--seeds", "1", "--time-limit", "1", "--quiet"]),
    ("benchmarks.robustness", ["--gpus", "A30", "--n", "2", "--instances", "1", "--draws", "1", "--quiet"]),
])
def test_executor_failing_mid_run_is_one_line(command, argv, monkeypatch):
    """The scheduler went away after the start: far_speed --ties and orlib once printed a traceback, hetero exit 1."""
    from benchmarks import executor

    def lost(self, fn, tasks, **kwargs):
        raise executor.ExecutorError("cannot reach the dask scheduler at tcp://gone:8786: lost")

    monkeypatch.setattr(executor.Executor, "map", lost)
    rc, _, err = run(command, argv)
    assert_one_error(command, rc, err, "cannot reach the dask scheduler")


@contextlib.contextmanager
def not_a_scheduler(banner: bytes):
    """A TCP server on a free local port that accepts connections and sends ``banner`` (maybe nothing), then
    never answers: what a web server (Dask's dashboard port) or an SSH server is to a Dask client."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    conns = []

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = srv.accept()
                conns.append(conn)
                conn.sendall(banner)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        srv.close()
        for conn in conns:
            conn.close()


@pytest.mark.parametrize("name", ["far_speed", "orlib", "hetero"])
def test_a_server_that_is_not_a_scheduler_is_one_line(name):
    """An SSH banner once made Dask read a frame length of exabytes (MemoryError) and a silent server made it
    wait forever, its timeout notwithstanding: both are one error line, before any work."""
    extra = ["--ties"] if name == "far_speed" else []
    with not_a_scheduler(b"SSH-2.0-OpenSSH_9.6\r\n") as address:
        proc = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", *extra, "--executor", "dask",
                               "--scheduler", address], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert_one_error(f"benchmarks.{name}", proc.returncode, proc.stderr,
                     f"cannot reach the dask scheduler at {address}: the server there answered, but not as a Dask")
    assert proc.stdout == ""


def test_a_silent_server_is_given_up():
    from benchmarks import executor

    with not_a_scheduler(b"") as address:
        assert "no Dask handshake within 1 s" in executor._no_handshake(address, seconds=1)
        # the same limit where the sweep connects, if the scheduler went silent after the check
        old = executor.CONNECT_SECONDS
        executor.CONNECT_SECONDS = 1
        try:
            with pytest.raises(executor.ExecutorError, match=f"cannot reach the dask scheduler at {address}: no "
                                                              "Dask handshake within 1 s"):
                executor.Executor("dask", scheduler=address).map(abs, [1, -2])
        finally:
            executor.CONNECT_SECONDS = old


# ---------------------------------------------------------------------------
# real processes, where a traceback would show

@pytest.mark.parametrize("argv", [
    ["benchmarks.compare", "--n", "1000000000000"],
    ["benchmarks.far_speed", "--ties", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"],
    ["benchmarks.orlib", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"],
    ["instances.mig", "generate", "--n", "1_000", "--out", "x.json"],
    ["heuristics.far", "tasks.json", "--gpu"],
    ["benchmarks.common"],
    ["benchmarks.executor"],
])
def test_in_a_real_process(argv):
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert_one_error(argv[0], proc.returncode, proc.stderr)
    assert proc.stdout == ""


# ---------------------------------------------------------------------------
# help texts

@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_gives_every_default_as_typed(command):
    for argv in ([[sub, "--help"] for sub in ("generate", "check", "plot")] if command == "instances.mig"
                 else [["--help"]]):
        rc, out, _ = run(command, argv)
        assert rc == 0
        for block in re.split(r"\n(?=  -)", out.split("options:", 1)[1]):
            block = " ".join(block.split())
            if block.startswith("--"):
                assert "default" in block, (command, block)
        text = " ".join(out.split())
        for found in re.findall(r"\(default: ([^)]*)\)", text):
            assert not re.search(r"[\[\]]|'[^']*'|\w\(\w+=", found), (command, found)  # no list or dataclass repr
        if command.startswith("benchmarks."):
            assert re.search(r"default run takes [^.]+ on a 2-core machine", text), command


def test_paper_interval_needs_asking_for():
    """--tables 4 --opt-reps 0 once started 18 CP-SAT solves because --far-opt-reps defaulted to 1."""
    from benchmarks import paper

    a = paper._parser().parse_args(["--tables", "4", "--opt-reps", "0"])
    assert a.far_opt_reps == 0
    rc, out, _ = run("benchmarks.paper", ["--tables", "4", "--reps", "1", "--opt-reps", "0", "--quiet"])
    assert rc == 0 and "FAR / OPT" not in out and "against the exact optimum" not in out


def test_paper_methods_with_commas_in_their_names():
    rc, out, err = run("benchmarks.paper", ["--tables", "5", "--reps", "1", "--methods", "FAR,FixPart(1,...,1)",
                                            "--quiet"])
    assert rc == 0, err
    head = next(line for line in out.splitlines() if line.startswith("| Task configuration"))
    assert [c.strip() for c in head.strip("|").split("|")] == ["Task configuration", "FixPart(1,...,1)",
                                                                 "MISO-opt, per-slice repartitioning"]
    rc, _, err = run("benchmarks.paper", ["--methods", "FixPart(1,...,2)"])
    assert_one_error("benchmarks.paper", rc, err, "'FixPart(1,...,2)'")


def test_paper_setting_changes_the_figures_not_only_the_caption():
    base = ["--tables", "7", "--reps", "1", "--quiet", "--markdown"]
    figures = [[line for line in run("benchmarks.paper", base + extra)[1].splitlines() if line.startswith("| ")]
               for extra in ([], ["--setting", "release=end"])]
    assert figures[0][0] == figures[1][0] and figures[0][1:] != figures[1][1:]  # same header, other figures


def test_milp_speed_header_names_the_solvers_it_ran():
    rc, out, err = run("benchmarks.milp_speed", ["--rows", "highs0:2", "--seeds", "1", "--time-limit", "20",
                                                 "--workers", "1", "--quiet"])
    assert rc == 0, err
    assert "1 HiGHS thread" in out and "CP-SAT" not in out.splitlines()[0]


def test_orlib_layout_error_names_the_options(tmp_path):
    path = tmp_path / "seven.txt"
    path.write_text("1 2 3 4 5 6 7\n")
    rc, _, err = run("benchmarks.orlib", ["--file", str(path), "--no-exact"])
    assert_one_error("benchmarks.orlib", rc, err, "--file-jobs")
    assert "n=" not in err and "count=" not in err


def test_far_exit_1_only_when_the_checker_rejects_its_schedule(tmp_path, monkeypatch):
    from heuristics import far_cli
    from instances import mig

    problem = tmp_path / "p.json"
    mig.save(mig.generate(4, "A30", seed=1), problem)
    assert run("heuristics.far", [str(problem)])[0] == 0
    monkeypatch.setattr(far_cli.mig_check, "check", lambda p, s: ["rule 4: a deliberate violation"])
    rc, _, err = run("heuristics.far", [str(problem)])
    assert rc == 1 and err.splitlines() == [
        "python -m heuristics.far: error: internal error, the checker rejects FAR's schedule: rule 4: a deliberate "
        "violation"]


# ---------------------------------------------------------------------------
# the number types, as properties

BOUNDS = st.tuples(st.integers(-10**6, 10**6), st.integers(0, 10**12)).map(lambda t: (t[0], t[0] + t[1]))


@given(BOUNDS, st.text(max_size=30))
def test_integer_accepts_exactly_plain_decimal_integers_in_range(bounds, text):
    lo, hi = bounds
    parse = console.integer(lo, hi)
    plain = re.fullmatch(r"[+-]?[0-9]+", text) is not None
    try:
        value = parse(text)
    except argparse.ArgumentTypeError as exc:
        assert "\n" not in str(exc) and not (plain and lo <= int(text) <= hi)
    else:
        assert plain and value == int(text) and lo <= value <= hi


@given(BOUNDS, st.integers(-10**13, 10**13))
def test_integer_reads_every_integer_it_prints(bounds, value):
    lo, hi = bounds
    try:
        assert console.integer(lo, hi)(str(value)) == value and lo <= value <= hi
    except argparse.ArgumentTypeError:
        assert not lo <= value <= hi


@given(st.floats(-1e6, 1e6), st.floats(0, 1e12), st.booleans(), st.text(max_size=30))
def test_number_accepts_only_finite_plain_numbers_in_range(lo, span, above, text):
    hi = lo + span
    try:
        value = console.number(lo, hi, above=above)(text)
    except argparse.ArgumentTypeError as exc:
        assert "\n" not in str(exc)
    else:
        assert text.isascii() and "_" not in text and math.isfinite(value)
        assert (lo < value if above else lo <= value) and value <= hi


@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(0, 1e300))
def test_number_reads_every_float_it_prints(value, span):
    lo, hi = value - span, value + span
    if not math.isfinite(hi - lo):
        return
    assert console.number(lo, hi)(repr(value)) == value


@given(st.lists(st.sampled_from(["FAR", "FixPart(1,...,1)", "MISO-opt", "FixPart(7)", "A, B"]), min_size=1))
def test_names_with_commas_survive_a_comma_list(names):
    parenthesised = [n for n in names if "(" in n or "," not in n]
    assert console.split_names(",".join(parenthesised)) == parenthesised
