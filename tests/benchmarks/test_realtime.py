"""Real-time partitioning benchmark command: tables, plots and argument errors."""

import pytest

from benchmarks import realtime as bench


def test_small_run_prints_tables_and_writes_plots(tmp_path, capsys):
    out = tmp_path / "plots"
    assert bench.main(["--n", "12", "--utils", "4", "10", "--reps", "1", "--gap-n", "4",
                       "--gap-utils", "3", "--gap-reps", "1", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    for heading in ("schedulability rate", "scheduled load", "number of partitions",
                    "analysis time", "Gap to the exact optimum"):
        assert heading in text
    assert "| 4 | " in text and "SMS_INA" in text
    assert sorted(p.name for p in out.iterdir()) == [
        "realtime_load.png", "realtime_ms.png", "realtime_parts.png", "realtime_sched.png"]


@pytest.mark.parametrize("args", [["--reps", "0"], ["--prm", "2"], ["--gap-n", "20"],
                                  ["--utils", "-3"], ["--test", "rta"], ["--methods", "nope"]])
def test_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(args + ["--quiet", "--no-plots"])
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err
