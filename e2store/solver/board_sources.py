"""Boards as a command is given them (`score`, `render board`, `summary --boards`): every
kind `e2store.solver.boards.read_any_board` reads (a board URL, a boards or solutions
file, a file of `x y piece r` lines), a boards dataset's directory
(`e2store.solver.boards_dataset`) and a Blackwood-style saved-board file
(`e2store.solver.saved_boards`); and a run's restarts per arm, as a campaign report
takes them (`restart_arrays`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.errors import RenderError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n
from e2store.solver.boards import Boards, board_cells
from e2store.solver.boards_dataset import read_boards_dataset


def is_boards_dataset(source: str | Path) -> bool:
    """Whether `source` names a directory (read as a boards dataset)."""
    from e2store.instance.url import is_url

    return not is_url(str(source)) and Path(source).is_dir()


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
    d = read_boards_dataset(source, instance)
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


def restart_arrays(boards: Boards, arms: np.ndarray | None = None,
                   ) -> dict[str, dict[str, np.ndarray]]:
    """Per arm, one value per restart ((seed, restart) pairs, in order) of what a campaign
    report compares: `depth` (the restart's deepest board), `filled` (the score of that
    board with its holes filled; its own score when it was not filled), `nodes` and
    `seconds` (of the search), `fill_seconds` (of the fill: its two boards' `found`
    apart), its `seed`, `restart` and `url` (the filled board's), and the board's size,
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
        filled = np.flatnonzero(mine & (source == "filled"))
        order = best[np.argsort(key[best], kind="stable")]
        fill_of = dict(zip(key[filled].tolist(), score[filled].tolist(), strict=True))
        # the fill's time: from the deepest board's `found` to its filled board's (0 when
        # either is unknown); `seconds` is the search's alone
        found_of = dict(zip(key[filled].tolist(), found[filled].tolist(), strict=True))
        url_of = dict(zip(key[filled].tolist(), urls[filled].tolist(), strict=True))
        fill_s = np.array([max(0.0, found_of[k] - f) if f > 0 and found_of.get(k, 0) > 0
                           else 0.0 for k, f in zip(key[order].tolist(),
                                                    found[order].tolist(), strict=True)])
        out[str(name)] = {
            "depth": np.asarray(st["depth"])[order].astype(np.int64),
            "filled": np.array([fill_of.get(k, s) for k, s in
                                zip(key[order].tolist(), score[order].tolist(), strict=True)],
                               dtype=np.int64),
            "nodes": np.asarray(st["nodes"])[order].astype(np.int64),
            "seconds": np.asarray(st["seconds"])[order].astype(np.float64),
            "fill_seconds": fill_s,
            "seed": np.asarray(st["seed"])[order].astype(np.int64),
            "restart": np.asarray(st["restart"])[order].astype(np.int64),
            "url": np.array([url_of.get(k, u) for k, u in
                             zip(key[order].tolist(), urls[order].tolist(), strict=True)],
                            dtype=object),
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
