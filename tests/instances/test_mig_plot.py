"""Gantt charts from the API and the command line."""

import json
import subprocess
import sys

from instances import mig


def tiny_schedule():
    p = mig.Problem("A100", [mig.Task("a", {1: 9.0, 2: 5.0, 3: 4.0, 4: 3.5, 7: 3.0}),
                             mig.Task("b", {1: 6.0, 2: 3.5, 3: 3.0, 4: 2.5, 7: 2.0})])
    g = p.gpu
    c30, c34 = g.create_time[3], g.create_time[3]
    s = mig.Schedule("A100", [mig.ScheduledTask("a", g.placement(3, 0), c30, c30 + 4.0),
                              mig.ScheduledTask("b", g.placement(3, 4), c30 + c34, c30 + c34 + 3.0)],
                     [mig.Reconfiguration("create", g.placement(3, 0), 0.0, c30),
                      mig.Reconfiguration("create", g.placement(3, 4), c30, c30 + c34)])
    assert mig.check(p, s) == []
    return p, s


def test_save_gantt_writes_a_png(tmp_path):
    p, s = tiny_schedule()
    out = mig.save_gantt([s, s], p.gpu, tmp_path / "g.png", titles=["one", "two"])
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_cli_generate_check_plot(tmp_path):
    p, s = tiny_schedule()
    mig.save(p, tmp_path / "p.json")
    s.save(tmp_path / "s.json")
    run = lambda *a: subprocess.run([sys.executable, "-m", "instances.mig", *a], capture_output=True, text=True)
    r = run("plot", str(tmp_path / "s.json"), "--out", str(tmp_path / "g.png"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    r = run("check", str(tmp_path / "p.json"), str(tmp_path / "s.json"))
    assert r.returncode == 0 and "feasible" in r.stdout
    bad = json.loads((tmp_path / "s.json").read_text())
    bad["makespan"] = 1.0
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    r = run("check", str(tmp_path / "p.json"), str(tmp_path / "bad.json"))
    assert r.returncode == 1 and "rule 6 (makespan)" in r.stdout
    r = run("generate", "--n", "5", "--gpu", "A30", "--out", str(tmp_path / "g.json"))
    assert r.returncode == 0 and mig.load(tmp_path / "g.json").n == 5
    r = run("check", str(tmp_path / "missing.json"), str(tmp_path / "s.json"))
    assert r.returncode == 2 and "missing.json: file not found" in r.stderr
