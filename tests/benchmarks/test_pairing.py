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
