"""Openings commands: `e2store openings`, the `--openings` runs of `e2store solve`, and
`e2store stage solve-gather`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS,
    FORMS,
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
@click.option("--form", type=click.Choice(FORMS), default="flat", show_default=True,
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
    from e2store.solver.openings import openings, write_openings

    chosen = flatten_cells(at)
    if more_cells:
        note("cells as separate arguments after --at are deprecated: repeat --at X,Y")
        chosen += [c for v in more_cells for c in CELLS.convert(v, None, None)]
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


def solve_with_openings(inst, path: Path, workers: int, scan: str, first: bool,
                        shard: tuple[int, int] | None, save: Path | None, keep: int,
                        as_json: bool, finals=None, kernel: str = "auto",
                        closure=None) -> None:
    """`e2store solve --openings FILE`: solve the openings over processes, print a report."""
    from e2store.solver.openings import read_openings
    from e2store.solver.parallel import solve_openings
    from e2store.solver.solutions import write_solutions

    ops = read_openings(path)
    res = solve_openings(inst, ops, workers=workers, scan=scan, first=first,
                         shard=shard, max_stored=keep, progress=True, finals=finals,
                         kernel=kernel, closure=closure)
    if save is not None:
        write_solutions(save, res.boards, inst, res.scan)
    if as_json:
        d = {**res.to_dict(), "openings_file": str(path)}
        if save is not None:
            d["saved"] = str(save)
        click.echo(json.dumps(d))
    else:
        click.echo(format_openings_report(res, inst.name, path, save))
    if res.solutions > res.stored and save is not None:
        click.echo(f"e2store: warning: {res.solutions} solutions found, {res.stored} saved "
                   f"(raise --keep to save more)", err=True)


def closure_line(c: dict) -> str:
    """The report line of a block closure table (`closure` of a JSON report)."""
    if not c.get("used"):
        return f"closure    not used: {c.get('reason')}"
    origin = (f"built in {c['build_seconds']:.1f} s" if c.get("built")
              else "read from the store")
    return (f"closure    {c['block'][0]}x{c['block'][1]} block below row {c['row']}: "
            f"{c['probes']:,} probes, {c['cuts']:,} cuts, {c.get('memo_cuts', 0):,} row "
            f"memo cuts; table "
            f"{c['table_bytes'] / 2**20:,.0f} MiB ({origin})")


def format_openings_report(r, inst_name: str, path: Path,
                           save: Path | None = None) -> str:
    state = ("complete" if r.complete and not r.first_only else
             "stopped at the first solution" if r.complete else "incomplete")
    lines = [
        f"instance   {inst_name} ({r.width}x{r.height}), scan {r.scan}",
        f"openings   {r.openings:,} from {path}"
        + (f" (shard {r.shard[0]}/{r.shard[1]})" if r.shard else "")
        + f", symmetry {'broken' if r.symmetry_break else 'none (every solution counted)'}",
        f"solutions  {r.solutions:,} ({state})",
        f"nodes      {r.nodes:,} in {r.seconds:.3f} s ({r.nodes_per_second / 1e6:,.1f} M "
        f"nodes/s) over {r.workers} worker{'s' if r.workers > 1 else ''}",
    ]
    if r.closure is not None:
        lines.append(closure_line(r.closure))
    for w in r.per_worker:
        lines.append(f"  worker {w['worker']}: {w['openings']:,} openings, "
                     f"{w['solutions']:,} solutions, {w['nodes']:,} nodes, "
                     f"{w['seconds']:.3f} s")
    if save is not None:
        lines.append(f"saved      {r.stored:,} solutions to {save}")
    return "\n".join(lines)


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
