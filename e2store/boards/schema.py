"""The boards file's format, declared once (docs/store-format.md, *Boards files*): its
name and version, the columns of a row (a board's cells, then its statistics) with their
types, the metadata keys, and the Arrow schema every writer of boards uses (a boards file,
a dataset's part, a compacted file) and every reader checks against.  The solutions and
openings files share the cells' layout (`cells_schema`).

A version is a number of at most `VERSION_DIGITS` digits: anything else (a 5,000-digit
string, a sign, a word) is read as no version at all (`file_version` -> None), so a reader
refuses the file in one line rather than failing on the number."""

from __future__ import annotations

from collections.abc import Mapping

BOARDS_FORMAT = "e2store-boards"
BOARDS_VERSION = 4  # 4: `kept`, `key`; 3: the official orientation; 2: the rows' digest
TURNED_BEFORE = 3  # 16x16 boards of older files are Eternity II's turned a half turn
DIGEST_KEY = "rows_sha256"
VERSION_DIGITS = 9
# a dataset's file says its arm inside (its seed and restarts are its rows'): a file moved
# into another arm's directory is refused (files written before it said so are read)
ARM_KEY = "arm"
CELL_TYPE = "int16"  # a cell: piece*4 + r, -1 a hole
BOARD_STATS_V2 = (("depth", "int32"), ("score", "int32"), ("joins", "int32"),
                  ("mismatches", "int32"), ("holes", "int32"), ("seed", "int64"),
                  ("restart", "int64"), ("nodes", "int64"), ("seconds", "float64"),
                  ("source", "string"))
# version 3: when the board was found (UTC seconds since the epoch, 0 unknown) and its
# e2.bucas.name URL ("" when the instance has no lettering)
BOARD_STATS_V3 = BOARD_STATS_V2 + (("found", "float64"), ("url", "string"))
# version 4: whether the row's board is kept (`keep_boards`: below a score only its
# statistics are, its cells all -1 and its url ""), and the canonical key of a complete
# board (`e2store.boards.keys.board_key`, "" for a board with holes): repeats counted
# from the key alone, kept or not
BOARD_STATS = BOARD_STATS_V3 + (("kept", "bool"), ("key", "string"))
STAT_DEFAULTS: dict[str, object] = {"found": 0.0, "url": "", "kept": True, "key": ""}
# the per-restart columns a campaign's analysis reads: never the board's cells
RESTART_COLUMNS = ("seed", "restart", "source", "depth", "score", "nodes", "seconds", "found",
                   "key")
READS_WITH = 3  # a dataset's files are of versions READS_WITH..BOARDS_VERSION, mixed


def stats_of_version(version: int) -> tuple[tuple[str, str], ...]:
    """The statistics columns of a boards file of `version`, in file order."""
    return BOARD_STATS_V2 if version < 3 else BOARD_STATS_V3 if version < 4 else BOARD_STATS


def cell_names(n: int) -> list[str]:
    """The cell columns of a W*H = n board, by cell index y*W+x."""
    return [f"c{i}" for i in range(n)]


def column_kinds(n: int, version: int = BOARDS_VERSION) -> list[tuple[str, str]]:
    """(name, kind) of every column of a boards table of n cells, in file order."""
    return [(c, CELL_TYPE) for c in cell_names(n)] + list(stats_of_version(version))


def arrow_type(kind: str):
    """The Arrow type of a column kind (`int16`, ..., `string`)."""
    import pyarrow as pa

    return (pa.string() if kind == "string" else pa.bool_() if kind == "bool"
            else getattr(pa, kind)())


def boards_schema(n: int, metadata: Mapping[str, str] | None = None):
    """The Arrow schema of a boards table of n cells (what every writer writes)."""
    import pyarrow as pa

    return pa.schema([pa.field(k, arrow_type(kind)) for k, kind in column_kinds(n)],
                     metadata=dict(metadata) if metadata is not None else None)


def cells_schema(columns: list[str], value_type, metadata: Mapping[str, str]):
    """One column per board cell (y*W+x order) of `value_type`, packed `piece*4+r` (-1
    free): the solutions and openings files' schema."""
    import pyarrow as pa

    return pa.schema([pa.field(c, value_type) for c in columns], metadata=dict(metadata))


def meta_int(meta: Mapping[str, str], key: str) -> int | None:
    """The number a metadata value holds, or None when it is not one of at most
    `VERSION_DIGITS` ASCII digits (a 5,000-digit value is no number, never a traceback)."""
    v = meta.get(key, "")
    if not (isinstance(v, str) and 0 < len(v) <= VERSION_DIGITS and v.isascii()
            and v.isdigit()):
        return None
    return int(v)


def file_version(meta: Mapping[str, str]) -> int | None:
    """The `version` of a file's metadata (`meta_int`)."""
    return meta_int(meta, "version")


def board_size(meta: Mapping[str, str]) -> tuple[int, int] | None:
    """(width, height) of a file's metadata, each 1..64, else None."""
    w, h = meta_int(meta, "width"), meta_int(meta, "height")
    if w is None or h is None or not (0 < w <= 64 and 0 < h <= 64):
        return None
    return w, h


def shown_version(meta: Mapping[str, str]) -> str:
    """A file's `version` quoted for a message, cut short."""
    return repr(str(meta.get("version", ""))[:20])
