"""benchmarks/executor.py: results in task order whatever runs them; compare and paper alike local and on dask."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from benchmarks import common, compare, executor, paper
from instances.errors import OptionError


def _slow_square(x: int) -> int:
    # the first tasks finish last, so completion order differs from task order
    time.sleep(0.05 * (3 - x % 4))
    return x * x


def test_results_come_back_in_task_order():
    tasks = list(range(8))
    expected = [x * x for x in tasks]
    assert executor.Executor().map(_slow_square, tasks) == expected
    assert executor.Executor("local", jobs=3).map(_slow_square, tasks) == expected
    assert executor.Executor().map(_slow_square, []) == []


def test_dask_local_cluster_keeps_task_order(monkeypatch):
    # the cluster's worker processes import this module by name, as they would a user's: its root must be on
    # their path (pytest's importlib mode does not put it on sys.path, and the workers inherit sys.path)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    assert executor.Executor("dask", jobs=2).map(_slow_square, list(range(6))) == [x * x for x in range(6)]


def test_dask_tasks_the_workers_cannot_load_raise_instead_of_hanging(tmp_path, monkeypatch):
    # the module is known to this process only (not on the path the workers inherit): each worker that
    # receives the task fails to load it and ends, and the local cluster does not start it again
    (tmp_path / "only_here.py").write_text("def square(x):\n    return x * x\n")
    spec = importlib.util.spec_from_file_location("only_here", tmp_path / "only_here.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "only_here", module)
    monkeypatch.setattr(executor, "WATCH_SECONDS", 1.0)
    with pytest.raises(executor.ExecutorError, match="every worker of the local dask cluster ended"):
        executor.Executor("dask", jobs=2).map(module.square, [1, 2, 3])


def test_task_errors_are_raised_not_swallowed():
    with pytest.raises(ZeroDivisionError):
        executor.Executor().map(lambda x: 1 / x, [1, 0])


@pytest.mark.parametrize("kwargs", [dict(kind="spark"), dict(jobs=0), dict(jobs=True), dict(jobs=1.5),
                                    dict(scheduler="tcp://h:1"), dict(kind="dask", scheduler="h:8786")])
def test_bad_executor_options(kwargs):
    with pytest.raises(OptionError):
        executor.Executor(**kwargs)


@pytest.mark.parametrize("argv, message", [
    (["--scheduler", "tcp://h:1"], "--scheduler: a scheduler address needs the dask executor"),
    (["--executor", "dask", "--scheduler", "h:1"], "--scheduler: must be an address like tcp://host:8786"),
    (["--jobs", "0"], "argument --jobs: must be an integer from 1 to 256"),
    (["--executor", "ray"], "argument --executor: invalid choice"),
])
def test_command_line_errors(argv, message, capsys):
    p = common.Parser(prog="demo")
    executor.add_arguments(p)
    with pytest.raises(SystemExit) as exc:
        executor.from_args(p, p.parse_args(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"demo: error: {message}")


def test_from_args_builds_the_executor(monkeypatch):
    # no scheduler runs at the address: the reachability probes are tested in tests/test_cli.py
    monkeypatch.setattr(executor, "_unreachable", lambda address: None)
    monkeypatch.setattr(executor, "_no_handshake", lambda address: None)
    p = common.Parser(prog="demo")
    executor.add_arguments(p)
    a = p.parse_args(["--executor", "dask", "--jobs", "3", "--scheduler", "tcp://10.0.0.1:8786"])
    assert executor.from_args(p, a) == executor.Executor("dask", 3, "tcp://10.0.0.1:8786")


def _strip_times(results):
    return [[{k: v for k, v in r.items() if k != "time_s"} for r in res["rows"]] for res in results]


def test_compare_local_processes_and_dask_agree(dask_scheduler):
    # n = 4: every optimum is proven quickly, so the comparison does not hang on timing
    cfg = compare.Config(n=4, instances=2, time_limit=10.0, workers=1)
    local = compare.run(cfg)
    assert all(res["rows"][0]["opt_proven"] for res in local)
    pool = compare.run(cfg, executor.Executor("local", jobs=2))
    dask = compare.run(cfg, executor.Executor("dask", scheduler=dask_scheduler))
    assert _strip_times(local) == _strip_times(pool) == _strip_times(dask)
    assert [r["index"] for r in dask] == [0, 1]
    table = compare.format_table(cfg, local, compare.summarise(local))
    drop_times = [line.rsplit("|", 3)[0] for line in table.splitlines()]  # the mean and median times
    table_dask = compare.format_table(cfg, dask, compare.summarise(dask))
    assert drop_times == [line.rsplit("|", 3)[0] for line in table_dask.splitlines()]


def test_paper_prints_the_same_tables_local_and_on_dask(capsys, dask_scheduler):
    # every table, with Table 4's exact column on instances small enough to be proven in any run
    argv = ["--reps", "1", "--opt-reps", "1", "--opt-n", "4", "--time-limit", "10", "--workers", "1",
            "--far-opt-reps", "1", "--far-opt-n", "3", "--far-opt-time-limit", "10", "--markdown", "--quiet"]
    assert paper.main(argv) == 0
    local = capsys.readouterr().out
    assert paper.main(argv + ["--executor", "dask", "--scheduler", dask_scheduler]) == 0
    dask = capsys.readouterr().out
    assert local == dask
    assert "(1/1 proven)" in local and "Table 9" in local


def test_dask_scheduler_address_path(dask_scheduler):
    # --scheduler tcp://...: connect to a running scheduler instead of starting a cluster
    cfg = compare.Config(n=5, instances=2, exact=False)
    remote = compare.run(cfg, executor.Executor("dask", scheduler=dask_scheduler))
    assert _strip_times(remote) == _strip_times(compare.run(cfg))
