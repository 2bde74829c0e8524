"""The command-line benchmark of the Pyomo/HiGHS MIG MILP (benchmarks/mig_pyomo.py)."""

import pytest

from benchmarks import mig_pyomo


def test_tiny_run_prints_table(capsys):
    assert mig_pyomo.main(["--n", "2", "3", "--seeds", "2", "--gpu", "A30", "--quiet"]) == 0
    out = capsys.readouterr().out
    lines = [ln.split() for ln in out.splitlines()[2:]]
    assert [ln[0] for ln in lines] == ["2", "3"]
    assert all(ln[3] == "2/2" for ln in lines)  # tiny instances are proven optimal


def test_reconfiguration_rows_report_closure_by_relaxation():
    rows = mig_pyomo.run([3], 2, True, gpu="A30", quiet=True)
    n, med, mx, proven, runs, gap, by_r = rows[0]
    assert (n, proven, runs) == (3, 2, 2) and 0 <= by_r <= 2 and med <= mx


@pytest.mark.parametrize("args", [["--n", "0"], ["--seeds", "0"], ["--time-limit", "-1"], ["--gpu", "Z9"],
                                  ["--times", "Slow"]])
def test_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        mig_pyomo.main(args + ["--quiet"])
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err
