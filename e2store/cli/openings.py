"""Openings commands: `e2store openings` and `e2store stage solve-gather` (the `--openings`
runs of `e2store solve` are e2store.solver.solve_with_openings, reported by `solve`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS,
    RAW_FORMS,
    Size,
    flatten_cells,
    hamming_option,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    note,
    output_option,
    read_json_file,
    store_option,
)


class _UnlistedArgument(click.Argument):
    """A positional argument kept for old command lines: not shown in the usage line."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        return []


@command("openings", legacy={"--cells": "--at", "--out": "--output"}, examples=[
    "e2store openings demo7.e2s --store store/ --hamming 2 --at 0,0 --at 6,6 "
    "--symmetry-break -o openings.parquet",
    "e2store solve demo7.e2s --openings openings.parquet --workers 2",
])
@instance_argument
@click.argument("more_cells", nargs=-1, cls=_UnlistedArgument)
@instance_options
@store_option(help="Corolle store holding the partitions of the chosen cells.")
@click.option("--at", "at", multiple=True, required=True, type=CELLS,
              help="Centres of the corolles to combine (repeatable), joined in this order.")
@hamming_option
@output_option("Openings file to write: Parquet, or Arrow IPC if FILE ends in .arrow.",
               required=True)
@click.option("--symmetry-break", "symmetry_break", is_flag=True,
              help="Keep only openings with the lowest corner piece where the solver fixes "
              "it ((0,0) must be covered): their totals are the symmetry-broken counts.")
@click.option("--form", type=click.Choice(RAW_FORMS), default="flat", show_default=True,
              help="Store form to read the corolles from.")
@click.option("--distinct", is_flag=True,
              help="Write the distinct openings (identical pieces interchangeable, symmetric "
              "rotations merged), each with the raw openings it stands for (column "
              "multiplicity).")
@json_option("Print the summary as one JSON object on stdout.")
def openings_cmd(instance: Path, more_cells: tuple[str, ...], fmt: str, sides: str | None,
                 size: Size | None, store: Path, at: tuple, hamming: int, output: Path,
                 symmetry_break: bool, form: str, as_json: bool, distinct: bool = False) -> None:
    """Write every consistent combination of corolles at the chosen cells as partial boards.

    Consistent: no piece twice, overlapping cells agree, touching sides match.  Each opening
    is the root of an independent subtree of the search (`e2store solve --openings`).
    """
    from e2store.query.openings import openings, write_openings

    if more_cells:
        note("cells as separate arguments after --at are deprecated: repeat --at X,Y")
        at += tuple(CELLS.convert(v, None, None) for v in more_cells)
    chosen = flatten_cells(at)
    assert chosen is not None  # CELLS takes no `all` (CELLS_OR_ALL does)
    inst = load_instance(instance, fmt, sides, size)
    op = openings(inst, store, chosen, hamming, symmetry_break=symmetry_break, form=form,
                  distinct=distinct)
    write_openings(output, op)
    if as_json:
        click.echo(json.dumps({**op.to_dict(), "out": str(output)}))
    else:
        raw = ("" if op.multiplicity is None
               else f" distinct (standing for {int(op.multiplicity.sum()):,} raw)")
        click.echo(f"{op.count:,} openings{raw} of {inst.name} ({inst.width}x{inst.height}) at "
                   f"{' '.join(f'{x},{y}' for x, y in chosen)}, hamming {hamming}"
                   f"{', symmetry broken' if symmetry_break else ''}: {len(op.covered)} cells "
                   f"each, written to {output} ({op.seconds:.2f} s)")


def _check_report(doc: Any) -> None:
    """A shard report's keys and numbers (`merge_reports` sums them): KeyError, TypeError
    or ValueError otherwise."""
    if not isinstance(doc, dict):
        raise TypeError(f"a JSON {type(doc).__name__}, not an object")
    for k in ("openings", "solutions", "nodes", "openings_with_solutions"):
        int(doc[k])
    float(doc["seconds"])
    doc["complete"], doc["instance"], doc["width"], doc["height"]
    if doc.get("shard"):
        k, s = doc["shard"]
        int(k), int(s)


@command("solve-gather", legacy={"--out": "--output"}, examples=[
    "e2store stage solve-gather shards/shard-*.json -o solve.json",
])
@click.argument("reports", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@output_option("Write the merged report as JSON to this file (atomically).")
@json_option("Print the merged report as JSON on stdout.")
def solve_gather(reports: tuple[Path, ...], output: Path | None, as_json: bool) -> None:
    """Sum the `solve --openings --shard K/S --json` reports of all S shards into one."""
    from e2store.files import atomic_write_text
    from e2store.solver.parallel import merge_reports

    made_by = "a report of `e2store solve --openings --shard K/S --json`"
    docs = [read_json_file(p, "report", made_by, _check_report) for p in reports]
    merged = merge_reports(docs)
    text = json.dumps(merged)
    if output is not None:
        atomic_write_text(output, text + "\n")
    if as_json:
        click.echo(text)
    else:
        click.echo(f"{merged['solutions']:,} solutions over {merged['openings']:,} openings "
                   f"in {merged['shards']} shards" + (f", written to {output}" if output else ""))
