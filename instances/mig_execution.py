"""From a MIG schedule to the GPU: the operations that carry it out, and three ways to run them.

A schedule (FAR's, the search's, an exact model's) says which instance each
task uses and when. Carrying it out means creating and destroying GPU and
compute instances, launching tasks and waiting for them (the FAR paper,
Villarrubia, Costero, Igual, Olcoz, "Leveraging Multi-Instance GPUs through
moldable task scheduling", Sec. 3.4, Algorithm 3). Here every operation waits
for the completions it depends on, never for a planned time, so the
reconfiguration rules hold whatever the real durations
(:mod:`instances.mig_execution_ops`). Three uses:

* a dry run: the ``nvidia-smi mig`` commands for a GPU index, in a valid
  order (:func:`nvidia_smi_lines`, :mod:`instances.mig_execution_smi`);
* a simulated run with durations drawn around the planned ones, which
  reports the realised makespan and checks the realised schedule
  (:func:`simulate`, :mod:`instances.mig_execution_sim`);
* a run on a real GPU through NVML, each task a command of the user's
  (:func:`run_on_gpu`, :mod:`instances.mig_execution_nvml`; needs
  ``pip install "migsched[gpu]"``).

The model is described in ``docs/execution.md``.

Examples
--------
>>> from instances import mig
>>> from instances.mig_execution import Noise, operations, simulate
>>> p = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})])
>>> pl = p.gpu.placement(4, 0)
>>> plan = mig.Schedule("A30", [mig.ScheduledTask("a", pl, 0.13, 1.63)], [mig.Reconfiguration("create", pl, 0.0, 0.13)])
>>> [op.kind for op in operations(plan, teardown=False).operations]
['create_gi', 'create_ci', 'launch', 'wait']
>>> run = simulate(p, plan, Noise(tasks=0.1, seed=0))
>>> run.violations, 1.63 * 0.9 <= run.makespan <= 1.63 * 1.1
([], True)

Command line::

    python -m instances.mig_execution schedule.json --dry-run --gpu-index 0
    python -m instances.mig_execution schedule.json --simulate --problem tasks.json --noise 0.2 --seed 1
    python -m instances.mig_execution schedule.json --run --gpu-index 0 --commands commands.json
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from instances import files
from instances.console import Parser, integer, number, run_cli, say
from instances.errors import InstanceError
from instances.mig_execution_nvml import NvmlBackend, load_nvml, run_on_gpu
from instances.mig_execution_ops import (CREATE_CI, CREATE_GI, DESTROY_CI, DESTROY_GI, KINDS, LAUNCH, ORDERS, WAIT,
                                         Backend, ExecutionError, Operation, Program, Session, Trace, execute,
                                         operations)
from instances.mig_execution_sim import (DISTRIBUTIONS, Noise, Realisation, SimulatedBackend, Simulation,
                                         problem_from_schedule, realise, simulate)
from instances.mig_execution_smi import CI_PROFILES, GI_PROFILES, gi_profile, nvidia_smi_lines
from instances.mig_problem import load
from instances.mig_schedule import Schedule

__all__ = ["CREATE_GI", "CREATE_CI", "LAUNCH", "WAIT", "DESTROY_CI", "DESTROY_GI", "KINDS", "ORDERS",
           "Session", "Operation", "Program", "operations", "Backend", "Trace", "ExecutionError", "execute",
           "DISTRIBUTIONS", "Noise", "Realisation", "realise", "SimulatedBackend", "Simulation", "simulate",
           "problem_from_schedule", "GI_PROFILES", "CI_PROFILES", "gi_profile", "nvidia_smi_lines",
           "NvmlBackend", "load_nvml", "run_on_gpu", "load_commands", "end_times", "main"]

PROG = "python -m instances.mig_execution"
#: Most tasks a commands file may name.
MAX_COMMANDS = 100_000


def load_commands(path: str) -> dict[str, list[str]]:
    """Read a commands file: ``{"task": ["prog", "arg", ...]}`` or ``{"task": "prog arg ..."}`` (split like a shell).

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> _ = open(f, "w").write('{"a": "python train.py --epochs 2", "b": ["./run", "x y"]}')
    >>> load_commands(f)
    {'a': ['python', 'train.py', '--epochs', '2'], 'b': ['./run', 'x y']}
    """
    data = files.read_json(path)
    if not isinstance(data, Mapping):
        raise InstanceError("must be a JSON object mapping each task to its command", source=path)
    if len(data) > MAX_COMMANDS:
        raise InstanceError(f"names {len(data):,} tasks; at most {MAX_COMMANDS:,}", source=path)
    out = {}
    for name, cmd in data.items():
        if isinstance(cmd, str):
            try:
                argv = shlex.split(cmd)
            except ValueError as exc:
                raise InstanceError(f"cannot split the command: {exc}", source=path, task=name) from None
        elif isinstance(cmd, list) and all(isinstance(a, str) for a in cmd):
            argv = list(cmd)
        else:
            raise InstanceError("the command must be a string or a list of strings", source=path, task=name)
        if not argv:
            raise InstanceError("the command is empty", source=path, task=name)
        out[name] = argv
    return out


def end_times(planned: Schedule, realised: Schedule) -> list[tuple[str, float, float, float]]:
    """Per task, by planned end: (task, planned end, realised end, deviation %), as in the FAR paper's Table 3.

    Examples
    --------
    >>> from instances import mig
    >>> pl = mig.Problem("A30", [mig.Task("a", {1: 4.0, 2: 2.5, 4: 1.5})]).gpu.placement(4, 0)
    >>> a = mig.Schedule("A30", [mig.ScheduledTask("a", pl, 0.0, 2.0)])
    >>> b = mig.Schedule("A30", [mig.ScheduledTask("a", pl, 0.0, 2.1)])
    >>> end_times(a, b)
    [('a', 2.0, 2.1, 5.000000000000004)]
    """
    real = realised.by_task()
    rows = [(st.task, st.end, real[st.task].end, 100.0 * (real[st.task].end - st.end) / st.end if st.end else 0.0)
            for st in planned.tasks]
    return sorted(rows, key=lambda r: (r[1], r[0]))


def _table(planned: Schedule, realised: Schedule) -> list[str]:
    lines = ["task | planned end (s) | realised end (s) | deviation (%)"]
    lines += [f"{t} | {a:.3f} | {b:.3f} | {d:+.2f}" for t, a, b, d in end_times(planned, realised)]
    return lines


def _unwritable(out: str | None) -> str | None:
    """Why ``out`` cannot be written (its folder is missing or read-only, it is a folder), or ``None``."""
    if out is None:
        return None
    path = Path(out)
    if path.is_dir() or out.endswith(("/", "\\")):
        return "it is a folder, not a file"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"no folder {str(parent)!r}"
    if not os.access(parent, os.W_OK):
        return f"folder {str(parent)!r} is not writable"
    return None


def _parser() -> Parser:
    p = Parser(prog=PROG, description=__doc__.split("\n\n")[0] + ". See docs/execution.md.")
    p.add_argument("schedule", help="schedule JSON file (python -m heuristics.far ... --out writes one)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dry-run", action="store_true", help="print the nvidia-smi mig commands, run nothing")
    mode.add_argument("--simulate", action="store_true",
                      help="run on a virtual clock with durations drawn around the planned ones; report the "
                           "realised makespan and check the realised schedule")
    mode.add_argument("--run", action="store_true",
                      help="run on a real GPU through NVML (needs nvidia-ml-py, MIG mode on, an empty GPU and "
                           "--commands)")
    p.add_argument("--problem", metavar="PATH", default=None,
                   help="problem JSON the schedule was planned for (its GPU, releases and, with --simulate, its "
                        "times on every size); default: the schedule's GPU and its own durations")
    p.add_argument("--gpu-index", type=integer(0, 1023), default=0, help="NVML / nvidia-smi index of the GPU")
    p.add_argument("--order", choices=ORDERS, default="plan",
                   help="how the reconfiguration channel orders creates and destroys: as planned, or as they "
                        "become possible")
    p.add_argument("--keep-instances", action="store_true",
                   help="leave the instances the plan keeps to the end (default: destroy them after their "
                        "last task)")
    p.add_argument("--noise", type=number(0, 10), default=0.0,
                   help="--simulate: relative error of the task times (0.2: +-20 %% uniform, or a 20 %% "
                        "standard deviation lognormal)")
    p.add_argument("--reconfiguration-noise", type=number(0, 10), default=None,
                   help="--simulate: relative error of the create/destroy times (default: --noise)")
    p.add_argument("--distribution", choices=DISTRIBUTIONS, default="uniform", help="--simulate: noise distribution")
    p.add_argument("--seed", type=integer(0, 2**31 - 1), default=0, help="--simulate: seed of the drawn durations")
    p.add_argument("--commands", metavar="PATH", default=None,
                   help='--run: JSON {"task": "command line"} or {"task": ["prog", "arg", ...]} for every task '
                        "(default: none)")
    p.add_argument("--log-dir", metavar="DIR", default=None,
                   help="--run: write each task's output to DIR/<task>.log (default: this terminal)")
    p.add_argument("--out", metavar="PATH", default=None,
                   help="--simulate, --run: write the realised schedule JSON here (default: not written)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; exit status 0 done, 1 a task failed or the realised schedule breaks a rule
    (a bug), 2 bad input or a failed run."""
    parser = _parser()
    a = parser.parse_args(argv)
    try:
        return _main(parser, a)
    except (InstanceError, ExecutionError) as exc:
        say(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _main(parser: Parser, a: Any) -> int:
    why = _unwritable(a.out) if not a.dry_run else None
    if why:  # before the run, which may take hours on a GPU
        parser.error(f"{a.out}: cannot write ({why})")
    problem = load(a.problem) if a.problem else None
    gpu = problem.gpu if problem is not None else None
    schedule = Schedule.load(a.schedule, gpu)
    releases = problem.releases() if problem is not None else None
    if a.dry_run:
        program = operations(schedule, gpu, order=a.order, teardown=not a.keep_instances, releases=releases)
        say("\n".join(nvidia_smi_lines(program, a.gpu_index)))
        return 0
    if a.simulate:
        if problem is None:
            problem = problem_from_schedule(schedule)
        rn = a.noise if a.reconfiguration_noise is None else a.reconfiguration_noise
        for flag_, x in (("--noise", a.noise), ("--reconfiguration-noise", rn)):
            if a.distribution == "uniform" and x >= 1:
                parser.error(f"{flag_} must be below 1 with --distribution uniform (a factor 1 - x must stay "
                             f"positive), got {x:g}")
        noise = Noise(a.noise, rn, a.distribution, a.seed)
        run = simulate(problem, schedule, noise, order=a.order, teardown=not a.keep_instances)
        if a.out:
            run.schedule.save(a.out)
        growth = 100.0 * (run.makespan / run.planned_makespan - 1.0) if run.planned_makespan else 0.0
        say(f"planned makespan {run.planned_makespan:.3f} s, realised {run.makespan:.3f} s ({growth:+.2f} %); "
            f"noise: tasks {a.noise:g}, reconfiguration {rn:g}, {a.distribution}, seed {a.seed}; "
            f"channel order: {a.order}")
        say("\n".join(_table(schedule, run.schedule)))
        for v in run.violations:
            say(v)
        say("realised schedule: feasible against the realised durations" if not run.violations
            else f"realised schedule: {len(run.violations)} violation(s)")
        return 0 if not run.violations else 1
    if a.commands is None:
        parser.error("--run needs --commands (the command of every task)")
    program = operations(schedule, gpu, order=a.order, teardown=not a.keep_instances, releases=releases)
    commands = load_commands(a.commands)
    trace, codes = run_on_gpu(program, a.gpu_index, commands, log_dir=a.log_dir)
    realised = trace.schedule()
    if a.out:
        realised.save(a.out)
    say(f"planned makespan {schedule.makespan:.3f} s, realised {realised.makespan:.3f} s on GPU {a.gpu_index}")
    say("\n".join(_table(schedule, realised)))
    failed = sorted(t for t, c in codes.items() if c != 0)
    for t in failed:
        say(f"task {t} exited with status {codes[t]}")
    return 0 if not failed else 1


if __name__ == "__main__":
    run_cli(main, prog=PROG)
