"""`e2store score [INSTANCE] BOARD...`: the score of full or partial boards, each said
where it comes from, all or the best few (one call of
`e2store.solver.best.score_boards`, or `e2store.solver.best.score_url` of a
URL alone), printed as text or JSON, joins and cells named as the field and the pictures
name them (B6-C6); and `e2store save-boards INSTANCE BOARDS -o DIR`: the best boards of a
boards file or dataset as Blackwood-style saved-board files (one call of
`e2store.boards.saved.write_saved_boards`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.checked import COUNT, INDEX
from e2store.cli.command import command
from e2store.cli.options import (
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
)


@command("score", examples=[
    "e2store score 'https://e2.bucas.name/#puzzle=...&board_w=16&board_h=16&board_edges=...'",
    "e2store score e2_gallicchio.puz board.txt",
    "e2store score e2_gallicchio.puz best-boards.parquet --json",
    "e2store score e2_gallicchio.puz best/ --top 5",
    "e2store score e2_gallicchio.puz 'https://e2.bucas.name/#puzzle=...' --improve",
    "e2store score e2_gallicchio.puz best/ --best --json",
])
@click.argument("args", nargs=-1, required=True, metavar="[INSTANCE] BOARD...")
@click.option("--fill", is_flag=True, help="Fill the holes first (the leftover pieces placed "
              "to match most joins) and score the full board.")
@click.option("--improve", is_flag=True, help="Fill the holes, then re-solve the board's "
              "tail exactly (its last 16, 24, 32 cells in the best-score search's scan, the "
              "rest fixed, while each is proven optimal within 2 M nodes / 3 s) and score "
              "the result: never lower.")
@click.option("--top", type=COUNT, default=None, metavar="N",
              help="Only the N best boards, the best first: by score (with --fill: of the "
              "filled board), then depth; a board met twice listed once (as save-boards "
              "--top takes them).")
@click.option("--best", is_flag=True, help="Only the best board (--top 1).")
@json_option("Print one JSON object per board on stdout.")
def score_cmd(args: tuple[str, ...], fill: bool, improve: bool, top: int | None,
              best: bool, as_json: bool) -> None:
    """Score a full or partial board: matched inner joins out of 2*W*H-W-H (480 on Eternity
    II), the mismatched joins, holes and frame faults.

    BOARD is a board URL (e2.bucas.name: scored from its colours alone, no INSTANCE
    needed), a file of `x y piece r` lines (holes allowed), a saved-board file
    (`save-boards`), a boards file or dataset (`e2store best -o FILE|DIR`) or a solutions
    file; the files need the INSTANCE whose pieces they place.

    Each board is labelled with where it comes from: the source, its row of the source's
    rows (what `render board --index` takes), and the arm, seed, restart, source (best:
    a restart's deepest board; filled: that board with its holes filled) and depth the
    file holds, then the file holding it (a dataset's part).  Joins are named by their two
    cells as the field and the pictures name cells (rows A.. from the north, columns 1..
    from the west): B6-C6 is the join of B6 and the cell south of it, B6-B7 of B6 and the
    cell east of it; a frame fault by its cell and side (A3 N).  JSON gives each board the
    keys of its origin (null where unknown), its counts and URL, and each join its `cell`
    (x, y), `side` (E or S; of a frame fault W, N, E or S) and `name`.
    """
    from e2store.boards.sources import ORIGIN_KEYS
    from e2store.errors import SolverError
    from e2store.instance.url import is_url
    from e2store.solver.best import score_boards, score_url

    if best and top is not None:
        raise click.UsageError("--best and --top both choose how many boards (expected "
                               "one: --best is --top 1)")
    if best:
        top = 1
    if len(args) == 1 and is_url(args[0]):
        reports = [{**dict.fromkeys(ORIGIN_KEYS), "row": 0, "rows": 1, **score_url(args[0]),
                    "url": args[0]}]  # the keys a board read with its instance has
    elif len(args) < 2:
        raise SolverError(f"{args[0]}: a board file needs the instance it places pieces of: "
                          f"`e2store score INSTANCE BOARD`")
    else:
        inst = load_instance(Path(args[0]), "auto", None, None)
        reports = score_boards(inst, args[1:], fill=fill, top=top, improve=improve)
    for r in reports:
        r = named(r)
        click.echo(json.dumps(r) if as_json else score_text(r))


def join_name(x: int, y: int, side: str) -> str:
    """The field's name of the join on side `side` (E or S) of cell (x, y): its two cells
    (`cell_name`), the west or north one first: (5, 1) S is B6-C6."""
    from e2store.reports.render import cell_name

    dx, dy = {"E": (1, 0), "S": (0, 1)}[side]
    return f"{cell_name(x, y)}-{cell_name(x + dx, y + dy)}"


def named(r: dict) -> dict:
    """The report `r` with a `name` for each mismatched join (`join_name`) and each frame
    fault (its cell and side: A3 N), as the pictures name cells."""
    from e2store.reports.render import cell_name

    return {**r, "mismatched": [{**m, "name": join_name(m["cell"][0], m["cell"][1], m["side"])}
                                for m in r["mismatched"]],
            "frame_faults": [{**m, "name": f"{cell_name(*m['cell'])} {m['side']}"}
                             for m in r["frame_faults"]]}


def board_label(r: dict) -> str:
    """Where the board of report `r` comes from, in one line: the source as given (cut to
    100 characters), its row of the source's rows, then the arm, seed, restart, source and
    depth it holds, and the file holding it when that is not the source itself."""
    from e2store.instance.parsing import shown_path

    given = shown_path(r["board"])  # a file name or URL: escaped, never a raw ESC
    text = given if len(given) < 100 else given[:97] + "..."
    if r["rows"] > 1:
        text += f" row {r['row']} of {r['rows']}"
    said = [f"{k} {r[k]}" for k in ("arm", "seed", "restart", "source", "depth")
            if r.get(k) is not None]
    if said:
        text += ": " + ", ".join(said)
    if r["file"] is not None and r["file"] != r["board"]:
        text += f" (in {shown_path(r['file'])})"
    return text


def score_text(r: dict) -> str:
    from e2store.instance.parsing import shown_path

    lines = [f"board      {board_label(r)}",
             f"score      {r['score']} / {r['joins']} joins matched ({r['unmatched']} not: "
             f"{len(r['mismatched'])} mismatched, the rest at {r['holes']} holes)"]
    if "filled_from" in r:
        lines.append(f"filled     {r['holes_filled']} holes (score {r['filled_from']} before)")
    if "improved_from" in r:
        lines.append(f"improved   {r['improved_from']} -> {r['score']}: the tail re-solved "
                     + (f"exactly, its last {r['tail_k']} cells proven optimal" if r["tail_k"]
                        else "within its caps (no K proven optimal)")
                     + f" ({r['tail_nodes']:,} nodes, {r['tail_seconds']:.2f} s)")
    if r["mismatched"]:
        lines.append("mismatched " + " ".join(m["name"] for m in r["mismatched"][:40])
                     + (" ..." if len(r["mismatched"]) > 40 else ""))
    if r["frame_faults"]:
        lines.append("frame      colour on the frame at " + " ".join(
            m["name"] for m in r["frame_faults"][:20]))
    if r.get("url"):  # a URL given: escaped as its name is
        lines.append(f"url        {shown_path(r['url'])}")
    return "\n".join(lines)


@command("save-boards", examples=[
    "e2store save-boards e2_gallicchio.puz best/ -o saved/",
    "e2store save-boards e2_gallicchio.puz best.parquet -o saved/ --top 3 --min-score 460",
])
@instance_argument
@click.argument("boards", type=click.Path(path_type=Path), metavar="BOARDS")
@output_option("Directory of the saved-board files (created if missing).", required=True,
               directory=True)
@click.option("--top", type=COUNT, default=10, show_default=True, metavar="N",
              help="Write at most N boards, the best first.")
@click.option("--min-score", type=INDEX, default=None, metavar="S",
              help="Only boards of at least this score.")
@click.option("--min-depth", type=INDEX, default=None, metavar="D",
              help="Only boards of at least this depth (Blackwood saves depth >= 252).")
@instance_options
def save_boards(instance: Path, boards: Path, output: Path, top: int, min_score: int | None,
                min_depth: int | None, fmt: str, sides: str | None, size) -> None:
    """Write the best boards of a boards file or dataset as Blackwood-style saved-board
    files, one text file each: the rows north first, each cell `piece/r`, then the
    board's e2.bucas.name URL.

    BOARDS is a boards file or dataset (`e2store best -o FILE|DIR`) of INSTANCE's
    boards, read and checked; the boards are taken by score, then depth, a board met
    twice written once.  Files are named `<depth>_<md5>_s<seed>-r<restart>.txt`
    (docs/store-format.md, *Saved-board files*): an export run again rewrites the same
    files.  `score` and `render board --board FILE` read them back.  Prints each path,
    the best first.
    """
    from e2store.boards.saved import write_saved_boards
    from e2store.instance.parsing import shown_path

    inst = load_instance(instance, fmt, sides, size)
    for path in write_saved_boards(inst, boards, output, min_depth=min_depth,
                                   min_score=min_score, top=top):
        click.echo(shown_path(path))
