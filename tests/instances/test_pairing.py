"""Problem data of the co-scheduling paper: Table 4 space, slowdown models, CSV readers, checker."""

import json
import math

import numpy as np
import pytest

from instances import pairing as P
from instances.errors import InstanceError


# ----------------------------------------------------------------- space ---

def test_table4_space_has_the_papers_100_corun_setups():
    # Sec. 5.1.2: 100 co-run setups = all co-run setups meeting 350 or 400 W.
    n = sum(len(P.ConfigSpace(p_total=pt).corun_configs(2)) for pt in (350, 400))
    assert n == 100
    for pt in (350, 400):
        for cfg in P.ConfigSpace(p_total=pt).corun_configs(2):
            assert cfg.cpu_cap + cfg.gpu_cap == pt
            assert sum(cfg.cores) == 32 and sum(cfg.gpcs) == 7


def test_at_most_budget_allows_every_grid_pair_under_the_cap():
    sp = P.ConfigSpace(p_total=350, budget="at_most")
    pairs = sp.power_pairs()
    assert all(c + g <= 350 for c, g in pairs)
    brute = [(c, g) for c in sp.cpu_caps for g in sp.gpu_caps if c + g <= 350]
    assert sorted(pairs) == sorted(brute)


@pytest.mark.parametrize("kw", [dict(p_total=200), dict(p_total=360),
                                dict(p_total=240, budget="at_most")])
def test_cap_that_no_configuration_satisfies_is_a_clear_error(kw):
    sp = P.ConfigSpace(**kw)
    with pytest.raises(InstanceError, match="P_total"):
        sp.power_pairs()
    with pytest.raises(InstanceError, match="field p_total"):
        P.PairingProblem(P.job_mix(1), sp)


def test_p_total_above_p_max_rejected():
    with pytest.raises(InstanceError, match="P_max"):
        P.ConfigSpace(p_total=600)


def test_naive_caps_split_evenly():
    assert P.ConfigSpace(p_total=350).naive_caps() == (175, 175)
    assert P.ConfigSpace(p_total=400).naive_caps() == (200, 200)


@pytest.mark.parametrize("cfg, field", [
    (P.Config((10, 22), (3, 4), 175, 175), "cores"),
    (P.Config((16, 16), (2, 5), 175, 175), "gpcs"),
    (P.Config((16, 16), (3, 4), 200, 200), "caps"),     # 400 W under P_total = 350
    (P.Config((16, 16), (3, 4), 180, 170), "caps"),     # off the grid
    (P.Config((32,), (8,), 175, 175, ), None),
])
def test_configuration_outside_the_space(cfg, field):
    prob = P.PairingProblem(P.job_mix(1), P.ConfigSpace(p_total=350))
    a, b = prob.jobs[:2]
    if field is None:   # a solo config is fine for a solo run, not for a pair
        assert prob.slowdown(a, (), cfg) > 0
        with pytest.raises(InstanceError):
            prob.slowdown(a, (b,), cfg)
        return
    with pytest.raises(InstanceError, match=f"field {field}"):
        prob.slowdown(a, (b,), cfg)


def test_triple_splits_are_closed_under_permutation_and_fill_the_chip():
    sp = P.ConfigSpace()
    assert len(sp.triple_core_splits) == 21 and len(sp.triple_gpc_splits) == 12
    assert all(sum(s) == 32 for s in sp.triple_core_splits)
    assert all(sum(s) == 7 for s in sp.triple_gpc_splits)
    with pytest.raises(InstanceError, match="permutation"):
        P.ConfigSpace(core_splits=((2, 30), (8, 24)))


# -------------------------------------------------------- analytic model ---

def test_analytic_slowdown_is_one_alone_without_caps_and_grows_when_shared():
    m = P.AnalyticModel()
    jobs = P.job_mix(3)
    for j in jobs:
        assert m.slowdown(j, (), P.Config((32,), (8,), 250, 250)) == pytest.approx(1.0)
        assert m.slowdown(j, (), P.Config((32,), (8,), 100, 150)) > 1.0
        assert m.slowdown(j, (jobs[0],), P.Config((16, 16), (4, 3), 250, 250)) > 1.0


def test_analytic_slowdown_never_grows_with_a_cap():
    m = P.AnalyticModel()
    rng = np.random.default_rng(0)
    jobs = P.generate(12, seed=3)
    for _ in range(200):
        a, b = rng.choice(len(jobs), 2, replace=False)
        ca = int(rng.choice([2, 8, 16, 24, 30]))
        pc, pg = rng.choice([100, 150, 200]), rng.choice([150, 200])
        cfg = P.Config((ca, 32 - ca), (3, 4), pc, pg)
        lo = m.slowdown(jobs[a], (jobs[b],), cfg)
        assert m.slowdown(jobs[a], (jobs[b],), P.Config(cfg.cores, cfg.gpcs, pc + 50, pg)) <= lo
        assert m.slowdown(jobs[a], (jobs[b],), P.Config(cfg.cores, cfg.gpcs, pc, pg + 50)) <= lo


@pytest.mark.parametrize("size", [1, 2, 3])
def test_vectorised_slowdowns_equal_the_scalar_interface(size):
    jobs = P.generate(6, seed=1)
    m = P.AnalyticModel()
    cfgs = P.ConfigSpace(p_total=400).corun_configs(size)[::7 if size < 3 else 61]
    sets = np.array([s for s in __import__("itertools").combinations(range(6), size)])
    fast = m.set_slowdowns(jobs, sets, cfgs)
    slow = P.SlowdownModel.set_slowdowns(m, jobs, sets, cfgs)
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


# ----------------------------------------------------------- table model ---

HEADER = "app,corunners,cores,gpcs,cpu_cap,gpu_cap,slowdown\n"


def _write(tmp_path, text, name="s.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_table_round_trip_reproduces_the_model(tmp_path):
    apps = {a: P.Job(a, a, **P.APPS[a]) for a in ("lud", "srad", "matvec")}
    space = P.ConfigSpace(p_total=350)
    tab = P.TableModel.from_model(P.AnalyticModel(), apps, space)
    path = str(tmp_path / "t.csv")
    tab.to_csv(path)
    back = P.TableModel.from_csv(path)
    jobs = P.generate(5, seed=2, apps=list(apps))
    sets = np.array([[0, 1], [2, 3], [4, 0]])
    cfgs = space.corun_configs(2)
    np.testing.assert_allclose(back.set_slowdowns(jobs, sets, cfgs),
                               P.AnalyticModel().set_slowdowns(
                                   [P.Job(j.name, j.app, j.solo_time, **{f: P.APPS[j.app][f]
                                    for f in P.FEATURES}) for j in jobs], sets, cfgs),
                               rtol=1e-12)


def test_table_lookup_ignores_corunner_order(tmp_path):
    p = _write(tmp_path, HEADER + "lud,srad+bfs,8/12/12,3/2/2,175,175,2.5\n")
    t = P.TableModel.from_csv(p)
    j = P.Job("x", "lud", 1.0)
    cfg = P.Config((8, 12, 12), (3, 2, 2), 175, 175)
    assert t.slowdown(j, (P.Job("b", "bfs", 1.0), P.Job("s", "srad", 1.0)), cfg) == 2.5


def test_missing_measurement_names_job_and_configuration(tmp_path):
    p = _write(tmp_path, HEADER + "lud,,32,8,175,175,1.2\n")
    t = P.TableModel.from_csv(p)
    with pytest.raises(InstanceError) as e:
        t.slowdown(P.Job("x", "lud", 1.0), (P.Job("y", "srad", 1.0),),
                   P.Config((16, 16), (3, 4), 175, 175))
    msg = str(e.value)
    assert p in msg and "task x" in msg and "srad" in msg and "cores 16/16" in msg


@pytest.mark.parametrize("text, needle", [
    ("", "empty file"),
    (HEADER, "no measurements"),
    ("app,cores,gpcs,cpu_cap,gpu_cap,slowdown\nlud,32,8,175,175,1\n", "field corunners"),
    (HEADER.strip() + ",extra\nlud,,32,8,175,175,1,0\n", "unknown column"),
    (HEADER + "lud,,32,8,175,175\n", "line 2: 6 fields"),
    (HEADER + "lud,,32,8,175,175,fast\n", "line 2: not a number"),
    (HEADER + "lud,,32,8,175,175,-1\n", "field slowdown: line 2: must be > 0"),
    (HEADER + "lud,,32,8,175,175,nan\n", "not finite"),
    (HEADER + "lud,srad,16,3/4,175,175,1.5\n", "field cores: line 2: 1 share"),
    (HEADER + "lud,srad,10/22,3/4,175,175,1.5\n", "core split 10/22 not in"),
    (HEADER + "lud,srad,16/16,2/5,175,175,1.5\n", "GPC split 2/5 not in"),
    (HEADER + "lud,srad,16/x,3/4,175,175,1.5\n", "expected integers"),
    (HEADER + "lud,,32,8,180,175,1.5\n", "not on the grids"),
    (HEADER + "lud,,32,8,175,175,1.5\nlud,,32,8,175,175,1.6\n", "line 3: conflicting duplicate"),
    (HEADER + ",,32,8,175,175,1.5\n", "empty program"),
    (HEADER + "lud,a+b+c,8/8/8/8,2/2/2/1,175,175,1.5\n", "at most 2"),
])
def test_malformed_slowdown_csv_is_rejected_with_a_clear_message(tmp_path, text, needle):
    p = _write(tmp_path, text)
    with pytest.raises(InstanceError) as e:
        P.TableModel.from_csv(p)
    msg = str(e.value)
    assert msg.startswith(p) and needle in msg and "\n" not in msg


def test_missing_file_is_an_instance_error(tmp_path):
    with pytest.raises(InstanceError, match="cannot read"):
        P.TableModel.from_csv(str(tmp_path / "nope.csv"))


# ------------------------------------------------------------------- jobs ---

def test_generator_is_seeded_and_varied():
    a, b = P.generate(30, seed=4), P.generate(30, seed=4)
    assert a == b and a != P.generate(30, seed=5)
    assert len({j.name for j in a}) == 30
    assert len({j.app for j in a}) > 3


def test_jobs_csv_round_trip_and_errors(tmp_path):
    p = str(tmp_path / "q.csv")
    P.save_jobs(P.generate(7, seed=0), p)
    assert P.load_jobs(p) == P.generate(7, seed=0)
    bad = _write(tmp_path, "name,app,solo_time\na,lud,0\n", "b.csv")
    with pytest.raises(InstanceError, match=r"task a: field solo_time: line 2"):
        P.load_jobs(bad)
    dup = _write(tmp_path, "name,app,solo_time\na,lud,1\na,lud,2\n", "d.csv")
    with pytest.raises(InstanceError, match="duplicate job name"):
        P.load_jobs(dup)
    feat = _write(tmp_path, "name,app,solo_time,gpu_share\na,lud,1,1.5\n", "f.csv")
    with pytest.raises(InstanceError, match="field gpu_share"):
        P.load_jobs(feat)


def test_problem_rejects_duplicate_names_and_bad_concurrency():
    j = P.Job("a", "lud", 1.0)
    with pytest.raises(InstanceError, match="duplicate"):
        P.PairingProblem((j, j))
    with pytest.raises(InstanceError, match="concurrency"):
        P.PairingProblem((j,), concurrency=4)


# ---------------------------------------------------------------- checker ---

def _solo_plan(prob):
    return P.Plan([P.JobSet((j.name,), *P.solo_time_at(prob, j)[::-1]) for j in prob.jobs])


def test_checker_accepts_solo_runs_and_rejects_each_violation():
    prob = P.PairingProblem(P.job_mix(1))
    plan = _solo_plan(prob)
    assert P.check(prob, plan) == []
    s = plan.sets
    assert any("no set" in e for e in P.check(prob, P.Plan(s[1:])))
    assert any("sets 0 and" in e for e in P.check(prob, P.Plan(s + s[:1])))
    wrong = P.JobSet(s[0].jobs, s[0].config, s[0].time * 0.9)
    assert any("model gives" in e for e in P.check(prob, P.Plan([wrong] + s[1:])))
    a, b = prob.jobs[:2]
    bad_cfg = P.Config((10, 22), (3, 4), 175, 175)
    errs = P.check(prob, P.Plan([P.JobSet((a.name, b.name), bad_cfg, 1.0)] + s[2:]))
    assert any("core split" in e for e in errs)
    trio = P.Config((8, 12, 12), (3, 2, 2), 175, 175)
    errs = P.check(prob, P.Plan([P.JobSet(tuple(j.name for j in prob.jobs[:3]), trio, 1.0)] + s[3:]))
    assert any("allowed 1..2" in e for e in errs)


def test_checker_flags_a_corun_slower_than_time_sharing():
    # Sec. 3.2 constraint 1: co-run only when it beats the jobs' solo runs.
    q = P.WeightedQueue([1.0, 1.0], [[math.inf, 3.0], [3.0, math.inf]])
    errs = P.check(q, P.Plan([P.JobSet(("j0", "j1"), None, 3.0)]))
    assert any("constraint 1" in e for e in errs)
    assert P.check(q, P.Plan([P.JobSet(("j0", "j1"), None, 3.0)]), require_corun_pays=False) == []


def test_weighted_queue_validation():
    with pytest.raises(InstanceError, match="symmetric"):
        P.WeightedQueue([1, 1], [[np.inf, 1], [2, np.inf]])
    with pytest.raises(InstanceError, match="triple"):
        P.WeightedQueue([1, 1], [[np.inf, 1], [1, np.inf]], concurrency=3)


def _pair_plan(prob):
    """A feasible plan: the first two jobs co-run in their best configuration, the others alone."""
    costs = P.costs_of(prob)
    return costs.plan([(0, 1)] + [(i,) for i in range(2, prob.W)], split=False)


@pytest.mark.parametrize("cores, gpcs", [((16, 16), (4,)), ((16, 16), ()), ((16,), (4, 3)),
                                         ((16, 16), (4, 3, 1)), ((8, 12, 12), (4, 3))])
def test_checker_reports_share_lists_that_do_not_fit_the_set(cores, gpcs):
    # a gpcs list shorter than cores once raised IndexError; a longer one was cut to fit and passed
    prob = P.PairingProblem(P.job_mix(1))
    plan = _pair_plan(prob)
    assert P.check(prob, plan) == []
    first = plan.sets[0]
    assert len(first.jobs) == 2
    cfg = P.Config(cores, gpcs, first.config.cpu_cap, first.config.gpu_cap)
    errs = P.check(prob, P.Plan([P.JobSet(first.jobs, cfg, first.time)] + plan.sets[1:]))
    assert errs == [f"set 0: configuration {cfg} does not fit 2 jobs"]


def test_checker_reports_a_short_gpcs_list_read_from_a_plan_file():
    prob = P.PairingProblem(P.job_mix(1))
    data = json.loads(_pair_plan(prob).to_json())
    data["sets"][0]["config"]["gpcs"] = data["sets"][0]["config"]["gpcs"][:1]
    plan = P.Plan.from_json(json.dumps(data), source="plan.json")
    errs = P.check(prob, plan)
    assert len(errs) == 1 and "does not fit 2 jobs" in errs[0]


# ---------------------------------------------------------- problem JSON ---

def _problems():
    table = P.TableModel.from_csv(P.SAMPLE_TABLE)
    return [
        P.PairingProblem(P.job_mix(1)),
        P.PairingProblem(P.generate(6, seed=4), P.ConfigSpace(p_total=400, budget="at_most"), concurrency=3),
        P.PairingProblem(P.generate(3, seed=1), model=P.AnalyticModel(cpu_idle=40.0, exponent=0.4, ref_gpcs=7)),
        P.PairingProblem(P.job_mix(1), P.ConfigSpace(), table),
        P.WeightedQueue.random(5, seed=2),
        P.WeightedQueue.random(4, seed=3, concurrency=3),
    ]


@pytest.mark.parametrize("k", range(6))
def test_problem_json_round_trip_keeps_the_problem_and_its_costs(tmp_path, k):
    prob = _problems()[k]
    path = tmp_path / "p.json"
    P.save(prob, path)
    back = P.load(path)
    assert type(back) is type(prob) and back == prob
    assert P.from_dict(json.loads(path.read_text())) == prob
    a, b = P.costs_of(prob), P.costs_of(back)
    np.testing.assert_array_equal(a.solo, b.solo)
    np.testing.assert_array_equal(a.corun, b.corun)
    assert a.triple == b.triple and a.solo_config == b.solo_config


def test_problem_json_leaves_out_defaults():
    prob = P.from_dict({"jobs": [{"name": "a", "app": "lud", "solo_time": 10}, {"name": "b", "app": "srad",
                                                                                 "solo_time": 4.5}]})
    assert prob == P.PairingProblem((P.Job("a", "lud", 10.0), P.Job("b", "srad", 4.5)))
    queue = P.from_dict({"solo": [1, 2], "pair": [[None, 2.5], [2.5, None]]})
    assert queue == P.WeightedQueue([1.0, 2.0], [[math.inf, 2.5], [2.5, math.inf]])


_JOB = {"name": "a", "app": "lud", "solo_time": 10}
_ROW = {"app": "lud", "corunners": [], "cores": [32], "gpcs": [8], "cpu_cap": 175, "gpu_cap": 175, "slowdown": 1.2}


@pytest.mark.parametrize("data, where, needle", [
    ({"jobs": [_JOB], "concurency": 2}, "field concurency", "unknown field"),
    ({"jobs": [dict(_JOB, gpu_shar=0.5)]}, "task a: field gpu_shar", "unknown field"),
    ({"jobs": [dict(_JOB, solo_time="10")]}, "task a: field solo_time", "must be a number"),
    ({"jobs": [dict(_JOB, cpu_mem=1.5)]}, "task a: field cpu_mem", "must be in [0, 1]"),
    ({"jobs": [_JOB, _JOB]}, "task a: field name", "duplicate job name"),
    ({"jobs": []}, "field jobs", "no jobs"),
    ({"space": {}}, "field jobs", "missing"),
    ({"jobs": [_JOB], "concurrency": 4}, "field concurrency", "between 1 and 3"),
    ({"jobs": [_JOB], "concurrency": True}, "field concurrency", "not an integer"),
    ({"jobs": [_JOB], "space": {"p_total": 600}}, "field space.p_total", "exceeds P_max"),
    ({"jobs": [_JOB], "space": {"gpc_splits": [[3, 4.5]]}}, "field space.gpc_splits[0][1]", "not an integer"),
    ({"jobs": [_JOB], "space": {"core_splits": [[2, 30]]}}, "field space.core_splits", "closed under permutation"),
    ({"jobs": [_JOB], "model": {"analytic": {}, "table": [_ROW]}}, "field model", "give one of"),
    ({"jobs": [_JOB], "model": {"analytic": {"exponent": 0}}}, "field model.analytic.exponent", "must be > 0"),
    ({"jobs": [_JOB], "model": {"table": [dict(_ROW, cores=[16])]}}, "task lud: field model.table[0].cores",
     "core split 16 not in the configuration space"),
    ({"jobs": [_JOB], "model": {"table": [dict(_ROW, slowdown="1.2")]}}, "task lud: field model.table[0].slowdown",
     "must be a number"),
    ({"jobs": [_JOB], "model": {"table": []}}, "field model.table", "no measurements"),
    ({"solo": [1, 2], "pair": [[None, 3], [4, None]]}, "field pair", "symmetric"),
    ({"solo": [1, 2], "pair": [[None, 3]]}, "field pair", "1 rows for 2 jobs"),
    ({"solo": [1, 2, 3], "pair": [[None, 3, 3], [3, None, 3], [3, 3, None]],
      "triple": [{"jobs": [0, 2, 1], "time": 4}], "concurrency": 3}, "field triple[0].jobs", "three increasing"),
])
def test_bad_problem_files_name_file_and_field(tmp_path, data, where, needle):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceError) as info:
        P.load(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: {where}: ") and needle in msg and "\n" not in msg, msg


@pytest.mark.parametrize("text, needle", [
    ('{"jobs": [{"name": "a", "app": "lud", "solo_time": NaN}]}', "finite"),
    ('{"jobs": [{"name": "a", "app": "lud", "solo_time": 1, "solo_time": 2}]}', "twice"),
    ('[1, 2]', "JSON object"),
])
def test_malformed_problem_json_is_one_line_naming_the_file(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InstanceError, match=needle) as info:
        P.load(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_a_model_without_json_form_is_not_saved(tmp_path):
    class Flat(P.SlowdownModel):
        def slowdown(self, job, others, config):
            return 1.0

    with pytest.raises(InstanceError, match="Flat has no JSON form"):
        P.save(P.PairingProblem(P.job_mix(1), model=Flat()), tmp_path / "p.json")
