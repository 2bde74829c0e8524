"""Carrying out MIG schedules: the operations and their waits, the event-driven loop, simulated runs, the dry run.

Every realised schedule is judged by the independent checker
(``instances.mig_check``) against the problem of the realised durations.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristics import far
from heuristics.mig import METHODS
from instances import mig
from instances.errors import InstanceError, OptionError
from instances.mig_execution import (CREATE_CI, CREATE_GI, DESTROY_CI, DESTROY_GI, LAUNCH, WAIT, ExecutionError,
                                     Noise, SimulatedBackend, execute, main, nvidia_smi_lines, operations, realise,
                                     simulate)

# -- two hand-made plans ------------------------------------------------------
# A30: a on 2@0 and b on 2@2 side by side, then both instances go and c runs on the whole GPU.
A30 = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.2}), mig.Task("b", {1: 5.0, 2: 3.0, 4: 2.0}),
                          mig.Task("c", {1: 8.0, 2: 5.0, 4: 3.0})])
_L, _R, _W = A30.gpu.placement(2, 0), A30.gpu.placement(2, 2), A30.gpu.placement(4, 0)
A30_PLAN = mig.Schedule(
    "A30", [mig.ScheduledTask("a", _L, 0.12, 2.12), mig.ScheduledTask("b", _R, 0.24, 3.24),
            mig.ScheduledTask("c", _W, 3.47, 6.47)],
    [mig.Reconfiguration("create", _L, 0.0, 0.12), mig.Reconfiguration("create", _R, 0.12, 0.24),
     mig.Reconfiguration("destroy", _L, 2.12, 2.22), mig.Reconfiguration("destroy", _R, 3.24, 3.34),
     mig.Reconfiguration("create", _W, 3.34, 3.47)])
# A100: y on 4@0 and x on 3@4 side by side, then z on the whole GPU.
A100 = mig.Problem("A100", [mig.Task("x", {1: 10, 2: 6, 3: 4, 4: 3.5, 7: 2}),
                            mig.Task("y", {1: 12, 2: 7, 3: 5, 4: 4.5, 7: 3}),
                            mig.Task("z", {1: 9, 2: 5, 3: 4, 4: 3, 7: 1.5})])
_F, _T, _A = A100.gpu.placement(4, 0), A100.gpu.placement(3, 4), A100.gpu.placement(7, 0)
A100_PLAN = mig.Schedule(
    "A100", [mig.ScheduledTask("y", _F, 0.21, 4.71), mig.ScheduledTask("x", _T, 0.41, 4.41),
             mig.ScheduledTask("z", _A, 5.16, 6.66)],
    [mig.Reconfiguration("create", _F, 0.0, 0.21), mig.Reconfiguration("create", _T, 0.21, 0.41),
     mig.Reconfiguration("destroy", _T, 4.41, 4.62), mig.Reconfiguration("destroy", _F, 4.71, 4.92),
     mig.Reconfiguration("create", _A, 4.92, 5.16)])


def test_the_hand_made_plans_are_feasible():
    assert mig.check(A30, A30_PLAN) == [] and mig.check(A100, A100_PLAN) == []


def _by(program):
    """(kind, placement name or task) -> operation."""
    return {(op.kind, op.task or op.placement.name): op for op in program.operations}


def test_operations_of_the_a30_plan_and_what_each_waits_for():
    program = operations(A30_PLAN)
    ops = _by(program)
    idx = {k: op.index for k, op in ops.items()}
    assert len(program) == 18  # 3 instances x (2 creates + 2 destroys) + 3 tasks x (launch + wait)

    def after(kind, what):
        return {k for k, i in idx.items() if i in ops[(kind, what)].after}

    # a create waits for the destroys of the earlier instances that share a slice with it (rule 3)
    assert after(CREATE_GI, "4@0") == {(DESTROY_GI, "2@0"), (DESTROY_GI, "2@2")}
    # one at a time (rule 4), in the plan's order: each channel step after the previous one
    assert after(CREATE_GI, "2@2") == {(CREATE_CI, "2@0")}
    assert after(DESTROY_CI, "2@0") == {(WAIT, "a"), (CREATE_CI, "2@2")}
    assert after(DESTROY_CI, "2@2") == {(WAIT, "b"), (DESTROY_GI, "2@0")}
    # a launch waits for its compute instance, a wait for its launch, a destroy for the last task (rule 2)
    assert after(CREATE_CI, "2@0") == {(CREATE_GI, "2@0")}
    assert after(LAUNCH, "c") == {(CREATE_CI, "4@0")}
    assert after(WAIT, "c") == {(LAUNCH, "c")}
    assert after(DESTROY_GI, "2@2") == {(DESTROY_CI, "2@2")}
    # the plan keeps 4@0 to the end; the run removes it after c (not counted in the makespan)
    assert ops[(DESTROY_CI, "4@0")].teardown and not ops[(DESTROY_CI, "2@0")].teardown
    assert after(DESTROY_CI, "4@0") == {(WAIT, "c"), (CREATE_CI, "4@0")}
    # the order is a valid sequential order: every wait points backwards
    assert all(d < op.index for op in program.operations for d in op.after)
    assert [op.kind for op in program.operations if op.channel][:4] == [CREATE_GI, CREATE_CI, CREATE_GI, CREATE_CI]


def test_the_ready_order_drops_the_chain_but_keeps_every_rule():
    program = operations(A30_PLAN, order="ready")
    ops = _by(program)
    assert ops[(CREATE_GI, "2@2")].after == ()
    assert [program.operations[i].kind for i in ops[(DESTROY_CI, "2@0")].after] == [WAIT]
    gi4 = ops[(CREATE_GI, "4@0")]
    assert {program.operations[i].placement.name for i in gi4.after} == {"2@0", "2@2"}
    run = simulate(A30, A30_PLAN, order="ready")
    assert run.violations == [] and run.makespan == pytest.approx(A30_PLAN.makespan)


def test_without_teardown_the_plans_last_instance_stays():
    program = operations(A30_PLAN, teardown=False)
    assert len(program) == 16 and not any(op.teardown for op in program.operations)


@pytest.mark.parametrize("problem, plan", [(A30, A30_PLAN), (A100, A100_PLAN)])
def test_with_planned_durations_the_run_is_the_plan(problem, plan):
    run = simulate(problem, plan)
    assert run.violations == []
    assert run.makespan == pytest.approx(plan.makespan)
    got = run.schedule.by_task()
    for t in plan.tasks:
        assert got[t.task].start == pytest.approx(t.start) and got[t.task].end == pytest.approx(t.end)


def test_a_late_task_delays_what_waits_for_it_and_nothing_else():
    # b runs 50 % longer: 2@2's destroy, the create of 4@0 and c move by 1.5 s; a does not move
    real = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.2}), mig.Task("b", {1: 7.5, 2: 4.5, 4: 3.0}),
                               mig.Task("c", {1: 8.0, 2: 5.0, 4: 3.0})])
    program = operations(A30_PLAN)
    trace = execute(program, SimulatedBackend(real))
    got = trace.schedule()
    assert mig.check(real, got) == []
    assert got.by_task()["a"].end == pytest.approx(2.12)
    assert got.by_task()["c"].end == pytest.approx(6.47 + 1.5)


def test_the_channel_runs_one_operation_at_a_time_even_when_tasks_end_together():
    # both tasks end at 2.12: the two destroys must still come one after the other
    tied = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.0, 4: 1.2}), mig.Task("b", {1: 4.0, 2: 1.88, 4: 1.2}),
                               mig.Task("c", {1: 8.0, 2: 5.0, 4: 3.0})])
    for order in ("plan", "ready"):
        trace = execute(operations(A30_PLAN, order=order), SimulatedBackend(tied))
        ops = sorted(trace.schedule().reconfigurations, key=lambda o: o.start)
        assert all(b.start >= a.end - 1e-9 for a, b in zip(ops, ops[1:]))
        assert mig.check(tied, trace.schedule()) == []


# -- property: random plans, random timing errors ------------------------------

@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(["A30", "A100", "H100"]), n=st.integers(1, 10), seed=st.integers(0, 10**6),
       batches=st.integers(1, 3), x=st.floats(0.0, 0.9), rx=st.floats(0.0, 0.9),
       distribution=st.sampled_from(["uniform", "lognormal"]), order=st.sampled_from(["plan", "ready"]),
       noise_seed=st.integers(0, 10**6))
def test_random_far_plans_run_under_random_noise_stay_feasible(gpu, n, seed, batches, x, rx, distribution, order,
                                                               noise_seed):
    if batches == 1:
        problem = mig.generate(n, gpu, seed=seed)
    else:
        sizes = [max(1, n // batches)] * batches
        problem = mig.generate_workload(sizes, [10.0 * b for b in range(batches)], gpu=gpu, seed=seed)
    plan = far.schedule(problem)
    run = simulate(problem, plan, Noise(x, rx, distribution, noise_seed), order=order)
    assert run.violations == []  # rules 1-6 against the realised durations, releases included
    names = [t.task for t in run.schedule.tasks]
    assert sorted(names) == sorted(t.name for t in problem.tasks)  # every task runs once
    assert all(math.isfinite(v) for v in run.trace.start + run.trace.end)  # every operation ran
    if order == "plan":
        # waits only on completions: the realised makespan is a longest path of scaled durations
        assert run.makespan <= run.realisation.largest_factor * plan.makespan * (1 + 1e-9) + 1e-9
        if x == 0 and rx == 0:
            assert run.makespan <= plan.makespan * (1 + 1e-9)


@pytest.mark.parametrize("method", ["MIG-search", "MISO-opt", "FixPartBest"])
def test_other_methods_plans_run_too(method):
    problem = mig.generate(8, "A100", seed=5)
    plan = METHODS[method](problem)
    for order in ("plan", "ready"):
        run = simulate(problem, plan, Noise(0.3, 0.3, seed=2), order=order)
        assert run.violations == []


def test_a_plan_without_reconfiguration_gets_the_fewest_instances_its_order_allows():
    problem = mig.generate(8, "A30", seed=4).without_reconfiguration()
    plan = far.schedule(problem)
    assert plan.reconfigurations == ()
    program = operations(plan)
    assert len(program.sessions) <= len(plan.tasks)
    run = simulate(problem, plan, Noise(0.2, seed=1))
    assert run.violations == []


def test_exact_plans_run_too():
    import milp

    problem = mig.generate(6, "A30", seed=1)
    plan = milp.solve_optimal(problem, time_limit=10).schedule
    run = simulate(problem, plan, Noise(0.2, 0.2, seed=3))
    assert run.violations == []


# -- the noise model ----------------------------------------------------------

def test_noise_draws_are_seeded_bounded_and_keyed_by_task_name():
    problem = mig.generate(12, "A100", seed=2)
    a = realise(problem, Noise(0.3, 0.1, seed=7))
    b = realise(mig.Problem(problem.gpu, list(reversed(problem.tasks))), Noise(0.3, 0.1, seed=7))
    assert a.task_factors == b.task_factors
    assert all(0.7 <= f <= 1.3 for f in a.task_factors.values())
    assert all(0.9 <= f <= 1.1 for f in [*a.create_factors.values(), *a.destroy_factors.values()])
    assert realise(problem, Noise(0.3, seed=8)).task_factors != a.task_factors
    t = problem.tasks[0]
    assert dict(a.problem.task(t.name).times) == pytest.approx({s: v * a.task_factors[t.name]
                                                                for s, v in t.times.items()})
    assert a.problem.gpu.create_time[3] == pytest.approx(problem.gpu.create_time[3] * a.create_factors[3])
    logn = realise(problem, Noise(0.5, distribution="lognormal", seed=1))
    assert min(logn.task_factors.values()) > 0


@pytest.mark.parametrize("kwargs", [{"tasks": 1.0}, {"tasks": -0.1}, {"reconfiguration": float("nan")},
                                    {"distribution": "normal"}, {"seed": -1}, {"tasks": True}])
def test_bad_noise_is_an_option_error(kwargs):
    with pytest.raises(OptionError):
        Noise(**kwargs)


# -- bad plans and failing backends ---------------------------------------------

def test_a_task_outside_every_instance_is_bad_input():
    late = mig.Schedule("A30", [mig.ScheduledTask("a", _L, 0.05, 2.05)], [mig.Reconfiguration("create", _L, 0.0, 0.12)])
    with pytest.raises(InstanceError, match="outside every instance"):
        operations(late)


def test_two_live_instances_on_one_slice_are_bad_input():
    clash = mig.Schedule("A30", [mig.ScheduledTask("a", _L, 0.12, 2.12), mig.ScheduledTask("c", _W, 0.25, 3.25)],
                         [mig.Reconfiguration("create", _L, 0.0, 0.12), mig.Reconfiguration("create", _W, 0.12, 0.25)])
    with pytest.raises(InstanceError, match="rule 3"):
        operations(clash)


def test_a_schedule_for_another_gpu_is_bad_input(files, capsys):
    with pytest.raises(InstanceError, match="the schedule is for 'A30'"):
        operations(A30_PLAN, "A100")
    mig.save(A100, files / "a100.json")
    for mode in ("--dry-run", "--simulate"):
        assert main([str(files / "s.json"), mode, "--problem", str(files / "a100.json")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "A30" in err[0] and "A100" in err[0]


def test_an_infeasible_plan_is_refused_by_simulate():
    short = mig.Schedule("A30", A30_PLAN.tasks[:2], A30_PLAN.reconfigurations)  # c is missing
    with pytest.raises(InstanceError, match="not feasible"):
        simulate(A30, short)


def test_bad_options_are_option_errors():
    with pytest.raises(OptionError):
        operations(A30_PLAN, order="fastest")
    with pytest.raises(OptionError):
        operations(A30_PLAN, teardown="no")


class _Failing(SimulatedBackend):
    def __init__(self, problem, at):
        super().__init__(problem)
        self.at, self.started, self.aborted = at, 0, False

    def start(self, op):
        self.started += 1
        if self.started == self.at:
            raise RuntimeError("device lost")
        super().start(op)

    def abort(self):
        self.aborted = True
        return "nothing to undo"


def test_a_failing_backend_is_cleaned_up_and_named_in_one_error():
    backend = _Failing(A30, at=5)
    program = operations(A30_PLAN)
    with pytest.raises(ExecutionError) as exc:
        execute(program, backend)
    assert backend.aborted
    assert "device lost" in str(exc.value) and str(exc.value).startswith("#")


# -- the dry run ----------------------------------------------------------------

A30_DRY_RUN = """\
# MIG schedule for A30 on GPU 0: 3 instances, 3 tasks, 18 operations, to run in this order; each step starts
# once the steps it names after "after" have ended. $GI<k>, $CI<k>: the IDs nvidia-smi reports for instance k.
# [0] create GPU instance 2@0 (2g.12gb, profile 5, placement 0)
nvidia-smi mig -i 0 -cgi 5:0
# [1] create compute instance of 2@0 (compute profile 1), after 0
nvidia-smi mig -i 0 -gi $GI1 -cci 1
# [2] create GPU instance 2@2 (2g.12gb, profile 5, placement 2), after 1
nvidia-smi mig -i 0 -cgi 5:2
# [3] launch a on 2@0, after 1: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI1/CI1> <command of a>
# [4] wait for a to end, after 3
# [5] create compute instance of 2@2 (compute profile 1), after 2
nvidia-smi mig -i 0 -gi $GI2 -cci 1
# [6] launch b on 2@2, after 5: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI2/CI2> <command of b>
# [7] wait for b to end, after 6
# [8] destroy compute instance of 2@0, after 4, 5
nvidia-smi mig -i 0 -dci -ci $CI1 -gi $GI1
# [9] destroy GPU instance 2@0, after 8
nvidia-smi mig -i 0 -dgi -gi $GI1
# [10] destroy compute instance of 2@2, after 7, 9
nvidia-smi mig -i 0 -dci -ci $CI2 -gi $GI2
# [11] destroy GPU instance 2@2, after 10
nvidia-smi mig -i 0 -dgi -gi $GI2
# [12] create GPU instance 4@0 (4g.24gb, profile 0, placement 0), after 9, 11
nvidia-smi mig -i 0 -cgi 0:0
# [13] create compute instance of 4@0 (compute profile 3), after 12
nvidia-smi mig -i 0 -gi $GI3 -cci 3
# [14] launch c on 4@0, after 13: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI3/CI3> <command of c>
# [15] wait for c to end, after 14
# [16] destroy compute instance of 4@0, after 13, 15 (teardown: the plan keeps it to the end)
nvidia-smi mig -i 0 -dci -ci $CI3 -gi $GI3
# [17] destroy GPU instance 4@0, after 16
nvidia-smi mig -i 0 -dgi -gi $GI3"""

A100_DRY_RUN = """\
# MIG schedule for A100 on GPU 1: 3 instances, 3 tasks, 16 operations, to run in this order; each step starts
# once the steps it names after "after" have ended. $GI<k>, $CI<k>: the IDs nvidia-smi reports for instance k.
# [0] create GPU instance 4@0 (4g.20gb, profile 5, placement 0)
nvidia-smi mig -i 1 -cgi 5:0
# [1] create compute instance of 4@0 (compute profile 3), after 0
nvidia-smi mig -i 1 -gi $GI1 -cci 3
# [2] create GPU instance 3@4 (3g.20gb, profile 9, placement 4), after 1
nvidia-smi mig -i 1 -cgi 9:4
# [3] launch y on 4@0, after 1: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI1/CI1> <command of y>
# [4] wait for y to end, after 3
# [5] create compute instance of 3@4 (compute profile 2), after 2
nvidia-smi mig -i 1 -gi $GI2 -cci 2
# [6] launch x on 3@4, after 5: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI2/CI2> <command of x>
# [7] wait for x to end, after 6
# [8] destroy compute instance of 3@4, after 5, 7
nvidia-smi mig -i 1 -dci -ci $CI2 -gi $GI2
# [9] destroy GPU instance 3@4, after 8
nvidia-smi mig -i 1 -dgi -gi $GI2
# [10] destroy compute instance of 4@0, after 4, 9
nvidia-smi mig -i 1 -dci -ci $CI1 -gi $GI1
# [11] destroy GPU instance 4@0, after 10
nvidia-smi mig -i 1 -dgi -gi $GI1
# [12] create GPU instance 7@0 (7g.40gb, profile 0, placement 0), after 9, 11
nvidia-smi mig -i 1 -cgi 0:0
# [13] create compute instance of 7@0 (compute profile 4), after 12
nvidia-smi mig -i 1 -gi $GI3 -cci 4
# [14] launch z on 7@0, after 13: CUDA_VISIBLE_DEVICES=<UUID of MIG device GI3/CI3> <command of z>
# [15] wait for z to end, after 14"""


def test_dry_run_snapshot_a30():
    assert "\n".join(nvidia_smi_lines(operations(A30_PLAN), 0)) == A30_DRY_RUN


def test_dry_run_snapshot_a100():
    assert "\n".join(nvidia_smi_lines(operations(A100_PLAN, teardown=False), 1)) == A100_DRY_RUN


def test_dry_run_of_an_h100_and_a_user_gpu():
    h = mig.Problem("H100", [mig.Task("a", {1: 9.0, 2: 5.0, 3: 4.0, 4: 3.5, 7: 2.0})])
    p = h.gpu.placement(1, 6)
    plan = mig.Schedule("H100", [mig.ScheduledTask("a", p, 0.16, 9.16)], [mig.Reconfiguration("create", p, 0.0, 0.16)])
    assert "nvidia-smi mig -i 0 -cgi 19:6" in nvidia_smi_lines(operations(plan), 0)
    from instances import gpus

    spec = gpus.BUILTIN["A30"].to_dict()
    spec["name"] = "MyA30"
    mine = gpus.from_dict(spec)
    q = mig.Problem(mine, [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
    pl = mine.placement(2, 2)
    plan = mig.Schedule(mine, [mig.ScheduledTask("a", pl, 0.12, 2.62)], [mig.Reconfiguration("create", pl, 0.0, 0.12)])
    assert mig.check(q, plan) == []
    assert "nvidia-smi mig -i 0 -cgi 2g.12gb:2" in nvidia_smi_lines(operations(plan, mine), 0)


def test_the_dry_run_follows_the_plans_order_of_creates_and_destroys():
    problem = mig.generate(10, "A100", seed=11)
    plan = far.schedule(problem)
    lines = nvidia_smi_lines(operations(plan, teardown=False), 0)
    cmds = [ln for ln in lines if ln.startswith("nvidia-smi mig") and ("-cgi" in ln or "-dgi" in ln)]
    planned = sorted(plan.reconfigurations, key=lambda o: (o.start, o.op == "create"))
    assert len(cmds) == len(planned)
    assert [("-cgi" in c) for c in cmds] == [o.op == "create" for o in planned]


# -- the command line -----------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    problem = mig.generate(6, "A30", seed=2)
    mig.save(problem, tmp_path / "p.json")
    far.schedule(problem).save(tmp_path / "s.json")
    return tmp_path


def test_cli_dry_run(files, capsys):
    assert main([str(files / "s.json"), "--dry-run", "--gpu-index", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# MIG schedule for A30 on GPU 2") and "nvidia-smi mig -i 2 -cgi" in out


def test_cli_simulate_writes_a_realised_schedule_the_checker_accepts(files, capsys):
    out = files / "real.json"
    assert main([str(files / "s.json"), "--simulate", "--problem", str(files / "p.json"), "--noise", "0.2",
                 "--seed", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "realised schedule: feasible against the realised durations" in text
    assert "task | planned end (s) | realised end (s) | deviation (%)" in text
    problem = mig.load(files / "p.json")
    real = realise(problem, Noise(0.2, 0.2, seed=1)).problem
    saved = mig.Schedule.load(out)
    assert mig.check(real, saved) == []
    # without the problem, the schedule's own durations and the same factors give the same run
    assert main([str(files / "s.json"), "--simulate", "--noise", "0.2", "--seed", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == text.splitlines()[0]


@pytest.mark.parametrize("argv", [["--simulate", "--noise", "1.2"], ["--simulate", "--noise", "nan"],
                                  ["--run"], ["--dry-run", "--gpu-index", "-1"], ["--dry-run", "--simulate"],
                                  ["--simulate", "--out", "/no/such/folder/x.json"], ["--dry-run", "--order", "x"]])
def test_cli_bad_arguments_are_one_line(files, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(files / "s.json"), *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error" in err[0]


def test_cli_bad_files_are_one_line(files, capsys):
    (files / "bad.json").write_text(json.dumps({"gpu": "A30", "tasks": 5}))
    for argv in (["bad.json", "--dry-run"], ["missing.json", "--dry-run"],
                 ["s.json", "--run", "--commands", "bad.json"]):
        code = main([str(files / argv[0]), *argv[1:3], *[str(files / a) for a in argv[3:]]])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, argv


# -- what a run at planned durations shows about the plans ------------------------

@pytest.mark.parametrize("gpu", ["A30", "A100"])
def test_far_and_search_plans_have_no_slack_and_misos_barrier_does(gpu):
    """At planned durations FAR's and MIG-search's plans are reproduced exactly; MISO-opt's finish earlier,
    since its plans wait for a whole partition to end before the next starts, a wait execution does not add."""
    miso = []
    for seed in range(4):
        problem = mig.generate(10, gpu, seed=seed)
        for method in ("FAR", "MIG-search", "FixPartBest"):
            plan = METHODS[method](problem)
            assert simulate(problem, plan).makespan == pytest.approx(plan.makespan, rel=1e-9)
        plan = METHODS["MISO-opt"](problem)
        miso.append(simulate(problem, plan).makespan / plan.makespan)
    assert max(miso) <= 1 + 1e-9 and min(miso) < 0.99


def test_a_misspelt_option_is_an_option_error():
    with pytest.raises(OptionError, match="unknown option 'oder'"):
        operations(A30_PLAN, oder="ready")
    with pytest.raises(OptionError, match="unknown option 'teardwn'"):
        simulate(A30, A30_PLAN, teardwn=False)
    with pytest.raises(OptionError, match="unknown option 'gpu'"):
        nvidia_smi_lines(operations(A30_PLAN), gpu=1)
