"""Query commands: `e2store sql`, `e2store build-db`, `e2store export-closures`."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS,
    DUCKDB_ALLOCATOR_ENV,
    MAX_SECONDS,
    FiniteFloat,
    hamming_option,
    json_option,
    memory_limit_option,
    output_option,
    store_instance_option,
    store_option,
)
from e2store.instance.parsing import shown_path
from e2store.query.sql import QUERY_SECONDS


@command("sql", legacy_store_positional=True, examples=[
    "e2store sql --store store/ \"SELECT hamming, zone, count(*) AS n FROM corolles "
    "GROUP BY ALL ORDER BY ALL\"",
    "e2store sql --store store/ \"SELECT * FROM zone_stats\" --csv > zone_stats.csv",
    "e2store sql --store store/ --seconds 600 --memory-limit 16G \"SELECT zone, "
    "count(DISTINCT s0) FROM corolles GROUP BY zone\"",
    "e2store sql --boards runs/ \"SELECT arm, max(score) AS best, count(*) AS boards "
    "FROM boards GROUP BY arm\"",
])
@store_option(required=False, help="Corolle store directory: the views corolles, stems, "
              "manifest, zone_stats, instances.")
@click.option("--boards", "boards", default=None, metavar="DIR",
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A boards dataset (`e2store best -o DIR`) instead of a store: the view "
              "`boards` over its files (each checked first, no copy of their rows), every "
              "row with its `arm`.")
@click.argument("query")
@json_option("One JSON object per row on stdout.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV with a header line on stdout.")
@memory_limit_option("Memory the query may use: DuckDB's memory limit, and a cap on the "
                     "process of this much above what it holds when the query starts "
                     "(plus a quarter, and 512 MiB for Python).")
@click.option("--seconds", type=FiniteFloat(0, MAX_SECONDS), default=QUERY_SECONDS,
              show_default=True, metavar="S", help="Time limit of the query (0: none).")
def sql(store: Path | None, query: str, as_json: bool, as_csv: bool, memory_limit: int,
        seconds: float, boards: Path | None = None) -> None:
    """Run SQL over a store's views, or over a boards dataset's rows (--boards).

    A store's views: corolles, stems, manifest, zone_stats, instances.  A boards
    dataset's view `boards` (docs/queries.md): its files' columns (c0.., depth, score,
    ..., found, url, kept, key) and `arm`, a view over the files checked before the query
    (a damaged part is one error line naming it), never a copy of their rows.  One
    source at a time: --store and --boards together are refused.

    Rows are streamed batch by batch (any result size); NULL prints as NULL (null in
    JSON, an empty field in CSV).  In the table the first batch sets the column widths.

    A query past its time or memory limit stops with one error line (exit 2; raise the
    limit with --seconds or --memory-limit); Ctrl-C stops it at once (exit 130).
    """
    os.environ.setdefault(*DUCKDB_ALLOCATOR_ENV)  # before duckdb starts (`_process_cap`)
    from e2store.query.limits import QueryLimitError

    if as_json and as_csv:
        raise click.UsageError("give at most one of --json and --csv")
    if (store is None) == (boards is None):
        raise click.UsageError("give --store DIR (a store's views) or --boards DIR (a boards "
                               "dataset's view `boards`)" + (", not both: run one query "
                               "per source" if store is not None else ""))
    source = store if store is not None else boards
    assert source is not None
    try:
        _sql(source, query, as_json, as_csv, memory_limit, seconds or None, boards is not None)
    except QueryLimitError as exc:
        if exc.kind == "interrupt":
            _interrupted()
        flag = {"time": "--seconds S (0: none)", "memory": "--memory-limit SIZE"}[exc.kind]
        raise QueryLimitError(f"{exc}; raise it with {flag}", exc.kind, exc.limit) from None
    except KeyboardInterrupt:
        _interrupted()
    except MemoryError:  # Python's side of the output, past the process cap
        raise QueryLimitError(f"{source}: out of memory under the cap of --memory-limit; "
                              f"raise it with --memory-limit SIZE", "memory",
                              memory_limit) from None


def _interrupted() -> None:
    """Ctrl-C: one line on stderr, exit 130 (a shell's code for SIGINT)."""
    click.echo("e2store: error: interrupted (Ctrl-C): the query was stopped", err=True)
    sys.exit(130)


def _sql(source: Path, query: str, as_json: bool, as_csv: bool, memory_limit: int,
         seconds: float | None, boards: bool = False) -> None:
    """`e2store sql`'s work, under the limits: the rows formatted as they stream; `boards`:
    `source` is a boards dataset, read and checked first."""
    from e2store.query.sql import sql_rows

    tables = None
    if boards:
        from e2store.boards import open_boards

        with open_boards(source) as h:  # the files checked, then a view over them
            tables = {"boards": h.arrow_dataset()}
    n = 0
    widths: list[int] | None = None
    with sql_rows(source, query, memory_limit, seconds, tables=tables) as (names, batches):
        if as_csv:
            click.echo(_csv_line(names), nl=False)
        for rows in batches:
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
    click.echo(f"wrote {shown_path(output)}")


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
    from e2store.errors import MissingInstanceError
    from e2store.query.regions import export_store_closures
    from e2store.store.read import store_instance

    try:
        instance = store_instance(store, instance)
    except MissingInstanceError as exc:
        raise click.UsageError(str(exc)) from None
    entries = export_store_closures(store, instance, hamming, [c for g in at for c in g],
                                    output, progress=lambda m: click.echo(m, err=True))
    click.echo(f"wrote {len(entries)} regions to {shown_path(output)}: "
               f"{sum(e['corolles'] for e in entries):,} corolles, "
               f"{sum(e['keys'] for e in entries):,} frontier keys")
