"""Statistics tables laid out like the published corolle study.

Per hamming and metric, one table: a row per zone cell `x y` (the canonical cell of a zone,
in the north-west quadrant, docs/design.md section 3), a column per instance (board size), and in
each cell the metric of that zone on that board.  Zone ids depend on the board size, so rows
are keyed by the cell, never by the zone id: a cell is blank in the columns whose board has
no zone with that canonical cell.

Everything is read from the store manifest, from the rotation-0 partitions of one form
(flat by default), that is from what was enumerated at each canonical cell:

* `corolles`: the corolles at the cell;
* `nodes`: the search nodes of the enumeration (0 for a cartesian-only partition: its stems
  are walked, not its corolles);
* `seconds`: the enumeration time (wall time of writing the zone's partitions);
* `bytes`: bytes per corolle of the partition's files (the stored size of the form's
  rotation-0 files divided by its corolles; blank when the cell has no corolles).

`build_tables` turns a manifest into tables (pure); `load_tables` reads a store; the
writers give CSV and Markdown text, and `write_tables` writes both files of every table
atomically.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from e2store.errors import StoreError
from e2store.files import atomic_write_text
from e2store.store.layout import FORMS
from e2store.store.read import read_manifest, read_store_instance
from e2store.zones.zonemap import zone_map

METRICS = ("corolles", "nodes", "seconds", "bytes")
TITLES = {
    "corolles": "Corolles",
    "nodes": "Search nodes",
    "seconds": "Enumeration seconds",
    "bytes": "Bytes per corolle",
    "distinct": "Distinct corolles",
    "distinct_raw": "Raw corolles of the distinct counts",
    "distinct_seconds": "Distinct counting seconds",
}
_CSV_DIGITS = {"seconds": 6, "bytes": 4, "distinct_seconds": 6}
_MD_DIGITS = {"seconds": 3, "bytes": 2, "distinct_seconds": 3}
COUNT_FORM = "count"  # a Table of exact counts (e2store.counts.shards), not of a store's partitions
DISTINCT_COUNT_FORM = "distinct count"  # a Table of exact distinct counts (walked)


class _Missing:
    """A table value for a zone of the board that is not in the store (not enumerated)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


@dataclass(frozen=True)
class Uncounted:
    """A count-table value for a zone its plan left out: more stems than the run's
    `max_stems` (out of reach of the method in that run); with its estimated corolles and
    their relative standard error when `e2store count-estimate` sampled it."""

    stems: int
    estimate: float | None = None
    rel_error: float | None = None


class Crosschecked(int):
    """A count-table count that an independent exact model confirmed (`e2store crosscheck
    --records`): the count itself, with the models that gave it (`models`)."""

    models: tuple[str, ...] = ()

    def __new__(cls, value: int, models: tuple[str, ...] = ()):
        out = super().__new__(cls, value)
        out.models = tuple(models)
        return out


CROSSCHECK_MARK = "✓"
Value = int | float | _Missing | Uncounted | None


@dataclass(frozen=True)
class Board:
    """An instance of the store: id, name and board size."""

    instance: str
    name: str
    width: int
    height: int

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}"


@dataclass(frozen=True)
class Table:
    """One metric at one hamming: `values[i][j]` is row `cells[i]` of column `columns[j]`.

    A value is a number, None (the cell is not a zone's canonical cell on that board, or,
    for bytes per corolle, the cell has no corolles) or MISSING (the zone is not in the
    store).
    """

    metric: str
    hamming: int
    form: str
    columns: tuple[Board, ...]
    labels: tuple[str, ...]
    cells: tuple[tuple[int, int], ...]
    values: tuple[tuple[Value, ...], ...]

    @property
    def stem(self) -> str:
        """File name without extension: `corolles_h2`."""
        return f"{self.metric}_h{self.hamming}"


def board_order(b: Board) -> tuple:
    """Columns by board area, then width, height, name and id."""
    return (b.width * b.height, b.width, b.height, b.name, b.instance)


def column_labels(boards: Iterable[Board]) -> tuple[str, ...]:
    """`WxH`; `WxH name` when two boards share a size; the instance id when that repeats."""
    boards = list(boards)
    sizes = [b.size for b in boards]
    labels = [b.size if sizes.count(b.size) == 1 else f"{b.size} {b.name}" for b in boards]
    return tuple(lab if labels.count(lab) == 1 else b.instance
                 for lab, b in zip(labels, boards, strict=True))


def _value(metric: str, part: dict | None) -> Value:
    if part is None:
        return MISSING
    if metric == "bytes":
        n_bytes = sum(f["bytes"] for f in part["files"])
        return round(n_bytes / part["corolles"], 6) if part["corolles"] else None
    if metric == "seconds":
        return float(part["seconds"])
    return int(part[metric])


def build_tables(manifest: Mapping, boards: Mapping[str, Board],
                 hammings: Iterable[int] | None = None, form: str = "flat",
                 metrics: Iterable[str] = METRICS) -> list[Table]:
    """The tables of a manifest: for every hamming (ascending) and metric (METRICS order).

    Columns are the instances of `boards` that have `form` partitions at that hamming.
    Rows are the canonical cells of the zones of every column's board, by (y, x).
    """
    if form not in FORMS:
        raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    metrics = list(metrics)
    for m in metrics:
        if m not in METRICS:
            raise StoreError(f"unknown metric {m!r} (expected one of {', '.join(METRICS)})")
    parts: dict[tuple[int, str], dict[int, dict]] = {}
    for p in manifest["partitions"]:
        if (p.get("form", "flat") == form and p["rotation"] == 0
                and p["instance"] in boards):
            parts.setdefault((int(p["hamming"]), p["instance"]), {})[int(p["zone"])] = p
    hs = sorted({h for h, _ in parts} if hammings is None else {int(h) for h in hammings})
    tables = []
    for h in hs:
        columns = sorted((boards[i] for hh, i in parts if hh == h), key=board_order)
        by_column = []
        for b in columns:
            zm = zone_map(b.width, b.height, h)
            by_column.append({(z.x, z.y): parts[(h, b.instance)].get(z.id) for z in zm.zones})
        cells = sorted({c for col in by_column for c in col}, key=lambda c: (c[1], c[0]))
        labels = column_labels(columns)
        for m in metrics:
            values = tuple(
                tuple(_value(m, col[c]) if c in col else None for col in by_column)
                for c in cells
            )
            tables.append(Table(m, h, form, tuple(columns), labels, tuple(cells), values))
    return tables


def store_boards(root: str | Path, instance_ids: Iterable[str]) -> dict[str, Board]:
    """The board of each instance, from the instance file the store keeps beside it."""
    out = {}
    for i in instance_ids:
        inst = read_store_instance(root, i)
        out[i] = Board(i, inst.name, inst.width, inst.height)
    return out


def load_tables(store_root: str | Path, instances: Iterable[str] | None = None,
                hammings: Iterable[int] | None = None, form: str = "flat",
                metrics: Iterable[str] = METRICS) -> list[Table]:
    """The tables of a store (all instances and hammings with `form` partitions, or the
    chosen ones: then every chosen combination must have them, else StoreError)."""
    root = Path(store_root)
    manifest = read_manifest(root)
    have = {(p["instance"], int(p["hamming"])) for p in manifest["partitions"]
            if p.get("form", "flat") == form and p["rotation"] == 0}
    want_i = None if instances is None else sorted(set(instances))
    want_h = None if hammings is None else sorted({int(h) for h in hammings})
    ids = want_i if want_i is not None else sorted({i for i, _ in have})
    if want_i is not None or want_h is not None:
        hs = want_h if want_h is not None else sorted({h for _, h in have})
        missing = [(i, h) for i in ids for h in hs if (i, h) not in have]
        if missing:
            what = ", ".join(f"instance={i} hamming={h}" for i, h in missing)
            raise StoreError(f"{root}: no {form} partitions for {what} (run `e2store "
                             f"enumerate --form {form}` first, or choose another --form)")
    if not ids:
        raise StoreError(f"{root}: no {form} partitions (run `e2store enumerate --form "
                         f"{form}` first, or choose another --form)")
    return build_tables(manifest, store_boards(root, ids), want_h, form, metrics)


# ------------------------------------------------------------------------------ writers


def _csv_cell(metric: str, v: Value) -> str:
    if v is None:
        return ""
    if v is MISSING or isinstance(v, Uncounted):
        return "NA"
    if isinstance(v, float):
        return f"{v:.{_CSV_DIGITS.get(metric, 6)}f}"
    return str(v)


def _md_cell(metric: str, v: Value) -> str:
    if v is None:
        return ""
    if v is MISSING:
        return "?"
    if isinstance(v, Uncounted):
        if metric == "corolles" and v.estimate is not None:
            return f"≈ {v.estimate:.4e} ± {100 * (v.rel_error or 0.0):.2f}%"
        return f"? ({v.stems:,} stems)" if v.stems < 10**7 else f"? ({v.stems:.2e} stems)"
    if isinstance(v, float):
        return f"{v:,.{_MD_DIGITS.get(metric, 3)}f}"
    if isinstance(v, Crosschecked):
        return f"{v:,} {CROSSCHECK_MARK}"
    return f"{v:,}"


def table_csv(table: Table) -> str:
    """`x,y,<column labels>` then a row per cell; blank: not a zone cell there, NA: the
    zone is not in the store."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["x", "y", *table.labels])
    for (x, y), row in zip(table.cells, table.values, strict=True):
        w.writerow([x, y, *(_csv_cell(table.metric, v) for v in row)])
    return buf.getvalue()


def table_markdown(table: Table) -> str:
    """The table as Markdown: title, a row per cell `x y`, a column per board."""
    counts = table.form in (COUNT_FORM, DISTINCT_COUNT_FORM)
    title = "Counting seconds" if counts and table.metric == "seconds" else TITLES[table.metric]
    source = ("exact factorised counts (stems times injective last-ring choices), seconds "
              "summed over the zone's shards" if table.form == COUNT_FORM
              else "exact counts of the distinct corolles (identical pieces interchangeable, "
              "symmetric rotations merged; walked), raw: the corolles they stand for, seconds "
              "summed over the zone's shards" if counts
              else f"{table.form} form, rotation-0 partitions")
    lines = [
        f"# {title}, hamming {table.hamming}",
        "",
        f"Per zone cell `x y` (the zone's canonical cell, north-west quadrant) and board; "
        f"{source}.",
        "",
        "| x y | " + " | ".join(table.labels) + " |",
        "|---|" + "--:|" * len(table.labels),
    ]
    for (x, y), row in zip(table.cells, table.values, strict=True):
        lines.append(f"| {x} {y} | " + " | ".join(_md_cell(table.metric, v) for v in row)
                     + " |")
    lines += ["", "Columns: " + "; ".join(
        f"{lab} = `{b.instance}`" for lab, b in zip(table.labels, table.columns, strict=True))
        + ".",
        "Blank: not a zone's canonical cell on that board"
        + (" (or no corolles)" if table.metric == "bytes" else "")
        + ("; ?: not counted yet" + ("; ? (N stems): left out of this run, more stems than "
                                      "its max_stems" if any(isinstance(v, Uncounted)
                                                             for row in table.values
                                                             for v in row) else "")
           + ("; ≈ E ± r%: left out too, estimated by sampling (`e2store count-estimate`), "
              "r the relative standard error" if table.metric == "corolles" and any(
                  isinstance(v, Uncounted) and v.estimate is not None
                  for row in table.values for v in row) else "") + "."
           if counts else "; ?: the zone is not in the store.")
        + (f" {CROSSCHECK_MARK}: confirmed by independent exact models (`e2store crosscheck "
           f"--records`: " + ", ".join(sorted({m for row in table.values for v in row
                                                if isinstance(v, Crosschecked)
                                                for m in v.models})) + ")."
           if any(isinstance(v, Crosschecked) for row in table.values for v in row) else ""),
        ""]
    return "\n".join(lines)


def write_tables(tables: Iterable[Table], out_dir: str | Path) -> list[Path]:
    """Write `<metric>_h<h>.csv` and `.md` of every table into `out_dir`, atomically."""
    out = Path(out_dir)
    written = []
    for t in tables:
        for ext, text in (("csv", table_csv(t)), ("md", table_markdown(t))):
            path = out / f"{t.stem}.{ext}"
            atomic_write_text(path, text)
            written.append(path)
    return written
