"""HiGHS's process-wide thread pool: no result of the toolkit depends on which HiGHS model ran first.

HiGHS refuses a model whose explicit thread count differs from the pool the
process's first model sized. On a machine with many cores the default pool
is wide, and a model asking for one thread then got no LP at all: the MIG
column-generation bound fell back to its starting value.
"""

from __future__ import annotations

import ast
from pathlib import Path

import highspy
import numpy as np
import pytest

from bounds.highs_lp import run_lp, silent_highs, use_threads

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("instances", "bounds", "heuristics", "milp", "benchmarks")


def _run_with_threads(k: int) -> highspy.HighsModelStatus:
    h = silent_highs()
    h.setOptionValue("threads", k)
    h.addVar(0.0, 1.0)
    h.changeColCost(0, 1.0)
    h.run()
    return h.getModelStatus()


@pytest.fixture
def wide_pool():
    """The process's pool sized to 3 threads, as a many-core machine's default would."""
    use_threads(3)
    assert _run_with_threads(3) == highspy.HighsModelStatus.kOptimal
    yield
    use_threads(1)


def test_a_mismatched_explicit_count_is_refused_and_run_lp_says_so(wide_pool):
    # what the toolkit's models avoid: HiGHS's refusal, which run_lp reports instead of a value
    h = silent_highs()
    h.setOptionValue("threads", 2)
    h.addVar(0.0, 1.0)
    assert run_lp(h) != highspy.HighsModelStatus.kOptimal


def _run_default() -> highspy.HighsModelStatus:
    h = silent_highs()
    h.addVar(0.0, 1.0)
    h.run()
    return h.getModelStatus()


def test_use_threads_resizes_the_pool():
    # a default-count model between the resize and the next explicit one must not size the pool its way
    for k in (2, 1, 3, 1):
        use_threads(k)
        assert _run_default() == highspy.HighsModelStatus.kOptimal
        assert _run_with_threads(k) == highspy.HighsModelStatus.kOptimal


def test_mig_colgen_bound_after_a_wide_pool(wide_pool):
    from bounds.mig_colgen import colgen_bound
    from instances import mig

    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
    rep = colgen_bound(p, lower=1.0)
    assert rep.lp_failures == 0
    assert 2.5 < rep.bound <= 2.74


def test_mig_colgen_stops_without_a_verdict_when_the_lp_fails(monkeypatch):
    from bounds.mig_colgen import colgen_bound
    from instances import mig

    p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5}), mig.Task("b", {1: 4.0, 2: 2.5, 4: 1.5})])
    monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: highspy.HighsModelStatus.kUnknown)
    rep = colgen_bound(p, lower=1.0)
    # no LP value: nothing proven beyond the start, and no makespan called feasible
    assert rep.lp_failures == 1 and rep.bound == 1.0 and rep.feasible is None
    assert rep.steps[-1][1] == "stopped"


def test_pairing_matching_after_a_wide_pool(wide_pool):
    from heuristics.pairing import edmonds

    rng = np.random.default_rng(11)
    W = 14
    solo = rng.uniform(1.0, 3.0, W)
    weights = solo[:, None] + solo[None, :] - rng.uniform(0.0, 1.5, (W, W))
    weights = (weights + weights.T) / 2

    def cost(plan):
        return sum(solo[s[0]] if len(s) == 1 else weights[s[0], s[1]] for s in plan)

    assert cost(edmonds(weights, solo, "pruned")) == pytest.approx(cost(edmonds(weights, solo, "perfect")))


def _threads_settings(tree: ast.AST) -> list[int]:
    """Lines that set HiGHS's ``threads`` option (``setOptionValue("threads", ...)`` or ``[...]["threads"] =``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "setOptionValue" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "threads":
            lines.append(node.lineno)
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "threads":
                    lines.append(node.lineno)
    return lines


def test_every_explicit_highs_thread_count_resizes_the_pool_first():
    """Discovery: a module that sets HiGHS's thread count calls :func:`use_threads` in the same function."""
    checked = 0
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).glob("*.py")):
            text = path.read_text()
            if '"threads"' not in text:
                continue
            tree = ast.parse(text)
            if not _threads_settings(tree):
                continue
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "use_threads":
                    continue
                sets = _threads_settings(fn)
                if not sets or "highs" not in ast.unparse(fn).lower():
                    continue
                checked += 1
                calls = {getattr(n.func, "id", getattr(n.func, "attr", "")) for n in ast.walk(fn)
                         if isinstance(n, ast.Call)}
                assert "use_threads" in calls, f"{path.relative_to(ROOT)}:{sets[0]} sets HiGHS threads without use_threads"
    assert checked >= 1  # milp.highs's user-requested workers


def test_mig_block_pricing_claims_nothing_from_a_failed_highs_run(monkeypatch):
    """A HiGHS run that errs reads back a dual bound of 0: the pricing must not take it as its bound."""
    from bounds.mig_colgen_pricing import BlockPricer
    from instances import mig

    p = mig.generate(n=3, gpu="A100", seed=11)
    gpu = p.gpu
    places = list(gpu.placements)
    chains = {k: sorted((j for j, q in enumerate(places) if k in q.slices), key=lambda j: -len(places[j].slices))
              for k in range(7)}
    pairs = {(i, j): t.times[q.size] for i, t in enumerate(p.tasks) for j, q in enumerate(places)}
    pricer = BlockPricer([4, 5, 6], chains, pairs, {j: gpu.create_time[q.size] for j, q in enumerate(places)},
                         {j: gpu.destroy_time[q.size] for j, q in enumerate(places)})
    profit = {key: 1.0 for key in pricer.pairs}
    T = 1.2 * max(t.times[1] for t in p.tasks)
    assert pricer.price_highs(profit, T, None)[0] > 0  # the real maximum is positive
    monkeypatch.setattr(highspy.Highs, "run", lambda self: highspy.HighsStatus.kError)
    assert pricer.price_highs(profit, T, None)[0] == float("inf")
