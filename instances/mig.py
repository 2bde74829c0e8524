"""The moldable MIG scheduling problem with reconfiguration (seed 000, FAR).

Everything about the MIG problem family, under one name:

* problem data: :class:`Task`, :class:`Problem` (one batch), :class:`Workload`
  (several batches with release times), :func:`load` / :func:`save`;
* schedules: :class:`Schedule`, :class:`ScheduledTask`, :class:`Reconfiguration`;
* the independent checker :func:`check` (DESIGN.md rules 1-6);
* the Sec. 6.3 generator :func:`generate` (and :func:`generate_workload`);
* Gantt charts: :func:`save_gantt`.

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

import argparse
import sys

from instances.errors import InstanceError
from instances.mig_check import TOLERANCE, check, is_feasible
from instances.mig_generator import (SCALING_PRESETS, TIME_PRESETS, class_counts, generate, generate_workload,
                                     scaling_shares)
from instances.mig_plot import plot_schedule, save_gantt
from instances.mig_problem import Problem, Task, Workload, from_dict, load, save
from instances.mig_schedule import Reconfiguration, Schedule, ScheduledTask
from instances.mig_channel import OpChannel
from instances.mig_tasklist import load_tasklist

__all__ = [
    "Task", "Problem", "Workload", "load", "save", "from_dict",
    "Schedule", "ScheduledTask", "Reconfiguration",
    "check", "is_feasible", "TOLERANCE",
    "generate", "generate_workload", "SCALING_PRESETS", "TIME_PRESETS", "scaling_shares", "class_counts",
    "plot_schedule", "save_gantt", "main",
    "load_tasklist", "OpChannel",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instances.mig", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write a Sec. 6.3 synthetic batch as problem JSON")
    g.add_argument("--n", type=int, required=True)
    g.add_argument("--gpu", default="A100")
    g.add_argument("--workload", default="MixedScaling", choices=sorted(SCALING_PRESETS))
    g.add_argument("--times", default="WideTimes", choices=sorted(TIME_PRESETS))
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True)
    c = sub.add_parser("check", help="check a schedule JSON against a problem JSON")
    c.add_argument("problem")
    c.add_argument("schedule")
    pl = sub.add_parser("plot", help="draw a schedule JSON as a Gantt chart PNG")
    pl.add_argument("schedule")
    pl.add_argument("--out", default="gantt.png")
    pl.add_argument("--problem", help="problem JSON (needed for a GPU that is not built in)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "generate":
            if args.n < 1:
                parser.error("--n must be at least 1")
            save(generate(args.n, args.gpu, args.workload, args.times, args.seed), args.out)
            print(f"wrote {args.out}")
            return 0
        if args.cmd == "check":
            problem = load(args.problem)
            schedule = Schedule.load(args.schedule, problem.gpu)
            violations = check(problem, schedule)
            for v in violations:
                print(v)
            print("feasible" if not violations else f"{len(violations)} violation(s)")
            return 0 if not violations else 1
        gpu = load(args.problem).gpu if args.problem else None
        schedule = Schedule.load(args.schedule, gpu)
        from instances import gpus

        save_gantt(schedule, gpu or gpus.get(schedule.gpu), args.out)
        print(f"wrote {args.out}")
        return 0
    except InstanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
