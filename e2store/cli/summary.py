"""Store report commands: `e2store summary --store DIR [-o OUT.md] [-o OUT.json] [--json]`,
`e2store verify --store DIR [--json]`, `e2store tables --store DIR -o DIR`,
`e2store plot --store DIR -o DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    HAMMING,
    RAW_FORMS,
    IntsType,
    json_option,
    output_option,
    store_option,
)
from e2store.instance.formats import instance_ids
from e2store.instance.parsing import shown_path


def _selection_options(f):
    f = click.option("--hamming", "hammings", multiple=True, type=HAMMING,
                     metavar="H", help="Only this hamming; repeatable.")(f)
    f = click.option("--instance", "instances", multiple=True, metavar="ID|FILE",
                     help="Only this instance (id, or a piece file whose id is used); "
                     "repeatable.")(f)
    return f


@command("summary", legacy_store_positional=True, legacy_json_file=True, examples=[
    "e2store summary --store store/",
    "e2store summary --store store/ --instance demo7.e2s --hamming 2 -o summary.md "
    "-o summary.json",
    "e2store summary --store store/ --json",
    "e2store summary --boards best/ -o report.md",
])
@store_option(required=False, help="Corolle store directory (or --boards).")
@click.option("--boards", type=click.Path(exists=True, path_type=Path), default=None,
              metavar="FILE|DIR", help="Summarise a best-score run instead: a boards file or "
              "dataset (`e2store best -o`), per arm its restarts, rate, depths and filled "
              "scores with confidence intervals, the arms compared, the tail's core-hours "
              "(docs/campaigns.md); -o FILE.md writes its plots beside it.  A dataset's "
              "compacted files are read as checked when compacted (their per-restart "
              "columns' page checksums and metadata verified), its parts checked in full.")
@click.option("--depths", type=IntsType(), default=None,
              help="With --boards: the depths whose reach the report counts (default: the "
              "board's cells - 8, - 7, - 6: 248, 249, 250 on 16x16).")
@click.option("--targets", type=IntsType(), default=None,
              help="With --boards: the scores the tail's core-hours are for (default: the "
              "board's joins - 14, - 13, - 12: 466, 467, 468 on 16x16; e.g. 459,460,461 "
              "with Eternity II's five clues).")
@output_option("Write the summary to this file (atomically): JSON if FILE ends in .json, "
               "else Markdown; repeatable.", multiple=True)
@json_option("Print the summary as JSON on stdout.")
@_selection_options
def summary(store: Path | None, output: tuple[Path, ...], as_json: bool,
            instances: tuple[str, ...], hammings: tuple[int, ...],
            boards: Path | None = None, depths: tuple[int, ...] | None = None,
            targets: tuple[int, ...] | None = None) -> None:
    """Summarise a store per instance and hamming: zones, corolles, bytes, nodes, time;
    or, with --boards, a best-score run or campaign, arm by arm.

    Prints the Markdown report unless -o or --json is given.  Every chosen instance and
    hamming must be in the store.
    """
    from e2store.reports.summary import format_markdown, summarize, write_summary

    if boards is not None:
        _boards_summary(boards, store, output, as_json, bool(instances or hammings),
                        depths, targets)
        return
    if depths or targets:
        raise click.UsageError("--depths and --targets go with --boards")
    if store is None:
        raise click.UsageError("give --store DIR (or --boards FILE|DIR)")
    result = summarize(store, instance_ids(instances), list(hammings) or None)
    for path in output:
        write_summary(path, result)
        if not as_json:
            click.echo(f"wrote {shown_path(path)}")
    if as_json:
        click.echo(json.dumps(result))
    elif not output:
        click.echo(format_markdown(result), nl=False)


def _boards_summary(boards: Path, store: Path | None, output: tuple[Path, ...],
                    as_json: bool, selected: bool, depths: tuple[int, ...] | None = None,
                    targets: tuple[int, ...] | None = None) -> None:
    """`summary --boards`: the campaign report of a boards file or dataset."""
    from e2store.boards import open_boards
    from e2store.campaign import campaign_markdown, campaign_report, tally_boards

    if store is not None or as_json or selected:
        raise click.UsageError("--boards takes no --store, --json, --instance or --hamming "
                               "(a boards file names its instance)")
    if any(p.suffix.lower() == ".json" for p in output):
        raise click.UsageError("--boards writes Markdown: -o FILE.md")
    with open_boards(boards) as h:  # compacted files as checked when compacted, parts now
        rows = tally_boards(h)  # a file at a time: memory of one file and the value counts
    for path in output:
        for written in campaign_report(rows, path, depths=depths, targets=targets):
            click.echo(f"wrote {shown_path(written)}")
    if not output:
        click.echo(campaign_markdown(rows, depths=depths, targets=targets), nl=False)


@command("verify", examples=[
    "e2store verify --store store/",
    "e2store verify --store store/ --instance demo7.e2s --hamming 2 --json",
    "e2store verify --store store/ --repair",
])
@store_option
@json_option("Print the report as JSON on stdout.")
@_selection_options
@click.option("--repair", is_flag=True,
              help="Rewrite what is damaged (re-enumerate its partitions, remove damaged "
              "closure tables, rewrite the manifest), then verify again.")
def verify(store: Path, as_json: bool, instances: tuple[str, ...],
           hammings: tuple[int, ...], repair: bool) -> None:
    """Re-hash every file of a store against its records and manifest.

    Checks each Parquet file's size, SHA-256, footer rows and partition metadata, each
    record's rows, the manifest's entries and checksum, and the stored closure tables.
    Exit 0 when everything holds; exit 1 with one line per damaged file (path, expected
    and found) and the command that rewrites its partition.  With --repair those rewrites
    are run and the store verified again: exit 0 when it then holds.
    """
    import sys

    from e2store.reports.checks import repair_commands, verify_and_repair

    report = verify_and_repair(store, instance_ids(instances), list(hammings) or None,
                               repair=repair, log=lambda line: click.echo(line, err=True))
    if as_json:
        click.echo(json.dumps(report.to_dict()))
    else:
        for d in report.damaged:
            click.echo(f"DAMAGED {d.line()}")
        for r in repair_commands(store, report):
            click.echo(f"repair: {r}")
        state = "ok" if report.ok else f"{len(report.damaged)} damaged"
        click.echo(f"verified {report.partitions:,} partitions, {report.files:,} files, "
                   f"{report.bytes:,} bytes, {report.closures} closure tables: {state}")
    if not report.ok:
        sys.exit(1)


@command("migrate", examples=["e2store migrate --store store/"])
@store_option
def migrate(store: Path) -> None:
    """Bring a store written by an older e2store to the current format version, in place.

    Version 1's layout is moved by renames; flat and distinct partitions of versions 1-2
    are rewritten without their frontier columns (docs/store-format.md).  A killed
    migration is finished by running it again.  A store already at the current version is
    left as it is.
    """
    from e2store.store.migrate import migrate_store

    lines = migrate_store(store)
    for line in lines:
        click.echo(f"migrated: {line}", err=True)
    click.echo(f"{store}: format version current" + ("" if lines else " (nothing to do)"))


def _load(store: Path, instances: tuple[str, ...], hammings: tuple[int, ...], form: str):
    from e2store.reports.tables import load_tables

    return load_tables(store, instance_ids(instances), list(hammings) or None, form)


def _table_options(f):
    f = click.option("--form", type=click.Choice(RAW_FORMS), default="flat", show_default=True,
                     help="Form whose rotation-0 partitions are read.")(f)
    f = _selection_options(f)
    f = output_option("Output directory (created if missing).", required=True,
                      directory=True)(f)
    return store_option(f)


@command("tables", legacy={"--out-dir": "--output"}, legacy_store_positional=True, examples=[
    "e2store tables --store store/ -o tables/",
    "e2store tables --store store/ --hamming 2 --form cartesian -o tables/",
])
@_table_options
def tables(store: Path, output: Path, instances: tuple[str, ...], hammings: tuple[int, ...],
           form: str) -> None:
    """Write the statistics tables, laid out like the published study (CSV and Markdown).

    Per hamming h: corolles_h<h>, nodes_h<h>, seconds_h<h>, bytes_h<h> (bytes per corolle),
    each .csv and .md: a row per zone cell `x y` (canonical cell, north-west quadrant), a
    column per instance (board size).  Read from the manifest's rotation-0 partitions of
    --form.
    """
    from e2store.reports.tables import write_tables

    written = write_tables(_load(store, instances, hammings, form), output)
    click.echo(f"wrote {len(written)} files to {shown_path(output)}")


@command("plot", legacy={"--out-dir": "--output"}, legacy_store_positional=True, examples=[
    "e2store plot --store store/ -o plots/",
])
@_table_options
def plot(store: Path, output: Path, instances: tuple[str, ...], hammings: tuple[int, ...],
         form: str) -> None:
    """Plot how corolles, nodes and bytes per corolle grow with board size and hamming.

    Writes corolles.png, nodes.png and bytes.png (log-scale y) from the same tables as
    `e2store tables`.
    """
    from e2store.reports.plots import write_plots  # matplotlib is imported only here

    written = write_plots(_load(store, instances, hammings, form), output)
    click.echo(f"wrote {', '.join(p.name for p in written)} to {shown_path(output)}")
