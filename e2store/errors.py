"""Typed errors: each subclasses a builtin and says how to fix the problem."""

from __future__ import annotations

import os


class E2StoreError(Exception):
    """Base class of every error e2store raises on purpose.  `option`: the library
    parameter at fault when one is (`clues`, `breaks`): the library's message names what
    it means, the command line adds the flag that sets it (`--clues: ...`)."""

    option: str | None = None

    def about(self, option: str) -> E2StoreError:
        """This error, blamed on parameter `option` (`raise SolverError(...).about("x")`)."""
        self.option = option
        return self


class InstanceFormatError(E2StoreError, ValueError):
    """A piece file cannot be read: names the file, the line, the problem and what was expected."""

    def __init__(self, path: str, line: int | None, problem: str, expected: str | None = None):
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.expected = expected
        where = f"{self.path}:{line}" if line is not None else self.path
        msg = f"{where}: {problem}"
        if expected:
            msg += f" (expected {expected})"
        super().__init__(msg)


class InstanceError(E2StoreError, ValueError):
    """An instance is readable but breaks the puzzle's rules (piece counts, grey sides)."""


class ZoneError(E2StoreError, ValueError):
    """A zone or cell request does not fit the board (cell off the board, unknown zone id)."""


class StoreError(E2StoreError, OSError):
    """A corolle store is missing, damaged, or of another format version."""


class StoreVersionError(StoreError):
    """A store of an older format version: the message names the command that migrates it."""


class DamagedStoreError(StoreError):
    """A file of the store does not hold what was written (a flipped bit, a truncated or
    edited file): the message names it, the problem and `e2store verify --repair`."""

    def __init__(self, path: str | os.PathLike, what: str, problem: str,
                 root: str | os.PathLike | None = None):
        self.path, self.what, self.problem = str(path), what, problem
        super().__init__(f"{path}: damaged {what} ({problem}); {repair_hint(root)}")


def repair_hint(root: str | os.PathLike | None) -> str:
    """The command that repairs a damaged file of the store at `root`."""
    return (f"run `e2store verify --store {root} --repair`" if root is not None
            else "run `e2store verify --repair` on its store")


class MissingError(E2StoreError, KeyError):
    """Something asked of a store is not in it; the message says what to run."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingInstanceError(MissingError):
    """The store holds no partitions of this instance."""


class MissingZoneError(MissingError):
    """The store holds no partition of this instance, hamming, zone, rotation and form."""


class RenderError(E2StoreError, ValueError):
    """A picture cannot be drawn: no solution, placements that do not fit, an unknown file type."""


class SolverError(E2StoreError, ValueError):
    """A solver request cannot run: unknown scan order, a bad scan-order or seed file (named
    with its line), or a seed that breaks the rules."""


class InvalidSolutionError(SolverError):
    """A board is not a solution: a piece missing or repeated, a join that does not match, or
    grey off the frame. Says which cell or piece."""


class KernelCacheError(E2StoreError, PermissionError):
    """The directory of generated solver kernels is not safe to import code from (not owned
    by this user, writable by others, or a symbolic link); says which and how to fix it."""


class ExactInputError(E2StoreError, ValueError):
    """A region, clue, engine or check the exact model cannot take (cell off the board,
    unknown engine): the message says which and what is allowed."""


class OutOfReachError(E2StoreError, TimeoutError):
    """An exact model gave up: over its time limit or its size limit.  Not a disagreement:
    the message says how far it got and how to give it more room."""


class ChildFailedError(E2StoreError, RuntimeError):
    """A child process (a model call, a solver worker) died or failed in a way that is not
    a problem of its input: killed by a signal, an unexpected exception.  An internal
    failure, not the user's: the message names the step and what happened to it."""


class DamagedDataError(E2StoreError, ValueError):
    """A data file e2store wrote outside a store (a boards file) does not hold what was
    written: its rows' digest or a recount of its boards disagrees.  The message names the
    file and the problem; the file is never rewritten as sound."""


class E2StoreNote(UserWarning):
    """Something the user should know once, not an error (a file read in an older layout
    and converted): the command line prints it as `e2store: note: ...` on stderr."""
