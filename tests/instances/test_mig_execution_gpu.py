"""The NVML backend against the real ``pynvml`` and, where one is present, a real NVIDIA GPU.

Two layers:

* the binding: every NVML function, constant and structure the backend
  (``instances/mig_execution_nvml.py``) calls exists in nvidia-ml-py, with
  the arguments the backend passes, and the fake of
  ``tests/instances/fake_pynvml.py`` offers nothing the binding lacks (so the
  fake's tests exercise calls that exist). Runs wherever nvidia-ml-py is
  installed (the ``test`` extra installs it).
* the GPU: read-only queries, never a change. MIG mode and the instances of a
  shared GPU are left as they are: with MIG off, the backend must refuse the
  plan before it creates anything; with MIG on, the placements the GPU offers
  for each instance size must be the starts the toolkit's GPU model uses.
  Skipped where NVML finds no GPU (CI).
"""

from __future__ import annotations

import ctypes
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from instances import gpus, mig
from instances.mig_execution import ExecutionError, operations, run_on_gpu

pynvml = pytest.importorskip("pynvml")

SOURCE = Path(__file__).parents[2] / "instances" / "mig_execution_nvml.py"
_spec = importlib.util.spec_from_file_location("fake_pynvml", Path(__file__).with_name("fake_pynvml.py"))
fake_pynvml = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_pynvml)


def _names_the_backend_uses() -> set[str]:
    text = SOURCE.read_text()
    return set(re.findall(r"\bnv\.(nvml\w+|NVML\w+|c_nvml\w+)", text)) | set(
        re.findall(r"getattr\(nv, f\"(NVML_GPU_INSTANCE_PROFILE)_", text))


def test_the_binding_has_every_name_the_backend_uses():
    names = _names_the_backend_uses()
    assert {"nvmlInit", "nvmlDeviceGetMigMode", "nvmlDeviceGetGpuInstancePossiblePlacements"} <= names
    missing = sorted(n for n in names if n != "NVML_GPU_INSTANCE_PROFILE" and not hasattr(pynvml, n))
    assert not missing, f"nvidia-ml-py {getattr(pynvml, '__version__', '?')} lacks {missing}"
    for size in (1, 2, 3, 4, 7):
        assert hasattr(pynvml, f"NVML_GPU_INSTANCE_PROFILE_{size}_SLICE")
    fields = dict(pynvml.c_nvmlGpuInstancePlacement_t._fields_)
    assert set(fields) >= {"start", "size"}


def test_the_fake_offers_nothing_the_binding_lacks_and_takes_the_same_arguments():
    fake = fake_pynvml.FakeNvml("A30")
    for name in sorted(_names_the_backend_uses()):
        if not name.startswith("nvml"):
            continue
        real = getattr(pynvml, name)
        mine = getattr(fake, name)
        try:
            real_params = list(inspect.signature(real).parameters.values())
        except (TypeError, ValueError):
            continue
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in real_params):
            continue
        wanted = [p.name for p in real_params if p.default is p.empty]
        given = list(inspect.signature(mine).parameters)
        assert len(given) >= len(wanted), f"{name}: the binding takes {wanted}, the fake {given}"
    for name in dir(fake_pynvml):
        if name.startswith(("NVML_", "c_nvml")):
            assert hasattr(pynvml, name), f"the fake defines {name}, which nvidia-ml-py does not"


def _gpu_handle():
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # no driver, no GPU: CI
        pytest.skip(f"no NVIDIA GPU here ({exc})")
    try:
        if pynvml.nvmlDeviceGetCount() < 1:
            pytest.skip("NVML sees no GPU")
        return pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:
        pynvml.nvmlShutdown()
        raise


def _model_of(device) -> str | None:
    name = pynvml.nvmlDeviceGetName(device)
    name = name.decode() if isinstance(name, bytes) else str(name)
    for model in ("A30", "A100", "H100", "H200"):
        if model in name:
            return model
    return None


def test_a_real_gpu_is_left_as_it_is_and_offers_the_models_placements(tmp_path):
    device = _gpu_handle()
    try:
        model = _model_of(device)
        current = pynvml.nvmlDeviceGetMigMode(device)[0]
        # the H200 has the H100's slice layout (seven compute slices, memory in eighths)
        gpu = gpus.get({"H200": "H100"}.get(model, model)) if model else gpus.get("A100")
        problem = mig.Problem(gpu, [mig.Task(f"t{k}", {s: 100.0 / s for s in gpu.sizes}) for k in range(3)])
        schedule = mig.Schedule(gpu.name, [
            mig.ScheduledTask(t.name, max(gpu.placements, key=lambda q: q.size), 0.0, 0.0) for t in problem.tasks[:1]])
        if current != pynvml.NVML_DEVICE_MIG_ENABLE:
            program = operations(schedule)
            with pytest.raises(ExecutionError, match="MIG mode is off"):
                run_on_gpu(program, 0, {name: ["true"] for s in program.sessions for name in s.tasks})
            assert pynvml.nvmlDeviceGetMigMode(device)[0] == current
            return
        if model is None:
            pytest.skip("a MIG GPU of a model the toolkit does not describe")
        for size in sorted(gpu.sizes):
            profile = pynvml.nvmlDeviceGetGpuInstanceProfileInfo(
                device, getattr(pynvml, f"NVML_GPU_INSTANCE_PROFILE_{size}_SLICE"))
            count = ctypes.c_uint(0)
            pynvml.nvmlDeviceGetGpuInstancePossiblePlacements(device, profile.id, None, ctypes.byref(count))
            slots = (pynvml.c_nvmlGpuInstancePlacement_t * max(1, count.value))()
            pynvml.nvmlDeviceGetGpuInstancePossiblePlacements(device, profile.id, slots, ctypes.byref(count))
            offered = sorted(slots[k].start for k in range(count.value))
            ours = sorted(q.start for q in gpu.placements if q.size == size)
            assert offered == ours, f"{model} {size}-slice instances: the GPU offers starts {offered}, ours {ours}"
    finally:
        pynvml.nvmlShutdown()
