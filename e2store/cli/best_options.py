"""The options of `e2store best` (and of `e2store best`, its old spelling), the `best`
command made from `solve`'s (`best_command`), and the text of its report: a helper of
the `solve` module.  Every default is the library's
(`e2store.solver.best`), read here, never restated."""

from __future__ import annotations

from pathlib import Path

import click


def best_options(f):
    """The options of `e2store best` (applied to `solve`), their defaults the library's
    (`e2store.solver.best`: declared once); their numbers range-checked
    (`e2store.cli.checked`: no nan, no negative seed, no 10**40 nodes)."""
    from e2store.cli.checked import BoundedInt
    from e2store.cli.options import COUNT, MINUTES
    from e2store.solver.best import (
        CLUES,
        CLUES_SCHEDULE,
        DEFAULT_BOARDS,
        DEFAULT_BREAKS,
        DEFAULT_ORDER,
        DEFAULT_QUOTA,
        DEFAULT_RESTART_NODES,
        DEFAULT_SCAN,
        DEFAULT_SCHEDULE,
        DEFAULT_SEED,
        ORDERS,
        SCHEDULES,
    )

    opts = [
        click.option("--best", is_flag=True, help="Best-score search: the deepest boards and "
                     "most matched joins, letting joins mismatch from the --breaks depths on "
                     "(never on a frame colour); restarts with random tie-breaks; writes a "
                     f"boards file (-o FILE, default {DEFAULT_BOARDS}) or a boards dataset "
                     "(-o DIR: a part per restart) and fills each best "
                     f"board's holes for its full-board score; scan {DEFAULT_SCAN} unless "
                     "--scan is given."),
        click.option("--breaks", default=DEFAULT_BREAKS, show_default=True,
                     metavar="NAME|D1,D2,...", help="With --best: the scan depths from which "
                     f"the 1st, 2nd, ... mismatch is allowed, or a schedule: "
                     f"{', '.join(SCHEDULES)} (scaled from 256 cells to the board); `auto`: "
                     f"{CLUES_SCHEDULE} with --clues all, else {DEFAULT_SCHEDULE}."),
        click.option("--seed", "rng_seed", default=DEFAULT_SEED, show_default=True, type=_SEED,
                     help="With --best: the random seed of the tie-breaks (restart k draws "
                     "from (seed, k): a run is reproducible restart by restart)."),
        click.option("--restart-nodes", type=COUNT,
                     default=DEFAULT_RESTART_NODES, show_default=True,
                     help="With --best: nodes per restart before new tie-breaks."),
        click.option("--restarts", type=COUNT, default=None,
                     help="With --best: stop after this many restarts."),
        click.option("--minutes", type=MINUTES, default=None,
                     help="With --best: stop after this much wall time."),
        click.option("--clues", default=None, metavar="|".join(CLUES), help="With --best on "
                     "Eternity II's pieces: fix the official clues (the centre one, or all "
                     "five)."),
        click.option("--quota", default=DEFAULT_QUOTA, show_default=True,
                     metavar="auto|none|blackwood|store|C1,C2,...", help="With --best: the "
                     "colour quota (Blackwood's heuristic): pieces showing these colours (ids "
                     "as in the file; `blackwood`: 13, 16, 10 of Eternity II; `store`: the "
                     "three whose pieces tile worst, from --store) tried first, and at least "
                     "as many of their sides placed by each depth as his curve asks; `auto`: "
                     "blackwood on Eternity II's pieces, none on other boards."),
        click.option("--order", type=click.Choice(ORDERS), default=DEFAULT_ORDER,
                     show_default=True, help="With --best: the order of the candidates within "
                     "each list part: random, or `store`: the pieces that tile worst first "
                     "(hamming-1 corolles per piece, from --store), random among alike."),
        click.option("--no-fill", is_flag=True, help="With --best: do not fill the holes."),
        click.option("--no-finish", is_flag=True, help="With --best: do not finish the "
                     "boards (each restart's filled board as it is: no other boards tried, "
                     "no tail re-solved)."),
        click.option("--trace", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     metavar="FILE", help="With --best: append the run's trace to FILE, a CSV "
                     "line every few seconds (time, elapsed, nodes, restarts, deepest depth, "
                     "best score, best filled score): its best score over time."),
        click.option("--keep-min-score", type=BoundedInt(0, 1 << 20), default=None,
                     metavar="S",
                     help="With --best: keep the boards of a score of at least S alone; "
                     "below it a board's row keeps its statistics and its key (repeats "
                     "still counted), not its cells (a campaign's `keep_boards: "
                     "{min_score: S}`: no save flood)."),
        click.option("--arm", default=None, metavar="NAME", help="With --best -o DIR: the "
                     "arm of the boards dataset the run writes (arm=NAME/; default "
                     "`default`): a campaign's arms are its runs of other options."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


class _SeedType(click.ParamType):
    """An integer seed, 0 .. 2**63-1 (`SEED`: numpy seeds no negative number, the boards
    file stores it as int64); the old `solve --seed FILE` (fixed cells) is refused, naming
    `--fixed`."""

    name = "INTEGER"

    def convert(self, value, param, ctx):
        from e2store.cli.options import SEED, short

        text = str(value).strip().lstrip("+-")
        if not (isinstance(value, int) or (text.isascii() and text.isdigit())):
            self.fail(f"{short(value)} is not an integer: --seed is the random seed of --best "
                      f"(fixed cells are `--fixed FILE|URL`; the old `--seed FILE` was "
                      f"removed)", param, ctx)
        return SEED.convert(value, param, ctx)


_SEED = _SeedType()


def best_text(inst, d: dict) -> str:
    from e2store.instance.parsing import shown_path

    b = d.get("best")
    lines = [f"instance   {d['instance_name']} ({inst.width}x{inst.height}), scan {d['scan']}, "
             f"{d['fixed_cells']} fixed cells",
             f"breaks     {','.join(map(str, d['breaks'])) or 'none'}; colour quota "
             f"{','.join(map(str, d['quota'])) or 'none'}; order {d['order']}",
             f"restarts   {d['restarts']:,} of {d['restart_nodes']:,} nodes (seed {d['seed']}, "
             f"{d['workers']} workers" + (f", shard {d['shard'][0]}/{d['shard'][1]}"
                                          if d.get("shard") else "")
             + f"), ended: {d['ended']}",
             f"nodes      {d['nodes']:,} in {d['seconds']:.1f} s "
             f"({d['nodes_per_second'] / 1e6:,.1f} M nodes/s)"]
    if b is not None:
        lines.append(f"best       depth {b['depth']} of {inst.width * inst.height}, score "
                     f"{b['score']} / {d['joins']} ({b['mismatches']} mismatched), restart "
                     f"{b['restart']}")
        lines.append("depths     " + ", ".join(f"{k}: {v}" for k, v in d["depths"].items()))
    if d.get("filled"):
        f = d["filled"]
        lines.append(f"filled     score {f['score']} / {d['joins']} (the best full board, from "
                     f"restart {f['restart']}, depth {f['depth']})")
        if f.get("url"):
            lines.append(f"url        {f['url']}")
    elif b is not None and b.get("url"):
        lines.append(f"url        {b['url']}")
    if d.get("finish"):
        f = d["finish"]
        lines.append(f"finish     {f['raised']:,} of {f['restarts']:,} restarts raised, "
                     f"+{f['gain']:,} points in all, {f['seconds']:.1f} s (off with "
                     f"--no-finish)")
    lines.append(f"saved      {shown_path(d['boards_file'])}" + (
        f", arm {d['arm']}: a part per restart (a boards dataset)" if d.get("arm") else ""))
    return "\n".join(lines)


def interrupted_line(output: str, restarts: int | None) -> str:
    """The line on stderr of a `e2store best` run stopped by Ctrl-C (exit 130): what its
    boards file or dataset `output` kept; `restarts`: how many restarts the report counts
    (the running ones stopped at their next slice), None without a report (stopped
    before the run began or as its report was made)."""
    from e2store.instance.parsing import shown_path

    where = shown_path(output)
    if restarts is None:
        return f"e2store: interrupted (Ctrl-C): every restart that ended is kept in {where}"
    if restarts == 0:
        return f"e2store: interrupted (Ctrl-C) before any restart ended: nothing written to {where}"
    return (f"e2store: interrupted (Ctrl-C): {restarts:,} restart{'s' if restarts > 1 else ''} "
            f"kept in {where}")


# `solve`'s options that only the exact search takes: not options of `best`
_EXACT_ONLY = ("first", "no_break", "distinct", "keep", "method", "budget", "finals_regions",
               "finals_hamming", "openings_file", "estimate_samples", "estimate_seed",
               "estimate_depth", "engine", "sat_seconds", "cover_hamming", "best")


_BEST_HELP = {
    "seed_file": "Fixed cells: a file of `x y piece r` lines, or an e2.bucas.name board URL "
                 "(its filled cells).",
    "output": "The boards file (Parquet; Arrow IPC if FILE ends in .arrow), or the boards "
              "dataset DIR (a directory, a name ending in / or without suffix): one part per "
              "restart.  A rerun resumes it.",
    "store": "A corolle store, for --order store and --quota store (its hamming-1 cartesian "
             "partitions, built the first time).",
    "workers": "Processes running restarts at once.",
    "shard": "Run only restarts k with k % S == K (the shards of a run, at once: other "
             "shard counts of the same seed are refused while one runs).",
    "max_nodes": "Stop after this many nodes in all.",
}


def best_command(solve_cmd: click.Command) -> click.Command:
    """`e2store best`: `e2store best` as a command of its own, its options `solve`'s less
    the exact search's (`_EXACT_ONLY`), their help without "With --best:"."""
    import copy

    from e2store.cli.command import Command
    from e2store.solver.best import DEFAULT_SCAN

    params, fixed = [], {}
    for p in solve_cmd.params:
        if p.name in _EXACT_ONLY:
            fixed[p.name] = p.default
            continue
        q = copy.copy(p)
        if isinstance(q, click.Option) and q.help:
            q.help = (q.help.replace("With --best -o DIR", "With -o DIR")
                      .removeprefix("With --best: ").removeprefix("With --best "))
            q.help = q.help[:1].upper() + q.help[1:]
        if q.name == "scan":
            q.default = DEFAULT_SCAN
        if isinstance(q, click.Option) and q.name in _BEST_HELP:
            q.help = _BEST_HELP[q.name]
        params.append(q)
    fixed["best"] = True

    def callback(**kw: object) -> None:
        assert solve_cmd.callback is not None
        solve_cmd.callback(**kw, **fixed)

    return Command(
        "best", params=params, callback=callback,
        help="Best-score search: the deepest boards and the most matched joins (the mode the "
        "field plays Eternity II in).\n\nRestarts of a search letting joins mismatch from "
        "the --breaks depths on, each restart's best board filled and finished; the boards go "
        "to a boards file (-o FILE) or a boards dataset (-o DIR: a part per restart), a "
        "rerun resumes it.  Ctrl-C stops at once and keeps what was found (exit 130).  "
        "Was `e2store best` (still taken, with a note).",
        examples=["e2store best e2_gallicchio.puz --clues centre --minutes 60 --workers 2 "
                  "-o hour.parquet",
                  "e2store best demo6.e2s --restarts 20 -o runs/ --arm default --json"])
