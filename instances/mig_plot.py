"""Gantt charts of MIG schedules (matplotlib), in the style of seed 000 Figure 12.

One row per slice; a task is a box spanning the rows of the slices it computes
on (the occupied-only slice of 3@0 is hatched), labelled with its name;
create / destroy operations are drawn as green / red boxes over the slices
they occupy; the makespan is a dashed vertical line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from instances.gpus import GPUSpec
from instances.mig_schedule import Schedule

__all__ = ["plot_schedule", "save_gantt"]


def _runs(slices: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive slices as (first, count)."""
    out: list[tuple[int, int]] = []
    for s in sorted(slices):
        if out and out[-1][0] + out[-1][1] == s:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((s, 1))
    return out


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
    for st in schedule.tasks:
        color = palette[rank[st.task] % len(palette)]
        width = st.end - st.start
        compute = set(st.placement.compute_slices)
        for first, count in _runs(sorted(compute)):
            ax.add_patch(Rectangle((st.start, first), width, count, facecolor=color, edgecolor="black",
                                   linewidth=0.6))
        for first, count in _runs(sorted(st.placement.slices - compute)):  # memory-only slice (3@0)
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
    ax.text(ms, gpu.num_slices + 0.05, f" makespan {ms:.2f} s", va="bottom", ha="right", fontsize=8)
    ax.set_ylim(gpu.num_slices + 0.6, 0)
    ax.set_xlim(0, ms * 1.02 if ms > 0 else 1)
    ax.set_yticks([s + 0.5 for s in range(gpu.num_slices)])
    ax.set_yticklabels([f"S{s}" for s in range(gpu.num_slices)])
    ax.set_xlabel("time (s)")
    ax.set_title(title or f"{schedule.gpu}: {len(schedule.tasks)} tasks, "
                          f"{len(schedule.reconfigurations)} create/destroy operations")
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color="#2ca02c", label="create"), Patch(color="#d62728", label="destroy")],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return ax


def save_gantt(schedules: Schedule | Sequence[Schedule], gpu: GPUSpec, path: str | Path,
               titles: Sequence[str] | None = None) -> Path:
    """Save one Gantt chart, or several stacked with a shared time axis, as a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if isinstance(schedules, Schedule):
        schedules = [schedules]
    k = len(schedules)
    fig, axes = plt.subplots(k, 1, figsize=(12, k * (0.45 * gpu.num_slices + 1.6)), sharex=True, squeeze=False)
    for i, (sch, ax) in enumerate(zip(schedules, axes[:, 0])):
        plot_schedule(sch, gpu, ax=ax, title=None if titles is None else titles[i])
    horizon = max((s.makespan for s in schedules), default=1.0)
    axes[0, 0].set_xlim(0, horizon * 1.02 if horizon > 0 else 1)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
