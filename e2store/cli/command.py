"""The command and group classes every e2store command uses.

`Command` (a click.Command):

* refuses a single-value option given twice (click would silently keep the last one):
  exit 2, `Option '--hamming' was given 2 times ...`;
* rewrites the old spellings a command declares (`legacy={"--out": "--store"}`, a positional
  store, `--json FILE`) into the new ones, with a one-line deprecation note on stderr;
* takes `examples=[...]` (an epilog) and sets `short_help` to the first paragraph of the
  help, so that group listings never cut a description.

`LazyGroup` (a click.Group) imports a command's module only when the command is asked for
(a `name -> "module:attribute"` table), and resolves deprecated command names (hidden
aliases) to their new place with a note.
"""

from __future__ import annotations

import importlib
import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import click

from e2store.cli.options import examples as _format_examples
from e2store.cli.options import note

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def first_paragraph(text: str) -> str:
    """The first paragraph of a help text, on one line."""
    para = inspect.cleandoc(text).split("\n\n")[0]
    return " ".join(line.strip() for line in para.splitlines() if line.strip() != "\b")


def command_names(ctx: click.Context) -> list[str]:
    """The command names from the root to `ctx`, without the program's name."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return names[::-1]


class _Tok(str):
    """A command-line token with its own identity (to find it again after a parse)."""


class Command(click.Command):
    """An e2store command: one value per single-value option, old spellings rewritten."""

    def __init__(self, *args: Any, legacy: dict[str, str | None] | None = None,
                 legacy_store_positional: bool = False, legacy_json_file: bool = False,
                 examples: Sequence[str] | None = None, **kwargs: Any) -> None:
        if examples:
            kwargs.setdefault("epilog", _format_examples(*examples))
        super().__init__(*args, **kwargs)
        if self.short_help is None and self.help:
            self.short_help = first_paragraph(self.help)
        self.legacy = dict(legacy or {})
        self.legacy_store_positional = legacy_store_positional
        self.legacy_json_file = legacy_json_file

    # -- old spellings ---------------------------------------------------------------------
    def _rename_legacy_options(self, args: list[str]) -> list[str]:
        out: list[str] = []
        noted: set[str] = set()
        for i, tok in enumerate(args):
            if tok == "--":
                out += args[i:]
                break
            name, eq, value = tok.partition("=") if tok.startswith("--") else (tok, "", "")
            if name in self.legacy:
                new = self.legacy[name]
                if name not in noted:
                    noted.add(name)
                    note(f"{name} is deprecated: " + (f"use {new}" if new else
                                                      "it is the default now"))
                if new is None:
                    continue
                tok = new + eq + value
            out.append(tok)
        return out

    def _fixed_positionals(self) -> int | None:
        n = 0
        for p in self.params:
            if isinstance(p, click.Argument):
                if p.nargs < 0:
                    return None
                n += p.nargs
        return n

    def _rewrite_legacy_positionals(self, ctx: click.Context, args: list[str]) -> list[str]:
        """A positional store (first positional beyond the command's own) -> --store, and
        `--json FILE` (FILE a positional beyond the command's own) -> -o FILE."""
        n_max = self._fixed_positionals()
        if n_max is None:
            return args
        toks = [_Tok(t) for t in args]
        try:
            opts, largs, _ = self.make_parser(ctx).parse_args(args=list(toks))
        except click.ClickException:
            return args
        ids = {id(t) for t in largs}
        for p in self.params:
            if isinstance(p, click.Argument):
                v = opts.get(p.name)
                for t in (v if isinstance(v, (list, tuple)) else [v]):
                    ids.add(id(t))
        positional = [t for t in toks if id(t) in ids]
        extra = len(positional) - n_max
        insert_store: int | None = None
        if self.legacy_store_positional and extra > 0 and opts.get("store") is None:
            first = positional.pop(0)
            insert_store = next(i for i, t in enumerate(toks) if t is first)
            extra -= 1
            note("the store as a positional argument is deprecated: use --store DIR")
        if self.legacy_json_file and extra > 0:
            rest = {id(t) for t in positional}
            for i, t in enumerate(toks[:-1]):
                if t == "--json" and id(toks[i + 1]) in rest:
                    toks[i] = _Tok("-o")
                    note("--json FILE is deprecated: use -o FILE (--json prints JSON on "
                         "stdout)")
                    break
        out = [str(t) for t in toks]
        if insert_store is not None:
            out.insert(insert_store, "--store")
        return out

    # -- one value per option --------------------------------------------------------------
    def _refuse_repeats(self, ctx: click.Context, args: list[str]) -> None:
        try:
            _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except click.ClickException:
            return  # the real parse reports it
        if any(getattr(p, "is_eager", False) for p in order):
            return  # --help
        for param, n in Counter(order).items():
            if (isinstance(param, click.Option) and n > 1 and not param.multiple
                    and not param.count):
                name = max(param.opts, key=len)
                raise click.BadOptionUsage(
                    name, f"Option '{name}' was given {n} times: it takes one value, give it "
                    f"once.", ctx=ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = list(args)
        if not ctx.resilient_parsing:
            if self.legacy:
                args = self._rename_legacy_options(args)
            if self.legacy_store_positional or self.legacy_json_file:
                args = self._rewrite_legacy_positionals(ctx, args)
            self._refuse_repeats(ctx, args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # click's parser leaves some without their command
            if exc.ctx is None:
                exc.ctx = ctx
            raise


def command(name: str, **kwargs: Any) -> Callable[[Callable], Command]:
    """`click.command(name, cls=Command, ...)`."""
    return click.command(name, cls=Command, **kwargs)


Alias = tuple[tuple[str, ...], Callable[[list[str]], list[str]] | None]


class LazyGroup(click.Group):
    """A group whose commands are imported on demand, with hidden deprecated aliases."""

    command_class = Command

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None,
                 aliases: dict[str, Alias] | None = None,
                 examples: Sequence[str] | None = None, **kwargs: Any) -> None:
        if examples:
            kwargs.setdefault("epilog", _format_examples(*examples))
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)
        if self.short_help is None and self.help:
            self.short_help = first_paragraph(self.help)
        self.lazy = dict(lazy or {})
        self.aliases = dict(aliases or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy) + [n for n in self.commands if n not in self.lazy]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in self.lazy:
            module, _, attr = self.lazy[cmd_name].partition(":")
            cmd = getattr(importlib.import_module(module), attr)
            self.commands[cmd_name] = cmd
            return cmd
        if cmd_name in self.aliases:
            target: click.Command | None = self
            for part in self.aliases[cmd_name][0]:
                assert isinstance(target, click.Group)
                target = target.get_command(ctx, part)
            return target
        return None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name, cmd, rest = super().resolve_command(ctx, args)
        if name in self.aliases and not ctx.resilient_parsing:
            path, fix = self.aliases[name]
            here = command_names(ctx)
            new = " ".join(["e2store", *here, *path])
            old = " ".join(["e2store", *here, name])
            note(f"`{old}` is deprecated: use `{new}`")
            if fix is not None:
                rest = fix(list(rest))
        return name, cmd, rest


class Group(click.Group):
    """A plain group of e2store commands (e.g. `render`)."""

    command_class = Command

    def __init__(self, *args: Any, examples: Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        if examples:
            kwargs.setdefault("epilog", _format_examples(*examples))
        super().__init__(*args, **kwargs)
        if self.short_help is None and self.help:
            self.short_help = first_paragraph(self.help)
