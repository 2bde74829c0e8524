"""The moldable MIG scheduling problem with reconfiguration (FAR paper).

Everything about the MIG problem family, under one name:

* problem data: :class:`Task`, :class:`Problem` (one batch), :class:`Workload`
  (several batches with release times), :func:`load` / :func:`save`;
* schedules: :class:`Schedule`, :class:`ScheduledTask`, :class:`Reconfiguration`;
* the independent checker :func:`check` (the reconfiguration rules of the FAR paper, Sec. 2.1-2.2);
* the Sec. 6.3 generator :func:`generate` (and :func:`generate_workload`);
* Gantt charts: :func:`save_gantt`;
* a node of g GPUs (:mod:`instances.mig_node`): :class:`NodeProblem`,
  :class:`NodeSchedule` and its checker :func:`check_node`.

Examples
--------
>>> from instances import mig
>>> problem = mig.generate(n=12, gpu="A100", workload="MixedScaling", times="WideTimes", seed=0)
>>> problem.n, problem.gpu.name
(12, 'A100')

Command line::

    python -m instances.mig generate --n 12 --gpu A100 --seed 0 --out tasks.json
    python -m instances.mig check tasks.json schedule.json
    python -m instances.mig plot schedule.json --out gantt.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from instances import console, gpus
from instances.errors import InstanceError
from instances.mig_check import TOLERANCE, check, is_feasible
from instances.mig_generator import (SCALING_PRESETS, TIME_PRESETS, class_counts, generate, generate_workload,
                                     scaling_shares)
from instances.mig_plot import MAX_PLOT_ENTRIES, plot_schedule, save_gantt, write_gantt
from instances.mig_problem import MAX_TOTAL_TIME, Problem, Task, Workload, check_scale, from_dict, load, save
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.mig_channel import OpChannel
from instances.mig_tasklist import load_tasklist
from instances.mig_node import NodeProblem, NodeSchedule, check as check_node

__all__ = [
    "Task", "Problem", "Workload", "load", "save", "from_dict", "check_scale", "MAX_TOTAL_TIME",
    "Schedule", "ScheduledTask", "Reconfiguration",
    "check", "is_feasible", "TOLERANCE",
    "generate", "generate_workload", "SCALING_PRESETS", "TIME_PRESETS", "scaling_shares", "class_counts",
    "plot_schedule", "save_gantt", "write_gantt", "main",
    "load_tasklist", "OpChannel",
    "NodeProblem", "NodeSchedule", "check_node",
]


#: Largest batch ``generate`` writes (far beyond any experiment here).
MAX_GENERATE_TASKS = console.MAX_TASKS


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 done, 1 infeasible schedule, 2 bad input).

    Bad input is one line on stderr, ``python -m instances.mig: error: ...``
    (:mod:`instances.console`).
    """
    parser = console.Parser(prog="python -m instances.mig",
                    description="Generate, check and draw MIG scheduling problems and schedules (FAR paper).")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="{generate,check,plot}")
    g = sub.add_parser("generate", help="write a synthetic batch (FAR paper, Sec. 6.3) as problem JSON",
                       description="Write a synthetic batch (FAR paper, Sec. 6.3) as problem JSON.")
    g.add_argument("--n", type=console.integer(1, MAX_GENERATE_TASKS), required=True, metavar="N",
                   help=f"number of tasks, 1 to {MAX_GENERATE_TASKS:,} (required, no default)")
    g.add_argument("--gpu", default="A100", help=f"GPU model, one of {', '.join(gpus.names())} (default: A100)")
    g.add_argument("--workload", default="MixedScaling", choices=sorted(SCALING_PRESETS),
                   help="how task times scale with the instance size (default: MixedScaling)")
    g.add_argument("--times", default="WideTimes", choices=sorted(TIME_PRESETS),
                   help="range of the tasks' times (default: WideTimes)")
    g.add_argument("--seed", type=console.seed, default=0,
                   help=f"random seed, an integer from 0 to {console.MAX_SEED:,}; the same seed gives the same "
                        "batch (default: 0)")
    g.add_argument("--out", required=True, metavar="PATH", help="problem JSON file to write (required, no default)")
    c = sub.add_parser("check", help="check a schedule JSON against a problem JSON",
                       description="Check a schedule against a problem: print each violation, then 'feasible' "
                                   "or the count. Exit status 0 feasible, 1 infeasible, 2 bad input.")
    c.add_argument("problem", help="problem JSON file")
    c.add_argument("schedule", help="schedule JSON file")
    pl = sub.add_parser("plot", help="draw a schedule JSON as a Gantt chart",
                        description=f"Draw a schedule as a Gantt chart (at most {MAX_PLOT_ENTRIES:,} tasks and "
                                    "operations).")
    pl.add_argument("schedule", help="schedule JSON file")
    pl.add_argument("--out", default="gantt.png", metavar="PATH",
                    help="image file to write; its suffix (.png, .pdf, .svg, ...) sets the format "
                         "(default: gantt.png)")
    pl.add_argument("--problem", metavar="PATH", default=None,
                    help="problem JSON whose GPU the schedule uses, needed for a GPU that is not built in "
                         "(default: the built-in GPU the schedule names)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "generate":
            save(generate(args.n, args.gpu, args.workload, args.times, args.seed), args.out)
            console.say(f"wrote {args.out}")
            return 0
        if args.cmd == "check":
            problem = load(args.problem)
            schedule = Schedule.load(args.schedule, problem.gpu)
            ops, most = len(schedule.reconfigurations), 2 * problem.n
            if ops > most:
                # every instance runs a task and is destroyed at most once; without this
                # cut-off the checker compares every pair of instances (minutes on a 1 MB file)
                violations = [f"rule 2 (sessions): {ops} create/destroy operations for {problem.n} tasks; "
                              f"a feasible schedule has at most {most}"]
            else:
                violations = check(problem, schedule)
            for v in violations:
                console.say(v)
            console.say("feasible" if not violations else f"{len(violations)} violation(s)")
            return 0 if not violations else 1
        gpu = load(args.problem).gpu if args.problem else None
        schedule = Schedule.load(args.schedule, gpu)
        write_gantt(schedule, gpu or gpus.get(schedule.gpu), args.out)
        console.say(f"wrote {args.out}")
        return 0
    except InstanceError as exc:
        console.say(console.error_line(parser.prog, exc), file=sys.stderr)
        return 2


if __name__ == "__main__":
    console.run_cli(main, prog="python -m instances.mig")
