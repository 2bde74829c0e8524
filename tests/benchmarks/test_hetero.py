"""Command-line benchmarks of the hetero family: OR-Library wt40 and the small comparison."""

import re

import pytest

from benchmarks import hetero as bench_hetero
from benchmarks import orlib


def test_orlib_cli_small_run(capsys):
    assert orlib.main(["--instances", "1,2", "--ils-time", "30", "--ils-iters", "30", "--exact-limit", "0.3",
                       "--backends", "cpsat", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert {"fifo", "greedy", "sagreedy", "ils", "cpsat"} <= set(rows)
    # ILS reaches the known optimum of wt40-1 (913) and wt40-2 (1225) within 30 iterations
    assert re.match(r"\| ils \| 2/2 \| 0\.000 \|", rows["ils"])
    # CP-SAT proves nothing on n = 40 in 0.3 s but returns a solution for each
    assert re.match(r"\| cpsat \| 0/2 \| \d/2 \| 0 \|", rows["cpsat"])


@pytest.mark.parametrize("args", [["--methods", "tabu"], ["--instances", "0-3"], ["--instances", "x"],
                                  ["--backends", "gurobi"], ["--ils-time", "0"]])
def test_orlib_cli_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        orlib.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m benchmarks.orlib: error:")


def test_hetero_cli_small_run(capsys):
    assert bench_hetero.main(["--n", "6", "--seeds", "2", "--ils-time", "0.2", "--time-limit", "20",
                              "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| 6 |")]
    assert [r.split("|")[2].strip() for r in rows] == ["OPT (CP-SAT)", "fifo", "greedy", "sagreedy", "ils"]
    assert "| 2/2 | 0.0 |" in rows[0]  # the optimum reaches itself


@pytest.mark.parametrize("args", [["--n", "a"], ["--gpus", "B200"], ["--seeds", "0"], ["--rdd", "0"]])
def test_hetero_cli_bad_arguments_exit_2(args):
    with pytest.raises(SystemExit) as exc:
        bench_hetero.main(args)
    assert exc.value.code == 2
