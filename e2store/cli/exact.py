"""Exact-model commands: `e2store crosscheck` and `export-cnf` (docs/exact.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELL,
    CELLS_OR_ALL,
    HAMMING,
    MINUTES,
    SECONDS,
    BoundedInt,
    Size,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
)
from e2store.exact.check import COUNT_MODELS
from e2store.exact.crosscheck import CROSSCHECK_BREAKS, CROSSCHECK_MINUTES, CROSSCHECK_SECONDS


def _fixed(inst, value: str | None) -> dict | None:
    """The fixed cells of `--fixed` (e2store.solver.fixed_cells: the same bounded reader
    as `solve`'s), checked against the board by the exact model before anything runs."""
    if value is None:
        return None
    from e2store.exact.encode import check_fixed
    from e2store.solver.scan import fixed_cells

    fixed = fixed_cells(inst, value)
    check_fixed(inst, fixed or {})
    return fixed


def _report(checks: list, as_json: bool) -> None:
    """Print the checks (a note said for the check before is not said again: past the time
    limit every check left has the same); exit 1 when one disagrees."""
    said: list[str] = []
    for c in checks:
        if as_json:
            click.echo(json.dumps(c.as_dict()))
            continue
        models = ", ".join(f"{k} {'out of reach' if v is None else f'{v:,}'} "
                           f"({c.seconds[k]:.2f} s)" for k, v in c.models.items())
        exp = "?" if c.expected is None else f"{c.expected:,}"
        click.echo(f"{c.status:12} {c.what}: {c.source} {exp}; {models}")
        for n in c.notes:
            if n not in said:
                click.echo(f"{'':12}   {n}")
        said = c.notes
    bad = [c for c in checks if c.status == "disagree"]
    far = [c for c in checks if c.status == "out of reach"]
    if not as_json:
        click.echo(f"# {len(checks)} check{'s' * (len(checks) != 1)}: "
                   f"{len(checks) - len(bad) - len(far)} agree, "
                   f"{len(bad)} disagree, {len(far)} out of reach of the models")
    if bad:
        for c in bad:
            click.echo(f"e2store: crosscheck: {c.what}: {c.source} says {c.expected}, the "
                       f"models say {c.models}", err=True)
        sys.exit(1)


@command("crosscheck", examples=[
    "e2store crosscheck pieces_5x5.txt --hamming 2",
    "e2store crosscheck pieces_6x6.txt --hamming 1 --at 2,2 --model sql",
    "e2store crosscheck pieces_4x4.txt --solutions",
    "e2store crosscheck board5.e2s --best --minutes 0.5",
])
@instance_argument
@instance_options
@click.option("--hamming", type=HAMMING, default=None,
              help="Check corolle counts of this hamming (against `count`).")
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="With --hamming: cell(s) to check (repeatable), or 'all'; default every "
              "zone's canonical cell.")
@click.option("--model", "model", type=click.Choice(("both", *COUNT_MODELS)), default="both",
              show_default=True, help="With --hamming: the DuckDB join, ganak model counting "
              "over the region's CNF, or both.")
@click.option("--solutions", is_flag=True,
              help="Check the number of board solutions (SAT enumeration against "
              "`solve --all`).")
@click.option("--no-symmetry-break", "no_break", is_flag=True,
              help="With --solutions: count every solution (default: the lowest corner "
              "piece on (0,0), the convention of `solve`).")
@click.option("--fixed", "fixed_value", default=None, metavar="FILE|URL",
              help="With --solutions or --best: fixed cells (implies --no-symmetry-break).")
@click.option("--best", is_flag=True,
              help="Check the best score (matched joins): MaxSAT's optimum against "
              "`e2store best`.")
@click.option("--minutes", type=MINUTES, default=CROSSCHECK_MINUTES, show_default=True,
              help="With --best: the wall time of `e2store best` (inside --seconds).")
@click.option("--breaks", default=CROSSCHECK_BREAKS, show_default=True, metavar="NAME|D1,...",
              help="With --best: the break schedule of `e2store best`.")
@click.option("--expect", type=BoundedInt(0), default=None,
              help="Check the models against this number instead of e2store's kernels "
              "(a published figure, say).")
@click.option("--records", "records", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="With --hamming: record each agreeing count in this count-records "
              "directory (`tabulate --records`): the count tables and `serve` mark it "
              "crosschecked.")
@click.option("--seconds", type=SECONDS, default=CROSSCHECK_SECONDS, show_default=True,
              help="Time limit of the whole check: e2store's side, building the models and "
              "the model calls; past it the check is out of reach.")
@json_option("One JSON object per check on stdout.")
def crosscheck(instance: Path, fmt: str, sides: str | None, size: Size | None,
               hamming: int | None, at: tuple, model: str, solutions: bool, no_break: bool,
               fixed_value: str | None, best: bool, minutes: float, breaks: str,
               expect: int | None, seconds: float, as_json: bool,
               records: Path | None = None) -> None:
    """Recount with an independent exact model and compare: exit 1 on a disagreement.

    The models (docs/exact.md) share no code with e2store's kernels: a DuckDB join of
    per-cell candidate tables and ganak model counting for corolle counts, SAT (CaDiCaL)
    enumeration for solutions, MaxSAT (RC2) for the best score.  `--seconds` bounds the
    whole command: past it the checks not finished are out of reach (exit 0).
    """
    from e2store.errors import ExactInputError
    from e2store.exact.crosscheck import check_request
    from e2store.exact.crosscheck import crosscheck as run_checks
    from e2store.exact.models import Deadline

    deadline = Deadline(seconds, hint="raise --seconds")
    asked = [n for n, v in (("--hamming", hamming is not None), ("--solutions", solutions),
                            ("--best", best)) if v]
    if len(asked) != 1:
        raise ExactInputError("crosscheck checks one thing: give exactly one of --hamming, "
                              "--solutions, --best")
    _refuse_others(asked[0])
    if records is not None:
        if expect is not None:
            raise ExactInputError("--records keeps e2store's counts the models confirm: it "
                                  "takes no --expect")
        if records.exists() and not records.is_dir():
            raise ExactInputError(f"--records {records}: not a directory")
    if best and expect is None and minutes * 60 >= seconds:
        raise ExactInputError(f"--minutes {minutes:g} ({minutes * 60:g} s of `e2store best`) "
                              f"leaves no time of --seconds {seconds:g} for the MaxSAT model: "
                              f"raise --seconds or lower --minutes")
    kind = {"--hamming": "corolles", "--solutions": "solutions", "--best": "best"}[asked[0]]
    models = COUNT_MODELS if model == "both" else (model,)
    # the rest of the request (the exact extra installed): said before the instance is read
    check_request(kind, hamming=hamming, models=models, expect=expect, records=records,
                  minutes=minutes, seconds=deadline)
    inst = load_instance(instance, fmt, sides, size)
    checks = run_checks(inst, kind, hamming=hamming, at=at, models=models,
                        fixed=_fixed(inst, fixed_value), symmetry_break=not no_break,
                        minutes=minutes, breaks=breaks, expect=expect, seconds=deadline,
                        records=records)
    _report(checks, as_json)


# the options that belong to one kind of check, refused with another (never ignored)
_ONLY = {"at": ("--at", "--hamming"), "model": ("--model", "--hamming"),
         "records": ("--records", "--hamming"),
         "no_break": ("--no-symmetry-break", "--solutions"),
         "fixed_value": ("--fixed", "--solutions or --best"),
         "minutes": ("--minutes", "--best"), "breaks": ("--breaks", "--best")}


def _refuse_others(asked: str) -> None:
    """Refuse, before anything runs, an option given for another kind of check than the
    one asked (--records without --hamming, --minutes without --best, ...)."""
    from e2store.errors import ExactInputError

    ctx = click.get_current_context()
    given = [flag for key, (flag, needs) in _ONLY.items()
             if asked not in needs.split(" or ")
             and ctx.get_parameter_source(key) is not click.core.ParameterSource.DEFAULT]
    if given:
        needs = sorted({_ONLY[k][1] for k, (f, _n) in _ONLY.items() if f in given})
        raise ExactInputError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} "
                              f"for {' / '.join(needs)}, not {asked}")


@command("export-cnf", examples=[
    "e2store export-cnf pieces_4x4.txt -o board4.cnf",
    "e2store export-cnf pieces_7x7.txt --region 3,3 --hamming 2 -o corolles.cnf",
])
@instance_argument
@instance_options
@click.option("--region", type=CELL, default=None,
              help="Export the corolles of the cell X,Y (with --hamming) instead of the board.")
@click.option("--hamming", type=HAMMING, default=1, show_default=True,
              help="With --region: the corolle radius.")
@click.option("--fixed", "fixed_value", default=None, metavar="FILE|URL",
              help="Whole board: fixed cells as unit clauses.")
@click.option("--symmetry-break", "sym", is_flag=True,
              help="Whole board: the lowest corner piece on (0,0), as `solve` counts.")
@click.option("--soft", is_flag=True,
              help="Whole board, as weighted MaxSAT (WCNF): joins may mismatch, one soft "
              "clause per join (maximise matched joins).")
@output_option("The DIMACS file to write.", required=True)
def export_cnf(instance: Path, fmt: str, sides: str | None, size: Size | None,
               region: tuple[int, int] | None, hamming: int, fixed_value: str | None, sym: bool,
               soft: bool, output: Path) -> None:
    """Write the DIMACS CNF of a board (solutions) or of a corolle region (its models are
    the corolles), the variables' meanings in comment lines."""
    from e2store.errors import ExactInputError
    from e2store.exact.check import export_cnf as write_cnf
    from e2store.solver.scan import fixed_cells

    ctx = click.get_current_context()
    if region is None and ctx.get_parameter_source("hamming") is not \
            click.core.ParameterSource.DEFAULT:
        raise ExactInputError("--hamming is the radius of --region X,Y: give both")
    if region is not None and (fixed_value or sym or soft):
        raise ExactInputError("--region takes no --fixed, --symmetry-break or --soft "
                              "(they are whole-board options)")
    inst = load_instance(instance, fmt, sides, size)
    cnf = write_cnf(inst, output, region=region, hamming=hamming, soft=soft,
                    fixed=None if region is not None else fixed_cells(inst, fixed_value),
                    symmetry_break=sym)
    click.echo(f"{output}: {cnf.n_vars:,} variables, {len(cnf.clauses):,} clauses"
               + (f", {len(cnf.soft):,} soft" if soft else ""))


