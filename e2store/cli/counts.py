"""Count-table commands: `e2store tabulate`, `count-estimate`, and the pipeline steps
`e2store stage count-plan`, `stage count-shard`, `stage count-gather`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELL,
    CELLS_OR_ALL,
    COUNT,
    DEFAULT_SAMPLES,
    DEFAULT_TAIL,
    HAMMING,
    MAX_SHARDS,
    SEED,
    SHARD,
    BoundedInt,
    FiniteFloat,
    Size,
    hamming_option,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
    read_json_file,
    records_option,
    status_option,
    threads_option,
)
from e2store.counts.runs import (
    DEFAULT_MAX_SHARDS,
    DEFAULT_SHARD_STEMS,
    check_count_plan,
    check_estimates,
)


def _read_plan(path: Path) -> dict:
    """A count plan written by `e2store stage count-plan`."""
    return read_json_file(path, "plan", "a count plan of `e2store stage count-plan`",
                          check_count_plan)


def _read_estimates(path: Path) -> list[dict]:
    """The rows of an estimates file of `e2store count-estimate -o`."""
    return read_json_file(path, "estimates",
                          "an estimates file of `e2store count-estimate -o`", check_estimates)


_max_stems_option = click.option(
    "--max-stems", type=FiniteFloat(min=1), default=None, metavar="N",
    help="Leave out (uncounted) every zone with more than N stems (hamming h-1 corolles, "
         "counted first); e.g. 2e9. Default: count every zone.")


@command("tabulate", legacy={"--out": "--records", "--tables": "--output"}, examples=[
    "e2store tabulate pieces_4x4.txt pieces_5x5.txt --hamming 1 --hamming 2 "
    "--records records/ -o tables/",
    "e2store tabulate pieces_7x7.txt --hamming 3 --max-stems 2e9 --records records/ "
    "--threads 2 --json",
    "e2store tabulate clue1_jwortmann.txt --hamming 1 --distinct --records records/ -o tables/",
])
@click.argument("instances", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@instance_options
@hamming_option(multiple=True)
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="Cells to count (repeatable); default: every zone's canonical cell.")
@records_option()
@click.option("--shard-stems", type=COUNT, default=DEFAULT_SHARD_STEMS,
              show_default=True,
              help="Aim for about this many stems (hamming h-1 corolles) per shard.")
@click.option("--max-shards", type=BoundedInt(1, MAX_SHARDS), default=DEFAULT_MAX_SHARDS,
              show_default=True,
              help="At most this many shards per zone.")
@_max_stems_option
@output_option("Also write the tables corolles_h<h> and seconds_h<h> (.csv, .md) in this "
               "directory.", directory=True)
@click.option("--distinct", is_flag=True,
              help="Count the distinct corolles (identical pieces interchangeable, symmetric "
              "rotations merged) by walking them, with the raw count they stand for; tables "
              "distinct_h<h>, distinct_raw_h<h>, distinct_seconds_h<h>.")
@threads_option
@json_option("One JSON object per zone on stdout.")
@status_option("tabulate")
def tabulate(instances: tuple[Path, ...], fmt: str, sides: str | None, size: Size | None,
             hammings: tuple[int, ...], at: tuple, records: Path, shard_stems: int,
             max_shards: int, max_stems: float | None, output: Path | None, threads: int,
             as_json: bool, distinct: bool = False) -> None:
    """Exact corolle counts of every zone of every board: the count tables.

    Counted shard by shard with the best method of the hamming (arms at hamming 3, else
    factorised: the same counts as `e2store count`); each shard leaves a record under
    --records, so a rerun resumes where the last one stopped.  --distinct walks the
    distinct corolles instead (`e2store count --distinct`).
    """
    from e2store.counts.runs import tabulate_zones, tabulated_tables
    from e2store.reports.tables import write_tables

    loaded = [(p, load_instance(p, fmt, sides, size)) for p in instances]
    done = []
    if not as_json:
        click.echo(f"{'board':<22} {'h':>2} {'x':>3} {'y':>3} {'corolles':>28} "
                   f"{'shards':>6} {'seconds':>10}")
    for t in tabulate_zones(records, loaded, hammings, at, shard_stems, max_shards, max_stems,
                            threads=threads, distinct=distinct, progress=True):
        done.append(t)
        x, y, h, z = t.plan["x"], t.plan["y"], t.hamming, t.count
        if as_json:
            click.echo(json.dumps(t.to_dict(distinct)))
        elif z is None:
            click.echo(f"{t.name:<22} {h:>2} {x:>3} {y:>3} "
                       f"{'left out: ' + format(t.plan['stems'], '.2e') + ' stems':>28}")
        else:
            shown = f"{z.corolles:,} ({z.raw:,} raw)" if distinct else f"{z.corolles:,}"
            click.echo(f"{t.name:<22} {h:>2} {x:>3} {y:>3} {shown:>28} "
                       f"{t.plan['shards']:>6} {z.seconds:>10.2f}")
    if output is not None:
        write_tables(tabulated_tables(records, loaded, hammings, done, distinct=distinct),
                     output)


@command("count-shard", legacy={"--out": "--records"}, examples=[
    "e2store stage count-shard pieces_7x7.txt --hamming 3 --at 2,1 --shard 0/8 "
    "--records records/ --json",
])
@instance_argument
@instance_options
@hamming_option
@click.option("--at", "at", required=True, type=CELL, help="The zone's cell.")
@click.option("--shard", "shard", required=True, type=SHARD,
              help="Shard K of S (0-based) of the zone's stem prefixes.")
@records_option()
@threads_option
@json_option("Print the shard's result as JSON on stdout (the pipeline's receipt).")
def count_shard_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None,
                    hamming: int, at: tuple[int, int], shard: tuple[int, int], records: Path,
                    threads: int, as_json: bool) -> None:
    """Count one shard of one zone and write its record (skipped when already there)."""
    from e2store.counts.runs import shard_receipt

    inst = load_instance(instance, fmt, sides, size)
    k, s = shard
    line = shard_receipt(records, inst, at, hamming, k, s, threads=threads, progress=True)
    click.echo(json.dumps(line) if as_json else
               f"({line['x']},{line['y']}) h={hamming} shard {k}/{s}: {line['corolles']:,} "
               f"corolles{' (record already there)' if line['resumed'] else ''}")


@command("count-plan", examples=[
    "e2store stage count-plan pieces_7x7.txt --hamming 3 --max-stems 2e9 -o plan.json",
])
@instance_argument
@instance_options
@hamming_option
@click.option("--shard-stems", type=COUNT, default=DEFAULT_SHARD_STEMS,
              show_default=True, help="Aim for about this many stems per shard.")
@click.option("--max-shards", type=BoundedInt(1, MAX_SHARDS), default=DEFAULT_MAX_SHARDS,
              show_default=True,
              help="At most this many shards per zone.")
@_max_stems_option
@output_option("JSON plan: every zone's cell, stems and shard count (0: left out).",
               required=True)
def count_plan(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
               shard_stems: int, max_shards: int, max_stems: float | None,
               output: Path) -> None:
    """Plan a count table: the zones of the board and the shards of each."""
    from e2store.counts.runs import count_plan
    from e2store.files import atomic_write_text

    inst = load_instance(instance, fmt, sides, size)
    doc = count_plan(inst, hamming, (), shard_stems, max_shards, max_stems)
    atomic_write_text(output, json.dumps(doc, indent=1) + "\n")


@command("count-gather", legacy={"--out": "--records"}, examples=[
    "e2store stage count-gather pieces_4x4.txt pieces_5x5.txt --hamming 2 --records records/ "
    "--plan plan4.json --plan plan5.json --require -o tables/",
])
@click.argument("instances", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@instance_options
@hamming_option(multiple=True)
@records_option()
@click.option("--plan", "plans", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Count plan(s) of `e2store stage count-plan` (repeatable): the zones they "
                   "leave out (0 shards) show as uncounted with their stems, and --require "
                   "spares them.")
@click.option("--estimates", "estimates", multiple=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Estimates of `e2store count-estimate -o` (repeatable): a zone a --plan "
                   "leaves out shows its estimate.")
@click.option("--require", is_flag=True,
              help="Fail unless every zone of every board (but those a --plan leaves out) has "
                   "a complete set of shard records.")
@output_option("Directory of the tables.", required=True, directory=True)
def count_gather(instances: tuple[Path, ...], fmt: str, sides: str | None,
                 size: Size | None, hammings: tuple[int, ...], records: Path,
                 plans: tuple[Path, ...], estimates: tuple[Path, ...], require: bool,
                 output: Path) -> None:
    """Sum the shard records into corolles_h<h> and seconds_h<h> tables (.csv, .md)."""
    from e2store.counts.runs import gathered_tables
    from e2store.reports.tables import write_tables

    loaded = [(p, load_instance(p, fmt, sides, size)) for p in instances]
    tables = gathered_tables(records, loaded, hammings, [_read_plan(p) for p in plans],
                             [e for p in estimates for e in _read_estimates(p)], require)
    for p in write_tables(tables, output):
        click.echo(str(p))


@command("count-estimate", examples=[
    "e2store count-estimate pieces_9x9.txt --hamming 3 --at 4,4 --samples 1e7",
    "e2store count-estimate pieces_9x9.txt --hamming 3 --plan plan.json -o estimates.json",
])
@instance_argument
@instance_options
@hamming_option
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="Cells to estimate (repeatable); default: every zone's canonical cell.")
@click.option("--samples", type=FiniteFloat(min=1), default=DEFAULT_SAMPLES,
              show_default=True, help="Random paths per cell (e.g. 1e8); the standard error "
              "falls as 1/sqrt(samples).")
@click.option("--tail", type=HAMMING, default=DEFAULT_TAIL, show_default=True,
              help="Stem levels counted exactly below each path.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--plan", "plan", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Estimate the zones this count plan (`e2store stage count-plan`) leaves "
                   "out (0 shards) instead of --at cells.")
@threads_option
@json_option("One JSON object per cell on stdout.")
@output_option("Also write the estimates as a JSON list to this file (atomically).")
def count_estimate(instance: Path, fmt: str, sides: str | None, size: Size | None,
                   hamming: int, at: tuple, samples: float, tail: int, seed: int,
                   plan: Path | None, threads: int, as_json: bool,
                   output: Path | None) -> None:
    """Estimated corolle counts with standard errors, for zones exact counting cannot reach.

    Random paths down the stem walk (e2store.corolles.sampling); exact when the sample
    would cover every path.
    """
    from e2store.counts.runs import estimate_cells, plan_cells
    from e2store.files import atomic_write_text
    from e2store.zones.cells import board_cells

    inst = load_instance(instance, fmt, sides, size)
    if plan is not None and at:
        raise click.UsageError("give --plan or --at cells, not both")
    cells = board_cells(inst.width, inst.height, hamming, at)
    if plan is not None:
        try:
            cells = plan_cells(_read_plan(plan), inst, hamming)
        except ValueError as exc:
            raise click.BadParameter(f"{plan}: {exc}") from None
    rows = []
    if not as_json:
        click.echo(f"{'x':>3} {'y':>3} {'corolles':>26} {'rel. error':>10} {'samples':>12} "
                   f"{'seconds':>9}")
    for e, row in estimate_cells(inst, hamming, cells, samples=samples, tail=tail, seed=seed,
                                 threads=threads, progress=True):
        rows.append(row)
        if as_json:
            click.echo(json.dumps(row))
        else:
            value = f"{e.corolles:,}" if e.exact else f"~{e.corolles:.6e}"
            err = ("exact" if e.exact else "no hit" if not e.corolles else
                   f"{100 * e.rel_error:.3f}%")  # no sampled path completed: raise samples
            click.echo(f"{e.x:>3} {e.y:>3} {value:>26} {err:>10} {e.samples:>12,} "
                       f"{e.seconds:>9.2f}")
    if output is not None:
        atomic_write_text(output, json.dumps(rows, indent=1) + "\n")
