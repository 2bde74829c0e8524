"""Running a MIG schedule on a real GPU through NVML (``pip install "migsched[gpu]"``, i.e. nvidia-ml-py).

The FAR paper (Villarrubia, Costero, Igual, Olcoz, "Leveraging Multi-Instance
GPUs through moldable task scheduling", Sec. 2.1) reconfigures through NVML,
which does not carry the overhead of the ``nvidia-smi`` tool. Each operation
of :mod:`instances.mig_execution_ops` maps to NVML calls of ``pynvml``:

======================  ==========================================================================
operation               NVML
======================  ==========================================================================
create GPU instance     ``nvmlDeviceGetGpuInstanceProfileInfo`` (profile ``NVML_GPU_INSTANCE_PROFILE_
                        <size>_SLICE`` -> its ID), ``nvmlDeviceGetGpuInstancePossiblePlacements``
                        (the placement starting at the model's start slice),
                        ``nvmlDeviceCreateGpuInstanceWithPlacement``
create compute instance ``nvmlGpuInstanceGetComputeInstanceProfileInfo`` (``..._PROFILE_<size>_SLICE``,
                        shared engines), ``nvmlGpuInstanceCreateComputeInstance``; the MIG device's UUID
                        from ``nvmlDeviceGetMigDeviceHandleByIndex`` and ``nvmlDeviceGetUUID``
launch                  the user's command as a subprocess with ``CUDA_VISIBLE_DEVICES=<MIG UUID>``
wait                    the subprocess's exit
destroy compute inst.   ``nvmlComputeInstanceDestroy``
destroy GPU instance    ``nvmlGpuInstanceDestroy``
======================  ==========================================================================

Before anything is created the backend checks that MIG mode is on, that the
GPU holds no MIG device (the plan starts from an empty GPU, rule 1), that a
command is given for every task, and that every placement of the plan is one
the GPU offers. When an NVML call fails mid-run, the running tasks are
stopped, the instances this run created are destroyed (compute instances
first) and one :class:`~instances.mig_execution_ops.ExecutionError` says
which operation failed and what was undone. A task that exits with an error
does not stop the run; its exit status is reported.

This module is tested against a fake ``pynvml`` that records the calls, never
on a real GPU.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from instances.errors import InstanceError
from instances.options import known_options
from instances.mig_execution_ops import (CREATE_CI, CREATE_GI, DESTROY_CI, DESTROY_GI, LAUNCH, WAIT, Backend,
                                         ExecutionError, Operation, Program, Trace, execute)

__all__ = ["NvmlBackend", "load_nvml", "run_on_gpu"]

#: Seconds between two looks at the running tasks.
POLL = 0.01
#: Seconds a stopped task gets to exit after SIGTERM before SIGKILL.
STOP_GRACE = 5.0


def load_nvml() -> Any:
    """The ``pynvml`` module of nvidia-ml-py, or an :class:`ExecutionError` saying how to install it."""
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        raise ExecutionError('NVML bindings missing: pip install "migsched[gpu]" (nvidia-ml-py)') from None


class NvmlBackend(Backend):
    """Operations on GPU ``gpu_index`` through NVML; tasks as subprocesses.

    Parameters
    ----------
    program
        The operations to run (:func:`instances.mig_execution_ops.operations`).
    gpu_index
        NVML index of the GPU (as ``nvidia-smi -i`` takes it).
    commands
        The command of every task: an argument list (``["python", "train.py"]``),
        run without a shell.
    nvml
        The ``pynvml`` module (default: imported; tests pass a fake).
    log_dir
        Where each task's output goes (``<task>.log``, stdout and stderr);
        default: this process's stdout and stderr.
    env
        The tasks' environment (default: this process's), ``CUDA_VISIBLE_DEVICES`` set per task.
    """

    def __init__(self, program: Program, gpu_index: int, commands: Mapping[str, Sequence[str]], *,
                 nvml: Any = None, log_dir: str | Path | None = None, env: Mapping[str, str] | None = None) -> None:
        if isinstance(gpu_index, bool) or not isinstance(gpu_index, int) or gpu_index < 0:
            raise InstanceError(f"must be an integer >= 0, got {gpu_index!r}", field="gpu_index")
        tasks = [name for s in program.sessions for name in s.tasks]
        missing = [t for t in tasks if not commands.get(t)]
        if missing:
            raise InstanceError(f"no command given for {len(missing)} task(s), e.g. {missing[0]!r}", field="commands")
        self.program = program
        self.gpu_index = gpu_index
        self.commands = {t: [str(a) for a in commands[t]] for t in tasks}
        self.nvml = nvml
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.env = dict(os.environ if env is None else env)
        self.device: Any = None
        self.origin = 0.0
        self.gi: dict[int, Any] = {}  # session -> GPU instance handle (live ones)
        self.ci: dict[int, Any] = {}  # session -> compute instance handle (live ones)
        self.uuid: dict[int, str] = {}
        self.procs: dict[int, subprocess.Popen] = {}  # wait operation -> its task's process
        self.exit_codes: dict[str, int] = {}
        self._done: list[tuple[int, float]] = []
        self._logs: list[Any] = []
        self._profiles: dict[int, int] = {}
        self._wait_of = {op.task: op.index for op in program.operations if op.kind == WAIT}
        self._open = False

    # -- set-up and tear-down ------------------------------------------------
    def open(self) -> None:
        """Initialise NVML and check the GPU before anything is created."""
        nv = self.nvml = self.nvml if self.nvml is not None else load_nvml()
        try:
            nv.nvmlInit()
        except Exception as exc:
            raise ExecutionError(f"NVML cannot start: {exc}") from None
        self._open = True
        try:
            self.device = nv.nvmlDeviceGetHandleByIndex(self.gpu_index)
            current = nv.nvmlDeviceGetMigMode(self.device)[0]
            if current != nv.NVML_DEVICE_MIG_ENABLE:
                raise ExecutionError(f"MIG mode is off on GPU {self.gpu_index} (nvidia-smi -i {self.gpu_index} -mig 1)")
            if self._mig_devices():
                raise ExecutionError(f"GPU {self.gpu_index} already holds MIG devices; the plan starts from an "
                                     f"empty GPU (nvidia-smi mig -i {self.gpu_index} -dci, then -dgi)")
            for p in sorted({s.placement for s in self.program.sessions}):
                self._placement(p.size, p.start)
        except ExecutionError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise ExecutionError(f"NVML on GPU {self.gpu_index}: {exc}") from None
        except BaseException:
            self.close()
            raise
        self.origin = time.monotonic()

    def close(self) -> None:
        """Close the task logs and shut NVML down."""
        for f in self._logs:
            f.close()
        self._logs = []
        if self._open:
            self._open = False
            self.nvml.nvmlShutdown()

    # -- NVML look-ups -------------------------------------------------------
    def _gi_profile(self, size: int) -> int:
        if size not in self._profiles:
            nv = self.nvml
            const = getattr(nv, f"NVML_GPU_INSTANCE_PROFILE_{size}_SLICE", None)
            if const is None:
                raise ExecutionError(f"NVML has no GPU-instance profile of {size} slices")
            self._profiles[size] = nv.nvmlDeviceGetGpuInstanceProfileInfo(self.device, const).id
        return self._profiles[size]

    def _placement(self, size: int, start: int) -> Any:
        """The NVML placement of a ``size``-slice instance starting at ``start``, as the GPU offers it."""
        nv = self.nvml
        pid = self._gi_profile(size)
        count = ctypes.c_uint(0)
        nv.nvmlDeviceGetGpuInstancePossiblePlacements(self.device, pid, None, ctypes.byref(count))
        slots = (nv.c_nvmlGpuInstancePlacement_t * max(1, count.value))()
        nv.nvmlDeviceGetGpuInstancePossiblePlacements(self.device, pid, slots, ctypes.byref(count))
        for k in range(count.value):
            if slots[k].start == start:
                return slots[k]
        offered = ", ".join(str(slots[k].start) for k in range(count.value)) or "none"
        raise ExecutionError(f"GPU {self.gpu_index} offers no {size}-slice instance at slice {start} (it offers "
                             f"starts {offered}); is the schedule for this GPU model?")

    def _mig_devices(self) -> list[Any]:
        nv = self.nvml
        found = []
        for k in range(nv.nvmlDeviceGetMaxMigDeviceCount(self.device)):
            try:
                found.append(nv.nvmlDeviceGetMigDeviceHandleByIndex(self.device, k))
            except nv.NVMLError:
                continue
        return found

    def _uuid_of(self, gi: Any, ci: Any) -> str:
        nv = self.nvml
        gi_id = nv.nvmlGpuInstanceGetInfo(gi).id
        ci_id = nv.nvmlComputeInstanceGetInfo(ci).id
        for dev in self._mig_devices():
            if nv.nvmlDeviceGetGpuInstanceId(dev) == gi_id and nv.nvmlDeviceGetComputeInstanceId(dev) == ci_id:
                uuid = nv.nvmlDeviceGetUUID(dev)
                return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
        raise ExecutionError(f"no MIG device for GPU instance {gi_id}, compute instance {ci_id}")

    # -- the Backend interface -----------------------------------------------
    def now(self) -> float:
        return time.monotonic() - self.origin

    def start(self, op: Operation) -> None:
        nv = self.nvml
        j = op.session
        if op.kind == CREATE_GI:
            pid = self._gi_profile(op.placement.size)
            self.gi[j] = nv.nvmlDeviceCreateGpuInstanceWithPlacement(
                self.device, pid, self._placement(op.placement.size, op.placement.start))
        elif op.kind == CREATE_CI:
            const = getattr(nv, f"NVML_COMPUTE_INSTANCE_PROFILE_{op.placement.size}_SLICE", None)
            if const is None:
                raise ExecutionError(f"NVML has no compute-instance profile of {op.placement.size} slices")
            info = nv.nvmlGpuInstanceGetComputeInstanceProfileInfo(self.gi[j], const,
                                                                   nv.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
            self.ci[j] = nv.nvmlGpuInstanceCreateComputeInstance(self.gi[j], info.id)
            self.uuid[j] = self._uuid_of(self.gi[j], self.ci[j])
        elif op.kind == LAUNCH:
            out = None
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                out = open(self.log_dir / f"{op.task}.log", "wb")
                self._logs.append(out)
            env = {**self.env, "CUDA_VISIBLE_DEVICES": self.uuid[j]}
            try:
                proc = subprocess.Popen(self.commands[op.task], env=env, stdout=out,
                                        stderr=subprocess.STDOUT if out is not None else None)
            except OSError as exc:
                raise ExecutionError(f"cannot start the command of task {op.task}: {exc}") from None
            self.procs[self._wait_of[op.task]] = proc
        elif op.kind == WAIT:
            if op.index not in self.procs:
                raise ExecutionError(f"task {op.task} was not launched")
            return  # its end is found by wait()
        elif op.kind == DESTROY_CI:
            nv.nvmlComputeInstanceDestroy(self.ci.pop(j))
        elif op.kind == DESTROY_GI:
            nv.nvmlGpuInstanceDestroy(self.gi.pop(j))
        self._done.append((op.index, self.now()))

    def wait(self, until: float | None) -> tuple[int, float] | None:
        while True:
            if self._done:
                return self._done.pop(0)
            for i, proc in list(self.procs.items()):
                code = proc.poll()
                if code is not None:
                    del self.procs[i]
                    self.exit_codes[self.program.operations[i].task] = code
                    return i, self.now()
            if until is not None and self.now() >= until:
                return None
            if not self.procs and until is None:
                return None
            time.sleep(POLL if until is None else max(0.0, min(POLL, until - self.now())))

    def abort(self) -> str:
        """Stop the running tasks, destroy this run's compute and GPU instances (newest first)."""
        nv = self.nvml
        done, failed = [], []
        procs = list(self.procs.values())
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if procs:
            done.append(f"stopped {len(procs)} task(s)")
        self.procs.clear()
        for what, handles, destroy in (("compute", self.ci, "nvmlComputeInstanceDestroy"),
                                       ("GPU", self.gi, "nvmlGpuInstanceDestroy")):
            count = 0
            for j in sorted(handles, reverse=True):
                try:
                    getattr(nv, destroy)(handles[j])
                    count += 1
                except Exception as exc:  # keep going: destroy as much as possible, then say what is left
                    failed.append(f"{what} instance of {self.program.sessions[j].placement.name}: {exc}")
            handles.clear()
            if count:
                done.append(f"destroyed {count} {what} instance(s)")
        if failed:
            done.append("could not destroy " + "; ".join(failed))
        self.close()
        return ", ".join(done) or "nothing to undo"


@known_options
def run_on_gpu(program: Program, gpu_index: int, commands: Mapping[str, Sequence[str]], *, nvml: Any = None,
               log_dir: str | Path | None = None, env: Mapping[str, str] | None = None) -> tuple[Trace, dict[str, int]]:
    """Carry out ``program`` on GPU ``gpu_index``; return the realised times and each task's exit status.

    Raises
    ------
    ExecutionError
        If NVML is missing, the GPU is not ready (MIG off, instances left,
        a placement it does not offer) or an NVML call fails mid-run (after
        cleaning up).
    InstanceError
        If a task has no command.
    """
    backend = NvmlBackend(program, gpu_index, commands, nvml=nvml, log_dir=log_dir, env=env)
    backend.open()
    try:
        trace = execute(program, backend)
    finally:
        backend.close()
    return trace, dict(backend.exit_codes)
