"""Shared pieces of every command: parameter types, common options, and library constants.

Parameter types (click.ParamType): `CELL` / `CELLS` (`X,Y`), `SHARD` (`K/S`), `SIZE`
(`N` or `WxH`): cells, shards and sizes are parsed here and nowhere else.  Numbers:
`BoundedInt`, `FiniteFloat` and the shared types built from them (`SEED`, `WORKERS`,
`MINUTES`, `SECONDS`, `HAMMING`, `SIDE`, `COUNT`, `INDEX`), from `e2store.cli.checked`:
every number of the command line is range-checked there, before any code uses it.

Common options: `instance_argument`, `instance_options` (--format/--sides/--size),
`hamming_option`, `threads_option`, `store_option`, `json_option`, `output_option`.

Library constants (re-exported): the defaults and choices the options show, each declared
once in its stage's light `defaults` module (`e2store.store.defaults`, `corolles`,
`query`, `solver`): `FORMS` (every storage form), `RAW_FORMS` (those holding every
corolle), `MAX_SHARDS`, `DEFAULT_SAMPLES`, `DEFAULT_TAIL`, `SCAN_ORDERS`,
`DEFAULT_SCAN` (the exact search's), `KERNELS`, `AUTO_MIN_DEPTHS`,
`DEFAULT_MAX_STORED`, `DEFAULT_FINALS_HAMMING`, `DUCKDB_ALLOCATOR_ENV`.

This module imports no heavy library (no numba, pyarrow, duckdb, matplotlib): it is loaded
for `e2store --help`; tests/test_cli_options.py checks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from e2store.cli.checked import (
    COUNT as COUNT,
)
from e2store.cli.checked import (
    HAMMING as HAMMING,
)
from e2store.cli.checked import (
    INDEX as INDEX,
)
from e2store.cli.checked import (
    MAX_COUNT as MAX_COUNT,
)
from e2store.cli.checked import (
    MAX_HAMMING as MAX_HAMMING,
)
from e2store.cli.checked import (
    MAX_INT64 as MAX_INT64,
)
from e2store.cli.checked import (
    MAX_MINUTES as MAX_MINUTES,
)
from e2store.cli.checked import (
    MAX_SECONDS as MAX_SECONDS,
)
from e2store.cli.checked import (
    MAX_SEED as MAX_SEED,
)
from e2store.cli.checked import (
    MAX_WORKERS as MAX_WORKERS,
)
from e2store.cli.checked import (
    MINUTES as MINUTES,
)
from e2store.cli.checked import (
    SECONDS as SECONDS,
)
from e2store.cli.checked import (
    SEED as SEED,
)
from e2store.cli.checked import (
    SIDE as SIDE,
)
from e2store.cli.checked import (
    WORKERS as WORKERS,
)
from e2store.cli.checked import (  # re-exported: every command imports them from here
    BoundedInt as BoundedInt,
)
from e2store.cli.checked import (
    FiniteFloat as FiniteFloat,
)
from e2store.cli.checked import (
    read_json_file as read_json_file,
)
from e2store.cli.checked import (
    short as short,
)
from e2store.corolles.defaults import DEFAULT_SAMPLES as DEFAULT_SAMPLES
from e2store.corolles.defaults import DEFAULT_TAIL as DEFAULT_TAIL
from e2store.instance.model import MAX_PIECES
from e2store.instance.parsing import Size
from e2store.query.defaults import DEFAULT_FINALS_HAMMING as DEFAULT_FINALS_HAMMING
from e2store.query.defaults import DEFAULT_MEMORY_LIMIT, MIN_MEMORY_LIMIT
from e2store.query.defaults import DUCKDB_ALLOCATOR_ENV as DUCKDB_ALLOCATOR_ENV
from e2store.solver.defaults import AUTO_MIN_DEPTHS as AUTO_MIN_DEPTHS
from e2store.solver.defaults import DEFAULT_MAX_STORED as DEFAULT_MAX_STORED
from e2store.solver.defaults import DEFAULT_SCAN as DEFAULT_SCAN
from e2store.solver.defaults import KERNELS as KERNELS
from e2store.solver.defaults import SCAN_ORDERS as SCAN_ORDERS
from e2store.store.defaults import FORMS as FORMS
from e2store.store.defaults import MAX_SHARDS as MAX_SHARDS
from e2store.store.defaults import RAW_FORMS as RAW_FORMS

Cell = tuple[int, int]

def note(message: str) -> None:
    """One line on stderr: `e2store: note: ...` (deprecations, hints)."""
    click.echo(f"e2store: note: {message}", err=True)


# -- parameter types ----------------------------------------------------------------------
# at most 18 digits a number: every one fits an int64 (a longer one is no cell, shard or size)
_CELL = re.compile(r"\s*(\d{1,18})\s*,\s*(\d{1,18})\s*")
_SHARD = re.compile(r"\s*(\d{1,18})\s*/\s*(\d{1,18})\s*")
_SIZE = re.compile(r"\s*(\d{1,18})\s*(?:[xX\u00d7]\s*(\d{1,18}))?\s*")


def parse_cell(text: str) -> Cell:
    """'2,1' -> (2, 1) (column x, row y); ValueError otherwise."""
    m = _CELL.fullmatch(text)
    if not m:
        raise ValueError(f"bad cell {text!r}: expected X,Y such as 2,1")
    return int(m.group(1)), int(m.group(2))


def parse_shard(text: str, max_shards: int | None = None) -> tuple[int, int]:
    """'0/4' -> (0, 4): shard K of S, 0 <= K < S (<= max_shards); ValueError otherwise."""
    m = _SHARD.fullmatch(text)
    if not m:
        raise ValueError(f"bad shard {text!r}: expected K/S such as 0/4 (shard K of S)")
    k, s = int(m.group(1)), int(m.group(2))
    if not 0 <= k < s:
        raise ValueError(f"bad shard {text!r}: expected 0 <= K < S")
    if max_shards is not None and s > max_shards:
        raise ValueError(f"bad shard {text!r}: at most {max_shards} shards")
    return k, s


def parse_size(text: str) -> Size:
    """'7' -> (7, 7); '12x6' -> (12, 6) (width x height); ValueError otherwise."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"bad size {text!r}: expected N or WxH, e.g. 7 or 12x6")
    w = int(m.group(1))
    h = int(m.group(2)) if m.group(2) else w
    if w < 1 or h < 1:
        raise ValueError(f"bad size {text!r}: both sides must be >= 1")
    if max(w, h) > MAX_PIECES:  # the cells (`board_size`) once --height is known
        raise ValueError(f"bad size {text!r}: a side of {max(w, h):,} cells, longer than "
                         f"the largest board e2store reads ({MAX_PIECES:,} cells)")
    return w, h


def check_board_size(width: int, height: int) -> None:
    """ValueError for a board of more cells than the largest board e2store reads
    (`MAX_PIECES`): a `--size 100000` is refused here, not by running out of memory."""
    if width * height > MAX_PIECES:
        raise ValueError(f"a {width}x{height} board has {width * height:,} cells, more than "
                         f"the largest board e2store reads ({MAX_PIECES:,} cells)")


def board_size(width: int, height: int, param_hint: str = "--size/--height") -> Size:
    """(width, height) of a command's `--size` with its `--height` override, checked
    (`check_board_size`): a usage error naming `param_hint` otherwise."""
    try:
        check_board_size(width, height)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=param_hint) from None
    return width, height


class CellType(click.ParamType):
    """One cell `X,Y` -> (x, y)."""

    name = "cell"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "X,Y"

    def convert(self, value: Any, param, ctx) -> Cell:
        if isinstance(value, tuple):
            return value
        try:
            return parse_cell(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


ALL = "all"


class CellsType(click.ParamType):
    """One or more cells `X,Y` (separated by spaces or ';') -> a tuple of (x, y); with
    `allow_all`, the word `all` -> "all" (every cell)."""

    name = "cells"

    def __init__(self, allow_all: bool = False) -> None:
        self.allow_all = allow_all

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "X,Y|all" if self.allow_all else "X,Y"

    def convert(self, value: Any, param, ctx) -> tuple[Cell, ...] | str:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        if self.allow_all and text.lower() == ALL:
            return ALL
        try:
            cells = tuple(parse_cell(p) for p in re.split(r"[\s;]+", text) if p)
        except ValueError:
            hint = ", or 'all'" if self.allow_all else ""
            self.fail(f"bad cell {value!r}: expected X,Y such as 2,1{hint}", param, ctx)
        if not cells:
            self.fail(f"no cell in {value!r}: expected X,Y", param, ctx)
        return cells


class ShardType(click.ParamType):
    """A shard `K/S` -> (k, s): shard K of S, 0-based."""

    name = "shard"

    def __init__(self, max_shards: int | None = None) -> None:
        self.max_shards = max_shards

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "K/S"

    def convert(self, value: Any, param, ctx) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        try:
            return parse_shard(str(value), self.max_shards)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class IntsType(click.ParamType):
    """`A,B,C` -> a tuple of positive integers in increasing order (the report's depths or
    target scores)."""

    name = "ints"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "N1,N2,..."

    def convert(self, value: Any, param, ctx) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        try:
            got = tuple(int(t) for t in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r:.60}: expected integers separated by commas, e.g. 459,460",
                      param, ctx)
        if not got or any(n < 1 for n in got) or list(got) != sorted(set(got)):
            self.fail(f"{value!r:.60}: expected positive integers in increasing order",
                      param, ctx)
        return got


class SizeType(click.ParamType):
    """A board size `N` (N x N) or `WxH` (W columns, H rows) -> (w, h)."""

    name = "size"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "N|WxH"

    def convert(self, value: Any, param, ctx) -> Size:
        if isinstance(value, tuple):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


_BYTES = re.compile(r"\s*(\d{1,18}(?:\.\d{1,18})?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)
MAX_BYTES = 1 << 50  # 1 PiB: more memory than any machine e2store runs on


def parse_bytes(text: str) -> int:
    """A memory size: a number of bytes, or with a binary suffix K, M, G or T (`2G`, `512MiB`),
    at most `MAX_BYTES`."""
    m = _BYTES.fullmatch(text)
    if m is None:
        raise ValueError(f"{short(text)} is not a memory size (expected bytes or a number "
                         f"with K, M, G or T, e.g. 2G or 512M)")
    scale = 1 << (10 * "KMGT".index(m.group(2).upper()) + 10) if m.group(2) else 1
    n = int(float(m.group(1)) * scale)
    if n > MAX_BYTES:
        raise ValueError(f"{short(text)} is more than {MAX_BYTES >> 50} PiB")
    return n


class BytesType(click.ParamType):
    """A memory size (`parse_bytes`) -> bytes."""

    name = "bytes"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "SIZE"

    def convert(self, value: Any, param, ctx) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_bytes(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


BYTES = BytesType()
CELL = CellType()
CELLS = CellsType()
CELLS_OR_ALL = CellsType(allow_all=True)
SHARD = ShardType()
SIZE = SizeType()


def flatten_cells(values: tuple) -> list[Cell] | None:
    """The values of a repeatable CELLS option -> a list of cells; None when one is 'all'."""
    if any(v == ALL for v in values):
        return None
    return [c for v in values for c in v]


# -- common options -----------------------------------------------------------------------
def _sides_cb(ctx, param, value):
    if value is None:
        return None
    from e2store.instance.parsing import normalise_sides

    try:
        return normalise_sides(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def instance_argument(f: Callable) -> Callable:
    """The piece file, the first positional argument INSTANCE.  Not checked by click: the
    reader says in one line `FILE: problem` what is wrong with a directory, a missing or
    unreadable file (click's check would print a three-line usage error, name unescaped)."""
    return click.argument("instance", type=click.Path(path_type=Path))(f)


def instance_options(f: Callable) -> Callable:
    """Add --format, --sides and --size (passed as `fmt`, `sides`, `size`) to a command."""
    from e2store.instance.formats import DEFAULT_SIDES, FORMATS

    defaults = ", ".join(f"{k} {v}" for k, v in DEFAULT_SIDES.items())
    f = click.option("--size", "size", type=SIZE, default=None,
                     help="Board size (N, or W columns x H rows) of headerless piece files.")(f)
    f = click.option("--sides", "sides", default=None, callback=_sides_cb, metavar="ORDER",
                     help=f"Side order of the numbers on a piece line, e.g. WNES "
                     f"(defaults: {defaults}).")(f)
    f = click.option("--format", "fmt", default="auto", show_default=True,
                     type=click.Choice(("auto", *FORMATS)),
                     help="Piece file format (auto: detect from the content).")(f)
    return f


def load_instance(path: str | Path, fmt: str = "auto", sides: str | None = None,
                  size: Size | None = None):
    """Read a piece file and validate it: raises InstanceFormatError / InstanceError."""
    from e2store.instance.formats import read_instance
    from e2store.instance.validate import validate_or_raise

    inst = read_instance(path, format=fmt, sides=sides, size=size)
    validate_or_raise(inst)
    return inst


def hamming_option(f: Callable | None = None, *, multiple: bool = False,
                   required: bool = True, help: str | None = None) -> Callable:
    """--hamming H: the corolle radius; `multiple`: repeatable (passed as `hammings`)."""
    text = help or ("Corolle radius h (Manhattan distance from the centre)"
                    + ("; repeatable." if multiple else "."))

    def deco(g: Callable) -> Callable:
        return click.option("--hamming", "hammings" if multiple else "hamming",
                            type=HAMMING, multiple=multiple, required=required,
                            metavar="H", help=text)(g)

    return deco(f) if f is not None else deco


def threads_option(f: Callable) -> Callable:
    """--threads N (default 1)."""
    return click.option("--threads", type=WORKERS, default=1, show_default=True,
                        help="Worker threads (the numba kernels release the GIL).")(f)


def store_option(f: Callable | None = None, *, required: bool = True,
                 help: str = "Corolle store directory.") -> Callable:
    """--store DIR: the corolle store, the one spelling of every command."""

    def deco(g: Callable) -> Callable:
        return click.option("--store", "store", required=required, metavar="DIR",
                            type=click.Path(file_okay=False, path_type=Path), help=help)(g)

    return deco(f) if f is not None else deco


def store_instance_option(f: Callable) -> Callable:
    """--instance ID|FILE: which instance of a store (default: its only one)."""
    return click.option("--instance", "instance", default=None, metavar="ID|FILE",
                        help="Instance id, or a piece file whose id is used (default: the "
                        "store's only instance).")(f)


def json_option(help: str = "Print the result as JSON on stdout.") -> Callable:
    """--json: JSON on stdout (never a file)."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def output_option(help: str, *, required: bool = False, directory: bool = False,
                  multiple: bool = False, callback=None, either: bool = False) -> Callable:
    """-o/--output FILE (or DIR): what the command writes.  `either`: FILE|DIR, given as
    typed (a string: a trailing `/` kept), the library deciding which it names."""
    path = (click.Path(path_type=str) if either
            else click.Path(file_okay=False, path_type=Path) if directory
            else click.Path(dir_okay=False, path_type=Path))
    return click.option("-o", "--output", "output", required=required, type=path,
                        multiple=multiple, callback=callback,
                        metavar="FILE|DIR" if either else "DIR" if directory else "FILE",
                        help=help)


def records_option(required: bool = True) -> Callable:
    """--records DIR: the count tables' shard records."""
    return click.option("--records", "records", required=required, metavar="DIR",
                        type=click.Path(file_okay=False, path_type=Path),
                        help="Directory of the count shard records (a rerun resumes from "
                        "them).")


def memory_limit_option(help: str) -> Callable:
    """--memory-limit SIZE (default 2 GiB): the memory queries may use (passed as
    `memory_limit`, bytes; at least 64 MiB)."""

    def check(ctx, param, value: int) -> int:
        if value < MIN_MEMORY_LIMIT:
            raise click.BadParameter(f"{value} bytes is too little for a query (at least "
                                     f"{MIN_MEMORY_LIMIT >> 20}M)")
        return value

    return click.option("--memory-limit", "memory_limit", type=BYTES,
                        default=f"{DEFAULT_MEMORY_LIMIT >> 30}G", show_default=True, callback=check,
                        help=help)


def examples(*lines: str) -> str:
    """An epilog: `Examples:` and the command lines, kept as they are."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def status_option(command_name: str) -> Callable:
    """`--status FILE`: keep FILE (JSON) up to date with the run's progress, rate, ETA and
    what it found so far, every few seconds and once at its end (`e2store.progress.
    status_file`; `e2store serve --status FILE` shows it).  Put it right above the
    function: it wraps the command's body."""
    import functools

    def deco(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, status: Path | None = None, **kw: Any) -> Any:
            from e2store.progress import status_file

            with status_file(status, command_name):
                return f(*args, **kw)

        return click.option(
            "--status", type=click.Path(dir_okay=False, path_type=Path), default=None,
            metavar="FILE", help="Keep FILE (JSON) up to date with the run's progress, "
            "rate, ETA and what it found so far (every 2 s, and at its end), for "
            "`e2store serve --status FILE` or a script.")(wrapper)

    return deco
