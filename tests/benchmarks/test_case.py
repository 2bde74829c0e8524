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


def test_markdown_prints_the_readme_tables(tmp_path, capsys):
    assert bench.main(["--figures", "3", "--seeds", "1", "--png", str(tmp_path / "f.png"), "--bound-n", "5",
                       "--bound-seeds", "1", "--time-limit", "2", "--quiet", "--markdown"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    assert "| mixed ratios 4:1 .. 1:4, CASE over Slurm | throughput | turnaround | paper (thr / tat) |" in lines
    assert "| ratio | D thr | D tat |" in lines and "| method | median makespan / lower bound |" in lines
    assert all(line.startswith("|") or line.endswith(":") or not line for line in lines)
    assert "Figure 4 written to" in cap.err


def test_unwritable_png_is_refused_before_the_sweep(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as exc:
        bench.main(["--png", str(tmp_path / "file" / "fig4.png"), "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0]
