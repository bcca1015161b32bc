"""Query commands: `e2store sql`, `e2store build-db`, `e2store export-closures`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS,
    hamming_option,
    json_option,
    output_option,
    store_instance_option,
    store_option,
)


@command("sql", legacy_store_positional=True, examples=[
    "e2store sql --store store/ \"SELECT hamming, zone, count(*) AS n FROM corolles "
    "GROUP BY ALL ORDER BY ALL\"",
    "e2store sql --store store/ \"SELECT * FROM zone_stats\" --csv > zone_stats.csv",
])
@store_option
@click.argument("query")
@json_option("One JSON object per row on stdout.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV with a header line on stdout.")
def sql(store: Path, query: str, as_json: bool, as_csv: bool) -> None:
    """Run SQL over a store's views: corolles, stems, manifest, zone_stats, instances.

    Rows are streamed batch by batch (any result size); NULL prints as NULL (null in
    JSON, an empty field in CSV).  In the table the first batch sets the column widths.
    """
    from e2store.query.handle import connect

    if as_json and as_csv:
        raise click.UsageError("give at most one of --json and --csv")
    n = 0
    widths: list[int] | None = None
    with connect(store) as st:
        reader = st.sql(query, stream=True)
        names = reader.schema.names
        if as_csv:
            click.echo(_csv_line(names), nl=False)
        for batch in _batches(reader, store):
            rows = batch.to_pylist()
            n += len(rows)
            if as_json:
                for r in rows:
                    click.echo(json.dumps(r, default=str))
            elif as_csv:
                click.echo("".join(_csv_line([r[k] for k in names]) for r in rows), nl=False)
            else:
                cells = [["NULL" if r[k] is None else str(r[k]) for k in names] for r in rows]
                if widths is None:
                    widths = [max([len(k)] + [len(c[i]) for c in cells])
                              for i, k in enumerate(names)]
                    click.echo("  ".join(k.rjust(w) for k, w in zip(names, widths, strict=True)))
                for c in cells:
                    click.echo("  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)))
    if not (as_json or as_csv):
        if widths is None:  # no rows: the header alone
            click.echo("  ".join(names))
        click.echo(f"({n} row{'s' if n != 1 else ''})")


def _batches(reader, store: Path):
    """The reader's batches; an error met while the query runs is the same one-line
    StoreError as one met when it starts."""
    import duckdb
    import pyarrow as pa

    from e2store.errors import StoreError

    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (duckdb.Error, pa.ArrowException) as exc:
            raise StoreError(f"{store}: query failed: {exc}") from None
        yield batch


def _csv_line(values: list) -> str:
    """One CSV record with its newline (quoted as the csv module quotes; None as an empty
    field)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


@command("build-db", legacy_store_positional=True, examples=[
    "e2store build-db --store store/ -o corolles.duckdb",
    "cd store/ && duckdb ../corolles.duckdb",
    "e2store build-db --store store/ -o store/views.sql",
])
@store_option
@output_option("DuckDB database file (FILE.duckdb) or SQL script (FILE.sql) to write "
               "(atomically).", required=True)
def build_db(store: Path, output: Path) -> None:
    """Write a DuckDB database (or SQL script) of a store's views, relative to the store.

    Views corolles, stems, manifest and zone_stats, table instances.  Every path is a glob
    relative to the store: the database works after the store moves and sees partitions
    added later.  Open it from the store (cd STORE && duckdb FILE.duckdb) or with SET
    file_search_path = 'STORE'.  The file uses DuckDB 1.0's storage format: DuckDB 1.x
    and 2.x open it.
    """
    from e2store.query.handle import connect

    with connect(store) as st:
        st.write_database(output)
    click.echo(f"wrote {output}")


@command("export-closures", legacy={"--cells": "--at"}, examples=[
    "e2store export-closures --store store/ --hamming 2 --at 0,0 --at 3,3 -o closures/",
    "e2store export-closures --store store/ --instance demo7.e2s --hamming 1 --at 2,2 "
    "-o closures/",
])
@store_option
@store_instance_option
@hamming_option
@click.option("--at", "at", multiple=True, required=True, type=CELLS,
              help="Centre of a region (repeatable).")
@output_option("Directory to write the regions into.", required=True, directory=True)
def export_closures(store: Path, instance: str | None, hamming: int,
                    at: tuple[tuple[tuple[int, int], ...], ...], output: Path) -> None:
    """Write each region's corolles and its index by frontier as Arrow IPC files.

    A region is the corolle of a cell at the hamming: every cell within that Manhattan
    distance.  Per region, region-X-Y.arrow (its corolles sorted by frontier) and
    region-X-Y.index.arrow (each frontier's first row and count), uncompressed, for a C or
    Rust solver to memory-map; regions.json lists them (docs/store-format.md).
    """
    from e2store.cli.corolles import store_instance
    from e2store.errors import MissingInstanceError
    from e2store.instance.formats import read_instance
    from e2store.query.regions import export_closures as export
    from e2store.store.layout import instance_path

    path = instance_path(store, store_instance(store, instance))
    if not path.exists():
        raise MissingInstanceError(f"{store}: no instance {path.stem!r} in the store")
    inst = read_instance(path, format="e2store")
    cells = [c for group in at for c in group]
    entries = export(store, inst, hamming, cells, output,
                     progress=lambda m: click.echo(m, err=True))
    click.echo(f"wrote {len(entries)} regions to {output}: "
               f"{sum(e['corolles'] for e in entries):,} corolles, "
               f"{sum(e['keys'] for e in entries):,} frontier keys")
