"""A stand-in for nvidia-ml-py's ``pynvml`` that records every call and keeps MIG's own rules.

It offers the functions, constants and the placement structure that
``instances.mig_execution_nvml`` uses, with the signatures of nvidia-ml-py
13.615.71 (the ctypes placement query included), over a GPU of the A30 or
A100 layout (memory slices, GPU-instance profile IDs and placements as
``nvidia-smi mig -lgip`` / ``-lgipp`` list them). Like the driver it refuses a
GPU instance whose memory slices overlap a live one, and destroying a GPU
instance that still has a compute instance. ``fail`` makes the k-th call of a
function raise an ``NVMLError``.
"""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

NVML_SUCCESS = 0
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_IN_USE = 19
NVML_ERROR_INSUFFICIENT_RESOURCES = 23
NVML_DEVICE_MIG_ENABLE = 1
NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0
for _size, _c in ((1, 0), (2, 1), (3, 2), (4, 3), (7, 4), (8, 5), (6, 6)):
    globals()[f"NVML_GPU_INSTANCE_PROFILE_{_size}_SLICE"] = _c
    globals()[f"NVML_COMPUTE_INSTANCE_PROFILE_{_size}_SLICE"] = _c


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {NVML_ERROR_NOT_FOUND: "Not Found", NVML_ERROR_IN_USE: "In use by another client",
                NVML_ERROR_INSUFFICIENT_RESOURCES: "Insufficient Resources",
                NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument"}.get(self.value, f"NVML error {self.value}")


class c_nvmlGpuInstancePlacement_t(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint), ("size", ctypes.c_uint)]


#: NVML profile constant -> (profile ID, memory slices, starts), per GPU layout.
LAYOUTS = {
    "A30": {0: (14, 1, (0, 1, 2, 3)), 1: (5, 2, (0, 2)), 3: (0, 4, (0,))},
    "A100": {0: (19, 1, (0, 1, 2, 3, 4, 5, 6)), 1: (14, 2, (0, 2, 4)), 2: (9, 4, (0, 4)), 3: (5, 4, (0,)),
             4: (0, 8, (0,))},
}


class FakeNvml:
    """One GPU at index 0; use the instance as the ``pynvml`` module."""

    def __init__(self, layout: str = "A30", mig_mode: int = 1, fail: dict[str, int] | None = None,
                 existing: int = 0) -> None:
        self.calls: list[tuple] = []
        self.layout = LAYOUTS[layout]
        self.mig_mode = mig_mode
        self.fail = dict(fail or {})
        self.counts: dict[str, int] = {}
        self.gis: dict[int, dict] = {}  # GI id -> {"profile", "start", "size", "cis": {ci id: handle}}
        self.next_gi = 1
        self.devices = [SimpleNamespace(gi=100 + k, ci=0, uuid=f"MIG-old-{k}") for k in range(existing)]
        self.initialised = False
        for name, value in list(globals().items()):
            if name.startswith("NVML") or name == "c_nvmlGpuInstancePlacement_t":
                setattr(self, name, value)

    # -- bookkeeping ---------------------------------------------------------
    def _call(self, name: str, *args) -> None:
        self.calls.append((name, *args))
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.fail.get(name) == self.counts[name]:
            raise NVMLError(NVML_ERROR_INSUFFICIENT_RESOURCES)

    def live(self) -> list[tuple[int, int, int]]:
        """(start, memory slices, compute instances) of every live GPU instance."""
        return sorted((g["start"], g["size"], len(g["cis"])) for g in self.gis.values())

    def _profile(self, pid: int) -> tuple[int, int, tuple]:
        for const, (p, size, starts) in self.layout.items():
            if p == pid:
                return const, size, starts
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)

    # -- the pynvml functions used -------------------------------------------
    def nvmlInit(self) -> None:
        self._call("nvmlInit")
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._call("nvmlShutdown")
        self.initialised = False

    def nvmlDeviceGetHandleByIndex(self, index: int):
        self._call("nvmlDeviceGetHandleByIndex", index)
        if index != 0:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return "device0"

    def nvmlDeviceGetMigMode(self, device):
        self._call("nvmlDeviceGetMigMode")
        return [self.mig_mode, self.mig_mode]

    def nvmlDeviceGetGpuInstanceProfileInfo(self, device, profile, version=2):
        self._call("nvmlDeviceGetGpuInstanceProfileInfo", profile)
        if profile not in self.layout:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return SimpleNamespace(id=self.layout[profile][0])

    def nvmlDeviceGetGpuInstancePossiblePlacements(self, device, profileId, placementsRef, countRef):
        self._call("nvmlDeviceGetGpuInstancePossiblePlacements", profileId)
        _, size, starts = self._profile(profileId)
        countRef._obj.value = len(starts)
        if placementsRef is not None:
            for k, s in enumerate(starts):
                placementsRef[k].start = s
                placementsRef[k].size = size
        return NVML_SUCCESS

    def nvmlDeviceCreateGpuInstanceWithPlacement(self, device, profileId, placement):
        self._call("nvmlDeviceCreateGpuInstanceWithPlacement", profileId, placement.start)
        _, size, starts = self._profile(profileId)
        if placement.start not in starts or placement.size != size:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        mine = set(range(placement.start, placement.start + size))
        for g in self.gis.values():
            if mine & set(range(g["start"], g["start"] + g["size"])):
                raise NVMLError(NVML_ERROR_INSUFFICIENT_RESOURCES)
        gid = self.next_gi
        self.next_gi += 1
        self.gis[gid] = {"profile": profileId, "start": placement.start, "size": size, "cis": {}}
        return ("gi", gid)

    def nvmlGpuInstanceGetInfo(self, gi):
        self._call("nvmlGpuInstanceGetInfo", gi[1])
        return SimpleNamespace(id=gi[1])

    def nvmlGpuInstanceGetComputeInstanceProfileInfo(self, gi, profile, engProfile, version=2):
        self._call("nvmlGpuInstanceGetComputeInstanceProfileInfo", gi[1], profile)
        return SimpleNamespace(id=profile)

    def nvmlGpuInstanceCreateComputeInstance(self, gi, profileId):
        self._call("nvmlGpuInstanceCreateComputeInstance", gi[1], profileId)
        g = self.gis[gi[1]]
        cid = len(g["cis"])
        g["cis"][cid] = ("ci", gi[1], cid)
        return ("ci", gi[1], cid)

    def nvmlComputeInstanceGetInfo(self, ci):
        self._call("nvmlComputeInstanceGetInfo", ci[1], ci[2])
        return SimpleNamespace(id=ci[2])

    def nvmlDeviceGetMaxMigDeviceCount(self, device):
        self._call("nvmlDeviceGetMaxMigDeviceCount")
        return 7

    def _mig_devices(self) -> list:
        found = list(self.devices)
        for gid, g in sorted(self.gis.items()):
            for cid in sorted(g["cis"]):
                found.append(SimpleNamespace(gi=gid, ci=cid, uuid=f"MIG-fake-{gid}-{cid}"))
        return found

    def nvmlDeviceGetMigDeviceHandleByIndex(self, device, index):
        self._call("nvmlDeviceGetMigDeviceHandleByIndex", index)
        found = self._mig_devices()
        if index >= len(found):
            raise NVMLError(NVML_ERROR_NOT_FOUND)
        return found[index]

    def nvmlDeviceGetGpuInstanceId(self, dev):
        return dev.gi

    def nvmlDeviceGetComputeInstanceId(self, dev):
        return dev.ci

    def nvmlDeviceGetUUID(self, dev):
        return dev.uuid

    def nvmlComputeInstanceDestroy(self, ci):
        self._call("nvmlComputeInstanceDestroy", ci[1], ci[2])
        del self.gis[ci[1]]["cis"][ci[2]]

    def nvmlGpuInstanceDestroy(self, gi):
        self._call("nvmlGpuInstanceDestroy", gi[1])
        if self.gis[gi[1]]["cis"]:
            raise NVMLError(NVML_ERROR_IN_USE)
        del self.gis[gi[1]]
