"""Compile the numba kernels once, in three processes, before the test workers start.

A fresh checkout has no numba cache: without this, each of the suite's
workers compiles the kernels it meets, mostly the same ones at the same time.
``tests/conftest.py`` runs this module as three processes at once (the
single-machine kernels, the several-GPU bound's, the several-GPU local
search's: parts of about the same compile time), which write numba's cache;
the workers then load the compiled kernels from it. The workloads are small
runs that reach every kernel with the argument types the package uses; on a
warm cache each part takes a second or two.

Run by hand: ``python tests/kernel_warmup.py single`` (or ``several``, ``local``).
"""

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("single", "several", "local")


def kernel_modules() -> list[str]:
    """The package modules that define cached numba kernels."""
    out = []
    for package in ("bounds", "milp", "heuristics", "instances"):
        for path in sorted((ROOT / package).glob("*.py")):
            if re.search(r"^@(numba\.)?n?jit\(.*cache=True", path.read_text(), re.M):
                out.append(f"{package}.{path.stem}")
    return out


def cold() -> bool:
    """Whether a kernel module has no cache index newer than its source (a fresh checkout, or an edit).

    Kernels called only from other kernels are compiled into their callers and have no index of their own,
    so a module counts as compiled when any of its kernels has one.
    """
    from numba.core.registry import CPUDispatcher

    for name in kernel_modules():
        module = importlib.import_module(name)
        source = os.path.getmtime(module.__file__)
        indexes = [getattr(getattr(obj._cache, "_cache_file", None), "_index_path", None)
                   for obj in vars(module).values()
                   if isinstance(obj, CPUDispatcher) and obj.__module__ == name and obj._cache is not None]
        if not any(i is not None and os.path.exists(i) and os.path.getmtime(i) >= source for i in indexes):
            return True
    return False


def warm_up() -> None:
    """Run the parts at the same time, each in its own process; a part that fails is left to the tests."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    procs = [subprocess.Popen([sys.executable, __file__, part], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for part in PARTS]
    for proc in procs:
        proc.wait()


def single() -> None:
    """The single-machine method: time-indexed network, multipliers, modifier sets of one and of several words."""
    import numpy as np

    from bounds.hetero import lower_bound
    from bounds.hetero_dp import Grid, tardiness_precedences
    from bounds.hetero_ti import tardiness_costs
    from heuristics.hetero import fifo
    from instances.hetero import orlib_wt40
    from milp import hetero_modifiers as hm
    from milp import solve_optimal

    from bounds.hetero_bundle import dual_master

    wt = orlib_wt40(39)
    solve_optimal(wt, time_limit=20)
    dual_master(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([0.0, 1.0, 2.0]), 1.0)
    lower_bound(wt, fifo(wt), time_limit=2)
    rng = np.random.default_rng(0)
    p, w, d = rng.integers(1, 8, 7), rng.integers(0, 6, 7), rng.integers(0, 30, 7)
    old = hm.ModifierSearch.WORD_BITS
    try:
        for bits in (62, 3):
            hm.ModifierSearch.WORD_BITS = bits
            grid = Grid(p, tardiness_costs(p, w, d), weights=w)
            search = hm.ModifierSearch(grid, rng.normal(0, 3, 7), 1e9, prec=tardiness_precedences(p, w, d, grid.rank))
            search.add(range(7))
            search.forward()
            search.backward()
    finally:
        hm.ModifierSearch.WORD_BITS = old


def local() -> None:
    """Several GPUs: the compiled local search of the ILS (its own part: it compiles about as long as the rest
    of the several-GPU kernels)."""
    from heuristics import hetero_local
    from heuristics.hetero import fifo, ils
    from instances import hetero

    pb = hetero.generate(20, seed=24)
    ils(pb, time_limit=None, max_iter=20)
    ils(pb, time_limit=0.05)
    seqs = fifo(pb).sequences(pb)
    hetero_local.local_search(pb, seqs)
    g = max(range(pb.m), key=lambda k: len(seqs[k]))
    h = (g + 1) % pb.m
    hetero_local.move_cost(pb, seqs, ("relocate", g, 0, g, 1))
    hetero_local.move_cost(pb, seqs, ("relocate", g, 0, h, 0))
    hetero_local.move_cost(pb, seqs, ("swap", g, 0, g, 1))


def several() -> None:
    """Several GPUs: column generation with ng-routes, tentative fixing, branch-and-price."""
    import numpy as np

    from bounds import hetero_ng, hetero_pricing
    from bounds.hetero import lower_bound
    from bounds.hetero_colgen import colgen_bound
    from heuristics.hetero import fifo
    from instances import hetero
    from milp import solve_optimal

    for n in (12, 20):
        pb = hetero.generate(n, seed=25)
        lower_bound(pb, fifo(pb), time_limit=60)
    # larger networks take the ng phase's wider label arrays
    pb = hetero.generate(60, seed=26)
    lower_bound(pb, fifo(pb), time_limit=3)
    # what the timed calls above may not reach on a busy machine, reached without a clock: the ng-route phase;
    # one GPU in all (its per-GPU arrays are columns of one: another layout); kernels the tests call directly
    colgen_bound(hetero.generate(12, seed=25), time_limit=None, ng=True)
    colgen_bound(hetero.generate(8, ["V100"], seed=25), time_limit=None)
    P, A, D = np.array([1, 1, 1]), np.array([2, 0, 2]), np.array([4, 5, 0])
    W, pi, alive = np.ones(3), np.array([4.0, 6.0, 4.0]), np.ones((8, 3), bool)
    hetero_ng.columns(hetero_ng.forward(P, A, alive, W, D, pi, hetero_ng.neighbourhoods(D, 2)), P, W, D, pi, 1)
    hetero_pricing.interchange_beats(P, A, W, D, 0, 1, 2, 3)
    # last: its warm start runs the local search, which the "local" part has compiled by then
    solve_optimal(hetero.generate(12, seed=1), time_limit=60)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    {"single": single, "several": several, "local": local}[sys.argv[1]]()
