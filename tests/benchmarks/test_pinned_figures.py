"""Pinned figures: the reproduced paper figures, and our figures where they deviate, fail when they move.

Each test recomputes a figure of a results page (docs/results/*.md) at the
seeds the benchmark uses and compares it with the PAPER's number where ours
matches it, or with our own number where it does not (the deviation is
explained in the page's notes, benchmarks/report_notes/*.md). A tolerance is
the paper's rounding plus the run-to-run spread MEASURED over fresh seeds (or
nothing where the figure is deterministic); each test says how it was
measured. The quick ones run in the default suite (about 10 s together on an
idle 2-core machine, a 100-instance Table 4 cell at n = 35 taking 0.3 s;
several times that on a busy one); the full-size ones are marked slow
(``--run-slow``: about 15 minutes on a busy machine, Table 4 at 1000
instances per cell most of it).

Papers (docs/references.md): the FAR paper (Villarrubia, Costero, Igual,
Olcoz, "Leveraging Multi-Instance GPUs through moldable task scheduling",
JPDC 2025), the CASE paper (Porter, Chen, Pande, "Compiler-Assisted
Scheduling for Multi-Instance GPUs", GPGPU '22), the co-scheduling paper
(Saba, Arima, Liu, Schulz, ARCS 2022) and the partitioning paper (Zahaf et
al., RTNS 2021).
"""

from __future__ import annotations

import statistics

import pytest

from benchmarks import case as bcase
from benchmarks import pairing as bpairing
from benchmarks import paper
from benchmarks.paper_spec import N_T4, PAPER, SCALINGS, Generator, cell_seed
from benchmarks.paper_tables import _rho_cell, table78
from benchmarks.realtime import task_seed


def _rho(scaling: str, n: int, reps: int) -> float:
    """Table 4's cell as the benchmark computes it (seed 0), with p_sup = 0."""
    return statistics.fmean(_rho_cell(Generator(p_sup=0.0), scaling, n, reps, 0))


# --------------------------------------------------------------------------- FAR paper, Table 4 (Sec. 6.4.2)

#: Measured spread of a 100-instance mean of rho around the 1000-instance mean of the same seed, per n:
#: the largest |mean of the first 100 - mean of all 1000| over seeds 0-9 and the three scalings (p_sup 0).
SPREAD_100 = {20: 0.005, 25: 0.002, 30: 0.002, 35: 0.002}


@pytest.mark.parametrize("n", [20, 25, 30, 35])
@pytest.mark.parametrize("scaling", SCALINGS)
def test_table4_quick_cells_match_the_paper(scaling, n):
    """Table 4 at p_sup 0, n >= 20, within 0.01 of the paper from 100 instances per cell.

    The paper's figure is a 1000-instance mean; 100 instances cost a tenth and
    stay within ``SPREAD_100[n]`` of it (spread measured over seeds 0-9 of the
    benchmark's cell seeds, 1000 instances each: max |mean of 100 - mean of
    1000| was 0.0042, 0.0020, 0.0019 and 0.0011 for n = 20, 25, 30, 35, rounded
    up), so the test allows 0.01 + that spread.
    """
    ours = _rho(scaling, n, 100)
    assert abs(ours - PAPER[4][scaling][N_T4.index(n)]) <= 0.01 + SPREAD_100[n]


#: Our 1000-instance rho where it does not match the paper (GoodScaling, n = 10: paper 1.21), and its
#: tolerance: 1000-instance means over seeds 0-9 lay in 1.162-1.166, doubled to 0.006.
GOOD10 = (1.164, 0.006)


@pytest.mark.slow
@pytest.mark.parametrize("scaling", SCALINGS)
def test_table4_full_matches_the_paper_in_17_of_18_cells(scaling):
    """Table 4 at p_sup 0 as the results page runs it (1000 instances per cell, seed 0).

    17 of 18 cells lie within 0.01 of the paper. Spread measured over seeds
    0-9 (1000 instances per cell each): a cell's mean moved by at most 0.011
    at n = 10, 0.0044 at n = 15 and 0.0022 at n >= 20; every seed put those 17
    cells within 0.011 of the paper, so the paper's own 1000-instance means
    carry about that much noise and 0.01 is the tolerance the paper's
    precision allows. GoodScaling at n = 10 is 1.164 against the paper's 1.21
    (a deviation, explained on docs/results/paper-tables.md): pinned to ours.
    """
    for n, want in zip(N_T4, PAPER[4][scaling]):
        ours = _rho(scaling, n, 1000)
        if (scaling, n) == ("GoodScaling", 10):
            assert abs(ours - GOOD10[0]) <= GOOD10[1]
            assert want - ours > 0.03  # still a deviation: if it closes, update the page's notes
        else:
            assert abs(ours - want) <= 0.01, (scaling, n, ours, want)


# --------------------------------------------------------------------------- FAR paper, Table 5 (Sec. 6.5.2)

def _sigma(p_sup: float, scaling: str, times: str, methods: tuple[str, ...], reps: int = 200) -> dict[str, float]:
    from heuristics.mig import METHODS

    gen = Generator(p_sup=p_sup)
    vals: dict[str, list[float]] = {m: [] for m in methods}
    for r in range(reps):
        p = gen.batch(15, scaling, times, cell_seed(0, 5, scaling, times, r))
        far = METHODS["FAR"](p).makespan
        for m in methods:
            vals[m].append(METHODS[m](p).makespan / far)
    return {m: statistics.fmean(v) for m, v in vals.items()}


#: Table 5 cells within 0.05 of the paper at 200 instances (seed 0), under each p_sup reading:
#: (p_sup, scaling, times, method, paper).
T5_MATCH = [
    (0.0, "PoorScaling", "WideTimes", "FixPartBest", 1.22),
    (0.0, "PoorScaling", "WideTimes", "FixPart(1,...,1)", 1.29),
    (0.0, "MixedScaling", "NarrowTimes", "FixPart(7)", 2.17),
    (0.5, "PoorScaling", "WideTimes", "FixPart(1,...,1)", 1.29),
]


@pytest.mark.slow
@pytest.mark.parametrize("p_sup,scaling,times,method,want", T5_MATCH)
def test_table5_cells_that_match_the_paper(p_sup, scaling, times, method, want):
    """The Table 5 cells that match the paper (within 0.05), 200 instances as the results page.

    Spread measured over seeds 0-3 (200 instances each): these cells' means
    move by at most 0.028 (FixPart(7)) and 0.016 (the others), and every seed
    stayed within 0.05 of the paper (the worst, FixPart(1,...,1) at p_sup 0,
    0.049), which is the tolerance. The other cells deviate (MISO-opt most;
    docs/results/paper-tables.md).
    """
    ours = _sigma(p_sup, scaling, times, (method,))[method]
    assert abs(ours - want) <= 0.05


@pytest.mark.slow
@pytest.mark.parametrize("p_sup,ours,spread", [(0.5, 2.01, 0.03), (0.0, 1.83, 0.03)])
def test_table5_miso_opt_deviation_is_pinned(p_sup, ours, spread):
    """MISO-opt, PoorScaling, WideTimes: 2.01 (p_sup 0.5) and 1.83 (p_sup 0) against the paper's 1.55.

    Our reading of MISO-opt (a new partition when every task of the current one
    has ended) idles more than the paper's; pinned to our figure, with the
    spread of the 200-instance mean measured over seeds 0-3 (1.987-2.021 and
    1.822-1.837: within 0.03 of the pin).
    """
    got = _sigma(p_sup, "PoorScaling", "WideTimes", ("MISO-opt",))["MISO-opt"]
    assert abs(got - ours) <= spread
    assert got - 1.55 > 0.2  # the deviation the notes explain


# --------------------------------------------------------------------------- FAR paper, Tables 7-8 (Sec. 6.7.1)

#: n = 10 cells of the paper's chain of 1001 batches (p_sup 0, seed 0): ours (p_rev %, p_move/swap %) and the
#: paper's p_move/swap, which ours matches for PoorScaling, WideTimes.
CHAIN_PIN = {("PoorScaling", "WideTimes"): (5.92, 14.92, 14.47), ("MixedScaling", "WideTimes"): (6.83, 12.40, 14.30)}


@pytest.mark.slow
@pytest.mark.parametrize("scaling,times", sorted(CHAIN_PIN))
def test_table7_chain_of_1001_is_pinned(scaling, times):
    """Table 7 with the paper's chain of 1001 batches (one chain per cell, p_sup 0), n = 10.

    Spread measured over chain seeds 0-3: p_rev ranged 5.83-6.75 (PoorScaling)
    and 6.38-6.88 (MixedScaling), p_move/swap 14.35-14.92 and 11.98-12.40;
    tolerances 1.0 and 0.6 points around the seed-0 chain. PoorScaling's
    p_move/swap matches the paper (14.47) within that spread; MixedScaling's
    (paper 14.30) and both p_rev (paper 3.23, 4.87) deviate and are pinned.
    """
    from benchmarks.paper_tables import _chains, _concatenations

    p_rev, p_ms, paper_ms = CHAIN_PIN[(scaling, times)]
    w = next(_chains(1, 0, 7, scaling, times, 10, Generator(p_sup=0.0), 1001))
    triv, rev, plan = _concatenations(w, "ours")
    got_rev, got_ms = (triv / rev - 1) * 100, (triv / plan.makespan - 1) * 100
    assert abs(got_rev - p_rev) <= 1.0 and abs(got_ms - p_ms) <= 0.6
    if scaling == "PoorScaling":
        assert abs(got_ms - paper_ms) <= 0.6


def test_chain_of_two_is_one_concatenation():
    """``chain=2`` is the pair the benchmark ran before the option: the same seeds and figures.

    Deterministic (seeded): two chains of 2 give identical tables, and a
    chain of 3 differs from it (two concatenations).
    """
    a = table78(1, gen=Generator(p_sup=0.0))
    b = table78(1, gen=Generator(p_sup=0.0), chain=2)
    assert a == b
    c = table78(1, gen=Generator(p_sup=0.0), chain=3)
    assert c != a


def test_paper_methods_with_commas_are_selectable(capsys):
    """``--methods`` keeps FixPart(1,...,1)'s own commas: the column exists and holds a ratio."""
    assert paper.main(["--tables", "5", "--reps", "1", "--methods", "FAR,FixPart(1,...,1)", "--markdown",
                       "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(x for x in lines if x.startswith("|  |"))
    assert [c.strip() for c in header.strip("|").split("|")][1] == "FixPart(1,...,1)"
    row = next(x for x in lines if x.startswith("| PoorScaling, NarrowTimes |"))
    assert float(row.split("|")[2].split()[0]) >= 1.0 - 1e-9


# --------------------------------------------------------------------------- CASE paper (Sec. 4, Figures 1-3, Table 2)

def test_case_figure3_throughput_is_pinned():
    """CASE over Slurm on the A100 (Figure 3): mixed-ratio throughput 1.20x, the paper's 1.15x.

    ``benchmarks.case`` uses seeds 0-4; over eight disjoint sets of 5 seeds
    the figure ranged 1.18-1.28 (the A100's single node makes it the noisiest),
    so it is pinned to 1.20 +- 0.10, which holds the paper's 1.15x. Turnaround
    (1.00x against the paper's 2.31x) is a deviation: pinned within the
    measured range 0.98-1.02.
    """
    res = bcase.sweep([3], 5, True)
    assert abs(bcase._mixed(res, 3, "throughput") - 1.20) <= 0.10
    assert abs(bcase._mixed(res, 3, "turnaround") - 1.00) <= 0.03


@pytest.mark.slow
def test_case_a30_figures_are_pinned():
    """Figures 1-2 (A30 nodes A-C) and Table 2, as the results page runs them (seeds 0-4).

    Throughput 1.34x and 1.36x against the paper's 1.45x and 1.53x, turnaround
    1.06x and 1.07x against 1.39x and 1.48x: deviations, pinned. Spread
    measured over eight disjoint sets of 5 seeds: throughput 1.32-1.36
    (Fig. 1) and 1.35-1.39 (Fig. 2), turnaround 1.04-1.07 and 1.06-1.09, mean
    slowdown 2.0-2.3 %; tolerances 0.03 and 0.4 points. The slowdown is
    calibrated to the paper's 2.2 %, so it is no evidence, only a guard.
    The paper's ordering holds: Figure 2 (smaller footprints) gains more than
    Figure 1.
    """
    res = bcase.sweep([1, 2], 5, True)
    thr1, thr2 = bcase._mixed(res, 1, "throughput"), bcase._mixed(res, 2, "throughput")
    assert abs(thr1 - 1.34) <= 0.03 and abs(thr2 - 1.36) <= 0.03
    assert thr2 >= thr1
    assert abs(bcase._mixed(res, 1, "turnaround") - 1.06) <= 0.03
    assert abs(bcase._mixed(res, 2, "turnaround") - 1.07) <= 0.03
    slow = statistics.fmean(100 * bcase._med(res[(1, c, r)], "slowdown") for c in "ABC" for r in ("1:4", "0:1"))
    assert abs(slow - 2.0) <= 0.4


# --------------------------------------------------------------------------- co-scheduling paper (Sec. 5.2, Table 8)

#: The paper's Table 8: job sets Algorithm 1 chose per total power cap and job mix.
PAPER_T8 = {
    (350, 1): {"gaussian-lud", "pathfinder-streamcluster"},
    (350, 2): {"gaussian-hotspot", "pathfinder-lavaMD", "matvec-srad"},
    (350, 3): {"lavaMD-gaussian", "lud-pathfinder", "hotspot-streamcluster", "matvec-srad"},
    (400, 1): {"gaussian-lud", "pathfinder-streamcluster"},
    (400, 2): {"hotspot-lavaMD", "srad-pathfinder", "matvec-gaussian"},
    (400, 3): {"gaussian-lud", "srad-pathfinder", "hotspot-streamcluster", "lavaMD-matvec"},
}
#: Ours (analytic model): (speed-up of Algorithm 1 over naive time sharing %, pairs shared with Table 8).
OURS_T8 = {(350, 1): (21.7, 0), (350, 2): (16.6, 0), (350, 3): (18.3, 2),
           (400, 1): (17.1, 0), (400, 2): (12.3, 0), (400, 3): (13.2, 0)}


def _pairs(sets) -> set[frozenset]:
    return {frozenset(s.split("-")) for s in sets}


@pytest.mark.parametrize("p_total,mix", sorted(PAPER_T8))
def test_pairing_job_mixes_are_pinned(p_total, mix):
    """The Table 6 job mixes: Algorithm 1's sets equal the exact optimum (the paper's claim), the rest pinned.

    The paper notes that Edmonds' matching returns the optimal job sets when
    the slowdown estimates are exact; under our model Algorithm 1's total
    equals the set-partitioning optimum in every mix (matches). Its speed-up
    over naive time sharing (12-22 %, the paper up to 67.4 %) and its job sets
    (sharing 2 pairs with Table 8 in one mix, none in the others) deviate and
    are pinned. Deterministic (analytic model, no random draw; three runs gave
    identical totals): the tolerance is the printed rounding.
    """
    from heuristics import pairing as hp
    from instances import pairing
    from milp.pairing import solve

    prob = pairing.PairingProblem(pairing.job_mix(mix), pairing.ConfigSpace(p_total=p_total),
                                  pairing.AnalyticModel())
    plan = hp.METHODS["algorithm1"](prob)
    naive = hp.METHODS["ts-naive"](prob).total_time
    exact = solve(prob, backend="cpsat", time_limit=60)
    assert plan.total_time == pytest.approx(exact.objective, rel=1e-6)
    speedup, shared = OURS_T8[(p_total, mix)]
    assert bpairing._speedup(naive, plan.total_time) == pytest.approx(speedup, abs=0.05)
    assert len(_pairs(PAPER_T8[(p_total, mix)]) & {frozenset(s.jobs) for s in plan.sets}) == shared


# --------------------------------------------------------------------------- partitioning paper (Sec. 7)

def test_realtime_act_schedules_what_ina_schedules():
    """ACT (exhaustive forbidden list) schedules the same sets as INA with as many partitions (Sec. 7.2, Fig. 5).

    The paper finds ACT slightly worse and much faster; ours schedules the
    same sets and is slower. A surprising finding kept as a test: on 12 sets
    of the benchmark's seeds (n = 50 at U = 34, 40, 44 and n = 200 at U = 40)
    ACT and INA agreed on success 12 of 12 times and on the number of
    partitions 11 of 12 (the exception a failed set), although the partitions
    themselves differed on 8. Deterministic per task set; pinned on the two
    n = 50, U = 34 sets where ACT also evaluated more merges (1259 against
    1194, 1295 against 863), its extra up-front pair tests.
    """
    from heuristics import realtime as h
    from instances import realtime as rt

    for rep in (0, 1):
        p = rt.generate(n=50, utilization=34, sms=68, seed=task_seed(0, 50, 34, rep))
        act, ina = h.Allocator(p, "sms", exhaustive=True), h.Allocator(p, "sms", exhaustive=False)
        ra, ri = act.run(), ina.run()
        assert ra.success and ri.success
        assert len(ra.solution.partitions) == len(ri.solution.partitions)
        assert act.stats["merges"] > ina.stats["merges"]


@pytest.mark.slow
def test_realtime_sms_beats_bf_at_high_utilisation():
    """Figure 5 (n = 50): every heuristic schedules every set at U = 30; SMS schedules at least as many as BF at
    U = 40-46, as the paper finds ("as the utilization increases, the >>-based heuristics perform better").

    Schedulability counts over 5 sets per point; on the results page (10 sets)
    SMS >= BF held at every utilisation.
    """
    from heuristics import realtime as h
    from instances import realtime as rt

    low = [rt.generate(n=50, utilization=30, sms=68, seed=task_seed(0, 50, 30, r)) for r in range(3)]
    assert all(h.run(p, m).success for p in low for m in ("SMS_INA", "BF_INA"))
    sms = bf = 0
    for u in (40, 42, 44, 46):
        for r in range(5):
            p = rt.generate(n=50, utilization=u, sms=68, seed=task_seed(0, 50, u, r))
            sms += h.run(p, "SMS_INA").success
            bf += h.run(p, "BF_INA").success
    assert sms >= bf
