"""``python -m benchmarks.robustness``: a quick run, the properties its figures must have, bad arguments."""

from __future__ import annotations

import json

import pytest

from benchmarks import robustness


def test_quick_run_prints_one_table_per_gpu_and_writes_the_figures(tmp_path, capsys):
    out = tmp_path / "r" / "robustness.json"
    assert robustness.main(["--gpus", "A30,A100", "--n", "5", "--instances", "2", "--draws", "2", "--noise",
                            "0.1,0.3", "--time-limit", "10", "--markdown", "--quiet", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = "| error | plan | plan/OPT | real/OPT* mean | real/OPT* max | real/plan mean |"
    assert lines.count(header) == 2
    assert lines[0].startswith("A30: 2 instances of n = 5") and lines[1] == ""
    rows = [ln for ln in lines if ln.startswith("| 10%") or ln.startswith("| 30%")]
    assert len(rows) == 2 * 2 * 3  # GPUs x errors x plans
    data = json.loads(out.read_text())
    for c in data["instances"]:
        assert c["planned"]["OPT"] == pytest.approx(c["opt"])
        if c["proven"]:
            assert all(m >= c["opt"] * (1 - 1e-6) for m in c["planned"].values())
        for r in c["runs"]:
            if r["proven"]:  # a realised schedule is feasible for the realised problem: never below its optimum
                assert all(v >= r["opt"] * (1 - 1e-6) for v in r["real"].values())
    for row in data["rows"]:
        assert row["plan"]["real_opt_mean"] <= row["plan"]["real_opt_max"]


def test_zero_error_reproduces_the_plans():
    cfg = robustness.Config(gpus=("A30",), n=5, instances=1, noise=(0.0,), draws=1)
    (c,) = robustness.run(cfg)
    for m in robustness.METHOD_NAMES:
        for order in ("plan", "ready"):
            assert c["runs"][0]["real"][f"{m} {order}"] <= c["planned"][m] * (1 + 1e-9)


@pytest.mark.parametrize("argv", [["--n", "40"], ["--noise", "1.5"], ["--noise", ""], ["--gpus", "V100"],
                                  ["--draws", "0"], ["--time-limit", "-1"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        robustness.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.robustness: error: ")
