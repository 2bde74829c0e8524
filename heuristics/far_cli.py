"""Command line of FAR: ``python -m heuristics.far tasks.json [options]``.

Reads a problem JSON, a workload JSON or a plain-text task list
(:func:`instances.mig_tasklist.load_tasklist`), prints FAR's repartitioning
tree and makespan, checks the schedule with :func:`instances.mig.check` and
optionally writes it as JSON and as a Gantt chart. Bad input exits with
status 2 and a one-line error.

Examples
--------
::

    python -m heuristics.far tasks.json --json schedule.json --plot gantt.png
    python -m heuristics.far profile.txt --gpu A30 --no-refine
    python -m heuristics.far workload.json --method reversed
"""

from __future__ import annotations

import argparse
import sys

from heuristics import far_batch, far_multibatch
from instances import gpus, mig_check
from instances.errors import InstanceError
from instances.mig_problem import Workload
from instances.mig_tasklist import load_tasklist

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1 for an infeasible schedule, 2 for bad input)."""
    parser = argparse.ArgumentParser(prog="python -m heuristics.far", description="FAR (Family of Allocations and "
                                     "Repartitioning): schedule a batch of tasks on a MIG GPU.")
    parser.add_argument("tasks", help="problem JSON, or a text task list (name t1 t2 ... / 'Task x:' 'Size s: t')")
    parser.add_argument("--gpu", help="GPU model (A30, A100, H100); overrides the file's")
    parser.add_argument("--no-refine", action="store_true", help="skip phase 3 (refinement)")
    parser.add_argument("--json", metavar="OUT", help="write the schedule JSON here")
    parser.add_argument("--plot", metavar="PNG", help="write a Gantt chart here")
    parser.add_argument("--method", default="move_swap", choices=sorted(far_multibatch.METHODS),
                        help="multi-batch concatenation (Sec. 4) for a workload file")
    args = parser.parse_args(argv)
    if args.gpu is not None:
        try:
            gpus.get(args.gpu)
        except InstanceError as exc:
            parser.error(str(exc))
    try:
        problem = load_tasklist(args.tasks, args.gpu)
        if isinstance(problem, Workload):
            result = far_multibatch.plan_workload(problem, args.method, refine=not args.no_refine)
        else:
            result = far_batch.plan(problem, refine=not args.no_refine)
    except InstanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.tree)
    st = result.stats
    if isinstance(problem, Workload):
        print(f"Makespan: {result.makespan:.6g} s ({len(problem.batches)} batches, method {args.method}, "
              f"moves {st.get('moves', 0)}, swaps {st.get('swaps', 0)})")
    else:
        print(f"Phase-2 makespan: {result.phase2_makespan:.6g} s; makespan: {result.makespan:.6g} s "
              f"(allocations {st['allocations']}, scheduled {st['allocations_tried']}, "
              f"moves {st['moves']}, swaps {st['swaps']})")
    violations = mig_check.check(problem, result.schedule)
    if violations:  # never expected; say so loudly rather than write a bad file
        print("internal error: infeasible schedule:\n" + "\n".join(violations), file=sys.stderr)
        return 1
    if args.json:
        result.schedule.save(args.json)
        print(f"wrote {args.json}")
    if args.plot:
        from instances.mig_plot import save_gantt

        save_gantt(result.schedule, problem.gpu, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
