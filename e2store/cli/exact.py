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

DEFAULT_SECONDS = 600.0


def _fixed(inst, value: str | None) -> dict | None:
    """The fixed cells of `--fixed` (e2store.cli.solve.fixed_cells: the same bounded reader
    as `solve`'s), checked against the board by the exact model before anything runs."""
    if value is None:
        return None
    from e2store.cli.solve import fixed_cells
    from e2store.exact.encode import check_fixed

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
@click.option("--minutes", type=MINUTES, default=0.25, show_default=True,
              help="With --best: the wall time of `solve --best` (inside --seconds).")
@click.option("--breaks", default="blackwood", show_default=True, metavar="NAME|D1,...",
              help="With --best: the break schedule of `solve --best`.")
@click.option("--expect", type=BoundedInt(0), default=None,
              help="Check the models against this number instead of e2store's kernels "
              "(a published figure, say).")
@click.option("--records", "records", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="With --hamming: record each agreeing count in this count-records "
              "directory (`tabulate --records`): the count tables and `serve` mark it "
              "crosschecked.")
@click.option("--seconds", type=SECONDS, default=DEFAULT_SECONDS, show_default=True,
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
    from e2store.exact.models import Deadline, require

    deadline = Deadline(seconds)
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
        raise ExactInputError(f"--minutes {minutes:g} ({minutes * 60:g} s of `solve --best`) "
                              f"leaves no time of --seconds {seconds:g} for the MaxSAT model: "
                              f"raise --seconds or lower --minutes")
    for kind in (["count"] if hamming is not None and model != "sql" else []) + \
            (["enumerate"] if solutions else []) + (["optimum"] if best else []):
        require(kind)  # the exact extra missing: said now, not after e2store's side ran
    inst = load_instance(instance, fmt, sides, size)
    if hamming is not None:
        checks = _counts(inst, hamming, at, model, expect, deadline)
    elif solutions:
        checks = [_solutions(inst, fixed_value, no_break, expect, deadline)]
    else:
        checks = [_best(inst, fixed_value, minutes, breaks, expect, deadline)]
    if expect is not None:
        for c in checks:
            c.source = "expected"
    if records is not None:
        from e2store.counts.shards import write_crosscheck

        for c in checks:
            if c.status == "agree":
                x, y = c.cell
                write_crosscheck(records, inst, x, y, hamming, c.expected, c.models, c.seconds)
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


def _counts(inst, hamming: int, at: tuple, model: str, expect, deadline) -> list:
    """The corolle checks of the cells asked: e2store's counts in a child process under
    the deadline (those it reaches), then the models of each cell."""
    from e2store.cli.corolles import board_cells
    from e2store.errors import OutOfReachError
    from e2store.exact.check import COUNT_MODELS, check_count
    from e2store.exact.models import run_child

    models = COUNT_MODELS if model == "both" else (model,)
    # past w+h-2 every cell's region is the whole board, so the zones are those of w+h-2
    # (the zone map of a larger radius takes seconds to find the same: 20 s at 255)
    cells = board_cells(inst.width, inst.height,
                        min(hamming, inst.width + inst.height - 2), at)
    figures: dict[tuple[int, int], int] = {}
    late = None
    if expect is None:
        try:
            run_child(_e2store_counts, (inst, cells, hamming), seconds=deadline,
                      what="e2store's count", progress=lambda v: figures.update({v[:2]: v[2]}),
                      done=lambda: f"{len(figures)} of {len(cells)} cells counted")
        except OutOfReachError as exc:
            late = str(exc)
    else:
        figures = {c: expect for c in cells}
    out = []
    for x, y in cells:
        c = check_count(inst, x, y, hamming, figures.get((x, y)), models=models,
                        seconds=deadline)
        if (x, y) not in figures:
            c.notes.append(late or "e2store's count: no figure")
        out.append(c)
    return out


def _killable() -> None:
    """Set up a child process that the time limit may kill: tqdm's lock (taken by every
    bar, even a disabled one) a thread lock rather than a named semaphore, which a killed
    process never frees (the resource tracker then warns on stderr)."""
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def _e2store_counts(inst, cells: list, hamming: int, emit) -> None:
    """e2store's side of `--hamming` (in a child process): each cell's count by the count
    tables' method, emitted as (x, y, count) when it is done."""
    from e2store.cli.corolles import best_method, count_cell

    _killable()
    for x, y in cells:
        emit((x, y, count_cell(inst, x, y, hamming, best_method(hamming), 1, False)[0]))


def _solutions(inst, fixed_value, no_break: bool, expect, deadline):
    """The solutions check: e2store's `solve --all` in a child process under the deadline,
    then the SAT model."""
    from e2store.errors import OutOfReachError
    from e2store.exact.check import check_board, check_solutions
    from e2store.exact.models import run_child

    fixed = _fixed(inst, fixed_value)
    sym = not no_break and not fixed
    check_board(inst, fixed)
    late = None
    if expect is None:
        try:
            expected = run_child(_e2store_solutions, (inst, fixed, sym), seconds=deadline,
                                 what="e2store's solve --all")
        except OutOfReachError as exc:
            expected, late = None, str(exc)
    else:
        expected = expect
    check = check_solutions(inst, expected, fixed=fixed, symmetry_break=sym, seconds=deadline)
    if late:
        check.notes.append(late)
    return check


def _e2store_solutions(inst, fixed: dict | None, sym: bool, emit) -> int:
    """e2store's side of `--solutions` (in a child process): `solve --all`'s count."""
    from e2store.solver.search import solve

    _killable()
    return solve(inst, "rowscan", symmetry_break=sym, seed=fixed, max_stored=1).solutions


def _best(inst, fixed_value, minutes: float, breaks: str, expect, deadline):
    """The best-score check: e2store's `solve --best` for `minutes` in a child process
    under the deadline, then MaxSAT with what is left."""
    from e2store.errors import OutOfReachError
    from e2store.exact.check import check_best, check_board
    from e2store.exact.models import run_child

    fixed = _fixed(inst, fixed_value)
    check_board(inst, fixed)
    late = None
    if expect is None:
        try:
            found = run_child(_e2store_best, (inst, fixed, breaks, minutes * 60),
                              seconds=deadline, what="e2store's solve --best")
        except OutOfReachError as exc:
            found, late = None, str(exc)
    else:
        found = expect
    check, _board = check_best(inst, found, fixed=fixed, seconds=deadline)
    if late:
        check.notes.append(late)
    return check


def _e2store_best(inst, fixed: dict | None, breaks: str, seconds: float, emit) -> int:
    """e2store's side of `--best` (in a child process): the best score of `solve --best`'s
    restarts, each board's holes filled; with every cell fixed, that board's score."""
    import numpy as np

    from e2store.solver.boards import score

    _killable()
    fixed = fixed or {}
    w = inst.width
    if len(fixed) == inst.n_pieces:  # nothing to search: the board is given
        board = np.full(inst.n_pieces, -1, dtype=np.int64)
        for (x, y), v in fixed.items():
            board[y * w + x] = v
        return int(score(inst, board).matched)
    from e2store.solver.best_run import run_best
    from e2store.solver.fill import fill_holes

    run = run_best(inst, fixed=fixed or None, breaks=breaks, seconds=seconds)
    keep = [y * w + x for x, y in fixed]
    return max((fill_holes(inst, r.board, keep=keep).score for r in run.results), default=0)


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
    from e2store.exact.check import board_cnf
    from e2store.exact.encode import diamond, encode
    from e2store.files import atomic_write

    ctx = click.get_current_context()
    if region is None and ctx.get_parameter_source("hamming") is not \
            click.core.ParameterSource.DEFAULT:
        raise ExactInputError("--hamming is the radius of --region X,Y: give both")
    _refuse_special(Path(output))
    inst = load_instance(instance, fmt, sides, size)
    if region is not None:
        if fixed_value or sym or soft:
            raise ExactInputError("--region takes no --fixed, --symmetry-break or --soft "
                                  "(they are whole-board options)")
        x, y = region
        cnf = encode(inst, diamond(inst.width, inst.height, x, y, hamming))
        cnf.notes.append(f"models: the corolles of hamming {hamming} at ({x},{y})")
    else:
        cnf = board_cnf(inst, fixed=_fixed(inst, fixed_value), symmetry_break=sym, soft=soft)
    atomic_write(Path(output), lambda fh: cnf.write(fh, soft=soft))
    click.echo(f"{output}: {cnf.n_vars:,} variables, {len(cnf.clauses):,} clauses"
               + (f", {len(cnf.soft):,} soft" if soft else ""))


def _refuse_special(path: Path) -> None:
    """Refuse an output that is there and not a regular file (/dev/null, a FIFO, a
    terminal): the atomic write would rename its temp file over it, replacing a device
    node when run as root."""
    import stat

    from e2store.errors import ExactInputError

    try:
        mode = path.stat().st_mode
    except OSError:
        return  # not there (or unreadable): the write says what is wrong
    if not stat.S_ISREG(mode):
        raise ExactInputError(f"{path}: not a regular file (export-cnf writes a file, "
                              f"replacing it whole)")


def solve_sat(inst, *, first: bool, symmetry_break: bool, fixed: dict | None, keep: int,
              seconds: float | None = None):
    """`solve --engine sat`: the solutions by SAT enumeration, as the backtracker's
    report (a `SolveResult`; nodes are not counted).  `seconds` bounds the whole run,
    building the formula included (it is built in the solver's child process):
    OutOfReachError past it."""
    import functools
    import time

    import numpy as np

    from e2store.exact.check import board_cnf, check_board
    from e2store.exact.models import DEFAULT_SAT, Deadline, require, run_model
    from e2store.solver.search import SolveResult

    deadline = Deadline(seconds)
    t0 = time.perf_counter()
    require("enumerate")
    check_board(inst, fixed)
    build = functools.partial(board_cnf, inst, fixed=fixed, symmetry_break=symmetry_break)
    r = run_model("enumerate", build, seconds=deadline, limit=1 if first else None, keep=keep)
    w, h = inst.width, inst.height
    dtype = np.int16 if inst.n_pieces * 4 <= np.iinfo(np.int16).max else np.int32
    boards = np.array(r.fills[:keep], dtype=dtype).reshape(-1, w * h)
    return SolveResult(inst.id, w, h, f"sat ({DEFAULT_SAT})", symmetry_break,
                       len(fixed or {}), first, solutions=r.count,
                       seconds=time.perf_counter() - t0, first_seconds=r.first_seconds,
                       complete=True, boards=boards)
