"""Shared pytest configuration.

Long solver sweeps are marked ``@pytest.mark.slow`` and only run when asked
for, with ``pytest --run-slow`` (or ``pytest -m slow`` for only them), so the
default suite stays within CI's budget on two cores.
"""

import importlib.util
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def _kernel_warmup():
    spec = importlib.util.spec_from_file_location("kernel_warmup", Path(__file__).with_name("kernel_warmup.py"))
    warmup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(warmup)
    return warmup


def pytest_configure(config):
    # a fresh checkout: the controller of several workers compiles the numba kernels once, in the background,
    # while the workers run the tests that need none; otherwise each worker compiles the same kernels
    if hasattr(config, "workerinput"):
        if os.environ.get("KERNEL_WARMUP_DONE"):
            _kernel_warmup().wait_before_compiling(Path(os.environ["KERNEL_WARMUP_DONE"]),
                                                   int(os.environ["KERNEL_WARMUP_PID"]))
        return
    if not getattr(config.option, "numprocesses", None):
        return
    warmup = _kernel_warmup()
    try:
        cold = warmup.cold()
    except Exception:   # a module that does not import is for the tests to report, not the set-up
        return
    if cold:
        folder = Path(tempfile.mkdtemp(prefix="kernel-warmup-"))
        config._kernel_warmup = (warmup.start(folder / "done"), folder)
        # the workers inherit these
        os.environ["KERNEL_WARMUP_DONE"] = str(folder / "done")
        os.environ["KERNEL_WARMUP_PID"] = str(config._kernel_warmup[0].pid)


def pytest_unconfigure(config):
    proc, folder = getattr(config, "_kernel_warmup", (None, None))
    if proc is not None:
        _kernel_warmup().stop(proc)
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("KERNEL_WARMUP_DONE", None)
        os.environ.pop("KERNEL_WARMUP_PID", None)


def _needs_kernels(item) -> bool:
    """Whether a test is one of the families whose methods run numba kernels (by its file's name)."""
    return bool(re.search(r"hetero|orlib", item.nodeid.split("::")[0]))


def _kernels_last_in_each_half(items: list) -> list:
    """The order for a warm-up in the background: each worker's half of the queue (the work-stealing
    scheduler hands each of two workers one contiguous half) first runs tests that need no kernel."""
    free = [item for item in items if not _needs_kernels(item)]
    kernel = [item for item in items if _needs_kernels(item)]
    a, b = len(free) // 2, len(kernel) // 2
    return free[:a] + kernel[:b] + free[a:] + kernel[b:]


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput") and os.environ.get("KERNEL_WARMUP_DONE"):
        items[:] = _kernels_last_in_each_half(items)
    if config.getoption("--run-slow") or "slow" in (config.getoption("-m") or ""):
        return
    skip_slow = pytest.mark.skip(reason="long sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
