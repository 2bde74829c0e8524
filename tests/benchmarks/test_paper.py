"""``python -m benchmarks.paper``: every table, columns from the registry, --markdown, argument errors."""

from __future__ import annotations

import pytest

from benchmarks import paper
from heuristics import mig as mig_heuristics

TINY = ["--reps", "1", "--opt-reps", "1", "--opt-n", "4", "--time-limit", "10", "--workers", "1", "--quiet",
        "--far-opt-reps", "1", "--far-opt-n", "3", "--far-opt-time-limit", "10"]


def test_paper_runs_on_tiny_reps(capsys):
    assert paper.main(TINY) == 0
    out = capsys.readouterr().out
    for t in (4, 5, 6, 7, 8, 9):
        assert f"Table {t}:" in out
    # every paper number appears beside ours, e.g. Table 4's PoorScaling n=10 value
    assert "(1.23, " in out and "(3.29, " in out and "(84.42, " in out
    assert "n = 4 against the exact optimum" in out and "(1/1 proven)" in out


@pytest.mark.parametrize("argv", [["--reps", "0"], ["--tables", "3"], ["--time-limit", "-2"], ["--p-sup", "1.5"],
                                  ["--gpu", "V100"], ["--methods", "nope"], ["--opt-reps", "-1"],
                                  ["--executor", "dask", "--scheduler", "nohost"]])
def test_paper_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        paper.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.paper: error: ")


def test_markdown_tables_are_the_readme_form(capsys):
    assert paper.main(["--tables", "4", "5", "--markdown"] + TINY) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "| config | n=10 | 15 | 20 | 25 | 30 | 35 |" in lines
    row = next(line for line in lines if line.startswith("| PoorScaling |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].endswith("(1.23)") and len(cells[1].split()[0]) == 5  # ours with 3 decimals, then (paper)
    head5 = next(line for line in lines if line.startswith("|  |"))
    assert head5.split(" | ")[1:-1] == [m for m in mig_heuristics.METHODS if m != "FAR"]
    assert "MISO-opt (" not in out.split("Table 5")[0]  # no run line, no difference columns
    assert not any(line.startswith("(A100") for line in lines)  # no timing line under --markdown


def test_methods_added_to_the_registry_appear(monkeypatch, capsys):
    def far_again(problem):
        return mig_heuristics.METHODS["FAR"](problem)

    def broken(problem):
        raise ValueError("deliberately broken")

    monkeypatch.setitem(mig_heuristics.METHODS, "MIG test method", far_again)
    monkeypatch.setitem(mig_heuristics.METHODS, "broken", broken)
    assert paper.main(["--tables", "4", "5"] + TINY) == 0
    out = capsys.readouterr().out
    t4, t5 = out.split("Table 5")
    # Table 4's exact column: one row per method of the registry, FAR's copy equal to FAR
    rows4 = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in t4.splitlines() if line.startswith("| ")}
    assert rows4["MIG test method"] == rows4["FAR"]
    assert all(cell.startswith("- (failed 1/1)") for cell in rows4["broken"])
    assert "broken, PoorScaling: failed, first: instance 0: ERROR: ValueError: deliberately broken" in t4
    # Table 5: sigma of FAR's copy is exactly 1; the broken method is a failed column, not a missing one
    head = next(line for line in t5.splitlines() if line.startswith("| Task configuration"))
    assert "| MIG test method |" in head and "| broken |" in head
    row = next(line for line in t5.splitlines() if line.startswith("| PoorScaling, NarrowTimes"))
    cells = dict(zip(head.split(" | "), row.split(" | ")))
    assert cells["MIG test method"] == "1.00" and cells["broken"] == "- (failed 1/1)"
    assert "broken, PoorScaling, NarrowTimes: failed 1/1, first: ValueError: deliberately broken" in t5


def test_paper_generator_options_change_the_instances():
    """--p-sup and --gpu reach every generated batch (p_sup = 0: no memory-bound tasks)."""
    a100 = paper.Generator().batch(30, "MixedScaling", "WideTimes", 3)
    plain = paper.Generator(p_sup=0.0).batch(30, "MixedScaling", "WideTimes", 3)
    a30 = paper.Generator(gpu="A30").batch(30, "MixedScaling", "WideTimes", 3)
    super_linear = lambda p: sum(t.times[2] < t.times[1] / 2 for t in p.tasks)  # noqa: E731
    assert super_linear(a100) > 0 and super_linear(plain) == 0
    assert a30.gpu.name == "A30" and a100.gpu.name == "A100"


def test_paper_cells_are_reproducible():
    a = paper.table5(1, seed=7)
    b = paper.table5(1, seed=7)
    assert a == b
    for cells in a.values():
        assert all(v["failed"] == 0 and v["mean"] >= 0.5 for v in cells.values())  # none twice as fast as FAR


def test_tables_6_to_9_markdown_and_settings(capsys):
    argv = ["--tables", "6", "7", "8", "9", "--reps", "1", "--quiet", "--markdown"]
    assert paper.main(argv) == 0
    default = capsys.readouterr().out
    for t in (6, 7, 8, 9):
        assert f"Table {t}, " in default
    assert "| PoorScaling, NarrowTimes | " in default and "(0.31)" in default and "(84.42)" in default
    assert "difference" not in default and "setting:" not in default
    assert paper.main(argv + ["--setting", "ties=reference,refined=every,release=end"]) == 0
    other = capsys.readouterr().out
    assert "setting: ties=reference, refined=every, release=end" in other and other != default


def test_setting_releases_and_errors():
    from instances import mig

    w = paper.Generator().workload([4, 4, 4], [0.0] * 3, "MixedScaling", "WideTimes", 3)
    assert paper.Setting().releases(w.batches) == [0.0, 0.0, 0.0]
    end = paper.Setting(release="end").releases(w.batches)
    half = paper.Setting(release="half").releases(w.batches)
    assert end[0] == 0.0 < end[1] < end[2] and half == [x / 2 for x in end]
    gap = paper.Setting(release="gap", gap=2.0).workload(w)
    assert [b.release for b in gap.batches][1] > 0 and mig.check(gap, __import__("heuristics.far").far.schedule(gap)) == []
    with pytest.raises(ValueError):
        paper.Setting.parse("tie=ours")
    with pytest.raises(ValueError, match="release"):
        paper.Setting(release="later")


def test_candidates_summary(capsys):
    assert paper.main(["--tables", "9", "--candidates", "--reps", "1", "--quiet", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| table | setting | mean abs diff | max abs diff | mean paper | reproduces |" in out
    rows = [line for line in out.splitlines() if line.startswith("| 9 |")]
    assert len(rows) == len(paper.CANDIDATES["9"])


def test_bad_setting_argument(capsys):
    with pytest.raises(SystemExit) as exc:
        paper.main(["--setting", "release=soon"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("python -m benchmarks.paper: error: ")
