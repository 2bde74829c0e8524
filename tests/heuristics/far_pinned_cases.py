"""The instances of the pinned FAR makespan table (``data/far_pinned.json``).

The table holds, for every case, the phase-2 and final (refined) makespans as
``float.hex`` strings, recorded with the FAR implementation before its scaling
rewrite; ``test_far_pinned.py`` checks that FAR still produces them bit for
bit. Regenerate only on purpose: ``python -m tests.heuristics.far_pinned_cases``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from instances import gpus, mig

PRESETS = [(w, t) for w in ("PoorScaling", "MixedScaling", "GoodScaling") for t in ("WideTimes", "NarrowTimes")]
TABLE = Path(__file__).with_name("data") / "far_pinned.json"


def near_identical(n: int, gpu: str = "A100", spread: int = 7) -> mig.Problem:
    """Tasks that differ only in their 1-slice time (``10 + i % spread``): ties everywhere."""
    g = gpus.get(gpu)
    rest = {2: 6.0, 3: 4.5, 4: 3.5, 7: 2.0} if g.num_slices == 7 else {2: 6.0, 4: 3.5}
    return mig.Problem(g, [mig.Task(f"t{i}", {1: 10.0 + i % spread, **rest}) for i in range(n)])


def cases(full: bool = False):
    """``(key, problem)`` pairs: generated batches n = 1..1000 on the three GPUs, and near-identical ones."""
    ns = [1, 2, 3, 5, 8, 12, 17, 25, 40, 60, 100, 150, 250, 400, 700, 1000]
    out = []
    for i, n in enumerate(ns * (3 if full else 1)):
        gpu = ["A30", "A100", "H100"][i % 3]
        w, t = PRESETS[i % len(PRESETS)]
        seed = 100 + i
        p = mig.generate(n, gpu, w, t, seed=seed)
        reconf = i % 4 != 3
        out.append((f"gen/{gpu}/{w}/{t}/n={n}/seed={seed}/reconf={reconf}", p if reconf else p.without_reconfiguration()))
    for n in ([7, 30, 100, 300, 1000] if not full else [7, 14, 30, 64, 100, 200, 300, 500, 1000]):
        for gpu in ("A100", "A30"):
            for spread in (3, 7):
                p = near_identical(n, gpu, spread)
                out.append((f"near/{gpu}/n={n}/spread={spread}", p))
                if n <= 300:
                    out.append((f"near/{gpu}/n={n}/spread={spread}/noreconf", p.without_reconfiguration()))
    return out


def record(full: bool = False) -> dict:
    from heuristics import far

    table = {}
    for key, p in cases(full):
        r = far.plan(p)
        table[key] = [r.phase2_makespan.hex(), r.makespan.hex()]
    return table


if __name__ == "__main__":
    full = "--full" in sys.argv
    data = json.loads(TABLE.read_text()) if TABLE.exists() else {}
    data["full" if full else "default"] = record(full)
    TABLE.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
