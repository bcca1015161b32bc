"""The explorer's tables and plots: the store's statistics tables and growth plots
(`e2store tables`, `e2store plot`), the count tables of a count-records directory
(`e2store tabulate --records`), and the tables, plots and summaries a results directory
holds (the pipeline's `--results`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from e2store.counts.shards import count_tables
from e2store.errors import MissingError, MissingInstanceError, ZoneError
from e2store.query import CorolleStore
from e2store.reports.plots import PLOT_METRICS, plot_metric
from e2store.reports.tables import (
    MISSING,
    Crosschecked,
    Table,
    Uncounted,
    load_tables,
    store_boards,
)

RESULT_FILES = {".csv": "table", ".png": "image", ".svg": "image", ".json": "json",
                ".md": "text"}
MAX_RESULT_BYTES = 8 << 20  # a results file bigger than this is listed, not shown
MAX_RESULT_PATH = 1024  # characters of the longest results path asked for


def _value(v):
    """A table value as JSON: a number, null (no zone cell there), "missing" (not in the
    store) or {"uncounted_stems", "estimate", "rel_error"}."""
    if v is MISSING:
        return "missing"
    if isinstance(v, Uncounted):
        return {"uncounted_stems": v.stems, "estimate": v.estimate, "rel_error": v.rel_error}
    return v


def table_json(t: Table) -> dict:
    """One statistics table as JSON: a row per zone cell, a value per board column."""
    return {"metric": t.metric, "hamming": t.hamming, "form": t.form,
            "columns": list(t.labels),
            "rows": [{"x": x, "y": y, "values": [_value(v) for v in row],
                      "crosschecked": [list(v.models) if isinstance(v, Crosschecked) else None
                                       for v in row]}
                     for (x, y), row in zip(t.cells, t.values, strict=True)]}


def new_figure(size: tuple[float, float]):
    """A matplotlib figure of `size` inches on its own Agg canvas, not matplotlib's global
    state, which is not safe in the server's worker threads (each request draws its own)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def figure_svg(fig) -> str:
    """A matplotlib figure as SVG text (for inline pictures)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def store_tables(store: CorolleStore, form: str = "flat", *, pictures: bool = True) -> dict:
    """The store's tables of `form` (corolles, nodes, seconds, bytes per hamming: what
    `e2store tables` writes) and, with `pictures`, the growth plots (`e2store plot`) as
    inline SVG.  `form` is one the store can hold (ZoneError: 400)."""
    from e2store.store.layout import FORMS

    if form not in FORMS:
        text = form if len(form) <= 40 else form[:40] + "..."
        raise ZoneError(f"form {text!r} is not a form of the store (expected one of "
                        f"{', '.join(FORMS)})")
    tables = load_tables(store.root, form=form)
    out: dict[str, Any] = {"form": form, "tables": [table_json(t) for t in tables]}
    if pictures:
        out["plots"] = {m: figure_svg(plot_metric(tables, m)) for m in PLOT_METRICS
                        if any(t.metric == m for t in tables)}
    return out


def records_tables(store: CorolleStore, records: Path | None, *,
                   pictures: bool = True) -> dict:
    """The exact count tables (corolles and seconds per zone cell and board) of the count
    records under `records` (`records/<instance>/h<h>/<x>-<y>/shard-*.json`), for the
    instances the store holds (their boards come from it; the others are listed as
    skipped), and the growth plot of the corolles."""
    if records is None:
        raise MissingError("no count-records directory: start the server with `e2store "
                           "serve --records DIR` (what `e2store tabulate --records` fills)")
    found = {d.name: sorted(int(h.name[1:]) for h in d.glob("h*") if h.name[1:].isdigit())
             for d in sorted(records.iterdir()) if d.is_dir() and not d.name.startswith(".")}
    held, skipped = [], []
    for iid in found:
        try:
            held.append((iid, store.instance(iid)))
        except MissingInstanceError:
            skipped.append(iid)
    hammings = sorted({h for iid, _ in held for h in found[iid]})
    boards = store_boards(store.root, [iid for iid, _ in held])
    tables = count_tables(records, [(boards[iid], inst) for iid, inst in held], hammings)
    out: dict[str, Any]  # a JSON document
    out = {"records": str(records), "skipped": skipped,
           "tables": [table_json(t) for t in tables]}
    if pictures:
        out["plots"] = ({"corolles": figure_svg(plot_metric(tables, "corolles"))}
                        if tables else {})
    return out


def results_listing(results: Path | None) -> dict:
    """The files of a results directory the explorer shows: CSV tables (parsed), images,
    JSON summaries and Markdown, by path relative to it."""
    if results is None:
        raise MissingError("no results directory: start the server with `e2store serve "
                           "--results DIR` (the pipeline's results folder)")
    files = []
    base = results.resolve()
    for path in sorted(results.rglob("*")):
        kind = RESULT_FILES.get(path.suffix.lower())
        rel = path.relative_to(results)
        if (kind is None or not path.is_file() or any(p.startswith(".") for p in rel.parts)
                or not path.resolve().is_relative_to(base)):  # a link out is not shown
            continue
        entry: dict[str, Any] = {"path": str(rel), "kind": kind, "bytes": path.stat().st_size}
        if kind == "table" and entry["bytes"] <= MAX_RESULT_BYTES:
            with open(path, newline="", encoding="utf-8", errors="replace") as fh:
                rows = list(csv.reader(fh))
            entry["header"], entry["rows"] = (rows[0], rows[1:]) if rows else ([], [])
        files.append(entry)
    return {"results": str(results), "files": files}


def results_file(results: Path | None, rel: str) -> tuple[Path, str]:
    """The file `rel` of the results directory, and its media type: only the kinds
    `results_listing` shows, and never outside the directory (MissingError, 404: also for a
    name no file can have, NUL bytes or too long)."""
    if results is None:
        raise MissingError("no results directory: start the server with --results DIR")
    shown = repr(rel if len(rel) <= 80 else rel[:80] + "...")
    if "\0" in rel or len(rel) > MAX_RESULT_PATH:
        raise MissingError(f"no such results file: {shown}")
    base = results.resolve()
    try:
        path = (base / rel).resolve()
        kind = RESULT_FILES.get(path.suffix.lower())
        found = (path.is_relative_to(base) and kind is not None and path.is_file()
                 and not any(p.startswith(".") for p in path.relative_to(base).parts))
    except (OSError, ValueError):  # a name too long for the system, ...
        found = False
    if not found:
        raise MissingError(f"no such results file: {shown}")
    media = {".csv": "text/csv", ".png": "image/png", ".svg": "image/svg+xml",
             ".json": "application/json", ".md": "text/markdown"}[path.suffix.lower()]
    return path, media
