"""Command line interface: `e2store COMMAND ...` (click)."""

from __future__ import annotations

import sys

import click

from e2store.errors import E2StoreError


class _Group(click.Group):
    """Turns every e2store error into one clear line on stderr and exit code 2, no traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except E2StoreError as exc:
            click.echo(f"e2store: error: {exc}", err=True)
            sys.exit(2)
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            click.echo(f"e2store: error: {exc.filename}: {exc.strerror}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="e2store")
def main() -> None:
    """e2store: corolle database and precomputation pipeline for edge-matching puzzles."""


def _register() -> None:
    from e2store.cli import (
        corolles as cli_corolles,
    )
    from e2store.cli import (
        counts as cli_counts,
    )
    from e2store.cli import (
        instance as cli_instance,
    )
    from e2store.cli import (
        openings as cli_openings,
    )
    from e2store.cli import (
        query as cli_query,
    )
    from e2store.cli import (
        render as cli_render,
    )
    from e2store.cli import (
        solve as cli_solve,
    )
    from e2store.cli import (
        stages as cli_stages,
    )
    from e2store.cli import (
        summary as cli_summary,
    )

    for cmd in (cli_instance.COMMANDS + cli_corolles.COMMANDS + cli_counts.COMMANDS
                + cli_summary.COMMANDS
                + cli_stages.COMMANDS + cli_query.COMMANDS + cli_render.COMMANDS
                + cli_solve.COMMANDS + cli_openings.COMMANDS):
        main.add_command(cmd)


_register()

if __name__ == "__main__":  # pragma: no cover
    main()
