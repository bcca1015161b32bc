"""Plots of the statistics tables (e2store.reports.tables): growth with board size and hamming.

One PNG per metric (corolles, nodes, bytes per corolle), log-scale y, two panels:

* left, against board size (the table columns, by area): a thin line per zone cell `x y`
  and hamming, and a thick line per hamming for the whole board's zones (corolles and
  nodes: summed over the zone cells; bytes per corolle: total bytes / total corolles);
* right, against hamming: a thick line per board for the same whole-board value, and the
  zone cells as dots.

Drawn with matplotlib's Agg canvas (no pyplot, no display) and written atomically.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from pathlib import Path

from e2store.files import atomic_write_bytes
from e2store.reports.tables import MISSING, TITLES, Board, Table, Uncounted, board_order

PLOT_METRICS = ("corolles", "nodes", "bytes")
_YLABEL = {"corolles": "corolles", "nodes": "search nodes", "bytes": "bytes per corolle"}
_WHOLE = {"corolles": "sum over zone cells", "nodes": "sum over zone cells",
          "bytes": "all zone cells (total bytes / total corolles)"}


def _num(v) -> float | None:
    """A plottable value (> 0 on a log axis) or None."""
    if v is None or v is MISSING or isinstance(v, Uncounted):
        return None
    v = float(v)
    return v if v > 0 and math.isfinite(v) else None


def whole_board(table: Table, corolles: Table | None = None) -> dict[str, float | None]:
    """Per column (instance id): the metric over all zone cells of the table.

    corolles and nodes: the sum over the cells; bytes: sum(bytes per corolle x corolles) /
    sum(corolles), which needs the corolles table of the same hamming.  None when a zone
    is missing.
    """
    out: dict[str, float | None] = {}
    for j, b in enumerate(table.columns):
        col = [row[j] for row in table.values]
        if any(v is MISSING or isinstance(v, Uncounted) for v in col):  # a zone not known
            out[b.instance] = None
            continue
        nums = [(c, v) for c, v in zip(table.cells, col, strict=True)
                if isinstance(v, int | float)]  # the other values are None
        if table.metric != "bytes":
            out[b.instance] = float(sum(v for _, v in nums))
            continue
        if corolles is None:
            raise ValueError("bytes per corolle over the board needs the corolles table")
        jc = [c.instance for c in corolles.columns].index(b.instance)
        n = {cell: row[jc] for cell, row in zip(corolles.cells, corolles.values, strict=True)}
        # the corolles of a cell with bytes per corolle (same zones, same store): a number
        ns = [(v, k) for c, v in nums if isinstance(k := n[c], int | float)]
        total_c = sum(k for _, k in ns)
        total_b = sum(v * k for v, k in ns)
        out[b.instance] = total_b / total_c if total_c else None
    return out


def plot_metric(tables: Iterable[Table], metric: str):
    """The figure (matplotlib Figure on an Agg canvas) of one metric from the tables."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tables = list(tables)
    mine = sorted((t for t in tables if t.metric == metric), key=lambda t: t.hamming)
    if not mine:
        raise ValueError(f"no {metric} table to plot")
    corolles = {t.hamming: t for t in tables if t.metric == "corolles"}
    boards: dict[str, Board] = {}
    for t in mine:
        for b in t.columns:
            boards.setdefault(b.instance, b)
    order = sorted(boards.values(), key=board_order)
    xpos = {b.instance: i for i, b in enumerate(order)}
    labels = {}
    for t in mine:
        labels.update({b.instance: lab for b, lab in zip(t.columns, t.labels, strict=True)})

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax_size, ax_h = fig.subplots(1, 2)
    palette = [f"C{i}" for i in range(10)]

    whole = {t.hamming: whole_board(t, corolles.get(t.hamming)) for t in mine}
    # left: against board size
    for k, t in enumerate(mine):
        colour = palette[k % len(palette)]
        for row in t.values:
            pts = [(xpos[b.instance], _num(v)) for b, v in zip(t.columns, row, strict=True)]
            pts = [(x, y) for x, y in pts if y is not None]
            if pts:
                ax_size.plot(*zip(*pts, strict=True), color=colour, lw=0.8, alpha=0.45,
                             marker=".", ms=4)
        pts = [(xpos[i], _num(v)) for i, v in whole[t.hamming].items()]
        pts = sorted((x, y) for x, y in pts if y is not None)
        if pts:
            ax_size.plot(*zip(*pts, strict=True), color=colour, lw=2.4, marker="o",
                         label=f"hamming {t.hamming}")
    ax_size.set_xticks(range(len(order)), [labels[b.instance] for b in order])
    ax_size.set_xlabel("board")
    ax_size.set_title(f"{TITLES[metric]} by board size")

    # right: against hamming
    hs = [t.hamming for t in mine]
    for k, b in enumerate(order):
        colour = palette[k % len(palette)]
        pts = [(h, _num(whole[h].get(b.instance))) for h in hs]
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            ax_h.plot(*zip(*pts, strict=True), color=colour, lw=2.4, marker="o",
                      label=labels[b.instance])
        for t in mine:
            if b not in t.columns:
                continue
            j = t.columns.index(b)
            ys = [y for y in (_num(row[j]) for row in t.values) if y is not None]
            offset = (k - (len(order) - 1) / 2) * 0.04
            ax_h.plot([t.hamming + offset] * len(ys), ys, linestyle="none", marker=".",
                      ms=4, color=colour, alpha=0.45)
    ax_h.set_xticks(hs)
    ax_h.set_xlabel("hamming")
    ax_h.set_title(f"{TITLES[metric]} by hamming")

    for ax in (ax_size, ax_h):
        ax.set_yscale("log")
        ax.set_ylabel(_YLABEL[metric])
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    form = mine[0].form
    fig.suptitle(f"{TITLES[metric]} ({form} form): thick lines {_WHOLE[metric]}, "
                 "thin lines and dots per zone cell", fontsize="medium")
    return fig


def figure_png(fig) -> bytes:
    """The figure as PNG bytes (no timestamp in the metadata)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def write_plots(tables: Iterable[Table], out_dir: str | Path,
                metrics: Iterable[str] = PLOT_METRICS) -> list[Path]:
    """Write `<metric>.png` for every metric into `out_dir`, atomically."""
    tables = list(tables)
    written = []
    for m in metrics:
        path = Path(out_dir) / f"{m}.png"
        atomic_write_bytes(path, figure_png(plot_metric(tables, m)))
        written.append(path)
    return written
