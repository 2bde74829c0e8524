"""Shared pytest configuration.

Long solver sweeps are marked ``@pytest.mark.slow`` and only run when asked
for, with ``pytest --run-slow`` (or ``pytest -m slow`` for only them), so the
default suite stays within CI's budget on two cores.
"""

import importlib.util
import os
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


def pytest_configure(config):
    # the controller of several workers compiles the numba kernels once, split over three processes, before the
    # workers start; otherwise each worker compiles the same kernels (about a minute on a fresh checkout)
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    spec = importlib.util.spec_from_file_location("kernel_warmup", Path(__file__).with_name("kernel_warmup.py"))
    warmup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(warmup)
    try:
        cold = warmup.cold()
    except Exception:   # a module that does not import is for the tests to report, not the set-up
        return
    if cold:
        warmup.warm_up()


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or "slow" in (config.getoption("-m") or ""):
        return
    skip_slow = pytest.mark.skip(reason="long sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
