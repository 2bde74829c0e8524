"""The exact-model speed benchmark's command line (tiny runs only)."""

import pytest

from benchmarks import milp_speed


def test_tiny_run_prints_a_table(capsys):
    assert milp_speed.main(["--rows", "cpsat0:4", "cpsat1:3", "--seeds", "2", "--time-limit", "20", "--quiet",
                            "--ratios", "3", "--sweep", "cpsat0", "--sweep-from", "3", "--sweep-max", "4"]) == 0
    out = capsys.readouterr().out
    assert "| cpsat0 | cpsat | no | 4 |" in out and "| cpsat1 | cpsat | yes | 3 |" in out
    assert "2/2" in out
    assert "n sweep, cpsat0" in out and "| 4 |" in out
    assert "| 3 | yes |" in out  # ratio row with reconfiguration


@pytest.mark.parametrize("argv", [["--rows", "nope:3"], ["--rows", "cpsat0:x"], ["--seeds", "0"],
                                  ["--time-limit", "-1"], ["--workers", "3"], ["--sweep", "bogus"],
                                  ["--ratios", "0"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        milp_speed.main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err
