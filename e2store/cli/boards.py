"""`e2store compact-boards DIR`: a boards dataset's parts merged into compacted files, many
restarts to a file (one call of `e2store.boards.dataset.compact_boards_dataset`),
its report printed as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.boards.dataset import COMPACT_MIN_PARTS, COMPACT_RESTARTS
from e2store.cli.checked import BoundedInt
from e2store.cli.command import command
from e2store.cli.options import json_option


@command("compact-boards", examples=[
    "e2store compact-boards results/best/boards/",
    "e2store compact-boards best/ --instance e2_gallicchio.puz --json",
])
@click.argument("dataset", type=click.Path(file_okay=False, path_type=Path), metavar="DIR")
@click.option("--instance", "instance", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="PIECE_FILE", help="The dataset's instance: every board "
              "is recounted before it is merged, not only its file's digest checked.")
@click.option("--arm", default=None, metavar="NAME", help="Compact this arm alone "
              "(default: every arm).")
@click.option("--min-parts", type=BoundedInt(1), default=COMPACT_MIN_PARTS, show_default=True,
              help="Leave a seed's parts as they are when it has fewer.")
@click.option("--max-restarts", type=BoundedInt(1), default=COMPACT_RESTARTS,
              show_default=True, help="Restarts a compacted file holds at most.")
@json_option("Print the report as one JSON object on stdout.")
def compact_boards(dataset: Path, instance: Path | None, arm: str | None, min_parts: int,
                   max_restarts: int, as_json: bool) -> None:
    """Compact a boards dataset (`e2store best -o DIR`): the parts of each arm and seed
    (one file per restart) merged into compacted files of many restarts each, every part
    checked first, then removed; the dataset reads the same, many times faster.

    A seed a run is writing is skipped (said so); run it again when the run ends.  A
    damaged part is refused, naming it, and nothing of its batch written or removed.  Safe
    to run again after it was killed: it removes what a killed run left.
    """
    from e2store.boards.dataset import compact_boards_dataset
    from e2store.cli.options import load_instance

    inst = None if instance is None else load_instance(instance)
    report = compact_boards_dataset(dataset, inst, arm=arm, min_parts=min_parts,
                                    max_restarts=max_restarts)
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(compact_text(report))


def compact_text(r: dict) -> str:
    from e2store.instance.parsing import shown_path

    lines = [f"arm={c['arm']} seed {c['seed']}: {c['parts']:,} parts ({c['rows']:,} boards) "
             f"-> {c['file']}" for c in r["compacted"]]
    lines += [f"arm={s['arm']} seed {s['seed']}: left as it is ({s['why']})"
              for s in r["skipped"]]
    if r["leftovers_removed"]:
        lines.append(f"removed {r['leftovers_removed']:,} parts a killed compaction left "
                     f"(their rows checked the same as their compacted file's)")
    checked = "digests and recounts" if r["recounted"] else "digests"
    lines.append(f"{shown_path(r['dataset'])}: {len(r['compacted'])} compacted files written, "
                 f"{r['parts_removed']:,} parts merged ({checked} checked) in "
                 f"{r['seconds']:.1f} s")
    return "\n".join(lines)
