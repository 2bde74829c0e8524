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


def _fixed(rows):
    # (n, proven, runs, gap, closed by R): everything but the times
    return [(n, proven, runs, gap, by_r) for n, _, _, proven, runs, gap, by_r in rows]


def test_local_and_dask_agree(dask_scheduler):
    from benchmarks import executor

    local = mig_pyomo.run([2, 3], 2, True, gpu="A30", quiet=True)
    assert all(row[3] == row[4] for row in local)  # all proven: the comparison is exact
    dask = mig_pyomo.run([2, 3], 2, True, gpu="A30", quiet=True, executor=executor.Executor("dask", scheduler=dask_scheduler))
    assert _fixed(dask) == _fixed(local)


def test_markdown_table(capsys):
    assert mig_pyomo.main(["--n", "2", "--seeds", "1", "--gpu", "A30", "--reconfiguration", "--quiet",
                           "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| n | median (with reconfiguration) | proven (median gap of the unproven) | closed by the relaxations |"
    assert lines[4].startswith("| 2 | ") and lines[4].endswith(" s | 1/1 | 1 |") and len(lines) == 5


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        mig_pyomo.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 60)" in text and "(default: A100)" in text and "--executor" in text
