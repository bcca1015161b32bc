"""Solver command: `e2store solve INSTANCE [--scan ...] [--first|--all] [--json] [-o F]`."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import click

from e2store.cli.best_options import best_command, best_options, best_text, interrupted_line
from e2store.cli.command import command
from e2store.cli.engines import ENGINES, check_engine, chosen_engine
from e2store.cli.engines import given as given_
from e2store.cli.options import (
    AUTO_MIN_DEPTHS,
    BYTES,
    COUNT,
    DEFAULT_FINALS_HAMMING,
    DEFAULT_MAX_STORED,
    DEFAULT_SCAN,
    HAMMING,
    INDEX,
    KERNELS,
    MAX_COUNT,
    SCAN_ORDERS,
    SECONDS,
    SEED,
    SHARD,
    WORKERS,
    BoundedInt,
    Size,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    note,
    output_option,
    status_option,
    store_option,
)
from e2store.instance.parsing import shown_path


@command("solve", legacy={"--save": "--output", "--finals": "--store"},
         examples=[
             "e2store solve demo6.e2s",
             "e2store solve demo6.e2s --scan spiral-in --first --json",
             "e2store solve pieces_7x7.txt --all --workers 2 --json",
             "e2store solve pieces_7x7.txt --all --workers 2 --store store/ --json",
             "e2store solve demo7.e2s --store store/ --finals-regions corners",
             "e2store solve demo7.e2s --openings openings.parquet --shard 0/4 --workers 2 "
             "--json",
             "e2store solve pieces_8x8.txt --estimate 1000",
             "e2store solve clue3_jwortmann.txt --all --distinct --workers 2 --json",
         ])
@instance_argument
@instance_options
@click.option("--scan", default=DEFAULT_SCAN, show_default=True, metavar="ORDER|FILE",
              help=f"Scan order: {', '.join(SCAN_ORDERS)}, or a file of `x y` lines listing "
              "every cell once.")
@click.option("--first/--all", "first", default=False,
              help="Stop at the first solution, or search the whole tree (default).")
@click.option("--no-symmetry-break", "no_break", is_flag=True,
              help="Count every solution instead of fixing the lowest corner piece on (0,0) "
              "(one solution per board rotation class).")
@click.option("--distinct", is_flag=True,
              help="Search each distinct layout once: identical pieces (alike up to rotation) "
              "tried once per cell and the rotations of a symmetric piece that look alike "
              "once; reports the distinct solutions and the raw count they stand for.")
@click.option("--fixed", "seed_file", default=None, metavar="FILE|URL",
              help="Fixed cells: a file of `x y piece r` lines, or an e2.bucas.name board "
              "URL (its filled cells); implies --no-symmetry-break.")
@output_option("Write the solutions, one row per solution, cells c0.. (index y*W+x) as "
               "piece*4+r: Parquet, CSV if FILE ends in .csv, Arrow IPC if in .arrow.  With "
               "--best: the boards file, or the boards dataset DIR (a directory, a name "
               "ending in / or without suffix): one part per restart.", either=True)
@click.option("--keep", type=BoundedInt(0, limit=MAX_COUNT), default=DEFAULT_MAX_STORED,
              show_default=True, help="Keep (and write) at most this many solutions; all are "
              "counted and checked.")
@click.option("--max-nodes", type=COUNT, default=None,
              help="Stop after this many nodes (the report says the search is incomplete).")
@store_option(required=False,
              help="Let this store's database prune the search (--method): a complete search "
              "probes the block closure table (built into STORE the first time, reused "
              "after); --first, --max-nodes or --finals-* use finals (corolles of `e2store "
              "enumerate`).")
@click.option("--method", type=click.Choice(("auto", "closure", "finals")), default="auto",
              show_default=True, help="How --store prunes: `closure` (complete searches, the "
              "fastest measured), `finals`, or `auto` (closure for a complete search, else "
              "finals).")
@click.option("--memory-budget", "budget", type=BYTES, default="2G", show_default=True,
              help="Largest closure table (--engine dlx: table), in bytes over all processes "
              "(K/M/G suffixes): a larger one is refused before it is built.")
@click.option("--finals-regions", multiple=True, default=("corners",), show_default=True,
              metavar="corners|X,Y", help="Finals regions (with --store): centre cells, "
              "repeatable.")
@click.option("--finals-hamming", type=HAMMING, default=DEFAULT_FINALS_HAMMING,
              show_default=True, help="Hamming of the finals regions' corolles (with --store).")
@click.option("--kernel", type=click.Choice(KERNELS), default="auto", show_default=True,
              help="Kernel of complete and --best searches: `unrolled` generates and compiles one "
              "for this search's plan (about 2x the nodes per second, a few seconds to "
              "compile the first time), `generic` never, `auto` when the search has at least "
              f"{AUTO_MIN_DEPTHS} free cells.  Counts and boards are the same.")
@json_option("Print the report as one JSON object on stdout.")
@click.option("--openings", "openings_file", default=None, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Solve the subtree of every opening of FILE (`e2store openings`) and merge; "
              "the symmetry break is the file's.")
@click.option("--workers", type=WORKERS, default=1, show_default=True,
              help="Processes to spread the search over: the openings of --openings, else "
              "subtrees of the top of the search (a complete search: --all, same report).")
@click.option("--shard", default=None, type=SHARD,
              help="With --openings: solve only openings i with i % S == K; with --best: "
              "run only restarts k with k % S == K (the shards of a run, at once).")
@click.option("--estimate", "estimate_samples", type=COUNT, default=None,
              metavar="M", help="Do not search: estimate the nodes, solutions and time of "
              "this search from M random prefixes searched to the end (exact when M covers "
              "every prefix).")
@click.option("--estimate-seed", type=SEED, default=0, show_default=True,
              help="With --estimate: the random seed of the sample.")
@click.option("--estimate-depth", type=INDEX, default=None, metavar="K",
              help="With --estimate: sample the prefixes of the first K free cells (default: "
              "the first depth with 10 M of them); deeper makes each sampled subtree smaller, "
              "which big boards need.")
@click.option("--engine", type=click.Choice(ENGINES), default="auto",
              show_default=True, help="auto: dlx for a complete search of a board with "
              "identical pieces (where it measured faster: the clue puzzles), unless an option "
              "of the backtracker's is given, else backtrack; backtrack: e2store's search; "
              "sat: SAT enumeration "
              "with CaDiCaL (e2store.exact, `pip install '.[exact]'`): the same report, for "
              "a side-by-side check (--first, or --all on small boards); dlx: corolles as "
              "the pieces of the search, dancing links over the board's corolle regions "
              "(e2store.cover; nodes: options tried; --store: the corolles' store).")
@click.option("--hamming", "cover_hamming", type=BoundedInt(0, 2), default=None,
              help="With --engine dlx: the regions' hamming: 0 (a cell each: Knuth's "
              "model; default, the fastest measured), 1 (crosses) or 2 (13-cell diamonds).")
@click.option("--seconds", "sat_seconds", type=SECONDS, default=None,
              help="With --engine sat: the time limit of the run, building the formula "
              "included (default: none); past it the run stops with one line, exit 2.")
@best_options
@status_option("solve")
def solve_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None, scan: str,
              first: bool, no_break: bool, seed_file: str | None, output: str | None,
              keep: int, max_nodes: int | None, as_json: bool, openings_file: Path | None = None,
              workers: int = 1, shard: tuple[int, int] | None = None,
              estimate_samples: int | None = None,
              estimate_seed: int = 0, estimate_depth: int | None = None,
              kernel: str = "auto", method: str = "auto", budget: int = 2 << 30,
              distinct: bool = False, best: bool = False, engine: str = "auto",
              sat_seconds: float | None = None, cover_hamming: int | None = None,
              **finals) -> None:
    """Solve a puzzle by backtracking and report nodes, solutions and times.

    A node is one piece placed.  Progress goes to stderr on long runs; Ctrl-C stops the
    search and reports what was found so far (exit code 130).  `--estimate M` sizes the
    search first (e2store.solver.estimate), in seconds rather than hours.
    """
    from e2store.boards.solutions import write_solutions
    from e2store.errors import SolverError
    from e2store.solver.scan import fixed_cells
    from e2store.solver.session import solve_search

    ctx = click.get_current_context()
    check_engine(ctx, engine)
    best_keys = ("breaks", "rng_seed", "restart_nodes", "restarts", "minutes", "clues",
                 "quota", "order", "no_fill", "no_finish", "arm", "trace", "keep_min_score")
    opts = {k: finals.pop(k) for k in best_keys}
    if best:
        if ctx.command.name == "solve":
            note("`e2store best` is an old spelling: use `e2store best INSTANCE ...`")
        _solve_best(ctx, instance, fmt, sides, size, scan, seed_file, output, max_nodes,
                    as_json, workers, opts, finals, kernel, shard)
        return
    if output is not None and (output.endswith(("/", os.sep)) or Path(output).is_dir()):
        raise click.UsageError(f"-o {output}: a directory is a boards dataset of --best "
                               f"(the solutions go to a file)")
    save = None if output is None else Path(output)
    given = [f"--{k.replace('rng_seed', 'seed').replace('_', '-')}" for k in best_keys
             if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT]
    if given:
        raise click.UsageError(f"{', '.join(given)} needs --best")
    if distinct:
        flags = {"store": "--store", "openings_file": "--openings"}
        given = [flag for k, flag in flags.items()
                 if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise click.UsageError(f"--distinct takes no {', '.join(given)} (their tables "
                                   f"and openings are of pieces, not of classes)")
    if estimate_samples is not None:
        flags = {"first": "--first", "output": "--output", "max_nodes": "--max-nodes",
                 "openings_file": "--openings", "store": "--store"}
        given = [flag for k, flag in flags.items()
                 if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise click.UsageError(f"--estimate takes no {', '.join(given)}")
        _estimate(instance, fmt, sides, size, scan, no_break, seed_file, estimate_samples,
                  estimate_seed, estimate_depth, as_json, kernel, distinct)
        return
    for k in ("estimate_seed", "estimate_depth"):
        if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError(f"--{k.replace('_', '-')} needs --estimate M")
    given = [f"--{k.replace('_', '-')}" for k in ("finals_regions", "finals_hamming")
             if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT]
    store = finals.get("store")
    if given and not store:
        raise click.UsageError(f"{', '.join(given)} needs --store DIR (the finals' corolles)")
    if not store and engine != "dlx" and given_(ctx, "method"):
        raise click.UsageError("--method needs --store DIR")
    if method == "closure" and (given or first or max_nodes is not None):
        raise click.UsageError("--method closure probes the closure table in complete searches: "
                               "it takes no --first, --max-nodes or --finals-* (use --method "
                               "finals)")
    if openings_file is not None and (seed_file is not None or no_break
                                      or max_nodes is not None):
        raise SolverError("--openings takes neither --fixed, --no-symmetry-break nor "
                          "--max-nodes (the openings file sets seeds and symmetry)")
    if openings_file is None and shard is not None:
        raise SolverError("--shard needs --openings FILE (or --best: shards of restarts)")
    inst = load_instance(instance, fmt, sides, size)
    seed = None if openings_file is not None else fixed_cells(inst, seed_file)
    symmetry_break = not no_break and seed is None
    engine = chosen_engine(ctx, engine, inst, first)
    if not store and engine != "dlx" and given_(ctx, "budget"):
        raise click.UsageError("--memory-budget needs --store DIR (or --engine dlx)")
    if engine == "dlx":
        from tqdm import tqdm

        from e2store.cover.search import DEFAULT_HAMMING, solve_cover
        from e2store.progress import progress_interval
        from e2store.solver.best import sigint_sets

        stopped = threading.Event()
        bar = tqdm(desc=f"solve {inst.name} (dlx)", unit="option", unit_scale=True,
                   delay=1.0, leave=False, mininterval=progress_interval())

        def tick(nodes: int, solutions: int) -> None:
            bar.update(nodes - bar.n)
            bar.set_postfix(solutions=solutions, refresh=False)

        with sigint_sets(stopped), bar:  # Ctrl-C: the search stops between slices
            result = solve_cover(inst, hamming=cover_hamming or DEFAULT_HAMMING, store=store,
                                 first=first, symmetry_break=symmetry_break, fixed=seed,
                                 keep=keep, max_nodes=max_nodes, workers=workers,
                                 memory_budget=budget, stop=stopped.is_set, tick=tick,
                                 log=lambda m: click.echo(f"e2store: {m}", err=True))
        if save is not None:
            write_solutions(save, result.boards, inst, result.scan)
    elif engine == "sat":
        from e2store.exact import Deadline, solve_sat

        refused = [flag for flag, on in (("--workers", workers > 1), ("--max-nodes", max_nodes),
                                         ("--store", store), ("--distinct", distinct)) if on]
        if refused:
            raise SolverError(f"--engine sat takes no {', '.join(refused)} (they are the "
                              f"backtracker's)")
        result = solve_sat(inst, first=first, symmetry_break=symmetry_break, fixed=seed,
                           keep=keep, seconds=Deadline(sat_seconds, hint="raise --seconds"))
        if save is not None:
            write_solutions(save, result.boards, inst, result.scan)
    else:
        if workers > 1 and openings_file is None:
            refused = [flag for flag, on in (("--first", first), ("--max-nodes", max_nodes),
                                             ("--method finals", store and (
                                                 given or method == "finals"))) if on]
            if refused:
                raise SolverError(f"--workers {workers} runs a complete search: it takes no "
                                  f"{', '.join(refused)} (use one process, or --openings "
                                  f"FILE)")
        result = solve_search(inst, scan, first=first, symmetry_break=symmetry_break,
                              fixed=seed, keep=keep, max_nodes=max_nodes, workers=workers,
                              store=store, method=method, memory_budget=budget,
                              finals_regions=list(finals["finals_regions"]) if given else None,
                              finals_hamming=finals["finals_hamming"],
                              openings=openings_file, shard=shard, save=save, kernel=kernel,
                              distinct=distinct, progress=True, stop_on_interrupt=True,
                              log=lambda m: click.echo(f"e2store: {m}", err=True))
        if openings_file is not None:
            _openings_report(result, inst.name, openings_file, save, as_json)
            return
    if as_json:
        d = result.to_dict()
        d["url"] = _first_url(inst, result.boards)
        if save is not None:
            d["saved"] = str(save)
        click.echo(json.dumps(d))
    else:
        click.echo(format_report(result, inst_name=inst.name, corner=_corner(inst, result),
                                 save=save))
    if ((result.distinct_solutions or 0) if distinct else result.solutions) > result.stored and (
            save is not None):
        click.echo(f"e2store: warning: {result.solutions} solutions found, {result.stored} "
                   f"saved (raise --keep to save more)", err=True)
    if result.interrupted:
        sys.exit(130)


def _estimate(instance: Path, fmt: str, sides: str | None, size: Size | None, scan: str,
              no_break: bool, seed_file: str | None, samples: int, rng_seed: int,
              depth: int | None, as_json: bool, kernel: str = "auto",
              distinct: bool = False) -> None:
    """`solve --estimate M`: print the estimated size of the search."""
    from e2store.solver.estimate import estimate
    from e2store.solver.scan import fixed_cells

    inst = load_instance(instance, fmt, sides, size)
    seed = fixed_cells(inst, seed_file)
    est = estimate(inst, scan, samples=samples, symmetry_break=not no_break and seed is None,
                   seed=seed, rng_seed=rng_seed, depth=depth, progress=True, kernel=kernel,
                   distinct=distinct)
    if as_json:
        click.echo(json.dumps(est.to_dict()))
        return
    corner = _corner(inst, est)
    how = ("exact: every prefix searched" if est.exact else
           f"{est.sampled:,} of them sampled (seed {est.rng_seed}), +- one standard error")
    click.echo("\n".join([
        f"instance   {inst.name} ({est.width}x{est.height}), scan {est.scan}",
        f"symmetry   {'broken: ' + corner if corner else 'none (every solution counted)'}",
        f"prefixes   {est.prefixes:,} at depth {est.depth} ({est.prefix_nodes:,} nodes); {how}",
        f"nodes      {est.nodes:.4g} +- {est.nodes_stderr:.2g}",
        f"solutions  {est.solutions:,.1f} +- {est.solutions_stderr:,.1f}"
        + ("" if est.raw_per_layout is None else
           f" distinct layouts found, each standing for {est.raw_per_layout:,} raw"),
        f"time       ~{est.seconds:,.1f} s in one process "
        f"({est.nodes / max(est.seconds, 1e-9) / 1e6:,.1f} M nodes/s, the rate measured here)",
    ]))


def _solve_best(ctx, instance, fmt, sides, size, scan, seed_file, output, max_nodes, as_json,
                workers, opts, finals, kernel, shard=None) -> None:
    """`e2store best`: refuse the exact search's options, then one call of
    `e2store.solver.best.solve_best`, its report printed; stopped by Ctrl-C at any point,
    one line on stderr saying what was kept (`interrupted_line`) and exit 130."""
    from e2store.solver.best import DEFAULT_BOARDS, DEFAULT_SCAN, BestOptions, solve_best

    exact = {"first": "--first/--all", "no_break": "--no-symmetry-break",
             "distinct": "--distinct", "keep": "--keep",
             "openings_file": "--openings",
             "estimate_samples": "--estimate", "method": "--method", "budget": "--memory-budget",
             "finals_regions": "--finals-regions", "finals_hamming": "--finals-hamming"}
    given = [flag for k, flag in exact.items()
             if ctx.get_parameter_source(k) not in (None, click.core.ParameterSource.DEFAULT)]
    if given:
        raise click.UsageError(f"--best takes no {', '.join(given)}")
    out = DEFAULT_BOARDS if output is None else output
    report = None
    try:  # Ctrl-C in the run: its report; before it (loading, the plan) or after: one line
        inst = load_instance(instance, fmt, sides, size)
        if ctx.get_parameter_source("scan") is click.core.ParameterSource.DEFAULT and (
                ctx.command.name == "solve"):
            scan = DEFAULT_SCAN  # the best-score search's own default order
        minutes = opts["minutes"]
        options = BestOptions(  # the library's options object, as a campaign's arm is
            scan=scan, fixed=seed_file, clues=opts["clues"], breaks=opts["breaks"],
            quota=opts["quota"], order=opts["order"],
            store=None if finals.get("store") is None else str(finals["store"]),
            restart_nodes=opts["restart_nodes"], fill=not opts["no_fill"],
            finish=not opts["no_finish"], kernel=kernel)
        report = solve_best(inst, out, **options.run_kwargs(inst), seed=opts["rng_seed"],
                            restarts=opts["restarts"],
                            seconds=None if minutes is None else 60 * minutes,
                            max_nodes=max_nodes, workers=workers, live=not as_json,
                            arm=opts["arm"], shard=shard, trace=opts["trace"],
                            keep_min_score=opts["keep_min_score"])
        click.echo(json.dumps(report) if as_json else best_text(inst, report))
    except KeyboardInterrupt:
        click.echo(interrupted_line(out, None if report is None else report["restarts"]),
                   err=True)
        sys.exit(130)
    if report is not None and report["ended"] == "interrupted":
        click.echo(interrupted_line(report["boards_file"], report["restarts"]), err=True)
        sys.exit(130)


def _first_url(inst, boards) -> str | None:
    """The e2.bucas.name URL of the first solution kept (None without one, or when a colour
    has no letter)."""
    from e2store.instance.url import UrlError, board_url

    if not len(boards):
        return None
    try:
        return board_url(inst, boards[0])
    except UrlError:
        return None


def _corner(inst, result) -> str | None:
    from e2store.solver.plan import lowest_corner

    if not result.symmetry_break:
        return None
    distinct = (getattr(result, "distinct", None) is not None
                or getattr(result, "raw_per_layout", None) is not None)
    piece, r = lowest_corner(inst, distinct)
    where = "(0,0)" if inst.width == inst.height else "(0,0) or (W-1,0)"
    return f"piece {piece} fixed on {where}"


def format_report(r, inst_name: str, corner: str | None = None,
                  save: Path | None = None) -> str:
    """The human-readable report of a search: a few aligned lines."""
    sat = r.scan.startswith("sat")
    state = ("interrupted" if r.interrupted else "complete" if r.complete and not r.first_only
             else "stopped at the first solution" if r.complete else "node limit reached")
    lines = [
        f"instance   {inst_name} ({r.width}x{r.height}), scan {r.scan}",
        f"symmetry   {'broken: ' + corner if corner else 'none (every solution counted)'}"
        + (f", {r.seeded_cells} seeded cells" if r.seeded_cells else ""),
        f"solutions  {r.solutions:,} ({state})",
    ]
    if r.distinct is not None:
        d = r.distinct
        lines[-1] = (f"solutions  {r.distinct_solutions:,} distinct ({state}), standing for "
                     f"{r.solutions:,} with every piece and rotation told apart")
        lines.append(f"distinct   {d['classes']} classes of pieces ({d['duplicates']} "
                     f"duplicates, {d['half_turn_pieces'] + d['quarter_turn_pieces']} "
                     f"symmetric); {d['layouts_found']:,} layouts found"
                     + (f"; kernel: {d['kernel']}" if d.get("kernel") else ""))
    if r.first_nodes is not None:
        lines.append(f"first      after {r.first_nodes:,} nodes, {r.first_seconds:.3f} s")
    elif r.first_seconds is not None:
        lines.append(f"first      after {r.first_seconds:.3f} s (nodes not counted "
                     f"{'by SAT' if sat else 'with a closure'})")
    else:
        lines.append("first      none")
    lines.append(f"nodes      not counted by SAT, {r.seconds:.3f} s" if sat else
                 f"nodes      {r.nodes:,} in {r.seconds:.3f} s "
                 f"({r.nodes_per_second / 1e6:,.1f} M nodes/s)")
    if r.cuts is not None:
        regions = " ".join(f"({x},{y}):{c:,}" for (x, y), c in zip(r.finals_regions or [],
                                                                     r.cuts, strict=True))
        lines.append(f"finals     hamming {r.finals_hamming}, cuts {regions}")
    if r.closure is not None:
        lines.append(closure_line(r.closure))
    if save is not None:
        lines.append(f"saved      {r.stored:,} solutions to {shown_path(save)}")
    return "\n".join(lines)


def _openings_report(res, inst_name: str, path: Path, save: Path | None,
                     as_json: bool) -> None:
    """Print the report of `solve --openings FILE` (one JSON object, or aligned lines) and
    warn when solutions were found but not all saved."""
    if as_json:
        d = {**res.to_dict(), "openings_file": str(path)}
        if save is not None:
            d["saved"] = str(save)
        click.echo(json.dumps(d))
    else:
        click.echo(format_openings_report(res, inst_name, path, save))
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
    """The human-readable report of `solve --openings FILE`: a few aligned lines, one per
    worker at the end."""
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


best_cmd = best_command(solve_cmd)
