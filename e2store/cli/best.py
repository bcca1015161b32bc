"""Best-score commands: `e2store score [INSTANCE] BOARD...` and the `--best` mode of
`e2store solve` (its options, its run and its report)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import json_option

DEFAULT_BOARDS = "best-boards.parquet"


@command("score", examples=[
    "e2store score 'https://e2.bucas.name/#puzzle=...&board_w=16&board_h=16&board_edges=...'",
    "e2store score e2_gallicchio.puz board.txt",
    "e2store score e2_gallicchio.puz best-boards.parquet --json",
])
@click.argument("args", nargs=-1, required=True, metavar="[INSTANCE] BOARD...")
@click.option("--fill", is_flag=True, help="Fill the holes first (the leftover pieces placed "
              "to match most joins) and score the full board.")
@json_option("Print one JSON object per board on stdout.")
def score_cmd(args: tuple[str, ...], fill: bool, as_json: bool) -> None:
    """Score a full or partial board: matched inner joins out of 2*W*H-W-H (480 on Eternity
    II), the mismatched joins, holes and frame faults.

    BOARD is a board URL (e2.bucas.name: scored from its colours alone, no INSTANCE
    needed), a file of `x y piece r` lines (holes allowed), a boards file (`solve --best
    -o`) or a solutions file; the files need the INSTANCE whose pieces they place.
    """
    from e2store.errors import SolverError
    from e2store.instance.url import is_url

    if len(args) == 1 and is_url(args[0]):
        reports = [url_score(args[0])]
    elif len(args) < 2:
        raise SolverError(f"{args[0]}: a board file needs the instance it places pieces of: "
                          f"`e2store score INSTANCE BOARD`")
    else:
        reports = _file_scores(args[0], args[1:], fill)
    for r in reports:
        if as_json:
            click.echo(json.dumps(r))
        else:
            click.echo(score_text(r))


def _file_scores(instance: str, boards: tuple[str, ...], fill: bool) -> list[dict]:
    from e2store.cli.options import load_instance
    from e2store.instance.url import UrlError, board_url
    from e2store.solver.boards import read_any_board, score
    from e2store.solver.fill import fill_holes

    inst = load_instance(Path(instance), "auto", None, None)
    out = []
    for source in boards:
        for i, b in enumerate(read_any_board(inst, source)):
            extra = {}
            if fill:
                f = fill_holes(inst, b)
                extra = {"filled_from": f.before, "holes_filled": f.holes}
                b = f.board
            d = {"board": source if i == 0 else f"{source}#{i}", **score(inst, b).to_dict(),
                 **extra}
            try:
                d["url"] = board_url(inst, b)
            except UrlError:
                d["url"] = None
            out.append(d)
    return out


def url_score(url: str) -> dict:
    """The score of a board URL from its colours alone (grey is `a`, an empty cell
    `aaaa`; `colours_board`): matched joins, joins, holes.  Every lettering of the viewer
    gives the same score: an order relabels colours one to one and keeps `a` grey; an
    unknown `motifs_order` is refused (`parse_url`)."""
    from e2store.instance.url import colours_board
    from e2store.solver.boards import score

    return {"board": url, **score(*colours_board(url)).to_dict()}


def score_text(r: dict) -> str:
    from e2store.instance.parsing import shown_path

    board = shown_path(r["board"])  # a file name or URL: escaped, never a raw ESC
    lines = [f"board      {board if len(board) < 100 else board[:97] + '...'}",
             f"score      {r['score']} / {r['joins']} joins matched ({r['unmatched']} not: "
             f"{len(r['mismatched'])} mismatched, the rest at {r['holes']} holes)"]
    if "filled_from" in r:
        lines.append(f"filled     {r['holes_filled']} holes (score {r['filled_from']} before)")
    if r["mismatched"]:
        lines.append("mismatched " + " ".join(f"({m['cell'][0]},{m['cell'][1]}){m['side']}"
                                              for m in r["mismatched"][:40])
                     + (" ..." if len(r["mismatched"]) > 40 else ""))
    if r["frame_faults"]:
        lines.append("frame      colour on the frame at " + " ".join(
            f"({m['cell'][0]},{m['cell'][1]}){m['side']}" for m in r["frame_faults"][:20]))
    if r.get("url"):
        lines.append(f"url        {r['url']}")
    return "\n".join(lines)


def best_options(f):
    """The options of `solve --best` (applied to `solve`); their numbers range-checked
    (`e2store.cli.options`: no nan, no negative seed, no 10**40 nodes)."""
    from e2store.cli.options import COUNT, MINUTES
    from e2store.solver.schedules import (
        CLUES_SCHEDULE,
        DEFAULT_RESTART_NODES,
        DEFAULT_SCHEDULE,
        SCHEDULES,
    )

    opts = [
        click.option("--best", is_flag=True, help="Best-score search: the deepest boards and "
                     "most matched joins, letting joins mismatch from the --breaks depths on "
                     "(never on a frame colour); restarts with random tie-breaks; writes a "
                     "boards file (-o, default best-boards.parquet) and fills each best "
                     "board's holes for its full-board score."),
        click.option("--breaks", default="auto", show_default=True,
                     metavar="NAME|D1,D2,...", help="With --best: the scan depths from which "
                     f"the 1st, 2nd, ... mismatch is allowed, or a schedule: "
                     f"{', '.join(SCHEDULES)} (scaled from 256 cells to the board); `auto`: "
                     f"{CLUES_SCHEDULE} with --clues all, else {DEFAULT_SCHEDULE}."),
        click.option("--seed", "rng_seed", default=0, show_default=True, type=_SEED,
                     help="With --best: the random seed of the tie-breaks (restart k draws "
                     "from (seed, k): a run is reproducible restart by restart)."),
        click.option("--restart-nodes", type=COUNT,
                     default=DEFAULT_RESTART_NODES, show_default=True,
                     help="With --best: nodes per restart before new tie-breaks."),
        click.option("--restarts", type=COUNT, default=None,
                     help="With --best: stop after this many restarts."),
        click.option("--minutes", type=MINUTES, default=None,
                     help="With --best: stop after this much wall time."),
        click.option("--clues", default=None, metavar="centre|all", help="With --best on "
                     "Eternity II's pieces: fix the official clues (the centre one, or all "
                     "five)."),
        click.option("--quota", default="auto", show_default=True,
                     metavar="auto|none|blackwood|store|C1,C2,...", help="With --best: the "
                     "colour quota (Blackwood's heuristic): pieces showing these colours (ids "
                     "as in the file; `blackwood`: 13, 16, 10 of Eternity II; `store`: the "
                     "three whose pieces tile worst, from --store) tried first, and at least "
                     "as many of their sides placed by each depth as his curve asks; `auto`: "
                     "blackwood on Eternity II's pieces, none on other boards."),
        click.option("--order", type=click.Choice(("random", "store")), default="random",
                     show_default=True, help="With --best: the order of the candidates within "
                     "each list part: random, or `store`: the pieces that tile worst first "
                     "(hamming-1 corolles per piece, from --store), random among alike."),
        click.option("--no-fill", is_flag=True, help="With --best: do not fill the holes."),
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


def run_best_cli(inst, *, scan: str, fixed_value: str | None, clues: str | None, breaks: str,
                 quota: str, order: str, store: Path | None,
                 rng_seed: int, restart_nodes: int, restarts: int | None,
                 minutes: float | None, max_nodes: int | None, workers: int,
                 output: Path | None, as_json: bool, fill: bool,
                 kernel: str = "auto") -> None:
    """`solve --best`: run, save every restart's best board (and its filled board) to the
    boards file as it ends, print the report; exit 130 when stopped by Ctrl-C."""
    from e2store.errors import SolverError
    from e2store.files import exclusive_writer
    from e2store.solver.best import best_plan, clue_cells

    fixed = {}
    if clues is not None:
        fixed.update(clue_cells(inst, clues))
    if fixed_value is not None:
        from e2store.cli.solve import fixed_cells

        for cell, v in (fixed_cells(inst, fixed_value) or {}).items():
            if cell in fixed and fixed[cell] != v:
                raise SolverError(f"--fixed and --clues disagree on cell {cell}")
            fixed[cell] = v
    if breaks == "auto":
        from e2store.solver.schedules import CLUES_SCHEDULE, DEFAULT_SCHEDULE

        breaks = CLUES_SCHEDULE if clues == "all" else DEFAULT_SCHEDULE
    piece_rank = None
    if quota == "auto":
        from e2store.solver.best import eternity_ii

        quota = "blackwood" if eternity_ii(inst) else "none"
    if "store" in (order, quota):
        if store is None:
            raise SolverError("--order store and --quota store read the corolle store: give "
                              "--store DIR (its hamming-1 cartesian partitions are built "
                              "there when missing)")
        from e2store.solver.best_store import piece_order, quota_from_store, tileability

        tiles = tileability(store, inst)
        if quota == "store":
            quota = ",".join(map(str, quota_from_store(inst, tiles)))
        if order == "store":
            piece_rank = piece_order(inst, tiles)
    plan = best_plan(inst, scan, fixed or None, breaks, quota, piece_rank)  # bad: one line
    out = Path(output) if output is not None else Path(DEFAULT_BOARDS)
    with exclusive_writer(out, "boards file"):  # a second run on it is refused: no row lost
        _run_best_locked(inst, plan, out, scan=scan, fixed=fixed, breaks=breaks, quota=quota,
                         piece_rank=piece_rank, rng_seed=rng_seed,
                         restart_nodes=restart_nodes, restarts=restarts, minutes=minutes,
                         max_nodes=max_nodes, workers=workers, as_json=as_json, fill=fill,
                         kernel=kernel)


def _run_best_locked(inst, plan, out: Path, *, scan, fixed, breaks, quota, piece_rank,
                     rng_seed, restart_nodes, restarts, minutes, max_nodes, workers,
                     as_json, fill, kernel) -> None:
    """`run_best_cli`'s run, the boards file `out` held: resume, run, save, report."""
    from e2store.solver.best_run import restart_row, run_best
    from e2store.solver.boards import append_boards, make_boards, read_boards
    from e2store.solver.fill import fill_holes

    done: set[int] = set()
    if out.exists():  # a rerun adds to the file: its restarts not yet done are run
        old = read_boards(out, inst)  # checked: a damaged file is refused, never rewritten
        done = {int(k) for k, s in zip(old.stats["restart"], old.stats["seed"], strict=True)
                if int(s) == rng_seed}
    n = inst.width * inst.height
    show = BestProgress(workers, minutes, max_nodes, quiet=as_json)
    state: dict = {"filled": None}

    def on_result(r, run) -> None:
        cells, rows = [r.board], [restart_row(r, plan.full)]
        if fill:
            f = fill_holes(inst, r.board, seconds=10.0, keep=set(plan.fixed))
            cells.append(f.board)
            rows.append(restart_row(r, plan.full, "filled", score=f.score,
                                    holes=int((f.board < 0).sum()),
                                    mismatches=plan.full - f.score))
            if state["filled"] is None or f.score > state["filled"][0]:
                state["filled"] = (f.score, f.board, r)
        append_boards(out, inst, make_boards(n, cells, rows))
        show.restart(r, run, state["filled"][0] if state["filled"] else None)

    run = run_best(inst, scan=scan, fixed=fixed or None, breaks=breaks, quota=quota,
                   piece_rank=piece_rank, seed=rng_seed,
                   restart_nodes=restart_nodes, workers=workers,
                   seconds=None if minutes is None else minutes * 60, max_nodes=max_nodes,
                   restarts=restarts, done=done, on_result=on_result,
                   tick=show.tick if workers == 1 else None, kernel=kernel,
                   heartbeat=show.refresh)
    show.close()
    report = best_report(inst, run, plan, state["filled"], out)
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(best_text(inst, report))
    if run.ended == "interrupted":
        sys.exit(130)


class BestProgress:
    """The live line of `solve --best` on a terminal (restarts done, deepest depth, best
    score, best filled score, rate, time left) and, for `--status`, one line per worker:
    tqdm bars (`e2store.progress.progress_snapshot` reads them).  With --json or when
    stderr is no terminal the bars draw to nothing, but the status file still has them."""

    def __init__(self, workers: int, minutes: float | None, max_nodes: int | None, *,
                 quiet: bool) -> None:
        import os
        import sys
        import time

        from tqdm import tqdm

        from e2store.progress import progress_interval

        self._null = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        live = sys.stderr.isatty() and not quiet
        self.bar = tqdm(desc="best", unit="node", unit_scale=True, total=max_nodes,
                        mininterval=progress_interval(), leave=False,
                        file=sys.stderr if live else self._null, dynamic_ncols=True)
        self.workers = workers
        self.end = None if minutes is None else time.monotonic() + 60 * minutes
        self.per: dict[int, object] = {}
        self.count: dict[int, int] = {}
        self.found: dict[str, object] = {}

    def _left(self) -> str | None:
        import time

        if self.end is None:
            return None
        s = max(0, int(self.end - time.monotonic()))
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"

    def _postfix(self) -> None:
        parts = [f"{k}={v}" for k, v in self.found.items()]
        if (left := self._left()) is not None:
            parts.append(f"left={left}")
        self.bar.set_postfix_str(", ".join(parts), refresh=False)

    def tick(self, nodes: int) -> None:
        """One process: nodes done since the last call."""
        self._postfix()
        self.bar.update(nodes)

    def refresh(self) -> None:
        self._postfix()
        self.bar.refresh()

    def restart(self, r, run, filled: int | None) -> None:
        """A restart ended: the run's totals, and the line of the worker that ran it."""
        from tqdm import tqdm

        if self.workers > 1:
            self.bar.update(r.nodes)
            w = self.per.get(r.worker)
            if w is None:
                w = self.per[r.worker] = tqdm(desc=f"worker {len(self.per) + 1}",
                                              unit="node", file=self._null, leave=False)
                w.start_t = self.bar.start_t  # its rate over the run, as the run's
            self.count[r.worker] = self.count.get(r.worker, 0) + 1
            w.set_postfix(restarts=self.count[r.worker], depth=r.depth, score=r.score,
                          refresh=False)
            w.update(r.nodes)
        b = run.best
        self.found = {"restarts": len(run.results), "depth": b.depth, "score": b.score}
        if filled is not None:
            self.found["filled"] = filled
        self.refresh()

    def close(self) -> None:
        for w in self.per.values():
            w.close()
        self.bar.close()
        self._null.close()


def best_report(inst, run, plan, filled, out: Path) -> dict:
    from e2store.instance.url import UrlError, board_url

    def url(board):
        try:
            return board_url(inst, board)
        except UrlError:
            return None

    d = run.to_dict()
    d.update(instance_name=inst.name, joins=plan.full, fixed_cells=len(plan.fixed),
             boards_file=str(out),
             order="store" if plan.piece_rank is not None else "random")
    if run.best is not None:
        d["best"]["url"] = url(run.best.board)
    if filled is not None:
        score_, board, r = filled
        d["filled"] = {"score": score_, "depth": r.depth, "seed": r.seed,
                       "restart": r.restart, "board": board.tolist(), "url": url(board)}
    return d


def best_text(inst, d: dict) -> str:
    from e2store.instance.parsing import shown_path

    b = d.get("best")
    lines = [f"instance   {d['instance_name']} ({inst.width}x{inst.height}), scan {d['scan']}, "
             f"{d['fixed_cells']} fixed cells",
             f"breaks     {','.join(map(str, d['breaks'])) or 'none'}; colour quota "
             f"{','.join(map(str, d['quota'])) or 'none'}; order {d['order']}",
             f"restarts   {d['restarts']:,} of {d['restart_nodes']:,} nodes (seed {d['seed']}, "
             f"{d['workers']} workers), ended: {d['ended']}",
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
    lines.append(f"saved      {shown_path(d['boards_file'])}")
    return "\n".join(lines)
