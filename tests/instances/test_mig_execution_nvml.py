"""The NVML backend against a fake ``pynvml`` that records the calls (never on a real GPU).

The fake keeps MIG's own rules (no two live GPU instances on one memory
slice, no GPU instance destroyed under a compute instance), so a run that
gets through it created and destroyed instances in an order the driver
accepts.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

from heuristics import far
from instances import mig
from instances.errors import InstanceError
from instances.mig_execution import (CREATE_GI, DESTROY_GI, ExecutionError, load_nvml, main, operations,
                                     run_on_gpu)

_spec = importlib.util.spec_from_file_location("fake_pynvml", Path(__file__).with_name("fake_pynvml.py"))
fake_pynvml = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_pynvml)
FakeNvml = fake_pynvml.FakeNvml

#: A task that writes the MIG device it was given, then sleeps a little so that tasks overlap.
WRITE_DEVICE = "import os, sys, time; open(sys.argv[1], 'w').write(os.environ['CUDA_VISIBLE_DEVICES']); time.sleep(0.05)"


def _plan(gpu: str = "A30", n: int = 4, seed: int = 3):
    problem = mig.generate(n, gpu, seed=seed)
    return problem, far.schedule(problem)


def _commands(program, folder: Path, code: str = WRITE_DEVICE) -> dict[str, list[str]]:
    return {name: [sys.executable, "-c", code, str(folder / f"{name}.txt")]
            for s in program.sessions for name in s.tasks}


def test_a_run_creates_and_destroys_in_the_programs_order_and_gives_each_task_its_instance(tmp_path):
    problem, schedule = _plan("A30", 5, seed=3)
    program = operations(schedule)
    nv = FakeNvml("A30")
    trace, codes = run_on_gpu(program, 0, _commands(program, tmp_path), nvml=nv)
    assert codes == {t.name: 0 for t in problem.tasks}
    # the create and destroy calls come in the order of the channel operations of the program
    made = [c for c in nv.calls if c[0] in ("nvmlDeviceCreateGpuInstanceWithPlacement", "nvmlGpuInstanceDestroy")]
    channel = [op for op in program.operations if op.kind in (CREATE_GI, DESTROY_GI)]
    assert len(made) == len(channel)
    for call, op in zip(made, channel):
        if op.kind == CREATE_GI:
            assert call[0] == "nvmlDeviceCreateGpuInstanceWithPlacement" and call[2] == op.placement.start
        else:
            assert call[0] == "nvmlGpuInstanceDestroy"
    assert nv.calls[0][0] == "nvmlInit" and nv.calls[-1][0] == "nvmlShutdown"
    assert nv.live() == []  # teardown: the GPU is left empty
    # each task saw the UUID of the MIG device of its own instance (GI ids are handed out in create order)
    create_order = [op.session for op in program.operations if op.kind == CREATE_GI]
    for s in program.sessions:
        gi = create_order.index(s.index) + 1
        for name in s.tasks:
            assert (tmp_path / f"{name}.txt").read_text() == f"MIG-fake-{gi}-0"
    # the realised times keep every wait of the program
    for op in program.operations:
        assert all(trace.end[d] <= trace.start[op.index] + 1e-9 for d in op.after)
    assert trace.schedule().makespan == pytest.approx(trace.makespan)


def test_an_a100_run_uses_the_a100_profiles_and_placements(tmp_path):
    problem, schedule = _plan("A100", 6, seed=8)
    program = operations(schedule)
    nv = FakeNvml("A100")
    run_on_gpu(program, 0, _commands(program, tmp_path, "pass"), nvml=nv)
    ids = {19: 1, 14: 2, 9: 3, 5: 4, 0: 7}
    created = [(ids[c[1]], c[2]) for c in nv.calls if c[0] == "nvmlDeviceCreateGpuInstanceWithPlacement"]
    assert created == [(op.placement.size, op.placement.start) for op in program.operations if op.kind == CREATE_GI]
    assert nv.live() == []


def test_a_failing_nvml_call_stops_the_tasks_destroys_what_was_made_and_raises_one_error(tmp_path):
    problem, schedule = _plan("A30", 5, seed=3)
    program = operations(schedule)
    sessions = len(program.sessions)
    assert sessions >= 2
    nv = FakeNvml("A30", fail={"nvmlGpuInstanceCreateComputeInstance": 2})
    slow = "import time; time.sleep(30)"
    t0 = time.monotonic()
    with pytest.raises(ExecutionError) as exc:
        run_on_gpu(program, 0, _commands(program, tmp_path, slow), nvml=nv)
    assert time.monotonic() - t0 < 20  # the 30 s task was stopped, not waited for
    msg = str(exc.value)
    assert "\n" not in msg
    assert "create compute instance" in msg and "Insufficient Resources" in msg and "destroyed" in msg
    assert nv.live() == []
    assert nv.calls[-1][0] == "nvmlShutdown"
    # compute instances go before their GPU instances
    names = [c[0] for c in nv.calls]
    last_ci = max(i for i, c in enumerate(names) if c == "nvmlComputeInstanceDestroy")
    assert names.index("nvmlGpuInstanceDestroy", last_ci) > last_ci


@pytest.mark.parametrize("fake, words", [
    (lambda: FakeNvml("A30", mig_mode=0), "MIG mode is off"),
    (lambda: FakeNvml("A30", existing=1), "already holds MIG devices"),
    (lambda: FakeNvml("A30", fail={"nvmlInit": 1}), "NVML cannot start"),
])
def test_the_gpu_is_checked_before_anything_is_created(fake, words, tmp_path):
    problem, schedule = _plan("A30", 4)
    program = operations(schedule)
    nv = fake()
    with pytest.raises(ExecutionError, match=words):
        run_on_gpu(program, 0, _commands(program, tmp_path, "pass"), nvml=nv)
    assert not any(c[0] == "nvmlDeviceCreateGpuInstanceWithPlacement" for c in nv.calls)
    assert not nv.initialised


def test_a_schedule_for_another_model_is_refused_before_any_create(tmp_path):
    problem, schedule = _plan("A100", 6, seed=8)
    program = operations(schedule)
    uses = {(op.placement.size, op.placement.start) for op in program.operations}
    if all(s in (1, 2, 4) and b in (0, 1, 2, 3) for s, b in uses):
        pytest.skip("this plan happens to fit an A30")
    nv = FakeNvml("A30")
    with pytest.raises(ExecutionError, match="offers no|no GPU-instance profile"):
        run_on_gpu(program, 0, _commands(program, tmp_path, "pass"), nvml=nv)
    assert not any(c[0] == "nvmlDeviceCreateGpuInstanceWithPlacement" for c in nv.calls)


def test_a_task_without_a_command_is_bad_input(tmp_path):
    problem, schedule = _plan("A30", 4)
    program = operations(schedule)
    commands = _commands(program, tmp_path, "pass")
    commands.pop(problem.tasks[0].name)
    with pytest.raises(InstanceError, match="no command"):
        run_on_gpu(program, 0, commands, nvml=FakeNvml("A30"))


def test_a_failing_task_is_reported_and_the_run_goes_on(tmp_path):
    problem, schedule = _plan("A30", 4)
    program = operations(schedule)
    commands = _commands(program, tmp_path, "pass")
    bad = problem.tasks[0].name
    commands[bad] = [sys.executable, "-c", "raise SystemExit(3)"]
    nv = FakeNvml("A30")
    trace, codes = run_on_gpu(program, 0, commands, nvml=nv)
    assert codes[bad] == 3 and sum(c != 0 for c in codes.values()) == 1
    assert nv.live() == []


def test_without_nvidia_ml_py_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    with pytest.raises(ExecutionError, match=r"migsched\[gpu\]"):
        load_nvml()


def test_the_run_command_line_without_nvml_is_one_error_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    problem, schedule = _plan("A30", 3)
    schedule.save(tmp_path / "s.json")
    (tmp_path / "c.json").write_text(json.dumps({t.name: "true" for t in problem.tasks}))
    code = main([str(tmp_path / "s.json"), "--run", "--commands", str(tmp_path / "c.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nvidia-ml-py" in err[0]
