"""``python -m benchmarks.report``: rerun the benchmarks and rewrite the results pages in docs/results/.

One page per topic (``--only`` picks topics; the default is all of them),
``docs/results/<topic>.md``. Every table on a page is the stdout of one
benchmark command run as a subprocess with ``--markdown --quiet`` (the tool's
own output, never retyped), preceded by that command so that it can be pasted
to reproduce the table. A page opens with the command that generated it, the
date, the versions of Python and of the solver libraries, the machine (cores,
CPU model) and its load averages when the run began; hand-written text (what
the tables measure, the readings chosen where a paper is ambiguous) comes from
``benchmarks/report_notes/<topic>.md``, so that the pages are generated and
never edited by hand.

``--quick`` runs every topic at small sizes (a few minutes in all) and says so
on each page; the default is the full size, the one the README quotes.
``--list`` prints the topics and their commands without running anything.
``--pages DIR`` writes the pages elsewhere than ``docs/results``.

Each page is written, in one step, as soon as its topic's commands have
run: after a crash or Ctrl-C the pages of the finished topics are on disk
and ``--only`` with the remaining topics completes the set. A page is the
unit of a report, so nothing smaller is recorded: a rerun of a topic reruns
its commands, whose timing columns and page header (date, load) are of that
run.

Examples
--------
::

    python -m benchmarks.report --list                  # topics, commands and durations
    python -m benchmarks.report --quick --only far      # one topic, small sizes, seconds
    python -m benchmarks.report --only mig-comparison   # the README's headline table
    python -m benchmarks.report                         # every page, full size
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchmarks import common

__all__ = ["Run", "Topic", "TOPICS", "ROOT", "NOTES", "ReportError", "command_line", "environment",
           "render_page", "run_topic", "write_page", "main"]

#: The repository root (the benchmarks run from here).
ROOT = Path(__file__).resolve().parents[1]
#: The hand-written part of each page: ``NOTES / f"{topic}.md"``.
NOTES = Path(__file__).resolve().parent / "report_notes"
#: Where the pages go unless ``--pages`` says otherwise.
DEFAULT_PAGES = ROOT / "docs" / "results"
#: The flags every run gets: the tables alone on stdout, no progress bars.
FLAGS = ("--markdown", "--quiet")


@dataclass(frozen=True)
class Run:
    """One benchmark command of a page: ``python -m benchmarks.<args[0]> <args[1:]> --markdown --quiet``.

    ``quick`` holds the arguments of the ``--quick`` form (None: the same as the full form).
    """

    title: str
    args: tuple[str, ...]
    quick: tuple[str, ...] | None = None

    def argv(self, quick: bool) -> tuple[str, ...]:
        return self.quick if quick and self.quick is not None else self.args


@dataclass(frozen=True)
class Topic:
    """One results page: its runs, and their wall time in minutes (full, quick) on the busy 2-core machine."""

    name: str
    title: str
    summary: str
    runs: tuple[Run, ...]
    minutes: float
    quick_minutes: float


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("mig-comparison", "Every MIG method against the exact optimum",
          "FAR, the FAR paper's baselines and the MIG search against the proven optimum (CP-SAT with "
          "reconfiguration) and the lower bounds, on generated A100 batches.",
          (Run("The headline table (A100, MixedScaling, WideTimes)",
               ("compare", "--n", "12")),
           Run("FAR and the MIG search on fresh seeds: PoorScaling",
               ("compare", "--n", "12", "--instances", "7", "--workload", "PoorScaling", "--seed", "7001",
                "--time-limit", "60", "--methods", "FAR,MIG-search"),
               ("compare", "--n", "10", "--instances", "3", "--workload", "PoorScaling", "--seed", "7001",
                "--time-limit", "10", "--methods", "FAR,MIG-search")),
           Run("FAR and the MIG search on fresh seeds: MixedScaling",
               ("compare", "--n", "12", "--instances", "7", "--workload", "MixedScaling", "--seed", "7001",
                "--time-limit", "60", "--methods", "FAR,MIG-search"),
               ("compare", "--n", "10", "--instances", "3", "--workload", "MixedScaling", "--seed", "7001",
                "--time-limit", "10", "--methods", "FAR,MIG-search")),
           Run("FAR and the MIG search on fresh seeds: GoodScaling",
               ("compare", "--n", "12", "--instances", "7", "--workload", "GoodScaling", "--seed", "7001",
                "--time-limit", "60", "--methods", "FAR,MIG-search"),
               ("compare", "--n", "10", "--instances", "3", "--workload", "GoodScaling", "--seed", "7001",
                "--time-limit", "10", "--methods", "FAR,MIG-search"))),
          minutes=2.4, quick_minutes=0.6),
    Topic("far", "FAR: planning time and tie rules",
          "How FAR's planning time grows with n, and how much the tie rules the FAR paper leaves open "
          "move its makespan.",
          (Run("Planning time of FAR (phases 1-3)",
               ("far_speed", "--n", "100", "1000", "10000", "100000", "--near", "10000"),
               ("far_speed", "--n", "100", "1000", "10000", "--near", "1000")),
           Run("The authors' tie rules against ours",
               ("far_speed", "--ties", "--n", "10", "15", "20", "25", "30", "35", "--reps", "50"),
               ("far_speed", "--ties", "--reps", "10"))),
          minutes=0.4, quick_minutes=0.1),
    Topic("robustness", "MIG plans under timing error",
          "How FAR, MIG-search and optimal plans hold up when the real task times differ from the planned "
          "ones (executed as the FAR paper's Sec. 3.4 describes), against the optimum of the realised times.",
          (Run("Plans executed with timing errors of 10-30 %",
               ("robustness", "--gpus", "A30,A100", "--n", "8", "--instances", "5", "--draws", "4",
                "--noise", "0.1,0.2,0.3"),
               ("robustness", "--gpus", "A30", "--instances", "2", "--draws", "2", "--noise", "0.1,0.3")),),
          minutes=0.6, quick_minutes=0.1),
    Topic("paper-tables", "The FAR paper's Tables 4-9",
          "Tables 4-9 of the FAR paper recomputed, our figure beside the paper's, with FAR against the "
          "proven optimum where the paper had only the area bound.",
          (Run("Table 4 (rho = FAR / area bound) and FAR against the exact optimum",
               ("paper", "--tables", "4", "--reps", "1000", "--opt-reps", "5", "--far-opt-reps", "1",
                "--far-opt-time-limit", "30", "--workers", "2"),
               ("paper", "--tables", "4", "--reps", "50", "--opt-reps", "2", "--time-limit", "5",
                "--far-opt-reps", "1", "--far-opt-n", "10", "15", "--far-opt-time-limit", "10", "--workers", "2")),
           Run("Table 4 with p_sup = 0",
               ("paper", "--tables", "4", "--reps", "1000", "--opt-reps", "0", "--far-opt-reps", "0",
                "--p-sup", "0"),
               ("paper", "--tables", "4", "--reps", "50", "--opt-reps", "0", "--far-opt-reps", "0",
                "--p-sup", "0")),
           Run("Table 5 (sigma = method / FAR): not reproduced, see the notes",
               ("paper", "--tables", "5", "--reps", "200"),
               ("paper", "--tables", "5", "--reps", "5")),
           Run("Table 5 with p_sup = 0 (the paper's four baselines)",
               ("paper", "--tables", "5", "--reps", "200", "--p-sup", "0", "--methods",
                "FAR,MISO-opt,FixPart(1,...,1),FixPartBest,FixPart(7)"),
               ("paper", "--tables", "5", "--reps", "5", "--p-sup", "0", "--methods",
                "FAR,MISO-opt,FixPart(1,...,1),FixPartBest,FixPart(7)")),
           Run("Tables 6-9 at p_sup = 0",
               ("paper", "--tables", "6", "7", "8", "9", "--reps", "30", "--p-sup", "0"),
               ("paper", "--tables", "6", "7", "8", "9", "--reps", "5", "--p-sup", "0")),
           Run("Tables 7-8 as the paper chains them: one chain of 1001 batches per cell, p_sup = 0",
               ("paper", "--tables", "7", "8", "--chain", "1001", "--reps", "1", "--p-sup", "0"),
               ("paper", "--tables", "7", "8", "--chain", "51", "--reps", "1", "--p-sup", "0")),
           Run("Table 3's setting simulated: 9 tasks on an A30 run with times 2 % off their profile",
               ("robustness", "--gpus", "A30", "--n", "9", "--instances", "5", "--draws", "4", "--noise", "0.02"),
               ("robustness", "--gpus", "A30", "--n", "9", "--instances", "2", "--draws", "2", "--noise", "0.02")),
           Run("Tables 6-9 under every candidate reading",
               ("paper", "--tables", "6", "7", "8", "9", "--candidates", "--reps", "30", "--p-sup", "0"),
               ("paper", "--tables", "6", "7", "8", "9", "--candidates", "--reps", "3", "--p-sup", "0"))),
          minutes=22, quick_minutes=2.5),
    Topic("exact-mig", "Exact MIG optimum: CP-SAT and Pyomo + HiGHS",
          "How fast the exact MIG models prove the optimum, how far they reach in n, and the ratios they "
          "certify.",
          (Run("Median time to the proven optimum, every model",
               ("milp_speed", "--rows", "cpsat0:12", "cpsat1:12", "highs0:8", "highs1:12", "--seeds", "10",
                "--time-limit", "60"),
               ("milp_speed", "--rows", "cpsat0:10", "cpsat1:10", "highs0:6", "highs1:8", "--seeds", "3",
                "--time-limit", "20")),
           Run("Every instance family of the generator (CP-SAT with reconfiguration)",
               ("milp_speed", "--presets", "--preset-n", "12", "--preset-gap-n", "--seeds", "2",
                "--first-seed", "4800", "--time-limit", "60"),
               ("milp_speed", "--presets", "--preset-n", "8", "--preset-gap-n", "--seeds", "1",
                "--first-seed", "4800", "--time-limit", "10")),
           Run("Larger batches, with and without reconfiguration",
               ("milp_speed", "--rows", "cpsat0:20", "cpsat1:20", "--seeds", "4", "--first-seed", "5000",
                "--time-limit", "60"),
               ("milp_speed", "--rows", "cpsat0:14", "cpsat1:14", "--seeds", "2", "--first-seed", "5000",
                "--time-limit", "10")),
           Run("HiGHS by n, without reconfiguration",
               ("mig_pyomo", "--n", "6", "8", "10", "12", "--seeds", "5", "--time-limit", "60"),
               ("mig_pyomo", "--n", "6", "8", "--seeds", "3")),
           Run("HiGHS by n, with reconfiguration",
               ("mig_pyomo", "--n", "6", "8", "10", "--reconfiguration", "--seeds", "5", "--time-limit", "60"),
               ("mig_pyomo", "--n", "6", "--reconfiguration", "--seeds", "3", "--time-limit", "20")),
           Run("Ratios the exact optimum certifies",
               ("milp_speed", "--rows", "cpsat0:6", "--seeds", "5", "--ratios", "6", "8", "10", "12",
                "--time-limit", "30"),
               ("milp_speed", "--rows", "cpsat0:6", "--seeds", "2", "--ratios", "6", "8",
                "--time-limit", "10"))),
          minutes=17.3, quick_minutes=1),
    Topic("hetero", "Weighted tardiness on heterogeneous GPUs",
          "The heterogeneous-GPU scheduling problem's heuristics and the iterated local search against "
          "the exact method (branch-and-price over the arc-time-indexed formulation).",
          (Run("Clusters of T4 + V100 + A100-80GB: the exact model and the heuristics",
               ("hetero", "--n", "12,20,40", "--seeds", "3", "--time-limit", "60", "--ils-time", "1",
                "--jobs", "2"),
               ("hetero", "--n", "8,10", "--seeds", "2", "--time-limit", "10", "--ils-time", "0.5")),
           Run("n = 40 on six more clusters, with the lower bound alone in 10 s",
               ("hetero", "--n", "40", "--seeds", "6", "--first-seed", "7600", "--bound-time", "10",
                "--time-limit", "60", "--ils-time", "1", "--jobs", "2"),
               ("hetero", "--n", "12", "--seeds", "2", "--first-seed", "7600", "--bound-time", "2",
                "--time-limit", "10", "--ils-time", "0.5"))),
          minutes=2.5, quick_minutes=0.3),
    Topic("orlib", "Weighted tardiness on the OR-Library set wt40",
          "One GPU, common arrival (1||sum w_j T_j): the heuristics, the time-indexed Lagrangian bound and "
          "the exact successive sublimation DP against the OR-Library's known values.",
          (Run("Heuristics",
               ("orlib", "--instances", "1-125", "--ils-time", "1", "--no-exact"),
               ("orlib", "--instances", "1-125:25", "--ils-time", "0.5", "--no-exact")),
           Run("The time-indexed Lagrangian bound with its default budget",
               ("orlib", "--instances", "1-125", "--no-methods", "--bound", "--no-exact", "--jobs", "2"),
               ("orlib", "--instances", "1-125:25", "--no-methods", "--bound", "--no-exact")),
           Run("Exact: successive sublimation DP",
               ("orlib", "--instances", "1-125", "--no-methods", "--exact-limit", "20", "--jobs", "2"),
               ("orlib", "--instances", "1-125:25", "--no-methods", "--exact-limit", "10")),
           Run("Exact on generated n = 100 instances (the OR-Library generator, every 5th of a set)",
               ("orlib", "--generate", "100", "--gen-seed", "45", "--instances", "1-125:5", "--reference-iters",
                "100", "--no-methods", "--exact-limit", "20", "--jobs", "2"),
               ("orlib", "--generate", "50", "--gen-seed", "31", "--instances", "1-125:25", "--reference-iters",
                "50", "--no-methods", "--exact-limit", "10"))),
          minutes=5.5, quick_minutes=0.5),
    Topic("pairing", "Co-scheduling pairs with Edmonds' matching",
          "Which jobs share a node, how cores and GPCs are split and which power caps they get "
          "(co-scheduling paper, Algorithm 1) against time sharing and the exact set-partitioning models.",
          (Run("The paper's job mixes, generated queues, C = 3 and the pipeline's time",
               ("pairing", "--W", "8", "20", "50", "200", "--seeds", "5", "--triple-W", "6", "9", "12", "15",
                "--timing-W", "200"),
               ("pairing", "--W", "8", "20", "--seeds", "2", "--triple-W", "6", "--timing-W", "50",
                "--timing-runs", "3")),),
          minutes=2.5, quick_minutes=0.1),
    Topic("realtime", "Real-time GPU partitioning",
          "Schedulability of periodic kernels on a partitioned GPU (partitioning paper, Figures 5 and 7) "
          "and the heuristics' gap to the exact minimum number of SMs.",
          (Run("Schedulability and gap to the optimum",
               ("realtime", "--n", "50", "200", "--reps", "10", "--step", "2", "--gap-reps", "10", "--no-plots"),
               ("realtime", "--reps", "2", "--step", "4", "--gap-reps", "2", "--no-plots")),),
          minutes=4, quick_minutes=1),
    Topic("case", "CASE on MIG",
          "The CASE paper's scheduler against a Slurm-like manager on fixed MIG nodes (Figures 1-3, "
          "Table 2), and a CP-SAT bound on small batches.",
          (Run("CASE over Slurm, Figures 1-3 and Table 2", ("case", "--seeds", "5", "--no-plot"),
               ("case", "--seeds", "2", "--no-plot", "--bound-seeds", "1")),),
          minutes=0.6, quick_minutes=0.2),
)}


class ReportError(Exception):
    """A benchmark command failed; the message is one line."""


def command_line(args: Sequence[str]) -> str:
    """The command as a user types it: ``python -m benchmarks.X ... --markdown --quiet``, shell-quoted.

    Examples
    --------
    >>> command_line(["paper", "--methods", "FixPart(7),MISO-opt"])
    "python -m benchmarks.paper --methods 'FixPart(7),MISO-opt' --markdown --quiet"
    """
    return shlex.join(["python", "-m", f"benchmarks.{args[0]}", *args[1:], *FLAGS])


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def environment() -> dict[str, str]:
    """The page header's facts: versions, machine and its load averages now.

    Examples
    --------
    >>> sorted(environment())
    ['load', 'machine', 'versions']
    """
    versions = (f"Python {platform.python_version()}, OR-Tools {_version('ortools')}, "
                f"HiGHS (highspy) {_version('highspy')}, Pyomo {_version('pyomo')}, numpy {_version('numpy')}")
    machine = f"{os.cpu_count()} cores, {_cpu_model()}, {platform.system()} {platform.machine()}"
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return {"versions": versions, "machine": machine, "load": f"{load} (1, 5 and 15 min averages)"}


def _run(args: Sequence[str]) -> tuple[str, float]:
    """Run one benchmark command; its stdout (stripped) and wall time, or :class:`ReportError`."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.{args[0]}", *args[1:], *FLAGS],
                          cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.splitlines() if x.strip()]
        raise ReportError(f"{command_line(args)} exited with status {proc.returncode}: "
                          f"{lines[-1].strip() if lines else 'no message'}")
    return proc.stdout.strip(), took


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def render_page(topic: Topic, quick: bool, started: dt.datetime, env: dict[str, str],
                outputs: Sequence[tuple[Run, str, float]], notes: str | None) -> str:
    """The markdown page of ``topic`` from the outputs of its runs (in order)."""
    report = "python -m benchmarks.report --only " + topic.name + (" --quick" if quick else "")
    form = ("quick (`--quick`: small sizes for a fast check; these are not the figures the README quotes)"
            if quick else "full (the sizes the README quotes)")
    total = sum(took for _, _, took in outputs)
    lines = [f"# {topic.title}", "",
             f"Generated by `{report}`; do not edit by hand, rerun it. The notes at the end come from "
             f"`benchmarks/report_notes/{topic.name}.md`.", "",
             f"- command: `{report}`",
             f"- form: {form}",
             f"- date: {started:%Y-%m-%d %H:%M} UTC",
             f"- versions: {env['versions']}",
             f"- machine: {env['machine']}",
             f"- load when the run began: {env['load']}",
             f"- wall time: {_seconds(total)}", "",
             topic.summary, ""]
    for run, out, took in outputs:
        lines += [f"## {run.title}", "", "    " + command_line(run.argv(quick)), "",
                  out, "", f"({_seconds(took)} wall for the command.)", ""]
    if notes:
        lines += [notes.strip(), ""]
    return "\n".join(lines)


def run_topic(topic: Topic, quick: bool, quiet: bool = False) -> str:
    """Run every command of ``topic`` (or its ``--quick`` form); the page's markdown."""
    env = environment()
    started = dt.datetime.now(dt.timezone.utc)
    outputs = []
    for run in topic.runs:
        if not quiet:
            print(f"report: {topic.name}: {command_line(run.argv(quick))}", file=sys.stderr, flush=True)
        text, took = _run(run.argv(quick))
        outputs.append((run, text, took))
    note_file = NOTES / f"{topic.name}.md"
    notes = note_file.read_text(encoding="utf-8") if note_file.is_file() else None
    return render_page(topic, quick, started, env, outputs, notes)


def write_page(out: Path, name: str, page: str) -> Path:
    """Write ``page`` as ``out/<name>.md`` in one step (a reader never sees half a page)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.md"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _duration(minutes: float) -> str:
    return f"{minutes * 60:.0f} s" if minutes < 1 else f"{minutes:.0f} min"


def _epilog() -> str:
    lines = ["topics, with their wall time, full then --quick, on the 2-core development machine while",
             "other jobs ran (an idle machine takes about half):"]
    for t in TOPICS.values():
        lines.append(f"  {t.name:15} {_duration(t.minutes):>7} {_duration(t.quick_minutes):>7}  {t.title}")
    full = sum(t.minutes for t in TOPICS.values())
    quick = sum(t.quick_minutes for t in TOPICS.values())
    lines.append(f"  {'all':15} {_duration(full):>7} {_duration(quick):>7}")
    return "\n".join(lines)


def _parser() -> common.Parser:
    p = common.Parser(prog="python -m benchmarks.report", description=common.description(
                          __doc__, "about an hour for every topic (--quick: about 6 minutes; the epilog gives each topic's time)"),
                      epilog=_epilog())
    p.add_argument("--only", nargs="+", choices=list(TOPICS), metavar="NAME", default=None,
                   help=f"topics to rerun, from {', '.join(TOPICS)} (default: all)")
    p.add_argument("--quick", action="store_true", help="small sizes, a few minutes in all (the page says so)")
    p.add_argument("--pages", type=common.output_dir, default=None, metavar="DIR",
                   help="folder of the pages, created if missing (default: docs/results of the repository)")
    p.add_argument("--list", action="store_true", help="print the topics and their commands, run nothing")
    common.add_quiet(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    a = parser.parse_args(argv)
    names = list(dict.fromkeys(a.only)) if a.only else list(TOPICS)
    if a.list:
        for name in names:
            t = TOPICS[name]
            print(f"{name}: {t.title} (about {_duration(t.quick_minutes if a.quick else t.minutes)})")
            for run in t.runs:
                print("    " + command_line(run.argv(a.quick)))
        return 0
    out = a.pages if a.pages is not None else DEFAULT_PAGES
    for name in names:
        try:
            page = run_topic(TOPICS[name], a.quick, quiet=a.quiet)
        except ReportError as exc:
            parser.error(f"{name}: {exc}")
        with common.writing(parser, "--pages"):
            path = write_page(out, name, page)
        if not a.quiet:
            print(f"report: wrote {path}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    common.run_cli(main)
