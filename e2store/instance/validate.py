"""Instance checks: rule-breaking errors, provably-unsolvable warnings, legal oddities as info.

Levels:

* error: the instance breaks the puzzle's rules and cannot be used (board smaller than
  2x2, piece count not W*H, wrong number of corner/border/interior pieces, a piece with
  grey on two opposite sides or on 3+ sides, negative colours, a stored solution that does
  not solve the board).
* warning: readable and well-formed, but provably unsolvable (a non-grey colour appears an
  odd number of times; the frame is unbalanced: for some colour, the number of sides just
  clockwise of a grey side differs from the number just anticlockwise; every join along
  the frame pairs one of each).
* info: legal but worth knowing (pieces identical up to rotation; pieces identical to
  themselves under a non-trivial rotation).

Pieces in findings are 0-based piece ids (docs/design.md); `line` is the 1-based file line when
the instance was read from a file (see `formats.source_info`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from e2store.errors import InstanceError
from e2store.instance.model import GREY, Instance
from e2store.instance.parsing import piece_line, shown_path, source_info


@dataclass(frozen=True)
class Finding:
    """One check result: `piece` is a 0-based piece id, `line` its 1-based file line."""

    level: str
    message: str
    piece: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.level}: {self.message}{where}"


def piece_kinds(pieces: np.ndarray) -> np.ndarray:
    """Per piece: 'corner', 'border', 'interior', 'opposite' (grey on 2 opposite sides), 'many'."""
    grey = np.asarray(pieces) == GREY
    n_grey = grey.sum(axis=1)
    kinds = np.full(len(grey), "interior", dtype=object)
    kinds[n_grey == 1] = "border"
    two = n_grey == 2
    opposite = two & ((grey[:, 0] & grey[:, 2]) | (grey[:, 1] & grey[:, 3]))
    kinds[two & ~opposite] = "corner"
    kinds[opposite] = "opposite"
    kinds[n_grey >= 3] = "many"
    return kinds


def expected_kinds(width: int, height: int) -> dict[str, int]:
    """Corner, border and interior cell counts of a W x H board (W, H >= 2)."""
    return {
        "corner": 4,
        "border": 2 * (width - 2) + 2 * (height - 2),
        "interior": (width - 2) * (height - 2),
    }


def canonical_rotation(piece) -> tuple[int, ...]:
    """The lexicographically smallest of a piece's 4 rotations: equal iff equal up to rotation."""
    t = tuple(int(c) for c in piece)
    return min(t[r:] + t[:r] for r in range(4))


def similar_groups(pieces: np.ndarray) -> list[list[int]]:
    """Groups (size >= 2) of piece ids identical up to rotation, each sorted, by first id."""
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for i, piece in enumerate(pieces):
        groups[canonical_rotation(piece)].append(i)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def self_similar(pieces: np.ndarray) -> list[int]:
    """Ids of pieces equal to themselves turned by a non-trivial rotation (a half turn suffices)."""
    p = np.asarray(pieces)
    return [int(i) for i in np.flatnonzero((p == np.roll(p, 2, axis=1)).all(axis=1))]


def frame_balance(pieces: np.ndarray) -> dict[int, tuple[int, int]]:
    """Per colour: (#sides just clockwise of a grey side, #sides just anticlockwise of one).

    Walking round the frame, every join between two frame cells meets one side of each
    kind, so a solvable instance has equal counts for every colour.
    """
    p = np.asarray(pieces)
    grey = p == GREY
    cw = ~grey & np.roll(grey, 1, axis=1)  # side s with side s-1 grey
    acw = ~grey & np.roll(grey, -1, axis=1)  # side s with side s+1 grey
    out: dict[int, tuple[int, int]] = {}
    for c in np.unique(p[cw | acw]):
        out[int(c)] = (int((p[cw] == c).sum()), int((p[acw] == c).sum()))
    return out


def _solution_problem(inst: Instance) -> str | None:
    """Why the stored solution does not solve the board, or None if it does."""
    sol = inst.solution
    assert sol is not None
    n = inst.n_pieces
    flat = sol.ravel()
    if (flat < 0).any() or (flat >= 4 * n).any():
        return "solution has a placement out of range"
    used = np.bincount(flat // 4, minlength=n)
    if (used != 1).any():
        return f"solution does not use piece {int(np.flatnonzero(used != 1)[0])} exactly once"
    shown = inst.rotated_table()[sol]  # (H, W, 4): colours on W N E S
    h, w = sol.shape
    for s, edge in ((0, shown[:, 0, 0]), (1, shown[0, :, 1]), (2, shown[:, -1, 2]),
                    (3, shown[-1, :, 3])):
        if (edge != GREY).any():
            return f"solution shows a non-grey colour on the {'WNES'[s]} rim"
    inner = np.ones((h, w, 4), dtype=bool)
    inner[:, 0, 0] = inner[0, :, 1] = inner[:, -1, 2] = inner[-1, :, 3] = False
    if (shown[inner] == GREY).any():
        return "solution shows grey inside the board"
    if (shown[:, 1:, 0] != shown[:, :-1, 2]).any():
        y, x = np.argwhere(shown[:, 1:, 0] != shown[:, :-1, 2])[0]
        return f"solution: cells ({x}, {y}) and ({x + 1}, {y}) do not match"
    if (shown[1:, :, 1] != shown[:-1, :, 3]).any():
        y, x = np.argwhere(shown[1:, :, 1] != shown[:-1, :, 3])[0]
        return f"solution: cells ({x}, {y}) and ({x}, {y + 1}) do not match"
    return None


def check_instance(inst: Instance) -> list[Finding]:
    """All findings for `inst`, errors first, then warnings, then info."""
    out: list[Finding] = []
    w, h, p = inst.width, inst.height, inst.pieces

    def add(level: str, msg: str, piece: int | None = None) -> None:
        line = piece_line(inst, piece) if piece is not None else None
        out.append(Finding(level, msg, piece, line))

    if w < 2 or h < 2:
        add("error", f"board {w}x{h} is too small: width and height must be at least 2")
    if inst.n_pieces != w * h:
        add("error", f"{inst.n_pieces} pieces for a {w}x{h} board, expected {w * h}")
    neg = np.flatnonzero((p < 0).any(axis=1))
    for i in neg:
        add("error", f"piece {i} has a negative colour", int(i))
    kinds = piece_kinds(p)
    def shown(i: int | np.integer) -> tuple[int, ...]:  # piece i's colours as its file gave them
        return tuple(inst.colour_id(int(c)) for c in p[i])

    for i in np.flatnonzero(kinds == "opposite"):
        add("error", f"piece {i} {shown(i)} has grey on two opposite sides", int(i))
    for i in np.flatnonzero(kinds == "many"):
        add("error", f"piece {i} {shown(i)} has "
            f"{int((p[i] == GREY).sum())} grey sides", int(i))
    if w >= 2 and h >= 2:
        for kind, want in expected_kinds(w, h).items():
            ids = np.flatnonzero(kinds == kind)
            if len(ids) != want:
                # point at the first piece beyond the expected count, if there is one
                extra = int(ids[want]) if len(ids) > want else None
                more = f"; piece {extra} is one too many" if extra is not None else ""
                add("error", f"{len(ids)} {kind} pieces for a {w}x{h} board, "
                    f"expected {want}{more}", extra)
    if inst.solution is not None and not any(f.level == "error" for f in out):
        problem = _solution_problem(inst)
        if problem:
            add("error", problem)

    colours, counts = np.unique(p[p != GREY], return_counts=True)
    for c, k in zip(colours, counts, strict=True):
        if k % 2:
            add("warning", f"colour {inst.colour_id(c)} appears on {k} sides, an odd number: "
                "unsolvable (every join uses a colour twice)")
    for c, (cw, acw) in frame_balance(p).items():
        if cw != acw:
            add("warning", f"frame colour {inst.colour_id(c)} is unbalanced: {cw} sides just "
                f"clockwise of grey "
                f"but {acw} just anticlockwise: unsolvable")

    for g in similar_groups(p):
        add("info", f"identical pieces (up to rotation): {', '.join(map(str, g))}", g[0])
    for s in self_similar(p):
        turn = "quarter" if (p[s] == np.roll(p[s], 1)).all() else "half"
        add("info", f"piece {s} {shown(s)} is identical to itself "
            f"turned a {turn} turn", s)
    return out


def validate_or_raise(inst: Instance) -> list[Finding]:
    """Raise `InstanceError` on the first error (naming file and line); else return findings."""
    findings = check_instance(inst)
    errors = [f for f in findings if f.level == "error"]
    if errors:
        first = errors[0]
        info = source_info(inst)
        where = shown_path(info.path) if info is not None else f"instance {inst.name!r}"
        if first.line is not None:
            where += f":{first.line}"
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        raise InstanceError(f"{where}: {first.message}{more}")
    return findings
