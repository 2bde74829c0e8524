"""Command line of FAR: ``python -m heuristics.far tasks.json [options]``.

Reads a problem JSON, a workload JSON or a plain-text task list
(:func:`instances.mig_tasklist.load_tasklist`), prints FAR's repartitioning
tree and makespan, checks the schedule with :func:`instances.mig.check` and
optionally writes it as JSON and as a Gantt chart. Exit status 0 when done;
2 for bad input, with one line ``python -m heuristics.far: error: ...`` on
stderr; 1 when the checker rejects the schedule FAR made (a bug in FAR,
reported as ``... error: internal error, ...``): a checker found a
violation.

Examples
--------
::

    python -m heuristics.far tasks.json --json schedule.json --plot gantt.png
    python -m heuristics.far profile.txt --gpu A30 --no-refine
    python -m heuristics.far workload.json --method reversed
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from heuristics import far_batch, far_multibatch
from instances import gpus, mig_check
from instances.console import Parser, error_line, say
from instances.errors import InstanceError
from instances.mig_problem import Workload
from instances.mig_tasklist import load_tasklist
from instances.options import known_options

__all__ = ["main", "PROG"]

#: The command's name in its help and error lines.
PROG = "python -m heuristics.far"


@known_options
def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status: 0 done, 2 bad input, 1 when the checker rejects FAR's schedule."""
    parser = Parser(prog=PROG, description="FAR (Family of Allocations and Repartitioning): schedule a batch of "
                    "tasks on a MIG GPU; exit status 0 done, 2 bad input (one error line), 1 when the checker "
                    "rejects the schedule FAR made (a bug, reported as 'internal error').")
    parser.add_argument("tasks", help="problem JSON, workload JSON, or a text task list "
                        "(name t1 t2 ... / 'Task x:' 'Size s: t')")
    parser.add_argument("--gpu", help=f"GPU model ({', '.join(gpus.names())}); overrides the file's "
                        "(default: the file's GPU; A100 for a text task list without one)")
    parser.add_argument("--no-refine", action="store_true", help="skip phase 3, the refinement (default: refine)")
    parser.add_argument("--json", metavar="OUT", help="write the schedule JSON here (default: not written)")
    parser.add_argument("--plot", metavar="PNG", help="write a Gantt chart here; the suffix sets the format "
                        "(default: not drawn)")
    parser.add_argument("--method", default="move_swap", choices=sorted(far_multibatch.CONCATENATIONS),
                        help="multi-batch concatenation (FAR paper, Sec. 4) for a workload file "
                             "(default: move_swap)")
    parser.add_argument("--ties", default="ours", choices=far_batch.TIE_RULES,
                        help="tie rules of phases 1+2: ours, the FAR authors' C++ ones (reference), or the better")
    args = parser.parse_args(argv)
    if args.gpu is not None:
        try:
            gpus.get(args.gpu)
        except InstanceError as exc:
            parser.error(str(exc))
    for out in (args.json, args.plot):
        why = _unwritable(out)
        if why:  # before the search, which may take a while on a large batch
            parser.error(f"{out}: cannot write ({why})")
    try:
        problem = load_tasklist(args.tasks, args.gpu)
        if isinstance(problem, Workload):
            result = far_multibatch.plan_workload(problem, args.method, refine=not args.no_refine, ties=args.ties)
        else:
            result = far_batch.plan(problem, refine=not args.no_refine, ties=args.ties)
    except InstanceError as exc:
        say(error_line(PROG, exc), file=sys.stderr)
        return 2
    say(str(result.tree))
    st = result.stats
    if isinstance(problem, Workload):
        say(f"Makespan: {result.makespan:.6g} s ({len(problem.batches)} batches, method {args.method}, "
            f"moves {st.get('moves', 0)}, swaps {st.get('swaps', 0)})")
    else:
        say(f"Phase-2 makespan: {result.phase2_makespan:.6g} s; makespan: {result.makespan:.6g} s "
            f"(allocations {st['allocations']}, scheduled {st['allocations_tried']}, "
            f"moves {st['moves']}, swaps {st['swaps']})")
    violations = mig_check.check(problem, result.schedule)
    if violations:  # never expected; say so loudly rather than write a bad file
        say(error_line(PROG, "internal error, the checker rejects FAR's schedule: " + "; ".join(violations)),
            file=sys.stderr)
        return 1
    try:
        if args.json:
            result.schedule.save(args.json)
            say(f"wrote {args.json}")
        if args.plot:
            from instances.mig_plot import write_gantt

            write_gantt(result.schedule, problem.gpu, args.plot)
            say(f"wrote {args.plot}")
    except InstanceError as exc:
        say(error_line(PROG, exc), file=sys.stderr)
        return 2
    return 0


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

if __name__ == "__main__":
    from instances.console import run_cli

    run_cli(main, prog=PROG)
