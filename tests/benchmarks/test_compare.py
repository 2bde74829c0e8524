"""``python -m benchmarks.compare``: rows from the registry, the README's table, outputs, argument errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import compare
from heuristics import mig as mig_heuristics
from instances import gpus, mig

ROOT = Path(__file__).resolve().parents[2]
TINY = compare.Config(n=4, instances=2, time_limit=10.0, workers=1)
README_HEADER = ("| method | mean /OPT | worst /OPT | mean /area bound | OPT proven | unproven: /OPT within "
                 "| mean time (ms) | median time (ms) |")


@pytest.mark.parametrize("argv", [
    ["--n", "0"], ["--n", "-3"], ["--gpu", "V100"], ["--workload", "Nope"], ["--times", "Short"],
    ["--time-limit", "-1"], ["--time-limit", "0"], ["--time-limit", "nan"], ["--instances", "0"], ["--jobs", "0"],
    ["--backend", "gurobi"], ["--executor", "spark"], ["--scheduler", "tcp://h:1"], ["--n", "x"],
    ["--methods", "FAR,Nope"], ["--methods", ""], ["--workers", "0"], ["--seed", "-1"],
])
def test_bad_arguments_one_line_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(argv + ["--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("python -m benchmarks.compare: error: ")


def test_bad_argument_from_the_command_line():
    proc = subprocess.run([sys.executable, "-m", "benchmarks.compare", "--n", "0"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "python -m benchmarks.compare: error: argument --n: must be an integer from 1 to 100,000, got '0'"]
    assert proc.stdout == ""


def test_unknown_method_names_the_choices(capsys):
    with pytest.raises(SystemExit):
        compare.main(["--methods", "FAR,MIG-nope", "--quiet"])
    err = capsys.readouterr().err
    assert "unknown method 'MIG-nope'; choose from " + ", ".join(mig_heuristics.METHODS) in err


def test_defaults_are_the_readme_command():
    cfg, a = compare.parse_config([])
    assert (cfg.n, cfg.instances, cfg.gpu, cfg.workload, cfg.times, cfg.time_limit, cfg.backend) == \
           (12, 10, "A100", "MixedScaling", "WideTimes", 30.0, "cpsat")
    assert cfg.methods == tuple(mig_heuristics.METHODS) and cfg.exact and not a.markdown


def test_instance_seeds_are_independent_of_order_and_distinct():
    seeds = [compare.instance_seed(0, i) for i in range(50)]
    assert len(set(seeds)) == 50
    assert seeds[::-1] == [compare.instance_seed(0, i) for i in reversed(range(50))]


def test_rows_are_the_registry_then_optimum_then_bounds():
    results = compare.run(TINY)
    names = [s["method"] for s in compare.summarise(results)]
    assert names == list(mig_heuristics.METHODS) + [compare.opt_name("cpsat"), *compare.BOUND_ROWS]
    for res in results:
        assert res["rows"][0]["opt_proven"]  # n = 4: proven
        for r in res["rows"]:
            if r["kind"] == "heuristic":
                assert r["feasible"] and r["makespan"] >= r["opt_objective"] - 1e-6, r
            if r["kind"] == "bound":
                assert r["makespan"] <= r["opt_objective"] + 1e-6, r


def test_a_method_added_to_the_registry_gets_its_row(monkeypatch, capsys):
    def reversed_far(problem):  # any valid schedule: FAR's own
        return mig_heuristics.METHODS["FAR"](problem)

    monkeypatch.setitem(mig_heuristics.METHODS, "MIG test method", reversed_far)
    assert compare.main(["--n", "4", "--instances", "1", "--no-exact", "--markdown", "--quiet"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| MIG test method |"))
    far = next(line for line in out.splitlines() if line.startswith("| FAR |"))
    assert row.split("|")[2:6] == far.split("|")[2:6]  # same schedule, same ratios


def test_a_method_that_raises_is_reported_failed_not_hidden(monkeypatch, capsys):
    def broken(problem):
        raise RuntimeError("deliberately broken")

    def infeasible(problem):  # every task at once on the whole GPU: the checker rejects it
        s = mig_heuristics.METHODS["FAR"](problem)
        return mig.Schedule(s.gpu, [mig.ScheduledTask(t.task, problem.gpu.placement(7, 0), 0.0, t.end - t.start)
                                    for t in s.tasks], [])

    monkeypatch.setitem(mig_heuristics.METHODS, "broken", broken)
    monkeypatch.setitem(mig_heuristics.METHODS, "infeasible", infeasible)
    assert compare.main(["--n", "4", "--instances", "2", "--no-exact", "--quiet"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| method |"))
    assert header.endswith("| failed |")
    assert any(line.startswith("| broken | - | - | - | 0/2 | - | - | - | 2/2 |") for line in out.splitlines())
    assert any(line.startswith("| infeasible |") and line.endswith("| 2/2 |") for line in out.splitlines())
    assert any(line.startswith("| FAR |") and line.endswith("| 0/2 |") for line in out.splitlines())
    assert "- broken: 2/2, first: instance 0: ERROR: RuntimeError: deliberately broken" in out
    assert "- infeasible: 2/2, first: instance 0: INFEASIBLE: " in out


def test_markdown_is_exactly_the_readme_table(capsys):
    assert compare.main(["--n", "4", "--instances", "2", "--time-limit", "10", "--workers", "1",
                         "--markdown", "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == README_HEADER
    assert lines[1] == "|---|---|---|---|---|---|---|---|"
    assert all(line.startswith("| ") and line.endswith(" |") and line.count("|") == 9 for line in lines[2:])
    assert [line.split(" | ")[0][2:] for line in lines[2:]] == \
           list(mig_heuristics.METHODS) + ["OPT (CP-SAT, with reconfiguration)",
                                           "lower bound (bounds.mig.lower_bound)", "area bound (FAR paper, Sec. 6.4)"]
    opt = next(line for line in lines if line.startswith("| OPT"))
    assert opt.split(" | ")[1:5] == ["1.000", "1.000", opt.split(" | ")[3], "2/2"]


def test_csv_json_one_row_per_instance_and_row(tmp_path, capsys):
    argv = ["--n", "4", "--instances", "2", "--time-limit", "10", "--workers", "1", "--out", str(tmp_path / "o"),
            "--quiet"]
    assert compare.main(argv) == 0
    out = capsys.readouterr().out
    assert "| FAR |" in out and "| FixPartBest |" in out and "wrote " in out
    rows_expected = set(mig_heuristics.METHODS) | {compare.opt_name("cpsat"), *compare.BOUND_ROWS}
    with open(tmp_path / "o" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keys = [(r["instance"], r["method"]) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * len(rows_expected)
    assert {m for _, m in keys} == rows_expected
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert {(str(r["instance"]), r["method"]) for r in data["rows"]} == set(keys)
    for r in data["rows"]:
        if r["kind"] == "heuristic":
            assert r["feasible"] is True, r  # every heuristic schedule passed the checker
            assert r["makespan"] >= r["lower_bound"] - 1e-6
        if r["opt_proven"] and r["makespan"] is not None:
            assert r["ratio_opt"] == pytest.approx(r["makespan"] / r["opt_objective"])
    assert (tmp_path / "o" / "gantt.png").stat().st_size > 1000
    names = sorted(p.name for p in (tmp_path / "o" / "schedules").iterdir())
    assert "instance0_FAR.json" in names and "instance1_OPT.json" in names


def test_markdown_keeps_stdout_to_the_table(tmp_path, capsys):
    assert compare.main(["--n", "4", "--instances", "1", "--no-exact", "--out", str(tmp_path), "--markdown",
                         "--quiet"]) == 0
    cap = capsys.readouterr()
    assert all(line.startswith("|") for line in cap.out.strip().splitlines())
    assert "wrote " in cap.err


def test_gantt_panels_say_which_is_far_and_which_is_opt(tmp_path, monkeypatch):
    seen = {}

    def record(schedules, gpu, path, titles=None):
        seen["titles"] = titles
        Path(path).write_bytes(b"png")
        return Path(path)

    monkeypatch.setattr(mig, "save_gantt", record)
    results = compare.run(TINY)
    compare.write_outputs(tmp_path, TINY, results, compare.summarise(results))
    far, opt = seen["titles"]
    assert far.startswith("FAR, instance ")
    assert opt.startswith("OPT (CP-SAT, with reconfiguration), proven optimal: makespan ")


def test_gantt_legend_lists_what_is_drawn():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a100 = gpus.get("A100")
    s = mig.Schedule("A100", [mig.ScheduledTask("a", a100.placement(3, 0), 0.2, 1.2)],
                     [mig.Reconfiguration("create", a100.placement(3, 0), 0.0, 0.2)])
    _, ax = plt.subplots()
    mig.plot_schedule(s, a100, ax=ax, title="FAR")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_title() == "FAR" and ax.get_ylabel() == "slice"
    assert any(label.startswith("occupied, not computing") for label in labels)  # 3@0's hatched slice 3
    assert "create" in labels and "destroy" not in labels  # nothing destroyed: no legend entry
    plain = mig.Schedule("A100", [mig.ScheduledTask("b", a100.placement(2, 0), 0.0, 1.0)], [])
    _, ax2 = plt.subplots()
    mig.plot_schedule(plain, a100, ax=ax2)
    labels2 = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert not any(label.startswith("occupied") for label in labels2) and "create" not in labels2
    plt.close("all")


def test_unproven_instances_are_never_averaged_as_optima():
    # Instance 1's optimum is "unproven": its ratio goes to the bracket, not to the mean.
    def res(i, proven, far_ms, opt_ms, lb):
        base = {"instance": i, "opt_proven": proven, "feasible": True, "time_s": 0.001, "status": "x"}
        rows = [dict(base, method="FAR", kind="heuristic", makespan=far_ms, ratio_area=far_ms / lb,
                     ratio_opt=far_ms / opt_ms if proven else None, ratio_opt_low=far_ms / opt_ms,
                     ratio_opt_high=far_ms / lb),
                dict(base, method="OPT", kind="exact", makespan=opt_ms, ratio_area=opt_ms / lb,
                     ratio_opt=1.0 if proven else None, ratio_opt_low=1.0, ratio_opt_high=opt_ms / lb)]
        return {"index": i, "rows": rows, "schedules": {}}

    s = {x["method"]: x for x in compare.summarise([res(0, True, 11.0, 10.0, 9.0), res(1, False, 30.0, 20.0, 10.0)])}
    assert s["FAR"]["proven"] == 1 and s["FAR"]["unproven"] == 1
    assert s["FAR"]["mean_ratio_opt"] == pytest.approx(1.1) == s["FAR"]["worst_ratio_opt"]
    assert s["FAR"]["unproven_ratio_low"] == pytest.approx(1.5)
    assert s["FAR"]["unproven_ratio_high"] == pytest.approx(3.0)


def test_mean_and_median_time_over_every_solve():
    # the exact row's median is the typical time to proof: one slow solve moves the mean, not the median
    def res(i, secs):
        row = {"instance": i, "opt_proven": True, "feasible": True, "time_s": secs, "status": "OPTIMAL",
               "method": "OPT", "kind": "exact", "makespan": 10.0, "ratio_area": 1.0, "ratio_opt": 1.0,
               "ratio_opt_low": 1.0, "ratio_opt_high": 1.0}
        return {"index": i, "rows": [row], "schedules": {}}

    (s,) = compare.summarise([res(0, 1.0), res(1, 2.0), res(2, 30.0)])
    assert s["mean_time_s"] == pytest.approx(11.0) and s["median_time_s"] == pytest.approx(2.0)
    (even,) = compare.summarise([res(0, 1.0), res(1, 3.0)])
    assert even["median_time_s"] == pytest.approx(2.0)
