"""A dry run: the ``nvidia-smi mig`` commands that carry out a MIG schedule, in a valid order.

Every operation of :mod:`instances.mig_execution_ops` is printed with the
operations it waits for; the four create/destroy steps come with their
``nvidia-smi mig`` command (NVIDIA Multi-Instance GPU User Guide, "Getting
Started with MIG"):

* create a GPU instance of a profile at a placement:
  ``nvidia-smi mig -i GPU -cgi PROFILE:START`` (a profile ID or name, then
  the placement's first memory slice; ``nvidia-smi mig -lgipp`` lists them);
* create its compute instance, of the instance's full size:
  ``nvidia-smi mig -i GPU -gi GI -cci CI_PROFILE``;
* destroy them: ``nvidia-smi mig -i GPU -dci -ci CI -gi GI``, then
  ``nvidia-smi mig -i GPU -dgi -gi GI``.

``$GI<k>`` and ``$CI<k>`` stand for the IDs nvidia-smi reports when it creates
instance k (the k-th session of the plan); a task runs with
``CUDA_VISIBLE_DEVICES`` set to the UUID of that MIG device
(``nvidia-smi -L`` lists them).

The GPU-instance profiles of the built-in GPUs (:data:`GI_PROFILES`) are
those ``nvidia-smi mig -lgip`` lists on an A30-24GB, an A100-40GB (the
toolkit's A100 has 5 GB slices) and an H100-80GB (10 GB slices). On the A30,
A100 and H100 a placement's start is the start the toolkit uses
(``instances.gpus``; e.g. the A100's 3@4 is ``-cgi 9:4``, memory slices 4-7).
A user-defined GPU gets profile names ``<size>g.<memory>gb`` from its own
memory table; check them against ``nvidia-smi mig -lgip``.

Examples
--------
>>> from instances import mig
>>> from instances.mig_execution_ops import operations
>>> a100 = mig.Problem("A100", [mig.Task("a", {1: 9.0, 2: 5.0, 3: 4.0, 4: 3.5, 7: 2.0})]).gpu
>>> pl = a100.placement(3, 4)
>>> plan = mig.Schedule("A100", [mig.ScheduledTask("a", pl, 0.2, 4.2)], [mig.Reconfiguration("create", pl, 0.0, 0.2)])
>>> print("\\n".join(nvidia_smi_lines(operations(plan, teardown=False), gpu_index=1)))  # doctest: +NORMALIZE_WHITESPACE
# MIG schedule for A100 on GPU 1: 1 instance, 1 task, 4 operations, to run in this order; each step starts
# once the steps it names after "after" have ended. $GI<k>, $CI<k>: the IDs nvidia-smi reports for instance k.
# [0] create GPU instance 3@4 (3g.20gb, profile 9, placement 4)
nvidia-smi mig -i 1 -cgi 9:4
# [1] create compute instance of 3@4 (compute profile 2), after 0
nvidia-smi mig -i 1 -gi $GI1 -cci 2
# [2] launch a on 3@4, after 1: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI1/CI1> <command of a>
# [3] wait for a to end, after 2
"""

from __future__ import annotations

from instances.errors import InstanceError
from instances.options import known_options
from instances.gpus import BUILTIN, GPUSpec, Placement
from instances.mig_execution_ops import (CREATE_CI, CREATE_GI, DESTROY_CI, DESTROY_GI, LAUNCH, Program)

__all__ = ["GI_PROFILES", "CI_PROFILES", "gi_profile", "nvidia_smi_lines"]

#: size -> (GPU-instance profile ID, profile name), as ``nvidia-smi mig -lgip`` lists them (NVIDIA MIG User
#: Guide, "Supported MIG Profiles"): A30-24GB, A100-40GB, H100-80GB. The ``+me`` and double-memory 1g profiles
#: are left out: no placement of the toolkit's model is one of them.
GI_PROFILES: dict[str, dict[int, tuple[int, str]]] = {
    "A30": {1: (14, "1g.6gb"), 2: (5, "2g.12gb"), 4: (0, "4g.24gb")},
    "A100": {1: (19, "1g.5gb"), 2: (14, "2g.10gb"), 3: (9, "3g.20gb"), 4: (5, "4g.20gb"), 7: (0, "7g.40gb")},
    "H100": {1: (19, "1g.10gb"), 2: (14, "2g.20gb"), 3: (9, "3g.40gb"), 4: (5, "4g.40gb"), 7: (0, "7g.80gb")},
}
#: Compute-instance profile ID of a compute instance as large as its GPU instance, by size
#: (NVML's ``NVML_COMPUTE_INSTANCE_PROFILE_<n>_SLICE``, the IDs ``nvidia-smi mig -lcip`` shows).
CI_PROFILES: dict[int, int] = {1: 0, 2: 1, 3: 2, 4: 3, 6: 6, 7: 4, 8: 5}


def _builtin(gpu: GPUSpec) -> bool:
    return gpu.name in BUILTIN and BUILTIN[gpu.name].placements == gpu.placements


def gi_profile(gpu: GPUSpec, size: int) -> tuple[int | None, str]:
    """The GPU-instance profile of an instance of ``size`` slices: (ID or None when unknown, name).

    Examples
    --------
    >>> from instances import gpus
    >>> gi_profile(gpus.get("A30"), 2)
    (5, '2g.12gb')
    """
    if _builtin(gpu) and gpu.name in GI_PROFILES:
        return GI_PROFILES[gpu.name][size]
    if size not in gpu.memory_gb:
        raise InstanceError(f"{gpu.name} has no instance of size {size}", field="placement")
    return None, f"{size}g.{gpu.memory_gb[size]:g}gb"


def _create(gpu: GPUSpec, p: Placement, gpu_index: int) -> tuple[str, str]:
    pid, name = gi_profile(gpu, p.size)
    what = f"{name}, profile {pid}, placement {p.start}" if pid is not None else f"{name}, placement {p.start}"
    return what, f"nvidia-smi mig -i {gpu_index} -cgi {pid if pid is not None else name}:{p.start}"


@known_options
def nvidia_smi_lines(program: Program, gpu_index: int = 0) -> list[str]:
    """The dry run of ``program`` on GPU ``gpu_index``: comment lines and ``nvidia-smi mig`` commands.

    The operations come in the program's order, a valid sequential order;
    run one after another they carry out the plan (without its overlap of
    tasks: to run tasks side by side, start each step once its ``after``
    steps have ended, as :func:`instances.mig_execution_ops.execute` does).
    """
    if isinstance(gpu_index, bool) or not isinstance(gpu_index, int) or gpu_index < 0:
        raise InstanceError(f"must be an integer >= 0, got {gpu_index!r}", field="gpu_index")
    gpu = program.gpu
    n_tasks = sum(len(s.tasks) for s in program.sessions)
    m = len(program.sessions)
    lines = [f"# MIG schedule for {gpu.name} on GPU {gpu_index}: {m} instance{'s' * (m != 1)}, {n_tasks} "
             f"task{'s' * (n_tasks != 1)}, {len(program)} operations, to run in this order; each step starts",
             '# once the steps it names after "after" have ended. $GI<k>, $CI<k>: the IDs nvidia-smi reports '
             "for instance k."]
    for op in program.operations:
        k = op.session + 1
        after = f", after {', '.join(map(str, op.after))}" if op.after else ""
        p = op.placement
        if op.kind == CREATE_GI:
            what, cmd = _create(gpu, p, gpu_index)
            lines += [f"# [{op.index}] create GPU instance {p.name} ({what}){after}", cmd]
        elif op.kind == CREATE_CI:
            ci = CI_PROFILES.get(p.size)
            profile = str(ci) if ci is not None else gi_profile(gpu, p.size)[1]
            lines += [f"# [{op.index}] create compute instance of {p.name} (compute profile {profile}){after}",
                      f"nvidia-smi mig -i {gpu_index} -gi $GI{k} -cci {profile}"]
        elif op.kind == LAUNCH:
            when = f" (not before its release at {op.not_before:g} s)" if op.not_before > 0 else ""
            lines.append(f"# [{op.index}] launch {op.task} on {p.name}{after}{when}: CUDA_VISIBLE_DEVICES=<UUID of "
                         f"MIG device GI{k}/CI{k}> <command of {op.task}>")
        elif op.kind == DESTROY_CI:
            tag = " (teardown: the plan keeps it to the end)" if op.teardown else ""
            lines += [f"# [{op.index}] destroy compute instance of {p.name}{after}{tag}",
                      f"nvidia-smi mig -i {gpu_index} -dci -ci $CI{k} -gi $GI{k}"]
        elif op.kind == DESTROY_GI:
            lines += [f"# [{op.index}] destroy GPU instance {p.name}{after}",
                      f"nvidia-smi mig -i {gpu_index} -dgi -gi $GI{k}"]
        else:
            lines.append(f"# [{op.index}] wait for {op.task} to end{after}")
    return lines
