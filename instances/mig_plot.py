"""Gantt charts of MIG schedules (matplotlib), in the style of the FAR paper's Figure 12.

One row per slice (the y axis, labelled S0, S1, ...); a task is a box spanning
the rows of the slices it computes on, labelled with its name; a slice an
instance occupies without computing on it (slice 3 under 3@0, whose memory it
takes) is hatched; create / destroy operations are drawn as green / red boxes
over the slices they occupy; the makespan is a dashed vertical line. The
legend lists only what the chart shows.

Examples
--------
>>> from instances import mig
>>> from heuristics import far
>>> p = mig.generate(n=6, gpu="A100", seed=0)
>>> ax = plot_schedule(far.schedule(p), p.gpu, title="FAR")
>>> ax.get_title(), ax.get_ylabel()
('FAR', 'slice')
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from instances.errors import InstanceError, OutputError
from instances.gpus import GPUSpec
from instances.mig_schedule import Schedule
from instances.options import typed

__all__ = ["plot_schedule", "save_gantt", "write_gantt", "MAX_PLOT_ENTRIES"]

#: Most tasks plus operations a command line draws: a Gantt chart with more is
#: unreadable, and drawing 1,000 boxes already takes several seconds.
MAX_PLOT_ENTRIES = 2_000


def _runs(slices: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive slices as (first, count)."""
    out: list[tuple[int, int]] = []
    for s in sorted(slices):
        if out and out[-1][0] + out[-1][1] == s:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((s, 1))
    return out


@typed
def plot_schedule(schedule: Schedule, gpu: GPUSpec, ax=None, title: str | None = None):
    """Draw ``schedule`` on a matplotlib axis (created if not given) and return the axis."""
    import matplotlib

    if ax is None:
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(12, 0.45 * gpu.num_slices + 1.6))
    from matplotlib.patches import Rectangle

    # pastel task colours, none of them the green / red of the reconfiguration operations
    palette = [c for i, c in enumerate(matplotlib.colormaps["Set3"].colors) if i not in (3, 6)]
    palette += [c for i, c in enumerate(matplotlib.colormaps["Pastel1"].colors) if i not in (0, 2)]
    # colour keyed by the task's rank by name, so a task has one colour in every chart of the same tasks
    rank = {name: i for i, name in enumerate(sorted(t.task for t in schedule.tasks))}
    hatched = False
    for st in schedule.tasks:
        color = palette[rank[st.task] % len(palette)]
        width = st.end - st.start
        compute = set(st.placement.compute_slices)
        for first, count in _runs(sorted(compute)):
            ax.add_patch(Rectangle((st.start, first), width, count, facecolor=color, edgecolor="black",
                                   linewidth=0.6))
        for first, count in _runs(sorted(st.placement.slices - compute)):  # memory-only slice (3@0)
            hatched = True
            ax.add_patch(Rectangle((st.start, first), width, count, facecolor=color, edgecolor="grey",
                                   linewidth=0.4, hatch="//", alpha=0.45))
        mid = (min(compute) + max(compute) + 1) / 2
        ax.text(st.start + width / 2, mid, st.task, ha="center", va="center", fontsize=7, clip_on=True)
    ms = schedule.makespan
    # operations last tenths of a second next to tasks of minutes: draw them at least
    # 0.3 % of the horizon wide so they stay visible (their start is exact)
    min_width = 0.003 * max(ms, 1e-9)
    for op in schedule.reconfigurations:
        color = "#2ca02c" if op.op == "create" else "#d62728"
        for first, count in _runs(op.placement.slices):
            ax.add_patch(Rectangle((op.start, first), max(op.end - op.start, min_width), count, facecolor=color,
                                   edgecolor=color, linewidth=0.8, alpha=0.85))
    ax.axvline(ms, color="black", linestyle="--", linewidth=1)
    # in the strip below the last slice row, so that it never covers a task
    ax.text(ms, gpu.num_slices + 0.3, f"makespan {ms:.2f} s ", va="center", ha="right", fontsize=8)
    ax.set_ylim(gpu.num_slices + 0.6, 0)
    ax.set_xlim(0, ms * 1.02 if ms > 0 else 1)
    ax.set_yticks([s + 0.5 for s in range(gpu.num_slices)])
    ax.set_yticklabels([f"S{s}" for s in range(gpu.num_slices)])
    ax.set_ylabel("slice")
    ax.set_xlabel("time (s)")
    ax.set_title(title or f"{schedule.gpu}: {len(schedule.tasks)} tasks, "
                          f"{len(schedule.reconfigurations)} create/destroy operations, makespan {ms:.2f} s")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ops = {op.op for op in schedule.reconfigurations}
    handles = [Patch(facecolor="white", edgecolor="black", linewidth=0.6, label="task (on its compute slices)")]
    if hatched:
        handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//",
                             label="occupied, not computing\n(3@0 takes slice 3's memory)"))
    handles += [Patch(color=c, label=op) for op, c in (("create", "#2ca02c"), ("destroy", "#d62728")) if op in ops]
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1, label="makespan"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return ax


def save_gantt(schedules: Schedule | Sequence[Schedule], gpu: GPUSpec, path: str | Path,
               titles: Sequence[str] | None = None) -> Path:
    """Save one Gantt chart, or several stacked with a shared time axis, as a PNG.

    ``titles`` names the panels (one per schedule), e.g. ``["FAR", "OPT"]``;
    without it every panel is titled by its GPU, task and operation counts
    and makespan, so pass it when the panels compare methods.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if isinstance(schedules, Schedule):
        schedules = [schedules]
    k = len(schedules)
    if titles is not None and len(titles) != k:
        raise ValueError(f"save_gantt: {len(titles)} titles for {k} schedules")
    fig, axes = plt.subplots(k, 1, figsize=(12, k * (0.45 * gpu.num_slices + 1.6)), sharex=True, squeeze=False)
    for i, (sch, ax) in enumerate(zip(schedules, axes[:, 0])):
        plot_schedule(sch, gpu, ax=ax, title=None if titles is None else titles[i])
        if i < k - 1:
            ax.set_xlabel("")  # one time axis, shared, labelled under the last panel
    horizon = max((s.makespan for s in schedules), default=1.0)
    axes[0, 0].set_xlim(0, horizon * 1.02 if horizon > 0 else 1)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_gantt(schedules: Schedule | Sequence[Schedule], gpu: GPUSpec, path: str | Path,
                titles: Sequence[str] | None = None) -> Path:
    """:func:`save_gantt` for command lines: every failure is one :class:`InstanceError` line.

    The image format (the suffix) is checked before drawing, a chart with more
    than :data:`MAX_PLOT_ENTRIES` boxes is refused, and an unwritable path is
    an :class:`instances.errors.OutputError` naming it.

    Examples
    --------
    >>> from instances import mig
    >>> try:
    ...     write_gantt(mig.Schedule("A30", []), mig.gpus.get("A30"), "/nonexistent/g.png")
    ... except InstanceError as exc:
    ...     print(exc)
    /nonexistent/g.png: cannot write (No such file or directory)
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backend_bases import FigureCanvasBase

    out = str(path)
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(out).suffix
    if suffix.lower().lstrip(".") not in formats:
        what = repr(suffix) if suffix else "(no suffix)"
        raise InstanceError(f"unsupported image format {what}; use one of "
                            f"{', '.join('.' + f for f in sorted(formats))}", source=out)
    many = [schedules] if isinstance(schedules, Schedule) else list(schedules)
    entries = sum(len(s.tasks) + len(s.reconfigurations) for s in many)
    if entries > MAX_PLOT_ENTRIES:
        raise InstanceError(f"{entries:,} tasks and operations; a chart draws at most {MAX_PLOT_ENTRIES:,}",
                            field="schedule")
    try:
        return save_gantt(many, gpu, out, titles=titles)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", source=out) from None
    except (ValueError, OverflowError) as exc:
        # matplotlib refuses axis limits it cannot draw (times near the float range)
        raise InstanceError(f"cannot draw this schedule ({exc})", source=out) from None
