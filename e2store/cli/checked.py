"""Checked inputs of the command line: numbers (click's IntRange and FloatRange, always
bounded above, refusing `nan` and `inf`) and the JSON files a command is given (read with a
cap), each refused with a one-line usage error before any code uses it.

`BoundedInt` and `FiniteFloat`, and the shared types built from them: `SEED`, `WORKERS`,
`HAMMING`, `SIDE`, `COUNT`, `INDEX`, `MINUTES`, `SECONDS` (`e2store.cli.options` exports
them too).  Like `e2store.cli.options`, this module imports no heavy library.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from e2store.instance.model import MAX_PIECES


def short(text: Any, limit: int = 24) -> str:
    """A value as a message quotes it: escaped (`repr`), cut to `limit` characters (a
    number of 5,000 digits or a control character never reaches the terminal whole)."""
    s = str(text)
    return repr(s if len(s) <= limit else s[:limit] + "...")


# -- checked numbers ----------------------------------------------------------------------
MAX_INT64 = (1 << 63) - 1  # what the kernels, numpy's arrays and the files hold
MAX_COUNT = 10 ** 18  # nodes, restarts, samples, rows: an int64 with room for their sums
MAX_SEED = MAX_INT64  # numpy seeds any integer >= 0; the boards files store it as int64
MAX_WORKERS = 1024  # processes or threads: more than any machine e2store runs on has cores
MAX_HAMMING = 255  # a corolle of radius 255 has 130,561 cells: more than the largest board
MAX_MINUTES = 365 * 24 * 60  # a year: a time limit past it is no limit, and `inf` is none
MAX_SECONDS = 60 * MAX_MINUTES


class _ImplicitMax:
    """Leaves a bound the user did not set out of the help (`[x>=1]`, not `[1<=x<=...]`)."""

    implicit_max: bool

    def _describe_range(self) -> str:
        if not self.implicit_max:
            return super()._describe_range()  # type: ignore[misc]
        if self.min is None:  # type: ignore[attr-defined]
            return ""
        return f"x{'>' if self.min_open else '>='}{self.min}"  # type: ignore[attr-defined]


class BoundedInt(_ImplicitMax, click.IntRange):
    """An integer in [min, max]: click's IntRange, always bounded above (by `limit`, int64's
    largest unless said, when `max` is not given), so that `10**40` or a number of 5,000
    digits is a one-line usage error, never an OverflowError or a memory blow-up where the
    number is used.  The implicit bound is left out of the help (`[x>=1]`)."""

    def __init__(self, min: int | None = None, max: int | None = None, *,
                 min_open: bool = False, max_open: bool = False,
                 limit: int = MAX_INT64) -> None:
        super().__init__(min, limit if max is None else max, min_open=min_open,
                         max_open=max_open)
        self.implicit_max = max is None

    def convert(self, value: Any, param, ctx) -> int:
        if isinstance(value, str):
            digits = value.strip().lstrip("+-")
            if digits.isdigit() and len(digits) > 19:  # int() of 5,000 digits: an error
                self.fail(f"{short(value)} is too large ({len(digits):,} digits; at most "
                          f"{self.max:,})", param, ctx)
        try:
            n = int(value) if not isinstance(value, float) else value
        except (TypeError, ValueError):
            self.fail(f"{short(value)} is not an integer", param, ctx)
        if self.implicit_max and isinstance(n, int) and self.max is not None and n > self.max:
            self.fail(f"{n} is too large (at most {self.max:,})", param, ctx)
        return super().convert(value, param, ctx)


class FiniteFloat(_ImplicitMax, click.FloatRange):
    """A finite number in [min, max]: click's FloatRange refusing `nan` (every comparison
    with nan is false, so FloatRange lets it through any bound) and `inf`, and always
    bounded above (by `limit`, 1e18 unless said, when `max` is not given: `1e308` is
    refused, not turned into `inf` by the arithmetic that uses it)."""

    def __init__(self, min: float | None = None, max: float | None = None, *,
                 min_open: bool = False, max_open: bool = False,
                 limit: float = 1e18) -> None:
        super().__init__(min, limit if max is None else max, min_open=min_open,
                         max_open=max_open)
        self.implicit_max = max is None

    def convert(self, value: Any, param, ctx) -> float:
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{short(value)} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{short(value)} is not a finite number", param, ctx)
        if self.implicit_max and self.max is not None and x > self.max:
            self.fail(f"{short(value)} is too large (at most {self.max:g})", param, ctx)
        return super().convert(x, param, ctx)


SEED = BoundedInt(0, limit=MAX_SEED)  # a random seed: 0 .. 2**63-1
WORKERS = BoundedInt(1, MAX_WORKERS)  # processes or threads
HAMMING = BoundedInt(0, MAX_HAMMING)  # a corolle radius
SIDE = BoundedInt(1, MAX_PIECES)  # a board's width or height
COUNT = BoundedInt(1, limit=MAX_COUNT)  # nodes, restarts, samples, rows: at least one
INDEX = BoundedInt(0, limit=MAX_COUNT)  # a 0-based index, a zone id, a count that may be 0
MINUTES = FiniteFloat(0, MAX_MINUTES, min_open=True)  # a wall-time limit in minutes
SECONDS = FiniteFloat(0, MAX_SECONDS, min_open=True)  # a time limit in seconds


MAX_JSON_BYTES = 64 << 20  # a count plan, an estimates file, a shard report: a few MB


def read_json_file(path: Path, what: str, made_by: str,
                   check: Callable[[Any], object] | None = None) -> Any:
    """The JSON document of a file a command is given (`what`: a plan, a report), that
    `check` accepts (it raises on a missing key or a bad value).  Read with a cap
    (`read_capped`: no device, no file over `MAX_JSON_BYTES`, a stream cut there); a file
    that cannot be read, is no JSON or not `made_by` is a one-line usage error naming it
    (escaped), never a traceback."""
    import json

    from e2store.instance.parsing import read_capped, shown_path

    def error(p: str, line: int | None, problem: str, expected: str | None) -> Exception:
        return click.BadParameter(f"{shown_path(p)}: {problem}"
                                  + (f" (expected {expected})" if expected else ""))

    try:
        data = read_capped(path, MAX_JSON_BYTES, f"{what} file", made_by, error)
    except OSError as e:
        raise click.BadParameter(f"{shown_path(path)}: cannot read the {what} "
                                 f"({e.strerror or e})") from None
    try:
        doc = json.loads(data)
        if check is not None:
            check(doc)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as e:
        problem = str(e).splitlines()[0][:200] if str(e) else ""
        raise click.BadParameter(f"{shown_path(path)}: not {made_by} "
                                 f"({type(e).__name__}: {problem})") from None
    return doc
