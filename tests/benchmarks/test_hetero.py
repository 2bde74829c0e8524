"""Command-line benchmarks of the hetero family: OR-Library sets and the heterogeneous comparison."""

import re
from importlib import resources

import pytest

from benchmarks import executor
from benchmarks import hetero as bench_hetero
from benchmarks import orlib
from heuristics import hetero as hetero_heur
from instances import hetero


def _rows(out):
    return {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}


def test_orlib_cli_small_run(capsys):
    assert orlib.main(["--instances", "1,2", "--ils-time", "30", "--ils-iters", "30", "--exact-limit", "0.3",
                       "--backends", "cpsat", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert {"fifo", "greedy", "sagreedy", "ils", "cpsat"} <= set(rows)
    # ILS reaches the known optimum of wt40-1 (913) and wt40-2 (1225) within 30 kicks
    assert re.match(r"\| ils \| 2/2 \| 0\.000 \|", rows["ils"])
    # CP-SAT proves nothing on n = 40 in 0.3 s but returns the warm start for each
    assert re.match(r"\| cpsat \| 0/2 \| 0/0 \| [\d.]+ \|", rows["cpsat"])
    assert rows["cpsat"].rstrip().endswith("| 0 |")  # a schedule for every instance


def test_orlib_any_file_with_values_bound_and_ssdp(tmp_path, capsys):
    # a small OR-Library file of our own: write it, read it back, bound and prove it
    pbs = hetero.generate_orlib_set(8, seed=5)
    path = tmp_path / "wt8.txt"
    hetero.write_orlib(pbs, path)
    from milp import solve_optimal

    opt = [solve_optimal(pb, time_limit=30).objective for pb in pbs[:3]]
    values = tmp_path / "wtopt8.txt"
    values.write_text("\n".join(f"{v:g}" for v in opt + [999999] * (len(pbs) - 3)) + "\n")
    assert orlib.main(["--file", str(path), "--values", str(values), "--instances", "1-3", "--methods", "ils",
                       "--ils-iters", "20", "--ils-time", "30", "--bound", "--bound-time", "20",
                       "--exact-limit", "30", "--markdown", "--quiet"]) == 0
    out = capsys.readouterr().out
    tables = out.strip().split("\n\n")
    assert len(tables) == 3 and all(t.startswith("| ") for t in tables)
    rows = _rows(out)
    assert re.match(r"\| ils \| 3/3 \|", rows["ils"])
    assert re.match(r"\| auto \| 3/3 \| 3/3 \|", rows["auto"])


def test_orlib_bound_above_a_known_value_is_an_error(tmp_path, capsys):
    values = tmp_path / "low.txt"
    values.write_text("\n".join(["1"] * 125) + "\n")
    path = resources.files("instances").joinpath("data", "orlib-wt", "wt40.txt")
    assert orlib.main(["--file", str(path), "--values", str(values), "--instances", "1", "--no-methods", "--bound",
                       "--bound-time", "120", "--no-exact", "--quiet"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.orlib: error: ") and "above the known value" in err[0]


@pytest.mark.parametrize("args", [["--methods", "tabu"], ["--instances", "0-3"], ["--instances", "x"],
                                  ["--backends", "gurobi"], ["--ils-time", "0"], ["--executor", "spark"],
                                  ["--scheduler", "tcp://h:1"], ["--values", "x.txt"],
                                  ["--file", "/nonexistent/wt.txt"], ["--generate", "10"]])
def test_orlib_cli_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        orlib.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m benchmarks.orlib: error:")


def _strip_times(recs):
    if isinstance(recs, dict):
        return {k: _strip_times(v) for k, v in recs.items() if not k.endswith("time_s")}
    if isinstance(recs, list):
        return [_strip_times(r) for r in recs]
    return recs


def test_orlib_local_processes_and_dask_agree(dask_scheduler):
    # deterministic ILS (a kick count), the bound and ssdp proofs: identical records on every executor
    cfg = orlib.Config(methods=("greedy", "ils"), ils_time=60.0, ils_iters=10, bound=True, bound_time=60.0,
                       backends=("auto",), exact_limit=60.0)
    pbs = [hetero.generate_orlib(12, tf=tf, rdd=0.4, seed=s) for s, tf in enumerate((0.2, 0.6, 0.8))]
    known = [orlib.solve_optimal(pb, time_limit=60).objective for pb in pbs]
    ks = [3, 1, 2]
    local = orlib.run(cfg, pbs, known, ks)
    pool = orlib.run(cfg, pbs, known, ks, executor.Executor("local", jobs=2))
    dask = orlib.run(cfg, pbs, known, ks, executor.Executor("dask", scheduler=dask_scheduler))
    assert _strip_times(local) == _strip_times(pool) == _strip_times(dask)
    assert [r["k"] for r in dask] == ks and all(r["exact"]["auto"]["proven"] for r in dask)


def test_hetero_cli_small_run(capsys):
    assert bench_hetero.main(["--n", "6", "--seeds", "2", "--ils-time", "5", "--ils-iters", "20",
                              "--time-limit", "20", "--quiet"]) == 0
    out = capsys.readouterr().out
    exact = [line for line in out.splitlines() if line.startswith("| 6 | 2/2")]
    assert len(exact) == 1  # both proven
    rows = [line for line in out.splitlines() if line.startswith("| 6 | ") and line.count("|") == 12]
    assert [r.split("|")[2].strip() for r in rows] == ["fifo", "greedy", "sagreedy", "ils"]


def test_hetero_table_shows_the_six_metrics_of_each_method(capsys):
    # the heuristics table's metric columns are the means of instances.hetero.metrics over the seeds,
    # recomputed here from the deterministic heuristics' own schedules
    assert bench_hetero.main(["--n", "7", "--seeds", "3", "--ils-time", "5", "--ils-iters", "5",
                              "--time-limit", "20", "--markdown", "--quiet"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "| method |" in line)
    cells = [c.strip() for c in header.strip("|").split("|")]
    names = ["TWCT (7)", "ACT (8)", "DMC (9)", "DMR (10)", "C_max (11)", "eta (12)"]
    assert cells[4:10] == [f"mean {h}" for h in names]
    rows = {line.split("|")[2].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in out.splitlines() if line.startswith("| 7 | ") and line.count("|") == 12}
    assert set(rows) == {"fifo", "greedy", "sagreedy", "ils"}
    pbs = [hetero.generate(7, seed=s) for s in range(3)]
    for name, method in (("fifo", hetero_heur.fifo), ("greedy", hetero_heur.greedy)):
        ms = [hetero.metrics(pb, method(pb)) for pb in pbs]
        want = [sum(getattr(m, k) for m in ms) / 3 for k in ("twct", "act", "dmc", "dmr", "makespan", "utilisation")]
        got = [float(c) for c in rows[name][4:10]]
        assert got == pytest.approx(want, abs=0.051), name
        assert all(m.twct >= m.twt for m in ms)  # flow times are at least the tardiness of each task


def test_hetero_bound_table_on_chosen_seeds(capsys):
    # --bound-time adds the bound's table; the bound never exceeds a proven optimum nor any heuristic's
    # value (the run stops with status 1 otherwise); --first-seed picks the instances
    cfg = bench_hetero.Config(ns=(9,), seeds=2, first_seed=40, bound_time=10.0, time_limit=30.0, ils_iters=10,
                              ils_time=10.0)
    recs = bench_hetero.run(cfg)
    assert [r["seed"] for r in recs] == [40, 41]
    for r in recs:
        best = min([r["best"]] + [v["value"] for v in r["methods"].values()])
        assert 0 <= r["bound"] <= best + 1e-6 * max(1.0, best)
    table = bench_hetero.tables(cfg, recs)["bound"]
    row = [line for line in table.splitlines() if line.startswith("| 9 |")]
    assert len(row) == 1 and float(row[0].split("|")[2]) >= 0
    assert bench_hetero.main(["--n", "5", "--seeds", "1", "--first-seed", "7", "--bound-time", "5", "--ils-iters", "5",
                              "--time-limit", "20", "--markdown", "--quiet"]) == 0
    assert len(capsys.readouterr().out.strip().split("\n\n")) == 3


def test_hetero_local_and_dask_agree(capsys, dask_scheduler):
    argv = ["--n", "5", "--seeds", "2", "--ils-time", "30", "--ils-iters", "10", "--time-limit", "30",
            "--markdown", "--quiet"]
    assert bench_hetero.main(argv) == 0
    local = capsys.readouterr().out
    assert bench_hetero.main(argv + ["--executor", "dask", "--scheduler", dask_scheduler]) == 0
    dask = capsys.readouterr().out

    def no_times(text):
        # drop the time columns (the last one or two cells of each row)
        return [re.sub(r"\| [\d.]+ \| [\d.]+ \|$", "|", line) if line.count("|") == 7 else
                re.sub(r"\| [\d.]+ \|$", "|", line) for line in text.splitlines()]

    assert no_times(local) == no_times(dask)
    assert "| 5 | 2/2 |" in local


@pytest.mark.parametrize("args", [["--n", "a"], ["--gpus", "B200"], ["--seeds", "0"], ["--rdd", "0"],
                                  ["--backend", "ssdp"], ["--executor", "dask", "--scheduler", "h:1"]])
def test_hetero_cli_bad_arguments_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_hetero.main(args)
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_orlib_generated_set_reuses_saved_reference_values(tmp_path, capsys):
    # --save-values writes one exact value per chosen instance; --values reads that file back for the
    # same --generate/--instances, and the table compares with it instead of recomputing references
    saved = tmp_path / "ref.txt"
    common = ["--generate", "30", "--gen-seed", "4", "--instances", "2,7", "--methods", "ils", "--ils-iters", "5",
              "--ils-time", "30", "--no-exact", "--markdown", "--quiet"]
    assert orlib.main(common + ["--reference-iters", "20", "--save-values", str(saved)]) == 0
    first = capsys.readouterr().out
    vals = saved.read_text().split()
    assert len(vals) == 2 and all(v.isdigit() for v in vals)
    assert orlib.main(common + ["--values", str(saved)]) == 0
    assert _rows(capsys.readouterr().out)["ils"].split("|")[2:6] == _rows(first)["ils"].split("|")[2:6]
    saved.write_text("1 2 3\n")
    with pytest.raises(SystemExit) as exc:
        orlib.main(common + ["--values", str(saved)])
    assert exc.value.code == 2
    assert "expected 125 values (one per instance) or 2" in capsys.readouterr().err
