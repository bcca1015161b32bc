"""Blackwood-style saved-board files: a board as the field's solvers save it, one text file
each, so that a campaign's best boards go where the field's tools and habits expect them
(docs/store-format.md, *Saved-board files*).

**Format** (Blackwood's EternityII_Solver, Util.cs `Save_Board`): H lines of W cells, the
north row first, each cell written `{piece:>3}/{r} ` (the piece number counted from 1 in
the instance file's line order, the official numbering of the Eternity II pieces; `r` the
clockwise quarter turns from the piece as the file gives it, e2store's rotation) or `---/- `
for an empty cell (every line ends with that space); then an empty line; then the board's
e2.bucas.name URL (`e2store.instance.url.board_url`, the line left out when the instance's
colours have no letters).  The board is e2store's, in Eternity II's official orientation.
The URL line ends with a newline (Blackwood's has none; the reader takes both, and CRLF).

**Name**: `<depth>_<md5>_s<seed>-r<restart>.txt`.  Blackwood's is `<depth>_<md5 as a
GUID>_<random 0-999999>.txt`; the depth leads here too, but the md5 is the plain hex of
the file's text (a GUID reorders its bytes), and the random number is replaced by the
restart that found the board: a name is reproducible (exporting again rewrites the same
files, never a second copy), the md5 names the content (one file per distinct board, and a
file can be checked against its name), and `s<seed>-r<restart>` says which restart of
`e2store best` to run again.  A board of no restart is `<depth>_<md5>.txt`.

**Reading** (`read_saved_board`): every line checked, a bad one a `SavedBoardError` naming
the file and the line: H rows of W cells, each `piece/r` with a piece of the instance (at
most once on the board) and r in 0..3, or `---/-`; after them only blank lines and at most
one URL, which must show the rows' board (cell by cell, its colours).  A piece that does
not match its neighbours is no error: it is a mismatched join, as `score` counts it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from e2store.boards.table import Boards, board_cells
from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path

SUFFIX = ".txt"
EMPTY = "---/-"
MAX_SAVED_BYTES = 1 << 20  # the largest board (64x64) takes about 60 KB
_CELL = re.compile(r"([0-9]{1,6})/([0-3])")
_ROW = re.compile(r"\s*(?:(?:[0-9]{1,6}/[0-3]|---/-)\s+)*(?:[0-9]{1,6}/[0-3]|---/-)\s*")
_SNIFF_BYTES = 4096
ROWS_EXPECTED = "{h} rows of {w} cells `piece/r` (piece from 1, r 0-3) or `---/-`, the " \
                "north row first"


class SavedBoardError(SolverError):
    """A saved-board file that cannot be read: names the file, the line, the problem and
    what was expected."""

    def __init__(self, path: str | Path, line: int | None, problem: str,
                 expected: str | None = None):
        self.path, self.line, self.problem, self.expected = str(path), line, problem, expected
        where = shown_path(path) + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {problem}" + (f" (expected {expected})" if expected
                                                  else ""))


def saved_board_text(instance: Instance, cells, *, url: bool = True) -> str:
    """The text of the saved-board file of `cells` ((W*H,) or (H, W) packed placements
    `piece*4 + r`, -1 empty; checked by `board_cells`): the rows, an empty line, the URL
    (module docstring; `url` False, or an instance the viewer cannot letter: no URL)."""
    from e2store.instance.url import UrlError, board_url

    a = board_cells(instance, cells)
    w = instance.width
    rows = []
    for y in range(instance.height):
        rows.append("".join(EMPTY + " " if v < 0 else f"{(v >> 2) + 1:>3}/{v & 3} "
                            for v in a[y * w:(y + 1) * w].tolist()))
    text = "\n".join(rows) + "\n\n"
    if url:
        try:
            text += board_url(instance, a) + "\n"
        except UrlError:
            pass  # more colours than the viewer has letters: the rows alone
    return text


def saved_board_name(text: str, depth: int, seed: int | None = None,
                     restart: int | None = None) -> str:
    """The file name of a saved board of text `text` (module docstring, *Name*)."""
    md5 = hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
    tail = "" if seed is None or restart is None else f"_s{int(seed)}-r{int(restart)}"
    return f"{int(depth)}_{md5}{tail}{SUFFIX}"


_NAME = re.compile(r"([0-9]{1,9})_[0-9a-f]{32}(?:_s([0-9]{1,19})-r([0-9]{1,19}))?\.txt")


def saved_name_origin(name: str) -> dict[str, int]:
    """What a saved board's file name (`saved_board_name`) says of it: its `depth`, and
    `seed` and `restart` when it names them; {} for another name."""
    m = _NAME.fullmatch(name)
    return {} if m is None else {k: int(v) for k, v in zip(("depth", "seed", "restart"),
                                                          m.groups(), strict=True)
                                 if v is not None}


def _boards_of(instance: Instance, boards) -> Boards:
    """`boards` as `Boards`: a `Boards`, a `DatasetBoards` (its rows), or the path of a boards
    file or dataset, read and checked against `instance`."""
    if isinstance(boards, Boards):
        return boards
    if hasattr(boards, "boards") and isinstance(boards.boards, Boards):
        return boards.boards
    from e2store.boards.dataset import read_boards_dataset
    from e2store.boards.table import read_boards

    p = Path(boards)
    return read_boards_dataset(p, instance).boards if p.is_dir() else read_boards(p, instance)


def _at_least(value: int | None, name: str, low: int) -> int | None:
    if value is not None and (isinstance(value, bool) or int(value) != value or value < low):
        raise SolverError(f"{name} {value!r}: expected an integer >= {low}").about(name)
    return value


def best_rows(boards: Boards, *, min_depth: int | None = None, min_score: int | None = None,
              top: int | None = None) -> list[int]:
    """The rows of `boards` a saved-board export writes, best first: those of depth >=
    `min_depth` and score >= `min_score`, by score, then depth (highest first), then row
    order; the first `top` (None: all); only boards kept (`kept`: their cells stored)."""
    _at_least(min_depth, "min_depth", 0)
    _at_least(min_score, "min_score", 0)
    _at_least(top, "top", 0)
    st = boards.stats
    score = np.asarray(st["score"], dtype=np.int64)
    depth = np.asarray(st["depth"], dtype=np.int64)
    keep = np.asarray(st.get("kept", np.ones(len(boards))), dtype=bool).copy()
    if min_depth is not None:
        keep &= depth >= min_depth
    if min_score is not None:
        keep &= score >= min_score
    rows = np.flatnonzero(keep)
    order = rows[np.lexsort((rows, -depth[rows], -score[rows]))]
    return order.tolist() if top is None else order[:top].tolist()


def write_saved_boards(instance: Instance, boards, out_dir: str | Path, *,
                       min_depth: int | None = None, min_score: int | None = None,
                       top: int | None = None) -> list[Path]:
    """Write the best boards of `boards` (a `Boards`, a `DatasetBoards`, or a boards file or
    dataset's path, read and checked) as saved-board files in `out_dir` (created), each
    atomically (`e2store.files.atomic_write_text`): the rows `best_rows` picks, a board
    met again (the same text) written once, at most `top` files.  Returns their paths,
    best first."""
    from e2store.files import atomic_write_text

    _at_least(top, "top", 0)
    b = _boards_of(instance, boards)
    rows = best_rows(b, min_depth=min_depth, min_score=min_score)
    out = Path(out_dir)
    written: list[Path] = []
    seen: set[str] = set()
    st = b.stats
    for i in rows:
        if top is not None and len(written) >= top:
            break
        text = saved_board_text(instance, b.cells[i])
        if text in seen:
            continue
        seen.add(text)
        path = out / saved_board_name(text, int(st["depth"][i]), int(st["seed"][i]),
                                      int(st["restart"][i]))
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        written.append(path)
    return written


def is_saved_board_file(source: str | Path) -> bool:
    """Whether `source` names a regular file whose first line is a row of saved-board
    cells (`piece/r` or `---/-` tokens): what `score` and `render board` read as one."""
    from e2store.instance.url import is_url

    if is_url(str(source)) or not Path(source).is_file():
        return False
    try:
        with open(source, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return False
    first = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").decode("ascii", "replace")
    return _ROW.fullmatch(first) is not None


def read_saved_board(path: str | Path, instance: Instance) -> np.ndarray:
    """The board of a saved-board file, checked (module docstring, *Reading*): (W*H,)
    int64 packed placements, -1 empty.  SavedBoardError naming the file and line."""
    from e2store.instance.parsing import decode_text, read_capped, split_lines

    p = Path(path)
    w, h, n = instance.width, instance.height, instance.n_pieces
    rows_expected = ROWS_EXPECTED.format(w=w, h=h) + f", for the {w}x{h} board of {instance.name}"
    data = read_capped(p, MAX_SAVED_BYTES, "saved-board file", rows_expected, SavedBoardError)
    lines = split_lines(decode_text(str(p), data, SavedBoardError))

    def error(line: int, problem: str, expected: str | None = None) -> SavedBoardError:
        return SavedBoardError(p, line, problem, expected)

    board = np.full(w * h, -1, dtype=np.int64)
    placed: dict[int, tuple[int, int]] = {}
    for y in range(h):
        if y >= len(lines) or not lines[y].strip():
            found = "the end of the file" if y >= len(lines) else "an empty line"
            raise error(y + 1, f"{found} after {y} rows", rows_expected)
        tokens = lines[y].split()
        if len(tokens) != w:
            raise error(y + 1, f"{len(tokens)} cells in row {y}", f"{w} cells a row")
        for x, t in enumerate(tokens):
            if t == EMPTY:
                continue
            m = _CELL.fullmatch(t)
            if not m:
                raise error(y + 1, f"cell ({x}, {y}): bad cell {_quoted(t)}",
                            "`piece/r`: a piece number from 1, a rotation 0-3; or `---/-`")
            number = int(m[1])
            if not 1 <= number <= n:
                raise error(y + 1, f"cell ({x}, {y}): piece {number} out of range",
                            f"a piece of {instance.name}: 1-{n}")
            if number in placed:
                px, py = placed[number]
                raise error(y + 1, f"cell ({x}, {y}): piece {number} is placed twice (also "
                            f"on cell ({px}, {py}), line {py + 1})", "each piece at most once")
            placed[number] = (x, y)
            board[y * w + x] = 4 * (number - 1) + int(m[2])
    url = None
    for k in range(h, len(lines)):
        s = lines[k].strip()
        if not s:
            continue
        if url is not None or not s.startswith(("http://", "https://")):
            extra = _ROW.fullmatch(s) is not None and url is None
            raise error(k + 1, f"a row of cells more than {h}" if extra
                        else f"unexpected line {_quoted(s)}",
                        rows_expected if extra else
                        f"after the {h} rows only an empty line and the board's URL")
        url = (k + 1, s)
    if url is not None:
        _check_url(instance, board, p, *url)
    return board


def _quoted(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _check_url(instance: Instance, board: np.ndarray, path: Path, line: int,
               url: str) -> None:
    """SavedBoardError unless the URL on `line` shows the rows' board: the same empty cells
    and, on each other cell, the same colours (identical pieces are interchangeable)."""
    from e2store.instance.url import UrlError, read_board_url

    try:
        other = read_board_url(instance, url).board
    except UrlError as e:
        raise SavedBoardError(path, line, f"the board's URL cannot be read: {e}") from None
    shown = instance.rotated_table()
    mine = np.where((board >= 0)[:, None], shown[np.maximum(board, 0)], -1)
    theirs = np.where((other >= 0)[:, None], shown[np.maximum(other, 0)], -1)
    differ = np.flatnonzero((mine != theirs).any(axis=1))
    if differ.size:
        i = int(differ[0])
        w = instance.width
        raise SavedBoardError(path, line, f"the URL shows another board than the rows (cell "
                              f"({i % w}, {i // w}) differs, {differ.size} cells in all)",
                              "the URL of the rows' board, as `save-boards` writes it")
