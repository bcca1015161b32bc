"""Boards as a command is given them (`score`, `render board`, `url`, `summary --boards`):
every kind `e2store.solver.boards.read_any_board` reads (a board URL, a boards or
solutions file, a file of `x y piece r` lines), a boards dataset's directory
(`e2store.solver.boards_dataset`) and a Blackwood-style saved-board file
(`e2store.solver.saved_boards`), each board with where it comes from (`sourced_boards`:
its file, arm, seed, restart, source and depth when the source holds them) and scored, all
or the best few (`score_sources`); and a run's restarts per arm, as a campaign report
takes them (`restart_arrays`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from e2store.errors import RenderError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n
from e2store.solver.boards import Boards, board_cells
from e2store.solver.boards_dataset import DatasetBoards, read_boards_dataset


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
                          f"`solve --best -o DIR` writes); give boards files one by one: "
                          f"{_n(source)}/*.parquet")
    return d


def read_any_boards(instance: Instance, source: str | Path) -> list[np.ndarray]:
    """`read_any_board`, a boards dataset's boards too (a directory), and the board of a
    saved-board file (`is_saved_board_file`)."""
    from e2store.solver.boards import read_any_board
    from e2store.solver.saved_boards import is_saved_board_file, read_saved_board

    if is_saved_board_file(source):
        return [read_saved_board(source, instance)]
    if is_boards_dataset(source):
        return [board_cells(instance, b)
                for b in read_boards_dataset(source, instance).boards.cells]
    return read_any_board(instance, source)


def chosen_any_board(instance: Instance, source: str | Path, best: bool = False,
                     index: int = 0) -> tuple[np.ndarray, str, str]:
    """`chosen_board`, of a boards dataset too: its best row (`best_row` over every arm)
    or its `index`-th (parts in (arm, seed, restart) order); of a saved-board file too
    (its one board)."""
    from e2store.solver.boards import best_row, chosen_board
    from e2store.solver.saved_boards import is_saved_board_file, read_saved_board

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
    file or dataset (`solve --best -o FILE|DIR`) its best board, the one `render board
    --best` draws (`chosen_any_board`), or its `index`-th; of a saved-board file its
    board; else `chosen_solution` (the `index`-th solution of a solutions file, else the
    instance's own solution, None when its file holds none)."""
    from e2store.solver.boards import is_boards_file
    from e2store.solver.saved_boards import is_saved_board_file
    from e2store.solver.solutions import chosen_solution

    if path is not None and (is_boards_file(path) or is_boards_dataset(path)
                             or is_saved_board_file(path)):
        cells, _, note = chosen_any_board(instance, path, index is None, index or 0)
        return cells, (f"{_n(path)}: the URL of {note.removeprefix('drew ')}; --index K "
                       f"gives its K-th row" if note else "")
    return chosen_solution(instance, path, index or 0), ""


# where a board comes from, the keys `score --json` gives each board (None: not known)
ORIGIN_KEYS = ("board", "row", "rows", "file", "arm", "seed", "restart", "source", "depth")
_SAVED_NAME = re.compile(r"([0-9]{1,9})_[0-9a-f]{32}(?:_s([0-9]{1,19})-r([0-9]{1,19}))?\.txt")
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
        out: dict[str, Any] = {"board": self.given, "row": int(i), "rows": len(self),
                               "file": self.files[i]}
        for k in ORIGIN_KEYS[4:]:
            v = self.columns[k][i] if k in self.columns else None
            out[k] = v.item() if isinstance(v, np.generic) else v
        return out

    def scores(self, instance: Instance) -> np.ndarray:
        """Each board's score: the source's (checked when it was read), else recounted
        (CHECK_ROWS boards at a time: a recount holds ~W*H*64 bytes a board)."""
        from e2store.solver.boards import recount
        from e2store.solver.boards_dataset import CHECK_ROWS

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
    from e2store.instance.url import is_url
    from e2store.solver.boards import is_boards_file, read_any_board, read_boards
    from e2store.solver.saved_boards import is_saved_board_file, read_saved_board

    given = str(source)
    if is_url(given):
        return SourcedBoards(given, np.stack(read_any_board(instance, given)), [None])
    if is_saved_board_file(source):
        m = _SAVED_NAME.fullmatch(Path(source).name)
        cols = {} if m is None else {k: np.array([int(v)]) for k, v in zip(
            ("depth", "seed", "restart"), m.groups(), strict=True) if v is not None}
        return SourcedBoards(given, read_saved_board(source, instance)[None], [given], cols)
    if is_boards_dataset(source):
        d = read_dataset(source, instance)
        files = np.repeat(np.array([str(p.path) for p in d.parts], dtype=object), d.counts)
        return SourcedBoards(given, d.boards.cells, list(files),
                             {"arm": d.arms, **{k: d.boards.stats[k] for k in _STAT_ORIGINS}})
    if is_boards_file(source):
        b = read_boards(source, instance)
        return SourcedBoards(given, b.cells, [given] * len(b),
                             {k: b.stats[k] for k in _STAT_ORIGINS})
    boards = read_any_board(instance, source)
    n = instance.width * instance.height
    return SourcedBoards(given, np.stack(boards) if boards else np.zeros((0, n), np.int64),
                         [given] * len(boards))


Fill = Callable[[np.ndarray], tuple[np.ndarray, dict[str, Any]]]


def score_sources(instance: Instance, sources: Sequence[str | Path], *,
                  fill: Fill | None = None, top: int | None = None) -> list[dict[str, Any]]:
    """The score of every board of `sources` (`sourced_boards`), in their order: per board
    where it comes from (ORIGIN_KEYS), `e2store.solver.boards.score`'s counts and its
    viewer URL (None when the instance's colours have no letters).  `fill(cells)` gives
    the board scored in its place and what to say of it (`score --fill`: its holes
    filled).  `top`: only the `top` best, by score (after `fill`), then depth, then
    order; a board met twice listed once (as `save-boards --top` writes them)."""
    from e2store.instance.url import UrlError, board_url
    from e2store.solver.boards import score

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


def restart_arrays(boards: Boards, arms: np.ndarray | None = None,
                   ) -> dict[str, dict[str, np.ndarray]]:
    """Per arm, one value per restart ((seed, restart) pairs, in order) of what a campaign
    report compares: `depth` (the restart's deepest board), `filled` (the score of its
    final board: the finished one (`source` "finished"), else that board with its holes
    filled, else its own), `before` (the filled board's score, before the finish; equal to
    `filled` when not finished), `finished` (1 when the restart has a finished board),
    `nodes` and `seconds` (of the search), `fill_seconds` (of what came after the search,
    its fill and finish: the deepest board's `found` to its final board's),
    `finish_seconds` (the finish's part: the filled board's `found` to the finished
    one's), its `seed`, `restart` and `url` (the final board's), and the board's size,
    `cells` (W*H) and `joins` (2WH - W - H), from which the report takes its depths and
    target scores; a boards file is one arm, "default".  The rows of a boards file or
    dataset as `e2store.reports.campaign_report` takes them."""
    st = boards.stats
    arm = (np.full(len(st["seed"]), "default", dtype=object) if arms is None
           else np.asarray(arms, dtype=object))
    out: dict[str, dict[str, np.ndarray]] = {}
    source = np.asarray(st["source"], dtype=object)
    key = np.asarray(st["seed"], np.int64) * (1 << 32) + np.asarray(st["restart"], np.int64)
    score = np.asarray(st["score"])
    found = np.asarray(st.get("found", np.zeros(len(score))), dtype=np.float64)
    urls = np.asarray(st.get("url", np.full(len(score), "", dtype=object)), dtype=object)
    for name in sorted(set(arm.tolist())):
        mine = arm == name
        best = np.flatnonzero(mine & (source == "best"))
        order = best[np.argsort(key[best], kind="stable")]
        keys = key[order].tolist()
        of = {}  # source -> {restart key: row}
        for s in ("filled", "finished"):
            rows = np.flatnonzero(mine & (source == s))
            of[s] = dict(zip(key[rows].tolist(), rows.tolist(), strict=True))
        fill = [of["filled"].get(k, i) for k, i in zip(keys, order.tolist(), strict=True)]
        final = [of["finished"].get(k, i) for k, i in zip(keys, fill, strict=True)]

        def apart(a: list[int], b: list[int]) -> np.ndarray:
            """Seconds from rows `a`'s `found` to rows `b`'s (0 when either is unknown)."""
            fa, fb = found[a], found[b]
            return np.where((fa > 0) & (fb > 0), np.maximum(0.0, fb - fa), 0.0)

        out[str(name)] = {
            "depth": np.asarray(st["depth"])[order].astype(np.int64),
            "filled": score[final].astype(np.int64),
            "before": score[fill].astype(np.int64),
            "finished": np.array([k in of["finished"] for k in keys], dtype=np.int64),
            "nodes": np.asarray(st["nodes"])[order].astype(np.int64),
            "seconds": np.asarray(st["seconds"])[order].astype(np.float64),
            "fill_seconds": apart(order.tolist(), final),
            "finish_seconds": apart(fill, final),
            "seed": np.asarray(st["seed"])[order].astype(np.int64),
            "restart": np.asarray(st["restart"])[order].astype(np.int64),
            "url": urls[final].astype(object),
            "cells": np.full(len(order), boards.cells.shape[1], dtype=np.int64),
            "joins": np.asarray(st["joins"])[order].astype(np.int64)}
    return out


def campaign_rows(source: str | Path, instance: Instance | None = None,
                  ) -> dict[str, dict[str, np.ndarray]]:
    """The restarts of a boards file or dataset per arm (`restart_arrays`), every row
    checked as it is read (recounted too, given the instance)."""
    from e2store.solver.boards import read_boards

    if is_boards_dataset(source):
        d = read_boards_dataset(source, instance)
        return restart_arrays(d.boards, d.arms)
    return restart_arrays(read_boards(source, instance))
