"""The cells a command asks for (`--at X,Y ...`, `all`, or nothing), resolved against a
board's zones: checked to be on the board, each cell or each zone once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from e2store.errors import ZoneError
from e2store.zones.zonemap import Zone, ZoneMap, zone_map

Cell = tuple[int, int]
ALL = "all"  # every cell of the board (the `--at all` of the command line)


def asked_cells(at: Iterable[Sequence[Cell] | str]) -> list[Cell] | None:
    """Groups of cells (each a sequence of (x, y), or `ALL`) -> one list of cells, in
    order; None when a group is `ALL` (every cell)."""
    groups = list(at)
    if any(g == ALL for g in groups):
        return None
    # the one string a group may be is ALL, returned for above
    return [(int(x), int(y)) for g in groups if not isinstance(g, str) for x, y in g]


def board_cells(width: int, height: int, hamming: int,
                at: Iterable[Sequence[Cell] | str] = ()) -> list[Cell]:
    """The cells of `at` (every cell for `ALL`), each checked to be on the board
    (ZoneError); without `at`, every zone's canonical cell: where a count or a check runs
    when no cell is named."""
    zm = zone_map(width, height, hamming)
    groups = list(at)
    if not groups:
        return [(z.x, z.y) for z in zm.zones]
    wanted = asked_cells(groups)
    cells = ([(x, y) for y in range(height) for x in range(width)]
             if wanted is None else wanted)
    for x, y in cells:
        zm.check_cell(x, y)
    return cells


def zone_ids(zm: ZoneMap, at: Iterable[Sequence[Cell] | str] = ()) -> list[int] | None:
    """The ids of the zones of the cells of `at`, sorted, each once (ZoneError for a cell
    off the board); None (every zone) without `at` or with `ALL`: the zones a store build
    enumerates."""
    groups = list(at)
    cells = asked_cells(groups) if groups else None
    if cells is None:
        return None
    return sorted({int(zm.zone_at(x, y).id) for x, y in cells})


def board_zone(width: int, height: int, hamming: int, zone_id: int) -> Zone:
    """Zone `zone_id` of a W x H board at the hamming; ZoneError naming the zones there
    are when it has no such zone."""
    zm = zone_map(width, height, hamming)
    if zone_id >= len(zm.zones):
        raise ZoneError(f"zone {zone_id} does not exist: the {width}x{height} board "
                        f"has zones 0..{len(zm.zones) - 1} at hamming {hamming}")
    return zm.zones[zone_id]


def zone_rotations(zone: Zone, asked: Iterable[int] = (), turned_only: bool = False,
                   ) -> list[int]:
    """The rotations of a zone's partitions to write: those `asked` (sorted, each once),
    else every rotation its members need (without 0 when `turned_only`: those derived by
    turning rotation 0)."""
    asked = sorted(set(asked))
    if asked:
        return asked
    return list(zone.rotations[1:] if turned_only else zone.rotations)
