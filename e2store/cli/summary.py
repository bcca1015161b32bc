"""Store report commands: `e2store summary STORE [-o OUT.md] [--json OUT.json]`,
`e2store tables STORE -o DIR`, `e2store plot STORE -o DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.files import atomic_write_text
from e2store.instance.formats import read_instance
from e2store.reports.summary import format_markdown, summarize
from e2store.reports.tables import load_tables, write_tables
from e2store.store.layout import FORMS


def _instance_id(value: str) -> str:
    """An instance id, or the id of the instance in the piece file `value` when it exists."""
    path = Path(value)
    return read_instance(path).id if path.is_file() else value


@click.command("summary")
@click.argument("store", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", "md_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the Markdown report here (atomically).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the summary as JSON here (atomically).")
@click.option("--instance", "instances", multiple=True, metavar="ID|FILE",
              help="Only this instance (id, or a piece file whose id is used); repeatable.")
@click.option("--hamming", "hammings", multiple=True, type=click.IntRange(min=0),
              help="Only this hamming; repeatable.")
def summary(store: Path, md_out: Path | None, json_out: Path | None,
            instances: tuple[str, ...], hammings: tuple[int, ...]) -> None:
    """Summarise a store per instance and hamming: zones, corolles, bytes, nodes, time.

    Prints the Markdown report unless -o or --json is given.  Every chosen instance and
    hamming must be in the store.
    """
    ids = [_instance_id(v) for v in instances] or None
    result = summarize(store, ids, list(hammings) or None)
    text = format_markdown(result)
    if md_out is not None:
        atomic_write_text(md_out, text)
        click.echo(f"wrote {md_out}")
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(result, indent=1) + "\n")
        click.echo(f"wrote {json_out}")
    if md_out is None and json_out is None:
        click.echo(text, nl=False)


def _selection_options(f):
    f = click.option("--form", type=click.Choice(FORMS), default="flat", show_default=True,
                     help="Form whose rotation-0 partitions are read.")(f)
    f = click.option("--hamming", "hammings", multiple=True, type=click.IntRange(min=0),
                     help="Only this hamming; repeatable.")(f)
    f = click.option("--instance", "instances", multiple=True, metavar="ID|FILE",
                     help="Only this instance (id, or a piece file whose id is used); "
                     "repeatable.")(f)
    f = click.option("-o", "--out-dir", "out_dir", required=True,
                     type=click.Path(file_okay=False, path_type=Path),
                     help="Output directory (created if missing).")(f)
    return click.argument("store", type=click.Path(file_okay=False, path_type=Path))(f)


def _load(store: Path, instances: tuple[str, ...], hammings: tuple[int, ...], form: str):
    ids = [_instance_id(v) for v in instances] or None
    return load_tables(store, ids, list(hammings) or None, form)


@click.command("tables")
@_selection_options
def tables(store: Path, out_dir: Path, instances: tuple[str, ...], hammings: tuple[int, ...],
           form: str) -> None:
    """Write the statistics tables, laid out like the published study (CSV and Markdown).

    Per hamming h: corolles_h<h>, nodes_h<h>, seconds_h<h>, bytes_h<h> (bytes per corolle),
    each .csv and .md: a row per zone cell `x y` (canonical cell, north-west quadrant), a
    column per instance (board size).  Read from the manifest's rotation-0 partitions of
    --form.
    """
    written = write_tables(_load(store, instances, hammings, form), out_dir)
    click.echo(f"wrote {len(written)} files to {out_dir}")


@click.command("plot")
@_selection_options
def plot(store: Path, out_dir: Path, instances: tuple[str, ...], hammings: tuple[int, ...],
         form: str) -> None:
    """Plot how corolles, nodes and bytes per corolle grow with board size and hamming.

    Writes corolles.png, nodes.png and bytes.png (log-scale y) from the same tables as
    `e2store tables`.
    """
    from e2store.reports.plots import write_plots  # matplotlib is imported only here

    written = write_plots(_load(store, instances, hammings, form), out_dir)
    click.echo(f"wrote {', '.join(p.name for p in written)} to {out_dir}")


COMMANDS = [summary, tables, plot]
