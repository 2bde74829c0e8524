"""Bad input files, one case per known fault: a one-line InstanceError naming the file, quickly.

Each row is a file some loader once crashed on, ran without bound on, or
read silently wrong (a size of 4.7 read as 4, ``"isolated": "false"`` read
as true, two keys of the same name of which the last won). The fuzz test
(test_loaders_fuzz.py) explores around these; this table pins them down.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from instances import case, files, gpus, hetero, mig, pairing
from instances import realtime as rt
from instances.errors import InstanceError, OutputError

A30_TIMES = {"1": 4.0, "2": 2.5, "4": 1.5}
DEEP = "[" * 2000 + "]" * 2000
HUGE_INT = "9" * 5000


def problem_text(**extra) -> str:
    data = {"gpu": "A30", "tasks": [{"name": "t0", "times": dict(A30_TIMES)}]}
    data.update(extra)
    return json.dumps(data)


def task_text(task_json: str) -> str:
    return '{"gpu": "A30", "tasks": [' + task_json + "]}"


def inline_gpu(**changes) -> str:
    spec = gpus.get("A30").to_dict()
    spec["name"] = "Custom"
    spec.update(changes)
    return json.dumps({"gpu": spec, "tasks": [{"name": "t0", "times": A30_TIMES}]})


def flat_gpu(k: int) -> dict:
    """One root over k single slices: 2**k + 1 sets of compatible placements."""
    return {"name": f"Flat{k}", "slices": k,
            "placements": [{"size": k, "start": 0}] + [{"size": 1, "start": i} for i in range(k)],
            "tree": {f"{k}@0": [f"1@{i}" for i in range(k)]}}


def schedule_text(**changes) -> str:
    data = {"gpu": "A30", "tasks": [{"task": "t0", "placement": {"size": 4, "start": 0}, "start": 0.13,
                                      "end": 1.63}],
            "reconfigurations": [{"op": "create", "placement": {"size": 4, "start": 0}, "start": 0.0,
                                  "end": 0.13}]}
    data.update(changes)
    return json.dumps(data)


def hetero_text(**task_changes) -> str:
    task = {"name": "a", "workload": 3, "deadline": 2}
    task.update(task_changes)
    return json.dumps({"gpus": [{"name": "g", "speed": 1}], "tasks": [task]})


def realtime_text(sms=8, **task_changes) -> str:
    task = {"name": "k", "period": 10, "type": "compute", "a_n": 4}
    task.update(task_changes)
    return json.dumps({"sms": sms, "tasks": [task]})


def case_text(edit) -> str:
    data = case.generate("A", ratio="1:1", n=2, seed=0).to_dict()
    edit(data)
    return json.dumps(data)


def load_plan(path) -> pairing.Plan:
    """A pairing plan file (the family keeps plans in memory; this is the file a user would write)."""
    return pairing.Plan.from_json(files.read_text(path), source=str(path))


def plan_text(**set_changes) -> str:
    job_set = {"jobs": ["j0", "j1"], "config": {"cores": [16, 16], "gpcs": [3, 4], "cpu_cap": 175.0,
                                                "gpu_cap": 175.0}, "time": 2.5}
    job_set.update(set_changes)
    return json.dumps({"policy": "p", "sets": [job_set], "info": {}})


def trace_text(edit) -> str:
    data = case.Trace("hand", (case.JobRun("a", 0.0, 0.0, 5.5),), (case.TaskRun("a", 0, 1, 0.5, 5.5),),
                      (case.Hold("a", 1, 0.0, 5.5),), workers=4).to_dict()
    edit(data)
    return json.dumps(data)


JOBS_HEADER = "name,app,solo_time\n"
TABLE_HEADER = "app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown\n"

CASES = [
    # -- the shared reader, through the MIG problem loader
    ("nesting 2,000 deep", mig.load, '{"gpu": "A30", "tasks": ' + DEEP + "}", "nested deeper than 64 levels"),
    ("5,000-digit number", mig.load, problem_text(release=0)[:-1] + ', "x": ' + HUGE_INT + "}",
     "an integer of 5000 digits; at most 310"),
    ("not UTF-8", mig.load, b'{"gpu": "A30",\n "tasks": [{"name": "\xff"}]}', "not UTF-8 text (byte 0xff at line 2"),
    ("duplicate key", mig.load, '{"gpu": "A30", "gpu": "A100", "tasks": []}', "key 'gpu' appears twice"),
    ("sizes 1 and 01", mig.load, task_text('{"name": "t0", "times": {"1": 4, "01": 3, "2": 2.5, "4": 1.5}}'),
     "size '01' is not an integer written in plain digits"),
    ("unknown top-level field", mig.load, problem_text(relase=50), "field relase: unknown field"),
    ("unknown batch field", mig.load,
     json.dumps({"gpu": "A30", "batches": [{"release": 0, "tasks": [], "prio": 1}]}), "batches[0].prio"),
    ("lone surrogate name", mig.load, task_text('{"name": "t\\ud800", "times": {"1": 4, "2": 2.5, "4": 1.5}}'),
     "lone surrogate U+D800"),
    ("newline in a name", mig.load, task_text('{"name": "a\\nb", "times": {"1": 4, "2": 2.5, "4": 1.5}}'),
     "control character U+000A"),
    ("NaN time", mig.load, task_text('{"name": "t0", "times": {"1": NaN, "2": 2.5, "4": 1.5}}'), "finite"),
    ("1e400 time", mig.load, task_text('{"name": "t0", "times": {"1": 1e400, "2": 2.5, "4": 1.5}}'), "finite"),
    ("time as text", mig.load, task_text('{"name": "t0", "times": {"1": "4", "2": 2.5, "4": 1.5}}'),
     "is not a number"),
    ("release true", mig.load, problem_text(release=True), "field release: must be a number, got True"),
    ("memory as text", mig.load,
     task_text('{"name": "t0", "times": {"1": 4, "2": 2.5, "4": 1.5}, "memory_gb": "8"}'), "field memory_gb"),
    # -- inline GPU specs
    ("slices 1e9", mig.load, inline_gpu(slices=1e9), "field gpu.slices: 1000000000.0 is not an integer"),
    ("slices 10**9", mig.load, inline_gpu(slices=10**9), "must be an integer between 1 and 64"),
    ("slices as text", mig.load, inline_gpu(slices="4"), "field gpu.slices: '4' is not an integer"),
    ("placement size 4.7", mig.load,
     inline_gpu(placements=[{"size": 4.7, "start": 0}]), "gpu.placements[0].size: 4.7 is not an integer"),
    ("300 placements", mig.load, inline_gpu(placements=[{"size": 1, "start": 0}] * 300),
     "300 placements; at most 256"),
    ("2**16 + 1 compatible sets", mig.load, json.dumps({"gpu": flat_gpu(16), "tasks": []}),
     "more than 10,000 sets of compatible placements"),
    ("unknown spec field", mig.load, inline_gpu(slice=4), "field gpu.slice: unknown field"),
    ("tree key written 04@0", mig.load, inline_gpu(tree={"04@0": ["2@0", "2@2"]}), "must be written size@start"),
    ("create time as text", mig.load, inline_gpu(create_time={"1": "0.1", "2": 0.1, "4": 0.1}),
     "create_time.1: must be a number"),
    # -- MIG schedules
    ("schedule tasks 5", mig.Schedule.load, schedule_text(tasks=5), "field tasks: must be a list, got 5"),
    ("schedule reconfigurations 7", mig.Schedule.load, schedule_text(reconfigurations=7),
     "field reconfigurations: must be a list, got 7"),
    ("schedule tasks null", mig.Schedule.load, schedule_text(tasks=None), "field tasks: must be a list, got None"),
    ("placement size 4.7 (schedule)", mig.Schedule.load,
     schedule_text(tasks=[{"task": "t0", "placement": {"size": 4.7, "start": 0}, "start": 0, "end": 1}]),
     "tasks[0].placement.size: 4.7 is not an integer"),
    ("placement size true (schedule)", mig.Schedule.load,
     schedule_text(tasks=[{"task": "t0", "placement": {"size": True, "start": 0}, "start": 0, "end": 1}]),
     "tasks[0].placement.size: True is not an integer"),
    ("start as text (schedule)", mig.Schedule.load,
     schedule_text(tasks=[{"task": "t0", "placement": {"size": 4, "start": 0}, "start": "0", "end": 1}]),
     "tasks[0].start: must be a number"),
    ("unknown schedule field", mig.Schedule.load, schedule_text(makespam=3), "field makespam: unknown field"),
    ("schedule nesting", mig.Schedule.load, '{"gpu": "A30", "tasks": ' + DEEP + "}", "nested deeper"),
    # -- hetero
    ("hetero not UTF-8", hetero.load, b'{"gpus": [], "tasks": [{"name": "\xe9"}]}', "not UTF-8 text"),
    ("hetero nesting", hetero.load, '{"gpus": ' + DEEP + "}", "nested deeper than 64 levels"),
    ("hetero 5,000 digits", hetero.load, '{"gpus": [{"name": "g", "speed": ' + HUGE_INT + "}]}",
     "an integer of 5000 digits"),
    ("hetero speed as text", hetero.load, json.dumps({"gpus": [{"name": "g", "speed": "1"}], "tasks": []}),
     "gpus.g.speed: must be a number"),
    ("hetero unknown task field", hetero.load, hetero_text(deadlne=3), "task a: field deadlne: unknown field"),
    ("hetero name not a string", hetero.load, hetero_text(name=5), "field name: 5 is not a string"),
    ("hetero duplicate key", hetero.load, '{"gpus": [{"name": "g", "speed": 1, "speed": 2}], "tasks": []}',
     "key 'speed' appears twice"),
    ("hetero weight 1e308", hetero.load, hetero_text(weight=1e308), "field tasks: numbers too large"),
    ("hetero arrival 1e308", hetero.load, hetero_text(arrival=1e308), "field tasks: numbers too large"),
    ("hetero speed 1e-300", hetero.load,
     json.dumps({"gpus": [{"name": "g", "speed": 1e-300}], "tasks": [{"name": "a", "workload": 3, "deadline": 2}]}),
     "field tasks: numbers too large"),
    # -- pairing CSV
    ("jobs not UTF-8", pairing.load_jobs, JOBS_HEADER.encode() + b"j\xff,lud,3\n", "not UTF-8 text (byte 0xff at line 2"),
    ("jobs field over 131,072 characters", pairing.load_jobs, JOBS_HEADER + "j," + "x" * 140_000 + ",3\n",
     "longer than 131,072 characters"),
    ("jobs column twice", pairing.load_jobs, "name,app,solo_time,app\nj,lud,3,lud\n", "'app' named twice"),
    ("jobs 1_0", pairing.load_jobs, JOBS_HEADER + "j,lud,1_0\n", "not a number: '1_0'"),
    ("jobs empty solo time", pairing.load_jobs, JOBS_HEADER + "j,lud,\n", "line 2: empty solo_time"),
    ("jobs bad quoting", pairing.load_jobs, JOBS_HEADER + 'j,"lu"d,3\n', "not valid CSV"),
    ("jobs newline in a name", pairing.load_jobs, JOBS_HEADER + '"a\nb",lud,3\n', "control character U+000A"),
    ("table not UTF-8", pairing.TableModel.from_csv, TABLE_HEADER.encode() + b"l\xfed,,32,8,175,175,1.2\n",
     "not UTF-8 text"),
    ("table share 1_6", pairing.TableModel.from_csv, TABLE_HEADER + "lud,srad,1_6/16,4/3,175,175,1.6\n",
     "expected integers joined by '/'"),
    # -- real-time
    ("sms 10**9", rt.load, realtime_text(sms=10**9), "field sms: must be an integer between 1 and 1024"),
    ("period as text", rt.load, realtime_text(period="10"), "task k: field period: must be a number"),
    ("realtime newline name", rt.load, realtime_text(name="a\nb"), "control character U+000A"),
    ("realtime unknown field", rt.load, realtime_text(perod=3), "field perod: unknown field"),
    ("realtime nesting", rt.load, '{"tasks": ' + DEEP + "}", "nested deeper"),
    ("realtime 5,000 digits", rt.load, '{"sms": ' + HUGE_INT + ', "tasks": []}', "an integer of 5000 digits"),
    # -- CASE
    ("isolated 'false'", case.load, case_text(lambda d: d["jobs"][0].update(isolated="false")),
     "field isolated: 'false' is not true or false"),
    ("warps 1.7", case.load, case_text(lambda d: d["jobs"][0]["tasks"][0].update(warps=1.7)),
     "tasks[0].warps: 1.7 is not an integer"),
    ("duration '5'", case.load, case_text(lambda d: d["jobs"][0]["tasks"][0].update(duration="5")),
     "tasks[0].duration: must be a number, got '5'"),
    ("slowdown [1]", case.load, case_text(lambda d: d.update(slowdown=[1])), "field slowdown: must be an object"),
    ("case unknown field", case.load, case_text(lambda d: d["jobs"][0].update(isolatd=True)),
     "field isolatd: unknown field"),
    ("case unknown GPU", case.load, case_text(lambda d: d["config"].update(model="B300")),
     "field config.model: unknown GPU 'B300'"),
    ("case overlapping layout", case.load, case_text(lambda d: d["config"]["layouts"][0].append([1, 0])),
     "field config.layouts[0]"),
    ("case durations 1e308", case.load, case_text(lambda d: d["jobs"][0]["tasks"][0].update(duration=1e308)),
     "field tasks: job lengths too large"),
    ("case nesting", case.load, '{"jobs": ' + DEEP + "}", "nested deeper"),
    # -- pairing plans
    ("plan sets 5", load_plan, '{"sets": 5}', "field sets: must be a list, got 5"),
    ("plan unknown set field", load_plan, plan_text(tme=3), "field sets[0].tme: unknown field"),
    ("plan time as text", load_plan, plan_text(time="2.5"), "field sets[0].time: must be a number, got '2.5'"),
    ("plan NaN time", load_plan, plan_text()[:-1].replace('"time": 2.5', '"time": NaN') + "}",
     "field sets[0].time: must be a finite number"),
    ("plan share 16.5", load_plan,
     plan_text(config={"cores": [16.5, 16], "gpcs": [3, 4], "cpu_cap": 175, "gpu_cap": 175}),
     "field sets[0].config.cores[0]: 16.5 is not an integer"),
    ("plan duplicate key", load_plan, '{"sets": [], "sets": []}', "key 'sets' appears twice"),
    ("plan nesting", load_plan, '{"sets": ' + DEEP + "}", "nested deeper"),
    # -- CASE traces
    ("trace instance 1.5", case.load_trace, trace_text(lambda d: d["tasks"][0].update(instance=1.5)),
     "task a: field tasks[0].instance: 1.5 is not an integer"),
    ("trace end as text", case.load_trace, trace_text(lambda d: d["jobs"][0].update(end="5.5")),
     "task a: field jobs[0].end: must be a number, got '5.5'"),
    ("trace unknown field", case.load_trace, trace_text(lambda d: d["holds"][0].update(instnce=1)),
     "task a: field holds[0].instnce: unknown field"),
    ("trace workers true", case.load_trace, trace_text(lambda d: d.update(workers=True)),
     "field workers: True is not an integer"),
    ("trace makespan off", case.load_trace, trace_text(lambda d: d.update(makespan=9.0)),
     "field makespan: 9.0 is not the last job end"),
    ("trace 1e400 start", case.load_trace, trace_text(lambda d: d["jobs"][0].update(start=0.25)).replace(
        '"start": 0.25', '"start": 1e400'), "field jobs[0].start: must be a finite number"),
    ("trace duplicate key", case.load_trace, '{"policy": "p", "policy": "q", "jobs": [], "tasks": []}',
     "key 'policy' appears twice"),
]


@pytest.mark.parametrize("load,content,needle", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_file_gives_one_located_line(tmp_path, load, content, needle):
    path = tmp_path / "input.data"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    t0 = time.perf_counter()
    with pytest.raises(InstanceError) as info:
        load(str(path))
    assert time.perf_counter() - t0 < 5.0
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and msg.encode("utf-8"), repr(msg)
    assert msg.startswith(str(path)), msg
    assert needle in msg, msg


@pytest.mark.parametrize("load", [mig.load, hetero.load, rt.load, case.load, pairing.load_jobs,
                                  pairing.TableModel.from_csv, mig.Schedule.load, gpus.load, case.load_trace,
                                  load_plan])
def test_missing_directory_and_oversized_files(tmp_path, load):
    with pytest.raises(InstanceError, match="missing.json: file not found"):
        load(str(tmp_path / "missing.json"))
    with pytest.raises(InstanceError, match="is a directory"):
        load(str(tmp_path))
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(files.MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(InstanceError, match="larger than 32 MiB, the limit for input files"):
        load(str(big))


def test_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "p.json"
    path.write_bytes(b"\xef\xbb\xbf" + problem_text().encode())
    assert mig.load(path).n == 1
    csv_path = tmp_path / "q.csv"
    csv_path.write_bytes(b"\xef\xbb\xbf" + (JOBS_HEADER + "j,lud,3\n").encode())
    assert pairing.load_jobs(csv_path)[0].name == "j"


def test_case_family_has_a_file_loader(tmp_path):
    w = case.generate("D", ratio="1:2", n=6, seed=4)
    case.save(w, tmp_path / "w.json")
    assert case.load(tmp_path / "w.json") == w
    assert case.from_dict(w.to_dict()) == w


def test_gpu_spec_may_not_redefine_a_builtin(tmp_path):
    spec = gpus.get("A100").to_dict()
    spec["create_time"]["1"] = 9.0
    (tmp_path / "gpu.json").write_text(json.dumps(spec))
    with pytest.raises(InstanceError, match="'A100' is a built-in GPU"):
        gpus.load(tmp_path / "gpu.json")
    assert gpus.get("A100").create_time[1] == 0.16


def test_compatible_set_bound_keeps_partitions_quick():
    t0 = time.perf_counter()
    g = gpus.from_dict(flat_gpu(13))  # 8,193 sets: within the bound
    assert len(g.partitions()) == 2
    assert time.perf_counter() - t0 < 5.0
    with pytest.raises(InstanceError, match="more than 10,000"):
        gpus.from_dict(flat_gpu(14))


@pytest.mark.parametrize("write", [
    lambda p: mig.save(mig.generate(3, "A30", seed=0), p),
    lambda p: mig.Schedule("A30", []).save(p),
    lambda p: case.save(case.generate("A", n=2, seed=0), p),
    lambda p: case.Trace("t", (), ()).save(p),
])
def test_unwritable_output_is_an_output_error(write):
    with pytest.raises(OutputError, match="/nonexistent/out.json: cannot write"):
        write("/nonexistent/out.json")


def test_error_messages_are_one_line_whatever_the_name():
    err = InstanceError("bad\ntime", source="a\u2028b.json", task="t\ud800", field="x\ny")
    assert len(str(err).splitlines()) == 1
    str(err).encode("utf-8")
    with pytest.raises(InstanceError) as info:
        mig.Problem("A30", [mig.Task("two\nlines", {1: 4.0, 2: 2.5, 4: 1.5})])
    assert len(str(info.value).splitlines()) == 1


# ---------------------------------------------------------------------------
# The command line, in a real process (a traceback would show there)

def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-m", "instances.mig", *args], capture_output=True, text=True,
                          cwd=root, env={**os.environ, **(env or {})}, timeout=120)


def assert_one_error_line(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    # the one error format (instances.console); a subcommand's argument errors name it
    assert len(lines) == 1 and re.match(r"python -m (instances\.mig( \w+)?|heuristics\.far): error: ", lines[0]), \
        r.stderr
    assert "Traceback" not in r.stderr


def test_cli_unwritable_outputs(tmp_path):
    assert_one_error_line(r := cli("generate", "--n", "3", "--out", "/nonexistent/x.json"))
    assert "/nonexistent/x.json: cannot write" in r.stderr
    problem, schedule = tmp_path / "p.json", tmp_path / "s.json"
    problem.write_text(problem_text())
    schedule.write_text(schedule_text(tasks=[]))
    assert_one_error_line(r := cli("plot", str(schedule), "--out", "/nonexistent/g.png"))
    assert "/nonexistent/g.png: cannot write" in r.stderr
    assert_one_error_line(r := cli("plot", str(schedule), "--out", str(tmp_path / "g.xyz")))
    assert "unsupported image format '.xyz'" in r.stderr


def test_cli_bad_inputs_and_arguments(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpu": "A30", "tasks": ' + DEEP + "}")
    good = tmp_path / "s.json"
    good.write_text(schedule_text())
    assert_one_error_line(r := cli("check", str(bad), str(good)))
    assert "nested deeper than 64 levels" in r.stderr
    assert_one_error_line(cli("generate", "--n", "0", "--out", str(tmp_path / "x.json")))
    assert_one_error_line(cli("generate", "--n", "3", "--seed", "-1", "--out", str(tmp_path / "x.json")))
    assert_one_error_line(cli("generate", "--n", "3", "--gpu", "B300", "--out", str(tmp_path / "x.json")))
    assert_one_error_line(cli())


def test_cli_prints_names_the_terminal_cannot_show(tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"gpu": "A30", "tasks": [{"name": "naïve-名", "times": A30_TIMES}]}))
    schedule = tmp_path / "s.json"
    schedule.write_text(schedule_text(tasks=[], reconfigurations=[]))
    r = cli("check", str(problem), str(schedule), env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "na\\xefve-\\u540d" in r.stdout and r.stdout.splitlines()[-1] == "1 violation(s)"


def test_cli_help_describes_every_option_with_its_default():
    for sub in ("generate", "check", "plot"):
        r = cli(sub, "--help")
        assert r.returncode == 0
        text = " ".join(r.stdout.split())
        options = [w.strip("[],") for w in text.split() if w.startswith("--") and w != "--help"]
        for opt in set(options):
            block = text.split(opt, 2)[-1].split(" --")[0]  # the help after the option's second mention
            assert "default" in block, (sub, opt, block)


def test_cli_check_is_bounded_on_a_schedule_with_thousands_of_operations(tmp_path, capsys):
    """A 1 MB schedule repeating its operations 2,000 times once kept the checker busy for minutes."""
    from heuristics import far

    problem = mig.generate(5, "A30", seed=3)
    data = far.schedule(problem).to_dict()
    data["reconfigurations"] = data["reconfigurations"] * 2000
    mig.save(problem, tmp_path / "p.json")
    (tmp_path / "s.json").write_text(json.dumps(data))
    t0 = time.perf_counter()
    assert mig.main(["check", str(tmp_path / "p.json"), str(tmp_path / "s.json")]) == 1
    assert time.perf_counter() - t0 < 5.0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 violation(s)" and "a feasible schedule has at most 10" in out[0]


# ---------------------------------------------------------------------------
# FAR's command line, in a real process

def far_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-m", "heuristics.far", *args], capture_output=True, text=True,
                          cwd=root, env={**os.environ, **(env or {})}, timeout=120)


def far_main(*args: str) -> subprocess.CompletedProcess:
    """``python -m heuristics.far`` in this process (fast); the real process is tested below."""
    import contextlib
    import io

    from heuristics import far_cli as cli_module

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli_module.main(list(args))
        except SystemExit as exc:  # argparse
            rc = exc.code
    return subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())


def test_far_cli_unwritable_outputs_and_bad_arguments(tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(problem_text())
    for args, needle in [
        (("--json", "/nonexistent/s.json"), "/nonexistent/s.json: cannot write"),
        (("--plot", "/nonexistent/g.png"), "/nonexistent/g.png: cannot write"),
        (("--json", str(tmp_path)), "it is a folder, not a file"),
        (("--json", str(problem) + "/s.json"), "cannot write"),
        (("--plot", str(tmp_path / "g.xyz")), "unsupported image format '.xyz'"),
        (("--gpu", "B300"), "unknown GPU 'B300'"),
        (("--method", "nope"), "invalid choice"),
    ]:
        r = far_main(str(problem), *args)
        assert_one_error_line(r)
        assert needle in r.stderr, (args, r.stderr)
    assert_one_error_line(far_main())
    deep = tmp_path / "deep.json"
    deep.write_text('{"gpu": "A30", "tasks": ' + DEEP + "}")
    assert_one_error_line(r := far_main(str(deep)))
    assert "nested deeper than 64 levels" in r.stderr
    # and in a real process, where a traceback would show
    assert_one_error_line(r := far_cli(str(problem), "--json", "/nonexistent/s.json"))
    assert "/nonexistent/s.json: cannot write" in r.stderr


def test_far_cli_huge_times_are_one_line(tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"gpu": "A30", "tasks": [{"name": f"t{i}", "times": {"1": 1e308, "2": 1e308,
                                                                                        "4": 1e308}}
                                                           for i in range(3)]}))
    assert_one_error_line(r := far_main(str(problem)))
    assert "too large" in r.stderr


def test_far_cli_prints_names_the_terminal_cannot_show(tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"gpu": "A30", "tasks": [{"name": "naïve-名", "times": A30_TIMES}]}))
    r = far_cli(str(problem), "--json", str(tmp_path / "s.json"), env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "na\\xefve-\\u540d" in r.stdout
    assert mig.Schedule.load(tmp_path / "s.json").tasks[0].task == "naïve-名"


def test_far_cli_help_gives_every_default():
    r = far_main("--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for opt in ("--gpu", "--no-refine", "--json", "--plot", "--method"):
        block = text.split(opt, 2)[-1].split(" --")[0]
        assert "default" in block, (opt, block)


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_exact_solve_refuses_times_that_overflow_like_far(backend):
    """Times of 1e308 once reached the checker as inf and failed inside it (a TypeError)."""
    from milp import solve_optimal

    huge = mig.Problem("A30", [mig.Task(f"t{i}", {s: 1e308 for s in (1, 2, 4)}) for i in range(3)])
    with pytest.raises(InstanceError, match="task times too large"):
        solve_optimal(huge, backend=backend, time_limit=5)
    # without reconfiguration times: next to 1e300 s tasks, 0.1 s create times would vanish (check_scale)
    big = mig.Problem("A30", [mig.Task(f"t{i}", {s: 1e300 for s in (1, 2, 4)}) for i in range(3)])
    big = big.without_reconfiguration()
    res = solve_optimal(big, backend=backend, time_limit=20)
    assert mig.check(big, res.schedule) == [] and res.lower_bound <= res.objective


def test_checker_compares_infinite_times_without_failing():
    s = mig.Schedule("A30", [mig.ScheduledTask("t0", gpus.get("A30").placement(4, 0), 0.13, float("inf"))],
                     [mig.Reconfiguration("create", gpus.get("A30").placement(4, 0), 0.0, 0.13)])
    problem = mig.Problem("A30", [mig.Task("t0", A30_TIMES)])
    assert any("non-finite" in v for v in mig.check(problem, s))


def test_every_family_refuses_unprintable_names_built_in_code():
    """Names reach CLI output; built in code (not read from a file) they are checked alike."""
    import dataclasses

    for bad in ("t\ud800", "a\nb"):
        with pytest.raises(InstanceError, match="names must be one printable line"):
            mig.Problem("A30", [mig.Task(bad, {1: 4.0, 2: 2.5, 4: 1.5})])
        h = hetero.generate(3, ("T4",), seed=0).to_dict()
        h["tasks"][0]["name"] = bad
        with pytest.raises(InstanceError, match="names must be one printable line"):
            hetero.from_dict(h)
        r = rt.generate(n=3, utilization=1.0, sms=8, seed=0).to_dict()
        r["tasks"][0]["name"] = bad
        with pytest.raises(InstanceError, match="names must be one printable line"):
            rt.from_dict(r)
        c = case.generate("A", n=2, seed=0).to_dict()
        c["jobs"][0]["name"] = bad
        with pytest.raises(InstanceError, match="names must be one printable line"):
            case.from_dict(c)
        with pytest.raises(InstanceError, match="names must be one printable line"):
            dataclasses.replace(pairing.generate(3, seed=0)[0], name=bad)
    with pytest.raises(InstanceError, match="solo_time: must be a finite number > 0, got True"):
        pairing.Job("j", "lud", True)


def test_hetero_heuristics_on_the_largest_accepted_numbers():
    """Weights of 1e308 once ended in an AttributeError inside ILS; the bound keeps every sum finite."""
    import math

    from heuristics import hetero as heur

    data = hetero.generate(4, ("T4", "A100-80GB"), seed=0).to_dict()
    for t in data["tasks"]:
        t["weight"] = 1e200
    problem = hetero.from_dict(data)
    for name, method in heur.METHODS.items():
        assert math.isfinite(hetero.weighted_tardiness(problem, method(problem))), name
