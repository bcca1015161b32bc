"""Corolle geometry (ring order, rotation, frontier) and zones: cells whose corolles have
the same shape up to a quarter turn (docs/design.md sections 2 and 3)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.zones.cells import ALL as ALL
    from e2store.zones.cells import asked_cells as asked_cells
    from e2store.zones.cells import board_cells as board_cells
    from e2store.zones.cells import board_zone as board_zone
    from e2store.zones.cells import zone_ids as zone_ids
    from e2store.zones.cells import zone_rotations as zone_rotations
    from e2store.zones.geometry import SIDE_STEP as SIDE_STEP
    from e2store.zones.geometry import frontier_layout as frontier_layout
    from e2store.zones.geometry import n_frontier as n_frontier
    from e2store.zones.geometry import n_slots as n_slots
    from e2store.zones.geometry import ring_offsets as ring_offsets
    from e2store.zones.geometry import rotation_permutation as rotation_permutation
    from e2store.zones.zonemap import Member as Member
    from e2store.zones.zonemap import Zone as Zone
    from e2store.zones.zonemap import ZoneMap as ZoneMap
    from e2store.zones.zonemap import expected_zone_count as expected_zone_count
    from e2store.zones.zonemap import zone_map as zone_map

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "geometry": ("n_slots", "n_frontier", "ring_offsets", "rotation_permutation",
            "frontier_layout", "SIDE_STEP",),
    "zonemap": ("Member", "Zone", "ZoneMap", "zone_map", "expected_zone_count",),
    "cells": ("ALL", "asked_cells", "board_cells", "board_zone", "zone_ids",
              "zone_rotations",),
})
