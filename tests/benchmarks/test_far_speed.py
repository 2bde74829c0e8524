"""``python -m benchmarks.far_speed``: the speed table with its growth exponent, the ties sweep, --markdown, errors."""

from __future__ import annotations

import pytest

from benchmarks import executor, far_speed


def test_speed_table_with_growth_and_near_identical(capsys):
    assert far_speed.main(["--n", "20", "60", "--seeds", "1", "--repeats", "1", "--near", "300", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| 20 |" in out and "| 60 |" in out and "| 300 near-identical |" in out
    assert "growth exponent (CPU time ~ n^k): k = " in out


def test_speed_markdown_is_the_readme_form(capsys):
    assert far_speed.main(["--n", "100", "--seeds", "1", "--repeats", "1", "--near", "0", "--markdown",
                           "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "" and lines[2] == "| n | CPU s | wall s | runs | paper C++ s |"
    assert lines[4].startswith("| 100 |") and lines[4].endswith("| 0.012 |")  # the paper's 12.32 ms


def test_growth_exponent():
    assert far_speed.growth([10, 100], [1.0, 100.0]) == pytest.approx(2.0)
    assert far_speed.growth([10], [1.0]) is None


def test_ties_sweep_local_and_dask_agree(capsys, dask_scheduler):
    args = ["--ties", "--n", "10", "14", "--reps", "3", "--markdown", "--quiet"]
    assert far_speed.main(args) == 0
    local = capsys.readouterr().out
    assert far_speed.main(args + ["--executor", "dask", "--scheduler", dask_scheduler]) == 0
    assert capsys.readouterr().out == local
    assert "| n | phases 1+2 | refined | best / ours (refined) |" in local and "/3) |" in local
    res = far_speed.ties_sweep([12], 4, 5, "A100", "MixedScaling", "WideTimes", executor.Executor())
    assert res[12]["best"]["max"] <= 1.0  # best never loses to ours


@pytest.mark.parametrize("argv", [["--n", "0"], ["--reps", "-1"], ["--gpu", "V100"], ["--near", "x"],
                                  ["--executor", "dask", "--scheduler", "nohost"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        far_speed.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.far_speed: error: ")


def test_ties_count_differing_instances_out_of_those_that_finished(monkeypatch, capsys):
    """A failed instance is left out of the figures and out of the count of differing ones, shown in a
    failed column and listed; the command exits 1 (an n whose every instance failed shows failed)."""
    from benchmarks import command

    args = ["--ties", "--n", "10", "14", "--reps", "3", "--seed", "7", "--markdown", "--quiet"]
    assert far_speed.main(args) == 0
    clean = capsys.readouterr().out.splitlines()
    real = far_speed.mig.generate

    def generate(n, *rest, seed, **kwargs):
        if (n, seed) == (14, 7 + 1000 + 1):  # instance 1 of n = 14 (seeds: seed + 1000 * index of n + rep)
            raise RuntimeError("planted failure")
        return real(n, *rest, seed=seed, **kwargs)

    monkeypatch.setattr(far_speed.mig, "generate", generate)
    assert command.status(far_speed.main, args) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[2] == "| n | phases 1+2 | refined | best / ours (refined) | failed |"
    row10 = lines[4].split(" | ")
    row14 = lines[5].split(" | ")
    assert row10[:4] == clean[4].rstrip(" |").split(" | ") and row10[4] == "0/3 |"
    assert row14[0] == "| 14" and row14[4] == "1/3 |"
    assert all(c.endswith("/2)") for c in row14[1:4]), row14  # out of the 2 that finished, not of --reps
    assert err.splitlines()[-1] == "- n=14 seed=1008: RuntimeError: planted failure"

    monkeypatch.setattr(far_speed.mig, "generate", lambda n, *r, **k: 1 // 0 if n == 14 else real(n, *r, **k))
    assert command.status(far_speed.main, args) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[5] == "| 14 | failed | failed | failed | 3/3 |"
