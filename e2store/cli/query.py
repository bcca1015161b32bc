"""Query commands: `e2store sql`, `e2store build-db`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import json_option, output_option, store_option


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
    """Run SQL over a store's views: corolles, stems, manifest, zone_stats, instances."""
    from e2store.query.handle import connect

    if as_json and as_csv:
        raise click.UsageError("give at most one of --json and --csv")
    with connect(store) as st:
        table = st.sql(query)
    rows = table.to_pylist()
    names = table.column_names
    if as_json:
        for r in rows:
            click.echo(json.dumps(r, default=str))
    elif as_csv:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        w.writerows([[r[n] for n in names] for r in rows])
        click.echo(buf.getvalue(), nl=False)
    else:
        cells = [[str(r[n]) for n in names] for r in rows]
        widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
        click.echo("  ".join(n.rjust(w) for n, w in zip(names, widths, strict=True)))
        for c in cells:
            click.echo("  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)))
        click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")


@command("build-db", legacy_store_positional=True, examples=[
    "e2store build-db --store store/ -o corolles.duckdb",
])
@store_option
@output_option("DuckDB database file to write (atomically).", required=True)
def build_db(store: Path, output: Path) -> None:
    """Write a DuckDB file of a store: its tables, and views over its Parquet files.

    Tables manifest, zone_stats and instances; views corolles and stems.
    """
    from e2store.query.handle import connect

    with connect(store) as st:
        st.write_database(output)
    click.echo(f"wrote {output}")
