"""benchmarks.case: the command runs, prints the tables, writes the PNG, rejects bad arguments."""

import pytest

from benchmarks import case as bench


def test_small_run_prints_tables_and_png(tmp_path, capsys):
    png = tmp_path / "fig4.png"
    assert bench.main(["--figures", "3", "--seeds", "1", "--png", str(png), "--bound-n", "5",
                       "--bound-seeds", "1", "--time-limit", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Figure 3" in out and "| 1:0 | 1.00 | 1.00 |" in out
    assert "mixed-ratio average" in out and "Exact reference" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv", [["--figures", "5"], ["--figures", "x"], ["--seeds", "0"],
                                  ["--bound-n", "100"], ["--time-limit", "0"], ["--methods", "nope"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err
