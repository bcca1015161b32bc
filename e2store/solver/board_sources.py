"""Boards as a command is given them (`score`, `render board`): every kind
`e2store.solver.boards.read_any_board` reads (a board URL, a boards or solutions file, a
file of `x y piece r` lines) and a boards dataset's directory
(`e2store.solver.boards_dataset`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.errors import RenderError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n
from e2store.solver.boards import board_cells
from e2store.solver.boards_dataset import read_boards_dataset


def is_boards_dataset(source: str | Path) -> bool:
    """Whether `source` names a directory (read as a boards dataset)."""
    from e2store.instance.url import is_url

    return not is_url(str(source)) and Path(source).is_dir()


def read_any_boards(instance: Instance, source: str | Path) -> list[np.ndarray]:
    """`read_any_board`, a boards dataset's boards too (a directory)."""
    from e2store.solver.boards import read_any_board

    if is_boards_dataset(source):
        return [board_cells(instance, b)
                for b in read_boards_dataset(source, instance).boards.cells]
    return read_any_board(instance, source)


def chosen_any_board(instance: Instance, source: str | Path, best: bool = False,
                     index: int = 0) -> tuple[np.ndarray, str, str]:
    """`chosen_board`, of a boards dataset too: its best row (`best_row` over every arm)
    or its `index`-th (parts in (arm, seed, restart) order)."""
    from e2store.solver.boards import best_row, chosen_board

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
