"""``python -m benchmarks.report``: pages that carry their provenance and the tools' own tables, one-line errors."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys

import pytest

from benchmarks import report

ROOT = report.ROOT


def _run_tool(args) -> str:
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.{args[0]}", *args[1:], *report.FLAGS],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _block(page: str, command: str) -> str:
    """The text between ``command``'s line on the page and the wall-time line after it."""
    head, sep, rest = page.partition("    " + command + "\n")
    assert sep, f"the page does not show {command!r}"
    body, sep, _ = rest.partition("\n\n(")
    assert sep, "no wall-time line after the table"
    return body.strip()


@pytest.fixture(scope="module")
def far_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.report", "--quick", "--only", "far", "--pages", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # progress and "wrote" lines go to stderr
    return (out / "far.md").read_text(encoding="utf-8")


def test_page_opens_with_command_date_versions_machine_and_load(far_page):
    lines = far_page.splitlines()
    assert lines[0] == "# " + report.TOPICS["far"].title
    head = "\n".join(lines[:14])
    assert "- command: `python -m benchmarks.report --only far --quick`" in head
    assert "- form: quick" in head
    date = re.search(r"^- date: (\d{4}-\d\d-\d\d \d\d:\d\d) UTC$", head, re.M)
    assert date, head
    when = dt.datetime.strptime(date.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=dt.timezone.utc)
    assert abs((dt.datetime.now(dt.timezone.utc) - when).total_seconds()) < 3600
    versions = re.search(r"^- versions: (.*)$", head, re.M).group(1)
    for lib in ("Python 3.", "OR-Tools 9.", "HiGHS (highspy) 1.", "Pyomo 6.", "numpy "):
        assert lib in versions
    assert "not installed" not in versions
    assert re.search(r"^- machine: \d+ cores, \S", head, re.M)
    assert re.search(r"^- load when the run began: \d+\.\d\d / \d+\.\d\d / \d+\.\d\d", head, re.M)


def test_every_run_is_preceded_by_its_command_in_order(far_page):
    commands = [report.command_line(run.argv(quick=True)) for run in report.TOPICS["far"].runs]
    positions = [far_page.index("    " + c + "\n") for c in commands]
    assert positions == sorted(positions)
    assert all(c.endswith("--markdown --quiet") for c in commands)


def test_the_tables_are_the_tools_own_output(far_page):
    # the tie-rule table holds makespan ratios only (no timings), so a rerun prints it again bit for bit
    ties = next(run for run in report.TOPICS["far"].runs if "--ties" in run.argv(quick=True))
    args = ties.argv(quick=True)
    assert _block(far_page, report.command_line(args)) == _run_tool(args)
    # the timing table has the tool's header and one row per n asked for
    speed = report.TOPICS["far"].runs[0].argv(quick=True)
    table = _block(far_page, report.command_line(speed))
    assert "| n | CPU s | wall s |" in table
    for n in ("100", "1000", "10000"):
        assert re.search(rf"^\| {n} \| \d", table, re.M)


def test_the_notes_come_from_their_source_file(far_page):
    notes = (report.NOTES / "far.md").read_text(encoding="utf-8").strip()
    assert far_page.rstrip().endswith(notes)


def test_every_topic_has_notes_and_quick_forms_that_differ_only_in_size():
    for name, topic in report.TOPICS.items():
        assert (report.NOTES / f"{name}.md").is_file(), name
        for run in topic.runs:
            assert run.argv(quick=True)[0] == run.argv(quick=False)[0]  # the same tool
        assert topic.quick_minutes <= topic.minutes
    assert sum(t.quick_minutes for t in report.TOPICS.values()) <= 10  # a few minutes
    assert sum(t.minutes for t in report.TOPICS.values()) <= 60  # measured on a busy 2-core machine


def test_list_prints_every_command_and_runs_nothing(tmp_path, capsys):
    assert report.main(["--list", "--quick", "--pages", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for topic in report.TOPICS.values():
        assert f"{topic.name}: {topic.title}" in out
        for run in topic.runs:
            assert report.command_line(run.argv(quick=True)) in out
    assert list(tmp_path.iterdir()) == []


def test_help_says_how_long_each_topic_takes(capsys):
    with pytest.raises(SystemExit) as exc:
        report.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in report.TOPICS:
        assert re.search(rf"^  {re.escape(name)} +\d+ (s|min) +\d+ (s|min)  ", out, re.M), name


@pytest.mark.parametrize("argv, fragment", [
    (["--only", "nope"], "nope"),
    (["--only"], "--only"),
    (["--quick", "--bogus"], "--bogus"),
    (["--quick", "--out", "x"], "--out"),  # the pages folder is --pages: --out is a sweep's records
])
def test_option_errors_exit_2_with_one_line(argv, fragment, capsys):
    with pytest.raises(SystemExit) as exc:
        report.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]


def test_unwritable_pages_exit_2_before_running_anything(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SystemExit) as exc:
        report.main(["--quick", "--only", "far", "--pages", str(blocker)])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "--pages" in err[0]


def test_a_failing_benchmark_is_one_line_and_leaves_no_page(tmp_path, monkeypatch, capsys):
    bad = report.Topic("bad", "A failing page", "x", (report.Run("bad run", ("compare", "--n", "0")),), 0.1, 0.1)
    monkeypatch.setitem(report.TOPICS, "bad", bad)
    with pytest.raises(SystemExit) as exc:
        report.main(["--only", "bad", "--pages", str(tmp_path), "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "python -m benchmarks.compare --n 0 --markdown --quiet" in err[0] and "status 2" in err[0]
    assert list(tmp_path.iterdir()) == []
