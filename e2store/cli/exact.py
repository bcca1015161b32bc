"""Exact-model commands: `e2store crosscheck` and `export-cnf` (docs/exact.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS_OR_ALL,
    Size,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
)

DEFAULT_SECONDS = 600.0


def _fixed(inst, value: str | None) -> dict | None:
    if value is None:
        return None
    from e2store.cli.solve import fixed_cells

    return fixed_cells(inst, value)


def _report(checks: list, as_json: bool) -> None:
    """Print the checks; exit 1 when one disagrees."""
    for c in checks:
        if as_json:
            click.echo(json.dumps(c.as_dict()))
            continue
        models = ", ".join(f"{k} {'out of reach' if v is None else f'{v:,}'} "
                           f"({c.seconds[k]:.2f} s)" for k, v in c.models.items())
        exp = "?" if c.expected is None else f"{c.expected:,}"
        click.echo(f"{c.status:12} {c.what}: {c.source} {exp}; {models}")
        for n in c.notes:
            click.echo(f"{'':12}   {n}")
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
@click.option("--hamming", type=click.IntRange(min=0), default=None,
              help="Check corolle counts of this hamming (against `count`).")
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="With --hamming: cell(s) to check (repeatable), or 'all'; default every "
              "zone's canonical cell.")
@click.option("--model", "model", type=click.Choice(("both", "sql", "count")), default="both",
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
              "`solve --best`.")
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=0.25,
              show_default=True, help="With --best: the wall time of `solve --best`.")
@click.option("--breaks", default="blackwood", show_default=True, metavar="NAME|D1,...",
              help="With --best: the break schedule of `solve --best`.")
@click.option("--expect", type=click.IntRange(min=0), default=None,
              help="Check the models against this number instead of e2store's kernels "
              "(a published figure, say).")
@click.option("--records", "records", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="With --hamming: record each agreeing count in this count-records "
              "directory (`tabulate --records`): the count tables and `serve` mark it "
              "crosschecked.")
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_SECONDS, show_default=True,
              help="Time limit of each model call; past it the check is out of reach.")
@json_option("One JSON object per check on stdout.")
def crosscheck(instance: Path, fmt: str, sides: str | None, size: Size | None,
               hamming: int | None, at: tuple, model: str, solutions: bool, no_break: bool,
               fixed_value: str | None, best: bool, minutes: float, breaks: str,
               expect: int | None, seconds: float, as_json: bool,
               records: Path | None = None) -> None:
    """Recount with an independent exact model and compare: exit 1 on a disagreement.

    The models (docs/exact.md) share no code with e2store's kernels: a DuckDB join of
    per-cell candidate tables and ganak model counting for corolle counts, SAT (CaDiCaL)
    enumeration for solutions, MaxSAT (RC2) for the best score.
    """
    from e2store.errors import ExactInputError

    asked = [n for n, v in (("--hamming", hamming is not None), ("--solutions", solutions),
                            ("--best", best)) if v]
    if len(asked) != 1:
        raise ExactInputError("crosscheck checks one thing: give exactly one of --hamming, "
                              "--solutions, --best")
    inst = load_instance(instance, fmt, sides, size)
    if hamming is not None:
        checks = _counts(inst, hamming, at, model, expect, seconds)
    elif solutions:
        checks = [_solutions(inst, fixed_value, no_break, expect, seconds)]
    else:
        checks = [_best(inst, fixed_value, minutes, breaks, expect, seconds)]
    if records is not None and hamming is None:
        raise ExactInputError("--records keeps corolle counts: it needs --hamming")
    if expect is not None:
        for c in checks:
            c.source = "expected"
    if records is not None and expect is None:
        from e2store.counts.shards import write_crosscheck

        for c in checks:
            if c.status == "agree":
                x, y = c.cell
                write_crosscheck(records, inst, x, y, hamming, c.expected, c.models, c.seconds)
    _report(checks, as_json)


def _counts(inst, hamming: int, at: tuple, model: str, expect, seconds: float) -> list:
    from e2store.cli.corolles import best_method, board_cells, count_cell
    from e2store.exact.check import COUNT_MODELS, check_count

    models = COUNT_MODELS if model == "both" else (model,)
    out = []
    for x, y in board_cells(inst.width, inst.height, hamming, at):
        if expect is None:
            expected = count_cell(inst, x, y, hamming, best_method(hamming), 1, False)[0]
        else:
            expected = expect
        out.append(check_count(inst, x, y, hamming, expected, models=models, seconds=seconds))
    return out


def _solutions(inst, fixed_value, no_break: bool, expect, seconds: float):
    from e2store.exact.check import check_solutions

    fixed = _fixed(inst, fixed_value)
    sym = not no_break and not fixed
    if expect is None:
        from e2store.solver.search import solve

        expected = solve(inst, "rowscan", symmetry_break=sym, seed=fixed).solutions
    else:
        expected = expect
    return check_solutions(inst, expected, fixed=fixed, symmetry_break=sym, seconds=seconds)


def _best(inst, fixed_value, minutes: float, breaks: str, expect, seconds: float):
    from e2store.exact.check import check_best

    fixed = _fixed(inst, fixed_value)
    if expect is None:
        from e2store.solver.best_run import run_best
        from e2store.solver.fill import fill_holes

        run = run_best(inst, fixed=fixed, breaks=breaks, seconds=minutes * 60)
        keep = [y * inst.width + x for x, y in (fixed or {})]
        found = max((fill_holes(inst, r.board, keep=keep).score for r in run.results),
                    default=0)
    else:
        found = expect
    check, _board = check_best(inst, found, fixed=fixed, seconds=seconds)
    return check


@command("export-cnf", examples=[
    "e2store export-cnf pieces_4x4.txt -o board4.cnf",
    "e2store export-cnf pieces_7x7.txt --region 3,3 --hamming 2 -o corolles.cnf",
])
@instance_argument
@instance_options
@click.option("--region", default=None, metavar="X,Y",
              help="Export the corolles of the cell X,Y (with --hamming) instead of the board.")
@click.option("--hamming", type=click.IntRange(min=0), default=1, show_default=True,
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
               region: str | None, hamming: int, fixed_value: str | None, sym: bool,
               soft: bool, output: Path) -> None:
    """Write the DIMACS CNF of a board (solutions) or of a corolle region (its models are
    the corolles), the variables' meanings in comment lines."""
    from e2store.errors import ExactInputError
    from e2store.exact.check import board_cnf
    from e2store.exact.encode import diamond, encode
    from e2store.files import atomic_write_text

    inst = load_instance(instance, fmt, sides, size)
    if region is not None:
        if fixed_value or sym or soft:
            raise ExactInputError("--region takes no --fixed, --symmetry-break or --soft "
                                  "(they are whole-board options)")
        try:
            x, y = (int(t) for t in region.split(","))
        except ValueError:
            raise ExactInputError(f"--region {region!r}: expected X,Y") from None
        cnf = encode(inst, diamond(inst.width, inst.height, x, y, hamming))
        cnf.notes.append(f"models: the corolles of hamming {hamming} at ({x},{y})")
    else:
        cnf = board_cnf(inst, fixed=_fixed(inst, fixed_value), symmetry_break=sym, soft=soft)
    text = cnf.wcnf() if soft else cnf.dimacs()
    atomic_write_text(Path(output), text)
    click.echo(f"{output}: {cnf.n_vars:,} variables, {len(cnf.clauses):,} clauses"
               + (f", {len(cnf.soft):,} soft" if soft else ""))


def solve_sat(inst, *, first: bool, symmetry_break: bool, fixed: dict | None, keep: int,
              seconds: float | None = None):
    """`solve --engine sat`: the solutions by SAT enumeration, as the backtracker's
    report (a `SolveResult`; nodes are not counted)."""
    import time

    import numpy as np

    from e2store.exact.check import board_cnf
    from e2store.exact.models import DEFAULT_SAT, run_model
    from e2store.solver.search import SolveResult

    t0 = time.perf_counter()
    cnf = board_cnf(inst, fixed=fixed, symmetry_break=symmetry_break)
    r = run_model("enumerate", cnf, seconds=seconds, limit=1 if first else None)
    w, h = inst.width, inst.height
    boards = np.array([[b[f"{x},{y}"] for y in range(h) for x in range(w)]
                       for b in r.solutions[:keep]], dtype=np.int16).reshape(-1, w * h)
    return SolveResult(inst.id, w, h, f"sat ({DEFAULT_SAT})", symmetry_break,
                       len(fixed or {}), first, solutions=r.count,
                       seconds=time.perf_counter() - t0, first_seconds=r.first_seconds,
                       complete=True, boards=boards)
