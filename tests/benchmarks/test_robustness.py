"""``python -m benchmarks.robustness``: a quick run, the properties its figures must have, bad arguments, and
the sweep's rules (records, resume, a failing instance, Ctrl-C, the lock), the last in real processes."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import command, records, robustness

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_prints_one_table_per_gpu_and_writes_the_figures(tmp_path, capsys):
    out = tmp_path / "r"
    assert robustness.main(["--gpus", "A30,A100", "--n", "5", "--instances", "2", "--draws", "2", "--noise",
                            "0.1,0.3", "--time-limit", "10", "--markdown", "--quiet", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = "| error | plan | plan/OPT | real/OPT* mean | real/OPT* max | real/plan mean |"
    assert lines.count(header) == 2
    assert lines[0].startswith("A30: 2 instances of n = 5") and lines[1] == ""
    rows = [ln for ln in lines if ln.startswith("| 10%") or ln.startswith("| 30%")]
    assert len(rows) == 2 * 2 * 3  # GPUs x errors x plans
    data = json.loads((out / robustness.FIGURES).read_text())
    assert data["failed"] == [] and len(data["instances"]) == 4
    for c in data["instances"]:
        assert c["planned"]["OPT"] == pytest.approx(c["opt"])
        if c["proven"]:
            assert all(m >= c["opt"] * (1 - 1e-6) for m in c["planned"].values())
        for r in c["runs"]:
            if r["proven"]:  # a realised schedule is feasible for the realised problem: never below its optimum
                assert all(v >= r["opt"] * (1 - 1e-6) for v in r["real"].values())
    for row in data["rows"]:
        assert row["plan"]["real_opt_mean"] <= row["plan"]["real_opt_max"]


def test_zero_error_reproduces_the_plans():
    cfg = robustness.Config(gpus=("A30",), n=5, instances=1, noise=(0.0,), draws=1)
    (c,) = robustness.run(cfg)
    for m in robustness.METHOD_NAMES:
        for order in ("plan", "ready"):
            assert c["runs"][0]["real"][f"{m} {order}"] <= c["planned"][m] * (1 + 1e-9)


@pytest.mark.parametrize("argv", [["--n", "40"], ["--noise", "1.5"], ["--noise", ""], ["--gpus", "V100"],
                                  ["--draws", "0"], ["--time-limit", "-1"], ["--out", "figures.json"],
                                  ["--fresh"], ["--jobs", "0"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        robustness.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.robustness: error: ")


# ---------------------------------------------------------------------------
# the sweep: one executor task per instance

#: Three instances, a fraction of a second each.
QUICK = ["--gpus", "A30", "--n", "4", "--instances", "3", "--draws", "1", "--noise", "0.2", "--time-limit", "10",
         "--quiet"]


def _records(out: Path) -> list[dict]:
    path = out / records.RECORDS
    if not path.exists():
        return []
    lines = path.read_text().split("\n")[1:-1]  # the header; a line cut short by a kill
    return [json.loads(x) for x in lines if x.strip()]


def _ok(out: Path) -> int:
    return sum(r["status"] == "ok" for r in _records(out))


def _status(argv: list[str]) -> tuple[int, str, str]:
    """The command's exit status, stdout and stderr, run in this process as its command line runs it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = command.status(robustness.main, argv, prog="python -m benchmarks.robustness")
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def uninterrupted() -> str:
    code, out, err = _status(QUICK)
    assert code == 0, err
    return out


def test_a_failing_instance_is_left_out_counted_listed_and_rerun(tmp_path, monkeypatch, uninterrupted):
    from instances import mig

    seed = robustness._seed(0, 1)  # instance 1's generator seed
    real = mig.generate

    def generate(n, gpu, workload, times, s, *args, **kwargs):
        if s == seed:
            raise RuntimeError("planted failure")
        return real(n, gpu, workload, times, s, *args, **kwargs)

    argv = QUICK + ["--out", str(tmp_path)]
    monkeypatch.setattr(mig, "generate", generate)
    code, out, err = _status(argv)
    assert code == 1
    assert out.startswith("A30: 3 instances (1 failed, left out) of n = 4 ")
    assert "optima proven 4/4 " in out  # the two instances that finished, each with one draw
    assert err.splitlines()[-1] == "- A30 instance 1: RuntimeError: planted failure"
    assert [(r["task"], r["status"]) for r in _records(tmp_path)] == [
        ("A30 instance 0", "ok"), ("A30 instance 1", "failed"), ("A30 instance 2", "ok")]
    assert json.loads((tmp_path / robustness.FIGURES).read_text())["failed"] == ["A30 instance 1"]
    # the rerun runs the failed instance only and prints the uninterrupted table
    monkeypatch.setattr(mig, "generate", real)
    code, out, err = _status(argv)
    assert code == 0, err
    assert out == uninterrupted
    assert [(r["task"], r["status"]) for r in _records(tmp_path)][3:] == [("A30 instance 1", "ok")]
    assert json.loads((tmp_path / robustness.FIGURES).read_text())["failed"] == []


def test_every_instance_of_a_gpu_failing_leaves_a_caption_and_no_table():
    cfg = robustness.Config(gpus=("A30", "A100"), n=4, instances=1, noise=(0.1,), draws=1)
    (cell,) = robustness.run(robustness.Config(gpus=("A100",), n=4, instances=1, noise=(0.1,), draws=1))
    text = robustness.format_table(cfg, [cell], robustness.summarise(cfg, [cell]))
    assert text.splitlines()[0] == "A30: 1 instances of n = 4: every one failed, no table"
    assert text.count("| error |") == 1 and "A100: 1 instances of n = 4 (" in text


#: Makes every instance slow (a sleep in its generator) in the command's processes, workers included.
HOOK = '''
import os
if os.environ.get("ROBUSTNESS_TEST_SLOW"):
    import time
    from instances import mig
    _generate = mig.generate

    def generate(*args, **kwargs):
        time.sleep(float(os.environ["ROBUSTNESS_TEST_SLOW"]))
        return _generate(*args, **kwargs)

    mig.generate = generate
'''


def _start(args: list[str], hook: Path, slow: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)]), "ROBUSTNESS_TEST_SLOW": str(slow)}
    # its own session: a signal to the group reaches its workers too, as a terminal's Ctrl-C does
    return subprocess.Popen([sys.executable, "-m", "benchmarks.robustness", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait(pred, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not pred():
        assert proc.poll() is None, f"the sweep ended before {what}: {proc.communicate()}"
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_killed_interrupted_and_locked_then_resumed_prints_the_uninterrupted_table(jobs, tmp_path, capsys):
    sweep = QUICK[:QUICK.index("--instances")] + ["--instances", "6"] + QUICK[QUICK.index("--instances") + 2:]
    code, uninterrupted, err = _status(sweep)
    assert code == 0, err
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(HOOK)
    out = tmp_path / "out"
    args = sweep + ["--out", str(out), "--jobs", jobs]
    first = _start(args, tmp_path / "hook", slow=1.0)
    _wait(lambda: _ok(out) >= 1, first, "a record")
    os.killpg(first.pid, signal.SIGKILL)  # a crash: the finished records stay
    first.communicate(timeout=60)
    kept = _ok(out)
    assert 1 <= kept < 6

    second = _start(args, tmp_path / "hook", slow=1.0)
    _wait(lambda: (out / records.LOCK).read_text().strip() == str(second.pid), second, "the lock")
    with pytest.raises(SystemExit) as refused:  # a second run on the folder, in this process
        robustness.main(args)
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"python -m benchmarks.robustness: error: another run (pid {second.pid}) is using {out}; wait for it to end "
        "or choose another --out"]
    _wait(lambda: _ok(out) > kept, second, "one more record")
    os.killpg(second.pid, signal.SIGINT)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 130
    assert err.splitlines() == ["interrupted; rerun the same command to resume"]
    assert kept < _ok(out) < 6 and all(r["status"] == "ok" for r in _records(out))

    done = subprocess.run([sys.executable, "-m", "benchmarks.robustness", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == uninterrupted
    oks = [r["key"] for r in _records(out) if r["status"] == "ok"]
    assert len(oks) == len(set(oks)) == 6  # a recorded instance never ran again
