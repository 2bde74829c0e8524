"""Reading task lists (instances/mig_tasklist.py): three styles, errors located by file, line and task."""

from __future__ import annotations

import json

import pytest

from instances import mig
from instances.errors import InstanceError


def test_reference_profile_report(tmp_path):
    f = tmp_path / "profile.txt"
    f.write_text("======\nProfiled times for the tasks:\nTask gauss:\nSize 1: 10 seconds\nSize 2: 5.5 seconds\n"
                 "Size 4: 3 seconds\nTask lud:\nSize 1: 4 seconds\nSize 2: 2 s\nSize 4: 1.5\n")
    p = mig.load_tasklist(f, "A30")
    assert [t.name for t in p.tasks] == ["gauss", "lud"]
    assert p.task("gauss").times == {1: 10.0, 2: 5.5, 4: 3.0} and p.task("lud").time(2) == 2.0
    assert p.gpu.name == "A30"


def test_one_task_per_line(tmp_path):
    f = tmp_path / "list.txt"
    f.write_text("# name t1 t2 3g t4 t7\nbfs 8 4.5 3.5 3 2  # comment\nnw 1:6 2:3.5 3:3 4:2 7:1.5\n")
    p = mig.load_tasklist(f)  # A100 by default
    assert p.gpu.name == "A100" and p.task("bfs").time(7) == 2.0 and p.task("nw").time(3) == 3.0


def test_json_styles(tmp_path):
    problem = mig.generate(4, "A100", seed=0)
    f = tmp_path / "p.json"
    mig.save(problem, f)
    assert mig.load_tasklist(f) == problem
    assert mig.load_tasklist(f, "H100").gpu.name == "H100"  # the argument overrides the file's GPU
    with pytest.raises(InstanceError, match="p.json.*not a compute size of A30"):
        mig.load_tasklist(f, "A30")  # and the times are checked against it
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([{"name": "a", "times": {"1": 4, "2": 2.5, "4": 1.5}}]))
    assert mig.load_tasklist(bare, "A30").task("a").time(4) == 1.5


@pytest.mark.parametrize("text, words", [
    ("bfs 8 4.5\n", ["line 1", "task bfs", "expected 3 times"]),
    ("\n\nbfs 8 x 3\n", ["line 3", "task bfs", "size 2", "not a number"]),
    ("Size 1: 3 seconds\n", ["line 1", "before any 'Task name:' line"]),
    ("# nothing\n", ["no tasks found"]),
    ("bfs 8 4.5 9\n", ["task bfs"]),  # slower on more slices: the problem's own validation
])
def test_errors_name_file_line_and_task(tmp_path, text, words):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    with pytest.raises(InstanceError) as exc:
        mig.load_tasklist(f, "A30")
    msg = str(exc.value)
    assert "bad.txt" in msg and "\n" not in msg
    for w in words:
        assert w in msg


def test_unknown_gpu_and_missing_file(tmp_path):
    f = tmp_path / "list.txt"
    f.write_text("bfs 8 4.5 3\n")
    with pytest.raises(InstanceError, match="list.txt.*V100"):
        mig.load_tasklist(f, "V100")
    with pytest.raises(InstanceError, match="missing.txt: file not found"):
        mig.load_tasklist(tmp_path / "missing.txt")
