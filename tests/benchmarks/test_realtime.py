"""Real-time partitioning benchmark command: tables, plots and argument errors."""

import pytest

from benchmarks import realtime as bench


def test_small_run_prints_tables_and_writes_plots(tmp_path, capsys):
    out = tmp_path / "plots"
    assert bench.main(["--n", "12", "--utils", "4", "10", "--reps", "1", "--gap-n", "4",
                       "--gap-utils", "3", "--gap-reps", "1", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    for heading in ("schedulability rate", "scheduled load", "number of partitions",
                    "analysis time", "Gap to the exact optimum"):
        assert heading in text
    assert "| 4 | " in text and "SMS_INA" in text
    assert sorted(p.name for p in out.iterdir()) == [  # the plots, and the task sets recorded for a resume
        "realtime_load.png", "realtime_ms.png", "realtime_parts.png", "realtime_sched.png", "records.jsonl",
        "records.lock"]


@pytest.mark.parametrize("args", [["--reps", "0"], ["--prm", "2"], ["--gap-n", "20"],
                                  ["--utils", "-3"], ["--test", "rta"], ["--methods", "nope"]])
def test_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(args + ["--quiet", "--no-plots"])
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_markdown_prints_only_the_readme_tables(tmp_path, capsys):
    assert bench.main(["--n", "12", "--utils", "4", "10", "--reps", "1", "--gap-n", "4", "--gap-utils", "3",
                       "--gap-reps", "1", "--out", str(tmp_path), "--quiet", "--markdown"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    assert lines[0] == "Schedulability rate, n = 12, 1 task set per point:"
    assert lines[2] == "| U | " + " | ".join(bench.METHODS) + " | 1G_fluid |"
    assert sum(line.startswith("Gap to the exact minimum number of SMs") for line in lines) == 1
    assert not any(line.startswith("#") for line in lines)
    assert "plots: " in cap.err and "plots: " not in cap.out


def test_plots_draw_every_series_distinctly_and_skip_empty_ones(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = [(m, dash) for m, _, dash in bench._STYLES]
    assert len(set(m for m, _ in styles)) == len(styles) and len(set(map(str, styles))) == len(styles)
    nan = float("nan")
    series = {"sched": {"A": [1.0, 0.5], "B": [1.0, 0.5], "C": [0.0, 0.0]},
              "load": {"A": [0.6, 0.7], "B": [0.6, 0.7], "C": [nan, nan]},
              "parts": {"A": [3.0, 4.0], "B": [3.0, 4.0]}, "ms": {"A": [1.0, 2.0], "B": [1.0, 2.0], "C": [0.1, 0.1]}}
    drawn = {}
    real_close = plt.close

    def keep(fig):  # read each figure's legend before it is closed
        drawn[fig.axes[0].get_title()] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()], \
            [(line.get_marker(), str(line.get_linestyle())) for line in fig.axes[0].get_lines()]
        real_close(fig)

    monkeypatch.setattr(plt, "close", keep)
    bench.plot({50: series}, {50: [30, 40]}, tmp_path)
    labels, looks = drawn["Schedulability rate, n = 50"]
    assert labels == ["A", "B", "C"] and len(set(looks)) == 3  # identical curves A, B stay apart
    assert drawn["Scheduled load / worst load, n = 50"][0] == ["A", "B"]  # C has no load: no legend entry
