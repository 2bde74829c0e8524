"""A sweep in real processes: killed and resumed, interrupted with Ctrl-C, with a failing instance, a
worker that dies, two runs on one folder, a Dask worker lost mid-task.

``python -m benchmarks.compare`` runs as a subprocess. The faults are planted by a ``sitecustomize``
module written into a temporary folder on ``PYTHONPATH`` (so that worker processes, Dask's spawned
ones included, load it too): it wraps ``instances.mig.generate`` to sleep, raise, or kill its own
process for one instance seed, as the environment variables ``SWEEP_TEST_*`` ask.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.compare import instance_seed

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--n", "5", "--instances", "6", "--methods", "FAR,MISO-opt", "--time-limit", "20", "--workers", "1",
        "--quiet"]
FAULTY = instance_seed(0, 3)  # the generator seed of instance 3

HOOK = '''
import os
if os.environ.get("SWEEP_TEST_HOOK"):
    import signal, time
    from instances import mig
    _generate = mig.generate

    def generate(n, *args, **kwargs):
        seed = args[3] if len(args) > 3 else kwargs.get("seed")
        time.sleep(float(os.environ.get("SWEEP_TEST_SLOW", "0")))
        if str(seed) == os.environ.get("SWEEP_TEST_FAIL"):
            raise RuntimeError("planted failure")
        if str(seed) == os.environ.get("SWEEP_TEST_DIE"):
            once = os.environ.get("SWEEP_TEST_DIE_ONCE")
            if not once or not os.path.exists(once):
                if once:
                    open(once, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
        return _generate(n, *args, **kwargs)

    mig.generate = generate
'''


@pytest.fixture(scope="module")
def hook_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hook")
    (folder / "sitecustomize.py").write_text(HOOK)
    return folder


def _env(hook_dir: Path, **faults: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWEEP_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(hook_dir), str(ROOT)])
    env["SWEEP_TEST_HOOK"] = "1"
    env.update({f"SWEEP_TEST_{k.upper()}": str(v) for k, v in faults.items()})
    return env


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    # its own session: a kill reaches its worker processes too, as a crash or a closed terminal would
    return subprocess.Popen([sys.executable, "-m", "benchmarks.compare", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _run(args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.compare", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _records(out: Path) -> list[dict]:
    path = out / "records.jsonl"
    if not path.exists():
        return []
    lines = path.read_text().split("\n")[1:-1]  # the header; a line cut short by a kill
    return [json.loads(x) for x in lines if x.strip()]


def _ok(out: Path) -> int:
    return sum(r["status"] == "ok" for r in _records(out))


def _wait(pred, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not pred():
        assert proc.poll() is None, f"the sweep ended before {what}: {proc.communicate()}"
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def _kill(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> tuple[str, str]:
    os.killpg(proc.pid, sig)
    return proc.communicate(timeout=60)


def _table(stdout: str) -> list[str]:
    """The report without its timing columns and the 'wrote' lines (timings differ from run to run)."""
    lines, drop = [], []
    for line in stdout.splitlines():
        if line.startswith("wrote "):
            continue
        if line.startswith("|"):
            cells = line.strip("|").split("|")
            if "method" in cells[0]:
                drop = [i for i, c in enumerate(cells) if "time" in c]
            line = "|".join(c for i, c in enumerate(cells) if i not in drop)
        lines.append(line)
    return lines


def _rows(out: Path) -> dict[tuple[int, str], dict]:
    """``results.json``'s rows by (instance, row name), without the times."""
    rows = json.loads((out / "results.json").read_text())["rows"]
    return {(r["instance"], r["method"]): {k: v for k, v in r.items() if k != "time_s"} for r in rows}


def _cell(table: list[str], row: str, column: str) -> str:
    head = next(line for line in table if line.startswith(" method "))
    cells = next(line for line in table if line.startswith(f" {row} ")).split("|")
    return cells[[c.strip() for c in head.split("|")].index(column)].strip()


@pytest.fixture(scope="module")
def reference(hook_dir, tmp_path_factory):
    """The table of the uninterrupted run (timings aside); its rows are in ``reference.rows``."""
    out = tmp_path_factory.mktemp("reference")
    done = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert done.returncode == 0, done.stderr
    assert "proven on 6/6" in done.stdout
    table = _Table(_table(done.stdout))
    table.rows = _rows(out)
    return table


class _Table(list):
    rows: dict


def test_killed_at_several_points_then_resumed_prints_the_uninterrupted_table(hook_dir, reference, tmp_path):
    out = tmp_path / "out"
    slow = _env(hook_dir, slow=0.3)
    seen = []
    for jobs, after in (("1", 1), ("2", 3), ("1", 5)):  # SIGKILL once k instances are on disk
        proc = _start(ARGS + ["--out", str(out), "--jobs", jobs], slow)
        _wait(lambda: _ok(out) >= after, proc, f"{after} records")
        _kill(proc)
        seen.append(_ok(out))
    assert seen[0] < seen[1] < seen[2] < 6, seen
    done = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert done.returncode == 0, done.stderr
    assert _table(done.stdout) == reference
    oks = [r["key"] for r in _records(out) if r["status"] == "ok"]
    assert len(oks) == len(set(oks)) == 6  # a recorded instance never ran again
    # once complete, the same command only reads: the same table, nothing appended
    again = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert again.returncode == 0 and _table(again.stdout) == reference
    assert len(_records(out)) == 6


def test_workers_end_when_their_command_is_killed(hook_dir, tmp_path):
    out = tmp_path / "out"
    proc = _start(ARGS + ["--out", str(out), "--jobs", "2"], _env(hook_dir, slow=0.5))
    _wait(lambda: _ok(out) >= 1, proc, "a record")
    proc.kill()  # the command alone, not its workers
    proc.wait(timeout=60)
    end = time.monotonic() + 10
    try:
        while True:  # its session holds no process once the workers have noticed
            os.killpg(proc.pid, 0)
            assert time.monotonic() < end, "a worker outlived its command"
            time.sleep(0.1)
    except ProcessLookupError:
        pass
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def test_other_arguments_on_the_folder_are_refused_in_one_line(hook_dir, tmp_path):
    out = tmp_path / "out"
    quick = ["--n", "5", "--methods", "FAR", "--no-exact", "--quiet", "--out", str(out)]
    assert _run(quick + ["--instances", "6"], _env(hook_dir)).returncode == 0
    other = _run(quick + ["--instances", "3"], _env(hook_dir))
    assert other.returncode == 2 and other.stdout == ""
    assert other.stderr.splitlines() == [
        f"python -m benchmarks.compare: error: {out}/records.jsonl holds the records of other arguments (--instances "
        "6 there, 3 now); rerun with those arguments, choose another --out, or add --fresh to start over"]
    fresh = _run(quick + ["--instances", "3", "--fresh"], _env(hook_dir))
    assert fresh.returncode == 0 and len(_records(out)) == 3


# worker processes are the harder case (the interrupt reaches them too); one process and the dask cluster,
# whose start is slow, run with --run-slow
@pytest.mark.parametrize("executor", [pytest.param(["--jobs", "1"], marks=pytest.mark.slow), ["--jobs", "2"],
                                      pytest.param(["--executor", "dask", "--jobs", "2"], marks=pytest.mark.slow)])
def test_ctrl_c_stops_the_sweep_records_nothing_half_done_and_exits_130(hook_dir, reference, tmp_path, executor):
    out = tmp_path / "out"
    proc = _start(ARGS + ["--out", str(out)] + executor, _env(hook_dir, slow=0.5))
    _wait(lambda: _ok(out) >= 2, proc, "2 records")
    t0 = time.monotonic()
    _, err = _kill(proc, signal.SIGINT)  # to the process group, as a terminal sends it
    assert proc.returncode == 130
    assert time.monotonic() - t0 < 10
    assert err.splitlines() == ["interrupted; rerun the same command to resume"]  # workers print nothing
    assert 2 <= _ok(out) < 6 and all(r["status"] == "ok" for r in _records(out))
    done = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert done.returncode == 0 and _table(done.stdout) == reference


def test_ctrl_c_during_a_cp_sat_search_is_not_recorded_as_an_unproven_instance(hook_dir, tmp_path):
    # n = 16 with a 60 s limit: the search is still running when SIGINT comes; CP-SAT left to itself
    # would stop it, return FEASIBLE and the sweep would record an unproven instance and go on
    out = tmp_path / "out"
    proc = _start(["--n", "16", "--instances", "2", "--methods", "FAR", "--time-limit", "60", "--workers", "1",
                   "--quiet", "--out", str(out)], _env(hook_dir))
    _wait(lambda: (out / "records.lock").exists(), proc, "the run to start")
    time.sleep(4)
    t0 = time.monotonic()
    _, err = _kill(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 10
    assert err.splitlines()[-1] == "interrupted; rerun the same command to resume"
    assert _records(out) == []


def test_a_failing_instance_is_shown_failed_the_rest_finish_and_the_exit_status_is_1(hook_dir, reference,
                                                                                     tmp_path):
    out = tmp_path / "out"
    done = _run(ARGS + ["--out", str(out)], _env(hook_dir, fail=FAULTY))
    assert done.returncode == 1
    assert "proven on 5/6" in done.stdout
    table = _table(done.stdout)
    assert [_cell(table, "FAR", c) for c in ("OPT proven", "failed")] == ["5/6", "1/6"]
    assert "- FAR: 1/6, first: instance 3: ERROR: RuntimeError: planted failure" in table
    rows = _rows(out)
    assert {k: v for k, v in rows.items() if k[0] != 3} == {k: v for k, v in reference.rows.items() if k[0] != 3}
    assert all(v["status"] == "ERROR: RuntimeError: planted failure" for k, v in rows.items() if k[0] == 3)
    assert done.stderr.splitlines()[-1] == "- instance 3: RuntimeError: planted failure"
    assert [r["status"] for r in _records(out)].count("failed") == 1
    # the rerun retries the failed instance only; without the fault it completes the uninterrupted table
    again = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert again.returncode == 0 and _table(again.stdout) == reference
    assert [(r["task"], r["status"]) for r in _records(out)][3:] == [
        ("instance 3", "failed"), ("instance 4", "ok"), ("instance 5", "ok"), ("instance 3", "ok")]


def test_a_worker_process_that_dies_fails_its_instance_only(hook_dir, reference, tmp_path):
    out = tmp_path / "out"
    done = _run(ARGS + ["--jobs", "2", "--out", str(out)], _env(hook_dir, die=FAULTY))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "- instance 3: WorkerDied: the worker process running it died"
    assert [_cell(_table(done.stdout), "FAR", c) for c in ("OPT proven", "failed")] == ["5/6", "1/6"]
    rows = _rows(out)
    assert {k: v for k, v in rows.items() if k[0] != 3} == {k: v for k, v in reference.rows.items() if k[0] != 3}


def test_a_second_run_on_the_same_folder_refuses_while_the_first_runs(hook_dir, reference, tmp_path):
    out = tmp_path / "out"
    first = _start(ARGS + ["--out", str(out)], _env(hook_dir, slow=0.5))
    _wait(lambda: _ok(out) >= 1, first, "a record")
    second = _run(ARGS + ["--out", str(out)], _env(hook_dir))
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr.splitlines() == [f"python -m benchmarks.compare: error: another run (pid {first.pid}) is "
                                          f"using {out}; wait for it to end or choose another --out"]
    out_first, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and _table(out_first) == reference


@pytest.mark.slow  # a dask cluster's start in a fresh process: seconds, like the other dask variants above
def test_a_lost_dask_worker_is_retried_with_identical_results(hook_dir, reference, tmp_path):
    once = tmp_path / "killed-once"
    done = _run(ARGS + ["--executor", "dask", "--jobs", "2"], _env(hook_dir, die=FAULTY, die_once=once))
    assert once.exists()  # the worker running instance 3 was killed
    assert done.returncode == 0, done.stderr
    assert _table(done.stdout) == reference


# ---------------------------------------------------------------------------
# benchmarks.case and benchmarks.pairing: the same rules through the same executor. Their faults are
# planted in instances.case.generate and instances.pairing.generate, matched on the call
# ("<positional arguments> seed=<seed>").

GENERATOR_HOOK = '''
import os
if os.environ.get("SWEEP_TEST_HOOK"):
    import time
    from instances import case, pairing

    def _planted(module):
        real = module.generate

        def generate(*args, **kwargs):
            time.sleep(float(os.environ.get("SWEEP_TEST_SLOW", "0")))
            if " ".join(map(str, args)) + f" seed={kwargs.get('seed')}" == os.environ.get("SWEEP_TEST_FAIL"):
                raise RuntimeError("planted failure")
            return real(*args, **kwargs)

        module.generate = generate

    _planted(case)
    _planted(pairing)
'''

#: A few seconds each: 14 simulated batches and 6 exact solves; 3 job mixes, 2 queues, 2 C = 3 queues, a timing.
SWEEPS = {
    "case": ["--figures", "3", "--seeds", "2", "--no-plot", "--bound-n", "4", "--bound-seeds", "1",
             "--time-limit", "5", "--quiet"],
    "pairing": ["--p-total", "400", "--W", "6", "--seeds", "2", "--triple-W", "6", "--timing-W", "20",
                "--timing-runs", "1", "--quiet"],
}
#: A task of each sweep that the planted fault fails, and its label in the list of failures.
FAULTS = {"case": ("D 1:1 seed=1", "figure 3 config D ratio 1:1 seed 1"),
          "pairing": ("6 seed=1", "queue W=6 P_total 400 seed 1")}
#: Columns that time something (they differ from run to run; the rest of a table must not).
TIMINGS = {"planning [ms]", "exact C=3 solve [s]", "search [s]", "matching + split [s]", "total median [s]",
           "total max [s]"}


@pytest.fixture(scope="module")
def generator_hook_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generator-hook")
    (folder / "sitecustomize.py").write_text(GENERATOR_HOOK)
    return folder


def _command(module: str, args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _start_command(module: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", f"benchmarks.{module}", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _without_timings(stdout: str) -> list[str]:
    """The report less the columns of :data:`TIMINGS`."""
    lines, drop, in_table = [], [], False
    for line in stdout.splitlines():
        row = line.startswith("|")
        if row:
            cells = line.strip("|").split("|")
            if not in_table:  # a table's header row
                drop = [i for i, c in enumerate(cells) if c.strip() in TIMINGS]
            line = "|".join(c for i, c in enumerate(cells) if i not in drop)
        lines.append(line)
        in_table = row
    return lines


def _uninterrupted(module: str) -> list[str]:
    """The table of a run without records, in this process (a process start less for the default suite)."""
    import importlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert importlib.import_module(f"benchmarks.{module}").main(SWEEPS[module]) == 0
    return _without_timings(out.getvalue())


@pytest.mark.parametrize("module", sorted(SWEEPS))
def test_case_and_pairing_a_failing_task_is_listed_and_the_rerun_completes_the_table(module, generator_hook_dir,
                                                                                      tmp_path):
    out = tmp_path / "out"
    args = SWEEPS[module] + ["--out", str(out)]
    fault, label = FAULTS[module]
    done = _command(module, args, _env(generator_hook_dir, fail=fault))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == f"- {label}: RuntimeError: planted failure"
    statuses = [(r["task"], r["status"]) for r in _records(out)]
    assert statuses.count((label, "failed")) == 1 and sum(s == "failed" for _, s in statuses) == 1
    # the rerun runs the failed task only; without the fault it prints the uninterrupted table
    again = _command(module, args, _env(generator_hook_dir))
    assert again.returncode == 0, again.stderr
    assert _without_timings(again.stdout) == _uninterrupted(module)
    assert [(r["task"], r["status"]) for r in _records(out)][len(statuses):] == [(label, "ok")]


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(SWEEPS))
def test_case_and_pairing_killed_then_resumed_print_the_uninterrupted_table(module, generator_hook_dir, tmp_path):
    out = tmp_path / "out"
    args = SWEEPS[module] + ["--out", str(out)]
    seen = []
    for jobs, after in (("1", 2), ("2", 4)):  # SIGKILL once k tasks are on disk
        proc = _start_command(module, args + ["--jobs", jobs], _env(generator_hook_dir, slow=0.3))
        _wait(lambda: _ok(out) >= after, proc, f"{after} records")
        _kill(proc)
        seen.append(_ok(out))
    assert seen[0] < seen[1], seen
    done = _command(module, args, _env(generator_hook_dir))
    assert done.returncode == 0, done.stderr
    assert _without_timings(done.stdout) == _uninterrupted(module)
    oks = [r["key"] for r in _records(out) if r["status"] == "ok"]
    assert len(oks) == len(set(oks)) > seen[1]  # a recorded task never ran again


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(SWEEPS))
def test_case_and_pairing_ctrl_c_exits_130_and_keeps_the_finished_records(module, generator_hook_dir, tmp_path):
    out = tmp_path / "out"
    args = SWEEPS[module] + ["--out", str(out), "--jobs", "2"]
    proc = _start_command(module, args, _env(generator_hook_dir, slow=0.5))
    _wait(lambda: _ok(out) >= 2, proc, "2 records")
    _, err = _kill(proc, signal.SIGINT)
    assert proc.returncode == 130
    assert err.splitlines() == ["interrupted; rerun the same command to resume"]
    assert _ok(out) >= 2 and all(r["status"] == "ok" for r in _records(out))
    done = _command(module, args, _env(generator_hook_dir))
    assert done.returncode == 0 and _without_timings(done.stdout) == _uninterrupted(module)
