"""Fixtures of the benchmark tests."""

import pytest


@pytest.fixture(scope="session")
def dask_scheduler():
    """The address of one local dask cluster (two worker processes) that the local-against-dask agreement
    tests share, as ``--scheduler`` reaches a running one: a cluster's start costs seconds, and what those
    tests compare is the tasks' results (test_executor.py tests the executor's own LocalCluster)."""
    pytest.importorskip("distributed")
    from benchmarks.executor import local_cluster

    with local_cluster(2) as cluster:
        yield cluster.scheduler_address
