"""Boards as a command is given them (`score`, `render board`, `url`, `summary --boards`):
every kind `read_any_board` reads (a board URL, a boards or
solutions file, a file of `x y piece r` lines), a boards dataset's directory
(`e2store.boards.dataset`) and a Blackwood-style saved-board file
(`e2store.boards.saved`), each board with where it comes from (`sourced_boards`:
its file, arm, seed, restart, source and depth when the source holds them) and scored, all
or the best few (`score_sources`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from e2store.boards.dataset import DatasetBoards, read_boards_dataset
from e2store.boards.parts import first_line
from e2store.boards.schema import BOARDS_FORMAT
from e2store.boards.table import Boards, board_cells, read_boards, score
from e2store.errors import RenderError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n


def is_boards_dataset(source: str | Path) -> bool:
    """Whether `source` names a directory (read as a boards dataset)."""
    from e2store.instance.url import is_url

    return not is_url(str(source)) and Path(source).is_dir()


def read_dataset(source: str | Path, instance: Instance) -> DatasetBoards:
    """The boards dataset at `source` (`read_boards_dataset`), or SolverError when the
    directory holds none (no `arm=NAME` directory: boards files put in a directory by
    hand are not a dataset; they are given one by one)."""
    d = read_boards_dataset(source, instance)
    if not d.parts and not any(e.startswith("arm=") for e in os.listdir(source)):
        raise SolverError(f"{_n(source)}: no boards dataset (no arm=NAME directory in it, as "
                          f"`e2store best -o DIR` writes); give boards files one by one: "
                          f"{_n(source)}/*.parquet")
    return d


def read_any_boards(instance: Instance, source: str | Path) -> list[np.ndarray]:
    """`read_any_board`, a boards dataset's boards too (a directory), and the board of a
    saved-board file (`is_saved_board_file`)."""
    from e2store.boards.saved import is_saved_board_file, read_saved_board

    if is_saved_board_file(source):
        return [read_saved_board(source, instance)]
    if is_boards_dataset(source):
        b = read_boards_dataset(source, instance).boards  # the boards kept: others have none
        return [board_cells(instance, c) for c in b.cells[b.stats["kept"]]]
    return read_any_board(instance, source)


def chosen_any_board(instance: Instance, source: str | Path, best: bool = False,
                     index: int = 0) -> tuple[np.ndarray, str, str]:
    """`chosen_board`, of a boards dataset too: its best row (`best_row` over every arm)
    or its `index`-th (parts in (arm, seed, restart) order); of a saved-board file too
    (its one board)."""
    from e2store.boards.saved import is_saved_board_file, read_saved_board

    if is_saved_board_file(source):
        if index and not best:
            raise RenderError(f"{_n(source)}: a saved-board file holds 1 board (expected "
                              f"--index 0)")
        return read_saved_board(source, instance), "", ""
    if not is_boards_dataset(source):
        return chosen_board(instance, source, best, index)
    d = read_dataset(source, instance)
    b, k = d.boards, len(d.boards)
    i = best_row(b) if best else index
    if i is None or i >= k:
        raise RenderError(f"{_n(source)}: holds {k} boards (expected " + (
            "at least one: a boards dataset a run has written a part to)" if best
            else f"--index below {k})"))
    r = b.row(i)
    where = f"arm {d.arms[i]}, seed {r['seed']}, restart {r['restart']}"
    if not best:
        return b.cells[i].astype(np.int64), "", ""
    return (b.cells[i].astype(np.int64), f"row {i} (the best of {k}), ",
            f"drew row {i} of {k}, the best: {r['source']}, score {r['score']} / "
            f"{r['joins']}, depth {r['depth']}, {r['holes']} holes ({where})")


def shown_board(instance: Instance, path: str | Path | None,
                index: int | None = None) -> tuple[np.ndarray | None, str]:
    """The board `e2store url` shows and a note saying which (empty: no note): of a boards
    file or dataset (`e2store best -o FILE|DIR`) its best board, the one `render board
    --best` draws (`chosen_any_board`), or its `index`-th; of a saved-board file its
    board; else `chosen_solution` (the `index`-th solution of a solutions file, else the
    instance's own solution, None when its file holds none)."""
    from e2store.boards.saved import is_saved_board_file
    from e2store.boards.solutions import chosen_solution

    if path is not None and (is_boards_file(path) or is_boards_dataset(path)
                             or is_saved_board_file(path)):
        cells, _, note = chosen_any_board(instance, path, index is None, index or 0)
        return cells, (f"{_n(path)}: the URL of {note.removeprefix('drew ')}; --index K "
                       f"gives its K-th row" if note else "")
    return chosen_solution(instance, path, index or 0), ""


# where a board comes from, the keys `score --json` gives each board (None: not known)
ORIGIN_KEYS = ("board", "row", "rows", "file", "arm", "seed", "restart", "source", "depth")
_STAT_ORIGINS = ("seed", "restart", "source", "depth", "score")


@dataclass
class SourcedBoards:
    """The boards of one source a command was given (`sourced_boards`), with where each
    comes from: `given` the source as given (a file, directory or URL), `cells` (k, W*H)
    placements, `files` the file holding each row (None: a URL's), and `columns` what the
    source says of its rows, those of `arm`, `seed`, `restart`, `source` ("best": the
    deepest board of a restart, "filled": it with its holes filled), `depth` and `score`
    it holds."""

    given: str
    cells: np.ndarray
    files: Sequence[str | None]
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.cells.shape[0])

    def origin(self, i: int) -> dict[str, Any]:
        """Where row `i` comes from: a value per ORIGIN_KEYS, None where the source does
        not say (its `row` counts from 0 in the source, of its `rows`)."""
        row = int(self.columns["row"][i]) if "row" in self.columns else int(i)
        out: dict[str, Any] = {"board": self.given, "row": row, "rows": len(self),
                               "file": self.files[i]}
        for k in ORIGIN_KEYS[4:]:
            v = self.columns[k][i] if k in self.columns else None
            out[k] = v.item() if isinstance(v, np.generic) else v
        return out

    def scores(self, instance: Instance) -> np.ndarray:
        """Each board's score: the source's (checked when it was read), else recounted
        (CHECK_ROWS boards at a time: a recount holds ~W*H*64 bytes a board)."""
        from e2store.boards.dataset import CHECK_ROWS
        from e2store.boards.table import recount

        if "score" in self.columns:
            return np.asarray(self.columns["score"], dtype=np.int64)
        return np.concatenate([np.zeros(0, np.int64)] + [
            np.asarray(recount(instance, self.cells[a:a + CHECK_ROWS])["matched"], np.int64)
            for a in range(0, len(self), CHECK_ROWS)])

    def depths(self) -> np.ndarray:
        """Each board's depth: the source's, else the pieces it places."""
        if "depth" in self.columns:
            return np.asarray(self.columns["depth"], dtype=np.int64)
        return (np.asarray(self.cells) >= 0).sum(axis=1).astype(np.int64)


def sourced_boards(instance: Instance, source: str | Path) -> SourcedBoards:
    """Every board of `source` (`read_any_boards`' kinds), checked, with where it comes
    from (`SourcedBoards`): a boards file's seed, restart, source and depth; a dataset's
    arm and part file too; a saved-board file's depth, seed and restart from its name
    (`<depth>_<md5>_s<seed>-r<restart>.txt`).  SolverError for a directory holding no
    boards dataset (no `arm=NAME` directory): its boards files are given one by one."""
    from e2store.boards.saved import is_saved_board_file, read_saved_board
    from e2store.boards.table import read_boards
    from e2store.instance.url import is_url

    given = str(source)
    if is_url(given):
        return SourcedBoards(given, np.stack(read_any_board(instance, given)), [None])
    if is_saved_board_file(source):
        from e2store.boards.saved import saved_name_origin

        cols = {k: np.array([v]) for k, v in saved_name_origin(Path(source).name).items()}
        return SourcedBoards(given, read_saved_board(source, instance)[None], [given], cols)
    if is_boards_dataset(source):
        d = read_dataset(source, instance)
        files = np.repeat(np.array([str(p.path) for p in d.parts], dtype=object), d.counts)
        return _kept(SourcedBoards(given, d.boards.cells, list(files),
                                   {"arm": d.arms, **{k: d.boards.stats[k]
                                                      for k in _STAT_ORIGINS}}),
                     d.boards.stats["kept"])
    if is_boards_file(source):
        b = read_boards(source, instance)
        return _kept(SourcedBoards(given, b.cells, [given] * len(b),
                                   {k: b.stats[k] for k in _STAT_ORIGINS}), b.stats["kept"])
    boards = read_any_board(instance, source)
    n = instance.width * instance.height
    return SourcedBoards(given, np.stack(boards) if boards else np.zeros((0, n), np.int64),
                         [given] * len(boards))


def _kept(g: SourcedBoards, kept: np.ndarray) -> SourcedBoards:
    """The boards of `g` kept (`--keep-min-score`: the others have no cells), each with
    its row in the source."""
    kept = np.asarray(kept, dtype=bool)
    if kept.all():
        return g
    rows = np.flatnonzero(kept)
    return SourcedBoards(g.given, g.cells[rows], [g.files[i] for i in rows.tolist()],
                         {**{k: np.asarray(v)[rows] for k, v in g.columns.items()},
                          "row": rows})


Fill = Callable[[np.ndarray], tuple[np.ndarray, dict[str, Any]]]


def score_sources(instance: Instance, sources: Sequence[str | Path], *,
                  fill: Fill | None = None, top: int | None = None) -> list[dict[str, Any]]:
    """The score of every board of `sources` (`sourced_boards`), in their order: per board
    where it comes from (ORIGIN_KEYS), `e2store.boards.table.score`'s counts and its
    viewer URL (None when the instance's colours have no letters).  `fill(cells)` gives
    the board scored in its place and what to say of it (`score --fill`: its holes
    filled).  `top`: only the `top` best, by score (after `fill`), then depth, then
    order; a board met twice listed once (as `save-boards --top` writes them)."""
    from e2store.boards.table import score
    from e2store.instance.url import UrlError, board_url

    groups = [sourced_boards(instance, s) for s in sources]

    def scored(g: SourcedBoards, i: int) -> tuple[np.ndarray, dict[str, Any]]:
        cells = np.asarray(g.cells[i], dtype=np.int64)
        extra: dict[str, Any] = {}
        if fill is not None:
            cells, extra = fill(cells)
        d = {**g.origin(i), **score(instance, cells).to_dict(), **extra}
        try:
            d["url"] = board_url(instance, cells)
        except UrlError:
            d["url"] = None
        return cells, d

    if top is None:
        return [scored(g, i)[1] for g in groups for i in range(len(g))]
    which = np.concatenate([np.full(len(g), k, np.int64) for k, g in enumerate(groups)])
    rows = np.concatenate([np.arange(len(g), dtype=np.int64) for g in groups])
    depth = np.concatenate([g.depths() for g in groups])
    done: dict[int, tuple[np.ndarray, dict[str, Any]]] = {}
    if fill is None:
        points = np.concatenate([g.scores(instance) for g in groups])
    else:  # every board filled first: its score is the filled board's
        done = {k: scored(groups[w], r) for k, (w, r) in enumerate(zip(
            which.tolist(), rows.tolist(), strict=True))}
        points = np.array([done[k][1]["score"] for k in range(len(rows))], dtype=np.int64)
    out: list[dict[str, Any]] = []
    seen: set[bytes] = set()
    for k in np.lexsort((np.arange(len(rows)), -depth, -points)).tolist():
        if len(out) >= top:
            break
        cells, d = done.get(k) or scored(groups[which[k]], int(rows[k]))
        key = cells.astype(np.int16).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def read_any_board(instance: Instance, source: str | Path) -> list[np.ndarray]:
    """Every board `source` holds, as checked (W*H,) cell arrays: a board URL, a boards
    file, a solutions file (Parquet, Arrow or CSV), or a text file of `x y piece r` lines
    (holes allowed, each cell at most once)."""
    from e2store.instance.url import board_from_url, is_url

    text = str(source)
    if is_url(text):
        return [board_cells(instance, board_from_url(instance, text))]
    p = Path(source)
    head = b""
    if p.is_file():
        with open(p, "rb") as fh:
            head = fh.read(4)
    if head == b"PAR1" or head[:4] == b"ARRO" or p.suffix.lower() in (".parquet", ".arrow",
                                                                       ".feather", ".ipc"):
        from e2store.files import table_schema

        try:
            meta = {k.decode(errors="replace"): v.decode(errors="replace")
                    for k, v in (table_schema(p).metadata or {}).items()}
        except Exception as e:
            raise SolverError(f"{_n(p)}: not a boards or solutions file ({first_line(e)})"
                              ) from None
        if meta.get("format") == BOARDS_FORMAT:
            b = read_boards(p, instance)  # its boards kept: those let go have no cells
            return [board_cells(instance, c) for c in b.cells[b.stats["kept"]]]
        from e2store.boards.solutions import read_solutions

        return [board_cells(instance, b) for b in read_solutions(p)]
    if p.suffix.lower() == ".csv":
        from e2store.boards.solutions import read_solutions

        return [board_cells(instance, b) for b in read_solutions(p)]
    from e2store.instance.cells_files import read_seed_file

    cells = read_seed_file(p)
    board = np.full(instance.width * instance.height, -1, dtype=np.int64)
    for (x, y), v in cells.items():
        if not (0 <= x < instance.width and 0 <= y < instance.height):
            raise SolverError(f"{_n(p)}: cell ({x}, {y}) is off the {instance.width}x"
                              f"{instance.height} board")
        board[y * instance.width + x] = v
    try:
        return [board_cells(instance, board)]
    except SolverError as e:
        raise SolverError(f"{_n(p)}: {e}") from None


def best_row(boards: Boards) -> int | None:
    """The row of the best board of `boards`: the completed board (source "filled" or
    "finished": completed after the search) of the highest score, else the deepest board,
    then the highest score; the earliest row of equals; among the boards kept (`kept`).
    None when there is no row kept."""
    st = boards.stats
    kept = np.asarray(st.get("kept", np.ones(len(boards))), dtype=bool)
    rows = np.flatnonzero(kept)
    if not len(rows):
        return None
    score = np.asarray(st["score"], dtype=np.int64)[rows]
    depth = np.asarray(st["depth"], dtype=np.int64)[rows]
    filled = np.array([str(st["source"][i]) in ("filled", "finished") for i in rows],
                      dtype=bool)
    if filled.any():
        return int(rows[np.flatnonzero(filled)[np.argmax(score[filled])]])  # the first
    return int(rows[np.lexsort((rows, -score, -depth))[0]])


def is_boards_file(source: str | Path) -> bool:
    """Whether `source` names a boards file (`e2store best -o`), by its metadata; a file
    that does not start as Parquet or Arrow does (`PAR1`, `ARROW1`) is not opened as one."""
    from e2store.files import table_schema
    from e2store.instance.url import is_url

    if is_url(str(source)) or not Path(source).is_file():
        return False
    try:
        with open(source, "rb") as fh:
            head = fh.read(4)
        meta = (table_schema(Path(source)).metadata or {}) if head in (b"PAR1", b"ARRO") else {}
    except Exception:  # no table: another kind of board file
        return False
    return meta.get(b"format") == BOARDS_FORMAT.encode()


def chosen_board(instance: Instance, source: str | Path, best: bool = False,
                 index: int = 0) -> tuple[np.ndarray, str, str]:
    """(cells, what, note) of the board of `source` (`read_any_board`) `render board` draws:
    the best (`best`: a boards file's `best_row`, else the highest score, the earliest) or the
    `index`-th; `what` starts its title, `note` says which the best is.  RenderError: none."""
    if best and is_boards_file(source):
        b = read_boards(source, instance)
        i = best_row(b)
        if i is None:
            raise RenderError(f"{_n(source)}: holds no board yet (expected a boards file "
                              "with at least one row)")
        r = b.row(i)
        return (b.cells[i].astype(np.int64), f"row {i} (the best of {len(b)}), ",
                f"drew row {i} of {len(b)}, the best: {r['source']}, score {r['score']} / "
                f"{r['joins']}, depth {r['depth']}, {r['holes']} holes (seed {r['seed']}, "
                f"restart {r['restart']})")
    boards = read_any_board(instance, source)
    if best:
        if not boards:
            raise RenderError(f"{_n(source)}: holds no board")
        scores = [score(instance, c).matched for c in boards]
        i = max(range(len(boards)), key=lambda k: (scores[k], -k))
        return (boards[i], f"board {i} (the best of {len(boards)}), ",
                f"drew board {i} of {len(boards)}, the best: score {scores[i]}")
    if index >= len(boards):
        raise RenderError(f"{_n(source)}: holds {len(boards)} boards (expected --index "
                          f"below {len(boards)})")
    return boards[index], "", ""
