"""Store summary command: `e2store summary STORE [-o OUT.md] [--json OUT.json]`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .formats import read_instance
from .store import atomic_write_text
from .summary import format_markdown, summarize


def _instance_id(value: str) -> str:
    """An instance id, or the id of the instance in the piece file `value` when it exists."""
    path = Path(value)
    return read_instance(path).id if path.is_file() else value


@click.command("summary")
@click.argument("store", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", "md_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the Markdown report here (atomically).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the summary as JSON here (atomically).")
@click.option("--instance", "instances", multiple=True, metavar="ID|FILE",
              help="Only this instance (id, or a piece file whose id is used); repeatable.")
@click.option("--hamming", "hammings", multiple=True, type=click.IntRange(min=0),
              help="Only this hamming; repeatable.")
def summary(store: Path, md_out: Path | None, json_out: Path | None,
            instances: tuple[str, ...], hammings: tuple[int, ...]) -> None:
    """Summarise a store per instance and hamming: zones, corolles, bytes, nodes, time.

    Prints the Markdown report unless -o or --json is given.  Every chosen instance and
    hamming must be in the store.
    """
    ids = [_instance_id(v) for v in instances] or None
    result = summarize(store, ids, list(hammings) or None)
    text = format_markdown(result)
    if md_out is not None:
        atomic_write_text(md_out, text)
        click.echo(f"wrote {md_out}")
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(result, indent=1) + "\n")
        click.echo(f"wrote {json_out}")
    if md_out is None and json_out is None:
        click.echo(text, nl=False)


COMMANDS = [summary]
