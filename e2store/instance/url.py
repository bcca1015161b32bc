"""Boards as e2.bucas.name URLs, the way solvers of the field exchange them (`e2store url`).

    https://e2.bucas.name/#puzzle=NAME&board_w=W&board_h=H&board_edges=...&board_pieces=...

* `board_edges`: four letters per cell, cells row by row from the north-west corner, each
  cell's colours on its top, right, bottom and left sides as placed; `a` is grey (colour 0),
  `b` colour 1, ... `z` colour 25 (the colour ids of the instance's file, so the Eternity II
  files of the field, colours 0-22, give its usual letters); an empty cell is `aaaa`.
* `board_pieces`: three digits per cell, the piece number counted from 1 (the file's line
  order, the official numbering of the Eternity II pieces); `000` for an empty cell.

A board here is a flat array of W*H packed placements `piece*4 + r` (cell y*W+x, -1 free).
Reading a URL checks every cell against the instance: the piece number must name a piece
that shows those edges in some rotation; without `board_pieces` each cell takes the lowest
unused piece that shows its edges (identical pieces are interchangeable).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np

from e2store.errors import E2StoreError
from e2store.instance.model import MAX_PIECES, Instance

URL_BASE = "https://e2.bucas.name/"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
TOP_RIGHT_BOTTOM_LEFT = (1, 2, 3, 0)  # side indices (W N E S = 0 1 2 3) in URL order


class UrlError(E2StoreError, ValueError):
    """A board URL that cannot be read, or does not fit the instance: says which part."""


@dataclass(frozen=True)
class BoardUrl:
    """The parts of a board URL: `edges` four letters per cell, `pieces` (1-based, 0 for an
    empty cell) or None when the URL has no `board_pieces`."""

    name: str
    width: int
    height: int
    edges: tuple[str, ...]
    pieces: tuple[int, ...] | None


def is_url(text: str) -> bool:
    """Whether `text` is a board URL rather than a file name."""
    return text.startswith(("http://", "https://")) or "board_edges=" in text


def _name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name.strip()) or "e2store"


def _shown(inst: Instance) -> np.ndarray:
    """(n*4, 4) colour ids each placement shows on top, right, bottom, left."""
    ranks = inst.rotated_table()[:, TOP_RIGHT_BOTTOM_LEFT]
    ids = np.array([inst.colour_id(r) for r in range(int(inst.pieces.max()) + 1)])
    return ids[ranks]


def board_url(inst: Instance, board: np.ndarray | None = None, name: str | None = None) -> str:
    """The URL of `board` (W*H packed placements, -1 free; None: the empty board)."""
    n = inst.width * inst.height
    cells = np.full(n, -1) if board is None else np.asarray(board).reshape(-1)
    if cells.shape[0] != n:
        raise UrlError(f"a board of {cells.shape[0]} cells for a {inst.width}x{inst.height} "
                       f"instance ({n} cells)")
    shown = _shown(inst)
    if shown.size and int(shown.max()) >= len(LETTERS):
        raise UrlError(f"{inst.name}: colour id {int(shown.max())} has no letter in a board "
                       f"URL (a-z: colours 0-25)")
    if n and int(cells.max()) >= 4 * min(inst.n_pieces, 999):
        raise UrlError(f"{inst.name}: piece {int(cells.max()) // 4} has no three-digit number")
    edges = "".join("aaaa" if v < 0 else "".join(LETTERS[c] for c in shown[v])
                    for v in cells.tolist())
    pieces = "".join("000" if v < 0 else f"{v // 4 + 1:03d}" for v in cells.tolist())
    return (f"{URL_BASE}#puzzle={_name(name or inst.name)}&board_w={inst.width}"
            f"&board_h={inst.height}&board_edges={edges}&board_pieces={pieces}")


# The longest URL read: the largest board (MAX_PIECES cells) takes 7 characters a cell.
MAX_URL_CHARS = 8 * MAX_PIECES + 1024


def shown(text: str, limit: int = 40) -> str:
    """A part of a URL quoted for a message: escaped (`repr`: a raw ESC or newline never
    reaches the terminal) and cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_url(url: str) -> BoardUrl:
    """The parts of a board URL (UrlError naming the parameter that is wrong, its value
    escaped and cut short: `shown`)."""
    text = url.strip()
    if len(text) > MAX_URL_CHARS:
        raise UrlError(f"board URL of {len(text):,} characters (expected at most "
                       f"{MAX_URL_CHARS:,}: 7 a cell of the largest board)")
    frag = text.split("#", 1)[1] if "#" in text else text.split("?", 1)[-1]
    params: dict[str, str] = {}
    for part in frag.split("&"):
        key, _, value = part.partition("=")
        params[unquote(key)] = unquote(value)
    for key in ("board_w", "board_h", "board_edges"):
        if key not in params:
            raise UrlError(f"board URL without `{key}=` (expected {URL_BASE}#puzzle=NAME"
                           f"&board_w=W&board_h=H&board_edges=...)")
    bw, bh = params["board_w"], params["board_h"]
    if not all(v.isascii() and v.isdigit() and len(v) <= 6 for v in (bw, bh)):
        raise UrlError(f"board URL: board_w={shown(bw)}, board_h={shown(bh)}: expected two "
                       f"integers")
    w, h = int(bw), int(bh)
    if w < 1 or h < 1 or w * h > MAX_PIECES:
        raise UrlError(f"board URL: a {w}x{h} board (expected W, H >= 1 and at most "
                       f"{MAX_PIECES:,} cells)")
    edges = params["board_edges"]
    if len(edges) != 4 * w * h or not set(edges) <= set(LETTERS):
        raise UrlError(f"board URL: board_edges has {len(edges)} characters, expected "
                       f"{4 * w * h} letters a-z (four per cell of the {w}x{h} board)")
    pieces = None
    if params.get("board_pieces"):
        raw = params["board_pieces"]
        if len(raw) != 3 * w * h or not (raw.isascii() and raw.isdigit()):
            raise UrlError(f"board URL: board_pieces has {len(raw)} characters, expected "
                           f"{3 * w * h} digits (three per cell of the {w}x{h} board)")
        pieces = tuple(int(raw[i:i + 3]) for i in range(0, len(raw), 3))
    return BoardUrl(params.get("puzzle", ""), w, h,
                    tuple(edges[i:i + 4] for i in range(0, len(edges), 4)), pieces)


def board_from_url(inst: Instance, url: str | BoardUrl) -> np.ndarray:
    """The board a URL shows, checked against `inst`: (W*H,) packed placements, -1 free."""
    u = parse_url(url) if isinstance(url, str) else url
    if (u.width, u.height) != (inst.width, inst.height):
        raise UrlError(f"the URL shows a {u.width}x{u.height} board, the instance "
                       f"{inst.name} is {inst.width}x{inst.height}")
    shown = ["".join(LETTERS[c] if c < len(LETTERS) else "?" for c in row)
             for row in _shown(inst)]
    board = np.full(u.width * u.height, -1, dtype=np.int64)
    used: dict[int, int] = {}
    for i, cell in enumerate(u.edges):
        number = u.pieces[i] if u.pieces is not None else 0
        where = f"cell ({i % u.width}, {i // u.width})"
        if number:
            p = number - 1
            if p >= inst.n_pieces:
                raise UrlError(f"board URL: {where} holds piece {number}; the instance has "
                               f"pieces 1-{inst.n_pieces}")
            fits = [4 * p + r for r in range(4) if shown[4 * p + r] == cell]
            if not fits:
                raise UrlError(f"board URL: {where}: piece {number} shows {cell!r} in no "
                               f"rotation")
        elif cell == "aaaa":
            continue
        else:
            fits = [v for v, s in enumerate(shown) if s == cell and v // 4 not in used]
            if not fits:
                raise UrlError(f"board URL: {where}: no unused piece shows {cell!r}")
        v = fits[0]
        if v // 4 in used:
            raise UrlError(f"board URL: {where}: piece {v // 4 + 1} is already on cell "
                           f"({used[v // 4] % u.width}, {used[v // 4] // u.width})")
        used[v // 4] = i
        board[i] = v
    return board


def fixed_from_url(inst: Instance, url: str) -> dict[tuple[int, int], int]:
    """The filled cells of a URL as a solver's fixed cells {(x, y): piece*4 + r}."""
    board = board_from_url(inst, url)
    return {(i % inst.width, i // inst.width): int(v) for i, v in enumerate(board.tolist())
            if v >= 0}
