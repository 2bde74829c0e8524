"""Fixtures of the benchmark tests."""

import logging

import pytest


@pytest.fixture(scope="session")
def dask_scheduler():
    """The address of one local dask cluster (two worker processes) that the local-against-dask agreement
    tests share, as ``--scheduler`` reaches a running one: a cluster's start costs seconds, and what those
    tests compare is the tasks' results (test_executor.py tests the executor's own LocalCluster)."""
    pytest.importorskip("distributed")
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster:
        yield cluster.scheduler_address
