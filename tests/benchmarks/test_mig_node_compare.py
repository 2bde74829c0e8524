"""``python -m benchmarks.compare --gpus g``: FAR and OPT on a node of g GPUs in the same table."""

from __future__ import annotations

import json

import pytest

from benchmarks import compare
from heuristics import far_node
from heuristics import mig as mig_heuristics
from instances import mig, mig_node

HEADER = "| " + " | ".join(compare.HEADER) + " |"


def test_one_gpu_is_the_default_and_keeps_the_single_gpu_rows():
    cfg, _ = compare.parse_config([])
    assert cfg.gpus == 1 and cfg.methods == tuple(mig_heuristics.METHODS)
    assert isinstance(compare.make_problem(cfg, 0), mig.Problem)
    res = compare.run_instance(compare.Config(n=4, instances=1, gpu="A30", exact=False, timing_repeats=1), 0)
    assert "gpus" not in res["rows"][0]
    assert [r["method"] for r in res["rows"]][-2:] == list(compare.BOUND_ROWS)


def test_node_rows_bounds_and_checked_schedules():
    cfg = compare.Config(n=6, instances=2, gpu="A30", gpus=2, time_limit=30.0, workers=1, timing_repeats=1,
                         methods=compare.method_names(2))
    problem = compare.make_problem(cfg, 1)
    assert isinstance(problem, mig_node.NodeProblem) and problem.gpus == 2
    res = compare.run_instance(cfg, 1)
    rows = {r["method"]: r for r in res["rows"]}
    assert list(rows) == list(far_node.METHODS) + [compare.opt_name("cpsat"), *compare.NODE_BOUND_ROWS]
    assert all(r["gpus"] == 2 for r in rows.values())
    opt = rows[compare.opt_name("cpsat")]
    assert opt["opt_proven"] and opt["feasible"]
    for name in far_node.METHODS:
        sched = mig_node.NodeSchedule.from_json(res["schedules"][name])
        assert mig_node.check(problem, sched) == [] and rows[name]["ratio_opt"] >= 1 - 1e-9
    assert rows[compare.NODE_BOUND_ROWS[0]]["makespan"] <= opt["makespan"] * (1 + 1e-9)
    assert mig_node.check(problem, mig_node.NodeSchedule.from_json(res["schedules"][compare.opt_name("cpsat")])) == []


def test_command_line_table_and_outputs(tmp_path, capsys):
    assert compare.main(["--n", "5", "--instances", "2", "--gpu", "A30", "--gpus", "3", "--quiet",
                         "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 x A30, MixedScaling/WideTimes, n=5, 2 instances (seed 0)")
    assert HEADER in out and "| FAR |" in out and "lower bound (bounds.mig_node.lower_bound)" in out
    assert json.loads((tmp_path / "results.json").read_text())["config"]["gpus"] == 3
    assert (tmp_path / "gantt.png").stat().st_size > 0


@pytest.mark.parametrize("argv, message", [
    (["--gpus", "0"], "argument --gpus: must be an integer from 1 to 64"),
    (["--gpus", "2", "--methods", "FAR,MISO-opt"], "--methods: 'MISO-opt' has no node version"),
    (["--gpus", "2", "--backend", "highs"], "--backend: a node's exact models are CP-SAT only"),
])
def test_bad_node_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(argv + ["--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
