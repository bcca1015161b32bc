"""The command line reference, docs/cli.md, generated from the click commands.

    python -m e2store.cli.reference > docs/cli.md

tests/test_cli_options.py fails when docs/cli.md is not what this prints.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from e2store.cli.command import command_names

WIDTH = 100


def _context(cmd: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(cmd, info_name=name, parent=parent, **settings)


def walk(group: click.Group | None = None, ctx: click.Context | None = None,
         ) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    """Every command under `group` (default: `e2store`), depth first, with its path and a
    help context: visible and hidden commands, not the deprecated aliases."""
    if group is None:
        from e2store.cli.main import main

        group, ctx = main, _context(main, "e2store", None)
    assert ctx is not None
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None:
            continue
        sub = _context(cmd, name, ctx)
        path = (*command_names(ctx), name)
        yield path, cmd, sub
        if isinstance(cmd, click.Group):
            yield from walk(cmd, sub)


def _help(cmd: click.Command, ctx: click.Context) -> str:
    return cmd.get_help(ctx).rstrip()


def command_table() -> str:
    """A Markdown table: one row per visible top-level command, its one-sentence purpose."""
    rows = ["| command | purpose |", "| --- | --- |"]
    for path, cmd, _ in walk():
        if len(path) == 1 and not cmd.hidden:
            rows.append(f"| `e2store {path[0]}` | {cmd.get_short_help_str(1000)} |")
    return "\n".join(rows)


def _deprecations() -> list[str]:
    from e2store.cli.main import ALIASES

    lines = ["| old spelling | new spelling |", "| --- | --- |"]
    for old, (path, _) in ALIASES.items():
        lines.append(f"| `e2store {old}` | `e2store {' '.join(path)}` |")
    lines.append("| `e2store solve INSTANCE --best` | `e2store best INSTANCE` |")
    for path, cmd, _ in walk():
        where = f"e2store {' '.join(path)}"
        for old, new in getattr(cmd, "legacy", {}).items():
            lines.append(f"| `{where} {old}` | "
                         + (f"`{where} {new}` |" if new else "(the default now) |"))
        if getattr(cmd, "legacy_store_positional", False):
            lines.append(f"| `{where} STORE` | `{where} --store STORE` |")
        if getattr(cmd, "legacy_json_file", False):
            lines.append(f"| `{where} --json FILE` | `{where} -o FILE` |")
    return lines


def render() -> str:
    """docs/cli.md."""
    from e2store.cli.main import main

    root = _context(main, "e2store", None)
    out = [
        "# e2store command line reference",
        "",
        "Generated from the click commands by `python -m e2store.cli.reference > docs/cli.md`;",
        "do not edit (a test checks that this file is up to date).",
        "",
        "Rules every command follows:",
        "",
        "* positional arguments are the inputs a command works on: piece files (INSTANCE),",
        "  reports, an SQL query;",
        "* the corolle store is always `--store DIR`; count shard records are `--records DIR`;",
        "* a file or directory a command writes is `-o/--output`;",
        "* `--json` prints JSON on stdout, never to a file, and nothing else goes there:",
        "  progress bars, notes and warnings are on stderr, however slow the run;",
        "* cells are `X,Y`, shards `K/S`, board sizes `N` or `WxH`;",
        "* an option that is not marked repeatable takes one value: given twice, it is a usage",
        "  error (exit 2), never \"the last one wins\".",
        "",
        "## Commands",
        "",
        command_table(),
        "",
        "Pipeline steps (run by the Snakemake rules, hidden from `e2store --help`): "
        "`e2store stage --help`.",
        "",
        "## e2store",
        "",
        "```text",
        _help(main, root),
        "```",
    ]
    for path, cmd, ctx in walk():
        out += ["", f"## e2store {' '.join(path)}", "", "```text", _help(cmd, ctx), "```"]
    out += ["", "## Deprecated spellings", "",
            "They work for one release, with a one-line note on stderr.", "",
            *_deprecations()]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    click.echo(render(), nl=False)
