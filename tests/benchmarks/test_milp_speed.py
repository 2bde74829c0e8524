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


def _deterministic(summaries):
    # times vary from run to run; on proven instances everything else is fixed by the seeds
    return [(s["row"], s["n"], s["proven"], s["count"],
             [(r["seed"], r["proven"], r["objective"], r["lower_bound"]) for r in s["runs"]]) for s in summaries]


def test_local_and_dask_give_the_same_solves_and_ratios(dask_scheduler):
    from benchmarks import executor

    rows = [("cpsat0", 4), ("cpsat1", 3)]
    local = milp_speed.speed_table(rows, 2, 20.0, 1)
    assert all(s["proven"] == 2 for s in local)  # small enough to be proven: equality below is real
    ratios = milp_speed.ratios([3], 1, 20.0, 1)
    assert [r["reconf"] for r in ratios] == [False, True] and all(r["proven"] == 1 for r in ratios)
    dask = executor.Executor("dask", scheduler=dask_scheduler)
    assert _deterministic(milp_speed.speed_table(rows, 2, 20.0, 1, executor=dask)) == _deterministic(local)
    assert milp_speed.ratios([3], 1, 20.0, 1, executor=dask) == ratios


def test_markdown_prints_the_readme_tables(capsys):
    argv = ["--rows", "cpsat1:3", "--seeds", "1", "--time-limit", "20", "--workers", "1", "--quiet", "--ratios", "3",
            "--sweep", "cpsat0", "--sweep-from", "3", "--sweep-max", "3", "--gap-n", "4", "--gap-rows", "cpsat1",
            "--markdown"]
    assert milp_speed.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [ln for ln, nxt in zip(lines, lines[1:]) if nxt.startswith("|---")]
    assert heads == ["| model | reconfiguration | n | median | proven | target |",
                     "| model | reconfiguration | largest n proven in 20 s (median of 1) | median gap n=4 |",
                     "| n | proven | FAR/OPT (no reconf. / reconf.) | OPT/LB (no reconf. / reconf.) | "
                     "OPT/area baseline (no reconf. / reconf.) |"]
    assert f"| {milp_speed.LABELS['cpsat1']} | yes | 3 |" in "\n".join(lines)
    frontier = next(ln for ln in lines if ln.startswith(f"| {milp_speed.LABELS['cpsat0']} |"))
    assert "| no | 3 (sweep maximum reached) | - |" in frontier
    gap_row = next(ln for ln in lines if ln.startswith(f"| {milp_speed.LABELS['cpsat1']} | yes | - |"))
    assert gap_row.endswith("| 0.00 % (1/1 proven) |")
    assert not any(ln.startswith("n sweep") for ln in lines)  # the per-n sweep tables are not the README's


def test_largest_proven_stops_at_the_first_unproven_median():
    import math

    assert milp_speed.largest_proven([{"n": 8, "median": 2.0}, {"n": 9, "median": 9.0},
                                      {"n": 10, "median": math.inf}]) == 9
    assert milp_speed.largest_proven([{"n": 8, "median": math.inf}]) is None


def test_help_lists_the_rows_and_defaults(capsys):
    with pytest.raises(SystemExit):
        milp_speed.main(["--help"])
    text = capsys.readouterr().out
    for name in milp_speed.ROWS:
        assert f"\n  {name} " in text  # every row name explained
    flat = " ".join(text.split())
    assert "(default: 2)" in flat and "--executor" in flat and "--scheduler ADDRESS" in flat
    assert "--gap-n" in flat and "20 25 30 35" in flat


@pytest.mark.parametrize("argv", [["--gap-rows", "nope"], ["--gap-n", "0"], ["--sweep-max", "0"],
                                  ["--executor", "dask", "--scheduler", "nohost"], ["--rows", "cpsat9:3"]])
def test_bad_arguments_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        milp_speed.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.milp_speed: error: ")


def test_presets_cover_every_family_on_the_given_seeds(capsys):
    assert len(milp_speed.PRESETS) == 12 and milp_speed.FAMILY in milp_speed.PRESETS
    fams = [("PoorScaling", "NarrowTimes", 0.0), ("GoodScaling", "WideTimes", 0.5)]
    out = milp_speed.presets("cpsat0", 3, [4], 2, 20.0, 1, first_seed=7, families=fams)
    assert [r["family"] for r in out] == fams
    for r in out:
        for n in (3, 4):
            runs = r["by_n"][n]
            assert runs["proven"] == runs["count"] == 2
    # the family and the seeds reach the instance: another seed or family gives other tasks
    a = milp_speed._instance(4, 7, True, fams[0])
    assert a.tasks == milp_speed._instance(4, 7, True, fams[0]).tasks
    assert a.tasks != milp_speed._instance(4, 8, True, fams[0]).tasks
    assert a.tasks != milp_speed._instance(4, 7, True, fams[1]).tasks
    assert milp_speed.main(["--presets", "--preset-row", "cpsat0", "--preset-n", "3", "--preset-gap-n", "4",
                            "--seeds", "1", "--first-seed", "5", "--time-limit", "20", "--workers", "1",
                            "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "seeds 5..5" in text and "| GoodScaling | NarrowTimes | 0.5 | 1/1 |" in text
    assert "Median time to proven optimum" not in text and text.count("\n| ") == 13  # header + 12 families
