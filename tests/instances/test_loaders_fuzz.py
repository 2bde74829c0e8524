"""Fuzzing every family's loader (problems, and the solution readers) and the ``instances.mig`` command
line with malformed files.

Each example starts from a valid file of one family and mutates it: type
swaps and odd values at a random place of the JSON tree (``null``, ``"5"``,
``"false"``, ``4.7``, ``true``, ``1e9``, ``10**9``), literals that are not
finite (``NaN``, ``Infinity``, ``1e400``), integers of thousands of digits,
nesting thousands of levels deep, names with newlines, line separators or
lone surrogates, 200,000-character strings, deleted, unknown and duplicated
keys, lists blown up a thousandfold; then, on the bytes, truncation, a
byte-order mark and invalid UTF-8. CSV files get the same treatment per
cell (long fields, bad quoting, ``nan``, ``1_0``, duplicated columns).

The property, for every example: the loader returns a valid object (one
that writes and reads back equal) or raises ``InstanceError`` whose message
is one printable line naming the file, within a few seconds. The command
lines that read these files (``python -m instances.mig check/plot``,
``python -m heuristics.far``, ``python -m benchmarks.pairing --table``) exit
0, 1 or 2, with exactly one ``error:`` line on stderr for 2.

The default suite runs a dozen examples per family and command (a few
seconds in all); the ``slow`` run (``--run-slow``) a thousand or more.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instances import case, files, gpus, hetero, mig, mig_node, pairing
from instances import realtime as rt
from instances.errors import InstanceError

#: A loader may take this long on a fuzzed file (they are at most a few MB; the
#: machine may be shared, hence the margin).
SECONDS = 5.0


# ---------------------------------------------------------------------------
# Valid seed files

def _a30_problem() -> mig.Problem:
    return mig.generate(5, "A30", seed=3)


def _seed_objects() -> dict[str, Any]:
    from heuristics import case as case_heuristics
    from heuristics import far, far_node
    from heuristics import pairing as pairing_heuristics

    problem = _a30_problem()
    inline = problem.to_dict()
    toy = gpus.get("A30").to_dict()
    toy["name"] = "FuzzToy"
    inline["gpu"] = toy
    workload = mig.generate_workload([3, 2], [0.0, 4.0], gpu="A30", seed=1)
    node = mig_node.generate(5, "A30", gpus=2, seed=3)
    return {
        "mig_problem": problem.to_dict(),
        "mig_inline_gpu": inline,
        "mig_workload": workload.to_dict(),
        "mig_schedule": far.schedule(problem).to_dict(),
        "mig_node": node.to_dict(),
        "mig_node_schedule": far_node.schedule(node).to_dict(),
        "gpu_spec": gpus.get("A100").to_dict(),
        "hetero": hetero.generate(4, ("T4", "A100-80GB"), seed=0).to_dict(),
        "realtime": rt.generate(n=4, utilization=2.0, sms=8, seed=0).to_dict(),
        "case": case.generate("D", ratio="1:1", n=4, seed=0).to_dict(),
        "case_trace": case_heuristics.METHODS["case"](case.generate("D", ratio="1:1", n=4, seed=0)).to_dict(),
        "pairing_plan": json.loads(pairing_heuristics.algorithm1(
            pairing.PairingProblem(pairing.generate(5, seed=0))).to_json()),
        "pairing_problem": pairing.to_dict(pairing.PairingProblem(pairing.generate(4, seed=2), concurrency=3)),
        "pairing_table_problem": pairing.to_dict(_pairing_table_problem()),
        "pairing_queue": pairing.to_dict(pairing.WeightedQueue.random(4, seed=1, concurrency=3)),
    }


def _pairing_table_problem() -> pairing.PairingProblem:
    lud = pairing.Job("lud", "lud", **pairing.APPS["lud"])
    space = pairing.ConfigSpace()
    table = pairing.TableModel.from_model(pairing.AnalyticModel(), {"lud": lud}, space)
    return pairing.PairingProblem((lud, pairing.Job("lud-2", "lud", 7.5)), space, table)


SEEDS = _seed_objects()


# ---------------------------------------------------------------------------
# JSON text with values `json.dumps` will not write

@dataclass(frozen=True)
class Raw:
    """JSON text written as is (NaN, 1e400, a 5,000-digit integer, deep nesting)."""

    text: str


@dataclass(frozen=True)
class Dup:
    """An object written with a key twice."""

    pairs: tuple


def dump(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Dup):
        return "{" + ", ".join(json.dumps(k) + ": " + dump(v) for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(str(k)) + ": " + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


NASTY_VALUES = st.one_of(
    st.sampled_from([
        None, True, False, 0, -1, 1, 2, 4.7, -0.0, 1e-320, 1e9, 10**9, 2**63, 1e300, "", "5", "false", "true",
        "01", " 1", "1_0", "\u0663", "A100", "a\nb", "t\ud800", "\ud83d\ude00", "x\u2028y", "\x00", "tab\there",
        [], {}, [1], [[]], {"": 0}, "x" * 200_000,
        Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e400"), Raw("-1e400"), Raw("9" * 5000),
        Raw("9" * 311), Raw("1" + "0" * 308), Raw("[" * 3000 + "]" * 3000), Raw("[" * 70 + "]" * 70),
        Raw('{"a":' * 100 + "1" + "}" * 100), Raw('"\\ud800"'), Raw('"\\udfff\\ud800"'),
    ]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
# a fresh copy each time: a later mutation must not change the sampled constant
NASTY = NASTY_VALUES.map(copy.deepcopy)


def _places(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``value`` (dict keys and list indices)."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _places(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:6]):
            out += _places(v, path + (i,))
    return out


def _get(value: Any, path: tuple) -> Any:
    for p in path:
        value = value[p]
    return value


@st.composite
def mutated_json(draw, family: str) -> bytes:
    obj = copy.deepcopy(SEEDS[family])
    for _ in range(draw(st.integers(1, 3))):
        places = _places(obj)[1:]  # not the whole document: that is one rare case below
        if not places or draw(st.integers(0, 30)) == 17:  # not 0: hypothesis favours bounds
            obj = draw(NASTY)
            continue
        # from the end as often as from the start (hypothesis favours small indices)
        k = draw(st.integers(0, len(places) - 1))
        path = places[k if draw(st.booleans()) else -1 - k]
        op = draw(st.sampled_from(["replace", "replace", "delete", "extra", "dup", "blowup", "wrap"]))
        parent, key = _get(obj, path[:-1]), path[-1]
        if isinstance(parent, (Raw, Dup)):
            continue
        if op == "replace":
            parent[key] = draw(NASTY)
        elif op == "delete":
            del parent[key]
        elif op == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["relase", "name ", "x", "Times", "\u2028"]))] = draw(NASTY)
        elif op == "dup" and isinstance(parent, dict):
            # the parent object written with `key` twice (same or another value)
            again = parent[key] if draw(st.booleans()) else draw(NASTY)
            twice = Dup(tuple(parent.items()) + ((key, again),))
            if len(path) == 1:
                obj = twice
            else:
                _get(obj, path[:-2])[path[-2]] = twice
        elif op == "blowup" and isinstance(parent[key], list) and parent[key]:
            parent[key] = parent[key] * draw(st.sampled_from([2, 100, 2000]))
        elif op == "wrap":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"value": parent[key]}
    data = dump(obj).encode("utf-8", "surrogatepass")
    return draw(mutated_bytes(data))


@st.composite
def mutated_bytes(draw, data: bytes) -> bytes:
    op = draw(st.sampled_from(["none", "none", "truncate", "bom", "insert", "flip"]))
    if op == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif op == "bom":
        data = b"\xef\xbb\xbf" + data
    elif op in ("insert", "flip") and data:
        at = draw(st.integers(0, len(data) - 1))
        junk = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xed\xa0\x80", b"\xc3", b"\x00", b"\r", b"\x85",
                                     b"\xe2\x80\xa8", b'"', b",", b"{", b"]"]))
        data = data[:at] + junk + data[at + (op == "flip"):]
    return data


# ---------------------------------------------------------------------------
# CSV

def _jobs_csv() -> str:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "q.csv")
        pairing.save_jobs(pairing.generate(4, seed=2), p)
        return open(p).read()


def _table_csv() -> str:
    lines = pairing.SAMPLE_TABLE.read_text().splitlines()
    return "\n".join(lines[:6]) + "\n"


CSV_SEEDS = {"jobs": _jobs_csv(), "table": _table_csv()}

CSV_CELLS = st.one_of(
    st.sampled_from(["", "nan", "inf", "-1", "0", "1_0", "\u0663", " 5 ", "1e400", "9" * 5000, "1e-400",
                     '"a"b', '"a\nb"', '"a""b"', "x" * 140_000, "a\u2028b", "\x00", "16/16", "4/x", "+".join("ab"),
                     "lud", "name", "solo_time"]),
    st.text(max_size=6),
)


@st.composite
def mutated_csv(draw, which: str) -> bytes:
    rows = [line.split(",") for line in CSV_SEEDS[which].splitlines()]
    for _ in range(draw(st.integers(1, 3))):
        r = draw(st.integers(0, len(rows) - 1))
        r = r if draw(st.integers(0, 3)) == 2 else len(rows) - 1 - r  # mostly from the end: the data rows
        op = draw(st.sampled_from(["cell", "cell", "drop", "add", "duprow", "dupcol"]))
        if op == "cell" and rows[r]:
            rows[r][draw(st.integers(0, len(rows[r]) - 1))] = draw(CSV_CELLS)
        elif op == "drop" and rows[r]:
            rows[r].pop(draw(st.integers(0, len(rows[r]) - 1)))
        elif op == "add":
            rows[r].append(draw(CSV_CELLS))
        elif op == "duprow":
            rows.insert(r, list(rows[r]))
        elif op == "dupcol" and rows[r]:
            c = draw(st.integers(0, len(rows[r]) - 1))
            rows = [row[:c + 1] + row[c:c + 1] + row[c + 1:] for row in rows]
    text = "\n".join(",".join(row) for row in rows) + "\n"
    return draw(mutated_bytes(text.encode("utf-8", "surrogatepass")))


# ---------------------------------------------------------------------------
# The property

def _roundtrip_json(save: Callable, load: Callable) -> Callable:
    def check(obj: Any) -> None:
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "again")
            save(obj, p)
            assert load(p) == obj
    return check


def _gpu_spec_roundtrip(g: gpus.GPUSpec) -> None:
    assert gpus.from_dict(g.to_dict()) == g
    g.partitions()  # bounded by MAX_COMPATIBLE_SETS; must be quick


def _schedule_roundtrip(s: mig.Schedule) -> None:
    assert mig.Schedule.from_json(s.to_json()) == s


def _node_schedule_roundtrip(s: mig_node.NodeSchedule) -> None:
    assert mig_node.NodeSchedule.from_json(s.to_json()) == s


def _plan_roundtrip(p: pairing.Plan) -> None:
    assert pairing.Plan.from_json(p.to_json()) == p


def _load_plan(path: str) -> pairing.Plan:
    return pairing.Plan.from_json(files.read_text(path), source=path)


def _table_roundtrip(t: pairing.TableModel) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t.csv")
        t.to_csv(p)
        assert pairing.TableModel.from_csv(p).table == t.table


def _load_gpu_spec(path: str) -> gpus.GPUSpec:
    # gpus.load registers the GPU by name; keep the registry as it was
    before = dict(gpus._registry)
    try:
        return gpus.load(path)
    finally:
        gpus._registry.clear()
        gpus._registry.update(before)


LOADERS: dict[str, tuple[Callable[[str], Any], type | tuple, Callable[[Any], None]]] = {
    "mig_problem": (mig.load, (mig.Problem, mig.Workload), _roundtrip_json(mig.save, mig.load)),
    "mig_inline_gpu": (mig.load, (mig.Problem, mig.Workload), _roundtrip_json(mig.save, mig.load)),
    "mig_workload": (mig.load, (mig.Problem, mig.Workload), _roundtrip_json(mig.save, mig.load)),
    "mig_schedule": (mig.Schedule.load, mig.Schedule, _schedule_roundtrip),
    "mig_node": (mig_node.load, mig_node.NodeProblem, _roundtrip_json(mig_node.save, mig_node.load)),
    "mig_node_schedule": (mig_node.NodeSchedule.load, mig_node.NodeSchedule, _node_schedule_roundtrip),
    "gpu_spec": (_load_gpu_spec, gpus.GPUSpec, _gpu_spec_roundtrip),
    "hetero": (hetero.load, hetero.HeteroProblem, _roundtrip_json(hetero.save, hetero.load)),
    "realtime": (rt.load, rt.RealtimeProblem, _roundtrip_json(rt.save, rt.load)),
    "case": (case.load, case.Workload, _roundtrip_json(case.save, case.load)),
    "case_trace": (case.load_trace, case.Trace, _roundtrip_json(lambda t, p: t.save(p), case.load_trace)),
    "pairing_plan": (_load_plan, pairing.Plan, _plan_roundtrip),
    "pairing_problem": (pairing.load, pairing.PairingProblem, _roundtrip_json(pairing.save, pairing.load)),
    "pairing_table_problem": (pairing.load, pairing.PairingProblem, _roundtrip_json(pairing.save, pairing.load)),
    "pairing_queue": (pairing.load, (pairing.PairingProblem, pairing.WeightedQueue),
                      _roundtrip_json(pairing.save, pairing.load)),
    "jobs": (pairing.load_jobs, tuple, _roundtrip_json(pairing.save_jobs, pairing.load_jobs)),
    "table": (pairing.TableModel.from_csv, pairing.TableModel, _table_roundtrip),
}


def assert_clean_error(exc: BaseException, path: str) -> None:
    """The project's error, one line, naming the file."""
    assert isinstance(exc, InstanceError), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert len(msg.splitlines()) == 1, repr(msg)  # no line break of any kind
    msg.encode("utf-8")  # no lone surrogate, so any UTF-8 terminal prints it
    assert path in msg, msg


def run_loader(family: str, data: bytes) -> None:
    load, kind, roundtrip = LOADERS[family]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "input.csv" if family in ("jobs", "table") else "input.json")
        with open(path, "wb") as fh:
            fh.write(data)
        t0 = time.perf_counter()
        try:
            obj = load(path)
        except Exception as exc:  # noqa: BLE001 - the property is about which exceptions escape
            assert_clean_error(exc, path)
        else:
            assert isinstance(obj, kind)
            roundtrip(obj)
        assert time.perf_counter() - t0 < SECONDS


FUZZ = settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                deadline=None)
FUZZ_LONG = settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                     deadline=None)
JSON_FAMILIES = sorted(SEEDS)
CSV_FAMILIES = sorted(CSV_SEEDS)


def test_the_seeds_load():
    for family in JSON_FAMILIES:
        run_loader(family, dump(SEEDS[family]).encode())
    for family in CSV_FAMILIES:
        run_loader(family, CSV_SEEDS[family].encode())


@pytest.mark.parametrize("family", JSON_FAMILIES)
@FUZZ
@given(data=st.data())
def test_json_loaders_fail_cleanly(family, data):
    run_loader(family, data.draw(mutated_json(family)))


@pytest.mark.parametrize("family", CSV_FAMILIES)
@FUZZ
@given(data=st.data())
def test_csv_loaders_fail_cleanly(family, data):
    run_loader(family, data.draw(mutated_csv(family)))


@pytest.mark.slow
@pytest.mark.parametrize("family", JSON_FAMILIES)
@FUZZ_LONG
@given(data=st.data())
def test_json_loaders_fail_cleanly_long(family, data):
    run_loader(family, data.draw(mutated_json(family)))


@pytest.mark.slow
@pytest.mark.parametrize("family", CSV_FAMILIES)
@FUZZ_LONG
@given(data=st.data())
def test_csv_loaders_fail_cleanly_long(family, data):
    run_loader(family, data.draw(mutated_csv(family)))


# ---------------------------------------------------------------------------
# The command line

def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = mig.main(argv)
        except SystemExit as exc:  # argparse
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def assert_cli_outcome(rc: int, err: str) -> None:
    assert rc in (0, 1, 2), rc
    if rc == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and re.match(r"python -m instances\.mig( \w+)?: error: ", lines[0]), err
        err.encode("utf-8")
    else:
        assert err == ""


def _cli_check(problem: bytes, schedule: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p, s = os.path.join(d, "problem.json"), os.path.join(d, "schedule.json")
        open(p, "wb").write(problem)
        open(s, "wb").write(schedule)
        t0 = time.perf_counter()
        rc, out, err = run_cli(["check", p, s])
        assert_cli_outcome(rc, err)
        assert time.perf_counter() - t0 < SECONDS
        if rc in (0, 1):
            assert out.splitlines()[-1] in ("feasible", f"{rc and len(out.splitlines()) - 1} violation(s)")


PROBLEM_TEXT = dump(SEEDS["mig_problem"]).encode()
SCHEDULE_TEXT = dump(SEEDS["mig_schedule"]).encode()


@FUZZ
@given(data=st.data())
def test_cli_check_fails_cleanly(data):
    if data.draw(st.booleans()):
        _cli_check(data.draw(mutated_json("mig_problem")), SCHEDULE_TEXT)
    else:
        _cli_check(PROBLEM_TEXT, data.draw(mutated_json("mig_schedule")))


@pytest.mark.slow
@FUZZ_LONG
@given(data=st.data())
def test_cli_check_fails_cleanly_long(data):
    _cli_check(data.draw(mutated_json("mig_problem")), data.draw(mutated_json("mig_schedule")))


def _cli_plot(schedule: bytes, out_name: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "schedule.json")
        open(s, "wb").write(schedule)
        t0 = time.perf_counter()
        rc, _, err = run_cli(["plot", s, "--out", os.path.join(d, out_name)])
        assert_cli_outcome(rc, err)
        assert rc in (0, 2)
        assert time.perf_counter() - t0 < 4 * SECONDS  # drawing takes a second or so


@settings(max_examples=4, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_cli_plot_fails_cleanly(data):
    _cli_plot(data.draw(mutated_json("mig_schedule")),
              data.draw(st.sampled_from(["g.png", "g.svg", "g", "g.xyz", "missing/g.png", "."])))


@pytest.mark.slow
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_cli_plot_fails_cleanly_long(data):
    _cli_plot(data.draw(mutated_json("mig_schedule")), "g.png")


@FUZZ
@given(argv=st.lists(st.sampled_from(["generate", "check", "plot", "--n", "0", "-3", "x", "100001", "3",
                                       "--gpu", "B300", "A30", "--seed", "-1", "--out", "/nonexistent/x.json",
                                       "--workload", "Nope", "--times", "--problem", "missing.json", "--help"]),
                     max_size=8))
def test_cli_arguments_fail_cleanly(argv):
    with tempfile.TemporaryDirectory() as d:
        cwd = os.getcwd()
        os.chdir(d)  # whatever it writes lands in a scratch folder
        try:
            rc, _, err = run_cli(argv)
        finally:
            os.chdir(cwd)
    if "--help" in argv and rc == 0:
        return
    assert_cli_outcome(rc, err)


# ---------------------------------------------------------------------------
# FAR's command line and the pairing benchmark's --table

def run_main(main: Callable, argv: list[str]) -> tuple[int, str, str]:
    from benchmarks.common import exit_status  # what python -m benchmarks.X runs

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = exit_status(main, argv)
        except SystemExit as exc:  # argparse
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def assert_main_outcome(rc: int, err: str) -> None:
    assert rc in (0, 2), (rc, err)
    if rc == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and "error: " in lines[0], err
        err.encode("utf-8")


def _far_cli(data: bytes, suffix: str) -> None:
    from heuristics import far_cli

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "tasks" + suffix)
        open(p, "wb").write(data)
        t0 = time.perf_counter()
        rc, _, err = run_main(far_cli.main, [p, "--json", os.path.join(d, "s.json")])
        assert_main_outcome(rc, err)
        assert time.perf_counter() - t0 < 4 * SECONDS
        if rc == 0:  # what it wrote is a schedule the checker reads
            mig.Schedule.load(os.path.join(d, "s.json"))


TASKLIST_TEXT = "Task a:\nSize 1: 4.0\nSize 2: 2.5\nSize 4: 1.5\nb 3.0 2.0 1.2\n"


@FUZZ
@given(data=st.data())
def test_far_cli_fails_cleanly(data):
    which = data.draw(st.sampled_from(["mig_problem", "mig_workload", "text"]))
    if which == "text":
        _far_cli(data.draw(mutated_bytes(TASKLIST_TEXT.encode())), ".txt")
    else:
        _far_cli(data.draw(mutated_json(which)), ".json")


@settings(max_examples=4, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
          deadline=None)
@given(data=st.data())
def test_pairing_cli_table_fails_cleanly(data):
    from benchmarks import pairing as bench

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "table.csv")
        open(p, "wb").write(data.draw(mutated_csv("table")))
        t0 = time.perf_counter()
        rc, _, err = run_main(bench.main, ["--W", "2", "--seeds", "1", "--exact-max-W", "0", "--triple-W",
                                           "--timing-W", "0", "--p-total", "350", "--quiet", "--table", p])
        assert_main_outcome(rc, err)
        assert time.perf_counter() - t0 < 4 * SECONDS
