"""Boards turned and their canonical key: a board met turned a quarter or half turn is the
same board (issue 56: equal boards are finished once)."""

from __future__ import annotations

import hashlib

import numpy as np


def half_turn(cells: np.ndarray) -> np.ndarray:
    """Boards (k, W*H) turned a half turn: cell i moves to W*H-1-i and each piece turns two
    quarter turns (holes stay holes); score, mismatches and holes are unchanged."""
    a = np.asarray(cells)[:, ::-1]
    return np.where(a >= 0, (a & ~3) | ((a + 2) & 3), a).astype(cells.dtype)


def quarter_turn(cells: np.ndarray, width: int, height: int) -> np.ndarray:
    """Boards (k, W*H) turned a quarter turn clockwise, H x W boards (k, H*W): the cell
    (x, y) moves to (H-1-y, x) and each piece turns one quarter turn clockwise (holes stay
    holes); score, mismatches and holes are unchanged."""
    a = np.asarray(cells).reshape(-1, height, width)
    t = np.rot90(a, k=-1, axes=(1, 2)).reshape(a.shape[0], -1)
    return np.where(t >= 0, (t & ~3) | ((t + 1) & 3), t).astype(a.dtype)


def board_key(cells: np.ndarray, width: int, height: int) -> str:
    """A board's canonical key: equal for two boards that are one board turned (the
    smallest of its turns' bytes, hashed), so equal boards are recognised whichever way
    round a search met them."""
    a = np.asarray(cells, dtype=np.int16).reshape(1, -1)
    turns = [a, half_turn(a)]
    if width == height:
        q = quarter_turn(a, width, height)
        turns += [q, half_turn(q)]
    return hashlib.blake2b(min(t.tobytes() for t in turns), digest_size=16).hexdigest()
