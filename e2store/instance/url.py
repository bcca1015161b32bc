"""Boards as e2.bucas.name URLs, the way solvers of the field exchange them (`e2store url`).

    https://e2.bucas.name/#puzzle=NAME&board_w=W&board_h=H&motifs_order=jblackwood
        &board_edges=...&board_pieces=...

* `board_edges`: four letters per cell, cells row by row from the north-west corner, each
  cell's colours on its top, right, bottom and left sides as placed; `a` is grey in every
  lettering, an empty cell is `aaaa`. Which colour each other letter means is the viewer's
  *colour order* (`motifs_order`, below).
* `board_pieces`: three digits per cell, the piece number counted from 1 (the file's line
  order, the official numbering of the Eternity II pieces); `000` for an empty cell.
* `motifs_order`: the lettering, as the viewer knows it: `jef`, `marie` or `jblackwood`
  (`marie` and `jblackwood` are one table), or the viewer's default when absent.

e2store's letters are the instance's colour ids (`a` + id: the Eternity II files numbered as
Blackwood's give the `jblackwood` letters), and it writes them as `motifs_order=jblackwood`;
an instance whose colour ids letter the viewer's Eternity II set in another of its orders
(jwortmann's files: the default) has its letters translated into jblackwood's. A URL is read
in its `motifs_order`; without one, in the order whose letters show a piece of the instance
on every filled cell (the viewer's default first, when several do).

A board here is a flat array of W*H packed placements `piece*4 + r` (cell y*W+x, -1 free).
Reading a URL checks every cell against the instance: the piece number must name a piece
that shows those edges in some rotation; without `board_pieces` each cell takes the lowest
unused piece that shows its edges (identical pieces are interchangeable).
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np

from e2store.errors import E2StoreError, E2StoreNote
from e2store.instance.model import MAX_PIECES, Instance

URL_BASE = "https://e2.bucas.name/"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
TOP_RIGHT_BOTTOM_LEFT = (1, 2, 3, 0)  # side indices (W N E S = 0 1 2 3) in URL order

# The viewer's colour orders, from its source: jfbucas/eternityII-viewer @ 0199d586
# (e2.bucas.name), init.js `motifs_svg_definitions_editor_mapping_jef` and
# `..._mapping_marie`, applied by puzzle.js `readParameters` (`motifs_order` "jef"; "marie"
# or "jblackwood": the same table; any other value or none: the default). Entry m of an
# order is the letter it uses for the viewer's motif m (motif m is letter m in the default
# order): the viewer renames motif "01" to "08" under `jef`, so `jef` letters motif 1 `i`.
# The tables cover the 23 motifs (a-w); x-z keep their letters in every order. Checked:
# each order relabels the viewer's Eternity II set `E2_PIECES` into its
# `E2_PIECES_MOTIFS_ORDER_JEF` / `..._JBLACKWOOD` (tests/test_url_letterings.py).
DEFAULT = "default"  # the viewer's order when the URL has no motifs_order
ORDERS: dict[str, str] = {
    DEFAULT: LETTERS,
    "jef": "aiqwemhpvdlgouckfntbjsr" + "xyz",
    "marie": "abjrfncksgodlthpemuiqvw" + "xyz",
    "jblackwood": "abjrfncksgodlthpemuiqvw" + "xyz",
}
WRITE_ORDER = "jblackwood"  # the order e2store writes (Blackwood's, the records' letters)
# Tried in this order when a URL names none (the viewer's default first); marie is
# jblackwood's table under another name.
DETECT_ORDERS = (DEFAULT, "jblackwood", "jef")
# sha256 of the viewer's `E2_PIECES` (init.js): the Eternity II pieces in the default order,
# each as its least rotation of four letters (top right bottom left), sorted, comma-joined.
E2_PIECES_SHA256 = "6f19b5d05c9df9f095482f9145473c6787905d01ad96d12b019ead42b0456707"


class UrlError(E2StoreError, ValueError):
    """A board URL that cannot be read, or does not fit the instance: says which part."""


@dataclass(frozen=True)
class BoardUrl:
    """The parts of a board URL: `edges` four letters per cell, `pieces` (1-based, 0 for an
    empty cell) or None when the URL has no `board_pieces`, `order` its `motifs_order` (a
    key of ORDERS) or None when it names none."""

    name: str
    width: int
    height: int
    edges: tuple[str, ...]
    pieces: tuple[int, ...] | None
    order: str | None = None


@dataclass(frozen=True)
class ReadBoard:
    """A URL's board read against an instance: `board` (W*H,) packed placements (-1 free),
    `order` the colour order its letters were read in, `detected` when the URL named none."""

    board: np.ndarray
    order: str
    detected: bool


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


def _least_rotation(cell: str) -> str:
    return min(cell[k:] + cell[:k] for k in range(4))


_OWN_ORDER: dict[tuple[str, tuple[int, ...]], str] = {}  # by instance id and colour ids


def instance_order(inst: Instance) -> str:
    """The viewer's order the instance's letters (`a` + colour id) are in: the order under
    which they letter the viewer's Eternity II set (jwortmann's files: the default; the
    files numbered as Blackwood's: jblackwood), else WRITE_ORDER (e2store's letters)."""
    key = (inst.id, inst.colour_ids)
    if key not in _OWN_ORDER:
        found = WRITE_ORDER
        rows = _shown(inst) if inst.n_pieces == 256 else np.zeros((0, 4), int)
        if rows.size and int(rows.max()) < len(LETTERS):
            cells = ["".join(LETTERS[c] for c in row) for row in rows[::4]]
            for order in DETECT_ORDERS:
                to_default = str.maketrans(ORDERS[order], ORDERS[DEFAULT])
                text = ",".join(sorted(_least_rotation(c.translate(to_default))
                                       for c in cells))
                if hashlib.sha256(text.encode()).hexdigest() == E2_PIECES_SHA256:
                    found = order
                    break
        _OWN_ORDER[key] = found
    return _OWN_ORDER[key]


def board_url(inst: Instance, board: np.ndarray | None = None, name: str | None = None,
              order: str = WRITE_ORDER) -> str:
    """The URL of `board` (W*H packed placements, -1 free; None: the empty board), lettered
    in the viewer's `order` (a key of ORDERS), which it names (`default`: no
    `motifs_order`, as the viewer has it)."""
    if order not in ORDERS:
        raise UrlError(f"no colour order {order!r} in e2.bucas.name (it knows "
                       f"{', '.join(ORDERS)})")
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
    letters = str.maketrans(ORDERS[instance_order(inst)], ORDERS[order])
    edges = "".join("aaaa" if v < 0 else "".join(LETTERS[c] for c in shown[v])
                    for v in cells.tolist()).translate(letters)
    pieces = "".join("000" if v < 0 else f"{v // 4 + 1:03d}" for v in cells.tolist())
    lettering = "" if order == DEFAULT else f"&motifs_order={order}"
    return (f"{URL_BASE}#puzzle={_name(name or inst.name)}&board_w={inst.width}"
            f"&board_h={inst.height}{lettering}&board_edges={edges}&board_pieces={pieces}")


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
    order = params.get("motifs_order") or None
    if order is not None and (order == DEFAULT or order not in ORDERS):
        raise UrlError(f"board URL: motifs_order={shown(order)} is no colour order of "
                       f"e2.bucas.name (it knows jef, marie and jblackwood; without "
                       f"motifs_order, its default)")
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
                    tuple(edges[i:i + 4] for i in range(0, len(edges), 4)), pieces, order)


def _place(inst: Instance, u: BoardUrl, letters: dict[int, int],
           shown: list[str], showing: dict[str, list[int]]) -> np.ndarray:
    """The board of `u`, its letters turned into the instance's by `letters` (a
    str.translate table), each cell checked against the instance's pieces (`shown`: the
    letters of each placement; `showing`: the placements showing each four letters)."""
    board = np.full(u.width * u.height, -1, dtype=np.int64)
    used: dict[int, int] = {}
    for i, cell in enumerate(u.edges):
        number = u.pieces[i] if u.pieces is not None else 0
        where = f"cell ({i % u.width}, {i // u.width})"
        mine = cell.translate(letters)
        if number:
            p = number - 1
            if p >= inst.n_pieces:
                raise UrlError(f"board URL: {where} holds piece {number}; the instance has "
                               f"pieces 1-{inst.n_pieces}")
            fits = [4 * p + r for r in range(4) if shown[4 * p + r] == mine]
            if not fits:
                raise UrlError(f"board URL: {where}: piece {number} shows {cell!r} in no "
                               f"rotation")
        elif cell == "aaaa":
            continue
        else:
            fits = [v for v in showing.get(mine, ()) if v // 4 not in used][:1]
            if not fits:
                raise UrlError(f"board URL: {where}: no unused piece shows {cell!r}")
        v = fits[0]
        if v // 4 in used:
            raise UrlError(f"board URL: {where}: piece {v // 4 + 1} is already on cell "
                           f"({used[v // 4] % u.width}, {used[v // 4] // u.width})")
        used[v // 4] = i
        board[i] = v
    return board


def read_board_url(inst: Instance, url: str | BoardUrl) -> ReadBoard:
    """The board a URL shows, checked against `inst`, and the colour order it was read in:
    the URL's `motifs_order`, or without one the first of DETECT_ORDERS under which every
    cell shows a piece of `inst` (UrlError naming each order's first misfit when none)."""
    u = parse_url(url) if isinstance(url, str) else url
    if (u.width, u.height) != (inst.width, inst.height):
        raise UrlError(f"the URL shows a {u.width}x{u.height} board, the instance "
                       f"{inst.name} is {inst.width}x{inst.height}")
    shown = ["".join(LETTERS[c] if c < len(LETTERS) else "?" for c in row)
             for row in _shown(inst)]
    showing: dict[str, list[int]] = {}
    for v, s in enumerate(shown):
        showing.setdefault(s, []).append(v)
    own = ORDERS[instance_order(inst)]
    if u.order is not None:
        letters = str.maketrans(ORDERS[u.order], own)
        try:
            return ReadBoard(_place(inst, u, letters, shown, showing), u.order, False)
        except UrlError as e:
            raise UrlError(f"{e} (its letters read in motifs_order={u.order})") from None
    misfits = []
    for order in DETECT_ORDERS:
        try:
            board = _place(inst, u, str.maketrans(ORDERS[order], own), shown, showing)
        except UrlError as e:
            misfits.append(f"{order}: {str(e).removeprefix('board URL: ')}")
            continue
        return ReadBoard(board, order, True)
    raise UrlError(f"board URL without motifs_order: its letters show pieces of {inst.name} "
                   f"in no colour order of e2.bucas.name ({'; '.join(misfits)})")


def board_from_url(inst: Instance, url: str | BoardUrl) -> np.ndarray:
    """The board a URL shows, checked against `inst`: (W*H,) packed placements, -1 free.
    A URL without motifs_order is read in the order `read_board_url` detects, named in an
    E2StoreNote (`e2store: note: ...` on the command line)."""
    got = read_board_url(inst, url)
    if got.detected:
        name = "the viewer's default" if got.order == DEFAULT else f"the {got.order}"
        warnings.warn(E2StoreNote(
            f"board URL without motifs_order: its letters read in {name} colour order "
            f"(the one that shows pieces of {inst.name} on every filled cell)"), stacklevel=2)
    return got.board


def fixed_from_url(inst: Instance, url: str) -> dict[tuple[int, int], int]:
    """The filled cells of a URL as a solver's fixed cells {(x, y): piece*4 + r}."""
    board = board_from_url(inst, url)
    return {(i % inst.width, i // inst.width): int(v) for i, v in enumerate(board.tolist())
            if v >= 0}


def colours_board(url: str | BoardUrl) -> tuple[Instance, np.ndarray]:
    """A board URL drawn from its colours alone, no piece file needed: an instance whose
    piece k is what the URL shows for piece k (its `board_pieces`; each cell's own piece
    when it has none, or when its number is 000 and it shows colours), turned as shown
    (rotation 0), and the board placing them; colour
    ids are the URL's letters (a = grey), holes -1.  Scores and mismatches read from it
    are the board's, in any lettering (a lettering relabels colours one to one)."""
    u = parse_url(url) if isinstance(url, str) else url
    n = u.width * u.height
    numbers = list(u.pieces) if u.pieces is not None else list(range(1, n + 1))
    spare = max([n, *numbers])
    for i, e in enumerate(u.edges):  # a cell showing colours without a piece number (000):
        if e != "aaaa" and numbers[i] <= 0:  # a piece of its own, as `_place` reads it
            spare += 1
            numbers[i] = spare
    size = max([n, *numbers])
    pieces = np.zeros((size, 4), dtype=np.int16)
    board = np.full(n, -1, dtype=np.int64)
    for i, e in enumerate(u.edges):
        if e == "aaaa" or numbers[i] <= 0:
            continue
        top, right, bottom, left = (LETTERS.index(c) for c in e)
        pieces[numbers[i] - 1] = (left, top, right, bottom)  # W N E S
        board[i] = (numbers[i] - 1) * 4
    name = _name(u.name or "board")
    return Instance(name, u.width, u.height, pieces), board
