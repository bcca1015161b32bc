"""Query commands: `e2store sql`, `e2store build-db`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from e2store.query.handle import connect

_STORE = click.argument("store_root", metavar="STORE",
                        type=click.Path(file_okay=False, path_type=Path))


@click.command("sql")
@_STORE
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per row.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV with a header line.")
def sql(store_root: Path, query: str, as_json: bool, as_csv: bool) -> None:
    """Run SQL over a store's views: corolles, stems, manifest, zone_stats, instances."""
    if as_json and as_csv:
        raise click.UsageError("give at most one of --json and --csv")
    with connect(store_root) as st:
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


@click.command("build-db")
@_STORE
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="DuckDB database file to write (atomically).")
def build_db(store_root: Path, output: Path) -> None:
    """Write a DuckDB file: manifest, zone_stats and instances tables, corolles and stems
    views over the store's Parquet files."""
    with connect(store_root) as st:
        st.write_database(output)
    click.echo(f"wrote {output}")


COMMANDS = [sql, build_db]
