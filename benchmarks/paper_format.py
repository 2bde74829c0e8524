"""The FAR paper's Tables 4-9 printed: our figure beside the paper's, plain or as the README's markdown.

Plain cells read ``ours (paper, ours - paper)``, markdown cells ``ours
(paper)``; the readings chosen are printed under the tables.
:func:`format_candidates` ranks the candidate readings of Tables 6-9 by
their distance to the paper (:func:`distance`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from benchmarks import common
from benchmarks.paper_spec import (APPROACHES, CONFIGS6, MISO_SLICES, MISO_SLICES_LABEL, N_T4, N_T6, PAPER, SCALINGS,
                                   FarOpt, Setting, mean)

__all__ = ["format_table4", "format_table5", "format_table6", "format_table7", "format_table8", "format_table9",
           "format_candidates", "distance", "interval_text"]


def _cell(ours: float, paper: float, fmt: str = "{:.2f}") -> str:
    if ours is None or math.isnan(ours):
        return f"- ({fmt.format(paper)})"
    return f"{fmt.format(ours)} ({fmt.format(paper)}, {ours - paper:+.2f})"


_md = common.markdown_table


def _md_cell(ours: float, paper: float, spec: str = ".2f") -> str:
    """The README's cell: ``ours (paper)``."""
    return f"{common.fmt(ours, spec)} ({paper:.2f})"


def _opt_block(res: dict, time_limit: float, backend: str, opt_n: int) -> list[str]:
    from benchmarks.compare import opt_name

    scs = [sc for sc in SCALINGS if sc in res["opt"]]
    names = list(dict.fromkeys(s["method"] for sc in scs for s in res["opt"][sc]))
    by = {sc: {s["method"]: s for s in res["opt"][sc]} for sc in scs}

    def cell(s: dict | None) -> str:
        if s is None:
            return "-"
        text = common.fmt(s["mean_ratio_opt"])
        if s["kind"] == "exact":
            text += f" ({s['proven']}/{s['instances']} proven)"
        if s["unproven"] and s["kind"] != "exact":
            text += (f" [{common.fmt(s['unproven_ratio_low'])}, {common.fmt(s['unproven_ratio_high'])}]"
                     f" on {s['unproven']} unproven")
        if s["failed"]:
            text += f" (failed {s['failed']}/{s['instances']})"
        return text

    m = max((s["instances"] for sc in scs for s in res["opt"][sc]), default=0)
    out = ["", f"n = {opt_n} against the exact optimum: {m} instance{'s' if m != 1 else ''} per configuration "
               f"(WideTimes), {opt_name(backend)}, {time_limit:g} s per solve; mean makespan / OPT over proven "
               "optima, [a, b] = mean bracket of makespan / OPT on the instances not proven:",
           common.markdown_table(["method"] + scs, [[n] + [cell(by[sc].get(n)) for sc in scs] for n in names])]
    errors = [(n, sc, by[sc][n]["first_error"]) for n in names for sc in scs if by[sc].get(n, {}).get("failed")]
    out += [f"{n}, {sc}: failed, first: {e}" for n, sc, e in errors]
    return out


def interval_text(c: dict) -> str:
    """``[low, high] proven/count``, or the single value when both ends agree to the digits shown."""
    if c["count"] == c["failed"]:
        return f"- (failed {c['failed']}/{c['count']})"
    low, high = common.fmt(c["low"]), ("open" if math.isinf(c["high"]) else common.fmt(c["high"]))
    text = low if low == high else f"[{low}, {high}]"
    text += f" {c['proven']}/{c['count']} proven"
    return text + (f" (failed {c['failed']})" if c["failed"] else "")


def _interval_block(res: dict, far_opt: FarOpt | None) -> list[str]:
    cells = res.get("interval") or {}
    if not cells:
        return []
    ns = sorted({n for _, n in cells})
    limit = f"{far_opt.time_limit:g} s" if far_opt else "the time limit"
    workers = f", {far_opt.workers} worker{'s' if far_opt.workers != 1 else ''}" if far_opt and far_opt.workers \
        else ""
    count = max(c["count"] for c in cells.values())
    first = "the first instance" if count == 1 else f"the first {count} instances"
    caption = (f"FAR / OPT, proven interval [mean FAR / best found, mean FAR / proven bound] over {first} of "
               f"each cell (WideTimes), CP-SAT with reconfiguration, {limit} per "
               f"solve{workers}; one value where both ends agree:")
    header = ["config"] + [f"n={ns[0]}"] + [str(n) for n in ns[1:]]
    rows = [[sc] + [interval_text(cells[(sc, n)]) if (sc, n) in cells else "-" for n in ns] for sc in SCALINGS]
    out = ["", caption, "", common.markdown_table(header, rows)]
    out += [f"{sc}, n={n}: failed {c['failed']}/{c['count']}, first: {c['error']}"
            for (sc, n), c in sorted(cells.items()) if c["failed"]]
    return out


def format_table4(res: dict, reps: int, time_limit: float, markdown: bool = False, backend: str = "cpsat",
                  opt_n: int = 10, far_opt: FarOpt | None = None) -> str:
    if markdown:  # the README's form: ours (paper), three decimals for ours
        header = ["config"] + [f"n={N_T4[0]}"] + [str(n) for n in N_T4[1:]]
        rows = [[sc] + [_md_cell(o, p, ".3f") for o, p in zip(res[sc], PAPER[4][sc])] for sc in SCALINGS]
        out = [f"Table 4, mean rho = FAR / area bound, WideTimes, {reps} instances per cell, ours (paper):",
               "", common.markdown_table(header, rows)]
    else:
        header = ["Task configuration"] + [f"n={n}" for n in N_T4]
        rows = [[sc] + [_cell(o, p) for o, p in zip(res[sc], PAPER[4][sc])] for sc in SCALINGS]
        out = [f"Table 4: mean rho = FAR / baseline, A100, WideTimes, {reps} reps; ours (paper, difference)",
               common.markdown_table(header, rows)]
    if res.get("opt"):
        block = _opt_block(res, time_limit, backend, opt_n)
        out += block if not markdown else [block[0], block[1], ""] + block[2:]
    out += _interval_block(res, far_opt)
    return "\n".join(out)


def format_table5(res: dict, reps: int, markdown: bool = False) -> str:
    cfgs = [c for c in CONFIGS6 if c in res]
    cols = list(dict.fromkeys(c for cfg in cfgs for c in res[cfg]))
    paper = {cfg: dict(zip(APPROACHES, PAPER[5][cfg])) for cfg in cfgs}

    def cell(cfg, c) -> str:
        v = res[cfg][c]
        if c in paper[cfg]:
            text = _md_cell(v["mean"], paper[cfg][c]) if markdown else _cell(v["mean"], paper[cfg][c])
        else:
            text = common.fmt(v["mean"], ".2f")
        return text + (f" (failed {v['failed']}/{v['reps']})" if v["failed"] else "")

    header = (["" if markdown else "Task configuration"]
              + [MISO_SLICES_LABEL if c == MISO_SLICES else c for c in cols])
    rows = [[f"{sc}, {tm}"] + [cell((sc, tm), c) for c in cols] for sc, tm in cfgs]
    caption = (f"Table 5, mean sigma = method's makespan / FAR's makespan (n = 15, {reps} instances per row), "
               "ours (paper):" if markdown else
               f"Table 5: mean sigma_A = omega_A / omega_FAR, A100, n=15, {reps} reps; ours (paper, difference)")
    out = [caption] + ([""] if markdown else []) + [common.markdown_table(header, rows)]
    if not markdown:
        out.append("MISO-opt switches partition when all its tasks have ended (our reading of Sec. 6.5.1); "
                   "the per-slice column lets each new instance wait only for the instances on its slices. "
                   "Our FixPart includes the initial instance creations (rule 1), the paper's does not.")
    out += [f"{c}, {sc}, {tm}: failed {res[(sc, tm)][c]['failed']}/{reps}, first: {res[(sc, tm)][c]['error']}"
            for c in cols for sc, tm in cfgs if res[(sc, tm)][c]["failed"]]
    return "\n".join(out)


def _grid(caption: str, header: list[str], rows: list[list[Any]], markdown: bool, notes: Sequence[str] = ()) -> str:
    return "\n".join([caption] + ([""] if markdown else []) + [_md(header, rows)] + list(notes))


def _setting_note(setting: Setting) -> str:
    return "" if setting == Setting() else f"; setting: {setting.label()}"


def _pair_cells(res: dict, table: int, markdown: bool) -> list[list[Any]]:
    cell = _md_cell if markdown else _cell
    return [[f"{sc}, {tm}"] + [cell(o, p) for o, p in zip(res[(sc, tm)], PAPER[table][(sc, tm)])]
            for sc, tm in CONFIGS6]


def format_table6(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6
                                                            for h in ("p_ref %", "moves", "swaps")]
    caption = (f"Table 6, refinement: p_ref %, moves, swaps, {reps} instances per cell, ours (paper)"
               if markdown else f"Table 6: refinement, A100, {reps} reps; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 6, markdown), markdown)


def _release_words(setting: Setting, chain: int = 2) -> str:
    if chain > 2:
        return {"zero": "all released at 0", "half": "each released at half the previous batches' FAR makespans",
                "end": "each released at the sum of the previous batches' FAR makespans",
                "gap": f"each released at {setting.gap:g} x the previous batches' area bounds"}[setting.release]
    return {"zero": "both released at 0", "half": "the second released at half the first's FAR makespan",
            "end": "the second released at the first's FAR makespan",
            "gap": f"the second released at {setting.gap:g} x the first's area bound"}[setting.release]


def _what(chain: int, reps: int) -> tuple[str, str]:
    """What a Table 7-8 cell averages: ``(the concatenated batches, the repetitions)``."""
    if chain == 2:
        return "two FAR batches", f"{reps} pairs"
    return (f"a chain of {chain} FAR batches ({chain - 1} concatenations; gains on the chain's makespan, "
            "operations per concatenation)", f"{reps} chain{'s' if reps != 1 else ''}")


def format_table7(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting(),
                  chain: int = 2) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6
                                                            for h in ("p_rev %", "p_move/swap %")]
    batches, count = _what(chain, reps)
    what = f"concatenation of {batches} ({_release_words(setting, chain)})"
    caption = (f"Table 7, {what}, {count}, ours (paper)" if markdown else
               f"Table 7: {what}, A100, {count}; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 7, markdown), markdown)


def format_table8(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting(),
                  chain: int = 2) -> str:
    header = ["" if markdown else "Task configuration"] + [f"{h} n={n}" for n in N_T6 for h in ("moves", "swaps")]
    batches, count = _what(chain, reps)
    where = "" if chain == 2 else f", {batches}"
    caption = (f"Table 8, moves/swaps of the move/swap concatenation ({_release_words(setting, chain)}){where}, "
               f"{count}, ours (paper)" if markdown else
               f"Table 8: moves/swaps of the move/swap concatenation{where}, A100, {count}; ours (paper, difference)")
    return _grid(caption + _setting_note(setting), header, _pair_cells(res, 8, markdown), markdown)


def format_table9(res: dict, reps: int, markdown: bool = False, setting: Setting = Setting()) -> str:
    cell = _md_cell if markdown else _cell
    header = ["" if markdown else "Task configuration"] + [f"n={n}" for n in N_T4]
    rows = [[sc] + [cell(o, p) for o, p in zip(res[sc], PAPER[9][sc])] for sc in SCALINGS]
    rel = {"zero": "all released at 0", "half": "each released at half the previous batches' FAR makespans",
           "end": "each released when the previous ones would end back to back (sum of FAR makespans)",
           "gap": f"each released at {setting.gap:g} x the previous batches' area bounds"}[setting.release]
    caption = (f"Table 9, p_multi-batch %, WideTimes, {reps + 1} batches {rel} (the paper: 1001), ours (paper)"
               if markdown else
               f"Table 9: p_multi-batch %, A100, WideTimes, {reps + 1} batches {rel} (the paper: 1001); "
               "ours (paper, difference)")
    notes = [] if markdown or setting.release != "zero" else [
        "With every batch available, omega_multi <= sum of the batch makespans, so p_multi-batch stays near the "
        "single-batch rho - 1 of Table 4; the paper's 82-95 % needs idle time between batches (release times "
        "it does not state)."]
    return _grid(caption + _setting_note(setting), header, rows, markdown, notes)


def distance(table: str, res: Any) -> dict[str, float]:
    """Mean and largest absolute difference to the paper, and the mean paper value, over a table's cells.

    ``table`` is ``"6"``, ``"7"``, ``"8"`` or ``"9"``; ``res`` that table's result.

    Examples
    --------
    >>> d = distance("9", {sc: list(PAPER[9][sc]) for sc in SCALINGS})
    >>> d["mad"], d["max"]
    (0.0, 0.0)
    """
    keys = SCALINGS if table == "9" else CONFIGS6
    pairs = [(o, p) for k in keys for o, p in zip(res[k], PAPER[int(table)][k])]
    diffs = [abs(o - p) for o, p in pairs if o is not None and not math.isnan(o)]
    return {"mad": mean(diffs), "max": max(diffs, default=float("nan")),
            "paper": mean([abs(p) for _, p in pairs])}


def format_candidates(found: dict[str, list[tuple[Setting, Any]]], reps: int, markdown: bool = False) -> str:
    """Per table and candidate setting: mean / largest |ours - paper| and whether the setting reproduces it.

    A setting reproduces a table when its mean absolute difference is at most a
    tenth of the table's mean paper value.
    """
    rows = []
    for table, runs in found.items():
        for setting, res in runs:
            d = distance(table, res)
            ok = d["mad"] <= 0.1 * d["paper"]
            rows.append([table, setting.label(), common.fmt(d["mad"], ".2f"), common.fmt(d["max"], ".2f"),
                         common.fmt(d["paper"], ".2f"), "yes" if ok else "no"])
    caption = (f"Tables 6-9 under every candidate setting, {reps} instances per cell: mean and largest |ours - paper| "
               "over the table's cells; 'reproduces' = mean difference <= a tenth of the mean paper value")
    return _grid(caption, ["table", "setting", "mean abs diff", "max abs diff", "mean paper", "reproduces"], rows,
                 markdown)

