"""The shared benchmark plumbing (benchmarks/common.py) and what every owned command gets from it."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import case, common, compare, pairing, paper, realtime

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {"compare": compare.main, "paper": paper.main, "pairing": pairing.main, "realtime": realtime.main,
            "case": case.main}


def _help(main, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def _option_paragraphs(text: str) -> dict[str, str]:
    """``{"--opt": its help text}`` from an argparse help page."""
    body = text.split("options:", 1)[1]
    out: dict[str, str] = {}
    for block in re.split(r"\n(?=  -)", body):
        block = block.strip()
        if not block.startswith("-"):
            continue
        names = re.findall(r"--[a-zA-Z][\w-]*", block.split("  ")[0])
        for name in names:
            out[name] = " ".join(block.split())
    return out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_gives_every_option_a_default(name, capsys):
    text = _help(COMMANDS[name], capsys)
    options = _option_paragraphs(text)
    assert "--quiet" in options and "--markdown" in options
    missing = [o for o, para in options.items() if o != "--help" and "default" not in para.lower()]
    assert missing == [], f"{name}: options without a stated default: {missing}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_unknown_option_is_one_line_exit_2(name, capsys):
    with pytest.raises(SystemExit) as exc:
        COMMANDS[name](["--no-such-option"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"python -m benchmarks.{name}: error: unrecognized arguments: "
                                        f"--no-such-option"]


def test_parser_error_is_one_line_even_for_a_multiline_message(capsys):
    p = common.Parser(prog="demo")
    with pytest.raises(SystemExit) as exc:
        p.error("first\nsecond")
    assert exc.value.code == 2
    assert capsys.readouterr().err == "demo: error: first second\n"


@pytest.mark.parametrize("typ, good, bad", [
    (common.count, [("1", 1), ("12", 12), ("100000", 100_000)], ["0", "-3", "x", "1.5", "", "100001", "1e3"]),
    (common.count_or_zero, [("0", 0), ("7", 7)], ["-1", "x", "1_0"]),
    (common.seconds, [("0.5", 0.5), ("30", 30.0), ("1e6", 1e6)], ["0", "-1", "nan", "inf", "x", "1e7", "1e999"]),
    (common.fraction, [("0", 0.0), ("1", 1.0), ("0.25", 0.25), (".5", 0.5)], ["1.5", "-0.1", "nan", "x"]),
    (common.seed, [("0", 0), (str(2**31 - 1), 2**31 - 1)], ["-1", str(2**31), "٣"]),
])
def test_checked_types(typ, good, bad):
    for text, value in good:
        assert typ(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            typ(text)
        assert repr(text) in str(exc.value) and "\n" not in str(exc.value)


def test_comma_choices_names_every_unknown_and_keeps_order():
    pick = common.comma_choices(["a", "b", "c"], "method")
    assert pick("c, a,c") == ["c", "a"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown methods 'x', 'y'; choose from a, b, c"):
        pick("a,x,y")
    with pytest.raises(argparse.ArgumentTypeError, match="none given"):
        pick(" , ")


def test_markdown_table_shape_and_escaping():
    text = common.markdown_table(["a", "b"], [[1, "x|y"], ["two\nlines", None]])
    assert text.splitlines() == ["| a | b |", "|---|---|", "| 1 | x\\|y |", "| two lines | None |"]
    with pytest.raises(ValueError, match="2 cells, the header 3"):
        common.markdown_table(["a", "b", "c"], [[1, 2]])


def test_output_paths_are_checked_before_any_work(tmp_path):
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    assert common.output_dir(str(tmp_path / "new" / "deeper")) == tmp_path / "new" / "deeper"
    assert common.output_file(str(tmp_path / "new" / "x.png")) == tmp_path / "new" / "x.png"
    for bad in (str(afile), str(afile / "sub")):
        with pytest.raises(argparse.ArgumentTypeError, match="cannot write"):
            common.output_dir(bad)
    for bad in (str(tmp_path), str(afile / "x.png"), str(tmp_path) + "/"):
        with pytest.raises(argparse.ArgumentTypeError, match="cannot write"):
            common.output_file(bad)


def test_writing_turns_os_errors_into_one_line(tmp_path, capsys):
    p = common.Parser(prog="demo")
    with pytest.raises(SystemExit) as exc:
        with common.writing(p, "--out"):
            (tmp_path / "missing" / "x.json").write_text("{}")
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("demo: error: --out: cannot write") and "missing" in err[0]


@pytest.mark.parametrize("argv", [
    ["benchmarks.compare", "--out", "{file}/sub"],
    ["benchmarks.realtime", "--out", "{file}"],
    ["benchmarks.case", "--png", "{file}/fig4.png"],
    ["benchmarks.case", "--png", "{dir}"],
    ["benchmarks.case", "--png", "{dir}/fig4.xyz"],
])
def test_unwritable_output_is_one_line_exit_2_no_traceback(argv, tmp_path):
    afile = tmp_path / "plain.txt"
    afile.write_text("x")
    argv = [a.format(file=afile, dir=tmp_path) for a in argv]
    proc = subprocess.run([sys.executable, "-m", *argv, "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_closed_pipe_is_not_a_traceback():
    # `python -m benchmarks.compare --help | head -1`: the reader closes the pipe early
    proc = subprocess.run(f"{sys.executable} -m benchmarks.paper --help | head -1", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("usage:")
    assert "Traceback" not in proc.stderr


def test_description_is_the_first_paragraph_without_markup():
    assert common.description(compare.__doc__).startswith("python -m benchmarks.compare --n 12: every MIG method")


@pytest.mark.parametrize("name", ["far_speed", "hetero"])
def test_help_of_the_other_commands_gives_every_default(name, capsys):
    import importlib

    main = importlib.import_module(f"benchmarks.{name}").main
    options = _option_paragraphs(_help(main, capsys))
    missing = [o for o, para in options.items() if o != "--help" and "default" not in para.lower()]
    assert missing == [], f"{name}: options without a stated default: {missing}"
    assert "seed 0" not in _help(main, capsys)  # papers are cited by name, not by internal numbers
    with pytest.raises(SystemExit) as exc:
        main(["--no-such-option"])
    assert exc.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_bad_data_found_mid_run_is_a_failed_task_not_a_traceback(tmp_path):
    """A slowdown table that loads but lacks a measurement the run needs once ended in a traceback.

    The job mixes are sweep tasks: the one that needs the missing measurement is a failed task (listed
    with its one-line error, exit 1, the sweeps' rule in docs/architecture.md), never a traceback.
    """
    from instances import pairing as pairing_data

    table = tmp_path / "t.csv"
    table.write_text("\n".join(pairing_data.SAMPLE_TABLE.read_text().splitlines()[:6]) + "\n")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.pairing", "--W", "2", "--seeds", "1", "--exact-max-W",
                           "0", "--triple-W", "--timing-W", "0", "--p-total", "350", "--quiet", "--table", str(table)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "task failed" in proc.stderr
    failed = [line for line in proc.stderr.splitlines() if "no measurement" in line]
    assert failed and all("gaussian solo at cores 32" in line for line in failed), proc.stderr
