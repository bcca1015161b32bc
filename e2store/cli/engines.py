"""`e2store solve --engine`: which search a run takes.  `auto` (the default) is the
backtracker, except for a complete search of a board with identical pieces, where dancing
links over the cells (`--engine dlx`) measured faster (`e2store.cover.search.suits_dlx`);
an option only one engine takes picks that engine; an option the chosen engine does not
take is refused in one line."""

from __future__ import annotations

import click

from e2store.errors import SolverError

ENGINES = ("auto", "backtrack", "sat", "dlx")

# the backtracker's own options (parameter -> flag): under `auto` any of them picks it
BACKTRACK_ONLY = {"openings_file": "--openings", "estimate_samples": "--estimate",
                  "distinct": "--distinct", "shard": "--shard", "method": "--method",
                  "finals_regions": "--finals-regions", "finals_hamming": "--finals-hamming",
                  "kernel": "--kernel", "scan": "--scan", "store": "--store", "best": "--best"}
_DLX_REFUSED = ("best", "openings_file", "estimate_samples", "distinct", "shard",
                "finals_regions", "method")


def given(ctx: click.Context, key: str) -> bool:
    """Whether the option `key` was given (on the command line or by its environment);
    not for an option the command lacks (`best` shares `solve`'s body)."""
    return ctx.get_parameter_source(key) not in (None, click.core.ParameterSource.DEFAULT)


def check_engine(ctx: click.Context, engine: str) -> None:
    """Refuse, in one line, an option the engine asked for does not take."""
    if engine == "sat":
        refused = [BACKTRACK_ONLY[k] for k in ("best", "openings_file", "estimate_samples")
                   if given(ctx, k)]
        if refused:
            raise SolverError(f"--engine sat takes no {', '.join(refused)} (SAT enumerates "
                              f"solutions: --first or --all)")
    elif given(ctx, "sat_seconds"):
        raise SolverError("--seconds is the time limit of --engine sat (the backtracker "
                          "stops at --max-nodes or Ctrl-C)")
    if engine == "dlx":
        refused = [BACKTRACK_ONLY[k] for k in _DLX_REFUSED if given(ctx, k)]
        if refused:
            raise SolverError(f"--engine dlx takes no {', '.join(refused)} (dancing links "
                              f"over corolles: --first, --all, --max-nodes, --store, "
                              f"--hamming, --workers)")
    elif engine != "auto" and given(ctx, "cover_hamming"):
        raise SolverError("--hamming is the regions' hamming of --engine dlx")


def chosen_engine(ctx: click.Context, engine: str, instance, first: bool) -> str:
    """The engine a run takes: `engine`, or for `auto` dlx when `--hamming` is given or a
    complete search's board suits it (and no option of the backtracker's is given; said
    on stderr), else the backtracker (`--first` too: on clue 2 dlx took 17 s to its first
    solution, the backtracker 0.01 s)."""
    if engine != "auto":
        return engine
    if given(ctx, "cover_hamming"):
        check_engine(ctx, "dlx")  # with an option of the backtracker's: refused
        return "dlx"
    if first or any(given(ctx, k) for k in BACKTRACK_ONLY):
        return "backtrack"
    from e2store.cover.search import suits_dlx

    why = suits_dlx(instance)
    if why is None:
        return "backtrack"
    click.echo(f"e2store: --engine auto: dlx, measured the faster on boards with identical "
               f"pieces ({why}); --engine backtrack for the backtracker", err=True)
    return "dlx"
