"""Table 4's FAR / OPT interval column (benchmarks.paper): brackets, --markdown shape, local vs dask, options."""

from __future__ import annotations

import re

import pytest

from benchmarks import executor, paper, paper_format

#: n = 3 and 4: every solve is proven within a second, so local and dask runs must print the same table.
QUICK = ["--tables", "4", "--reps", "1", "--opt-reps", "0", "--far-opt-reps", "1", "--far-opt-n", "3", "4",
         "--far-opt-time-limit", "20", "--workers", "1", "--quiet", "--markdown"]


def _interval_table(out: str) -> list[list[str]]:
    block = out.split("FAR / OPT, proven interval")[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("|")]


def test_interval_brackets_far_over_opt():
    far_opt = paper.FarOpt(reps=2, time_limit=20, ns=(5,), workers=1)
    res = paper.table4(1, seed=3, far_opt=far_opt)
    assert set(res["interval"]) == {(sc, 5) for sc in paper.SCALINGS}
    for cell in res["interval"].values():
        # the solve starts from FAR, so the best found is never worse than FAR: FAR / best >= 1
        assert cell["failed"] == 0 and cell["count"] == 2
        assert 1 - 1e-9 <= cell["low"] <= cell["high"] + 1e-12
        if cell["proven"] == cell["count"]:
            assert cell["high"] == pytest.approx(cell["low"], rel=1e-5)


def test_markdown_interval_table_and_local_equals_dask(capsys, dask_scheduler):
    assert paper.main(QUICK) == 0
    local = capsys.readouterr().out
    assert paper.main(QUICK + ["--executor", "dask", "--scheduler", dask_scheduler]) == 0
    assert capsys.readouterr().out == local
    rows = _interval_table(local)
    assert rows[0] == ["config", "n=3", "4"]
    assert [r[0] for r in rows[2:]] == list(paper.SCALINGS)
    for r in rows[2:]:
        for cell in r[1:]:
            # every solve at n <= 4 is proven: one value, 1/1 proven
            assert re.fullmatch(r"\d\.\d{3} 1/1 proven", cell), cell
    assert "over the first instance of each cell" in local and "20 s per solve, 1 worker" in local


def test_no_interval_block_with_zero_reps(capsys):
    assert paper.main(QUICK[:QUICK.index("--far-opt-reps")] + ["--far-opt-reps", "0", "--quiet", "--markdown"]) == 0
    assert "FAR / OPT, proven interval" not in capsys.readouterr().out


def test_interval_text_shows_open_and_failed_cells():
    assert paper_format.interval_text({"low": 1.01, "high": 1.05, "proven": 1, "count": 3, "failed": 0}) == \
        "[1.010, 1.050] 1/3 proven"
    assert paper_format.interval_text({"low": 1.01, "high": float("inf"), "proven": 0, "count": 1, "failed": 0}) == \
        "[1.010, open] 0/1 proven"
    assert paper_format.interval_text({"low": float("nan"), "high": float("nan"), "proven": 0, "count": 2,
                                 "failed": 2}) == "- (failed 2/2)"


@pytest.mark.parametrize("argv", [["--far-opt-n", "0"], ["--far-opt-time-limit", "0"], ["--far-opt-reps", "-1"],
                                  ["--far-opt-n"]])
def test_bad_interval_options(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        paper.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.paper: error: ")


def test_help_shows_the_interval_defaults(capsys):
    with pytest.raises(SystemExit):
        paper.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--far-opt-time-limit" in text and "(default: 60)" in text
    assert "(default: 10 15 20 25 30 35)" in text and "--executor" in text


def test_interval_tasks_are_one_solve_each():
    tasks = paper.FarOpt(reps=3, time_limit=5, ns=(10, 20)).tasks(paper.Generator(), 0)
    assert len(tasks) == 3 * 2 * 3 and {t[0] for t in tasks} == {"interval"}
    assert executor.Executor().map(len, tasks[:1]) == [8]
