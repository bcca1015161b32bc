"""`e2store score [INSTANCE] BOARD...`: the score of full or partial boards (one call of
`e2store.solver.best.score_boards` or `score_url`), printed as text or JSON; and
`e2store save-boards INSTANCE BOARDS -o DIR`: the best boards of a boards file or dataset
as Blackwood-style saved-board files (one call of
`e2store.solver.saved_boards.write_saved_boards`)."""

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
])
@click.argument("args", nargs=-1, required=True, metavar="[INSTANCE] BOARD...")
@click.option("--fill", is_flag=True, help="Fill the holes first (the leftover pieces placed "
              "to match most joins) and score the full board.")
@json_option("Print one JSON object per board on stdout.")
def score_cmd(args: tuple[str, ...], fill: bool, as_json: bool) -> None:
    """Score a full or partial board: matched inner joins out of 2*W*H-W-H (480 on Eternity
    II), the mismatched joins, holes and frame faults.

    BOARD is a board URL (e2.bucas.name: scored from its colours alone, no INSTANCE
    needed), a file of `x y piece r` lines (holes allowed), a boards file or dataset
    (`solve --best -o FILE|DIR`) or a solutions file; the files need the INSTANCE whose
    pieces they place.
    """
    from e2store.errors import SolverError
    from e2store.instance.url import is_url
    from e2store.solver.best import score_boards, score_url

    if len(args) == 1 and is_url(args[0]):
        reports = [score_url(args[0])]
    elif len(args) < 2:
        raise SolverError(f"{args[0]}: a board file needs the instance it places pieces of: "
                          f"`e2store score INSTANCE BOARD`")
    else:
        reports = score_boards(load_instance(Path(args[0]), "auto", None, None), args[1:],
                               fill)
    for r in reports:
        if as_json:
            click.echo(json.dumps(r))
        else:
            click.echo(score_text(r))


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

    BOARDS is a boards file or dataset (`solve --best -o FILE|DIR`) of INSTANCE's
    boards, read and checked; the boards are taken by score, then depth, a board met
    twice written once.  Files are named `<depth>_<md5>_s<seed>-r<restart>.txt`
    (docs/store-format.md, *Saved-board files*): an export run again rewrites the same
    files.  `score` and `render board --board FILE` read them back.  Prints each path,
    the best first.
    """
    from e2store.instance.parsing import shown_path
    from e2store.solver.saved_boards import write_saved_boards

    inst = load_instance(instance, fmt, sides, size)
    for path in write_saved_boards(inst, boards, output, min_depth=min_depth,
                                   min_score=min_score, top=top):
        click.echo(shown_path(path))
