"""Command line interface: `e2store COMMAND ...` (click).

Commands are imported when they are asked for (`LazyGroup`), and command modules import
the kernels (numba), pyarrow, duckdb and matplotlib inside their bodies: `e2store --help`
and the commands that run no kernel start fast.
"""

from __future__ import annotations

import contextlib
import errno
import sys
import warnings
from typing import NoReturn

try:  # Ctrl-C while Python loads the command line: one line, no traceback (`interrupted`)
    import click

    from e2store.cli.command import CONTEXT_SETTINGS, LazyGroup
    from e2store.errors import E2StoreError, E2StoreNote
except KeyboardInterrupt:
    sys.stderr.write("e2store: interrupted (Ctrl-C)\n")
    sys.exit(130)

# the visible commands, in the order of the help
COMMANDS = {
    "validate": "e2store.cli.instance:validate",
    "generate-instance": "e2store.cli.instance:generate_instance",
    "stats": "e2store.cli.instance:stats",
    "export-pieces": "e2store.cli.instance:export_pieces",
    "url": "e2store.cli.instance:url",
    "zones": "e2store.cli.corolles:zones",
    "count": "e2store.cli.corolles:count",
    "count-estimate": "e2store.cli.counts:count_estimate",
    "tabulate": "e2store.cli.counts:tabulate",
    "enumerate": "e2store.cli.corolles:enumerate_cmd",
    "expand": "e2store.cli.corolles:expand",
    "summary": "e2store.cli.summary:summary",
    "verify": "e2store.cli.summary:verify",
    "migrate": "e2store.cli.summary:migrate",
    "tables": "e2store.cli.summary:tables",
    "plot": "e2store.cli.summary:plot",
    "sql": "e2store.cli.query:sql",
    "build-db": "e2store.cli.query:build_db",
    "export-closures": "e2store.cli.query:export_closures",
    "serve": "e2store.cli.serve:serve",
    "render": "e2store.cli.render:render",
    "openings": "e2store.cli.openings:openings_cmd",
    "solve": "e2store.cli.solve:solve_cmd",
    "best": "e2store.cli.solve:best_cmd",
    "campaign": "e2store.cli.campaign:campaign",
    "score": "e2store.cli.score:score_cmd",
    "save-boards": "e2store.cli.score:save_boards",
    "compact-boards": "e2store.cli.boards:compact_boards",
    "crosscheck": "e2store.cli.exact:crosscheck",
    "export-cnf": "e2store.cli.exact:export_cnf",
    "stage": "e2store.cli.stage:stage",  # hidden: the pipeline's steps
}


def _solve_merge_json(args: list[str]) -> list[str]:
    """`solve-merge` printed the merged JSON unless it wrote a file: keep that."""
    writes = any(a in ("-o", "--output", "--out") or a.startswith(("--out=", "--output="))
                 for a in args)
    return args if writes else [*args, "--json"]


# old command names: hidden, working for one release, with a note on stderr
ALIASES = {
    "plan": (("stage", "plan"), None),
    "shard": (("stage", "shard"), None),
    "gather": (("stage", "gather"), None),
    "rotate": (("stage", "rotate"), None),
    "encode": (("stage", "encode"), None),
    "count-plan": (("stage", "count-plan"), None),
    "count-shard": (("stage", "count-shard"), None),
    "count-tables": (("stage", "count-gather"), None),
    "solve-merge": (("stage", "solve-gather"), _solve_merge_json),
    "counts": (("tabulate",), None),
}


class MainGroup(LazyGroup):
    """Turns every e2store error into one clear line on stderr and exit code 2, no traceback;
    click's usage errors too (`OneLineUsageError`); a Ctrl-C no command handled (Python
    still importing, a command that keeps nothing) into one line and exit code 130
    (`interrupted`), not click's `Aborted!` and exit code 1."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            with one_line_usage_errors():  # options of `e2store` itself: `e2store --bogus`
                return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            interrupted()

    def invoke(self, ctx: click.Context):
        try:
            with one_line_usage_errors(), notes_on_stderr():  # a command's: parsed as invoked
                return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()
        except E2StoreError as exc:
            error_line(_with_flag(self, ctx, exc))
            sys.exit(2)
        except BrokenPipeError:  # the reader of stdout went away: not an error of ours
            raise
        except OSError as exc:  # a file missing or unreadable, a full disk, ...
            error_line(os_error_text(exc))
            sys.exit(2)
        except MemoryError:
            error_line("out of memory (lower --threads, --workers or --memory-budget, or use "
                       "a machine with more memory)")
            sys.exit(2)


def _with_flag(group: click.Group, ctx: click.Context, exc: E2StoreError) -> str:
    """The error's line, led by the flag of the command that sets the library parameter it
    blames (`exc.option`), when the command has one."""
    text = str(exc)
    if exc.option is None or ctx.invoked_subcommand is None:
        return text
    command = group.get_command(ctx, ctx.invoked_subcommand)
    flag = "--" + exc.option.replace("_", "-")
    params = command.params if command is not None else []
    if any(flag in p.opts for p in params) and not text.startswith(flag):
        return f"{flag}: {text}"
    return text


@contextlib.contextmanager
def notes_on_stderr():
    """Show the library's notes (`E2StoreNote` warnings) as `e2store: note: ...` lines on
    stderr, each message once; other warnings as Python shows them."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, E2StoreNote):
            click.echo(f"e2store: note: {one_line(str(message))}", err=True)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("once", E2StoreNote)
        warnings.showwarning = show
        yield


def one_line(text: str) -> str:
    """`text` on one line, every character printable: a newline, a terminal escape
    sequence (ESC) or another control character from a file name, a URL or a value given
    on the command line is shown escaped (`\\n`, `\\x1b`), never sent to the terminal raw."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text.strip())


def interrupted() -> NoReturn:
    """Ctrl-C: `e2store: interrupted (Ctrl-C)` on stderr and exit code 130 (a shell's code
    for SIGINT).  A command that keeps part of its work says what itself (`solve`, `sql`)."""
    click.echo("e2store: interrupted (Ctrl-C)", err=True)
    sys.exit(130)


def error_line(message: str) -> None:
    """`e2store: error: MESSAGE` on stderr: one line, escaped (`one_line`)."""
    click.echo(f"e2store: error: {one_line(message)}", err=True)


class OneLineUsageError(click.UsageError):
    """A click usage error shown on one line, `e2store: error: MESSAGE (see `e2store CMD
    --help`)`, instead of click's three or four (usage, `Try ... for help.`, a blank line,
    `Error: ...`); exit code 2 as click's."""

    def show(self, file=None) -> None:
        where = self.ctx.command_path if self.ctx is not None else "e2store"
        message = one_line(self.format_message())
        if message.endswith(".") and not message.endswith(".."):
            message = message[:-1]  # click's full stop: the hint ends the sentence
        click.echo(f"e2store: error: {message} (see `{where} --help`)", file=file,
                   err=file is None)


@contextlib.contextmanager
def one_line_usage_errors():
    """Raise click's usage errors (a missing argument, a bad value, an unknown command or
    option) as `OneLineUsageError`, same message and exit code; a bare group's help
    (`NoArgsIsHelpError`) is left as it is."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise
    except OneLineUsageError:
        raise
    except click.UsageError as exc:
        out = OneLineUsageError(" ".join(exc.format_message().split("\n")), exc.ctx)
        setattr(out, "exit_code", exc.exit_code)  # noqa: B010 - a class variable in click 8.5's types
        raise out from None


def os_error_text(exc: OSError) -> str:
    """One line for an OSError: the file (when the error names one), what went wrong, and
    for a full disk what to do."""
    where = f"{exc.filename}: " if exc.filename else ""
    what = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        what += " (free some space and run the command again: finished work is kept)"
    return where + what


@click.group("e2store", cls=MainGroup, lazy=COMMANDS, aliases=ALIASES,
             context_settings=CONTEXT_SETTINGS,
             epilog="\b\nRun `e2store COMMAND --help` for a command's options and examples.\n"
                    "Pipeline steps (the Snakemake rules run them): `e2store stage --help`.")
@click.version_option(package_name="e2store")
def main() -> None:
    """e2store: corolle database and precomputation pipeline for edge-matching puzzles.

    Instances are piece files (INSTANCE); a store is a directory of Parquet partitions
    (--store DIR); files a command writes are named with -o/--output; --json prints JSON
    on stdout.
    """


if __name__ == "__main__":  # pragma: no cover
    main()
