"""Partial boards and their score: the score of the field, the boards file the best-score
search writes, and every way a user hands e2store a board.

**Score** (docs/solver.md, *Best score*): the matched inner joins of a board, out of
2*W*H - W - H (480 on Eternity II).  A join is matched when both cells hold a piece and
the two sides show the same colour, not grey; the frame sides are grey by rule and are not
joins.  A hole (a free cell, -1) leaves its joins unmatched.  A board may also show colour
on a frame side (a piece turned the wrong way): such a side is listed as a *frame fault*;
it is not a join and does not change the score (the grey side it turned inside leaves a
join unmatched).

**Boards file** (`e2store-boards`, version 3): a Parquet (or Arrow IPC, by suffix) table,
one row per board: `c0..c{W*H-1}` (int16 packed `piece*4+r` by cell index y*W+x, -1 a
hole), then `depth`, `score`, `joins`, `mismatches`, `holes`, `seed`, `restart`, `nodes`,
`seconds`, `source`; key-value metadata `format`, `version`, `instance`, `width`,
`height` and `rows_sha256`, a digest of the metadata and every row (`rows_digest`).  Every
read checks it, and with the instance recounts each board's score, mismatches and holes
against the stored columns: a damaged file is a `DamagedDataError` naming it, never an
answer (version 1 files, without the digest, are read with the recount alone).  Boards
are in Eternity II's official orientation (piece 139 on I8, cell 135) since version 3;
16x16 boards of older files are read turned a half turn, with a note (`E2StoreNote`).
`append_boards` adds rows to an existing file atomically (a rerun adds to it); a run
writing a boards file holds it (`e2store.files.exclusive_writer`).
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from e2store.boards.keys import board_key, half_turn
from e2store.boards.schema import (
    ARM_KEY,
    BOARD_STATS,
    BOARDS_FORMAT,
    BOARDS_VERSION,
    DIGEST_KEY,
    STAT_DEFAULTS,
    TURNED_BEFORE,
    arrow_type,
    board_size,
    boards_schema,
    file_version,
    shown_version,
    stats_of_version,
)
from e2store.errors import DamagedDataError, E2StoreNote, SolverError
from e2store.instance.model import GREY, Instance
from e2store.instance.parsing import shown_path as _n


def inner_joins(width: int, height: int) -> int:
    """The joins of a W x H board that can be matched: 2*W*H - W - H (480 on 16x16)."""
    return 2 * width * height - width - height


@dataclass
class Score:
    """What `score` finds on a board: matched joins of `joins`, the mismatched ones as
    ((x, y), side) of their west or north cell, the holes, the frame faults."""

    matched: int
    joins: int
    placed: int
    holes: list[tuple[int, int]] = field(default_factory=list)
    mismatched: list[tuple[tuple[int, int], str]] = field(default_factory=list)
    frame_faults: list[tuple[tuple[int, int], str]] = field(default_factory=list)

    @property
    def unmatched(self) -> int:
        return self.joins - self.matched

    def to_dict(self) -> dict:
        return {"score": self.matched, "joins": self.joins, "unmatched": self.unmatched,
                "placed": self.placed, "holes": len(self.holes),
                "hole_cells": [list(c) for c in self.holes],
                "mismatched": [{"cell": list(c), "side": s} for c, s in self.mismatched],
                "frame_faults": [{"cell": list(c), "side": s} for c, s in self.frame_faults]}


def board_cells(instance: Instance, board) -> np.ndarray:
    """`board` ((H, W) or (W*H,) packed placements, -1 a hole) as a checked (W*H,) int64
    array: SolverError for another size, a placement out of range, or a piece placed
    twice (naming both cells)."""
    w, h = instance.width, instance.height
    a = np.asarray(board, dtype=np.int64).reshape(-1)
    if a.size != w * h:
        raise SolverError(f"a board of {a.size} cells for the {w}x{h} board of "
                          f"{instance.name} (expected {w * h})")
    bad = (a < -1) | (a >= 4 * instance.n_pieces)
    if bad.any():
        i = int(np.argmax(bad))
        raise SolverError(f"cell ({i % w}, {i // w}): placement {int(a[i])} out of range "
                          f"(expected piece*4+r in 0..{4 * instance.n_pieces - 1}, -1 a hole)")
    placed = np.flatnonzero(a >= 0)
    pieces = a[placed] >> 2
    order = np.argsort(pieces, kind="stable")
    twice = np.flatnonzero(np.diff(pieces[order]) == 0)
    if twice.size:
        i, j = placed[order[twice[0]]], placed[order[twice[0] + 1]]
        raise SolverError(f"piece {int(a[i]) >> 2} is placed twice: on ({i % w}, {i // w}) "
                          f"and ({j % w}, {j // w})")
    return a


def score(instance: Instance, board) -> Score:
    """The score of a full or partial board (module docstring): matched inner joins, the
    mismatched ones, holes and frame faults.  Vectorised; `tests/naive_best.py` counts the
    same joins one by one."""
    w, h = instance.width, instance.height
    a = board_cells(instance, board).reshape(h, w)
    filled = a >= 0
    shown = instance.rotated_table()[np.where(filled, a, 0)]  # (h, w, 4)
    ew = filled[:, :-1] & filled[:, 1:] & (shown[:, :-1, 2] == shown[:, 1:, 0]) & (
        shown[:, :-1, 2] != GREY)
    ns = filled[:-1, :] & filled[1:, :] & (shown[:-1, :, 3] == shown[1:, :, 1]) & (
        shown[:-1, :, 3] != GREY)
    mismatched = [((int(x), int(y)), "E") for y, x in np.argwhere(
        filled[:, :-1] & filled[:, 1:] & ~ew)]
    mismatched += [((int(x), int(y)), "S") for y, x in np.argwhere(
        filled[:-1, :] & filled[1:, :] & ~ns)]
    frame = np.zeros((h, w, 4), dtype=bool)
    frame[:, 0, 0] = frame[0, :, 1] = frame[:, -1, 2] = frame[-1, :, 3] = True
    fault = filled[:, :, None] & ((shown == GREY) != frame)
    faults = [((int(x), int(y)), "WNES"[s]) for y, x, s in np.argwhere(fault)
              if frame[y, x, s]]  # colour on the frame; grey inside is a mismatched join
    return Score(int(ew.sum() + ns.sum()), inner_joins(w, h), int(filled.sum()),
                 [(int(i % w), int(i // w)) for i in np.flatnonzero(~filled.reshape(-1))],
                 sorted(mismatched, key=lambda m: (m[0][1], m[0][0], m[1])), faults)


def frame_colours(instance: Instance) -> np.ndarray:
    """The colours that run along the frame: those a border piece shows on a side next to
    its grey side (Eternity II: 5 of 22).  A join of two such sides is a frame join, which
    the best-score search never lets mismatch (nor a grey one)."""
    p = instance.pieces
    grey = p == GREY
    out = set()
    for s in range(4):
        for t in ((s + 1) % 4, (s + 3) % 4):
            out |= set(p[grey[:, s] & ~grey[:, t], t].tolist())
    return np.array(sorted(out), dtype=np.int64)


# boards files ---------------------------------------------------------------------------

@dataclass
class Boards:
    """Rows of a boards file: `cells` (k, W*H) int16, a column per `BOARD_STATS` name, and
    the file's key-value metadata (`instance`, `width`, ...) when read from one."""

    cells: np.ndarray
    stats: dict[str, np.ndarray]
    meta: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.cells.shape[0])

    def row(self, i: int) -> dict:
        return {k: (v[i].item() if hasattr(v[i], "item") else v[i])
                for k, v in self.stats.items()}


def with_defaults(stats: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """`stats` of an older file with the columns it lacks (`STAT_DEFAULTS`) for its `k`
    rows: unknown `found`, no url, every board kept, no key yet (`board_keys`)."""
    for name, kind in BOARD_STATS:
        if name not in stats:
            stats[name] = np.full(k, STAT_DEFAULTS[name], dtype=object if kind == "string"
                                  else kind)
    return stats


def board_keys(cells: np.ndarray, stats: dict[str, np.ndarray], width: int,
               height: int) -> np.ndarray:
    """The `key` column of rows: a kept board's canonical key (`board_key`; "" for a board
    with holes), and the key a board not kept was given when its cells were let go."""
    kept = np.asarray(stats["kept"], dtype=bool)
    out = np.where(kept, "", np.asarray(stats["key"], dtype=object)).astype(object)
    for i in np.flatnonzero(kept & (np.asarray(cells) >= 0).all(axis=1)):
        out[i] = board_key(cells[i], width, height)
    return out


def keep_boards(boards: Boards, min_score: int | None, width: int, height: int) -> Boards:
    """`boards` with only the boards of a score of at least `min_score` kept (`keep_boards:
    {min_score}`): below it a row keeps its statistics and its complete board's key, its
    cells set to -1 and its url to "" (`kept` false).  None keeps every board."""
    if min_score is None or not len(boards):
        return boards
    stats = dict(boards.stats)
    stats["key"] = board_keys(boards.cells, stats, width, height)  # before the cells go
    drop = np.asarray(stats["score"]) < min_score
    if not drop.any():
        return Boards(boards.cells, stats, boards.meta)
    cells = boards.cells.copy()
    cells[drop] = -1
    stats["kept"] = np.asarray(stats["kept"], dtype=bool) & ~drop
    stats["url"] = np.where(drop, "", np.asarray(stats["url"], dtype=object)).astype(object)
    return Boards(cells, stats, boards.meta)


def _meta(instance: Instance, arm: str | None) -> dict[str, str]:
    meta = {"format": BOARDS_FORMAT, "version": str(BOARDS_VERSION), "instance": instance.id,
            "width": str(instance.width), "height": str(instance.height)}
    if arm is not None:  # a dataset's file says its arm (its place: `ARM_KEY`)
        meta[ARM_KEY] = arm
    return meta


def rows_digest(meta: dict[str, str], boards: Boards,
                columns: tuple[tuple[str, str], ...] = BOARD_STATS) -> str:
    """SHA-256 of a boards file's content: its metadata (less the digest), then each
    column in file order, numbers as little-endian bytes of their declared type, strings
    as UTF-8 with a length before each."""
    h = hashlib.sha256(BOARDS_FORMAT.encode() + b"\n")
    for k in sorted(meta):
        if k != DIGEST_KEY:
            h.update(f"{k}={meta[k]}\n".encode())
    h.update(np.ascontiguousarray(boards.cells, dtype="<i2").tobytes())
    for name, kind in columns:
        col = boards.stats[name]
        if kind == "string":
            for v in col:
                b = str(v).encode()
                h.update(len(b).to_bytes(4, "little") + b)
        else:
            h.update(np.ascontiguousarray(col, dtype=np.dtype(kind).newbyteorder("<")).tobytes())
    return h.hexdigest()


def boards_table(instance: Instance, boards: Boards, *, arm: str | None = None):
    """The Arrow table of `boards` with the format's metadata (a dataset's `arm` too) and
    its rows' digest."""
    import pyarrow as pa

    n = instance.width * instance.height
    cells = np.asarray(boards.cells, dtype=np.int16).reshape(-1, n)
    given = with_defaults(dict(boards.stats), len(cells))  # an older caller's: all kept
    stats = {name: (np.array([str(v) for v in given[name]], dtype=object)
                    if kind == "string" else np.asarray(given[name], dtype=kind))
             for name, kind in BOARD_STATS}
    stats["key"] = board_keys(cells, stats, instance.width, instance.height)
    missing = [i for i, u in enumerate(stats["url"]) if not u and stats["kept"][i]]
    if missing:
        from e2store.instance.url import UrlError, board_url

        for i in missing:
            try:
                stats["url"][i] = board_url(instance, cells[i].astype(np.int64))
            except UrlError:
                pass  # more colours than the viewer letters: no URL
    meta = _meta(instance, arm)
    meta[DIGEST_KEY] = rows_digest(meta, Boards(cells, stats))
    schema = boards_schema(n, meta)
    cols = [pa.array(cells[:, i], type=pa.int16()) for i in range(n)]
    cols += [pa.array(list(stats[name]) if kind == "string" else stats[name],
                      type=schema.field(name).type) for name, kind in BOARD_STATS]
    return pa.Table.from_arrays(cols, schema=schema)


def _column(t, name: str, kind: str, p: Path) -> np.ndarray:
    """Column `name` of a boards table as numpy, refusing another type than `kind` (a
    wider integer is never wrapped into a narrower one)."""

    if name not in t.column_names:
        raise DamagedDataError(f"{_n(p)}: damaged boards file (no column {name!r})")
    col = t.column(name)
    want = arrow_type(kind)
    if col.type != want:
        raise DamagedDataError(f"{_n(p)}: damaged boards file (column {name!r} is {col.type}, "
                               f"expected {want})")
    if col.null_count:
        raise DamagedDataError(f"{_n(p)}: damaged boards file (column {name!r} has nulls)")
    if kind == "string":
        return np.array(col.to_pylist(), dtype=object)
    return col.to_numpy()


def read_boards(path: str | Path, instance: Instance | None = None) -> Boards:
    """The boards of a boards file (module docstring), checked: SolverError naming the file
    when it is not one, is of a newer version or holds another instance's boards;
    DamagedDataError when its digest or (given `instance`) a recount of its boards
    disagrees with what it stores."""
    from e2store.files import read_table

    p = Path(path)
    try:
        t = read_table(p)
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow's errors for a file that is no table, or damaged
        raise SolverError(f"{_n(p)}: not a boards file, or a damaged one "
                          f"({_first_line(e)})") from None
    try:
        return _boards_of(t, p, instance)
    except (UnicodeError, ArithmeticError, LookupError) as e:  # names or values undecodable
        raise DamagedDataError(f"{_n(p)}: damaged boards file ({_first_line(e)})") from None


def _boards_of(t, p: Path, instance: Instance | None) -> Boards:
    """`read_boards`'s checks of the table `t` read from `p`."""
    meta = {k.decode(errors="replace"): v.decode(errors="replace")
            for k, v in (t.schema.metadata or {}).items()}
    if meta.get("format") != BOARDS_FORMAT:
        raise SolverError(f"{_n(p)}: not a boards file (format {meta.get('format')!r:.60}, "
                          f"expected {BOARDS_FORMAT!r}: written by `e2store best -o`)")
    version = file_version(meta)
    if version is None or version > BOARDS_VERSION:
        raise SolverError(f"{_n(p)}: boards file version {shown_version(meta)} is not one "
                          f"this e2store reads (1..{BOARDS_VERSION}); upgrade e2store")
    if instance is not None and meta.get("instance") != instance.id:
        raise SolverError(f"{_n(p)}: holds boards of instance {meta.get('instance')!r:.80}, not "
                          f"of {instance.id} ({instance.name})")
    size = board_size(meta)
    if size is None:
        raise DamagedDataError(f"{_n(p)}: damaged boards file (width {meta.get('width')!r:.20}"
                               f", height {meta.get('height')!r:.20}: expected 1..64)")
    w, h = size
    if instance is not None and (w, h) != (instance.width, instance.height):
        raise DamagedDataError(f"{_n(p)}: damaged boards file ({w}x{h} in its metadata, the "
                               f"instance is {instance.width}x{instance.height})")
    n = w * h
    board = [_column(t, f"c{i}", "int16", p) for i in range(n)]  # each there and typed
    cells = np.column_stack(board) if len(t) else np.zeros((0, n), np.int16)
    columns = stats_of_version(version)
    stats = {name: _column(t, name, kind, p) for name, kind in columns}
    out = Boards(cells.astype(np.int16, copy=False), with_defaults(stats, len(t)), meta)
    if version >= 2:
        found = rows_digest(meta, out, columns)
        if meta.get(DIGEST_KEY) != found:
            raise DamagedDataError(f"{_n(p)}: damaged boards file (its rows do not match their "
                                   f"digest {meta.get(DIGEST_KEY, 'none')!r:.20}...: a "
                                   f"changed byte); it is left as it is: restore it from a "
                                   f"copy, or move it aside")
    if version < TURNED_BEFORE and (w, h) == (16, 16):
        out = Boards(half_turn(out.cells), out.stats, {**meta, "turned": "half"})
        warnings.warn(E2StoreNote(
            f"{_n(p)}: boards written before e2store used Eternity II's official "
            f"orientation (version {version}): read turned a half turn (piece 139 on I8)"),
            stacklevel=3)
    if version < 4:  # the keys of its complete boards, as a version 4 file stores them
        out.stats["key"] = board_keys(out.cells, out.stats, w, h)
    if instance is not None:
        check_rows(instance, out, p)
    return out


def _first_line(e: Exception) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:120].encode("ascii", "backslashreplace").decode()


def recount(instance: Instance, cells: np.ndarray) -> dict[str, np.ndarray]:
    """For each board of `cells` (k, W*H): matched joins, mismatched joins (both cells
    placed), holes, and a problem index (-1 none; else the first bad cell: a placement out
    of range or a piece placed twice), vectorised over the boards."""
    w, h = instance.width, instance.height
    a = np.asarray(cells, dtype=np.int64).reshape(-1, h, w)
    k = a.shape[0]
    filled = a >= 0
    flat = a.reshape(k, -1)
    bad = (flat < -1) | (flat >= 4 * instance.n_pieces)
    problem = np.where(bad.any(1), np.argmax(bad, 1), -1)
    pieces = np.sort(np.where(flat >= 0, flat >> 2, -1 - np.arange(w * h)), axis=1)
    twice = (np.diff(pieces, axis=1) == 0).any(1)
    problem = np.where((problem < 0) & twice, 0, problem)
    shown = instance.rotated_table()[np.clip(np.where(filled, a, 0), 0,
                                             4 * instance.n_pieces - 1)]
    pair_ew = filled[:, :, :-1] & filled[:, :, 1:]
    pair_ns = filled[:, :-1, :] & filled[:, 1:, :]
    ew = pair_ew & (shown[:, :, :-1, 2] == shown[:, :, 1:, 0]) & (shown[:, :, :-1, 2] != GREY)
    ns = pair_ns & (shown[:, :-1, :, 3] == shown[:, 1:, :, 1]) & (shown[:, :-1, :, 3] != GREY)
    matched = ew.sum((1, 2)) + ns.sum((1, 2))
    pairs = pair_ew.sum((1, 2)) + pair_ns.sum((1, 2))
    return {"matched": matched, "mismatched": pairs - matched,
            "holes": (~filled).sum((1, 2)), "problem": problem}


def check_rows(instance: Instance, boards: Boards, path: str | Path) -> None:
    """Each row's stored score, mismatches, holes, joins and depth against a recount of its
    board (`recount`), a complete board's key against its board's: DamagedDataError naming
    the file, the row and the column.  A row whose board was not kept (`kept` false) must
    have no cell placed and no url; its statistics are what its run recorded."""
    if not len(boards):
        return
    n = instance.width * instance.height
    rc = recount(instance, boards.cells)
    st = boards.stats
    kept = np.asarray(st["kept"], dtype=bool)
    found = {"score": rc["matched"], "mismatches": rc["mismatched"], "holes": rc["holes"]}
    checks = [("a placement", rc["problem"] >= 0),
              *((k, kept & (st[k] != v)) for k, v in found.items()),
              ("joins", st["joins"] != inner_joins(instance.width, instance.height)),
              ("depth", (st["depth"] < 0) | (st["depth"] > np.where(kept, n - rc["holes"], n))),
              ("seed", st["seed"] < 0), ("restart", st["restart"] < 0),
              ("found", ~(np.asarray(st["found"], dtype=float) >= 0)),
              ("a board not kept", ~kept & ((rc["holes"] != n)
                                            | (np.asarray(st["url"], dtype=object) != ""))),
              ("key", np.asarray(st["key"], dtype=object) != board_keys(
                  boards.cells, st, instance.width, instance.height))]
    said = {"a placement": "a placement out of range or a piece placed twice",
            "a board not kept": "a board not kept, with a cell placed or a url",
            "key": "key, not its board's"}
    for what, wrong in checks:
        if np.any(wrong):
            i = int(np.argmax(wrong))
            detail = (f"{what} {st[what][i]}, the board shows {found[what][i]}"
                      if what in found else said.get(what, f"{what} out of range"))
            raise DamagedDataError(f"{_n(path)}: damaged boards file (row {i}: {detail}); it is "
                                   f"left as it is: restore it from a copy, or move it aside")


def make_boards(n_cells: int, cells, rows) -> Boards:
    """`Boards` of the (W*H,) boards `cells`, their stats from the dicts `rows` (a key per
    `BOARD_STATS` name)."""
    cells = list(cells)
    arr = (np.stack([np.asarray(c, dtype=np.int16).reshape(-1) for c in cells]) if cells
           else np.zeros((0, n_cells), np.int16))
    return Boards(arr, {name: np.array([r.get(name, STAT_DEFAULTS.get(name)) for r in rows],
                                       dtype=object if kind == "string" else kind)
                        for name, kind in BOARD_STATS})


def new_boards(n_cells: int) -> Boards:
    """An empty `Boards` of boards of `n_cells` cells."""
    return Boards(np.zeros((0, n_cells), np.int16),
                  {name: np.zeros(0, dtype=object if kind == "string" else kind)
                   for name, kind in BOARD_STATS})


def concat_boards(a: Boards, b: Boards) -> Boards:
    return Boards(np.concatenate([a.cells, b.cells]),
                  {k: np.concatenate([a.stats[k], b.stats[k]]) for k in a.stats})


def concat_all(blocks: list[Boards]) -> Boards:
    """Rows of several `Boards` as one (the first's columns and metadata)."""
    return Boards(np.concatenate([b.cells for b in blocks]),
                  {k: np.concatenate([b.stats[k] for b in blocks]) for k in blocks[0].stats},
                  blocks[0].meta)


def write_boards(path: str | Path, instance: Instance, boards: Boards) -> None:
    """Write `boards` atomically (Parquet, or Arrow IPC by suffix)."""
    from e2store.files import write_table

    write_table(path, boards_table(instance, boards))


def append_boards(path: str | Path, instance: Instance, boards: Boards) -> Boards:
    """Add `boards` to the boards file at `path` (created when absent), atomically; returns
    every board the file then holds."""
    p = Path(path)
    old = read_boards(p, instance) if p.exists() else new_boards(instance.width
                                                                  * instance.height)
    out = concat_boards(old, boards)
    write_boards(p, instance, out)
    return out
