"""benchmarks/records.py and the executor's sweep rules: records that read back equal, keys that are
stable across processes, refusals in one line, a lock, failed tasks recorded and run again."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import compare, records
from benchmarks.command import take_failures
from benchmarks.executor import Executor, Failed, WorkerDied, succeeded
from benchmarks.records import Records, RecordsError

ARGS = {"n": 5, "instances": 6, "methods": ["FAR"]}

# results as the benchmarks' tasks return them: nested dicts, lists and tuples, tuple keys, inf and nan
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                      | st.dictionaries(st.text(max_size=8) | st.tuples(st.integers(), st.text(max_size=3)),
                                        inner, max_size=3), max_leaves=12)


def _same(a, b) -> bool:
    """Equal, of the same types all the way down, nan equal to nan."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(values)
def test_a_recorded_result_reads_back_equal_with_its_types(value):
    line = json.dumps(records.encode(value))  # what the file holds
    assert _same(records.decode(json.loads(line)), value)


def test_a_dict_that_looks_like_a_tag_reads_back_as_itself():
    for value in ({"__tuple__": [1, 2]}, {"__items__": []}, {"__float__": "inf"}):
        assert _same(records.decode(json.loads(json.dumps(records.encode(value)))), value)


def test_values_a_task_must_not_return_are_refused():
    with pytest.raises(TypeError, match="cannot record a value of type object"):
        records.encode({"x": object()})


def test_task_keys_are_the_same_in_another_process():
    # the key of compare's task, computed here and in a fresh interpreter (another hash seed)
    import functools

    cfg = compare.Config(n=5, instances=6, methods=("FAR",), time_limit=2.5)
    here = [records.task_key(functools.partial(compare.run_instance, cfg), i) for i in range(3)]
    code = ("import functools; from benchmarks import compare, records; "
            "cfg = compare.Config(n=5, instances=6, methods=('FAR',), time_limit=2.5); "
            "print([records.task_key(functools.partial(compare.run_instance, cfg), i) for i in range(3)])")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "123"}).stdout
    assert there.strip() == repr(here)
    assert len(set(here)) == 3
    other = compare.Config(n=5, instances=6, methods=("FAR",), time_limit=3.0)
    assert records.task_key(functools.partial(compare.run_instance, other), 0) != here[0]


def test_records_resume_and_a_failed_task_runs_again(tmp_path):
    calls = []
    flaky = [True]

    def task(x):
        calls.append(x)
        if x == 2 and flaky[0]:
            raise ValueError("flaky")
        return {"x": x, "pair": (x, x / 3)}

    take_failures()
    rec = Records.open(tmp_path, "demo", ARGS)
    first = Executor(keep_going=True, records=rec).map(task, range(4), label=lambda x: f"x={x}")
    assert succeeded(first) == [{"x": x, "pair": (x, x / 3)} for x in (0, 1, 3)]
    assert first[2] == Failed("x=2", "ValueError: flaky")
    assert take_failures() == [first[2]]
    rec.close()

    calls.clear()
    flaky[0] = False
    rec = Records.open(tmp_path, "demo", ARGS)
    again = Executor(keep_going=True, records=rec).map(task, range(4))
    rec.close()
    assert calls == [2]  # the finished tasks were read, the failed one ran again
    assert again == [{"x": x, "pair": (x, x / 3)} for x in range(4)]
    lines = [json.loads(x) for x in (tmp_path / records.RECORDS).read_text().splitlines()]
    assert lines[0]["arguments"] == ARGS and lines[0]["command"] == "demo"
    assert [x["status"] for x in lines[1:]] == ["ok", "ok", "failed", "ok", "ok"]
    assert lines[3]["task"] == "x=2" and lines[3]["error"] == "ValueError: flaky"


def test_other_arguments_are_refused_unless_fresh(tmp_path):
    rec = Records.open(tmp_path, "demo", ARGS)
    Executor(records=rec).map(abs, [-1, -2])
    rec.close()
    with pytest.raises(RecordsError) as exc:
        Records.open(tmp_path, "demo", {**ARGS, "n": 6})
    assert "other arguments (--n 5 there, 6 now)" in str(exc.value) and "--fresh" in str(exc.value)
    assert "\n" not in str(exc.value)
    with pytest.raises(RecordsError, match="records of 'demo', not of 'other'"):
        Records.open(tmp_path, "other", ARGS)
    rec = Records.open(tmp_path, "demo", {**ARGS, "n": 6}, fresh=True)
    assert rec.done == {}
    Executor(records=rec).map(abs, [-3])
    rec.close()
    assert json.loads((tmp_path / records.RECORDS).read_text().splitlines()[0])["arguments"]["n"] == 6


def test_a_run_that_recorded_nothing_does_not_bind_the_folder(tmp_path):
    rec = Records.open(tmp_path, "demo", ARGS)  # e.g. an argument error after the folder was opened
    rec.close()
    rec = Records.open(tmp_path, "demo", {**ARGS, "n": 7})
    Executor(records=rec).map(abs, [-1])
    rec.close()
    assert json.loads((tmp_path / records.RECORDS).read_text().splitlines()[0])["arguments"]["n"] == 7


def test_a_line_cut_short_by_a_kill_is_dropped_and_the_next_record_starts_a_line(tmp_path):
    rec = Records.open(tmp_path, "demo", ARGS)
    Executor(records=rec).map(abs, [-1, -2])
    rec.close()
    path = tmp_path / records.RECORDS
    with open(path, "a") as fh:
        fh.write('{"key":"abc","task":"task -3","status":"ok","res')  # the write a SIGKILL interrupted
    rec = Records.open(tmp_path, "demo", ARGS)
    assert len(rec.done) == 2
    assert Executor(records=rec).map(abs, [-1, -2, -3]) == [1, 2, 3]
    rec.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(x) for x in lines)


def test_a_damaged_record_in_the_middle_is_refused(tmp_path):
    rec = Records.open(tmp_path, "demo", ARGS)
    Executor(records=rec).map(abs, [-1, -2])
    rec.close()
    path = tmp_path / records.RECORDS
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "garbage", lines[2]]) + "\n")
    with pytest.raises(RecordsError, match="line 2: not a record"):
        Records.open(tmp_path, "demo", ARGS)


def test_a_second_process_on_the_same_folder_is_refused(tmp_path):
    rec = Records.open(tmp_path, "demo", ARGS)
    code = ("import sys; from benchmarks.records import Records, RecordsError\n"
            "try:\n    Records.open(sys.argv[1], 'demo', {})\n"
            "except RecordsError as exc:\n    print(exc); sys.exit(3)\n")
    other = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert other.returncode == 3
    assert other.stdout.strip() == f"another run (pid {os.getpid()}) is using {tmp_path}; wait for it to end " \
                                   "or choose another --out"
    rec.close()
    again = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert again.returncode == 0  # the lock goes with the run that held it


def test_a_worker_that_outlives_a_killed_run_does_not_hold_its_lock(tmp_path):
    # a forked worker shares its parent's open files; with them the flock would outlive the run
    code = ("import os, signal, sys, time\n"
            "from benchmarks.records import Records\n"
            "rec = Records.open(sys.argv[1], 'demo', {})\n"
            "child = os.fork()\n"
            "if child == 0:\n"
            "    null = os.open(os.devnull, os.O_WRONLY)\n"
            "    os.dup2(null, 1)\n    os.dup2(null, 2)\n    time.sleep(30)\n    os._exit(0)\n"
            "print(child, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         start_new_session=True)
    assert run.returncode == -signal.SIGKILL
    child = int(run.stdout.split()[0])
    try:
        os.kill(child, 0)  # the worker still runs
        Records.open(tmp_path, "demo", {}).close()  # and the lock is free
    finally:
        os.kill(child, signal.SIGKILL)


def _die_on_two(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return x * 10


def test_a_local_worker_that_dies_fails_its_own_task_only():
    take_failures()
    out = Executor("local", jobs=2, keep_going=True).map(_die_on_two, range(6))
    assert out[:2] + out[3:] == [0, 10, 30, 40, 50]
    assert isinstance(out[2], Failed) and out[2].error.startswith("WorkerDied: ")
    assert take_failures() == [out[2]]
    with pytest.raises(WorkerDied):  # the API's executor raises it
        Executor("local", jobs=2).map(_die_on_two, range(4))


def _command_modules() -> dict[str, str]:
    """Every benchmark command (``benchmarks.common.command_names``: found, not listed) and its ``--help``."""
    import contextlib
    import importlib
    import io

    from benchmarks.common import command_names

    found = {}
    for name in command_names():
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
            importlib.import_module(f"benchmarks.{name}").main(["--help"])
        found[name] = text.getvalue()
    return found


COMMANDS = _command_modules()
#: The smallest sweep of every command that records its tasks (a few seconds each).
SWEEP_ARGS = {
    "compare": ["--n", "4", "--instances", "2", "--methods", "FAR", "--no-exact"],
    "far_speed": ["--ties", "--n", "10", "--reps", "3"],
    "mig_pyomo": ["--n", "3", "--seeds", "2", "--time-limit", "20"],
    "hetero": ["--n", "5", "--seeds", "2", "--time-limit", "5", "--ils-time", "0.05"],
    "milp_speed": ["--rows", "cpsat0:4", "--seeds", "2", "--time-limit", "10", "--workers", "1"],
    "realtime": ["--n", "12", "--utils", "4", "--reps", "2", "--gap-n", "4", "--gap-utils", "3", "--gap-reps", "1",
                 "--no-plots"],
    "orlib": ["--instances", "1-2", "--methods", "greedy,ils", "--ils-time", "0.05", "--no-exact"],
    "paper": ["--tables", "4", "5", "--reps", "1", "--opt-reps", "1", "--opt-n", "4", "--far-opt-reps", "0",
              "--markdown"],
    "case": ["--figures", "3", "--seeds", "1", "--no-plot", "--bound-n", "4", "--bound-seeds", "1",
             "--time-limit", "5"],
    "pairing": ["--p-total", "400", "--W", "6", "--seeds", "1", "--triple-W", "6", "--timing-W", "20",
                "--timing-runs", "1"],
    "robustness": ["--gpus", "A30", "--n", "4", "--instances", "2", "--draws", "1", "--noise", "0.1"],
}


def _with_out() -> list[str]:
    return [name for name, text in sorted(COMMANDS.items()) if "--out" in text]


def test_the_walk_finds_the_commands():
    assert {"compare", "paper", "case", "pairing", "realtime"} <= set(COMMANDS)
    assert not set(SWEEP_ARGS) - set(COMMANDS), "a sweep kept here for a command that is gone"


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_every_command_that_runs_tasks_through_the_executor_can_record_them(module):
    text = COMMANDS[module]
    if "--executor" in text:
        assert "--out" in text and "--fresh" in text, f"{module} runs a sweep but cannot record it"


@pytest.mark.parametrize("module", _with_out())
def test_every_command_with_out_reruns_from_its_records(module, tmp_path, capsys):
    import importlib

    assert "--fresh" in COMMANDS[module], f"{module} has --out but keeps no records"
    assert module in SWEEP_ARGS, f"{module} records its tasks: add its smallest sweep to SWEEP_ARGS"
    main = importlib.import_module(f"benchmarks.{module}").main
    args = SWEEP_ARGS[module] + ["--quiet", "--out", str(tmp_path)]
    assert main(args) == 0
    first = capsys.readouterr().out
    recorded = (tmp_path / records.RECORDS).read_text()
    assert len(recorded.splitlines()) > 1
    assert main(args) == 0  # every task read from the records: the same output, timings included
    assert capsys.readouterr().out == first
    assert (tmp_path / records.RECORDS).read_text() == recorded


def test_fresh_without_out_is_an_argument_error(capsys):
    from benchmarks import far_speed

    with pytest.raises(SystemExit) as exc:
        far_speed.main(["--ties", "--n", "10", "--reps", "1", "--fresh"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "python -m benchmarks.far_speed: error: --fresh needs --out DIR, the folder whose records to drop"]
