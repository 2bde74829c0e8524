"""The co-scheduling benchmark command: runs end to end, rejects bad arguments."""

import pytest

from benchmarks import pairing as bench


def test_benchmark_prints_every_table(capsys):
    assert bench.main(["--quiet", "--p-total", "400", "--W", "6", "--seeds", "1",
                       "--triple-W", "5", "--timing-W", "20", "--timing-runs", "1"]) == 0
    out = capsys.readouterr().out
    for head in ("Table 6 job mixes", "Generated queues", "C = 3", "Full pipeline timing"):
        assert head in out
    rows = [r for r in out.splitlines() if r.startswith("| JobMix")]
    assert len(rows) == 3
    for r in rows:   # Algorithm 1 == exact on every mix
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert cells[5] == cells[6]


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--p-total", "360"], ["--W", "0"],
                                  ["--timing-runs", "x"], ["--table", "/nonexistent.csv"], ["--methods", "nope"]])
def test_bad_arguments_exit_with_code_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m benchmarks.pairing: error:")


def test_markdown_prints_the_readme_tables(capsys):
    assert bench.main(["--quiet", "--markdown", "--p-total", "350", "--W", "6", "--seeds", "1",
                       "--triple-W", "--timing-W", "0"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Table 6 job mixes") and lines[1] == ""
    assert lines[2] == ("| mix (Table 6) | P_total | TS + naive caps [s] | TS + opt caps [s] | Algorithm 1 [s] | "
                        "exact [s] | speed-up TS + opt caps vs naive | speed-up Algorithm 1 vs naive |")
    mixes = [line for line in lines if line.startswith("| JobMix")]
    assert len(mixes) == 3
    for line in mixes:  # Algorithm 1 == exact on every mix
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[4] == cells[5]
    assert "| 6 | 350 | 1 |" in out and "| 1/1 |" in out
    assert "## " not in out and "planning" not in out


def test_every_default_window_is_solved_exactly(capsys):
    """The README claims Algorithm 1 = exact up to W = 200: the default run must solve W = 200."""
    with pytest.raises(SystemExit):
        bench.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 8 20 50 200)" in text
    assert "up to this W (0: none) (default: 200)" in text


def test_windows_beyond_the_exact_limit_say_so(capsys):
    assert bench.main(["--quiet", "--p-total", "400", "--W", "6", "--seeds", "1", "--exact-max-W", "5",
                       "--triple-W", "--timing-W", "0"]) == 0
    out = capsys.readouterr().out
    assert "not solved (W > --exact-max-W 5)" in out and "not run" not in out
