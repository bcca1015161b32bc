"""Openings commands: `e2store openings` and the `--openings` runs of `e2store solve`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.instance import Size, _instance_arg, instance_options, load_instance
from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.solver.openings import openings, parse_cell, read_openings, write_openings
from e2store.solver.parallel import OpeningsResult, merge_reports, solve_openings
from e2store.solver.solutions import write_solutions
from e2store.store.layout import FORMS


@click.command("openings")
@_instance_arg
@click.argument("more_cells", nargs=-1, metavar="")
@instance_options
@click.option("--store", "store_root", required=True, metavar="STORE",
              type=click.Path(file_okay=False, path_type=Path),
              help="Corolle store holding the partitions of the chosen cells.")
@click.option("--cells", "cells", multiple=True, required=True, metavar="X,Y [X,Y ...]",
              help="Centres of the corolles to combine, joined in this order.")
@click.option("--hamming", type=click.IntRange(min=0), required=True, help="Corolle radius h.")
@click.option("--out", "out", required=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path), help="Openings file (Parquet).")
@click.option("--symmetry-break", "symmetry_break", is_flag=True,
              help="Keep only openings with the lowest corner piece where the solver fixes "
              "it ((0,0) must be covered): their totals are the symmetry-broken counts.")
@click.option("--form", type=click.Choice(FORMS), default="flat", show_default=True,
              help="Store form to read the corolles from.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def openings_cmd(instance: Path, more_cells: tuple[str, ...], fmt: str, sides: str | None,
                 size: Size | None, store_root: Path, cells: tuple[str, ...], hamming: int,
                 out: Path, symmetry_break: bool, form: str, as_json: bool) -> None:
    """Write every consistent combination of corolles at the chosen cells (no piece twice,
    overlapping cells agree, touching sides match) as partial boards; print the count."""
    chosen = [parse_cell(c) for text in (*cells, *more_cells) for c in text.split()]
    inst = load_instance(instance, fmt, sides, size)
    op = openings(inst, store_root, chosen, hamming, symmetry_break=symmetry_break, form=form)
    write_openings(out, op)
    if as_json:
        click.echo(json.dumps({**op.to_dict(), "out": str(out)}))
    else:
        click.echo(f"{op.count:,} openings of {inst.name} ({inst.width}x{inst.height}) at "
                   f"{' '.join(f'{x},{y}' for x, y in chosen)}, hamming {hamming}"
                   f"{', symmetry broken' if symmetry_break else ''}: {len(op.covered)} cells "
                   f"each, written to {out} ({op.seconds:.2f} s)")


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'K/S' -> (K, S); SolverError otherwise."""
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise SolverError(f"bad shard {text!r} (expected K/S, e.g. 0/4)")
    k, s = int(parts[0]), int(parts[1])
    if not (s >= 1 and 0 <= k < s):
        raise SolverError(f"shard {text!r} (expected K/S with 0 <= K < S)")
    return k, s


def solve_with_openings(inst: Instance, path: Path, workers: int, scan: str, first: bool,
                        shard: str | None, save: Path | None, keep: int, as_json: bool,
                        finals=None, kernel: str = "auto") -> None:
    """`e2store solve --openings FILE`: solve the openings over processes, print a report."""
    ops = read_openings(path)
    res = solve_openings(inst, ops, workers=workers, scan=scan, first=first,
                         shard=parse_shard(shard), max_stored=keep, progress=True, finals=finals,
                         kernel=kernel)
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


def format_openings_report(r: OpeningsResult, inst_name: str, path: Path,
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
    for w in r.per_worker:
        lines.append(f"  worker {w['worker']}: {w['openings']:,} openings, "
                     f"{w['solutions']:,} solutions, {w['nodes']:,} nodes, "
                     f"{w['seconds']:.3f} s")
    if save is not None:
        lines.append(f"saved      {r.stored:,} solutions to {save}")
    return "\n".join(lines)


@click.command("solve-merge")
@click.argument("reports", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the merged JSON here (atomically) instead of printing it.")
def solve_merge_cmd(reports: tuple[Path, ...], out: Path | None) -> None:
    """Sum the `solve --openings --shard K/S --json` reports of all S shards into one."""
    from e2store.files import atomic_write_text

    merged = merge_reports([json.loads(p.read_text()) for p in reports])
    text = json.dumps(merged)
    if out is None:
        click.echo(text)
    else:
        atomic_write_text(out, text + "\n")
        click.echo(f"{merged['solutions']:,} solutions over {merged['openings']:,} openings "
                   f"in {merged['shards']} shards", err=True)


COMMANDS = [openings_cmd, solve_merge_cmd]
